//! Bounded exhaustive search (`explore --exhaustive --faults K`): every schedule of up to K
//! faults of the envelope's kinds, each placed at a grid of offsets from the protocol's
//! moments, run in a fixed order; either the first violation, or a statement of exactly what
//! was proved.
//!
//! # The schedules
//!
//! The **alphabet** holds one fault per kind of the envelope and target, at the kind's largest
//! size ([`alphabet`]): a pause and a freeze of each node for the envelope's `max`, a wall-clock
//! step of each node by `+max` and by `-max`, a drift change of each node to `+rho/2` and to
//! `-rho/2`, each node cut off from the rest, each ordered pair's one-way cut, a delay spike of
//! every message, a drop of the envelope's kinds, a crash of each node restarted `max_down`
//! later, a stall of the loop of each node that has it, a stall of each disk.
//!
//! The **roots** are the scenario with its own faults and its drifts as the engine places them,
//! and, when the envelope bounds drift (`drift_ppm`, rho), the same with every node's drift at
//! rho/2 placed adversarially (the node that runs fast by role fast, the rest slow) and
//! mirrored.
//!
//! A schedule's **children** add one letter at a time t taken from the run of the schedule
//! itself: t is a moment of the chosen kinds ([`crate::scenario::Moment`]: grants, renewals,
//! acquisitions, expiries by default) that run reported, plus an offset of the grid (fractions of
//! the lease term, negative ones before the moment), at or after the schedule's last added fault
//! and before the run's end. The run with the child's faults is the parent's run up to t
//! (runs are deterministic), so a moment the parent reported before t is where it would be in
//! the child's own run: placing at the parent's moments is placing at the child's.
//!
//! The tree is searched depth-first, each schedule's children run as one batch (in parallel,
//! collected in order) before any grandchild; the first violation in that order ends the
//! search, whatever the thread count.
//!
//! # Deduplication
//!
//! Only schedules that are provably the same run are skipped: a child's (time, letter) is
//! unique among its siblings (two moments and offsets that give the same instant give one
//! child), and letters are added in (time, letter) order, so a set of faults is reached along one
//! path only. A child that is not a valid scenario (two pauses of a node that meet, a crash of
//! a node not yet started) is skipped and counted.

use super::{record_from, RunRecord, Runner};
use crate::msg::NodeId;
use crate::outcome::Summary;
use crate::scenario::nemesis::{Nemesis, KINDS};
use crate::scenario::{At, Fault, Moment, PauseKind, Scenario};
use crate::time::{Dur, LocalDur, SimTime};
use std::collections::BTreeMap;

/// The most faults a schedule may have (`--faults`).
pub const MAX_FAULTS: usize = 3;

/// The moments a run reports are kept up to this many (a run with more, say with commits of a
/// busy workload, is searched at its first ones, and the proof says so).
pub const MAX_MOMENTS: usize = 10_000;

/// The default grid: offsets from each moment, in fractions of the lease term.
pub const DEFAULT_OFFSETS: [Offset; 7] = [
    Offset { num: -1, den: 2 },
    Offset { num: -1, den: 4 },
    Offset { num: -1, den: 8 },
    Offset { num: 0, den: 1 },
    Offset { num: 1, den: 8 },
    Offset { num: 1, den: 4 },
    Offset { num: 1, den: 2 },
];

/// The default sizes: each kind's largest.
pub const DEFAULT_SIZES: [Offset; 1] = [Offset { num: 1, den: 1 }];

/// The moments placed at by default: the lease's own (commits and writes come with every
/// client write; name them with `--moments` to search them too).
pub const DEFAULT_MOMENTS: [Moment; 4] = [
    Moment::Grant,
    Moment::Renewal,
    Moment::Acquire,
    Moment::Expiry,
];

/// An offset from a moment: `num / den` of the lease term (`den` positive).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Offset {
    pub num: i64,
    pub den: i64,
}

impl Offset {
    /// The offset for lease term `term_ns`, in whole ns (rounded toward zero).
    pub fn of(self, term_ns: i64) -> i64 {
        (i128::from(term_ns) * i128::from(self.num) / i128::from(self.den)) as i64
    }

