//! Guided search (`explore --search guided`, the default): an evolutionary loop over fault
//! schedules that steers the runs towards the least safety slack, so that a violation needing
//! two or more faults in the right order and spacing is found in far fewer runs than swarm
//! testing draws it by chance.
//!
//! The runs go in generations. Generation 0 is runs 0 to [`FIRST`] - 1, drawn exactly as swarm
//! testing draws them ([`super::draw::draw_run`]). Each later generation has [`GENERATION`] runs, bred
//! only from the records of earlier generations and the exploration's seed:
//! - an archive keeps the [`ARCHIVE`] best runs so far with their schedules ([`rank`]): first
//!   the runs whose faults changed a handover, by the least slack among the handovers they
//!   changed (a handover that the seed's *quiet run*, the scenario without the envelope's
//!   faults, also has at the same instant with the same slack earns nothing: a scheduled
//!   transfer's does not count); then the runs whose faults kept a holder believing past the
//!   end its grantor gave its lease for longer than the quiet run did, the longest first
//!   ([`crate::oracle::lapse`]); then by the least lease a holder had left at a renewal, not
//!   clamped at 0 (a lease that lapsed ranks by how late it was renewed or taken again); then
//!   the rest. No more than [`NICHE`] members share one outcome, and no two one outcome and
//!   one fault placement, while other runs are left ([`select`]): one outcome cannot fill it;
//! - run r's child comes from the ChaCha stream (seed, [`Component::Guided`], r): a parent by a
//!   tournament of [`TOURNAMENT`] archive members (the better wins), spliced with probability
//!   1/4 with a second parent (the first's faults before a cut time, the second's from it), then
//!   one to three mutations: move a fault in time, lengthen or shorten it, add a fault of any
//!   of the envelope's kinds near an existing one, move it to another node, remove one,
//!   redraw a node's drift (when the envelope has `drift_ppm`), or place a fault at a protocol
//!   moment (a grant, a renewal, an acquisition, an expiry, a commit, a write: the first to
//!   third of them, on one node or any, up to T after it or before an expiry) or back at a
//!   time (moving a fault placed at a moment shifts its delay), or aim a fault at the parent's
//!   focus (the node whose belief ended before the closest handover its faults changed, up to
//!   T before that end: [`Mutator::aim`]);
//! - the first [`IMMIGRANTS`] runs of each generation, and any child that after [`TRIES`]
//!   tries still leaves the envelope, are swarm's own run r (fresh blood; so swarm's runs are a
//!   part of guided's).
//!
//! A child never leaves the envelope: only the envelope's faults change (the scenario's own are
//! kept as they are, first), each within its kind's bounds (`max`, `max_down`, `max_extra`, a
//! step's `max`, drift within rho/2), pauses of a node never meet (nor stalls of one of its
//! loops), a stall only of a loop its node has, a crash's downtime is within
//! `max_down`, and the schedule is a valid scenario within the fault limits. A child keeps its
//! first parent's seed, so the scenario's own random draws are its parent's.
//!
//! A generation is bred before it runs, runs in parallel and is collected in run order, and the
//! first violation in run order ends the search: the answer does not depend on `--jobs`.
//! Sharding does not apply (each generation needs every earlier run's record).

use super::draw::{half_ppt, loop_nodes, ppm};
use super::{Pool, RunRecord, Runner};
use crate::msg::NodeId;
use crate::outcome::Guidance;
use crate::rng::{self, Component, Rng};
use crate::scenario::moment::MOMENTS;
use crate::scenario::nemesis::{Nemesis, KINDS};
use crate::scenario::{limits, AfterMoment, At, Fault, Moment, PauseKind, Scenario, Thread};
use crate::time::{Dur, LocalDur};
use rand::RngExt;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Runs in generation 0 (swarm's runs 0 to 63).
pub const FIRST: u64 = 64;
/// Runs in each later generation.
pub const GENERATION: u64 = 32;
/// Runs of each later generation that are swarm's own (its first ones).
pub const IMMIGRANTS: u64 = 4;
/// The best runs kept as parents.
pub const ARCHIVE: usize = 16;
/// Archive members drawn for a tournament; the least slack wins.
pub const TOURNAMENT: usize = 2;
/// Tries at a child inside the envelope before run r is swarm's own.
pub const TRIES: usize = 8;
/// Archive members that may share one outcome (class and value of [`rank`]) while runs with
/// other outcomes are left.
pub const NICHE: usize = 8;

/// One run to be: its scenario and the kinds it uses.
#[derive(Clone, Debug)]
pub struct Child {
    pub scenario: Scenario,
    pub kinds: Vec<String>,
}

impl From<super::draw::Drawn> for Child {
    fn from(d: super::draw::Drawn) -> Child {
        Child {
            scenario: d.scenario,
            kinds: d.kinds.iter().map(|k| k.to_string()).collect(),
        }
    }
}

/// An archive member: a run, its rank, its schedule and where its faults are.
#[derive(Clone, Debug)]
struct Member {
    /// See [`rank`]: the least is the best.
    rank: (u8, i64, u64),
    /// See [`placement`].
    placement: Vec<(String, i64)>,
    child: Child,
    /// See [`Guide::focus`].
    focus: Option<(NodeId, i64)>,
}

/// What guided search ranks a run by besides its figures. It is kept in the run's record, so
/// that a resumed search breeds from the records alone, as the uninterrupted one did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Guide {
    /// The least slack among the handovers the run's faults changed: those its quiet run (the
    /// scenario with the run's seed, without the envelope's faults) does not have at the same
    /// instant with the same slack; `None` when they changed none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credit_ns: Option<i64>,
    /// The least lease a holder had left when it renewed or took the lease again, with or
    /// without a handover, not clamped at 0: negative when a lease lapsed, by how long before
    /// it was renewed or taken again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_ns: Option<i64>,
    /// The longest a node believed under a lease handed to it past the end its grantor gave
    /// ([`crate::oracle::lapse`]), when longer than in the quiet run (or the quiet run had
    /// none): the run's faults kept a holder believing where another could be granted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overrun_ns: Option<i64>,
    /// Where that closest changed handover was: the node whose belief ended before it, and
    /// when (true time, ns). A child's faults may be aimed there (see [`Mutator::aim`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focus: Option<(NodeId, i64)>,
}

