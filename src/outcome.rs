//! The summary of a run (the keys of `summary.json`) and the check of a scenario's `expect`.
//!
//! Everything here is derived from integers the engine and oracle counted; the two ratios are the
//! only floats, computed once at the end, so the JSON is byte-identical run to run.

use crate::engine::waits::WaitSummary;
use crate::engine::RunResult;
use crate::msg::NodeId;
use crate::oracle::authority::Authority;
use crate::oracle::Overlap;
use crate::scenario::{Expect, Scenario};
use crate::time::{format_ns, SimTime};
use serde::Serialize;
use std::collections::BTreeMap;

/// One overlap interval, with the names of the nodes that believed in it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IntervalOut {
    pub start_ns: i64,
    pub end_ns: i64,
    pub nodes: Vec<String>,
    /// The exclusive authority that two nodes held at once.
    pub authority: Authority,
}

/// The overlap of a read authority that the protocol shares by design: informational.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SharedOut {
    pub count: u64,
    pub total_ns: i64,
    pub max_ns: i64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OverlapOut {
    pub count: u64,
    pub total_ns: i64,
    pub max_ns: i64,
    pub intervals: Vec<IntervalOut>,
}

/// Client requests: arrived at any contender, admitted by the validity check.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RequestsOut {
    pub reads_arrived: u64,
    /// Reads that passed the validity check (a confirmed read may still never be served: its
    /// node lost leadership before the round came back).
    pub reads_admitted: u64,
    pub reads_served: u64,
    /// Of the reads served: those served from local state at once (under a lease)...
    pub reads_served_local: u64,
    /// ... and those served after a round confirmed the node's authority (ReadIndex).
    pub reads_served_confirmed: u64,
    /// How long confirmed reads waited for their round, in true time: from when the node took
    /// the read up (after the workload's service time) to when it served it (`None`: there were
    /// none).
    pub confirmed_read_wait: Option<WaitSummary>,
    /// The longest stretch of true time between two reads served anywhere: when clients saw
    /// reads stop and resume (`None`: fewer than two reads).
    pub longest_read_gap: Option<GapOut>,
    /// The same between two writes acknowledged to their clients: applied at the resource, or
    /// in a replicated log committed by the leader that accepted them (a write that a later
    /// leader commits took effect, but its client was told it failed).
    pub longest_write_gap: Option<GapOut>,
    pub writes_arrived: u64,
    pub writes_admitted: u64,
    pub writes_applied: u64,
    /// Requests dropped at a paused node whose backlog was full (`engine::MAX_DEFERRED`).
    pub shed_while_paused: u64,
}

/// How well the clocks kept within their TrueTime error bounds (`clocks.uncertainty`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ClockErrorOut {
    /// The most by which a node's true time lay outside its interval [wall - e, wall + e],
    /// rounded up to the nanosecond: 0 when every clock kept within its bound.
    pub max_outside_interval_ns: i64,
    /// The node it happened to (the first in node order at that figure; `None` when 0).
    pub node: Option<String>,
}

/// A stretch between two requests served, in true nanoseconds since the run's start; or, when
/// longer than every such stretch, the one from the last request served to the run's end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct GapOut {
    /// The last one before it.
    pub from_ns: i64,
    /// The first one after it: when they resumed; the run's end when they never did.
    pub to_ns: i64,
    /// They never resumed: the stretch runs from `from_ns` to the run's end (`to_ns`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub open: bool,
}

impl GapOut {
    /// The longest stretch of `g` in a run that ended at `end`, the open one after the last
    /// event included (a tie goes to the closed one: the requests did resume).
    fn of(g: &crate::engine::Gap, end: SimTime) -> Option<GapOut> {
        let ns = |t: SimTime| t.since(SimTime::ZERO).ns();
        let closed = g.longest.map(|(from, to)| GapOut {
            from_ns: ns(from),
            to_ns: ns(to),
            open: false,
        });
        let open = g.last.filter(|&last| end > last).map(|last| GapOut {
            from_ns: ns(last),
            to_ns: ns(end),
            open: true,
        });
        match (closed, open) {
            (Some(c), Some(o)) if o.length_ns() > c.length_ns() => Some(o),
            (Some(c), _) => Some(c),
            (None, o) => o,
        }
    }