    /// Parses `-1/4`, `0`, `1/2`, `1`: a fraction with a positive denominator.
    pub fn parse(text: &str) -> Result<Offset, String> {
        let t = text.trim();
        let (n, d) = t.split_once('/').unwrap_or((t, "1"));
        let num: i64 = n.trim().parse().map_err(|_| {
            format!("{t:?}: an offset is a fraction of the lease term, e.g. -1/4, 0 or 1/2")
        })?;
        let den: i64 = d.trim().parse().map_err(|_| {
            format!("{t:?}: an offset is a fraction of the lease term, e.g. -1/4, 0 or 1/2")
        })?;
        if den <= 0 || num.abs() > 64 * den || den > 1_000_000 {
            return Err(format!(
                "{t:?}: an offset's denominator is positive (at most 1000000) and it lies \
                 within 64 lease terms"
            ));
        }
        Ok(Offset { num, den })
    }
}

impl std::fmt::Display for Offset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.den {
            1 => write!(f, "{}", self.num),
            d => write!(f, "{}/{d}", self.num),
        }
    }
}

/// What is searched: up to `faults` faults at `offsets` from the `moments` kinds.
#[derive(Clone, Debug)]
pub struct Grid {
    pub faults: usize,
    pub offsets: Vec<Offset>,
    /// The sizes of each kind's faults, in fractions of its largest (`max`, `max_down`,
    /// `max_extra`, a step's `max`, rho/2): [`DEFAULT_SIZES`] unless said.
    pub sizes: Vec<Offset>,
    pub moments: Vec<Moment>,
    /// The most schedules to run: past it the search stops and proves nothing.
    pub cap: u64,
}

/// One letter of the alphabet: the faults it adds (a crash with its restart) at time 0, the
/// kind it is of, and how the proof names it.
#[derive(Clone, Debug)]
pub struct Letter {
    pub faults: Vec<Fault>,
    pub kind: &'static str,
}

/// The moments one run reported, in the order reported (capped at [`MAX_MOMENTS`]).
#[derive(Clone, Debug, Default)]
pub struct MomentLog {
    kinds: Vec<Moment>,
    /// (true time in ns, kind, node).
    pub seen: Vec<(i64, Moment, NodeId)>,
    /// More moments came than were kept.
    pub clipped: bool,
}

impl MomentLog {
    /// A log of the moments of `kinds`.
    pub fn of(kinds: &[Moment]) -> MomentLog {
        MomentLog {
            kinds: kinds.to_vec(),
            ..MomentLog::default()
        }
    }
}

impl crate::trace::Observer for MomentLog {
    fn event(&mut self, _e: &crate::trace::TraceEvent) {}
    fn moment(&mut self, node: NodeId, kind: Moment, at: SimTime) {
        if !self.kinds.contains(&kind) {
            return;
        }
        if self.seen.len() >= MAX_MOMENTS {
            self.clipped = true;
            return;
        }
        self.seen.push((at.ns(), kind, node));
    }
    fn wants_moments(&self) -> bool {
        true
    }
}

/// Runs a scenario and tells the log its moments: its summary, or the problems that keep it
/// from running.
pub type Watched<'a> =
    dyn Fn(&Scenario, &mut MomentLog) -> Result<Summary, Vec<String>> + Sync + 'a;

/// What an exhaustive search did, for its statement.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Proof {
    /// Schedules run (roots included).
    pub schedules: u64,
    /// Children skipped as not valid scenarios.
    pub invalid: u64,
    /// Children skipped as another's instant and letter (the same run).
    pub duplicates: u64,
    /// Moments the roots' runs reported (of the kinds searched).
    pub root_moments: u64,
    /// Roots: drift placements.
    pub roots: u64,
    /// The scenario's own faults at a time, whose starts are placed from as moments are.
    pub own: u64,
    /// Letters in the alphabet.
    pub letters: u64,
    /// Every schedule of the grid ran (not stopped at the cap or by a violation).
    pub complete: bool,
    /// A schedule showed a violation (the last one run).
    pub violated: bool,
    /// Some run reported more moments than were kept.
    pub clipped: bool,
}