impl Guide {
    /// The guide of a run whose oracle gave `g`, its quiet run's `quiet`. A handover is changed
    /// unless the quiet run has it; each of the quiet run's handovers matches one of the run's
    /// at most.
    pub fn of(g: &Guidance, quiet: &Guidance) -> Guide {
        let mut left = quiet.handovers.clone();
        // The changed handover with the least slack, the earliest among equals.
        let mut closest: Option<(i64, i64, NodeId)> = None;
        for &h in &g.handovers {
            match left.binary_search(&h) {
                Ok(i) => {
                    left.remove(i);
                }
                Err(_) => {
                    if closest.is_none_or(|c| h.1 < c.1) {
                        closest = Some(h);
                    }
                }
            }
        }
        Guide {
            credit_ns: closest.map(|h| h.1),
            call_ns: g.call_ns,
            overrun_ns: g
                .overrun_ns
                .filter(|&v| quiet.overrun_ns.is_none_or(|q| v > q)),
            focus: closest.map(|(start, slack, from)| (from, start - slack)),
        }
    }
}

/// A run's rank: with a liveness bound, by how much of it was left when a holder served again.
/// Else, with a [`Guide`] (guided search's runs): first the runs whose faults changed a
/// handover, by the least slack among those; then the runs whose faults kept a holder
/// believing past its grantor's end for longer than the quiet run did, the longest first (one
/// grant away from an overlap); then by the least lease left at a renewal, not clamped at 0 (a
/// lapsed lease ranks by how late it was renewed or taken again: the further past its end, the
/// nearer an overlap); then the runs with only the quiet run's handovers, by slack; then the
/// rest. Without one (a record of an older search): by slack, then by closest call, then the
/// rest. Earliest first among equals.
fn rank(r: &RunRecord) -> (u8, i64, u64) {
    // With a liveness bound, the runs that came nearest to recovering late first.
    if let Some(margin) = r.recovery_margin_ns {
        return (0, margin, r.run);
    }
    if let Some(g) = &r.guide {
        return match (g.credit_ns, g.overrun_ns, g.call_ns, r.min_slack_ns) {
            (Some(credit), ..) => (0, credit, r.run),
            (None, Some(overrun), ..) => (1, -overrun, r.run),
            (None, None, Some(call), _) => (2, call, r.run),
            (None, None, None, Some(slack)) => (3, slack, r.run),
            (None, None, None, None) => (4, 0, r.run),
        };
    }
    match (r.min_slack_ns, r.closest_call_ns) {
        (Some(slack), _) => (0, slack, r.run),
        (None, Some(call)) => (1, call, r.run),
        (None, None) => (2, 0, r.run),
    }
}

/// Of the bred generations whose runs are all in `records` (in run order, from run 0): how many
/// were captured by one outcome (at least three in four of their bred runs, immigrants left
/// out, with the same slack, closest call and verdict), and how many there were. A search
/// whose generations are captured keeps breeding one lineage: its count of runs overstates
/// what it tried.
pub fn captured_generations(records: &[RunRecord]) -> (u64, u64) {
    let mut captured = 0;
    let mut bred = 0;
    let mut start = FIRST as usize;
    while start + GENERATION as usize <= records.len() {
        let gen = &records[start + IMMIGRANTS as usize..start + GENERATION as usize];
        let key = |r: &RunRecord| (r.min_slack_ns, r.closest_call_ns, r.violation.is_some());
        let most = gen
            .iter()
            .map(|r| gen.iter().filter(|o| key(o) == key(r)).count())
            .max()
            .unwrap_or(0);
        bred += 1;
        captured += u64::from(4 * most >= 3 * gen.len());
        start += GENERATION as usize;
    }
    (captured, bred)
}

/// Where the envelope's faults of `s` (an exploration of `base`) are, coarsely: each fault's
/// kind and node (the first two words of [`Fault::describe`]), the moment it follows and its
/// start in eighths of T; and each node's drift in whole ppm. Sorted.
fn placement(base: &Scenario, s: &Scenario) -> Vec<(String, i64)> {
    let mut b = base.clone();
    b.seed = s.seed;
    let fixed = b.fault_schedule().len().min(s.faults.len());
    let eighth = (base.lease.duration.ns() / 8).max(1);
    let mut v: Vec<(String, i64)> = s.faults[fixed..]
        .iter()
        .map(|f| {
            let d = f.describe();
            let mut what: Vec<&str> = d.split_whitespace().take(2).collect();
            let after = f.after().map(|a| format!("{:?} {}", a.moment, a.nth));
            what.extend(after.as_deref());
            (what.join(" "), f.at().ns().div_euclid(eighth))
        })
        .collect();
    v.extend(s.nodes.iter().filter_map(|n| {
        n.drift_ppm
            .map(|d| (format!("drift {}", n.name), d.round() as i64))
    }));
    v.sort();
    v
}

/// The archive from `pool` (the last archive and a generation's runs): the best by [`rank`],
/// but a run joins only while fewer than [`NICHE`] members share its outcome (the class and
/// value of its rank) and none shares both its outcome and its placement; the places left
/// then go to the best of the runs passed over. At most [`ARCHIVE`] members, sorted by rank.
fn select(mut pool: Vec<Member>) -> Vec<Member> {
    pool.sort_by_key(|m| m.rank);
    let outcome = |m: &Member| (m.rank.0, m.rank.1);
    let mut kept: Vec<Member> = Vec::new();
    let mut passed = Vec::new();
    for m in pool {
        let same = kept.iter().filter(|k| outcome(k) == outcome(&m));
        let (count, twin) = same.fold((0, false), |(n, t), k| {
            (n + 1, t || k.placement == m.placement)
        });
        if kept.len() < ARCHIVE && count < NICHE && !twin {
            kept.push(m);
        } else {
            passed.push(m);
        }
    }
    let room = ARCHIVE.saturating_sub(kept.len());
    kept.extend(passed.into_iter().take(room));
    kept.sort_by_key(|m| m.rank);
    kept
}