    pub fn length_ns(&self) -> i64 {
        self.to_ns - self.from_ns
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ExpectOut {
    /// `None` when the scenario states no expectations.
    pub passed: Option<bool>,
    pub failures: Vec<String>,
}

/// What a run's verdict is, in one word.
/// In `summary.json` and `--json` as `"OVERLAP"`, `"HARM"` or `"SAFE"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Verdict {
    /// Two or more nodes believed at once.
    Overlap,
    /// No overlap, but harm was done: a stale read (the client history is not linearizable)
    /// or an unsafe write. A zombie action alone is not harm.
    Harm,
    /// No overlap and no harm.
    Safe,
}

impl Verdict {
    pub fn of(s: &Summary) -> Verdict {
        if s.overlap.count > 0 {
            Verdict::Overlap
        } else if s.stale_reads + s.unsafe_writes > 0 {
            Verdict::Harm
        } else {
            Verdict::Safe
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            Verdict::Overlap => "OVERLAP",
            Verdict::Harm => "HARM",
            Verdict::Safe => "SAFE",
        }
    }
}

/// The summary of one run.
/// One change of holder (true times in ns; null when it never happened).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FailoverOut {
    pub from: String,
    pub to: String,
    /// When the new holder's token was issued.
    pub at_ns: i64,
    pub old_last_read_ns: Option<i64>,
    pub old_last_write_ns: Option<i64>,
    /// "Reads resume at".
    pub new_first_read_ns: Option<i64>,
    /// "Writes resume at".
    pub new_first_write_ns: Option<i64>,
    /// The failover split in three (true time). `down_from_ns`: when the last running holder
    /// before this one stopped believing (a crash, a pause, a lapsed lease), `None` when the new
    /// holder believed before the old one stopped (a seamless handover, or an overlap);
    /// `sought_at_ns`: when the new holder began the attempt that won (its election or
    /// acquire request; `None` if its protocol reports none); `serving_from_ns`: when it
    /// believed, running, after the outage.
    pub down_from_ns: Option<i64>,
    pub sought_at_ns: Option<i64>,
    pub serving_from_ns: Option<i64>,
    /// From the outage's start to the winning attempt's start (0 when the new holder was
    /// already trying: a request that waits at the grantor, a poll under way).
    pub detection_ns: Option<i64>,
    /// From then (the later of the two) to the new holder believing: the election or the
    /// acquisition, the grant's trip included.
    pub election_ns: Option<i64>,
    /// From the new holder believing to its first operation served (a read, or a write taking
    /// effect); `None` when it served none.
    pub first_op_ns: Option<i64>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    pub scenario: String,
    pub strategy: String,
    /// The nodes that run settings of their own (`nodes[i].settings`), each as `name: text`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub node_settings: Vec<String>,
    pub seed: u64,
    pub duration_ns: i64,
    /// The verdict, derived from the figures below ([`Verdict::of`]).
    pub verdict: Verdict,
    /// Overlaps of every exclusive authority: the safety verdict.
    pub overlap: OverlapOut,
    /// Overlap of a read authority shared by design (`None`: the protocol has none).
    pub shared_read_overlap: Option<SharedOut>,
    pub zombie_actions: u64,
    pub stale_reads: u64,
    pub unsafe_writes: u64,
    pub fenced_writes: u64,
    /// Second deliveries of a write the resource already had: applied once, counted here.
    pub duplicate_writes: u64,
    /// Writes that took effect with a value a dropped tombstone of the history check might
    /// have named: while 0 (and left out), the count of stale reads is exact.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub history_ambiguous: u64,
    /// Fraction of true time in which some running node believed it held the lease.
    pub availability: f64,
    /// Fraction of client requests that passed the validity check.
    pub served_ratio: f64,
    pub max_unavailable_ns: i64,
    /// When the run's last fault ended (its start, for a fault with no length: a crash, a
    /// restart, a step; a partition's or a pause's end); 0 when the run had none.
    #[serde(default)]
    pub faults_end_ns: i64,
    /// Recovery: how long after `faults_end_ns` a running node believed it held the lease
    /// again (0: one did then); `None` (null) when none did before the run ended.
    #[serde(default)]
    pub recovery_ns: Option<i64>,
    /// Safety slack: over every handover of the lease from one node's belief to
    /// another's, the smallest true time from the end of the previous holder's belief to the
    /// start of the next one's; negative when they overlapped (how long the previous holder went
    /// on believing), `None` (null) when there was no handover. Defined exactly in
    /// [`crate::oracle`].
    pub min_slack_ns: Option<i64>,
    /// For a run with no handover (no slack): its closest call, the least lease a holder had
    /// left, in true time, when it renewed or took the lease again (0: it had lapsed);
    /// defined exactly in [`crate::oracle::Oracle::set_belief`]. Left out otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub closest_call_ns: Option<i64>,
    /// What explore's guided search reads of the run besides its figures; never written out.
    #[serde(skip)]
    pub guidance: Guidance,
    pub grants: u64,
    pub renewals: u64,
    /// Crashes that took effect (of nodes that were up).
    pub crashes: u64,
    /// Pauses that began (on nodes that were up).
    pub pauses: u64,
    /// Stalls of one loop of a node that began (on nodes that were up). Left out when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub thread_stalls: u64,
    /// Faults placed at protocol moments that never happened: the moment never came, or came
    /// too late for the run. Left out when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub faults_never_placed: u64,
    /// The recipients of the first 64 grants, in grant order.
    pub holders: Vec<String>,
    /// Every change of holder among the first 65 tokens issued: when the old holder last
    /// served a read and last had a write take effect, and when the new one first did each.
    pub failovers: Vec<FailoverOut>,
    /// Messages sent, by kind.
    pub messages: BTreeMap<String, u64>,
    pub messages_dropped: u64,
    /// Of those, the messages refused back to their sender (a stream to a process that was
    /// down). Left out when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub messages_refused: u64,
    pub requests: RequestsOut,
    /// With `clocks.uncertainty`: whether the clocks kept within their error bounds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clock_error: Option<ClockErrorOut>,
    /// Node name to the drift its clocks ran at, in ppm.
    pub drift_ppm: BTreeMap<String, f64>,
    pub events: u64,
    /// The run hit `limits.max_events` before its end.
    pub truncated: bool,
    /// Why a HARM verdict (harm with no overlap of beliefs): the first harmful act of each kind.
    /// Left out for every other verdict.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_harm: Option<FirstHarmOut>,
    pub expect: ExpectOut,
}