/// An exhaustive search's runs and what it proved.
pub struct Exhausted {
    pub ran: super::Ran,
    pub proof: Proof,
}

/// A schedule in the tree: its scenario, its last added (time, letter), its depth.
struct Node {
    scenario: Scenario,
    last: Option<(i64, usize)>,
    depth: usize,
    kinds: Vec<String>,
}

/// The search's state as it goes.
struct Search<'a> {
    e: &'a super::Exploration<'a>,
    grid: &'a Grid,
    letters: Vec<Letter>,
    pool: super::Pool,
    runner: &'a Runner<'a>,
    watched: &'a Watched<'a>,
    done: &'a (dyn Fn(u64) + Sync),
    records: Vec<RunRecord>,
    kept: BTreeMap<u64, Scenario>,
    /// The least (slack, run) so far, to keep the nearest miss's schedule.
    best: Option<(i64, u64)>,
    /// The starts of the scenario's own faults (a scheduled transfer, say), in ns.
    own_ns: Vec<i64>,
    /// Why the first schedule that could not run could not.
    first_problem: Option<String>,
    proof: Proof,
    stop: bool,
}

/// The exhaustive search of `e` over `grid`. `done` hears how many runs each batch finished.
pub fn search(
    e: &super::Exploration,
    grid: &Grid,
    jobs: Option<usize>,
    done: &(dyn Fn(u64) + Sync),
    runner: &Runner,
    watched: &Watched,
) -> Result<Exhausted, String> {
    let letters = alphabet(e.base, e.nemesis, &grid.sizes);
    let mut s = Search {
        e,
        grid,
        proof: Proof {
            letters: letters.len() as u64,
            ..Proof::default()
        },
        letters,
        pool: super::Pool::new(jobs)?,
        runner,
        watched,
        done,
        records: Vec::new(),
        kept: BTreeMap::new(),
        best: None,
        own_ns: Vec::new(),
        first_problem: None,
        stop: false,
    };
    let roots: Vec<Node> = roots(e.base, e.nemesis)
        .into_iter()
        .map(|scenario| Node {
            scenario,
            last: None,
            depth: 0,
            kinds: Vec::new(),
        })
        .collect();
    s.proof.roots = roots.len() as u64;
    s.own_ns = e
        .base
        .fault_schedule()
        .iter()
        .filter(|f| matches!(f.start(), At::Time(_)))
        .map(|f| f.at().ns())
        .collect();
    s.proof.own = s.own_ns.len() as u64;
    let logs = s.run_batch(&roots, true);
    if logs.iter().all(Option::is_none) && !s.stop {
        return Err(format!(
            "the scenario does not run without faults: {}",
            s.first_problem.take().unwrap_or_default()
        ));
    }
    s.proof.root_moments = logs.iter().flatten().map(|l| l.seen.len() as u64).sum();
    for (root, log) in roots.iter().zip(logs) {
        if let Some(log) = log {
            s.expand(root, &log);
        }
    }
    s.proof.complete = !s.stop;
    Ok(Exhausted {
        ran: super::Ran {
            records: s.records,
            kept: s.kept,
            quiet_runs: 0,
        },
        proof: s.proof,
    })
}

