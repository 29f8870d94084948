//! Drawing one exploration run: the scenario with seed + i and a fault schedule inside the
//! `nemesis` envelope, every random draw made explicit.
//!
//! Everything comes from the ChaCha streams of the run's seed ([`Component::Explore`]): the
//! swarm's choice from index 0, each kind's faults from its own stream per node (index
//! `(kind << 16) | node`, kind numbered from 1 in the envelope's field order), so that enabling
//! one kind, or changing its intensity, never moves another kind's draws. Start times form a
//! Poisson process over the run (as `random_faults` draw them); lengths are uniform in
//! [1 ns, cap] (a crash's downtime in [min(1 ms, cap), cap]), where the cap is the envelope's
//! `max` times the run's size factor.
//!
//! Drawn faults never make the schedule invalid or leave the envelope: a pause or freeze that
//! would overlap (or touch) another pause of its node, fixed or drawn, is left out (merged, the
//! two would be one longer pause than `max`); so is a crash while its node is down, or whose
//! downtime would meet one of the scenario's own. Drawing stops at the same hard stops as
//! `random_faults` ([`limits::RANDOM_FAULTS_HARD_STOP`], a partition counting once per node),
//! and at what a scenario may list: [`limits::MAX_FAULTS`] faults,
//! [`limits::MAX_CLOCK_STEPS`] clock steps (validation keeps the expected counts at half those).

use crate::engine::place_drifts;
use crate::rng::{self, Component, Rng};
use crate::scenario::nemesis::{
    Crashes, DelaySpikes, Drops, Nemesis, PerHour, PerHourRate, PerMinute, Steps, ThreadStalls,
    KINDS,
};
use crate::scenario::random_faults::poisson;
use crate::scenario::{limits, Fault, FreezeClock, PauseKind, Placement, Scenario, Thread};
use crate::time::{DriftRate, Dur, LocalDur, PPT_PER_PPM};
use rand::RngExt;
use std::collections::BTreeMap;

/// Run `run` of an exploration of `base`, drawn inside `nemesis`.
#[derive(Clone, Debug)]
pub struct Drawn {
    /// The run as a plain scenario: seed = base seed + run; the base's own faults, then those
    /// its `random_faults` draw, then the nemesis's, all explicit; every node's drift explicit;
    /// no `random_faults`, no `nemesis`. Running it is running the exploration's run `run`.
    pub scenario: Scenario,
    /// The fault kinds the run enabled (the swarm's subset), in the nemesis's field order, by
    /// field name: `pauses`, `freezes`, `steps`, `drift_ppm`, ...
    pub kinds: Vec<&'static str>,
}

/// How strongly a run injects one kind: its rate times `rate`, its sizes capped at its `max`
/// divided by `divisor` (so a quarter, a half or all of it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Intensity {
    pub rate: f64,
    pub divisor: i64,
}

impl Intensity {
    /// Full rate, full size: every kind without swarm.
    pub const FULL: Intensity = Intensity {
        rate: 1.0,
        divisor: 1,
    };

    /// The size cap for an envelope's `max` of `max_ns` (>= 1): at least 1 ns.
    fn cap(self, max_ns: i64) -> i64 {
        (max_ns / self.divisor).max(1)
    }
}

/// The stream index of the swarm's choice.
const SWARM: u64 = 0;
/// The kinds whose swarm coin and factors the first stream draws: those of the first envelope.
/// A kind added later draws its own from stream `k - 9` (`k` its [`KINDS`] index), so that the
/// choices of existing envelopes do not move.
const FIRST_KINDS: usize = 10;
/// The node number of a kind's stream drawn once for the whole cluster.
const CLUSTER: u64 = 0xffff;

/// The kinds run `run` of an exploration under `nemesis` enables, with their intensity, in
/// [`KINDS`] order (`None`: not enabled). Without `swarm`, every kind the envelope has, at
/// [`Intensity::FULL`]. With it, from the stream (seed + run, Explore, 0): for each of the
/// first ten kinds in order, present or not (so that adding a kind to the envelope does not
/// change what is chosen for the others), a fair coin, then a rate factor and a size factor
/// each uniform in {1/4, 1/2, 1}; the same for `thread_stalls` from stream 1; a kind is
/// enabled when present and its coin says so; if that enables none, one present kind chosen
/// uniformly (from stream 0 after its ten) is, with its drawn intensity.
pub fn choose(seed: u64, nemesis: &Nemesis, swarm: bool) -> [Option<Intensity>; KINDS.len()] {
    let present = nemesis.present();
    if !swarm {
        return present.map(|p| p.then_some(Intensity::FULL));
    }
    const FACTORS: [(f64, i64); 3] = [(0.25, 4), (0.5, 2), (1.0, 1)];
    let mut r = rng::stream(seed, Component::Explore, SWARM);
    let mut drawn = [Intensity::FULL; KINDS.len()];
    let mut chosen = [None; KINDS.len()];
    for k in 0..KINDS.len() {
        let mut later;
        let r = if k < FIRST_KINDS {
            &mut r
        } else {
            later = rng::stream(seed, Component::Explore, (k + 1 - FIRST_KINDS) as u64);
            &mut later
        };
        let on = r.random_bool(0.5);
        drawn[k] = Intensity {
            rate: FACTORS[r.random_range(0..3)].0,
            divisor: FACTORS[r.random_range(0..3)].1,
        };
        if on && present[k] {
            chosen[k] = Some(drawn[k]);
        }
    }
    let candidates: Vec<usize> = (0..KINDS.len()).filter(|&k| present[k]).collect();
    if chosen.iter().all(Option::is_none) && !candidates.is_empty() {
        let k = candidates[r.random_range(0..candidates.len())];
        chosen[k] = Some(drawn[k]);
    }
    chosen
}

/// Liveness: the envelope's faults (those after the first `fixed`) stop at `stop_ns`: a fault
/// that would start at or after it is left out, but not the restart of a crash kept (a crash
/// is never left without its restart).
pub fn stop_faults(s: &mut Scenario, fixed: usize, stop_ns: i64) {
    let own = s.faults.split_off(fixed);
    let crashed: Vec<(String, i64)> = own
        .iter()
        .filter_map(|f| match f {
            Fault::Crash { node, at } if at.ns() < stop_ns => Some((node.clone(), at.ns())),
            _ => None,
        })
        .collect();
    s.faults.extend(own.into_iter().filter(|f| match f {
        Fault::Restart { node, at } => {
            at.ns() < stop_ns || crashed.iter().any(|(n, c)| n == node && *c < at.ns())
        }
        _ => f.at().ns() < stop_ns,
    }));
}

/// Draws run `run` of an exploration of `base` (valid, with `nemesis` valid for it). With
/// `swarm`, the run enables a random subset of the envelope's kinds at random intensities
/// inside it; without, every kind at its full rate.
///
/// Drift: with `drift_ppm` (rho) enabled, every node's `drift_ppm` is drawn, whatever it was:
/// with probability 1/2 placed adversarially (+cap/2 or -cap/2 by role, as
/// `Placement::Adversarial` places them), else each uniform in [-cap/2, +cap/2], where cap is
/// rho times the size factor; values are whole ppt (10^-6 ppm), which the engine reads back
/// exactly. Without it every node keeps its own `drift_ppm` and those placed by `clocks` are
/// written out as the engine would place them. Either way `clocks.drift_spread_ppm` is then 0.
pub fn draw_run(base: &Scenario, nemesis: &Nemesis, run: u64, swarm: bool) -> Drawn {
    let mut scenario = base.clone();
    scenario.seed = base.seed.wrapping_add(run);
    scenario.faults = scenario.fault_schedule();
    scenario.random_faults.clear();
    scenario.nemesis = None;
    let seed = scenario.seed;
    let picks = choose(seed, nemesis, swarm);
    let kinds = (0..KINDS.len())
        .filter(|&k| picks[k].is_some())
        .map(|k| KINDS[k])
        .collect();

    let mut drawn = Vec::new();
    let mut d = Drawer::new(&scenario);
    d.faults(nemesis, &picks, &mut drawn);
    // Stable: faults at one instant stay in draw order.
    drawn.sort_by_key(Fault::at);
    set_drifts(&mut scenario, nemesis, picks[3]);
    scenario.faults.extend(drawn);
    Drawn { scenario, kinds }
}

/// The stream of kind `k` (0-based, [`KINDS`] order) at `node`.
fn stream(seed: u64, k: usize, node: u64) -> Rng {
    rng::stream(seed, Component::Explore, ((k as u64 + 1) << 16) | node)
}

/// Whole ppt as ppm: exactly what [`DriftRate::from_ppm`] reads back as `ppt`.
pub(super) fn ppm(ppt: i64) -> f64 {
    ppt as f64 / PPT_PER_PPM as f64
}

/// Half of the spread `rho` (ppm) in whole ppt, as the engine halves a spread, and never above
/// rho/2.
pub(super) fn half_ppt(rho: f64) -> i64 {
    let mut half = DriftRate::from_ppm(rho).map_or(0, |d| d.ppt / 2).max(0);
    while half > 0 && ppm(half) > rho / 2.0 {
        half -= 1;
    }
    half
}