/// The first harmful act of each kind in a run ([`Summary::first_harm`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FirstHarmOut {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unsafe_write: Option<HarmActOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zombie_action: Option<HarmActOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale_read: Option<HarmActOut>,
}

/// One harmful act: when (true time), by whom under which token, what (`read` or `write`), and
/// where it was judged: the reader for a read, the sender for a zombie write, the resource (for
/// Redlock, the master that took it) or the committing leader for an unsafe write.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HarmActOut {
    pub at_ns: i64,
    pub node: String,
    pub token: u64,
    pub what: &'static str,
    pub at_node: String,
}

impl FirstHarmOut {
    fn of(r: &RunResult, names: &[String]) -> FirstHarmOut {
        let act = |a: &Option<crate::engine::HarmAct>| {
            a.map(|a| HarmActOut {
                at_ns: a.at.since(SimTime::ZERO).ns(),
                node: names[a.actor].clone(),
                token: a.token,
                what: if a.write { "write" } else { "read" },
                at_node: names[a.place].clone(),
            })
        };
        let h = &r.stats.first_harm;
        FirstHarmOut {
            unsafe_write: act(&h.unsafe_write),
            zombie_action: act(&h.zombie),
            stale_read: act(&h.stale_read),
        }
    }
}

/// Everything a run produced.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub summary: Summary,
    pub node_names: Vec<String>,
    /// The mean number of events pending in the engine's queue as each event was taken out (a
    /// figure of the engine's work, for `--stats` and the benchmarks; not in `summary.json`).
    pub mean_in_flight: f64,
    /// What the protocol claimed of its two authorities: whose overlaps and handovers count.
    pub authorities: crate::oracle::Authorities,
}