impl Search<'_> {
    /// Runs `node`'s children as one batch, then each child's children in turn.
    fn expand(&mut self, node: &Node, log: &MomentLog) {
        if self.stop || node.depth >= self.grid.faults {
            return;
        }
        let children = self.children(node, log);
        let deeper = node.depth + 1 < self.grid.faults;
        let logs = self.run_batch(&children, deeper);
        for (child, log) in children.iter().zip(logs) {
            if self.stop {
                break;
            }
            if let Some(log) = log {
                self.expand(child, &log);
            }
        }
    }

    /// `node`'s children: each letter at each instant of the grid from the moments `log`
    /// holds, at or after the last fault added and before the run's end.
    fn children(&mut self, node: &Node, log: &MomentLog) -> Vec<Node> {
        let base = self.e.base;
        let term = base.lease.duration.ns();
        let end = base.duration.ns();
        let from = node.last.map_or(0, |(t, _)| t);
        let mut times: Vec<i64> = log
            .seen
            .iter()
            .map(|&(at, _, _)| at)
            .chain(self.own_ns.iter().copied())
            .flat_map(|at| self.grid.offsets.iter().map(move |o| at + o.of(term)))
            .filter(|&t| t >= from && t < end)
            .collect();
        let all = times.len() as u64 * self.letters.len() as u64;
        times.sort_unstable();
        times.dedup();
        let mut out = Vec::new();
        for &t in &times {
            for (j, letter) in self.letters.iter().enumerate() {
                if node.last.is_some_and(|last| (t, j) <= last) {
                    continue;
                }
                let mut scenario = node.scenario.clone();
                // A restart that would come after the run's end is left out (the node stays
                // down), as drawn runs leave it out.
                scenario.faults.extend(
                    letter
                        .faults
                        .iter()
                        .cloned()
                        .map(|f| placed(f, t))
                        .filter(|f| f.at().ns() < end),
                );
                let mut kinds = node.kinds.clone();
                if !kinds.iter().any(|k| k == letter.kind) {
                    kinds.push(letter.kind.to_string());
                    kinds.sort_by_key(|k| KINDS.iter().position(|n| n == k));
                }
                out.push(Node {
                    scenario,
                    last: Some((t, j)),
                    depth: node.depth + 1,
                    kinds,
                });
            }
        }
        self.proof.duplicates += all.saturating_sub(times.len() as u64 * self.letters.len() as u64);
        out
    }

    /// Runs `nodes` in order (watching their moments if `watch`), records each valid one, and
    /// stops at the first violation or at the cap. Each valid run's log (if watched) by node.
    fn run_batch(&mut self, nodes: &[Node], watch: bool) -> Vec<Option<MomentLog>> {
        let mut logs = Vec::with_capacity(nodes.len());
        let chunk = (self.pool.threads() * 16).max(16);
        for batch in nodes.chunks(chunk) {
            if self.stop {
                break;
            }
            let kinds = &self.grid.moments;
            let (runner, watched) = (self.runner, self.watched);
            let ran = self.pool.map(0..batch.len() as u64, &|i| {
                let s = &batch[i as usize].scenario;
                if watch {
                    let mut log = MomentLog::of(kinds);
                    watched(s, &mut log).map(|summary| (summary, Some(log)))
                } else {
                    runner(s).map(|summary| (summary, None))
                }
            });
            (self.done)(batch.len() as u64);
            for (node, result) in batch.iter().zip(ran) {
                let (summary, log) = match result {
                    Ok(ran) => ran,
                    Err(problems) => {
                        self.proof.invalid += 1;
                        self.first_problem
                            .get_or_insert_with(|| problems.join("; "));
                        logs.push(None);
                        continue;
                    }
                };
                self.note(node, &summary);
                self.proof.clipped |= log.as_ref().is_some_and(|l| l.clipped);
                logs.push(log);
                if self.stop {
                    break;
                }
            }
        }
        logs.resize_with(nodes.len(), || None);
        logs
    }

    /// Records `node`'s run: a violation stops the search; the least slack is kept.
    fn note(&mut self, node: &Node, summary: &Summary) {
        let run = self.records.len() as u64;
        let record = record_from(run, &node.scenario, node.kinds.clone(), summary, None);
        self.proof.schedules += 1;
        let violated = record.violation.is_some();
        if violated {
            self.kept.insert(run, node.scenario.clone());
            self.proof.violated = true;
            self.stop = true;
        } else if let Some(slack) = record.min_slack_ns {
            if self.best.is_none_or(|b| (slack, run) < b) {
                if let Some((_, old)) = self.best {
                    self.kept.remove(&old);
                }
                self.best = Some((slack, run));
                self.kept.insert(run, node.scenario.clone());
            }
        }
        self.records.push(record);
        if self.proof.schedules >= self.grid.cap {
            self.stop = true;
        }
    }
}

