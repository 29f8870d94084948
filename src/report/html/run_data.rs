//! One run as the HTML report draws it: its nodes' beliefs, overlaps, handovers, grants and
//! faults from the chart's [`Timeline`], and its client history from the [`ClientLog`], in the
//! shape the page's script reads (integer nanoseconds of true time since the run's start).

use super::handovers::{handovers, Handover};
use crate::oracle::authority::Authority;
use crate::oracle::{Authorities, Claim, Piece};
use crate::outcome::{Summary, Verdict};
use crate::scenario::{random_faults, Fault, PauseKind, Role, Scenario};
use crate::time::{format_ns, SimTime};
use crate::trace::client_log::{ClientLog, LoggedOp, SeenBy};
use crate::trace::timeline::{MarkKind, Timeline, BINS};
use serde::Serialize;

/// A node: its name and role.
#[derive(Clone, Debug, Serialize)]
pub struct NodeOut {
    pub name: String,
    pub role: &'static str,
}

/// A fault as drawn: on `nodes` (none: the network's), over [start, end] (an instant when equal).
#[derive(Clone, Debug, Serialize)]
pub struct FaultOut {
    pub kind: &'static str,
    pub nodes: Vec<usize>,
    pub start: i64,
    pub end: i64,
    pub text: String,
}

/// The write a stale read missed.
#[derive(Clone, Debug, Serialize)]
pub struct MissedOut {
    pub id: u64,
    pub node: usize,
    pub call: i64,
    pub effect: Option<i64>,
    pub seen: i64,
    pub by: String,
}

/// A client operation (fields that are false or absent are left out: a soak run's page holds
/// thousands).
#[derive(Clone, Debug, Serialize)]
pub struct OpOut {
    pub id: u64,
    pub node: usize,
    pub key: u32,
    pub write: bool,
    /// Its invocation; for one kept without it (see [`ClientLog`]), its answer.
    pub call: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ret: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<u64>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub failed: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stale: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub zombie: bool,
    #[serde(rename = "unsafe")]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unsafe_write: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mono_ns: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wall_ns: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effect: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at_node: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missed: Option<MissedOut>,
}

/// Every client act counted per bin of the run, per node and kind.
#[derive(Clone, Debug, Serialize)]
pub struct BinsOut<'a> {
    pub start_ns: i64,
    pub width_ns: i64,
    pub kinds: Vec<&'static str>,
    pub counts: &'a [Vec<Vec<u32>>],
}

/// One run, borrowing its client operations and counts from the log and timeline it is drawn
/// from (written as they are, never copied).
#[derive(Clone, Debug, Serialize)]
pub struct RunData<'a> {
    pub label: String,
    pub verdict: Verdict,
    pub figures: Vec<(String, String)>,
    pub end_ns: i64,
    pub nodes: Vec<NodeOut>,
    /// Per node: (start, end, token, running 0 or 1).
    pub beliefs: Vec<Vec<(i64, i64, u64, u8)>>,
    pub read_beliefs: Vec<Vec<(i64, i64, u64, u8)>>,
    /// (start, end, nodes, authority).
    pub overlaps: Vec<(i64, i64, Vec<usize>, &'static str)>,
    /// (from, to, previous end, start, slack, authority): the handovers of the authorities
    /// whose overlaps count (the least slack among them is the run's `min_slack_ns`).
    pub handovers: Vec<(usize, usize, i64, i64, i64, &'static str)>,
    /// (grantor, to, token, start, until).
    pub grants: Vec<(usize, usize, u64, i64, i64)>,
    pub faults: Vec<FaultOut>,
    pub ops: OpsOut<'a>,
    pub ops_note: String,
    pub bins: BinsOut<'a>,
    pub spans_cut_at: Option<i64>,
    pub trace: Option<String>,
}

fn ns(t: SimTime) -> i64 {
    t.ns()
}

fn pieces(v: &[Piece]) -> Vec<(i64, i64, u64, u8)> {
    v.iter()
        .map(|p| (ns(p.start), ns(p.end), p.token, u8::from(p.running)))
        .collect()
}

fn role_word(r: Role) -> &'static str {
    match r {
        Role::Grantor => "grantor",
        Role::Contender => "contender",
        Role::Replica => "replica",
    }
}

fn mark_word(k: MarkKind) -> &'static str {
    match k {
        MarkKind::ZombieRead => "zombie-read",
        MarkKind::StaleRead => "stale-read",
        MarkKind::ZombieWrite => "zombie-write",
        MarkKind::UnsafeWrite => "unsafe-write",
        MarkKind::FencedWrite => "fenced-write",
        MarkKind::Read => "read",
        MarkKind::Rejected => "rejected",
    }
}