impl Outcome {
    /// The outcome of the run `r` of scenario `s` (named `name`, under `strategy`): its
    /// summary, with the verdict and the check of the scenario's `expect` filled in.
    /// `warnings`: how many warnings the scenario has (`validate::warnings_with`), counted when
    /// its `expect.warnings` asks.
    pub(crate) fn new(
        name: &str,
        strategy: String,
        s: &Scenario,
        r: RunResult,
        warnings: Option<usize>,
    ) -> Outcome {
        let names: Vec<String> = s.nodes.iter().map(|n| n.name.clone()).collect();
        let st = &r.stats;
        let arrived = st.reads_arrived + st.writes_arrived;
        let admitted = st.reads_admitted + st.writes_admitted;
        let duration_ns = r.duration.ns();
        let (min_slack_ns, closest_call_ns) = near_misses(&r);
        let mut summary = Summary {
            scenario: name.to_string(),
            strategy,
            node_settings: s
                .nodes
                .iter()
                .filter_map(|n| Some(format!("{}: {}", n.name, n.settings.as_ref()?.to_ron())))
                .collect(),
            seed: s.seed,
            duration_ns,
            verdict: Verdict::Safe, // set below, from the figures
            overlap: OverlapOut::of(&r, &names),
            shared_read_overlap: SharedOut::of(&r),
            zombie_actions: r.harm.zombie_actions,
            stale_reads: r.harm.stale_reads,
            unsafe_writes: r.harm.unsafe_writes,
            fenced_writes: r.harm.fenced_writes,
            duplicate_writes: r.harm.duplicate_writes,
            history_ambiguous: r.harm.history_ambiguous,
            availability: ratio(
                r.oracle.write.available_ns as u64,
                duration_ns.max(0) as u64,
            ),
            served_ratio: ratio(admitted, arrived),
            max_unavailable_ns: r.oracle.write.max_unavailable_ns,
            faults_end_ns: r.oracle.write.faults_end.ns(),
            recovery_ns: r
                .oracle
                .write
                .recovered_at
                .map(|t| t.ns() - r.oracle.write.faults_end.ns()),
            min_slack_ns,
            closest_call_ns,
            guidance: Guidance::of(&r),
            grants: st.grants,
            renewals: st.renewals,
            crashes: st.crashes,
            pauses: st.pauses,
            thread_stalls: st.thread_stalls,
            faults_never_placed: st.faults_never_placed,
            holders: st.grant_order.iter().map(|&n| names[n].clone()).collect(),
            failovers: FailoverOut::all(&r, &names),
            messages: r
                .kinds
                .iter()
                .zip(&st.messages_sent)
                .map(|(k, &sent)| (k.to_string(), sent))
                .collect(),
            messages_dropped: st.messages_dropped,
            messages_refused: st.messages_refused,
            requests: RequestsOut::of(&r),
            clock_error: ClockErrorOut::of(&r, &names),
            drift_ppm: names
                .iter()
                .zip(&r.drifts)
                .map(|(n, d)| (n.clone(), d.as_ppm()))
                .collect(),
            events: st.events,
            truncated: st.truncated,
            first_harm: None, // set below, for a HARM verdict
            expect: ExpectOut {
                passed: None,
                failures: Vec::new(),
            },
        };
        summary.verdict = Verdict::of(&summary);
        if summary.verdict == Verdict::Harm {
            summary.first_harm = Some(FirstHarmOut::of(&r, &names));
        }
        if let Some(e) = &s.expect {
            let mut failures = check(e, &summary);
            let have = warnings.unwrap_or_default();
            if let Some(want) = e.warnings.filter(|&n| n != have as u64) {
                failures.push(format!(
                    "expected warnings: {want}, but the scenario has {have} (`check` lists them)"
                ));
            }
            summary.expect.passed = Some(failures.is_empty());
            summary.expect.failures = failures;
        }
        Outcome {
            summary,
            node_names: names,
            mean_in_flight: r.stats.in_flight_sum as f64 / r.stats.events.max(1) as f64,
            authorities: r.oracle.claims,
        }
    }
}

impl OverlapOut {
    /// The overlaps of every exclusive authority in run `r`, in time order (at one instant,
    /// write authority first), with the names of the nodes that believed in each.
    fn of(r: &RunResult, names: &[String]) -> OverlapOut {
        let interval = |authority: Authority, o: &Overlap| IntervalOut {
            start_ns: o.start.ns(),
            end_ns: o.end.ns(),
            nodes: o.nodes.iter().map(|&n| names[n].clone()).collect(),
            authority,
        };
        let mut intervals: Vec<IntervalOut> = r
            .oracle
            .exclusive()
            .flat_map(|(a, report)| report.overlaps.iter().map(move |o| (a, o)))
            .map(|(a, o)| interval(a, o))
            .collect();
        // In time order; at one instant, write authority first (stable).
        intervals.sort_by_key(|i| i.start_ns);
        let lengths = intervals.iter().map(|i| i.end_ns - i.start_ns);
        OverlapOut {
            count: intervals.len() as u64,
            total_ns: lengths.clone().sum(),
            max_ns: lengths.max().unwrap_or(0),
            intervals,
        }
    }
}