/// The guided record of run `run`, the child `c`: its figures, and with `quiet` (its seed's
/// quiet run's handovers) its [`Guide`].
fn guided_record(
    run: u64,
    c: &Child,
    runner: &Runner,
    liveness: Option<crate::time::Dur>,
    quiet: Option<&Guidance>,
) -> Result<RunRecord, String> {
    let s = runner(&c.scenario)
        .map_err(|p| format!("run {run} (seed {}): {}", c.scenario.seed, p.join("; ")))?;
    let mut r = super::record_from(run, &c.scenario, c.kinds.clone(), &s, liveness);
    r.guide = quiet.map(|q| Guide::of(&s.guidance, q));
    Ok(r)
}

/// Runs the quiet run (the scenario with the seed, without the envelope's faults) of each seed
/// of `children` that `quiet` does not have yet, in seed order, and keeps its guidance; says
/// how many it ran. None with a liveness bound, whose ranking does not use them.
fn run_quiet(
    e: &super::Exploration,
    children: &[Child],
    pool: &Pool,
    runner: &Runner,
    quiet: &mut BTreeMap<u64, Guidance>,
) -> Result<u64, String> {
    if e.liveness.is_some() {
        return Ok(0);
    }
    let seeds: Vec<u64> = children
        .iter()
        .map(|c| c.scenario.seed)
        .filter(|s| !quiet.contains_key(s))
        .collect::<BTreeSet<u64>>()
        .into_iter()
        .collect();
    let got = pool.map(0..seeds.len() as u64, &|i| {
        let mut s = e.base.clone();
        s.seed = seeds[i as usize];
        runner(&s).map(|o| o.guidance).map_err(|p| {
            format!(
                "the run of seed {} without the envelope's faults: {}",
                s.seed,
                p.join("; ")
            )
        })
    });
    for (seed, h) in seeds.iter().zip(got) {
        quiet.insert(*seed, h?);
    }
    Ok(seeds.len() as u64)
}

/// What a guided search ran: every record in run order (up to and including the first
/// violation), the schedules of the runs an answer may need (the archive's and the
/// violation's), by run, and how many quiet runs it ran besides ([`Guide`]).
pub struct Searched {
    pub records: Vec<RunRecord>,
    pub kept: BTreeMap<u64, Scenario>,
    pub quiet_runs: u64,
}

/// The guided search of `e`'s `runs` runs. `done` hears how many runs each generation finished;
/// the first runs' records come from `resumed` (an interrupted search's, not run again: each
/// generation is bred again from the records, as it was), and each generation's new records go
/// to `keep`.
pub fn search(
    e: &super::Exploration,
    jobs: Option<usize>,
    done: &(dyn Fn(u64) + Sync),
    runner: &Runner,
    resumed: &[RunRecord],
    keep: &mut dyn FnMut(&[RunRecord]) -> Result<(), String>,
) -> Result<Searched, String> {
    let pool = Pool::new(jobs)?;
    let mut records = Vec::new();
    let mut archive: Vec<Member> = Vec::new();
    let mut quiet = BTreeMap::new();
    let mut quiet_runs = 0;
    let mut next = 0;
    while next < e.runs {
        let size = if next == 0 { FIRST } else { GENERATION }.min(e.runs - next);
        let children: Vec<Child> = (next..next + size)
            .map(|run| breed(e, &archive, run))
            .collect();
        // The runs of the generation an interrupted search did are taken as they were.
        let had = (resumed.len() as u64).clamp(next, next + size) - next;
        quiet_runs += run_quiet(e, &children[had as usize..], &pool, runner, &mut quiet)?;
        let found = pool.map(had..size, &|i| {
            let c = &children[i as usize];
            let q = quiet.get(&c.scenario.seed);
            guided_record(next + i, c, runner, e.liveness, q)
        });
        done(size);
        let old = resumed
            .iter()
            .skip(next as usize)
            .take(had as usize)
            .map(|r| Ok(r.clone()));
        let from = records.len() + had as usize;
        for (child, r) in children.into_iter().zip(old.chain(found)) {
            let r = r?;
            if r.violation.is_some() {
                let mut kept = kept_of(archive);
                kept.insert(r.run, child.scenario);
                records.push(r);
                keep(&records[from.min(records.len())..])?;
                return Ok(Searched {
                    records,
                    kept,
                    quiet_runs,
                });
            }
            archive.push(Member {
                rank: rank(&r),
                placement: placement(e.base, &child.scenario),
                child,
                focus: r.guide.as_ref().and_then(|g| g.focus),
            });
            records.push(r);
        }
        keep(&records[from..])?;
        archive = select(archive);
        next += size;
    }
    Ok(Searched {
        records,
        kept: kept_of(archive),
        quiet_runs,
    })
}

fn kept_of(archive: Vec<Member>) -> BTreeMap<u64, Scenario> {
    archive
        .into_iter()
        .map(|m| (m.rank.2, m.child.scenario))
        .collect()
}

/// Run `run`'s child: swarm's own run in generation 0, for an immigrant, or when no try stays
/// in the envelope; else bred from the archive (sorted, best first).
fn breed(e: &super::Exploration, archive: &[Member], run: u64) -> Child {
    let swarm = || Child::from(e.draw(run));
    if run < FIRST || (run - FIRST) % GENERATION < IMMIGRANTS || archive.is_empty() {
        return swarm();
    }
    let mut r = rng::stream(e.base.seed, Component::Guided, run);
    let mut m = Mutator::new(e.base, e.nemesis).stopping_at(e.faults_stop_ns());
    for _ in 0..TRIES {
        let (a, b) = parents(archive, &mut r);
        let mut c = a.child.clone();
        m.focus = a.focus;
        if let Some(b) = b {
            m.splice(&mut c, &b.child, &mut r);
        }
        for _ in 0..r.random_range(1..=3) {
            m.mutate(&mut c, &mut r);
        }
        if m.inside(&c.scenario) {
            return c;
        }
    }
    swarm()
}