/// Every node's drift made explicit: drawn within the envelope's rho when `pick` enables it,
/// else as the engine places them.
fn set_drifts(s: &mut Scenario, nemesis: &Nemesis, pick: Option<Intensity>) {
    match (pick, nemesis.drift_ppm) {
        (Some(pick), Some(rho)) => {
            let half = half_ppt(rho / pick.divisor as f64);
            let adversarial = stream(s.seed, 3, CLUSTER).random_bool(0.5);
            let drifts: Vec<i64> = (0..s.nodes.len())
                .map(|i| {
                    if adversarial {
                        if s.runs_fast_adversarially(i) {
                            half
                        } else {
                            -half
                        }
                    } else {
                        stream(s.seed, 3, i as u64).random_range(-half..=half)
                    }
                })
                .collect();
            for (n, ppt) in s.nodes.iter_mut().zip(drifts) {
                n.drift_ppm = Some(ppm(ppt));
            }
        }
        _ => {
            let placed = place_drifts(s);
            for (n, d) in s.nodes.iter_mut().zip(placed) {
                n.drift_ppm.get_or_insert(ppm(d.ppt));
            }
        }
    }
    s.clocks.drift_spread_ppm = 0.0;
    s.clocks.placement = Placement::Random;
}

/// Disjoint closed intervals of one node, by start.
#[derive(Default)]
struct Busy(BTreeMap<i64, i64>);

impl Busy {
    /// The union of `windows` (closed, possibly overlapping).
    fn of(mut windows: Vec<(i64, i64)>) -> Busy {
        windows.sort_unstable();
        let mut b = Busy::default();
        let mut cur: Option<(i64, i64)> = None;
        for (x, y) in windows {
            cur = match cur {
                Some((a, e)) if x <= e => Some((a, e.max(y))),
                Some((a, e)) => {
                    b.0.insert(a, e);
                    Some((x, y))
                }
                None => Some((x, y)),
            };
        }
        if let Some((a, e)) = cur {
            b.0.insert(a, e);
        }
        b
    }

    /// Whether [a, e] meets an interval.
    fn meets(&self, a: i64, e: i64) -> bool {
        self.0
            .range(..=e)
            .next_back()
            .is_some_and(|(_, &end)| end >= a)
    }

    /// Adds [a, e], which meets none.
    fn add(&mut self, a: i64, e: i64) {
        self.0.insert(a, e);
    }
}

/// The drawing of the nemesis's faults for one run, with what limits it.
struct Drawer<'a> {
    s: &'a Scenario,
    /// Budget units drawn (a partition counts once per node), against the hard stop.
    cost: usize,
    /// Faults still allowed in the list.
    listed_left: usize,
    /// Clock steps still allowed.
    steps_left: usize,
    /// Each node's pauses (fixed and drawn), [at, at + duration].
    paused: Vec<Busy>,
    /// Each node's downtimes (fixed and drawn), [crash, restart] (to `i64::MAX` without one).
    down: Vec<Busy>,
}