impl SharedOut {
    /// The overlap of run `r`'s shared read authority (`None`: the protocol has none).
    fn of(r: &RunResult) -> Option<SharedOut> {
        r.oracle.shared_read().map(|report| {
            let lengths = report.overlaps.iter().map(|o| o.end.ns() - o.start.ns());
            SharedOut {
                count: report.overlaps.len() as u64,
                total_ns: lengths.clone().sum(),
                max_ns: lengths.max().unwrap_or(0),
            }
        })
    }
}

impl Summary {
    /// The run's last failover with an outage (its new holder believed after one): the one
    /// the text report and a sweep's `runs.csv` split into detection, election and first
    /// operation.
    pub fn last_outage(&self) -> Option<&FailoverOut> {
        self.failovers
            .iter()
            .rev()
            .find(|f| f.down_from_ns.is_some() && f.serving_from_ns.is_some())
    }
}

impl FailoverOut {
    /// Every change of holder that run `r` recorded, with the nodes' names.
    fn all(r: &RunResult, names: &[String]) -> Vec<FailoverOut> {
        let resumptions = &r.oracle.write.resumptions;
        r.failovers
            .iter()
            .enumerate()
            .map(|(k, f)| {
                // The new holder's first resumption from its grant to the next failover's.
                let next = r.failovers.get(k + 1).map(|g| g.at);
                let resumed = resumptions
                    .iter()
                    .find(|x| x.node == f.to && x.at >= f.at && next.is_none_or(|n| x.at < n));
                let sought = f.new.sought_at;
                let down = resumed.map(|x| x.down_from);
                let serving = resumed.map(|x| x.at);
                let first_op = [f.new.first_read, f.new.first_write]
                    .into_iter()
                    .flatten()
                    .min();
                FailoverOut {
                    from: names[f.from].clone(),
                    to: names[f.to].clone(),
                    at_ns: f.at.ns(),
                    old_last_read_ns: f.old.last_read.map(SimTime::ns),
                    old_last_write_ns: f.old.last_write.map(SimTime::ns),
                    new_first_read_ns: f.new.first_read.map(SimTime::ns),
                    new_first_write_ns: f.new.first_write.map(SimTime::ns),
                    down_from_ns: down.map(SimTime::ns),
                    sought_at_ns: sought.map(SimTime::ns),
                    serving_from_ns: serving.map(SimTime::ns),
                    detection_ns: down.zip(sought).map(|(d, s)| (s.ns() - d.ns()).max(0)),
                    election_ns: down
                        .zip(sought)
                        .zip(serving)
                        .map(|((d, s), v)| v.ns() - d.max(s).ns()),
                    first_op_ns: serving.zip(first_op).map(|(v, o)| (o.ns() - v.ns()).max(0)),
                }
            })
            .collect()
    }
}

impl RequestsOut {
    /// The client requests of run `r`, as the engine and the harm checker counted them.
    fn of(r: &RunResult) -> RequestsOut {
        let st = &r.stats;
        // Where the run ended (the event bound may have stopped it early).
        let end = SimTime::ZERO + r.duration;
        RequestsOut {
            reads_arrived: st.reads_arrived,
            reads_admitted: st.reads_admitted,
            reads_served: r.harm.reads_served,
            reads_served_local: st.reads_local,
            reads_served_confirmed: st.reads_confirmed,
            confirmed_read_wait: st.confirmed_read_waits.summary(),
            longest_read_gap: GapOut::of(&st.read_gap, end),
            longest_write_gap: GapOut::of(&st.write_gap, end),
            writes_arrived: st.writes_arrived,
            writes_admitted: st.writes_admitted,
            writes_applied: r.harm.writes_applied,
            shed_while_paused: st.requests_shed,
        }
    }
}

impl ClockErrorOut {
    /// The worst stretch outside its error bound of any node's clock in run `r` (the first in
    /// node order at that figure); `None` when the scenario has no `clocks.uncertainty`.
    fn of(r: &RunResult, names: &[String]) -> Option<ClockErrorOut> {
        r.outside_interval_ns.as_ref().map(|per_node| {
            let (worst, &ns) = per_node
                .iter()
                .enumerate()
                .rev()
                .max_by_key(|&(_, ns)| *ns)
                .expect("a scenario has nodes");
            ClockErrorOut {
                max_outside_interval_ns: ns,
                node: (ns > 0).then(|| names[worst].clone()),
            }
        })
    }
}