/// A child's first parent, and with probability 1/4 (when there are two to choose from) a
/// second to splice with, each by a tournament.
fn parents<'a>(archive: &'a [Member], r: &mut Rng) -> (&'a Member, Option<&'a Member>) {
    let a = tournament(archive, r);
    let b = (archive.len() >= 2 && r.random_bool(0.25)).then(|| tournament(archive, r));
    (a, b)
}

fn tournament<'a>(archive: &'a [Member], r: &mut Rng) -> &'a Member {
    debug_assert!(!archive.is_empty());
    (0..TOURNAMENT)
        .map(|_| &archive[r.random_range(0..archive.len())])
        .min_by_key(|m| m.rank)
        .expect("a tournament of at least one")
}

/// The mutations of one exploration's schedules, inside its envelope.
struct Mutator<'a> {
    base: &'a Scenario,
    nemesis: &'a Nemesis,
    /// The kinds of fault the envelope allows, by [`KINDS`] index (no `drift_ppm`).
    kinds: Vec<usize>,
    /// The nodes that have the loop the envelope's thread stalls stop.
    stallable: Vec<usize>,
    /// T in ns: the scale of moves.
    term_ns: i64,
    /// With a liveness bound, when the envelope's faults stop (a restart of a crash before it
    /// may come later).
    stop_ns: Option<i64>,
    /// The first parent's [`Guide::focus`], if it has one.
    focus: Option<(NodeId, i64)>,
}

/// The mutations, by number: move, resize, add near, renode, remove, drift, anchor, aim.
const MUTATIONS: u64 = 8;