impl<'a> RunData<'a> {
    /// The run of `scenario` that `summary` and `timeline` describe, with its client history
    /// `log`; `label` names it on the page, `trace` links its trace file when one was written.
    pub fn of(
        label: &str,
        scenario: &Scenario,
        (summary, authorities): (&Summary, Authorities),
        timeline: &'a Timeline,
        log: &'a ClientLog,
        trace: Option<&str>,
    ) -> RunData<'a> {
        let names = &timeline.node_names;
        RunData {
            label: label.to_string(),
            verdict: Verdict::of(summary),
            figures: crate::report::text::figure_rows(summary)
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            end_ns: ns(timeline.end),
            nodes: names
                .iter()
                .zip(&timeline.roles)
                .map(|(n, r)| NodeOut {
                    name: n.clone(),
                    role: role_word(*r),
                })
                .collect(),
            beliefs: timeline.beliefs.iter().map(|v| pieces(v)).collect(),
            read_beliefs: timeline.read_beliefs.iter().map(|v| pieces(v)).collect(),
            overlaps: overlaps(timeline),
            handovers: counted_handovers(timeline, authorities)
                .into_iter()
                .map(|(h, a)| {
                    let (from, to) = (h.from, h.to);
                    let (end, start) = (ns(h.prev_end), ns(h.start));
                    (from, to, end, start, h.slack_ns(), authority_word(a))
                })
                .collect(),
            grants: timeline
                .grants
                .iter()
                .map(|g| (g.grantor, g.to, g.token, ns(g.start), ns(g.until)))
                .collect(),
            faults: faults(timeline, scenario),
            ops: OpsOut(log.operations()),
            ops_note: ops_note(log),
            bins: BinsOut {
                start_ns: 0,
                width_ns: ns(timeline.end) / BINS as i64,
                kinds: MarkKind::ALL.iter().map(|&k| mark_word(k)).collect(),
                counts: &timeline.bins,
            },
            spans_cut_at: timeline.spans_cut_at.map(ns),
            trace: trace.map(str::to_string),
        }
    }
}

/// The handovers of each authority the protocol claims exclusive (read authority only when it
/// is tracked apart; otherwise the write beliefs stand for both), in order of their start.
pub fn counted_handovers(tl: &Timeline, claims: Authorities) -> Vec<(Handover, Authority)> {
    let write = (claims.write == Claim::Exclusive).then_some((Authority::Write, &tl.beliefs));
    let read_apart = tl.read_beliefs.iter().any(|v| !v.is_empty());
    let read = (claims.read == Claim::Exclusive && read_apart)
        .then_some((Authority::Read, &tl.read_beliefs));
    let mut all: Vec<(Handover, Authority)> = write
        .into_iter()
        .chain(read)
        .flat_map(|(a, beliefs)| handovers(beliefs).into_iter().map(move |h| (h, a)))
        .collect();
    all.sort_by_key(|(h, a)| (h.start, *a));
    all
}

fn authority_word(a: Authority) -> &'static str {
    match a {
        Authority::Write => "write",
        Authority::Read => "read",
    }
}

/// Overlaps, each with the authority two nodes held at once.
fn overlaps(tl: &Timeline) -> Vec<(i64, i64, Vec<usize>, &'static str)> {
    tl.overlaps
        .iter()
        .zip(&tl.overlap_authorities)
        .map(|(o, &a)| (ns(o.start), ns(o.end), o.nodes.clone(), authority_word(a)))
        .collect()
}

/// The operations a log kept, each written as an [`OpOut`].
#[derive(Clone, Debug)]
pub struct OpsOut<'a>(pub &'a [LoggedOp]);

impl Serialize for OpsOut<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(op_out))
    }
}

fn op_out(o: &LoggedOp) -> OpOut {
    OpOut {
        id: o.op,
        node: o.node,
        key: o.key,
        write: o.write,
        call: o.call.or(o.ret).or(o.effect.map(|e| e.0)).map_or(0, ns),
        ret: o.ret.map(ns),
        value: o.value,
        failed: o.failed,
        stale: o.stale,
        zombie: o.zombie,
        unsafe_write: o.unsafe_write,
        token: o.token,
        mono_ns: o.readings.map(|r| r.0),
        wall_ns: o.readings.map(|r| r.1),
        effect: o.effect.map(|e| ns(e.0)),
        at_node: o.effect.map(|e| e.1),
        missed: o.missed.map(|m| MissedOut {
            id: m.op,
            node: m.node,
            call: ns(m.call),
            effect: m.effect.map(ns),
            seen: ns(m.seen),
            by: match m.by {
                SeenBy::Acknowledged => "acknowledged".to_string(),
                SeenBy::Read(r) => format!("read by #{r}"),
            },
        }),
    }
}