/// When adversarial drift placement slowed a replica that never led in the run, what to say:
/// the placement slows the replica meant to lead (`lease.initial_leader`, else the first), so
/// that a sweep over rho slows the leader; a run led by others tests a different placement than
/// it claims. `None` when the placement is not adversarial, spreads nothing, gives the replica
/// its own drift, or the replica led. Leaders are the recipients of the run's first
/// [`crate::engine::GRANT_ORDER_CAP`] grants (`holders`), which a note past the cap says.
pub fn slowed_replica_never_led(scenario: &Scenario, s: &Summary) -> Option<String> {
    use crate::scenario::Placement;
    let c = &scenario.clocks;
    if c.placement != Placement::Adversarial || c.drift_spread_ppm <= 0.0 {
        return None;
    }
    let i = scenario.slowed_replica()?;
    let node = &scenario.nodes[i];
    if node.drift_ppm.is_some() || s.holders.contains(&node.name) {
        return None;
    }
    let among = if s.holders.len() >= crate::engine::GRANT_ORDER_CAP {
        format!(" (among the first {} leaders)", s.holders.len())
    } else {
        String::new()
    };
    let fix = if scenario.lease.initial_leader.is_some() {
        "it was named initial leader but lost its first election".to_string()
    } else {
        format!(
            "name it in lease.initial_leader to make it lead first: initial_leader: {:?}",
            node.name
        )
    };
    Some(format!(
        "adversarial drift slowed {} by -{} ppm as the leader, but it never led in this run{among} \
         (leaders: {}); {fix}",
        node.name,
        c.drift_spread_ppm / 2.0,
        leaders(&s.holders),
    ))
}

/// What explore's guided search reads of a run beyond its figures, over its exclusive
/// authorities (protocol-agnostic: from the oracle's beliefs).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Guidance {
    /// Each authority's first handovers (see [`crate::oracle::OracleReport::handovers`]) as
    /// (start, slack) in ns and the node whose belief ended before it, sorted.
    pub handovers: Vec<(i64, i64, NodeId)>,
    /// The least lease left at a renewal, with or without a handover, not clamped at 0 (see
    /// [`crate::oracle::OracleReport::call_ns`]): negative when a lease lapsed before it was
    /// renewed or taken again, by how long.
    pub call_ns: Option<i64>,
    /// The longest a node believed under a lease handed to it past the end its grantor gave
    /// (see [`crate::oracle::OracleReport::overrun_ns`]), the most over the exclusive
    /// authorities.
    pub overrun_ns: Option<i64>,
}

impl Guidance {
    fn of(r: &RunResult) -> Guidance {
        let mut handovers: Vec<(i64, i64, NodeId)> = r
            .oracle
            .exclusive()
            .flat_map(|(_, o)| {
                o.handovers
                    .iter()
                    .map(|h| (h.start.ns(), h.slack_ns, h.from))
            })
            .collect();
        handovers.sort_unstable();
        let call_ns = r.oracle.exclusive().filter_map(|(_, o)| o.call_ns).min();
        let overrun_ns = r.oracle.exclusive().filter_map(|(_, o)| o.overrun_ns).max();
        Guidance {
            handovers,
            call_ns,
            overrun_ns,
        }
    }
}

/// The run's smallest safety slack over its exclusive authorities and, only when none had a
/// handover, its closest call.
fn near_misses(r: &RunResult) -> (Option<i64>, Option<i64>) {
    let least = |f: fn(&crate::oracle::OracleReport) -> Option<i64>| {
        r.oracle.exclusive().filter_map(|(_, o)| f(o)).min()
    };
    let slack = least(|o| o.min_slack_ns);
    let call = slack
        .is_none()
        .then(|| least(|o| o.closest_call_ns))
        .flatten();
    (slack, call)
}