impl<'a> Mutator<'a> {
    fn new(base: &'a Scenario, nemesis: &'a Nemesis) -> Mutator<'a> {
        let present = nemesis.present();
        let stallable: Vec<usize> = nemesis.thread_stalls.as_ref().map_or(Vec::new(), |t| {
            let has = loop_nodes(base, t.thread);
            (0..has.len()).filter(|&i| has[i]).collect()
        });
        let kinds = (0..KINDS.len())
            .filter(|&k| present[k] && k != 3 && (k != 4 || nemesis.drift_ppm.is_some()))
            .filter(|&k| !matches!(k, 5 | 6) || base.nodes.len() >= 2)
            .filter(|&k| k != 10 || !stallable.is_empty())
            .filter(|&k| k != 11 || base.nodes.iter().any(|n| n.disk.is_some()))
            .collect();
        Mutator {
            base,
            nemesis,
            kinds,
            stallable,
            term_ns: base.lease.duration.ns().max(1),
            stop_ns: None,
            focus: None,
        }
    }

    /// The mutator of an exploration whose envelope's faults stop at `stop_ns` (liveness).
    fn stopping_at(self, stop_ns: Option<i64>) -> Mutator<'a> {
        Mutator { stop_ns, ..self }
    }

    /// How many faults of `s` are the scenario's own (they come first and never change).
    fn fixed(&self, s: &Scenario) -> usize {
        let mut b = self.base.clone();
        b.seed = s.seed;
        b.fault_schedule().len()
    }

    /// A shift in [-scale, scale], the scale one of T/100, T/10, T/2 and T.
    fn delta(&self, r: &mut Rng) -> i64 {
        let scale = [
            self.term_ns / 100,
            self.term_ns / 10,
            self.term_ns / 2,
            self.term_ns,
        ][r.random_range(0..4)]
        .max(1);
        r.random_range(-scale..=scale)
    }

    /// Where the envelope's faults may start: before the run's end, or before they stop.
    fn end_ns(&self) -> i64 {
        self.stop_ns.unwrap_or(self.base.duration.ns())
    }

    /// Applies one random mutation to `c` (it may leave the envelope: [`Mutator::inside`]).
    fn mutate(&self, c: &mut Child, r: &mut Rng) {
        let fixed = self.fixed(&c.scenario);
        let mut own: Vec<Fault> = c.scenario.faults.split_off(fixed);
        // A liveness search has no focus (its runs are ranked by recovery): it draws among the
        // other seven mutations.
        let op = r.random_range(0..MUTATIONS - u64::from(self.stop_ns.is_some()));
        let i = pick(&own, r);
        self.apply(op, i, &mut own, c, r);
        own.sort_by_key(Fault::at);
        c.scenario.faults.extend(own);
    }

    /// Mutation `op` (see [`MUTATIONS`]) of the envelope's faults `own` of `c`, on fault `i` if
    /// one was picked: 0 moves it (a crash with its restart), 1 resizes it, 3 moves it to another
    /// node, 4 removes it (a crash with its restart), 5 redraws a drift (with `drift_ppm` in the
    /// envelope), 6 places it at a moment or back at a time (not a crash), 7 aims it (or a new
    /// fault) at the parent's focus ([`Mutator::aim`]); any other, or one that does not apply,
    /// adds a fault near a picked one (anywhere without one).
    fn apply(&self, op: u64, i: Option<usize>, own: &mut Vec<Fault>, c: &mut Child, r: &mut Rng) {
        match (op, i) {
            (0, Some(i)) => {
                let d = self.delta(r);
                let restart = restart_of(own, i);
                shift(&mut own[i], d, self.end_ns());
                if let Some(j) = restart {
                    shift(&mut own[j], d, i64::MAX);
                }
            }
            (1, Some(i)) => self.resize(own, i, r),
            (3, Some(i)) => self.renode(&mut own[i], r),
            (4, Some(i)) => {
                if let Some(j) = restart_of(own, i) {
                    own.remove(j);
                }
                own.remove(i);
            }
            (5, _) if self.nemesis.drift_ppm.is_some() => self.drift(c, r),
            (6, Some(i)) if !matches!(own[i], Fault::Crash { .. }) => self.anchor(&mut own[i], r),
            (7, i) if self.focus.is_some() && r.random_bool(0.5) => self.aim(own, i, c, r),
            _ => {
                let near = match pick(own, r) {
                    Some(i) => own[i].at().ns() + self.delta(r),
                    None => r.random_range(0..self.end_ns().max(1)),
                };
                self.add(own, near, c, r);
            }
        }
    }

    /// Places fault `f` at a protocol moment (a random kind, on its node or any, the first to
    /// third of them, up to T after it or, for an expiry, up to T before it), or one placed at
    /// a moment back at a time in the run. A crash stays at its time (its restart must follow
    /// it).
    fn anchor(&self, f: &mut Fault, r: &mut Rng) {
        let at = f.start_mut();
        if at.after().is_some() {
            *at = At::Time(Dur::from_ns(r.random_range(0..self.end_ns().max(1))));
            return;
        }
        let moment = MOMENTS[r.random_range(0..MOMENTS.len())];
        let node = r.random_bool(0.5).then(|| {
            self.base.nodes[r.random_range(0..self.base.nodes.len())]
                .name
                .clone()
        });
        let span = r.random_range(0..=self.term_ns.min(self.end_ns() - 1).max(0));
        *at = At::After(AfterMoment {
            moment,
            node,
            nth: r.random_range(1..=3),
            delay: Dur::from_ns(if moment == Moment::Expiry {
                -span
            } else {
                span
            }),
        });
    }

    /// Aims fault `i`, or a new fault, at the focus (there must be one): the node whose belief
    /// ended before the closest handover the parent's faults changed, at a time up to T before
    /// that end. A fault there moves that handover's slack where one on another node, or long
    /// before, does nothing: a step, pause or stall of the holder inside the stretch its
    /// protocol still trusts it. Only a fault that can be on that node moves there (a pause,
    /// step, drift change, partition or one-way cut, a stall of a loop or disk the node has);
    /// else, or without a fault picked, a new fault is added there (of no node, a delay spike
    /// or a drop, it is added at that time as drawn).
    fn aim(&self, own: &mut Vec<Fault>, i: Option<usize>, c: &mut Child, r: &mut Rng) {
        let (node, end_ns) = self.focus.expect("aimed only with a focus");
        let before = r.random_range(0..=self.term_ns);
        let at_ns = (end_ns - before).clamp(0, (self.end_ns() - 1).max(0));
        let i = match i.filter(|&i| self.can_be_on(&own[i], node)) {
            Some(i) => i,
            None => {
                let had = own.len();
                self.add(own, at_ns, c, r);
                // `add` pushes the fault last (a crash's restart before it).
                match own.last() {
                    Some(f) if own.len() > had && self.can_be_on(f, node) => own.len() - 1,
                    _ => return,
                }
            }
        };
        *own[i].start_mut() = At::Time(Dur::from_ns(at_ns));
        let name = |j: usize| self.base.nodes[j].name.clone();
        let n = self.base.nodes.len();
        match &mut own[i] {
            Fault::Partition { groups, .. } => {
                *groups = vec![
                    vec![name(node)],
                    (0..n).filter(|&j| j != node).map(name).collect(),
                ];
            }
            Fault::OneWay { from, to, .. } => {
                let other = name((node + r.random_range(1..n)) % n);
                (*from, *to) = if r.random_bool(0.5) {
                    (name(node), other)
                } else {
                    (other, name(node))
                };
            }
            Fault::Pause { node: on, .. }
            | Fault::ClockStep { node: on, .. }
            | Fault::DriftChange { node: on, .. }
            | Fault::ThreadStall { node: on, .. }
            | Fault::DiskStall { node: on, .. } => *on = name(node),
            _ => {}
        }
    }

    /// Whether fault `f` can be moved onto node `node` (see [`Mutator::aim`]).
    fn can_be_on(&self, f: &Fault, node: NodeId) -> bool {
        match f {
            Fault::Pause { .. } | Fault::ClockStep { .. } | Fault::DriftChange { .. } => true,
            Fault::Partition { .. } | Fault::OneWay { .. } => self.base.nodes.len() >= 2,
            Fault::ThreadStall { .. } => self.stallable.contains(&node),
            Fault::DiskStall { .. } => self.base.nodes[node].disk.is_some(),
            _ => false,
        }
    }

    /// Lengthens or shortens fault `i` (a step's size, a drift change's rate, a crash's
    /// downtime), within its kind's cap.
    fn resize(&self, own: &mut [Fault], i: usize, r: &mut Rng) {
        let d = self.delta(r);
        let n = self.nemesis;
        let cap = |max: Option<Dur>| max.map_or(1, |m| m.ns()).max(1);
        let grow = |x: i64, cap: i64| x.saturating_add(d).clamp(1, cap);
        match &mut own[i] {
            Fault::Pause { duration, kind, .. } => {
                let max = match kind {
                    PauseKind::VmFreeze => n.freezes.as_ref().map(|f| f.max),
                    _ => n.pauses.as_ref().map(|p| p.max),
                };
                *duration = Dur::from_ns(grow(duration.ns(), cap(max)));
            }
            Fault::ClockStep { by, .. } => {
                let max = n.steps.as_ref().map_or(1, |s| s.max.ns()).max(1);
                let sign = by.ns().signum();
                *by = LocalDur::from_ns(sign * grow(by.ns().abs(), max));
            }
            Fault::DriftChange { drift_ppm, .. } => {
                let half = half_ppt(n.drift_ppm.unwrap_or(0.0));
                *drift_ppm = ppm(r.random_range(-half..=half));
            }
            Fault::Partition { duration, .. } => {
                *duration = Dur::from_ns(grow(
                    duration.ns(),
                    cap(n.partitions.as_ref().map(|p| p.max)),
                ));
            }
            Fault::OneWay { duration, .. } => {
                *duration =
                    Dur::from_ns(grow(duration.ns(), cap(n.one_way.as_ref().map(|p| p.max))));
            }
            Fault::DelaySpike {
                duration, extra, ..
            } => {
                let ds = n.delay_spikes.as_ref();
                if r.random_bool(0.5) {
                    *duration = Dur::from_ns(grow(duration.ns(), cap(ds.map(|d| d.max))));
                } else {
                    *extra = Dur::from_ns(grow(extra.ns(), cap(ds.map(|d| d.max_extra))));
                }
            }
            Fault::Drop { duration, .. } => {
                *duration = Dur::from_ns(grow(duration.ns(), cap(n.drops.as_ref().map(|p| p.max))));
            }
            Fault::ThreadStall { duration, .. } => {
                let max = n.thread_stalls.as_ref().map(|t| t.max);
                *duration = Dur::from_ns(grow(duration.ns(), cap(max)));
            }
            Fault::DiskStall { duration, .. } => {
                let max = n.disk_stalls.as_ref().map(|d| d.max);
                *duration = Dur::from_ns(grow(duration.ns(), cap(max)));
            }
            Fault::Crash { at, .. } => {
                let crash = at.ns();
                let max = cap(n.crashes.as_ref().map(|c| c.max_down));
                if let Some(j) = restart_of(own, i) {
                    if let Fault::Restart { at, .. } = &mut own[j] {
                        let down = grow(at.ns() - crash, max);
                        *at.offset_mut() = Dur::from_ns(crash + down);
                    }
                }
            }
            _ => {}
        }
    }

    /// Moves fault `f` to another node (a partition cuts off another, a one-way cut joins
    /// another pair); a crash stays (its restart would have to follow).
    fn renode(&self, f: &mut Fault, r: &mut Rng) {
        let n = self.base.nodes.len();
        let name = |i: usize| self.base.nodes[i].name.clone();
        match f {
            Fault::Pause { node, .. }
            | Fault::ClockStep { node, .. }
            | Fault::DriftChange { node, .. } => *node = name(r.random_range(0..n)),
            Fault::Partition { groups, .. } if n >= 2 => {
                let cut = r.random_range(0..n);
                *groups = vec![
                    vec![name(cut)],
                    (0..n).filter(|&j| j != cut).map(name).collect(),
                ];
            }
            Fault::OneWay { from, to, .. } if n >= 2 => {
                let (a, b) = pair(r, n);
                (*from, *to) = (name(a), name(b));
            }
            Fault::ThreadStall { node, .. } if !self.stallable.is_empty() => {
                *node = name(self.stallable[r.random_range(0..self.stallable.len())]);
            }
            Fault::DiskStall { node, .. } => *node = name(self.with_disk(r)),
            _ => {}
        }
    }

    /// A node with a disk, at random (the envelope draws disk stalls only when one has).
    fn with_disk(&self, r: &mut Rng) -> usize {
        let disked: Vec<usize> = (0..self.base.nodes.len())
            .filter(|&i| self.base.nodes[i].disk.is_some())
            .collect();
        disked[r.random_range(0..disked.len())]
    }

    /// Adds a fault of one of the envelope's kinds at `near_ns` (clamped into the run), on a
    /// random node, of a size uniform up to its kind's cap.
    fn add(&self, own: &mut Vec<Fault>, near_ns: i64, c: &mut Child, r: &mut Rng) {
        if self.kinds.is_empty() {
            return;
        }
        let k = self.kinds[r.random_range(0..self.kinds.len())];
        let n = self.base.nodes.len();
        let name = |i: usize| self.base.nodes[i].name.clone();
        let at = Dur::from_ns(near_ns.clamp(0, self.end_ns() - 1));
        let node = r.random_range(0..n);
        let upto = |r: &mut Rng, max: Dur| Dur::from_ns(r.random_range(1..=max.ns().max(1)));
        let nem = self.nemesis;
        let f = match k {
            0 => nem.pauses.as_ref().map(|p| Fault::Pause {
                node: name(node),
                at: at.into(),
                duration: upto(r, p.max),
                kind: PauseKind::Gc,
                clock: None,
            }),
            1 => nem.freezes.as_ref().map(|f| Fault::Pause {
                node: name(node),
                at: at.into(),
                duration: upto(r, f.max),
                kind: PauseKind::VmFreeze,
                clock: Some(f.clock),
            }),
            2 => nem.steps.as_ref().map(|s| {
                let by = r.random_range(1..=s.max.ns().max(1));
                Fault::ClockStep {
                    node: name(node),
                    at: at.into(),
                    by: LocalDur::from_ns(if r.random_bool(0.5) { by } else { -by }),
                }
            }),
            4 => nem.drift_ppm.map(|rho| {
                let half = half_ppt(rho);
                Fault::DriftChange {
                    node: name(node),
                    at: at.into(),
                    drift_ppm: ppm(r.random_range(-half..=half)),
                }
            }),
            5 => nem.partitions.as_ref().map(|p| Fault::Partition {
                at: at.into(),
                duration: upto(r, p.max),
                groups: vec![
                    vec![name(node)],
                    (0..n).filter(|&j| j != node).map(name).collect(),
                ],
            }),
            6 => nem.one_way.as_ref().map(|o| {
                let (a, b) = pair(r, n);
                Fault::OneWay {
                    from: name(a),
                    to: name(b),
                    at: at.into(),
                    duration: upto(r, o.max),
                }
            }),
            7 => nem.delay_spikes.as_ref().map(|d| Fault::DelaySpike {
                at: at.into(),
                duration: upto(r, d.max),
                extra: upto(r, d.max_extra),
                from: None,
                to: None,
                kinds: None,
            }),
            8 => nem.drops.as_ref().map(|d| Fault::Drop {
                at: at.into(),
                duration: upto(r, d.max),
                from: None,
                to: None,
                kinds: d.kinds.clone(),
            }),
            11 => nem.disk_stalls.as_ref().map(|d| Fault::DiskStall {
                node: name(self.with_disk(r)),
                at: at.into(),
                duration: upto(r, d.max),
            }),
            10 => nem.thread_stalls.as_ref().map(|t| Fault::ThreadStall {
                node: name(self.stallable[r.random_range(0..self.stallable.len())]),
                thread: t.thread,
                at: at.into(),
                duration: upto(r, t.max),
            }),
            _ => nem.crashes.as_ref().map(|cr| {
                let lo = cr.max_down.ns().clamp(1, crate::time::NS_PER_MS);
                let back = at.ns() + r.random_range(lo..=cr.max_down.ns().max(lo));
                if back < self.end_ns() {
                    own.push(Fault::Restart {
                        node: name(node),
                        at: Dur::from_ns(back).into(),
                    });
                }
                Fault::Crash {
                    node: name(node),
                    at: at.into(),
                }
            }),
        };
        if let Some(f) = f {
            own.push(f);
            let kind = KINDS[k].to_string();
            if !c.kinds.contains(&kind) {
                c.kinds.push(kind);
                c.kinds
                    .sort_by_key(|k| KINDS.iter().position(|x| x == k).unwrap_or(KINDS.len()));
            }
        }
    }

    /// Redraws one node's drift within rho/2, or places every node's adversarially.
    fn drift(&self, c: &mut Child, r: &mut Rng) {
        let half = half_ppt(self.nemesis.drift_ppm.unwrap_or(0.0));
        let s = &mut c.scenario;
        if r.random_bool(0.5) {
            let i = r.random_range(0..s.nodes.len());
            s.nodes[i].drift_ppm = Some(ppm(r.random_range(-half..=half)));
        } else {
            let fast: Vec<bool> = (0..s.nodes.len())
                .map(|i| s.runs_fast_adversarially(i))
                .collect();
            for (n, fast) in s.nodes.iter_mut().zip(fast) {
                n.drift_ppm = Some(ppm(if fast { half } else { -half }));
            }
        }
        if !c.kinds.iter().any(|k| k == "drift_ppm") {
            c.kinds.push("drift_ppm".into());
            c.kinds
                .sort_by_key(|k| KINDS.iter().position(|x| x == k).unwrap_or(KINDS.len()));
        }
    }

    /// The first parent's faults before a cut time, the second's from it (the envelope's
    /// faults only; the first's own faults, seed and drifts stay).
    fn splice(&self, a: &mut Child, b: &Child, r: &mut Rng) {
        let cut = r.random_range(0..self.end_ns().max(1));
        let fa = self.fixed(&a.scenario);
        let fb = self.fixed(&b.scenario);
        let mut own: Vec<Fault> = a.scenario.faults.split_off(fa);
        // A crash before the cut whose restart is after it would lose its restart: keep both
        // sides whole by cutting at crash granularity (validation refuses what is left odd).
        own.retain(|f| f.at().ns() < cut);
        own.extend(
            b.scenario.faults[fb..]
                .iter()
                .filter(|f| f.at().ns() >= cut)
                .cloned(),
        );
        own.sort_by_key(Fault::at);
        a.scenario.faults.extend(own);
        for k in &b.kinds {
            if !a.kinds.contains(k) && k != "drift_ppm" {
                a.kinds.push(k.clone());
            }
        }
        a.kinds
            .sort_by_key(|k| KINDS.iter().position(|x| x == k).unwrap_or(KINDS.len()));
    }

    /// Whether `s` is inside the envelope: its own faults as the scenario's, each of the
    /// envelope's within its kind's bounds, pauses of a node apart, downtimes within
    /// `max_down`, drifts within rho/2, and the whole a valid scenario.
    fn inside(&self, s: &Scenario) -> bool {
        let fixed = self.fixed(s);
        let mut b = self.base.clone();
        b.seed = s.seed;
        if s.faults.len() < fixed || s.faults[..fixed] != b.fault_schedule()[..] {
            return false;
        }
        if s.faults.len() > limits::MAX_FAULTS {
            return false;
        }
        // No crash before its node starts (the drawn ones never are).
        let starts_before = |node: &str, at: Dur| {
            s.node_index(node)
                .is_none_or(|i| at.ns() < s.nodes[i].start.ns())
        };
        if s.faults[fixed..]
            .iter()
            .any(|f| matches!(f, Fault::Crash { node, at } if starts_before(node, at.offset())))
        {
            return false;
        }
        let own = &s.faults[fixed..];
        let starts_inside = |f: &Fault| {
            let restart = matches!(f, Fault::Restart { .. });
            f.at().ns() < self.end_ns() || (restart && f.at() < self.base.duration)
        };
        if !own.iter().all(|f| self.bounded(f) && starts_inside(f)) {
            return false;
        }
        if let Some(rho) = self.nemesis.drift_ppm {
            let half = ppm(half_ppt(rho));
            if s.nodes
                .iter()
                .any(|n| n.drift_ppm.is_some_and(|d| d.abs() > half))
            {
                return false;
            }
        }
        pauses_apart(&s.faults)
            && self.downtimes_within(own)
            && crate::scenario::validate::validate(s).is_empty()
    }

    /// Whether one of the envelope's faults is of a kind it has, within its bounds.
    fn bounded(&self, f: &Fault) -> bool {
        let n = self.nemesis;
        let within = |d: Dur, max: Dur| d.ns() >= 1 && d.ns() <= max.ns();
        match f {
            Fault::Pause {
                duration,
                kind: PauseKind::VmFreeze,
                clock,
                ..
            } => n
                .freezes
                .as_ref()
                .is_some_and(|fr| within(*duration, fr.max) && *clock == Some(fr.clock)),
            Fault::Pause {
                duration, clock, ..
            } => n
                .pauses
                .as_ref()
                .is_some_and(|p| within(*duration, p.max) && clock.is_none()),
            Fault::ClockStep { by, .. } => n
                .steps
                .as_ref()
                .is_some_and(|st| by.ns() != 0 && by.ns().abs() <= st.max.ns()),
            Fault::DriftChange { drift_ppm, .. } => n.drift_ppm.is_some_and(|rho| {
                n.drift_changes.is_some() && drift_ppm.abs() <= ppm(half_ppt(rho))
            }),
            Fault::Partition {
                duration, groups, ..
            } => {
                n.partitions
                    .as_ref()
                    .is_some_and(|p| within(*duration, p.max))
                    && groups.len() == 2
                    && groups[0].len() == 1
            }
            Fault::OneWay {
                duration, from, to, ..
            } => n.one_way.as_ref().is_some_and(|o| within(*duration, o.max)) && from != to,
            Fault::DelaySpike {
                duration, extra, ..
            } => n
                .delay_spikes
                .as_ref()
                .is_some_and(|d| within(*duration, d.max) && within(*extra, d.max_extra)),
            Fault::Drop {
                duration, kinds, ..
            } => n
                .drops
                .as_ref()
                .is_some_and(|d| within(*duration, d.max) && *kinds == d.kinds),
            Fault::Crash { .. } | Fault::Restart { .. } => n.crashes.is_some(),
            Fault::ThreadStall {
                duration, thread, ..
            } => n
                .thread_stalls
                .as_ref()
                .is_some_and(|t| within(*duration, t.max) && *thread == t.thread),
            Fault::DiskStall { duration, .. } => n
                .disk_stalls
                .as_ref()
                .is_some_and(|d| within(*duration, d.max)),
            _ => false,
        }
    }

    /// Each restart of the envelope's faults follows a crash of its node by at most `max_down`.
    fn downtimes_within(&self, own: &[Fault]) -> bool {
        let Some(c) = &self.nemesis.crashes else {
            return true;
        };
        let mut crashed: BTreeMap<&str, i64> = BTreeMap::new();
        for f in own {
            match f {
                Fault::Crash { node, at } => {
                    crashed.insert(node, at.ns());
                }
                Fault::Restart { node, at } => match crashed.remove(node.as_str()) {
                    Some(t) if at.ns() - t >= 1 && at.ns() - t <= c.max_down.ns() => {}
                    _ => return false,
                },
                _ => {}
            }
        }
        true
    }
}