/// What of the client history the page shows one by one.
fn ops_note(log: &ClientLog) -> String {
    let kept = log.operations().len() as u64;
    let invoked = log.invoked();
    let mut note = if kept >= invoked {
        format!("every client operation ({invoked}) shown one by one")
    } else {
        let (first, harmful) = log.capacity();
        format!(
            "{kept} of {invoked} client operations shown one by one: the first {first} and \
             up to {harmful} harmful ones after them; the rest are counted per bin \
             (run --history writes the whole history)"
        )
    };
    if log.harmful_left_out() > 0 {
        note.push_str(&format!(
            "; {} harmful operations past those are only counted",
            log.harmful_left_out()
        ));
    }
    if log.unexplained() > 0 {
        note.push_str(&format!(
            "; {} stale reads kept without the write they missed (it was no longer \
             remembered)",
            log.unexplained()
        ));
    }
    note
}

/// The faults as they happened (pauses, stalls, crashes, clock steps and drift changes, from
/// the timeline) and the network's (cuts from the timeline; delay spikes and drop windows from
/// the scenario, those at a fixed or drawn time).
fn faults(tl: &Timeline, scenario: &Scenario) -> Vec<FaultOut> {
    let name = |n: usize| tl.node_names[n].as_str();
    let mut out = Vec::new();
    let mut push = |kind, nodes: Vec<usize>, start: SimTime, end: SimTime, text: String| {
        out.push(FaultOut {
            kind,
            nodes,
            start: ns(start),
            end: ns(end),
            text,
        })
    };
    for p in &tl.pauses {
        let s = p.span;
        let (kind, what) = match (p.kind, p.stall) {
            (PauseKind::Gc, _) => ("gc-pause", "GC pause"),
            (PauseKind::VmFreeze, false) => ("vm-freeze", "VM freeze"),
            (PauseKind::VmFreeze, true) => ("vm-freeze", "VM freeze (clocks stalled)"),
        };
        let text = format!("{what} of {}, {}", name(s.node), span_len(s.start, s.end));
        push(kind, vec![s.node], s.start, s.end, text);
    }
    for t in &tl.thread_stalls {
        let s = t.span;
        let text = format!(
            "{:?} loop of {} stalled, {}",
            t.thread,
            name(s.node),
            span_len(s.start, s.end)
        );
        push("thread-stall", vec![s.node], s.start, s.end, text);
    }
    for s in &tl.disk_stalls {
        let text = format!(
            "disk of {} stalled, {}",
            name(s.node),
            span_len(s.start, s.end)
        );
        push("disk-stall", vec![s.node], s.start, s.end, text);
    }
    for s in &tl.down {
        let text = format!("{} down, {}", name(s.node), span_len(s.start, s.end));
        push("down", vec![s.node], s.start, s.end, text);
    }
    for &(t, n) in &tl.restarts {
        push("restart", vec![n], t, t, format!("{} restarted", name(n)));
    }
    for &(t, n, by) in &tl.clock_steps {
        let text = format!(
            "wall clock of {} stepped by {}",
            name(n),
            format_ns(by.ns())
        );
        push("clock-step", vec![n], t, t, text);
    }
    for &(t, n, d) in &tl.drift_changes {
        let text = format!("clocks of {} now drift {} ppm", name(n), d.as_ppm());
        push("drift-change", vec![n], t, t, text);
    }
    for c in &tl.cuts {
        let names = |v: &[usize]| v.iter().map(|&n| name(n)).collect::<Vec<_>>().join(", ");
        let (kind, text) = if c.one_way {
            let t = format!(
                "messages from {} to {} dropped",
                names(&c.cut_off),
                names(&c.others)
            );
            ("one-way", t)
        } else {
            let t = format!("partition: {} | {}", names(&c.cut_off), names(&c.others));
            ("partition", t)
        };
        let nodes = c.cut_off.iter().chain(&c.others).copied().collect();
        push(kind, nodes, c.start, c.end, text);
    }
    out.extend(network_windows(scenario));
    out.sort_by_key(|f| (f.start, f.end));
    out
}

/// The scenario's delay spikes and drop windows at a fixed or drawn time (one placed at a
/// protocol moment has no time until the run meets it).
fn network_windows(s: &Scenario) -> Vec<FaultOut> {
    let mut faults = s.faults.clone();
    faults.extend(random_faults::materialize(s));
    faults
        .iter()
        .filter(|f| f.after().is_none())
        .filter_map(|f| {
            let (kind, at, duration) = match f {
                Fault::DelaySpike { at, duration, .. } => ("delay", at, duration),
                Fault::Drop { at, duration, .. } => ("drop", at, duration),
                _ => return None,
            };
            Some(FaultOut {
                kind,
                nodes: Vec::new(),
                start: at.ns(),
                end: at.ns() + duration.ns(),
                text: f.describe(),
            })
        })
        .collect()
}

fn span_len(start: SimTime, end: SimTime) -> String {
    format_ns(end.ns() - start.ns())
}