/// Each name once, in the order first seen; "none" for none.
fn leaders(holders: &[String]) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for h in holders {
        if !seen.contains(&h.as_str()) {
            seen.push(h);
        }
    }
    if seen.is_empty() {
        "none".to_string()
    } else {
        seen.join(", ")
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// The expectations of `e` that `s` does not meet, each said in words, always in this order:
/// harm present or absent, the bounds on overlap and availability, slack, recovery,
/// exact counts, clock error, holders, when requests resumed, and message counts.
pub fn check(e: &Expect, s: &Summary) -> Vec<String> {
    let mut f = Vec::new();
    check_presence(e, s, &mut f);
    check_bounds(e, s, &mut f);
    check_slack(e, s, &mut f);
    check_recovery(e, s, &mut f);
    check_counts(e, s, &mut f);
    check_clock_error(e, s, &mut f);
    if let Some(want) = &e.holders {
        if *want != s.holders {
            f.push(format!(
                "expected holders: {want:?}, but the lease went to {:?}",
                s.holders
            ));
        }
    }
    check_resumes(e, s, &mut f);
    check_messages(e, s, &mut f);
    f
}

/// The expectations that a kind of harm (or overlap) did or did not happen, onto `f`.
fn check_presence(e: &Expect, s: &Summary, f: &mut Vec<String>) {
    let mut flag = |key: &str, want: Option<bool>, count: u64| {
        if let Some(want) = want {
            if want != (count > 0) {
                f.push(format!("expected {key}: {want}, but the run had {count}"));
            }
        }
    };
    flag("overlap", e.overlap, s.overlap.count);
    flag("zombie_actions", e.zombie_actions, s.zombie_actions);
    flag("stale_reads", e.stale_reads, s.stale_reads);
    flag("unsafe_writes", e.unsafe_writes, s.unsafe_writes);
    flag("fenced_writes", e.fenced_writes, s.fenced_writes);
}

/// The bounds on the longest overlap, on availability and on the longest unavailable
/// stretch, onto `f`.
fn check_bounds(e: &Expect, s: &Summary, f: &mut Vec<String>) {
    if let Some(most) = e.max_overlap_at_most {
        if s.overlap.max_ns > most.ns() {
            f.push(format!(
                "expected max_overlap_at_most: {most}, but the longest overlap was {}",
                format_ns(s.overlap.max_ns)
            ));
        }
    }
    if let Some(least) = e.max_overlap_at_least {
        if s.overlap.max_ns < least.ns() {
            f.push(format!(
                "expected max_overlap_at_least: {least}, but the longest overlap was {}",
                format_ns(s.overlap.max_ns)
            ));
        }
    }
    if let Some(min) = e.min_availability {
        if s.availability < min {
            f.push(format!(
                "expected min_availability: {min}, but availability was {:.6}",
                s.availability
            ));
        }
    }
    if let Some(max) = e.max_availability {
        if s.availability > max {
            f.push(format!(
                "expected max_availability: {max}, but availability was {:.6}",
                s.availability
            ));
        }
    }
    if let Some(most) = e.max_unavailable_at_most {
        if s.max_unavailable_ns > most.ns() {
            f.push(format!(
                "expected max_unavailable_at_most: {most}, but the longest unavailable stretch was {}",
                format_ns(s.max_unavailable_ns)
            ));
        }
    }
    if let Some(least) = e.max_unavailable_at_least {
        if s.max_unavailable_ns < least.ns() {
            f.push(format!(
                "expected max_unavailable_at_least: {least}, but the longest unavailable stretch was {}",
                format_ns(s.max_unavailable_ns)
            ));
        }
    }
}

/// The liveness bound: a running node believes again within `recovers_within` of the end of
/// the run's last fault (of its start, with none), onto `f`.
fn check_recovery(e: &Expect, s: &Summary, f: &mut Vec<String>) {
    let Some(within) = e.recovers_within else {
        return;
    };
    let end = format_ns(s.faults_end_ns);
    match s.recovery_ns {
        Some(r) if r <= within.ns() => {}
        Some(r) => f.push(format!(
            "expected recovers_within: {within}, but a holder served again only {} after the \
             faults' end at {end}",
            format_ns(r)
        )),
        // A run that ended before the bound ran out has not broken it.
        None if s.duration_ns - s.faults_end_ns < within.ns() => {}
        None => f.push(format!(
            "expected recovers_within: {within}, but no holder served from the faults' end at \
             {end} to the run's end at {}",
            format_ns(s.duration_ns)
        )),
    }
}

/// The expectations on the safety slack (a lower bound, an exact figure), onto `f`.
fn check_slack(e: &Expect, s: &Summary, f: &mut Vec<String>) {
    if let Some(least) = e.min_slack_at_least {
        match s.min_slack_ns {
            Some(got) if got < least.ns() => f.push(format!(
                "expected min_slack_at_least: {least}, but the closest handover had {} of slack",
                format_ns(got)
            )),
            _ => {}
        }
    }
    if let Some(want) = e.min_slack {
        match s.min_slack_ns {
            Some(got) if got == want.ns() => {}
            Some(got) => f.push(format!(
                "expected min_slack: {want}, but the closest handover had {} of slack",
                format_ns(got)
            )),
            None => f.push(format!(
                "expected min_slack: {want}, but the run had no handover"
            )),
        }
    }
}

/// The exact counts expected (overlaps, grants, renewals, crashes, pauses, stale reads, unsafe
/// writes), onto `f`.
fn check_counts(e: &Expect, s: &Summary, f: &mut Vec<String>) {
    let mut exact = |key: &str, want: Option<u64>, got: u64| {
        if let Some(want) = want {
            if want != got {
                f.push(format!("expected {key}: {want}, but the run had {got}"));
            }
        }
    };
    exact("overlap_count", e.overlap_count, s.overlap.count);
    exact("grants", e.grants, s.grants);
    exact("renewals", e.renewals, s.renewals);
    exact("crashes", e.crashes, s.crashes);
    exact("pauses", e.pauses, s.pauses);
    exact("stale_read_count", e.stale_read_count, s.stale_reads);
    exact(
        "zombie_action_count",
        e.zombie_action_count,
        s.zombie_actions,
    );
    exact("unsafe_write_count", e.unsafe_write_count, s.unsafe_writes);
}

/// The expected most by which true time lay outside a clock's error bound, onto `f`.
fn check_clock_error(e: &Expect, s: &Summary, f: &mut Vec<String>) {
    let Some(want) = e.max_outside_interval else {
        return;
    };
    match &s.clock_error {
        Some(c) if c.max_outside_interval_ns == want.ns() => {}
        Some(c) => f.push(format!(
            "expected max_outside_interval: {want}, but true time lay {} outside{}",
            format_ns(c.max_outside_interval_ns),
            c.node
                .as_ref()
                .map_or(String::new(), |n| format!(" {n}'s interval"))
        )),
        None => f.push(
            "expected max_outside_interval, but the scenario has no clocks.uncertainty".to_string(),
        ),
    }
}

/// The windows in which reads and writes were expected to resume after their longest gap,
/// onto `f`.
fn check_resumes(e: &Expect, s: &Summary, f: &mut Vec<String>) {
    for (what, window, gap) in [
        (
            "reads_resume_between",
            e.reads_resume_between,
            s.requests.longest_read_gap,
        ),
        (
            "writes_resume_between",
            e.writes_resume_between,
            s.requests.longest_write_gap,
        ),
    ] {
        let Some((lo, hi)) = window else { continue };
        match gap {
            Some(g) if g.open => f.push(format!(
                "expected {what}: ({lo}, {hi}), but the longest gap never ended: none was \
                 served from {} to the run's end at {}",
                format_ns(g.from_ns),
                format_ns(g.to_ns)
            )),
            Some(g) if (lo.ns()..=hi.ns()).contains(&g.to_ns) => {}
            Some(g) => f.push(format!(
                "expected {what}: ({lo}, {hi}), but the longest gap ended at {}",
                format_ns(g.to_ns)
            )),
            None => f.push(format!(
                "expected {what}: ({lo}, {hi}), but none was served"
            )),
        }
    }
}

/// The expected number of messages sent of each kind, onto `f`.
fn check_messages(e: &Expect, s: &Summary, f: &mut Vec<String>) {
    for (kind, &want) in e.messages.iter().flatten() {
        match s.messages.get(kind) {
            Some(&got) if got == want => {}
            Some(&got) => f.push(format!(
                "expected messages.{kind}: {want}, but the run sent {got}"
            )),
            None => f.push(format!("expected messages.{kind}: no such message kind")),
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Gap;

    fn at(ns: i64) -> SimTime {
        SimTime::ZERO + crate::time::Dur::from_ns(ns)
    }

    #[test]
    fn the_longest_gap_counts_the_open_stretch_after_the_last_event() {
        // Events at 10, 30 and 35 in a run ending at 100: the closed stretches are 20 and 5,
        // the open one 65: it is the longest, and never resumed.
        let mut g = Gap::default();
        for t in [10, 30, 35] {
            g.event(at(t));
        }
        let open = GapOut::of(&g, at(100)).unwrap();
        assert_eq!((open.from_ns, open.to_ns, open.open), (35, 100, true));
        // Ending at 55, the open stretch (20) ties the closed one: the closed one stands.
        let closed = GapOut::of(&g, at(55)).unwrap();
        assert_eq!((closed.from_ns, closed.to_ns, closed.open), (10, 30, false));
        // One event: only the open stretch; none: no gap.
        let mut one = Gap::default();
        one.event(at(40));
        assert_eq!(GapOut::of(&one, at(50)).map(|g| g.length_ns()), Some(10));
        assert_eq!(GapOut::of(&Gap::default(), at(50)), None);
    }
}