impl<'a> Drawer<'a> {
    /// For `s`, whose `faults` are the base's whole schedule.
    fn new(s: &'a Scenario) -> Drawer<'a> {
        let n = s.nodes.len();
        let mut pauses = vec![Vec::new(); n];
        let mut life: Vec<Vec<(i64, bool)>> = vec![Vec::new(); n];
        for f in &s.faults {
            match f {
                Fault::Pause {
                    node, at, duration, ..
                } => {
                    if let Some(i) = s.node_index(node) {
                        pauses[i].push((at.ns(), at.ns().saturating_add(duration.ns())));
                    }
                }
                Fault::Crash { node, at } | Fault::Restart { node, at } => {
                    if let Some(i) = s.node_index(node) {
                        life[i].push((at.ns(), matches!(f, Fault::Restart { .. })));
                    }
                }
                _ => {}
            }
        }
        let down = life
            .into_iter()
            .map(|mut events| {
                // As validation orders them: by time, ties in list order.
                events.sort_by_key(|e| e.0);
                let mut windows = Vec::new();
                let mut since = None;
                for (t, restart) in events {
                    match (restart, since) {
                        (false, None) => since = Some(t),
                        (true, Some(c)) => {
                            windows.push((c, t));
                            since = None;
                        }
                        _ => {}
                    }
                }
                if let Some(c) = since {
                    windows.push((c, i64::MAX));
                }
                Busy::of(windows)
            })
            .collect();
        let steps = s
            .faults
            .iter()
            .filter(|f| matches!(f, Fault::ClockStep { .. }))
            .count();
        Drawer {
            s,
            cost: 0,
            listed_left: limits::MAX_FAULTS.saturating_sub(s.faults.len()),
            steps_left: (limits::MAX_CLOCK_STEPS as usize).saturating_sub(steps),
            paused: pauses.into_iter().map(Busy::of).collect(),
            down,
        }
    }

    /// How many more faults costing `each` budget units may be drawn.
    fn left(&self, each: usize) -> usize {
        (limits::RANDOM_FAULTS_HARD_STOP.saturating_sub(self.cost) / each.max(1))
            .min(self.listed_left)
    }

    /// Counts one fault of `each` units.
    fn take(&mut self, each: usize) {
        self.cost += each;
        self.listed_left -= 1;
    }

    /// Poisson start times over the run at `per_second` x the pick's rate factor, from `r`, at
    /// most `most`.
    fn times(&self, r: &mut Rng, per_second: f64, pick: Intensity, most: usize) -> Vec<Dur> {
        poisson(r, per_second * pick.rate, self.s.duration, most)
    }

    /// Every enabled kind's faults, in kind order, node order, then time.
    fn faults(
        &mut self,
        nem: &Nemesis,
        picks: &[Option<Intensity>; KINDS.len()],
        out: &mut Vec<Fault>,
    ) {
        let n = self.s.nodes.len();
        if let (Some(pick), Some(p)) = (picks[0], &nem.pauses) {
            let how = (PauseKind::Gc, None);
            self.pauses(0, pick, p.max, p.per_minute, how, out);
        }
        if let (Some(pick), Some(f)) = (picks[1], &nem.freezes) {
            let how = (PauseKind::VmFreeze, Some(f.clock));
            self.pauses(1, pick, f.max, f.per_minute, how, out);
        }
        if let (Some(pick), Some(st)) = (picks[2], &nem.steps) {
            self.clock_steps(pick, st, out);
        }
        // drift_ppm (3) is no fault: see `set_drifts`.
        if let (Some(pick), Some(dc), Some(rho)) = (picks[4], &nem.drift_changes, nem.drift_ppm) {
            self.drift_changes(pick, dc, rho, out);
        }
        if let (Some(pick), Some(p), true) = (picks[5], &nem.partitions, n >= 2) {
            self.partitions(pick, p, out);
        }
        if let (Some(pick), Some(o), true) = (picks[6], &nem.one_way, n >= 2) {
            self.one_way(pick, o, out);
        }
        if let (Some(pick), Some(ds)) = (picks[7], &nem.delay_spikes) {
            self.delay_spikes(pick, ds, out);
        }
        if let (Some(pick), Some(dr)) = (picks[8], &nem.drops) {
            self.drops(pick, dr, out);
        }
        if let (Some(pick), Some(c)) = (picks[9], &nem.crashes) {
            self.crashes(pick, c, out);
        }
        if let (Some(pick), Some(t)) = (picks[10], &nem.thread_stalls) {
            self.thread_stalls(pick, t, out);
        }
        if let (Some(pick), Some(d)) = (picks[11], &nem.disk_stalls) {
            self.disk_stalls(pick, d, out);
        }
    }

    /// The name of node `i`.
    fn name(&self, i: usize) -> String {
        self.s.nodes[i].name.clone()
    }

    /// Pauses (kind 0) or freezes (kind 1) of every node, `how` long (their kind and clock),
    /// at `per_minute`, each at most `max` cut by the pick; one that would meet another of its
    /// node's pauses is left out.
    fn pauses(
        &mut self,
        k: usize,
        pick: Intensity,
        max: Dur,
        per_minute: f64,
        how: (PauseKind, Option<FreezeClock>),
        out: &mut Vec<Fault>,
    ) {
        let (kind, clock) = how;
        let cap = pick.cap(max.ns());
        for i in 0..self.s.nodes.len() {
            let mut r = stream(self.s.seed, k, i as u64);
            for at in self.times(&mut r, per_minute / 60.0, pick, self.left(1)) {
                let d = uniform(&mut r, 1, cap);
                let end = at.ns().saturating_add(d);
                if self.left(1) == 0 || self.paused[i].meets(at.ns(), end) {
                    continue;
                }
                self.paused[i].add(at.ns(), end);
                self.take(1);
                out.push(Fault::Pause {
                    node: self.name(i),
                    at: at.into(),
                    duration: Dur::from_ns(d),
                    kind,
                    clock,
                });
            }
        }
    }

    /// Wall-clock steps (kind 2) of every node, either way.
    fn clock_steps(&mut self, pick: Intensity, st: &Steps, out: &mut Vec<Fault>) {
        let cap = pick.cap(st.max.ns());
        for i in 0..self.s.nodes.len() {
            let mut r = stream(self.s.seed, 2, i as u64);
            let most = self.left(1).min(self.steps_left);
            for at in self.times(&mut r, st.per_hour / 3600.0, pick, most) {
                let by = uniform(&mut r, 1, cap);
                let by = if r.random_bool(0.5) { by } else { -by };
                self.take(1);
                self.steps_left -= 1;
                out.push(Fault::ClockStep {
                    node: self.name(i),
                    at: at.into(),
                    by: LocalDur::from_ns(by),
                });
            }
        }
    }

    /// Drift changes (kind 4) of every node, to a drift within +-rho/2 cut by the pick.
    fn drift_changes(&mut self, pick: Intensity, dc: &PerHourRate, rho: f64, out: &mut Vec<Fault>) {
        let half = half_ppt(rho / pick.divisor as f64);
        for i in 0..self.s.nodes.len() {
            let mut r = stream(self.s.seed, 4, i as u64);
            for at in self.times(&mut r, dc.per_hour / 3600.0, pick, self.left(1)) {
                let ppt = uniform(&mut r, -half, half);
                self.take(1);
                out.push(Fault::DriftChange {
                    node: self.name(i),
                    at: at.into(),
                    drift_ppm: ppm(ppt),
                });
            }
        }
    }

    /// Partitions (kind 5): one node cut off from the rest.
    fn partitions(&mut self, pick: Intensity, p: &PerHour, out: &mut Vec<Fault>) {
        let n = self.s.nodes.len();
        let cap = pick.cap(p.max.ns());
        let mut r = stream(self.s.seed, 5, CLUSTER);
        for at in self.times(&mut r, p.per_hour / 3600.0, pick, self.left(n)) {
            let cut = r.random_range(0..n);
            let d = uniform(&mut r, 1, cap);
            self.take(n);
            let rest = (0..n).filter(|&j| j != cut).map(|j| self.name(j)).collect();
            out.push(Fault::Partition {
                at: at.into(),
                duration: Dur::from_ns(d),
                groups: vec![vec![self.name(cut)], rest],
            });
        }
    }

    /// One-way cuts (kind 6): an ordered pair of distinct nodes.
    fn one_way(&mut self, pick: Intensity, o: &PerHour, out: &mut Vec<Fault>) {
        let n = self.s.nodes.len();
        let cap = pick.cap(o.max.ns());
        let mut r = stream(self.s.seed, 6, CLUSTER);
        for at in self.times(&mut r, o.per_hour / 3600.0, pick, self.left(1)) {
            let from = r.random_range(0..n);
            let to = r.random_range(0..n - 1);
            let to = if to >= from { to + 1 } else { to };
            let d = uniform(&mut r, 1, cap);
            self.take(1);
            out.push(Fault::OneWay {
                from: self.name(from),
                to: self.name(to),
                at: at.into(),
                duration: Dur::from_ns(d),
            });
        }
    }

    /// Delay spikes (kind 7) on every message.
    fn delay_spikes(&mut self, pick: Intensity, ds: &DelaySpikes, out: &mut Vec<Fault>) {
        let (cap, extra_cap) = (pick.cap(ds.max.ns()), pick.cap(ds.max_extra.ns()));
        let mut r = stream(self.s.seed, 7, CLUSTER);
        for at in self.times(&mut r, ds.per_hour / 3600.0, pick, self.left(1)) {
            let d = uniform(&mut r, 1, cap);
            let extra = uniform(&mut r, 1, extra_cap);
            self.take(1);
            out.push(Fault::DelaySpike {
                at: at.into(),
                duration: Dur::from_ns(d),
                extra: Dur::from_ns(extra),
                from: None,
                to: None,
                kinds: None,
            });
        }
    }

    /// Drops (kind 8) of the envelope's kinds.
    fn drops(&mut self, pick: Intensity, dr: &Drops, out: &mut Vec<Fault>) {
        let cap = pick.cap(dr.max.ns());
        let mut r = stream(self.s.seed, 8, CLUSTER);
        for at in self.times(&mut r, dr.per_hour / 3600.0, pick, self.left(1)) {
            let d = uniform(&mut r, 1, cap);
            self.take(1);
            out.push(Fault::Drop {
                at: at.into(),
                duration: Dur::from_ns(d),
                from: None,
                to: None,
                kinds: dr.kinds.clone(),
            });
        }
    }

    /// Crashes (kind 9) of every node after its start, each restarted after its downtime if
    /// that is within the run; one while its node is down, or whose downtime would meet
    /// another, is left out.
    fn crashes(&mut self, pick: Intensity, c: &Crashes, out: &mut Vec<Fault>) {
        let cap = pick.cap(c.max_down.ns());
        let lo = cap.min(crate::time::NS_PER_MS);
        let end = self.s.duration.ns();
        for i in 0..self.s.nodes.len() {
            let mut r = stream(self.s.seed, 9, i as u64);
            let start = self.s.nodes[i].start.ns();
            for at in self.times(&mut r, c.per_hour / 3600.0, pick, self.left(2)) {
                let down = uniform(&mut r, lo, cap);
                let back = at.ns().saturating_add(down);
                let until = if back < end { back } else { i64::MAX };
                if at.ns() < start || self.left(2) == 0 || self.down[i].meets(at.ns(), until) {
                    continue;
                }
                self.down[i].add(at.ns(), until);
                self.take(1);
                out.push(Fault::Crash {
                    node: self.name(i),
                    at: at.into(),
                });
                if back < end {
                    self.take(1);
                    out.push(Fault::Restart {
                        node: self.name(i),
                        at: Dur::from_ns(back).into(),
                    });
                }
            }
        }
    }

    /// Stalls (kind 10) of one loop of every node that has it, at `per_minute`, each at most
    /// `max` cut by the pick; one that would meet another stall of that loop of its node is
    /// left out (merged, the two would be one longer stall than `max`).
    fn thread_stalls(&mut self, pick: Intensity, t: &ThreadStalls, out: &mut Vec<Fault>) {
        let cap = pick.cap(t.max.ns());
        let has_loop = loop_nodes(self.s, t.thread);
        for i in (0..self.s.nodes.len()).filter(|&i| has_loop[i]) {
            let mut stalled = Busy::of(stalls_of(self.s, i, t.thread));
            let mut r = stream(self.s.seed, 10, i as u64);
            for at in self.times(&mut r, t.per_minute / 60.0, pick, self.left(1)) {
                let d = uniform(&mut r, 1, cap);
                let end = at.ns().saturating_add(d);
                if self.left(1) == 0 || stalled.meets(at.ns(), end) {
                    continue;
                }
                stalled.add(at.ns(), end);
                self.take(1);
                out.push(Fault::ThreadStall {
                    node: self.name(i),
                    thread: t.thread,
                    at: at.into(),
                    duration: Dur::from_ns(d),
                });
            }
        }
    }
}

impl Drawer<'_> {
    /// Stalls (kind 11) of the disk of every node that has one, at `per_minute`, each at most
    /// `max` cut by the pick; one that would meet another stall of its node's disk is left out.
    fn disk_stalls(&mut self, pick: Intensity, d: &PerMinute, out: &mut Vec<Fault>) {
        let cap = pick.cap(d.max.ns());
        for i in (0..self.s.nodes.len()).filter(|&i| self.s.nodes[i].disk.is_some()) {
            let mut stalled = Busy::of(disk_stalls_of(self.s, i));
            let mut r = stream(self.s.seed, 11, i as u64);
            for at in self.times(&mut r, d.per_minute / 60.0, pick, self.left(1)) {
                let len = uniform(&mut r, 1, cap);
                let end = at.ns().saturating_add(len);
                if self.left(1) == 0 || stalled.meets(at.ns(), end) {
                    continue;
                }
                stalled.add(at.ns(), end);
                self.take(1);
                out.push(Fault::DiskStall {
                    node: self.name(i),
                    at: at.into(),
                    duration: Dur::from_ns(len),
                });
            }
        }
    }
}

/// The stalls of node `i`'s disk that `s` lists at a time, [at, at + duration].
fn disk_stalls_of(s: &Scenario, i: usize) -> Vec<(i64, i64)> {
    let name = &s.nodes[i].name;
    s.faults
        .iter()
        .filter(|f| f.after().is_none())
        .filter_map(|f| match f {
            Fault::DiskStall { node, at, duration } if node == name => {
                Some((at.ns(), at.ns().saturating_add(duration.ns())))
            }
            _ => None,
        })
        .collect()
}

/// Which nodes of `s` have loop `thread` apart from the other under its protocol: every node
/// has a worker; a renewal loop only the roles the protocol gives one.
pub(super) fn loop_nodes(s: &Scenario, thread: Thread) -> Vec<bool> {
    let protocol = crate::strategy::from_spec(&s.strategy).ok();
    s.nodes
        .iter()
        .map(|n| match thread {
            Thread::Worker => true,
            Thread::Renewal => protocol
                .as_ref()
                .is_some_and(|p| p.renewal_loop(n.role).is_some()),
        })
        .collect()
}

/// The stalls of loop `thread` of node `i` that `s` lists at a time, [at, at + duration].
fn stalls_of(s: &Scenario, i: usize, thread: Thread) -> Vec<(i64, i64)> {
    let name = &s.nodes[i].name;
    s.faults
        .iter()
        .filter(|f| f.after().is_none())
        .filter_map(|f| match f {
            Fault::ThreadStall {
                node,
                thread: th,
                at,
                duration,
            } if node == name && *th == thread => {
                Some((at.ns(), at.ns().saturating_add(duration.ns())))
            }
            _ => None,
        })
        .collect()
}