/// A fault of `own` to mutate, uniform among all but restarts (a restart moves with its
/// crash); `None` when there is none.
fn pick(own: &[Fault], r: &mut Rng) -> Option<usize> {
    let movable: Vec<usize> = (0..own.len())
        .filter(|&i| !matches!(own[i], Fault::Restart { .. }))
        .collect();
    (!movable.is_empty()).then(|| movable[r.random_range(0..movable.len())])
}

/// Whether no two pauses of a node meet (closed intervals), nor two stalls of one of its
/// loops, as drawn schedules keep them.
pub(super) fn pauses_apart(faults: &[Fault]) -> bool {
    // By node and loop (`None`: the whole process), each window [at, at + duration].
    type Windows<'a> = BTreeMap<(&'a str, Option<Thread>), Vec<(i64, i64)>>;
    let mut by_node = Windows::new();
    // A pause placed at a moment has no time before the run meets it.
    for f in faults.iter().filter(|f| f.after().is_none()) {
        let (node, thread, at, duration) = match f {
            Fault::Pause {
                node, at, duration, ..
            } => (node, None, at, duration),
            Fault::ThreadStall {
                node,
                thread,
                at,
                duration,
            } => (node, Some(*thread), at, duration),
            _ => continue,
        };
        by_node
            .entry((node, thread))
            .or_default()
            .push((at.ns(), at.ns().saturating_add(duration.ns())));
    }
    by_node.into_values().all(|mut v| {
        v.sort_unstable();
        v.windows(2).all(|w| w[0].1 < w[1].0)
    })
}