/// `f` (at time 0, or a restart at its downtime) moved to start `t` later.
fn placed(mut f: Fault, t: i64) -> Fault {
    let at = f.start_mut();
    let from = at.offset().ns();
    *at = At::Time(Dur::from_ns(from.saturating_add(t)));
    f
}

/// The roots: the scenario with every draw explicit and its drifts as the engine places them;
/// with `drift_ppm` in the envelope also every node at rho/2 placed adversarially, and mirrored.
fn roots(base: &Scenario, nemesis: &Nemesis) -> Vec<Scenario> {
    let own = super::draw::draw_run(base, &Nemesis::default(), 0, false).scenario;
    let mut out = vec![own.clone()];
    if let Some(rho) = nemesis.drift_ppm {
        let half = super::draw::ppm(super::draw::half_ppt(rho));
        for sign in [1.0, -1.0] {
            let mut s = own.clone();
            for i in 0..s.nodes.len() {
                let fast = s.runs_fast_adversarially(i);
                s.nodes[i].drift_ppm = Some(if fast { sign * half } else { -sign * half });
            }
            out.push(s);
        }
    }
    out
}

/// One fault per kind of `nemesis`, target and size of `sizes` (fractions of the kind's
/// largest), at time 0: each letter at every size in turn.
pub fn alphabet(base: &Scenario, nemesis: &Nemesis, sizes: &[Offset]) -> Vec<Letter> {
    let mut out: Vec<Letter> = Vec::new();
    for letter in largest(base, nemesis) {
        for &size in sizes {
            let faults: Vec<Fault> = letter.faults.iter().map(|f| scaled(f, size)).collect();
            if !out.iter().any(|l| l.faults == faults) {
                out.push(Letter {
                    faults,
                    kind: letter.kind,
                });
            }
        }
    }
    out
}

/// `f` with its size (length, step, drift, a restart's downtime) times `size`, at least 1 ns
/// (or 1 ppt).
fn scaled(f: &Fault, size: Offset) -> Fault {
    let x = |ns: i64| (i128::from(ns) * i128::from(size.num) / i128::from(size.den)).max(1) as i64;
    let d = |v: Dur| Dur::from_ns(x(v.ns()));
    let mut f = f.clone();
    match &mut f {
        Fault::Pause { duration, .. }
        | Fault::ThreadStall { duration, .. }
        | Fault::DiskStall { duration, .. }
        | Fault::Partition { duration, .. }
        | Fault::OneWay { duration, .. }
        | Fault::Drop { duration, .. } => *duration = d(*duration),
        Fault::DelaySpike {
            duration, extra, ..
        } => {
            *duration = d(*duration);
            *extra = d(*extra);
        }
        Fault::ClockStep { by, .. } => *by = LocalDur::from_ns(by.ns().signum() * x(by.ns().abs())),
        Fault::DriftChange { drift_ppm, .. } => {
            let ppt = (*drift_ppm * crate::time::PPT_PER_PPM as f64).round() as i64;
            let scaled = i128::from(ppt) * i128::from(size.num) / i128::from(size.den);
            *drift_ppm = super::draw::ppm(scaled as i64);
        }
        Fault::Restart { at, .. } => *at = At::Time(d(at.offset())),
        _ => {}
    }
    f
}