/// A length in ns drawn uniformly from `lo` to `hi`, both included.
fn uniform(r: &mut Rng, lo: i64, hi: i64) -> i64 {
    r.random_range(lo..=hi)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::nemesis::{self, profile, PROFILES};
    use crate::scenario::validate::validate;
    use proptest::prelude::*;

    /// `lock`, `a`, `b` (b from 1 s), T = 10 s, a run of `duration`, with `extra` fields.
    fn base(duration: &str, extra: &str) -> Scenario {
        let text = format!(
            r#"Scenario(
                seed: 7,
                duration: "{duration}",
                lease: (duration: "10s"),
                strategy: TwoSided(holder_margin: "100ms"),
                nodes: [
                    (name: "lock", role: Grantor),
                    (name: "a", role: Contender),
                    (name: "b", role: Contender, start: "1s"),
                ],
                workload: (reads_per_second: 5.0, writes_per_second: 1.0),
                {extra}
            )"#
        );
        Scenario::from_ron(&text).unwrap_or_else(|e| panic!("{e}"))
    }

    fn envelope(text: &str) -> Nemesis {
        crate::scenario::ron_options().from_str(text).unwrap()
    }

    /// The nemesis's part of a drawn schedule.
    fn drawn_part<'a>(d: &'a Drawn, base: &Scenario, run: u64) -> &'a [Fault] {
        let mut b = base.clone();
        b.seed = base.seed.wrapping_add(run);
        let n = b.fault_schedule().len();
        assert_eq!(d.scenario.faults[..n], b.fault_schedule()[..]);
        &d.scenario.faults[n..]
    }

    fn summary(s: &Scenario) -> crate::outcome::Summary {
        crate::run("t", s).unwrap_or_else(|e| panic!("{e}")).summary
    }

    #[test]
    fn deterministic_per_run() {
        let s = base("1h", "");
        let n = profile("all", &s).unwrap();
        let a = draw_run(&s, &n, 3, true);
        let b = draw_run(&s, &n, 3, true);
        assert_eq!(a.scenario.to_ron(), b.scenario.to_ron());
        assert_eq!(a.kinds, b.kinds);
        let c = draw_run(&s, &n, 4, true);
        assert_eq!((a.scenario.seed, c.scenario.seed), (10, 11));
        assert_ne!(a.scenario.faults, c.scenario.faults);
        // The seed wraps.
        assert_eq!(draw_run(&s, &n, u64::MAX, false).scenario.seed, 6);
    }

    #[test]
    fn without_swarm_every_kind_is_enabled() {
        let s = base("1h", "");
        let d = draw_run(&s, &profile("all", &s).unwrap(), 0, false);
        // `all` is every kind but thread stalls (not every protocol has a renewal loop).
        assert_eq!(d.kinds, nemesis::KINDS[..10].to_vec());
        let d = draw_run(&s, &profile("threads", &s).unwrap(), 0, false);
        assert_eq!(d.kinds, ["thread_stalls"]);
        let d = draw_run(&s, &profile("network", &s).unwrap(), 0, false);
        assert_eq!(d.kinds, ["partitions", "one_way", "delay_spikes", "drops"]);
        assert!(draw_run(&s, &Nemesis::default(), 0, false).kinds.is_empty());
        assert!(draw_run(&s, &Nemesis::default(), 0, true).kinds.is_empty());
    }

    #[test]
    fn swarm_enables_a_nonempty_subset_each_kind_sometimes() {
        let s = base("1h", "");
        let mut n = profile("all", &s).unwrap();
        n.thread_stalls = profile("threads", &s).unwrap().thread_stalls;
        // The swarm's choice asks only what the envelope has, not whether a node has a disk.
        n.disk_stalls = envelope(r#"(disk_stalls: (max: "1s", per_minute: 1.0))"#).disk_stalls;
        let mut on = [0; KINDS.len()];
        for run in 0..64 {
            let d = draw_run(&s, &n, run, true);
            assert!(!d.kinds.is_empty());
            for (k, name) in nemesis::KINDS.iter().enumerate() {
                on[k] += d.kinds.contains(name) as usize;
            }
        }
        // Each kind on in about half of 64 runs: never 0 nor 64.
        assert!(on.iter().all(|&c| c > 0 && c < 64), "{on:?}");
        // One kind only: the swarm always enables it.
        let one = envelope(r#"(crashes: (per_hour: 2.0, max_down: "20s"))"#);
        for run in 0..16 {
            assert_eq!(draw_run(&s, &one, run, true).kinds, ["crashes"]);
        }
    }

    #[test]
    fn an_empty_envelope_draws_the_base_schedule() {
        for extra in [
            "",
            r#"faults: [Pause(node: "a", at: "10s", duration: "12s")],
               random_faults: [
                   Pauses(per_minute: 2.0, duration: Exponential(mean: "1s")),
                   Crashes(per_hour: 10.0, restart_after: Fixed("5s")),
               ],"#,
        ] {
            let s = base("1h", extra);
            for run in [0, 5] {
                let d = draw_run(&s, &Nemesis::default(), run, true);
                let mut b = s.clone();
                b.seed += run;
                assert_eq!(d.scenario.faults, b.fault_schedule());
                assert!(d.scenario.random_faults.is_empty() && d.scenario.nemesis.is_none());
            }
        }
    }

    #[test]
    fn explicit_drifts_run_as_the_engine_places_them() {
        // Every bundled scenario that places drifts or draws random faults, and one of each
        // placement with a Raft group: the drawn run with an empty envelope is the base run.
        let mut cases: Vec<Scenario> = crate::scenario::library::names()
            .into_iter()
            .map(|n| crate::scenario::library::text(n).unwrap())
            .filter(|t| t.contains("drift_spread_ppm") || t.contains("random_faults"))
            .map(|t| Scenario::from_ron(t).unwrap())
            .collect();
        assert!(cases.len() >= 5);
        for placement in ["Random", "Adversarial"] {
            cases.push(base(
                "2min",
                &format!(
                    r#"clocks: (drift_spread_ppm: 123456.789, placement: {placement}),
                       random_faults: [Partitions(per_hour: 60.0, duration: Fixed("15s"))],"#
                ),
            ));
        }
        for s in cases {
            for run in [0, 1] {
                let d = draw_run(&s, &Nemesis::default(), run, false);
                assert!(d.scenario.nodes.iter().all(|n| n.drift_ppm.is_some()));
                assert_eq!(d.scenario.clocks.drift_spread_ppm, 0.0);
                let mut b = s.clone();
                b.seed = s.seed.wrapping_add(run);
                assert_eq!(summary(&d.scenario), summary(&b), "{}", s.description);
            }
        }
    }

    #[test]
    fn enabling_a_kind_moves_no_other_kind() {
        let s = base("1h", "");
        let pauses = r#"pauses: (max: "20s", per_minute: 1.0)"#;
        let steps = r#"steps: (max: "5s", per_hour: 30.0)"#;
        let only = draw_run(&s, &envelope(&format!("({pauses})")), 2, false);
        let more = draw_run(
            &s,
            &envelope(&format!(
                r#"({pauses}, {steps}, partitions: (max: "20s", per_hour: 30.0),
                    crashes: (per_hour: 30.0, max_down: "20s"), drift_ppm: 100.0)"#
            )),
            2,
            false,
        );
        let of = |d: &Drawn, pause: bool| -> Vec<Fault> {
            d.scenario
                .faults
                .iter()
                .filter(|f| matches!(f, Fault::Pause { .. }) == pause)
                .cloned()
                .collect()
        };
        assert!(!of(&only, true).is_empty());
        assert_eq!(of(&only, true), of(&more, true));
        assert!(of(&more, false).len() > 10);
        // And the steps are those of steps alone.
        let steps_only = draw_run(&s, &envelope(&format!("({steps})")), 2, false);
        let step = |d: &Drawn| -> Vec<Fault> {
            d.scenario
                .faults
                .iter()
                .filter(|f| matches!(f, Fault::ClockStep { .. }))
                .cloned()
                .collect()
        };
        assert_eq!(step(&steps_only), step(&more));
    }

    #[test]
    fn drawn_runs_validate_and_run() {
        let s = base(
            "10min",
            r#"random_faults: [Crashes(per_hour: 20.0, restart_after: Fixed("5s"))],"#,
        );
        for name in PROFILES {
            let n = profile(name, &s).unwrap();
            for run in 0..4 {
                let d = draw_run(&s, &n, run, run % 2 == 0);
                assert_eq!(validate(&d.scenario), Vec::<String>::new(), "{name} {run}");
                // Written out and read back, it is the same run.
                let again = Scenario::from_ron(&d.scenario.to_ron()).unwrap();
                assert_eq!(summary(&again), summary(&d.scenario), "{name} {run}");
            }
        }
    }

    #[test]
    fn crashes_never_meet_a_downtime() {
        // Crashes at 600/h per node for 10 min (about 100 per node), down up to 20 s, beside
        // the base's own: the drawn run's crashes and restarts alternate per node (validation
        // says so), none falls in a base downtime nor before its node starts.
        let s = base(
            "10min",
            r#"faults: [Crash(node: "a", at: "30s"), Restart(node: "a", at: "90s"),
                        Crash(node: "b", at: "500s")],"#,
        );
        let n = envelope(r#"(crashes: (per_hour: 600.0, max_down: "20s"))"#);
        for run in 0..8 {
            let d = draw_run(&s, &n, run, false);
            assert_eq!(validate(&d.scenario), Vec::<String>::new());
            let part = drawn_part(&d, &s, run);
            assert!(part.len() > 10);
            for f in part {
                if let Fault::Crash { node, at } = f {
                    let at = &at.offset();
                    let s = Dur::from_secs;
                    assert!(!(node == "a" && (s(30)..=s(90)).contains(at)), "{at}");
                    assert!(!(node == "b" && *at >= s(500)));
                    assert!(!(node == "b" && *at < s(1)), "before b starts");
                }
            }
        }
    }

    fn arb_envelope() -> impl Strategy<Value = (Nemesis, u64, bool)> {
        let max = 1i64..30_000_000_000; // up to 30 s
        let rate = 0.0f64..120.0; // per hour (per minute for pauses: / 4)
        (
            (
                prop::option::of((max.clone(), rate.clone())),
                prop::option::of((max.clone(), rate.clone(), any::<bool>())),
                prop::option::of((max.clone(), rate.clone())),
                prop::option::of((0.0f64..2000.0, prop::option::of(rate.clone()))),
                prop::option::of((max.clone(), rate.clone())),
            ),
            (
                prop::option::of((max.clone(), rate.clone())),
                prop::option::of((max.clone(), max.clone(), rate.clone())),
                prop::option::of((max.clone(), rate.clone(), any::<bool>())),
                prop::option::of((max.clone(), rate.clone())),
                prop::option::of((max, rate, any::<bool>())),
            ),
            any::<u64>(),
            any::<bool>(),
        )
            .prop_map(|((p, f, st, dr, pa), (ow, ds, drops, c, ts), run, swarm)| {
                let dur = Dur::from_ns;
                let n = Nemesis {
                    pauses: p.map(|(m, r)| nemesis::PerMinute {
                        max: dur(m),
                        per_minute: r / 4.0,
                    }),
                    freezes: f.map(|(m, r, stall)| nemesis::Freezes {
                        max: dur(m),
                        per_minute: r / 4.0,
                        clock: if stall {
                            crate::scenario::FreezeClock::Stall
                        } else {
                            crate::scenario::FreezeClock::CatchUp
                        },
                    }),
                    steps: st.map(|(m, r)| nemesis::Steps {
                        max: LocalDur::from_ns(m),
                        per_hour: r,
                    }),
                    drift_ppm: dr.map(|d| d.0),
                    drift_changes: dr
                        .and_then(|d| d.1)
                        .map(|r| nemesis::PerHourRate { per_hour: r }),
                    partitions: pa.map(|(m, r)| nemesis::PerHour {
                        max: dur(m),
                        per_hour: r,
                    }),
                    one_way: ow.map(|(m, r)| nemesis::PerHour {
                        max: dur(m),
                        per_hour: r,
                    }),
                    delay_spikes: ds.map(|(m, e, r)| nemesis::DelaySpikes {
                        max: dur(m),
                        max_extra: dur(e),
                        per_hour: r,
                    }),
                    drops: drops.map(|(m, r, some)| nemesis::Drops {
                        max: dur(m),
                        per_hour: r,
                        kinds: some.then(|| vec![crate::scenario::KindName("Renew".into())]),
                    }),
                    crashes: c.map(|(m, r)| nemesis::Crashes {
                        per_hour: r,
                        max_down: dur(m),
                    }),
                    thread_stalls: ts.map(|(m, r, worker)| nemesis::ThreadStalls {
                        max: dur(m),
                        per_minute: r / 4.0,
                        thread: if worker {
                            Thread::Worker
                        } else {
                            Thread::Renewal
                        },
                    }),
                    // The world's nodes have no disk (`disk_stalls_draw_on_the_nodes_with_a_disk`).
                    disk_stalls: None,
                };
                (n, run, swarm)
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn every_drawn_fault_lies_inside_the_envelope((n, run, swarm) in arb_envelope()) {
            let mut s = base("30min", r#"clocks: (drift_spread_ppm: 50.0),"#);
            s.nemesis = Some(n.clone());
            prop_assert_eq!(validate(&s), Vec::<String>::new());
            let d = draw_run(&s, &n, run, swarm);
            prop_assert_eq!(validate(&d.scenario), Vec::<String>::new());
            let end = s.duration.ns();
            let within = |ns: i64, max: Dur| ns >= 1 && ns <= max.ns();
            // What the engine reads is what is written: whole ppt, back to the same ppm.
            let exact = |x: f64| DriftRate::from_ppm(x).map(|d| ppm(d.ppt)) == Some(x);
            let mut last_at = Dur::ZERO;
            let mut crashed: BTreeMap<String, Dur> = BTreeMap::new();
            for f in drawn_part(&d, &s, run) {
                prop_assert!(f.at().ns() >= 0 && f.at().ns() < end, "{f:?}");
                prop_assert!(f.at() >= last_at, "sorted");
                last_at = f.at();
                match f {
                    Fault::Pause { duration, kind: PauseKind::Gc, clock, .. } => {
                        prop_assert!(within(duration.ns(), n.pauses.as_ref().unwrap().max));
                        prop_assert_eq!(*clock, None);
                    }
                    Fault::Pause { duration, clock, .. } => {
                        let fr = n.freezes.as_ref().unwrap();
                        prop_assert!(within(duration.ns(), fr.max));
                        prop_assert_eq!(*clock, Some(fr.clock));
                    }
                    Fault::ClockStep { by, .. } => {
                        let max = n.steps.as_ref().unwrap().max.ns();
                        prop_assert!(by.ns() != 0 && by.ns().abs() <= max, "{by}");
                    }
                    Fault::DriftChange { drift_ppm, .. } => {
                        prop_assert!(drift_ppm.abs() <= n.drift_ppm.unwrap() / 2.0);
                        prop_assert!(exact(*drift_ppm));
                    }
                    Fault::Partition { duration, groups, .. } => {
                        prop_assert!(within(duration.ns(), n.partitions.as_ref().unwrap().max));
                        prop_assert_eq!(groups[0].len(), 1);
                        prop_assert_eq!(groups[1].len(), 2);
                    }
                    Fault::OneWay { from, to, duration, .. } => {
                        prop_assert!(within(duration.ns(), n.one_way.as_ref().unwrap().max));
                        prop_assert_ne!(from, to);
                    }
                    Fault::DelaySpike { duration, extra, from, to, kinds, .. } => {
                        let ds = n.delay_spikes.as_ref().unwrap();
                        prop_assert!(within(duration.ns(), ds.max) && within(extra.ns(), ds.max_extra));
                        prop_assert!(from.is_none() && to.is_none() && kinds.is_none());
                    }
                    Fault::Drop { duration, kinds, .. } => {
                        let dr = n.drops.as_ref().unwrap();
                        prop_assert!(within(duration.ns(), dr.max));
                        prop_assert_eq!(kinds, &dr.kinds);
                    }
                    Fault::Crash { node, at } => {
                        crashed.insert(node.clone(), at.offset());
                    }
                    Fault::Restart { node, at } => {
                        let c = crashed.remove(node).expect("a crash first");
                        prop_assert!(within((at.offset() - c).ns(), n.crashes.as_ref().unwrap().max_down));
                    }
                    Fault::ThreadStall { node, thread, duration, .. } => {
                        let ts = n.thread_stalls.as_ref().unwrap();
                        prop_assert!(within(duration.ns(), ts.max));
                        prop_assert_eq!(*thread, ts.thread);
                        prop_assert!(*thread == Thread::Worker || node != "lock");
                    }
                    other => prop_assert!(false, "not a nemesis fault: {other:?}"),
                }
            }
            if d.kinds.contains(&"drift_ppm") {
                let rho = n.drift_ppm.unwrap();
                for node in &d.scenario.nodes {
                    let x = node.drift_ppm.unwrap();
                    prop_assert!(x.abs() <= rho / 2.0, "{x} {rho}");
                    prop_assert!(exact(x));
                }
            }
            // Kinds enabled are kinds present, in order.
            let present = n.present();
            let idx: Vec<usize> = d.kinds.iter().map(|k| nemesis::KINDS.iter().position(|x| x == k).unwrap()).collect();
            prop_assert!(idx.windows(2).all(|w| w[0] < w[1]));
            prop_assert!(idx.iter().all(|&k| present[k]));
            if !swarm {
                prop_assert_eq!(idx.len(), present.iter().filter(|&&p| p).count());
            }
        }
    }

    /// A pick at full rate with sizes cut to a quarter.
    const QUARTER: Intensity = Intensity {
        rate: 1.0,
        divisor: 4,
    };

    /// Kind `k` of `nem` alone at `pick` over `s`, as `draw_run` draws it (before sorting).
    fn draw_kind(s: &Scenario, nem: &Nemesis, k: usize, pick: Intensity) -> Vec<Fault> {
        let mut picks = [None; KINDS.len()];
        picks[k] = Some(pick);
        let mut out = Vec::new();
        Drawer::new(s).faults(nem, &picks, &mut out);
        out
    }

    /// 180 expected (Poisson, sd 13.4): within 60 of it, about 4.5 sd.
    fn assert_about_180(n: usize, what: &str) {
        assert!((120..=240).contains(&n), "{what}: {n} drawn, 180 expected");
    }

    /// Sizes drawn uniformly with magnitudes in [lo, cap]: all inside, and the largest above
    /// cap/2 (all of 100+ uniform draws in the lower half: probability below 2^-100); if
    /// `signed`, both signs drawn, else all positive.
    fn assert_spread(xs: &[i64], lo: i64, cap: i64, signed: bool) {
        assert!(xs.len() >= 100, "{}", xs.len());
        let out = xs.iter().find(|x| !(lo..=cap).contains(&x.abs()));
        assert!(out.is_none(), "{out:?} not in [{lo}, {cap}]");
        let top = xs.iter().map(|x| x.abs()).max().unwrap();
        assert!(top > cap / 2, "largest {top}, cap {cap}");
        let (neg, pos) = (xs.iter().any(|&x| x < 0), xs.iter().any(|&x| x > 0));
        assert_eq!((neg, pos), (signed, true), "signs");
    }

    /// `Intensity::cap`: the max cut by the divisor, at least 1 ns: 100 / 4 = 25,
    /// 100 / 1 = 100, 7 / 2 = 3 (rounded down), 3 / 4 rounds to 0 and so is 1.
    #[test]
    fn cap_is_the_max_over_the_divisor_at_least_1ns() {
        let by = |divisor| Intensity { rate: 1.0, divisor };
        assert_eq!(by(4).cap(100), 25);
        assert_eq!(by(1).cap(100), 100);
        assert_eq!(by(2).cap(7), 3);
        assert_eq!(by(4).cap(3), 1);
    }

    /// Every kind's stream at each node (and the cluster's) is its own and none is the
    /// swarm's: the first draws of kinds 0..10 at nodes 0, 1, 2 and CLUSTER and of the swarm
    /// stream are pairwise distinct. And the index is as the module says: kind 2 (steps,
    /// numbered 3) at node 1 is (3 << 16) | 1 = 196_608 + 1 = 196_609.
    #[test]
    fn streams_are_distinct_per_kind_node_and_from_the_swarm() {
        let seed = 7;
        let first = |mut r: rng::Rng| r.random::<u64>();
        let mut firsts = vec![first(rng::stream(seed, Component::Explore, SWARM))];
        for k in 0..KINDS.len() {
            for node in [0, 1, 2, CLUSTER] {
                firsts.push(first(stream(seed, k, node)));
            }
        }
        let n = firsts.len();
        firsts.sort_unstable();
        firsts.dedup();
        assert_eq!(firsts.len(), n);
        let by_index = rng::stream(seed, Component::Explore, 196_609);
        assert_eq!(first(stream(seed, 2, 1)), first(by_index));
    }

    /// `half_ppt` by hand: 2 ppm is 2_000_000 ppt, half 1_000_000 = exactly 1 ppm = rho/2,
    /// kept; 100 ppm -> 50_000_000; 0 -> 0; 3e-6 ppm is 3 ppt, half 1 (rounded down);
    /// 3.9e-6 ppm reads as 4 ppt, half 2 ppt = 2e-6 ppm > 1.95e-6 = rho/2, so 1. Never
    /// negative, as callers draw from -half..=half: a negative rho (which validation refuses)
    /// halves to 0.
    #[test]
    fn half_ppt_by_hand() {
        for (rho, half) in [
            (2.0, 1_000_000),
            (100.0, 50_000_000),
            (0.0, 0),
            (3e-6, 1),
            (3.9e-6, 1),
            (-2.0, 0),
        ] {
            assert_eq!(half_ppt(rho), half, "rho {rho}");
        }
    }

    /// `half_ppt(rho)` is never above rho/2 and less than 1 ppt below it.
    #[test]
    fn half_ppt_is_the_whole_ppt_just_under_half_rho() {
        for i in 0..2000 {
            let rho = i as f64 * 0.987_654_321 + i as f64 * 1.3e-7;
            let half = half_ppt(rho);
            assert!(half >= 0 && ppm(half) <= rho / 2.0, "{rho}: {half}");
            assert!(ppm(half + 1) > rho / 2.0, "{rho}: {half}");
        }
    }

    /// Drift drawn with rho = 100 ppm at divisor d (1 or 2), over 40 seeds: in about half the
    /// runs placed adversarially, the grantor (fast) at +100/(2d) ppm and both contenders at
    /// -100/(2d); otherwise each node within [-100/(2d), +100/(2d)], both signs drawn.
    #[test]
    fn drawn_drifts_lie_within_rho_over_twice_the_divisor() {
        let nem = envelope("(drift_ppm: 100.0)");
        for divisor in [1, 2] {
            let h = 50.0 / divisor as f64;
            let (mut adversarial, mut neg, mut pos) = (0, false, false);
            for seed in 0..40 {
                let mut s = base("1h", "");
                s.seed = seed;
                set_drifts(&mut s, &nem, Some(Intensity { rate: 1.0, divisor }));
                let x: Vec<f64> = s.nodes.iter().map(|n| n.drift_ppm.unwrap()).collect();
                assert!(x.iter().all(|x| x.abs() <= h), "{x:?}");
                if x == [h, -h, -h] {
                    adversarial += 1;
                } else {
                    neg |= x.iter().any(|&x| x < 0.0);
                    pos |= x.iter().any(|&x| x > 0.0);
                }
            }
            assert!((8..=32).contains(&adversarial), "{adversarial} of 40");
            assert!(neg && pos);
        }
    }

    /// `Busy::of` merges overlapping and touching closed windows, in any order, and keeps
    /// apart those with a gap.
    #[test]
    fn busy_merges_overlapping_and_touching_windows() {
        let of = |w: Vec<(i64, i64)>| Busy::of(w).0.into_iter().collect::<Vec<_>>();
        assert_eq!(of(vec![(5, 9), (0, 5)]), [(0, 9)]);
        assert_eq!(of(vec![(0, 5), (6, 9)]), [(0, 5), (6, 9)]);
        assert_eq!(of(vec![(2, 3), (0, 10), (12, 14)]), [(0, 10), (12, 14)]);
        assert_eq!(of(vec![]), []);
    }

    /// `Busy::meets` at the boundaries of [10, 20]: touching either end meets, a gap of 1 ns
    /// does not.
    #[test]
    fn busy_meets_at_the_boundaries() {
        let b = Busy::of(vec![(10, 20)]);
        assert!(b.meets(20, 25) && b.meets(0, 10) && b.meets(12, 13) && b.meets(0, 99));
        assert!(!b.meets(21, 25) && !b.meets(0, 9));
    }

    /// The budget, with nothing listed: 100_000 (MAX_FAULTS) faults of 1 unit, 200_000 / 3 =
    /// 66_666 partitions of 3 nodes (of the 200_000-unit hard stop). 7 units short of the
    /// hard stop: 7, 7 / 2 = 3, 7 / 3 = 2, 7 / 8 = 0; never more than may be listed.
    #[test]
    fn left_is_the_budget_over_the_cost_and_the_list() {
        assert_eq!(limits::MAX_FAULTS, 100_000);
        assert_eq!(limits::RANDOM_FAULTS_HARD_STOP, 200_000);
        let s = base("1h", "");
        let mut d = Drawer::new(&s);
        assert_eq!(
            (d.left(1), d.left(3), d.left(0)),
            (100_000, 66_666, 100_000)
        );
        d.cost = 199_993;
        assert_eq!([1, 2, 3, 8].map(|each| d.left(each)), [7, 3, 2, 0]);
        d.listed_left = 1;
        assert_eq!(d.left(3), 1);
    }

    /// `take` adds the fault's units to the cost and lists one more fault (with one fixed
    /// fault, 100_000 - 1 = 99_999 could be listed at first).
    #[test]
    fn take_counts_the_units_and_one_listed_fault() {
        let s = base(
            "1h",
            r#"faults: [Pause(node: "a", at: "10s", duration: "1s")],"#,
        );
        let mut d = Drawer::new(&s);
        assert_eq!((d.cost, d.listed_left), (0, 99_999));
        d.take(3);
        d.take(1);
        assert_eq!((d.cost, d.listed_left), (4, 99_997));
    }

    /// Drawing stops at the budget: 30 units short of the hard stop, 3-node partitions at
    /// 3600/h (3600 expected) stop after exactly 30 / 3 = 10, spending it all; with 5 faults
    /// left to list, pauses at 1/s per node (3600 per node expected) stop after exactly 5.
    #[test]
    fn drawing_stops_at_the_hard_stop_and_at_the_list() {
        let s = base("1h", "");
        let nem = envelope(
            r#"(pauses: (max: "1ms", per_minute: 60.0), partitions: (max: "1s", per_hour: 3600.0))"#,
        );
        let draw = |d: &mut Drawer, k: usize| {
            let mut picks = [None; KINDS.len()];
            picks[k] = Some(Intensity::FULL);
            let mut out = Vec::new();
            d.faults(&nem, &picks, &mut out);
            out.len()
        };
        let mut d = Drawer::new(&s);
        d.cost = limits::RANDOM_FAULTS_HARD_STOP - 30;
        assert_eq!(draw(&mut d, 5), 10);
        assert_eq!((d.cost, d.listed_left), (200_000, 100_000 - 10));
        let mut d = Drawer::new(&s);
        d.listed_left = 5;
        assert_eq!(draw(&mut d, 0), 5);
        assert_eq!((d.cost, d.listed_left), (5, 0));
    }

    /// Clock steps stop at the steps a scenario may still list: with 10 left, steps at 1/s
    /// per node (3600 per node expected) stop after exactly 10, none left after. With two
    /// fixed steps, 5000 - 2 = 4998 are left at first.
    #[test]
    fn clock_steps_stop_at_the_steps_left() {
        let s = base("1h", "");
        let nem = envelope(r#"(steps: (max: "1s", per_hour: 3600.0))"#);
        let mut d = Drawer::new(&s);
        d.steps_left = 10;
        let mut out = Vec::new();
        d.clock_steps(QUARTER, nem.steps.as_ref().unwrap(), &mut out);
        assert_eq!((out.len(), d.steps_left, d.cost), (10, 0, 10));
        let fixed = base(
            "1h",
            r#"faults: [ClockStep(node: "a", at: "2s", by: "1s"),
                        ClockStep(node: "b", at: "3s", by: "-1s")],"#,
        );
        assert_eq!(Drawer::new(&fixed).steps_left, 4998);
    }

    /// The pick's rate factor multiplies the rate: at 0.2/s over 1 h, 720 start times
    /// expected at factor 1 (sd 26.8), 360 at 1/2 (sd 19), 180 at 1/4 (sd 13.4); each within
    /// about 4.5 sd.
    #[test]
    fn the_rate_factor_scales_the_number_of_start_times() {
        let s = base("1h", "");
        let d = Drawer::new(&s);
        for (rate, lo, hi) in [(1.0, 600, 840), (0.5, 270, 450), (0.25, 120, 240)] {
            let mut r = stream(s.seed, 0, 0);
            let n = d
                .times(&mut r, 0.2, Intensity { rate, divisor: 1 }, usize::MAX)
                .len();
            assert!((lo..=hi).contains(&n), "rate {rate}: {n}");
        }
    }

    /// Pauses and freezes alone, 1/min per node, 3 nodes, 1 h: 180 expected (a handful left
    /// out for meeting another of their node, each at most 1 s with 60 s between on
    /// average); lengths in [1 ns, 1 s / divisor], of their kind and clock.
    #[test]
    fn pauses_and_freezes_alone_draw_their_number_and_lengths() {
        let s = base("1h", "");
        let nem = envelope(
            r#"(pauses: (max: "1s", per_minute: 1.0),
                freezes: (max: "1s", per_minute: 1.0, clock: Stall))"#,
        );
        let kinds = [
            (PauseKind::Gc, None),
            (PauseKind::VmFreeze, Some(FreezeClock::Stall)),
        ];
        for (k, how) in kinds.into_iter().enumerate() {
            for pick in [Intensity::FULL, QUARTER] {
                let out = draw_kind(&s, &nem, k, pick);
                assert_about_180(out.len(), KINDS[k]);
                let lengths: Vec<i64> = out
                    .iter()
                    .map(|f| match f {
                        Fault::Pause {
                            duration,
                            kind,
                            clock,
                            ..
                        } if (*kind, *clock) == how => duration.ns(),
                        other => panic!("{other:?}"),
                    })
                    .collect();
                assert_spread(&lengths, 1, 1_000_000_000 / pick.divisor, false);
            }
        }
    }

    /// Clock steps alone, 60/h per node, 3 nodes, 1 h: 180 expected; each nonzero, at most
    /// 2 s / divisor either way, both ways drawn.
    #[test]
    fn clock_steps_alone_draw_their_number_and_sizes_both_ways() {
        let s = base("1h", "");
        let nem = envelope(r#"(steps: (max: "2s", per_hour: 60.0))"#);
        for pick in [Intensity::FULL, QUARTER] {
            let out = draw_kind(&s, &nem, 2, pick);
            assert_about_180(out.len(), "steps");
            let by: Vec<i64> = out
                .iter()
                .map(|f| match f {
                    Fault::ClockStep { by, .. } => by.ns(),
                    other => panic!("{other:?}"),
                })
                .collect();
            assert_spread(&by, 1, 2_000_000_000 / pick.divisor, true);
        }
    }

    /// Drift changes alone (rho 100 ppm), 60/h per node, 3 nodes, 1 h: 180 expected; each to
    /// a whole ppt within +-100 / (2 * divisor) ppm: 50_000_000 ppt at full size, 12_500_000
    /// at a quarter; both signs drawn.
    #[test]
    fn drift_changes_alone_draw_their_number_and_drifts_both_ways() {
        let s = base("1h", "");
        let nem = envelope(r#"(drift_ppm: 100.0, drift_changes: (per_hour: 60.0))"#);
        for (pick, half) in [(Intensity::FULL, 50_000_000), (QUARTER, 12_500_000)] {
            let out = draw_kind(&s, &nem, 4, pick);
            assert_about_180(out.len(), "drift_changes");
            let ppt: Vec<i64> = out
                .iter()
                .map(|f| match f {
                    Fault::DriftChange { drift_ppm, .. } => {
                        let ppt = (drift_ppm * PPT_PER_PPM as f64).round() as i64;
                        assert_eq!(ppm(ppt), *drift_ppm, "whole ppt");
                        ppt
                    }
                    other => panic!("{other:?}"),
                })
                .collect();
            assert_spread(&ppt, 0, half, true);
        }
    }

    /// Network kinds alone (partitions, one-way cuts, delay spikes, drops), each 180/h for the
    /// cluster over 1 h: 180 expected; windows in [1 ns, 3 s / divisor], spikes' extra delay
    /// in [1 ns, 200 ms / divisor].
    #[test]
    fn network_kinds_alone_draw_their_number_and_lengths() {
        let s = base("1h", "");
        let nem = envelope(
            r#"(partitions: (max: "3s", per_hour: 180.0), one_way: (max: "3s", per_hour: 180.0),
                delay_spikes: (max: "3s", max_extra: "200ms", per_hour: 180.0),
                drops: (max: "3s", per_hour: 180.0))"#,
        );
        for pick in [Intensity::FULL, QUARTER] {
            for (k, &name) in KINDS.iter().enumerate().skip(5).take(4) {
                let out = draw_kind(&s, &nem, k, pick);
                assert_about_180(out.len(), name);
                let (mut lengths, mut extras) = (Vec::new(), Vec::new());
                for f in &out {
                    match (name, f) {
                        ("partitions", Fault::Partition { duration, .. })
                        | ("one_way", Fault::OneWay { duration, .. })
                        | ("drops", Fault::Drop { duration, .. }) => lengths.push(duration.ns()),
                        (
                            "delay_spikes",
                            Fault::DelaySpike {
                                duration, extra, ..
                            },
                        ) => {
                            lengths.push(duration.ns());
                            extras.push(extra.ns());
                        }
                        other => panic!("{other:?}"),
                    }
                }
                assert_spread(&lengths, 1, 3_000_000_000 / pick.divisor, false);
                if name == "delay_spikes" {
                    assert_spread(&extras, 1, 200_000_000 / pick.divisor, false);
                }
            }
        }
    }

    /// Crashes alone, 60/h per node, 3 nodes, 1 h: 180 expected (a handful left out while
    /// their node is down, at most 1 s of every 60 s on average); each restarted after a
    /// downtime in [1 ms, 1 s / divisor] (1 ms = min(1 ms, cap)).
    #[test]
    fn crashes_alone_draw_their_number_and_downtimes() {
        let s = base("1h", "");
        let nem = envelope(r#"(crashes: (per_hour: 60.0, max_down: "1s"))"#);
        for pick in [Intensity::FULL, QUARTER] {
            let out = draw_kind(&s, &nem, 9, pick);
            let crashes = out.iter().filter(|f| matches!(f, Fault::Crash { .. }));
            assert_about_180(crashes.count(), "crashes");
            // Each restart right after its crash; a crash in the last second may have none.
            let downs: Vec<i64> = out
                .windows(2)
                .filter_map(|p| match p {
                    [Fault::Crash { node, at }, Fault::Restart { node: n, at: back }] => {
                        assert_eq!(node, n);
                        Some((back.offset() - at.offset()).ns())
                    }
                    [_, Fault::Crash { .. }] | [Fault::Restart { .. }, _] => None,
                    other => panic!("{other:?}"),
                })
                .collect();
            assert_spread(&downs, 1_000_000, 1_000_000_000 / pick.divisor, false);
        }
    }

    /// Renewal-loop stalls at 1 per minute per node over an hour, on the two contenders (the
    /// grantor has no renewal loop apart from its work): 60 x 1 h x 2 nodes = 120 expected,
    /// drawn only on `a` and `b`, each stall in [1 ns, 1 s / divisor], the envelope's thread,
    /// and no two of a node meeting. Worker stalls are drawn on all three nodes: 180.
    #[test]
    fn thread_stalls_alone_draw_on_the_nodes_with_the_loop() {
        let s = base("1h", "");
        let nem = envelope(r#"(thread_stalls: (max: "1s", per_minute: 1.0))"#);
        for pick in [Intensity::FULL, QUARTER] {
            let out = draw_kind(&s, &nem, 10, pick);
            assert!(
                (70..=170).contains(&out.len()),
                "{} drawn, 120 expected",
                out.len()
            );
            let mut spans: BTreeMap<&str, Vec<(i64, i64)>> = BTreeMap::new();
            let lengths: Vec<i64> = out
                .iter()
                .map(|f| match f {
                    Fault::ThreadStall {
                        node,
                        thread: Thread::Renewal,
                        at,
                        duration,
                    } => {
                        assert_ne!(node, "lock");
                        let span = (at.ns(), at.ns() + duration.ns());
                        spans.entry(node.as_str()).or_default().push(span);
                        duration.ns()
                    }
                    other => panic!("{other:?}"),
                })
                .collect();
            assert_eq!(spans.keys().copied().collect::<Vec<_>>(), ["a", "b"]);
            assert_spread(&lengths, 1, 1_000_000_000 / pick.divisor, false);
            for mut v in spans.into_values() {
                v.sort_unstable();
                assert!(v.windows(2).all(|w| w[0].1 < w[1].0), "stalls meet: {v:?}");
            }
        }
        let worker = envelope(r#"(thread_stalls: (max: "1s", per_minute: 1.0, thread: Worker))"#);
        let out = draw_kind(&s, &worker, 10, Intensity::FULL);
        assert_about_180(out.len(), "worker stalls");
        assert!(out.iter().any(|f| matches!(f, Fault::ThreadStall { node, thread: Thread::Worker, .. } if node == "lock")));
    }

    /// A drawn stall never meets one the scenario lists for the same loop of its node: with a
    /// listed stall of `a`'s renewal loop over the whole hour, only `b`'s are drawn, while a
    /// listed stall of `a`'s worker leaves `a`'s renewal loop free.
    #[test]
    fn drawn_stalls_keep_clear_of_the_scenarios_own() {
        let nem = envelope(r#"(thread_stalls: (max: "1s", per_minute: 1.0))"#);
        let own = |thread: &str| {
            base(
                "1h",
                &format!(
                    r#"faults: [ThreadStall(node: "a", thread: {thread}, at: "0s", duration: "1h")],"#
                ),
            )
        };
        let on = |s: &Scenario, node: &str| {
            let d = draw_run(s, &nem, 0, false);
            drawn_part(&d, s, 0)
                .iter()
                .filter(|f| matches!(f, Fault::ThreadStall { node: n, .. } if n == node))
                .count()
        };
        let renewal = own("Renewal");
        assert_eq!(on(&renewal, "a"), 0);
        assert!(on(&renewal, "b") > 20);
        assert!(on(&own("Worker"), "a") > 20);
    }

    /// Adding thread stalls to an envelope moves none of the first ten kinds' swarm choices:
    /// their coins and factors come from stream 0 and the stalls' from stream 1. Where the
    /// first ten enable something, the choice is the same with stalls present or not (the
    /// fallback pick, when nothing is enabled, may differ: a stall is then a candidate).
    #[test]
    fn thread_stalls_move_no_other_kinds_swarm_choice() {
        let s = base("1h", "");
        let all = profile("all", &s).unwrap();
        let mut with = all.clone();
        with.thread_stalls = profile("threads", &s).unwrap().thread_stalls;
        let (mut stalls_on, mut compared) = (0, 0);
        for seed in 0..200 {
            let a = choose(seed, &all, true);
            let b = choose(seed, &with, true);
            if b[..10].iter().any(Option::is_some) {
                assert_eq!(a[..10], b[..10], "seed {seed}");
                compared += 1;
            }
            assert_eq!(a[10], None);
            stalls_on += usize::from(b[10].is_some());
        }
        assert!(compared > 190, "{compared}");
        assert!((60..=140).contains(&stalls_on), "{stalls_on} of 200");
    }

    /// Disk stalls at 1 per minute per node with a disk over an hour, `lock` alone having one
    /// (TwoSided's grantor writes nothing, but the envelope only asks for a disk): 60 drawn on
    /// average, all on `lock`, each in [1 ns, 1 s / divisor], no two meeting.
    #[test]
    fn disk_stalls_draw_on_the_nodes_with_a_disk() {
        let text = base("1h", "").to_ron();
        let text = text.replacen(
            "role: Grantor,",
            r#"role: Grantor, disk: (fsync: Fixed("1ms")),"#,
            1,
        );
        let s = Scenario::from_ron(&text).unwrap_or_else(|e| panic!("{e}"));
        assert!(s.nodes[0].disk.is_some(), "{text}");
        let nem = envelope(r#"(disk_stalls: (max: "1s", per_minute: 1.0))"#);
        for pick in [Intensity::FULL, QUARTER] {
            let out = draw_kind(&s, &nem, 11, pick);
            assert!(
                (30..=95).contains(&out.len()),
                "{} drawn, 60 expected",
                out.len()
            );
            let mut spans = Vec::new();
            for f in &out {
                let Fault::DiskStall { node, at, duration } = f else {
                    panic!("{f:?}")
                };
                assert_eq!(node, "lock");
                assert!((1..=1_000_000_000 / pick.divisor).contains(&duration.ns()));
                spans.push((at.ns(), at.ns() + duration.ns()));
            }
            spans.sort_unstable();
            assert!(spans.windows(2).all(|w| w[0].1 < w[1].0), "stalls meet");
        }
        // The kind's swarm coin comes from stream 2: adding it moves no other kind's choice.
        let all = profile("all", &s).unwrap();
        let mut with = all.clone();
        with.disk_stalls = nem.disk_stalls.clone();
        for seed in 0..200 {
            let (a, b) = (choose(seed, &all, true), choose(seed, &with, true));
            if b[..11].iter().any(Option::is_some) {
                assert_eq!(a[..11], b[..11], "seed {seed}");
            }
            assert_eq!(a[11], None);
        }
    }

    /// The stall kind's coin and factors come from stream 1, in the order the first ten's do
    /// from stream 0: a fair coin, then the rate's and the size's index in {1/4, 1/2, 1}.
    #[test]
    fn the_stalls_swarm_choice_is_drawn_from_stream_one() {
        let s = base("1h", "");
        let n = profile("threads", &s).unwrap();
        let (mut on, mut fallback) = (0, 0);
        for seed in 0..64 {
            let mut r = rng::stream(seed, Component::Explore, 1);
            let coin = r.random_bool(0.5);
            let rate = [0.25, 0.5, 1.0][r.random_range(0..3)];
            let divisor = [4, 2, 1][r.random_range(0..3)];
            let want = Some(Intensity { rate, divisor });
            // The only kind present: on by its coin, or else chosen as the fallback.
            assert_eq!(choose(seed, &n, true)[10], want, "seed {seed}");
            // Among every kind, where the first ten enable one: on by its coin alone.
            let mut all = profile("all", &s).unwrap();
            all.thread_stalls = n.thread_stalls.clone();
            let picks = choose(seed, &all, true);
            if picks[..10].iter().any(Option::is_some) {
                assert_eq!(picks[10], want.filter(|_| coin), "seed {seed}");
            }
            on += usize::from(coin);
            fallback += usize::from(!coin);
        }
        assert!(on > 16 && fallback > 16, "{on} {fallback}");
    }

    /// The `threads` profile is refused for a protocol with no renewal loop on any node of the
    /// scenario, with the fix named; under the base protocol it validates.
    #[test]
    fn renewal_stalls_need_a_node_with_the_loop() {
        let s = base("1h", "");
        let mut ok = s.clone();
        ok.nemesis = profile("threads", &ok);
        assert_eq!(validate(&ok), Vec::<String>::new());
        let mut no_loop = s.clone();
        no_loop.nodes.retain(|n| n.name == "lock");
        no_loop.nemesis = profile("threads", &no_loop);
        let problems = validate(&no_loop);
        assert!(
            problems
                .iter()
                .any(|p| p.starts_with("nemesis.thread_stalls.thread: under")
                    && p.contains("no node of the scenario has a renewal loop")
                    && p.contains("a Contender")
                    && p.contains("stall the Worker loop instead")),
            "{problems:?}"
        );
    }

    #[test]
    fn faults_stop_but_a_kept_crash_keeps_its_restart() {
        // The scenario's own fault stays whatever its time; of the drawn ones, those from 30 s
        // go, except the restart of a crash at 25 s.
        let mut s = base(
            "60s",
            r#"faults: [
                Pause(node: "b", at: "50s", duration: "1s"),
                Crash(node: "a", at: "25s"),
                Restart(node: "a", at: "35s"),
                Pause(node: "b", at: "29s", duration: "1s"),
                Pause(node: "b", at: "31s", duration: "1s"),
                Crash(node: "b", at: "40s"),
                Restart(node: "b", at: "45s"),
            ],"#,
        );
        stop_faults(&mut s, 1, 30_000_000_000);
        let kept: Vec<(bool, i64)> = s
            .faults
            .iter()
            .map(|f| {
                (
                    matches!(f, Fault::Pause { .. }),
                    f.at().ns() / 1_000_000_000,
                )
            })
            .collect();
        assert_eq!(kept, [(true, 50), (false, 25), (false, 35), (true, 29)]);
    }
}