/// Fault `f` at the largest size the envelope `n` gives its kind (a step keeps its sign, a
/// delay spike takes its longest window and its largest delay); `None` for a fault with no size
/// to grow (a crash, a drift change) or of a kind the envelope does not have. The shrink's
/// re-place pass grows a moved fault so ([`super::shrink::shrink_placing`]).
pub fn largest(n: &Nemesis, f: &Fault) -> Option<Fault> {
    let mut f = f.clone();
    match &mut f {
        Fault::Pause {
            duration,
            kind: PauseKind::VmFreeze,
            ..
        } => *duration = n.freezes.as_ref()?.max,
        Fault::Pause { duration, .. } => *duration = n.pauses.as_ref()?.max,
        Fault::ClockStep { by, .. } => {
            let max = n.steps.as_ref()?.max.ns();
            *by = LocalDur::from_ns(if by.ns() < 0 { -max } else { max });
        }
        Fault::Partition { duration, .. } => *duration = n.partitions.as_ref()?.max,
        Fault::OneWay { duration, .. } => *duration = n.one_way.as_ref()?.max,
        Fault::DelaySpike {
            duration, extra, ..
        } => {
            let d = n.delay_spikes.as_ref()?;
            (*duration, *extra) = (d.max, d.max_extra);
        }
        Fault::Drop { duration, .. } => *duration = n.drops.as_ref()?.max,
        Fault::ThreadStall { duration, .. } => *duration = n.thread_stalls.as_ref()?.max,
        Fault::DiskStall { duration, .. } => *duration = n.disk_stalls.as_ref()?.max,
        _ => return None,
    }
    Some(f)
}