/// One fault per kind of `nemesis` and target, at the kind's largest size, at time 0.
fn largest(base: &Scenario, nemesis: &Nemesis) -> Vec<Letter> {
    let names: Vec<String> = base.nodes.iter().map(|n| n.name.clone()).collect();
    let mut out = Vec::new();
    let zero = || At::Time(Dur::ZERO);
    let mut add = |kind: &'static str, faults: Vec<Fault>| out.push(Letter { faults, kind });
    for name in &names {
        let node = || name.clone();
        if let Some(p) = &nemesis.pauses {
            add(
                "pauses",
                vec![Fault::Pause {
                    node: node(),
                    at: zero(),
                    duration: p.max,
                    kind: PauseKind::Gc,
                    clock: None,
                }],
            );
        }
        if let Some(f) = &nemesis.freezes {
            add(
                "freezes",
                vec![Fault::Pause {
                    node: node(),
                    at: zero(),
                    duration: f.max,
                    kind: PauseKind::VmFreeze,
                    clock: Some(f.clock),
                }],
            );
        }
        if let Some(st) = &nemesis.steps {
            for by in [st.max.ns(), -st.max.ns()] {
                add(
                    "steps",
                    vec![Fault::ClockStep {
                        node: node(),
                        at: zero(),
                        by: LocalDur::from_ns(by),
                    }],
                );
            }
        }
        if nemesis.drift_changes.is_some() {
            let half = super::draw::half_ppt(nemesis.drift_ppm.unwrap_or(0.0));
            for ppt in [half, -half] {
                add(
                    "drift_changes",
                    vec![Fault::DriftChange {
                        node: node(),
                        at: zero(),
                        drift_ppm: super::draw::ppm(ppt),
                    }],
                );
            }
        }
    }
    network_letters(base, nemesis, &names, &mut add);
    process_letters(base, nemesis, &names, &mut add);
    out
}

/// The network's letters: each node cut off, each ordered pair's one-way cut, a delay spike of
/// every message, a drop of the envelope's kinds.
fn network_letters(
    _base: &Scenario,
    nemesis: &Nemesis,
    names: &[String],
    add: &mut dyn FnMut(&'static str, Vec<Fault>),
) {
    let n = names.len();
    let zero = || At::Time(Dur::ZERO);
    if let Some(p) = &nemesis.partitions {
        for i in 0..n {
            let rest = (0..n)
                .filter(|&j| j != i)
                .map(|j| names[j].clone())
                .collect();
            add(
                "partitions",
                vec![Fault::Partition {
                    at: zero(),
                    duration: p.max,
                    groups: vec![vec![names[i].clone()], rest],
                }],
            );
        }
    }
    if let Some(o) = &nemesis.one_way {
        for i in 0..n {
            for j in (0..n).filter(|&j| j != i) {
                add(
                    "one_way",
                    vec![Fault::OneWay {
                        from: names[i].clone(),
                        to: names[j].clone(),
                        at: zero(),
                        duration: o.max,
                    }],
                );
            }
        }
    }
    if let Some(ds) = &nemesis.delay_spikes {
        add(
            "delay_spikes",
            vec![Fault::DelaySpike {
                at: zero(),
                duration: ds.max,
                extra: ds.max_extra,
                from: None,
                to: None,
                kinds: None,
            }],
        );
    }
    if let Some(dr) = &nemesis.drops {
        add(
            "drops",
            vec![Fault::Drop {
                at: zero(),
                duration: dr.max,
                from: None,
                to: None,
                kinds: dr.kinds.clone(),
            }],
        );
    }
}

/// The processes' letters: each node crashed and restarted `max_down` later, each loop and
/// disk stalled for the envelope's `max`.
fn process_letters(
    base: &Scenario,
    nemesis: &Nemesis,
    names: &[String],
    add: &mut dyn FnMut(&'static str, Vec<Fault>),
) {
    let zero = || At::Time(Dur::ZERO);
    let stallable = nemesis
        .thread_stalls
        .as_ref()
        .map(|t| (t, super::draw::loop_nodes(base, t.thread)));
    for (i, name) in names.iter().enumerate() {
        if let Some(c) = &nemesis.crashes {
            add(
                "crashes",
                vec![
                    Fault::Crash {
                        node: name.clone(),
                        at: zero(),
                    },
                    Fault::Restart {
                        node: name.clone(),
                        at: At::Time(c.max_down),
                    },
                ],
            );
        }
        if let Some((t, has)) = &stallable {
            if has[i] {
                add(
                    "thread_stalls",
                    vec![Fault::ThreadStall {
                        node: name.clone(),
                        thread: t.thread,
                        at: zero(),
                        duration: t.max,
                    }],
                );
            }
        }
        if let (Some(d), Some(_)) = (&nemesis.disk_stalls, &base.nodes[i].disk) {
            add(
                "disk_stalls",
                vec![Fault::DiskStall {
                    node: name.clone(),
                    at: zero(),
                    duration: d.max,
                }],
            );
        }
    }
}

/// What the search proved, in one sentence (or why it proved nothing).
pub fn statement(e: &super::Exploration, grid: &Grid, p: &Proof) -> String {
    let letters = letters_words(e.nemesis);
    let moments: Vec<String> = grid
        .moments
        .iter()
        .map(|m| format!("{m:?}").to_lowercase())
        .collect();
    let offsets: Vec<String> = grid.offsets.iter().map(|o| o.to_string()).collect();
    let sizes: Vec<String> = grid.sizes.iter().map(|o| o.to_string()).collect();
    let drifts = if p.roots > 1 {
        format!(
            ", with the scenario's own drifts and every node at rho/2 = {} ppm placed \
             adversarially and mirrored",
            e.nemesis.drift_ppm.unwrap_or(0.0) / 2.0
        )
    } else {
        String::new()
    };
    let head = if p.complete {
        "no violation".to_string()
    } else if p.violated {
        format!(
            "a violation at schedule {} (proving nothing); before it no violation",
            p.schedules.saturating_sub(1)
        )
    } else {
        format!(
            "stopped at the cap of {} schedules: nothing proved beyond the schedules run; \
             no violation",
            grid.cap
        )
    };
    format!(
        "{head} with up to {k} fault{s} of {letters} ({sizes}; {l} faults in all), each \
         placed at {offsets} lease terms ({term}) from every {moments} moment of the run with \
         the faults before it ({m} such moments in the run{rs} without faults){own}{drifts}\
         {clip}: {n} schedules run, {d} duplicates and {i} invalid schedules skipped",
        k = grid.faults,
        s = if grid.faults == 1 { "" } else { "s" },
        l = p.letters,
        sizes = if grid.sizes == DEFAULT_SIZES {
            "each at its largest".to_string()
        } else {
            format!("each at {} of its largest", sizes.join(", "))
        },
        own = match p.own {
            0 => String::new(),
            1 => " and from the start of the scenario's own fault".to_string(),
            n => format!(" and from the starts of the scenario's own {n} faults"),
        },
        offsets = offsets.join(", "),
        term = e.base.lease.duration,
        moments = moments.join(", "),
        m = p.root_moments,
        rs = if p.roots > 1 { "s" } else { "" },
        clip = if p.clipped {
            format!(" (runs with more than {MAX_MOMENTS} moments: their first ones only)")
        } else {
            String::new()
        },
        n = p.schedules,
        d = p.duplicates,
        i = p.invalid,
    )
}

/// The envelope's letters by kind and size, in words.
fn letters_words(n: &Nemesis) -> String {
    let mut w = Vec::new();
    if let Some(p) = &n.pauses {
        w.push(format!("pauses ({})", p.max));
    }
    if let Some(f) = &n.freezes {
        w.push(format!("freezes ({})", f.max));
    }
    if let Some(s) = &n.steps {
        w.push(format!("steps (±{})", s.max));
    }
    if n.drift_changes.is_some() {
        w.push(format!(
            "drift changes (±{} ppm)",
            n.drift_ppm.unwrap_or(0.0) / 2.0
        ));
    }
    if let Some(p) = &n.partitions {
        w.push(format!("partitions of one node ({})", p.max));
    }
    if let Some(o) = &n.one_way {
        w.push(format!("one-way cuts ({})", o.max));
    }
    if let Some(d) = &n.delay_spikes {
        w.push(format!("delay spikes ({}, +{})", d.max, d.max_extra));
    }
    if let Some(d) = &n.drops {
        w.push(format!("drops ({})", d.max));
    }
    if let Some(c) = &n.crashes {
        w.push(format!("crashes ({} down)", c.max_down));
    }
    if let Some(t) = &n.thread_stalls {
        w.push(format!("loop stalls ({})", t.max));
    }
    if let Some(d) = &n.disk_stalls {
        w.push(format!("disk stalls ({})", d.max));
    }
    if w.is_empty() {
        "no kind".to_string()
    } else {
        w.join(", ")
    }
}

#[cfg(test)]
#[path = "exhaustive_tests.rs"]
mod tests;