/// The index of the restart that follows crash `i` (the next restart of its node), if `i` is a
/// crash and has one.
fn restart_of(own: &[Fault], i: usize) -> Option<usize> {
    let Fault::Crash { node, .. } = &own[i] else {
        return None;
    };
    (i + 1..own.len()).find(|&j| matches!(&own[j], Fault::Restart { node: n, .. } if n == node))
}

/// Moves `f` by `d_ns`, kept in [0, end_ns).
/// Moves fault `f` by `d_ns`, inside the run (its delay, for one placed at a moment: not past
/// the moment, or for an expiry not past a run's length before it).
fn shift(f: &mut Fault, d_ns: i64, end_ns: i64) {
    let lo = match f.after() {
        Some(a) if a.moment == Moment::Expiry => 1 - end_ns,
        _ => 0,
    };
    let at = f.at_mut();
    *at = Dur::from_ns(at.ns().saturating_add(d_ns).clamp(lo, end_ns - 1));
}

/// An ordered pair of distinct nodes of `n` (>= 2).
fn pair(r: &mut Rng, n: usize) -> (usize, usize) {
    let a = r.random_range(0..n);
    let b = r.random_range(0..n - 1);
    (a, if b >= a { b + 1 } else { b })
}

#[cfg(test)]
#[path = "guided_tests.rs"]
mod tests;
