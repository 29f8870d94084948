//! Shrinking a violating run to a small scenario that still shows the same violation.
//!
//! [`shrink`] takes a valid, explicit scenario (every fault in `faults`, no `random_faults`)
//! and a predicate `still_fails`, and returns the smallest scenario it finds of which the
//! predicate still holds. It is deterministic: no randomness, no threads, no clock; the same
//! input and predicate give the same output and the same number of runs.
//!
//! # Passes
//!
//! One round runs seven passes in order; each change is kept only while `still_fails` holds of
//! the whole candidate. Faults are removed first (1, then 2), and only then shortened:
//!
//! 1. **Faults** (delta debugging, Zeller's `ddmin`): first no fault at all; then `faults` is
//!    split into n = 2, 4, 8, ... chunks (down to single faults), keeping a chunk alone or its
//!    complement when that still fails, in the file's order. A `Crash` and its matching
//!    `Restart` (the first Restart of the same node after it, in validation's order) move as one
//!    unit; afterwards every fault is tried alone once more, last first, so that a `Restart`
//!    can go while its `Crash` stays (the node then stays down). A `Crash` alone never goes:
//!    validation refuses the `Restart` of a running node it would leave.
//! 2. **Re-place** ([`shrink_placing`] only, with 2 to [`REPLACE_MAX`] units of faults left):
//!    a fault each of whose removals fails may be needed only where the others are. For each
//!    unit (last first), the pass first tries it removed with its gap closed: when it has a
//!    length and is placed at a time, every unit the caller's `largest` can size that starts
//!    at or after it moves earlier by that length (the others keep their places relative to
//!    what it delayed), then later by it; and when one of the scenario's own faults (a
//!    scheduled transfer, say) starts inside it, earlier by what it held that one up (from
//!    that fault's start to its end: a paused node takes the fault up as it resumes, and what
//!    came after was placed against that). Then it tries it removed while another unit, one the
//!    caller's `largest` can size (of a kind an exploration's envelope has; never a crash),
//!    moves to another instant: the removed unit's start or end, or its own start moved by
//!    -T/2, -T/4, +T/4, +T/2 (T the lease duration), in that order, within the run, each at
//!    its size and then at the largest its kind may have (the caller's `largest`: an
//!    exploration's envelope). The first that still fails is kept and the pass starts again on
//!    what is left; the next passes shorten what the largest size made long.
//! 3. **Shorten**: every length (`Pause`, `Partition`, `OneWay`, `DelaySpike` and its `extra`,
//!    `Drop`) and every `ClockStep.by` (its magnitude, sign kept) is binary-searched down to the
//!    least value that still fails, in whole milliseconds when it is at least 1 ms (else whole
//!    microseconds, else nanoseconds), the smallest value tried first. `DriftChange.drift_ppm`
//!    goes toward 0 the same way, 0 first, then whole ppm.
//! 4. **Drifts**: `clocks.drift_spread_ppm`, then each node's explicit `drift_ppm`, as in 2.
//! 5. **Round times**: each fault's `at` goes to the earlier, else the nearest, multiple of 1 s,
//!    else 100 ms, 10 ms, 1 ms: the first that still fails.
//! 6. **Nodes**: each node no remaining fault names (`node`, `to`, `OneWay`'s ends, or as the
//!    only member of a `from`/`to` list), last first, is removed (and from `Partition` groups
//!    and `from`/`to` lists); validation keeps the roles a protocol needs. Removing a node
//!    shifts the random streams of later ones: the predicate decides.
//! 7. **Run length**: `duration` is binary-searched down in whole milliseconds, never to or
//!    below the last fault's `at` or node's `start` (validation's bound).
//!
//! A searched number is then made readable: rounded *up* to one significant digit (7 s for
//! 6.671 s) when that costs at most a tenth of it, else to two (6.1 s for 6.013 s), if that
//! still fails and is not above where the search started; the run's `duration` first tries a
//! whole number of seconds. So a number never grows across a pass.
//!
//! Workload, strategy, lease, seed, network and expect are left alone.
//!
//! # Fixpoint
//!
//! Rounds repeat until a whole round leaves the scenario as it was (its RON text the same), at
//! most [`MAX_ROUNDS`] times. Verdicts are remembered by the candidate's RON text, so a
//! candidate seen before (the scenario a search started from, say) is never run again.
//!
//! # Bound on runs
//!
//! `still_fails` is called only for a valid candidate not seen before. One round with F faults
//! (U units: a Crash and its Restart are one), N nodes, costs at most:
//!
//! - re-place: with U units from 2 to [`REPLACE_MAX`], per unit removed its gap closed and
//!   opened and closed by what it held up (3 runs), then U - 1 others moved to 6 instants at 2
//!   sizes each: 12 U (U - 1) + 3U runs, and again with one unit fewer after each success: at
//!   most 12 (4·3 + 3·2 + 2·1) + 3 (4 + 3 + 2) = 267.
//! - faults: 1 + (3U² + 9U) + F. `ddmin` at granularity n tests at most 2n <= 2m candidates
//!   on m units; between two reductions n only doubles (from 2, or n - 1 after a complement),
//!   so a stretch costs under 6m; reductions happen at distinct sizes m = U, U - 1, ..., 2:
//!   6 (2 + ... + U) + 6U <= 3U² + 9U. Then F single removals.
//! - shorten and drifts: per searched number 1 + ⌈log2 K⌉ + 2, K its size in its unit (at most
//!   3.6e9 ms for a length, 1000 h; 3.6e8 ms for a step; 2e5 ppm): at most 35 per number, two
//!   numbers per fault (a `DelaySpike`), one per node and the spread.
//! - round times: 8 per fault; nodes: N; run length: 1 + ⌈log2 K⌉ + 3.
//!
//! No number grows and no fault or node comes back, so the first round's bound holds for every
//! round: in all at most [`MAX_ROUNDS`] times it ([`worst_case`] computes it for a scenario).
//! And whatever the input, never more than [`MAX_RUNS`] calls: once there, every further
//! candidate is taken as no longer failing (it is not run), and the shrink ends with the
//! smallest failing scenario found.
//!
//! # Budget
//!
//! [`shrink_within`] spends at most a [`Budget`]: a number of runs (`explore --shrink-runs`,
//! [`DEFAULT_BUDGET_RUNS`] by default), a number of simulated events over all its runs
//! (`--shrink-events`, [`DEFAULT_BUDGET_EVENTS`] by default: runs of a heavy scenario cost far
//! more than those of a light one, and events are what take the time), and optionally a
//! deadline the caller checks (`--shrink-time`). When it is spent the shrink ends as at the cap, with the smallest failing
//! scenario so far, and says why ([`Shrunk::stopped`]). A budget of runs or of events keeps the
//! shrink deterministic; a deadline does not (how far it gets depends on the machine).
//! For 50 faults, 5 nodes and a 60 s run (every span under a minute) a round is at most
//! 8001 + 240 + 50 x 2 x 19 + 400 + 6 x 21 + 5 + 20 = 10 692, so the cap (10 000 runs: 10 s
//! at 1 ms a run) is the worst case. Real shrinks take far fewer: about 70 runs for the 40 faults and the
//! 21 faults of the tests below, 249 when 25 of 50 faults must stay (the tests check it).

use crate::scenario::validate::validate;
use crate::scenario::{Fault, Scenario};
use crate::time::{Dur, LocalDur, NS_PER_MS, NS_PER_S, NS_PER_US};
use std::collections::{BTreeMap, BTreeSet};

/// A shrunk scenario and how many runs the shrink took.
#[derive(Clone, Debug)]
pub struct Shrunk {
    pub scenario: Scenario,
    pub runs: u64,
    /// Why it stopped before its fixpoint, if it did: what of its budget ran out first.
    pub stopped: Option<Stopped>,
}

/// What ran out when a shrink stopped before its fixpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stopped {
    /// Its runs (at most [`MAX_RUNS`]).
    Runs,
    /// Its simulated events.
    Events,
    /// Its time.
    Time,
}

impl Stopped {
    /// What ran out, in words.
    pub fn words(self) -> &'static str {
        match self {
            Stopped::Runs => "its budget of runs ran out",
            Stopped::Events => "its budget of simulated events ran out",
            Stopped::Time => "its time ran out",
        }
    }
}

/// The default of [`Budget::runs`] (`explore --shrink-runs`).
pub const DEFAULT_BUDGET_RUNS: u64 = 200;

/// The default of [`Budget::events`] (`explore --shrink-events`): 20 to 60 s of simulation on
/// one core, whatever a run costs.
pub const DEFAULT_BUDGET_EVENTS: u64 = 1_000_000_000;

/// What a shrink may spend.
#[derive(Clone, Copy)]
pub struct Budget<'a> {
    /// The most calls of `still_fails` (never more than [`MAX_RUNS`]).
    pub runs: u64,
    /// The most simulated events over all its runs, as `events_spent` tells them; no run starts
    /// once they are spent.
    pub events: u64,
    /// Asked before each run: the events the shrink's runs have taken so far (the caller runs
    /// them). Without it, events are not counted.
    pub events_spent: Option<&'a (dyn Fn() -> u64 + Sync)>,
    /// Asked before each run: whether the shrink's time is up. The caller holds the clock, so
    /// the shrink stays free of one; with a deadline its result depends on the machine.
    pub out_of_time: Option<&'a (dyn Fn() -> bool + Sync)>,
}

impl Budget<'_> {
    /// At most `runs` runs, and no deadline.
    pub fn runs(runs: u64) -> Budget<'static> {
        Budget {
            runs,
            events: u64::MAX,
            events_spent: None,
            out_of_time: None,
        }
    }
}

impl Default for Budget<'_> {
    fn default() -> Self {
        Budget::runs(DEFAULT_BUDGET_RUNS)
    }
}

impl std::fmt::Debug for Budget<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Budget")
            .field("runs", &self.runs)
            .field("events", &self.events)
            .field("deadline", &self.out_of_time.is_some())
            .finish()
    }
}

/// The most rounds of passes (the last one finds nothing more to take, when it comes to that).
pub const MAX_ROUNDS: u64 = 6;

/// The most calls of `still_fails` in one shrink.
pub const MAX_RUNS: u64 = 10_000;

/// Shrinks `s` (valid, explicit: no `random_faults`) while `still_fails` holds of it, with no
/// budget but the cap of [`MAX_RUNS`] runs.
pub fn shrink(s: Scenario, still_fails: &dyn Fn(&Scenario) -> bool) -> Shrunk {
    shrink_within(s, still_fails, &Budget::runs(MAX_RUNS))
}

/// [`shrink`] within `budget`: once it is spent, the smallest failing scenario found so far.
pub fn shrink_within(
    s: Scenario,
    still_fails: &dyn Fn(&Scenario) -> bool,
    budget: &Budget,
) -> Shrunk {
    shrink_placing(s, still_fails, budget, None)
}

/// The most units of faults the re-place pass works on (see the module's doc).
pub const REPLACE_MAX: usize = 4;

/// A fault at the largest size its kind may have, if it has a size to grow (an exploration's
/// envelope gives it).
pub type Largest<'a> = dyn Fn(&Fault) -> Option<Fault> + 'a;

/// [`shrink_within`] with the re-place pass, whose moved faults may also grow to `largest`
/// (without it, they keep their sizes).
pub fn shrink_placing(
    s: Scenario,
    still_fails: &dyn Fn(&Scenario) -> bool,
    budget: &Budget,
    largest: Option<&Largest>,
) -> Shrunk {
    let mut k = Shrinker::new(s, still_fails, budget);
    for _ in 0..MAX_ROUNDS {
        let before = k.cur.to_ron();
        k.faults();
        if let Some(largest) = largest {
            k.replace(largest);
        }
        k.shorten();
        k.drifts();
        k.round_times();
        k.nodes();
        k.run_length();
        if k.stopped.is_some() || k.cur.to_ron() == before {
            break;
        }
    }
    debug_assert!(
        k.runs <= k.max_runs,
        "{} runs, budget {}",
        k.runs,
        k.max_runs
    );
    Shrunk {
        scenario: k.cur,
        runs: k.runs,
        stopped: k.stopped,
    }
}

/// The most calls of `still_fails` a shrink of `s` can make (see the module's doc).
pub fn worst_case(s: &Scenario) -> u64 {
    let f = s.faults.len() as u64;
    let u = units(&s.faults).len() as u64;
    let n = s.nodes.len() as u64;
    let search = |k: u64| 1 + u64::from(64 - k.leading_zeros()) + 2;
    let ms = |ns: i64| {
        let v = ns.checked_abs().unwrap_or(i64::MAX);
        ceil_div(v, grain(v)) as u64
    };
    let ppm = |d: f64| d.abs().ceil() as u64;
    let mut round = 1 + 3 * u * u + 9 * u + f;
    round += (2..=u.min(REPLACE_MAX as u64))
        .map(|k| 12 * k * (k - 1) + 3 * k)
        .sum::<u64>();
    for fault in &s.faults {
        for field in FIELDS {
            if let Some(v) = get_ns(fault, field) {
                round += search(ms(v));
            }
        }
        if let Fault::DriftChange { drift_ppm, .. } = fault {
            round += search(ppm(*drift_ppm));
        }
        round += 8;
    }
    round += search(ppm(s.clocks.drift_spread_ppm));
    for node in &s.nodes {
        round += node.drift_ppm.map_or(0, |d| search(ppm(d)));
    }
    round += n + search(ms(s.duration.ns())) + 1;
    (MAX_ROUNDS * round).min(MAX_RUNS)
}

/// The shrink's state: the smallest failing scenario so far and what it has tried.
struct Shrinker<'a> {
    cur: Scenario,
    runs: u64,
    /// The budget's runs, at most [`MAX_RUNS`], its events, and its deadline.
    max_runs: u64,
    max_events: u64,
    events_spent: Option<&'a (dyn Fn() -> u64 + Sync)>,
    out_of_time: Option<&'a (dyn Fn() -> bool + Sync)>,
    /// Set when a candidate went unrun for want of budget; nothing new runs after it.
    stopped: Option<Stopped>,
    still_fails: &'a dyn Fn(&Scenario) -> bool,
    /// The input's own problems (a strategy that is not built in, which `validate` cannot
    /// build): a candidate may have those, and no other.
    allowed: BTreeSet<String>,
    /// Every verdict so far, by the candidate's RON text.
    seen: BTreeMap<String, bool>,
}

impl<'a> Shrinker<'a> {
    fn new(s: Scenario, still_fails: &'a dyn Fn(&Scenario) -> bool, budget: &Budget<'a>) -> Self {
        let allowed = validate(&s).into_iter().collect();
        let seen = BTreeMap::from([(s.to_ron(), true)]);
        Shrinker {
            cur: s,
            runs: 0,
            max_runs: budget.runs.min(MAX_RUNS),
            max_events: budget.events,
            events_spent: budget.events_spent,
            out_of_time: budget.out_of_time,
            stopped: None,
            still_fails,
            allowed,
            seen,
        }
    }

    /// Whether `c` still fails: false for an invalid candidate or once the budget is spent.
    fn fails(&mut self, c: &Scenario) -> bool {
        if self.stopped.is_some() {
            return false;
        }
        if validate(c).iter().any(|p| !self.allowed.contains(p)) {
            return false;
        }
        let key = c.to_ron();
        if let Some(&verdict) = self.seen.get(&key) {
            return verdict;
        }
        if self.runs >= self.max_runs {
            self.stopped = Some(Stopped::Runs);
            return false;
        }
        if self
            .events_spent
            .is_some_and(|spent| spent() >= self.max_events)
        {
            self.stopped = Some(Stopped::Events);
            return false;
        }
        if self.out_of_time.is_some_and(|up| up()) {
            self.stopped = Some(Stopped::Time);
            return false;
        }
        self.runs += 1;
        let verdict = (self.still_fails)(c);
        self.seen.insert(key, verdict);
        verdict
    }

    /// Makes `c` the current scenario if it still fails; says whether it did.
    fn accept(&mut self, c: Scenario) -> bool {
        let fails = self.fails(&c);
        if fails {
            self.cur = c;
        }
        fails
    }

    /// The least k in [lo, top] for which `make(cur, k)` still fails, top being the current
    /// value (known to fail): lo first, then a binary search. The current scenario is left at it.
    fn least(&mut self, lo: i64, top: i64, make: &dyn Fn(&Scenario, i64) -> Scenario) -> i64 {
        if lo >= top {
            return top;
        }
        let c = make(&self.cur, lo);
        if self.accept(c) {
            return lo;
        }
        let (mut pass, mut fail) = (lo, top);
        while fail - pass > 1 {
            let mid = pass + (fail - pass) / 2;
            let c = make(&self.cur, mid);
            if self.accept(c) {
                fail = mid;
            } else {
                pass = mid;
            }
        }
        fail
    }

    /// After [`Shrinker::least`] found `k` (at most `top`, where it started): the first of
    /// `rounder` (values above k) up to `top` that still fails. Up to, not below: a round
    /// value the search started from is found again, and kept (a fixpoint).
    fn round_up(
        &mut self,
        k: i64,
        top: i64,
        rounder: &[i64],
        make: &dyn Fn(&Scenario, i64) -> Scenario,
    ) {
        for &r in rounder {
            if r > k && r <= top {
                let c = make(&self.cur, r);
                if self.accept(c) {
                    return;
                }
            }
        }
    }

    /// Searches a span in nanoseconds (a length, or a step's magnitude, its sign kept) down to
    /// `lo` grains: whole ms from 1 ms, else whole us, else ns.
    fn shrink_ns(
        &mut self,
        lo: i64,
        get: &dyn Fn(&Scenario) -> Option<i64>,
        set: &dyn Fn(&mut Scenario, i64),
    ) {
        let Some(v0) = get(&self.cur) else {
            return;
        };
        let (sign, v) = (v0.signum(), v0.checked_abs().unwrap_or(i64::MAX));
        if v == 0 {
            return;
        }
        let g = grain(v);
        let top = ceil_div(v, g);
        let make = |s: &Scenario, k: i64| {
            let mut c = s.clone();
            set(&mut c, sign * k.saturating_mul(g).min(v));
            c
        };
        let k = self.least(lo, top, &make);
        self.round_up(k, top, &readable(k), &make);
    }

    /// Searches a drift in ppm toward 0: 0 first, then whole ppm, its sign kept.
    fn shrink_ppm(
        &mut self,
        get: &dyn Fn(&Scenario) -> Option<f64>,
        set: &dyn Fn(&mut Scenario, f64),
    ) {
        let Some(d) = get(&self.cur) else {
            return;
        };
        if d == 0.0 || !d.is_finite() {
            return;
        }
        let (sign, a) = (d.signum(), d.abs());
        let top = a.ceil() as i64;
        let make = |s: &Scenario, k: i64| {
            let mut c = s.clone();
            set(
                &mut c,
                if k == 0 {
                    0.0
                } else {
                    sign * (k as f64).min(a)
                },
            );
            c
        };
        let k = self.least(0, top, &make);
        self.round_up(k, top, &readable(k), &make);
    }

    /// Pass 1: ddmin over the faults (a Crash and its Restart one unit), then single faults.
    fn faults(&mut self) {
        if self.cur.faults.is_empty() {
            return;
        }
        let base = self.cur.clone();
        let with = |idx: &[usize]| {
            let mut c = base.clone();
            c.faults = idx.iter().map(|&i| base.faults[i].clone()).collect();
            c
        };
        if self.accept(with(&[])) {
            return;
        }
        self.ddmin(units(&base.faults), &with);
        for i in (0..self.cur.faults.len()).rev() {
            let mut c = self.cur.clone();
            c.faults.remove(i);
            self.accept(c);
        }
    }

    /// Zeller's ddmin over `items` (units of fault indices), testing `build` of the indices
    /// kept, in order; the current scenario ends as the last that failed.
    fn ddmin(&mut self, mut items: Vec<Vec<usize>>, build: &dyn Fn(&[usize]) -> Scenario) {
        let flat = |units: &[&Vec<usize>]| {
            let mut idx: Vec<usize> = units.iter().flat_map(|u| u.iter().copied()).collect();
            idx.sort_unstable();
            idx
        };
        let mut n = 2;
        while items.len() >= 2 {
            let len = items.len();
            let chunks: Vec<Vec<&Vec<usize>>> = (0..n)
                .map(|j| items[j * len / n..(j + 1) * len / n].iter().collect())
                .collect();
            let mut next = None;
            // With two chunks, each chunk is the other's complement: those come next.
            if n > 2 {
                for (j, chunk) in chunks.iter().enumerate() {
                    if self.accept(build(&flat(chunk))) {
                        next = Some((j, true));
                        break;
                    }
                }
            }
            if next.is_none() {
                for j in 0..n {
                    let rest: Vec<&Vec<usize>> = chunks
                        .iter()
                        .enumerate()
                        .filter(|&(i, _)| i != j)
                        .flat_map(|(_, c)| c.iter().copied())
                        .collect();
                    if self.accept(build(&flat(&rest))) {
                        next = Some((j, false));
                        break;
                    }
                }
            }
            match next {
                Some((j, alone)) => {
                    let (lo, hi) = (j * len / n, (j + 1) * len / n);
                    items = if alone {
                        items[lo..hi].to_vec()
                    } else {
                        [&items[..lo], &items[hi..]].concat()
                    };
                    n = if alone { 2 } else { (n - 1).max(2) };
                    n = n.min(items.len().max(2));
                }
                None if n >= len => break,
                None => n = (2 * n).min(len),
            }
        }
    }

    /// Pass 2: each unit removed while another moves to another instant, at its size and at its
    /// largest (see the module's doc); from the start after each success.
    fn replace(&mut self, largest: &Largest) {
        'again: loop {
            let units = units(&self.cur.faults);
            if !(2..=REPLACE_MAX).contains(&units.len()) {
                return;
            }
            for gone in (0..units.len()).rev() {
                // Only faults the caller can size move: of the envelope's kinds, for explore.
                let movers: Vec<usize> = (0..units.len())
                    .filter(|&m| m != gone && largest(&self.cur.faults[units[m][0]]).is_some())
                    .collect();
                for by_ns in self.gaps(&units, gone, &movers) {
                    let c = self.closed(&units, gone, &movers, by_ns);
                    if c.is_some_and(|c| self.accept(c)) {
                        continue 'again;
                    }
                    if self.stopped.is_some() {
                        return;
                    }
                }
                for mover in movers {
                    for at in self.instants(&units[gone], &units[mover]) {
                        for grow in [false, true] {
                            let c = self.moved(&units[gone], &units[mover], at, grow, largest);
                            if c.is_some_and(|c| self.accept(c)) {
                                continue 'again;
                            }
                            if self.stopped.is_some() {
                                return;
                            }
                        }
                    }
                }
            }
            return;
        }
    }

    /// How far [`Shrinker::closed`] moves the others when unit `gone` (a fault with a length,
    /// placed at a time) is removed: its length earlier (the gap it left closed, as if what it
    /// delayed had not waited) and later; then, when one of the scenario's own faults (one no
    /// mover is: a scheduled transfer, say) starts inside it, earlier by what it delayed the
    /// first of those (from its start to `gone`'s end: a paused node takes it up as it
    /// resumes). Empty for a fault with no length or placed at a moment.
    fn gaps(&self, units: &[Vec<usize>], gone: usize, movers: &[usize]) -> Vec<i64> {
        let f = &self.cur.faults;
        let g = &f[units[gone][0]];
        let Some(len) = get_ns(g, Field::Length).filter(|_| g.after().is_none()) else {
            return Vec::new();
        };
        let (from, end) = (g.at().ns(), g.at().ns().saturating_add(len));
        let mut v = vec![-len, len];
        let own = (0..units.len())
            .filter(|u| *u != gone && !movers.contains(u))
            .flat_map(|u| units[u].iter())
            .filter(|&&i| f[i].after().is_none())
            .map(|&i| f[i].at().ns())
            // One starting with it was held up by its whole length: the first shift already.
            .filter(|t| (from + 1..end).contains(t))
            .min();
        if let Some(t) = own {
            v.push(t - end);
        }
        v
    }

    /// The current scenario without unit `gone` (a fault placed at a time), every unit of
    /// `movers` placed at a time at or after its start moved by `by_ns` (see
    /// [`Shrinker::gaps`]). `None` when that moves nothing, or a moved fault would leave the
    /// run or meet a pause of its node.
    fn closed(
        &self,
        units: &[Vec<usize>],
        gone: usize,
        movers: &[usize],
        by_ns: i64,
    ) -> Option<Scenario> {
        let g = &self.cur.faults[units[gone][0]];
        let from = g.at().ns();
        let shifted: Vec<usize> = movers
            .iter()
            .filter(|&&m| {
                let f = &self.cur.faults[units[m][0]];
                f.after().is_none() && f.at().ns() >= from
            })
            .flat_map(|&m| units[m].iter().copied())
            .collect();
        if shifted.is_empty() {
            return None;
        }
        let mut c = self.cur.clone();
        for &i in &shifted {
            let t = c.faults[i].at().ns().checked_add(by_ns)?;
            if !(0..c.duration.ns()).contains(&t) {
                return None;
            }
            *c.faults[i].at_mut() = Dur::from_ns(t);
        }
        let mut idx = units[gone].clone();
        idx.sort_unstable();
        for &i in idx.iter().rev() {
            c.faults.remove(i);
        }
        super::guided::pauses_apart(&c.faults).then_some(c)
    }

    /// Where the unit `mover` may go once `gone` is removed: `gone`'s start and end (when it is
    /// placed at a time), then `mover`'s own start -T/2, -T/4, +T/4, +T/2 (for one placed at
    /// a moment, only the first two: it is then placed at that time); within the run, each
    /// once, never where it is.
    fn instants(&self, gone: &[usize], mover: &[usize]) -> Vec<i64> {
        let f = &self.cur.faults;
        let m = &f[mover[0]];
        let at = if m.after().is_some() { -1 } else { m.at().ns() };
        let term = self.cur.lease.duration.ns().max(1);
        let g = &f[gone[0]];
        let mut v = Vec::new();
        if g.after().is_none() {
            v.push(g.at().ns());
            v.extend(get_ns(g, Field::Length).map(|len| g.at().ns().saturating_add(len)));
        }
        if at >= 0 {
            v.extend([at - term / 2, at - term / 4, at + term / 4, at + term / 2]);
        }
        let mut out: Vec<i64> = Vec::new();
        for t in v {
            if t >= 0 && t < self.cur.duration.ns() && t != at && !out.contains(&t) {
                out.push(t);
            }
        }
        out
    }

    /// The current scenario without the unit `gone`, the unit `mover` starting at `at_ns` (its
    /// restart moved with it; one placed at a moment placed at that time), at its largest with
    /// `grow` (`None` when that changes nothing); `None` when a moved pause meets another of
    /// its node.
    fn moved(
        &self,
        gone: &[usize],
        mover: &[usize],
        at_ns: i64,
        grow: bool,
        largest: &Largest,
    ) -> Option<Scenario> {
        let mut c = self.cur.clone();
        let first = c.faults[mover[0]].start_mut();
        if first.after().is_some() {
            *first = crate::scenario::At::Time(Dur::from_ns(at_ns));
        }
        let d = at_ns - c.faults[mover[0]].at().ns();
        for &i in mover {
            let at = c.faults[i].at_mut();
            *at = Dur::from_ns(at.ns().saturating_add(d));
        }
        if grow {
            let big = largest(&c.faults[mover[0]])?;
            if big == c.faults[mover[0]] {
                return None;
            }
            c.faults[mover[0]] = big;
        }
        let mut idx: Vec<usize> = gone.to_vec();
        idx.sort_unstable();
        for &i in idx.iter().rev() {
            c.faults.remove(i);
        }
        super::guided::pauses_apart(&c.faults).then_some(c)
    }

    /// Pass 3: every fault's lengths, steps and drift toward the least that still fails.
    fn shorten(&mut self) {
        for i in 0..self.cur.faults.len() {
            for field in FIELDS {
                let lo = if field == Field::Extra { 0 } else { 1 };
                self.shrink_ns(lo, &|s| get_ns(&s.faults[i], field), &|s, v| {
                    set_ns(&mut s.faults[i], field, v)
                });
            }
            self.shrink_ppm(
                &|s| match &s.faults[i] {
                    Fault::DriftChange { drift_ppm, .. } => Some(*drift_ppm),
                    _ => None,
                },
                &|s, v| {
                    if let Fault::DriftChange { drift_ppm, .. } = &mut s.faults[i] {
                        *drift_ppm = v;
                    }
                },
            );
        }
    }

    /// Pass 3: the drift spread, then each node's own drift, toward 0.
    fn drifts(&mut self) {
        self.shrink_ppm(&|s| Some(s.clocks.drift_spread_ppm), &|s, v| {
            s.clocks.drift_spread_ppm = v
        });
        for i in 0..self.cur.nodes.len() {
            self.shrink_ppm(&|s| s.nodes[i].drift_ppm, &|s, v| {
                s.nodes[i].drift_ppm = Some(v)
            });
        }
    }

    /// Pass 4: each fault's start to a round time: the earlier, else the nearest multiple of
    /// 1 s, 100 ms, 10 ms, 1 ms, the first that still fails.
    fn round_times(&mut self) {
        for i in 0..self.cur.faults.len() {
            let at = self.cur.faults[i].at().ns();
            'grains: for g in [NS_PER_S, 100 * NS_PER_MS, 10 * NS_PER_MS, NS_PER_MS] {
                let floor = at.div_euclid(g) * g;
                if floor == at {
                    break; // a multiple of g is one of every finer grain
                }
                let nearest = (at + g / 2).div_euclid(g) * g;
                for t in [floor, nearest] {
                    let mut c = self.cur.clone();
                    *c.faults[i].at_mut() = Dur::from_ns(t);
                    if self.accept(c) {
                        break 'grains;
                    }
                    if nearest == floor {
                        break;
                    }
                }
            }
        }
    }

    /// Pass 5: each node no fault needs, last first.
    fn nodes(&mut self) {
        for i in (0..self.cur.nodes.len()).rev() {
            if let Some(c) = without_node(&self.cur, i) {
                self.accept(c);
            }
        }
    }

    /// Pass 6: the run's duration, in whole ms above the last start, then whole seconds.
    fn run_length(&mut self) {
        let s = &self.cur;
        let last = s
            .faults
            .iter()
            .map(|f| f.at().ns())
            .chain(s.nodes.iter().map(|n| n.start.ns()))
            .max()
            .unwrap_or(0)
            .max(0);
        let v = s.duration.ns();
        if v <= 0 {
            return;
        }
        let g = grain(v);
        let top = ceil_div(v, g);
        let make = |s: &Scenario, k: i64| {
            let mut c = s.clone();
            c.duration = Dur::from_ns(k.saturating_mul(g).min(v));
            c
        };
        let k = self.least(last / g + 1, top, &make);
        let per_s = NS_PER_S / g;
        let mut rounder = Vec::new();
        if per_s > 1 {
            rounder.push(ceil_div(k, per_s) * per_s);
        }
        rounder.extend(readable(k));
        self.round_up(k, top, &rounder, &make);
    }
}

/// a / b rounded up, for a >= 0 and b > 0.
fn ceil_div(a: i64, b: i64) -> i64 {
    a / b + i64::from(a % b != 0)
}

/// The grain a span of `v` ns is searched in: 1 ms from 1 ms, else 1 us from 1 us, else 1 ns.
fn grain(v: i64) -> i64 {
    if v >= NS_PER_MS {
        NS_PER_MS
    } else if v >= NS_PER_US {
        NS_PER_US
    } else {
        1
    }
}

/// Rounder values just above `k` (a count of grains): one significant digit when that adds at
/// most a tenth, then two (which always does).
fn readable(k: i64) -> Vec<i64> {
    let mut out = Vec::new();
    if k <= 0 {
        return out;
    }
    let digits = k.ilog10() + 1;
    for sig in [1, 2] {
        if digits <= sig {
            continue;
        }
        let p = 10i64.pow(digits - sig);
        let r = ceil_div(k, p) * p;
        if r != k && (r - k) * 10 <= k && !out.contains(&r) {
            out.push(r);
        }
    }
    out
}

/// A searched span of a fault.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Field {
    /// The window's or the pause's length.
    Length,
    /// A `DelaySpike`'s extra delay.
    Extra,
    /// A `ClockStep`'s step.
    By,
}

const FIELDS: [Field; 3] = [Field::Length, Field::Extra, Field::By];

fn get_ns(f: &Fault, field: Field) -> Option<i64> {
    match (f, field) {
        (
            Fault::Pause { duration, .. }
            | Fault::ThreadStall { duration, .. }
            | Fault::DiskStall { duration, .. }
            | Fault::Partition { duration, .. }
            | Fault::OneWay { duration, .. }
            | Fault::DelaySpike { duration, .. }
            | Fault::Drop { duration, .. },
            Field::Length,
        ) => Some(duration.ns()),
        (Fault::DelaySpike { extra, .. }, Field::Extra) => Some(extra.ns()),
        (Fault::ClockStep { by, .. }, Field::By) => Some(by.ns()),
        _ => None,
    }
}

fn set_ns(f: &mut Fault, field: Field, ns: i64) {
    match (f, field) {
        (
            Fault::Pause { duration, .. }
            | Fault::ThreadStall { duration, .. }
            | Fault::DiskStall { duration, .. }
            | Fault::Partition { duration, .. }
            | Fault::OneWay { duration, .. }
            | Fault::DelaySpike { duration, .. }
            | Fault::Drop { duration, .. },
            Field::Length,
        ) => *duration = Dur::from_ns(ns),
        (Fault::DelaySpike { extra, .. }, Field::Extra) => *extra = Dur::from_ns(ns),
        (Fault::ClockStep { by, .. }, Field::By) => *by = LocalDur::from_ns(ns),
        _ => {}
    }
}

/// The faults as ddmin's units, in order of their first fault: each Crash with its Restart
/// (the first Restart of the node after it, by time then index, as validation orders them),
/// every other fault alone.
fn units(faults: &[Fault]) -> Vec<Vec<usize>> {
    let mut life: BTreeMap<&str, Vec<(Dur, bool, usize)>> = BTreeMap::new();
    for (i, f) in faults.iter().enumerate() {
        match f {
            Fault::Crash { node, at } => {
                life.entry(node).or_default().push((at.offset(), false, i))
            }
            Fault::Restart { node, at } => {
                life.entry(node).or_default().push((at.offset(), true, i))
            }
            _ => {}
        }
    }
    let mut partner = BTreeMap::new();
    for events in life.values_mut() {
        events.sort_by_key(|e| e.0);
        let mut down = None;
        for &(_, restart, i) in events.iter() {
            match (restart, down) {
                (false, _) => down = Some(i),
                (true, Some(crash)) => {
                    partner.insert(crash, i);
                    down = None;
                }
                (true, None) => {}
            }
        }
    }
    let restarts: BTreeSet<usize> = partner.values().copied().collect();
    (0..faults.len())
        .filter(|i| !restarts.contains(i))
        .map(|i| match partner.get(&i) {
            Some(&r) => vec![i, r],
            None => vec![i],
        })
        .collect()
}

/// `s` without node `i`, if no fault needs it: taken out of `Partition` groups and of
/// `from`/`to` lists it is not alone in.
fn without_node(s: &Scenario, i: usize) -> Option<Scenario> {
    let name = s.nodes[i].name.clone();
    let mut c = s.clone();
    c.nodes.remove(i);
    for f in &mut c.faults {
        if f.after().is_some_and(|a| a.node.as_ref() == Some(&name)) {
            return None; // its moments are the node's
        }
        match f {
            Fault::Pause { node, .. }
            | Fault::ThreadStall { node, .. }
            | Fault::DiskStall { node, .. }
            | Fault::Crash { node, .. }
            | Fault::Restart { node, .. }
            | Fault::ClockStep { node, .. }
            | Fault::DriftChange { node, .. }
            | Fault::StepDown { node, .. }
            | Fault::TransferLeader { to: node, .. } => {
                if *node == name {
                    return None;
                }
            }
            Fault::OneWay { from, to, .. } => {
                if *from == name || *to == name {
                    return None;
                }
            }
            Fault::Partition { groups, .. } => {
                for g in groups.iter_mut() {
                    g.retain(|n| *n != name);
                }
                groups.retain(|g| !g.is_empty());
            }
            Fault::DelaySpike { from, to, .. } | Fault::Drop { from, to, .. } => {
                for list in [from, to].into_iter().flatten() {
                    if list.contains(&name) {
                        list.retain(|n| *n != name);
                        if list.is_empty() {
                            return None;
                        }
                    }
                }
            }
        }
    }
    Some(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::PauseKind;

    fn ms(v: i64) -> Dur {
        Dur::from_ms(v)
    }

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|n| n.to_string()).collect()
    }

    /// Five nodes (`lock`, contenders `a` to `d`), 60 s, CachedBool, drifts, and 40 faults of
    /// every kind: one pause of `a` of at least 3 s (4.5678 s at 12.345678 s), one clock step
    /// (of `b`, -250.5 ms at 33.3337 s), and 38 others.
    fn forty() -> Scenario {
        let mut s = Scenario::from_ron(
            r#"Scenario(
                duration: "60s",
                lease: (duration: "10s"),
                strategy: CachedBool,
                clocks: (drift_spread_ppm: 30.0),
                nodes: [
                    (name: "lock", role: Grantor, drift_ppm: 12.5),
                    (name: "a", role: Contender, drift_ppm: -73.0),
                    (name: "b", role: Contender, start: "100ms"),
                    (name: "c", role: Contender, drift_ppm: 250.0),
                    (name: "d", role: Contender),
                ],
            )"#,
        )
        .unwrap();
        let pause = |node: &str, at: i64, len: i64| Fault::Pause {
            node: node.into(),
            at: ms(at).into(),
            duration: ms(len),
            kind: PauseKind::Gc,
            clock: None,
        };
        let mut f = Vec::new();
        for i in 0..6 {
            f.push(pause("a", 1_000 + 7_000 * i, 2_999)); // a's short pauses
            f.push(pause("c", 1_500 + 7_000 * i, 5_000)); // long pauses of another node
        }
        for i in 0..4 {
            let at = 2_000 + 11_000 * i;
            f.push(Fault::Crash {
                node: "d".into(),
                at: ms(at).into(),
            });
            f.push(Fault::DriftChange {
                node: "c".into(),
                at: ms(at + 100).into(),
                drift_ppm: -35.5,
            });
            f.push(Fault::Restart {
                node: "d".into(),
                at: ms(at + 3_000).into(),
            });
            f.push(Fault::Partition {
                at: ms(at + 500).into(),
                duration: ms(1_234),
                groups: vec![names(&["c"]), names(&["lock", "d"])],
            });
            f.push(Fault::DelaySpike {
                at: ms(at + 700).into(),
                duration: ms(800),
                extra: ms(33),
                from: Some(names(&["c", "d"])),
                to: None,
                kinds: None,
            });
            f.push(Fault::Drop {
                at: ms(at + 900).into(),
                duration: ms(450),
                from: None,
                to: Some(names(&["d"])),
                kinds: None,
            });
        }
        f.insert(
            17,
            Fault::Pause {
                node: "a".into(),
                at: Dur::from_ns(12_345_678_000).into(),
                duration: ms(4_567) + Dur::from_us(800),
                kind: PauseKind::Gc,
                clock: None,
            },
        );
        f.insert(
            30,
            Fault::ClockStep {
                node: "b".into(),
                at: Dur::from_us(33_333_700).into(),
                by: LocalDur::from_us(-250_500),
            },
        );
        f.push(Fault::OneWay {
            from: "c".into(),
            to: "lock".into(),
            at: ms(50_000).into(),
            duration: ms(2_000),
        });
        f.push(Fault::DelaySpike {
            at: ms(55_000).into(),
            duration: ms(1_000),
            extra: ms(10),
            from: None,
            to: None,
            kinds: None,
        });
        s.faults = f;
        assert_eq!(s.faults.len(), 40);
        assert_eq!(validate(&s), Vec::<String>::new());
        s
    }

    /// Fails iff a pause of `a` lasts at least 3 s and some clock step is there.
    fn pause_and_step(s: &Scenario) -> bool {
        let pause = s.faults.iter().any(|f| {
            matches!(f, Fault::Pause { node, duration, .. }
                if node == "a" && *duration >= Dur::from_secs(3))
        });
        let step = s
            .faults
            .iter()
            .any(|f| matches!(f, Fault::ClockStep { .. }));
        pause && step
    }

    #[test]
    fn a_synthetic_predicate_shrinks_to_its_two_faults() {
        let s = forty();
        assert!(pause_and_step(&s));
        let out = shrink(s.clone(), &pause_and_step);
        let r = &out.scenario;
        // Exactly the two faults, in the file's order: the pause searched down to 3 s, the
        // step's magnitude to 1 ms (its sign kept), both starts floored to the second.
        assert_eq!(
            r.faults,
            vec![
                Fault::Pause {
                    node: "a".into(),
                    at: Dur::from_secs(12).into(),
                    duration: Dur::from_secs(3),
                    kind: PauseKind::Gc,
                    clock: None,
                },
                Fault::ClockStep {
                    node: "b".into(),
                    at: Dur::from_secs(33).into(),
                    by: LocalDur::from_ms(-1),
                },
            ]
        );
        // c and d play no part: gone; lock (the one Grantor), a and b are needed.
        let kept: Vec<&str> = r.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(kept, ["lock", "a", "b"]);
        // Drifts to 0, the spread too; b keeps its start.
        assert_eq!(r.clocks.drift_spread_ppm, 0.0);
        let drifts: Vec<Option<f64>> = r.nodes.iter().map(|n| n.drift_ppm).collect();
        assert_eq!(drifts, [Some(0.0), Some(0.0), None]);
        assert_eq!(r.nodes[2].start, ms(100));
        // The run: the least whole ms after the last start (33.001 s), then whole seconds.
        assert_eq!(r.duration, Dur::from_secs(34));
        assert!(pause_and_step(r));
        assert_eq!(validate(r), Vec::<String>::new());
        // Runs: within the documented worst case, and far below it (72 when written: the
        // searches are logarithmic; one linear search of the pause in ms would take 1500 runs).
        let bound = worst_case(&s);
        assert!(out.runs <= bound, "{} runs, bound {bound}", out.runs);
        assert!(out.runs <= 100, "{} runs", out.runs);
        assert!(out.runs > 0);
    }

    #[test]
    fn a_budget_of_runs_stops_at_it_with_the_smallest_failing_so_far() {
        // ddmin over `forty`'s 36 units (its 4 Crash/Restart pairs are one unit each): run 1 is
        // no fault at all (passes); runs 2 and 3 the two halves, the pause (fault 17) in the
        // first and the step (fault 30) in the second; runs 4 to 7 the four quarters alone, none
        // with both; run 8 all but the first quarter, which holds neither: it fails, the first
        // reduction. So 7 runs leave all 40 faults, and 8 take the first quarter away.
        let (seven, eight) = (
            shrink_within(forty(), &pause_and_step, &Budget::runs(7)),
            shrink_within(forty(), &pause_and_step, &Budget::runs(8)),
        );
        assert_eq!((seven.runs, seven.stopped), (7, Some(Stopped::Runs)));
        assert_eq!(seven.scenario.faults.len(), 40);
        assert_eq!((eight.runs, eight.stopped), (8, Some(Stopped::Runs)));
        assert!(eight.scenario.faults.len() < 40);
        assert!(pause_and_step(&eight.scenario));
        assert_eq!(validate(&eight.scenario), Vec::<String>::new());
        // The same budget, the same bytes.
        let again = shrink_within(forty(), &pause_and_step, &Budget::runs(8));
        assert_eq!(again.scenario.to_ron(), eight.scenario.to_ron());
        // A budget above what the shrink needs changes nothing and is not said to have stopped.
        let free = shrink(forty(), &pause_and_step);
        let roomy = shrink_within(forty(), &pause_and_step, &Budget::runs(free.runs));
        assert_eq!(roomy.stopped, None);
        assert_eq!(roomy.runs, free.runs);
        assert_eq!(roomy.scenario.to_ron(), free.scenario.to_ron());
    }

    #[test]
    fn a_budget_of_events_stops_before_the_run_that_would_pass_it() {
        // Each run costs its scenario's faults x 1000 events: the first (no fault) 0, the two
        // halves of `forty`'s 36 units (see the test above) 20 000 each (the halves split the
        // faults 20 / 20), so 40 000 after three runs. A budget of 40 000 events lets three runs
        // go and stops the fourth; one of 40 001 lets the fourth go too.
        let spent = std::sync::atomic::AtomicU64::new(0);
        let costly = |c: &Scenario| {
            let cost = c.faults.len() as u64 * 1000;
            spent.fetch_add(cost, std::sync::atomic::Ordering::Relaxed);
            pause_and_step(c)
        };
        let events_spent = || spent.load(std::sync::atomic::Ordering::Relaxed);
        let within = |events: u64| {
            spent.store(0, std::sync::atomic::Ordering::Relaxed);
            let budget = Budget {
                events,
                events_spent: Some(&events_spent),
                ..Budget::runs(MAX_RUNS)
            };
            let out = shrink_within(forty(), &costly, &budget);
            (out.runs, out.stopped, events_spent())
        };
        assert_eq!(within(40_000), (3, Some(Stopped::Events), 40_000));
        let (runs, stopped, _) = within(40_001);
        assert!(runs > 3, "{runs}");
        assert_eq!(stopped, Some(Stopped::Events));
    }

    #[test]
    fn a_deadline_stops_the_shrink_when_it_says_the_time_is_up() {
        // A deadline that is up from its fourth question on: 3 runs, then a stop for time.
        let asked = std::sync::atomic::AtomicU64::new(0);
        let up = || asked.fetch_add(1, std::sync::atomic::Ordering::Relaxed) >= 3;
        let budget = Budget {
            out_of_time: Some(&up),
            ..Budget::runs(MAX_RUNS)
        };
        let out = shrink_within(forty(), &pause_and_step, &budget);
        assert_eq!((out.runs, out.stopped), (3, Some(Stopped::Time)));
        assert!(pause_and_step(&out.scenario));
    }

    #[test]
    fn the_same_input_shrinks_the_same_way() {
        let one = shrink(forty(), &pause_and_step);
        let two = shrink(forty(), &pause_and_step);
        assert_eq!(one.scenario.to_ron(), two.scenario.to_ron());
        assert_eq!(one.runs, two.runs);
    }

    #[test]
    fn a_restart_goes_alone_and_a_crash_never_does() {
        // Fails iff c crashes: the Crash/Restart pair of d goes as a unit, c's Restart alone.
        let mut s = forty();
        s.faults.retain(|f| {
            matches!(
                f,
                Fault::Crash { .. } | Fault::Restart { .. } | Fault::Pause { .. }
            )
        });
        s.faults.push(Fault::Crash {
            node: "c".into(),
            at: ms(40_500).into(),
        });
        s.faults.push(Fault::Restart {
            node: "c".into(),
            at: ms(47_250).into(),
        });
        let crashes_c = |s: &Scenario| {
            s.faults
                .iter()
                .any(|f| matches!(f, Fault::Crash { node, .. } if node == "c"))
        };
        let out = shrink(s, &crashes_c);
        assert_eq!(
            out.scenario.faults,
            vec![Fault::Crash {
                node: "c".into(),
                at: ms(40_000).into(),
            }]
        );
        let kept: Vec<&str> = out.scenario.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(kept, ["lock", "c"]);
    }

    #[test]
    fn readable_rounds_up_by_at_most_a_tenth() {
        assert_eq!(readable(6_671), [7_000, 6_700]);
        assert_eq!(readable(6_613), [7_000, 6_700]);
        assert_eq!(readable(6_013), [6_100]);
        assert_eq!(readable(3_000), Vec::<i64>::new());
        assert_eq!(readable(1_234), [1_300]);
        assert_eq!(readable(9), Vec::<i64>::new());
        assert_eq!(readable(37), [40]);
    }

    /// Two pauses of `a` (10 s and 20 s, 2 s each) and a step of `b` at 40 s; T = 10 s.
    fn two_pauses_and_a_step() -> Scenario {
        Scenario::from_ron(
            r#"Scenario(
                duration: "60s",
                lease: (duration: "10s"),
                strategy: CachedBool,
                nodes: [
                    (name: "lock", role: Grantor),
                    (name: "a", role: Contender),
                    (name: "b", role: Contender, start: "100ms"),
                ],
                faults: [
                    Pause(node: "a", at: "10s", duration: "2s"),
                    Pause(node: "a", at: "20s", duration: "2s"),
                    ClockStep(node: "b", at: "40s", by: "-1s"),
                ],
            )"#,
        )
        .unwrap_or_else(|e| panic!("{e}"))
    }

    /// Whether some pause of `a` in `s` covers the instant `t_s` (in seconds).
    fn a_paused_at(s: &Scenario, t_s: i64) -> bool {
        let t = t_s * NS_PER_S;
        s.faults.iter().any(|f| match f {
            Fault::Pause { node, duration, .. } => {
                node == "a" && f.at().ns() <= t && t < f.at().ns() + duration.ns()
            }
            _ => false,
        })
    }

    #[test]
    fn a_fault_needed_only_where_another_is_goes_when_that_one_moves_and_grows() {
        // Fails while a is paused at 11 s and at 21 s and b's clock is stepped. Each removal
        // alone passes, so ddmin keeps all three. Re-placing, the last unit first: without the
        // step nothing fails; without the pause of 20 s, the pause of 10 s moved to 20 s, 22 s,
        // 5 s, 7.5 s, 12.5 s, 15 s (by -T/2, -T/4, +T/4, +T/2), at 2 s or at the largest, 12 s,
        // never covers both; without the pause of 10 s, the pause of 20 s moved to 10 s (the
        // removed one's start) and grown to 12 s covers [10 s, 22 s): it fails. Shortened,
        // the pause must last past 21 s: 11.001 s, rounded up to 12 s (a tenth of 11.001 s
        // allows 1.1 s); the step, to 1 ms.
        let fails = |s: &Scenario| {
            a_paused_at(s, 11)
                && a_paused_at(s, 21)
                && s.faults
                    .iter()
                    .any(|f| matches!(f, Fault::ClockStep { .. }))
        };
        let largest = |f: &Fault| match f {
            Fault::Pause { .. } => {
                let mut g = f.clone();
                set_ns(&mut g, Field::Length, 12 * NS_PER_S);
                Some(g)
            }
            _ => None,
        };
        let out = shrink_placing(
            two_pauses_and_a_step(),
            &fails,
            &Budget::runs(MAX_RUNS),
            Some(&largest),
        );
        let f = &out.scenario.faults;
        assert_eq!(f.len(), 2, "{f:?}");
        assert!(matches!(&f[0], Fault::Pause { duration, .. }
            if f[0].at() == Dur::from_secs(10) && *duration == Dur::from_secs(12)));
        assert!(matches!(&f[1], Fault::ClockStep { by, .. } if by.ns() == -NS_PER_MS));
        assert!(out.runs <= worst_case(&two_pauses_and_a_step()));
        // With nothing the caller can size, nothing moves: three faults.
        let out = shrink_placing(
            two_pauses_and_a_step(),
            &fails,
            &Budget::runs(MAX_RUNS),
            Some(&|_: &Fault| None),
        );
        assert_eq!(out.scenario.faults.len(), 3);
        // shrink_within has no re-place pass: three faults too.
        let out = shrink_within(two_pauses_and_a_step(), &fails, &Budget::runs(MAX_RUNS));
        assert_eq!(out.scenario.faults.len(), 3);
    }

    /// A GC pause of `node` at `at` for `duration`.
    fn gc_pause(node: &str, at: Dur, duration: Dur) -> Fault {
        Fault::Pause {
            node: node.into(),
            at: at.into(),
            duration,
            kind: PauseKind::Gc,
            clock: None,
        }
    }

    #[test]
    fn a_fault_that_only_delayed_the_others_goes_with_its_gap_closed() {
        // A timeline the pauses of a delay: it fails when a step of b falls 18 s to 18.5 s of
        // a's running time in (its true time less a's pauses before it), with a pause of a.
        // Pauses of a at 5 s (2 s) and 10 s (1 s), the step at 21 s: 21 - 3 = 18, it fails;
        // without the first 21 - 1 = 20, without the second 21 - 2 = 19: ddmin keeps all three.
        // Re-placing the last unit first: the step has no length; the pause of 10 s removed
        // with its gap closed moves the step 1 s earlier, to 20 s: 20 - 2 = 18, it fails. Moving
        // one fault instead never does (a pause moved keeps the 2 s or 1 s before the step; the
        // step to 10 s, 11 s, 16 s, 18.5 s, 23.5 s or 26 s gives 8, 9, 14, 16.5, 21.5 or 24 s
        // with the pause of 5 s). Shortened: the pause must exceed 1.5 s.
        let running_ns = |s: &Scenario, t: i64| {
            let paused: i64 = s
                .faults
                .iter()
                .filter_map(|f| match f {
                    Fault::Pause { node, duration, .. } if node == "a" && f.at().ns() < t => {
                        Some(duration.ns())
                    }
                    _ => None,
                })
                .sum();
            t - paused
        };
        let fails = |s: &Scenario| {
            let paused = s.faults.iter().any(|f| matches!(f, Fault::Pause { .. }));
            paused
                && s.faults.iter().any(|f| {
                    matches!(f, Fault::ClockStep { .. })
                        && (18 * NS_PER_S..18 * NS_PER_S + NS_PER_S / 2)
                            .contains(&running_ns(s, f.at().ns()))
                })
        };
        let mut s = two_pauses_and_a_step();
        s.faults = vec![
            gc_pause("a", Dur::from_secs(5), Dur::from_secs(2)),
            gc_pause("a", Dur::from_secs(10), Dur::from_secs(1)),
            Fault::ClockStep {
                node: "b".into(),
                at: Dur::from_secs(21).into(),
                by: LocalDur::from_ns(-NS_PER_S),
            },
        ];
        assert!(fails(&s));
        // Every fault can move, at its own size (none grows).
        let largest = |f: &Fault| Some(f.clone());
        let out = shrink_placing(s.clone(), &fails, &Budget::runs(MAX_RUNS), Some(&largest));
        let f = &out.scenario.faults;
        assert_eq!(f.len(), 2, "{f:?}");
        assert!(matches!(&f[0], Fault::Pause { duration, .. }
            if f[0].at() == Dur::from_secs(5) && duration.ns() > 1_500 * NS_PER_MS));
        assert!(matches!(&f[1], Fault::ClockStep { .. } if f[1].at() == Dur::from_secs(20)));
        assert!(out.runs <= worst_case(&s));
        // Without the re-place pass: three.
        let out = shrink_within(s, &fails, &Budget::runs(MAX_RUNS));
        assert_eq!(out.scenario.faults.len(), 3);
    }

    /// The shrink of [`a_pause_goes_with_the_gap_it_held_a_scheduled_fault_up_by_closed`]'s
    /// story with `bystander` (which the failure needs too): its faults.
    fn held_up(bystander: Fault) -> Vec<Fault> {
        let scheduled =
            |f: &Fault| matches!(f, Fault::DriftChange { drift_ppm, .. } if *drift_ppm == 10.0);
        let effective_ns = |s: &Scenario, t: i64| {
            s.faults
                .iter()
                .filter(|f| matches!(f, Fault::Pause { node, .. } if node == "a"))
                .filter_map(|f| {
                    let end = f.at().ns() + get_ns(f, Field::Length)?;
                    (f.at().ns() <= t && t < end).then_some(end)
                })
                .max()
                .unwrap_or(t)
        };
        let by = bystander.clone();
        let is_bystander = move |f: &Fault| match (f, &by) {
            (Fault::DriftChange { .. }, Fault::DriftChange { .. }) => !scheduled(f),
            // Off the whole seconds, so that rounding never puts it where a's pause starts.
            (Fault::Pause { node, .. }, Fault::Pause { node: b, .. }) => {
                node == b && f.at().ns() % NS_PER_S != 0
            }
            _ => false,
        };
        let fails = |s: &Scenario| {
            let f = &s.faults;
            let Some(at) = f.iter().find(|f| scheduled(f)).map(|f| f.at().ns()) else {
                return false;
            };
            let at = effective_ns(s, at);
            f.iter().any(&is_bystander)
                && f.iter().any(|f| {
                    matches!(f, Fault::ClockStep { .. })
                        && (3 * NS_PER_S..3 * NS_PER_S + NS_PER_S / 2).contains(&(f.at().ns() - at))
                })
        };
        let mut s = two_pauses_and_a_step();
        s.faults = vec![
            bystander,
            gc_pause("a", Dur::from_secs(5), Dur::from_secs(2)),
            Fault::DriftChange {
                node: "lock".into(),
                at: Dur::from_secs(6).into(),
                drift_ppm: 10.0,
            },
            Fault::ClockStep {
                node: "b".into(),
                at: Dur::from_secs(10).into(),
                by: LocalDur::from_ns(-NS_PER_S),
            },
        ];
        assert!(fails(&s));
        let largest = |f: &Fault| (!matches!(f, Fault::DriftChange { .. })).then(|| f.clone());
        let out = shrink_placing(s.clone(), &fails, &Budget::runs(MAX_RUNS), Some(&largest));
        assert!(out.runs <= worst_case(&s));
        let f = out.scenario.faults;
        assert!(f
            .iter()
            .any(|f| scheduled(f) && f.at() == Dur::from_secs(6)));
        f
    }

    #[test]
    fn a_pause_goes_with_the_gap_it_held_a_scheduled_fault_up_by_closed() {
        // A scheduled fault (a drift change of the grantor to 10 ppm at 6 s, which no mover is:
        // `largest` sizes only pauses and steps) takes effect when a pause of a covering it
        // ends. It fails when a step of b comes 3 s to 3.5 s after that, and a bystander is
        // there. The pause of a at 5 s (2 s) holds the drift change up to 7 s, the step at
        // 10 s: 10 - 7 = 3, it fails; without the pause 10 - 6 = 4: ddmin keeps all four.
        // Removed with its gap closed by its length the step goes to 8 s (8 - 6 = 2), opened to
        // 12 s (6); moved alone, to 5 s, 7 s, 5 s, 7.5 s, 12.5 s or 15 s (T = 10 s), never 3 s
        // to 3.5 s after 6 s. Closed by what it held the drift change up, 7 - 6 = 1 s: the step
        // at 9 s, 9 - 6 = 3, it fails.
        let a_gone = |f: &[Fault]| {
            f.len() == 3
                && !f
                    .iter()
                    .any(|f| matches!(f, Fault::Pause { node, .. } if node == "a"))
                && f.iter()
                    .any(|f| matches!(f, Fault::ClockStep { .. }) && f.at() == Dur::from_secs(9))
        };
        // Another drift change at 5 s, where a's pause starts: held up by the whole pause, the
        // shift already tried; the one at 6 s is the first after it.
        let f = held_up(Fault::DriftChange {
            node: "lock".into(),
            at: Dur::from_secs(5).into(),
            drift_ppm: 20.0,
        });
        assert!(a_gone(&f), "{f:?}");
        // A 100 ms pause of b at 5.5 s (anywhere off the whole seconds), a mover inside a's
        // pause: its start is its own, not held up (it moves with the step, to 4.5 s).
        let f = held_up(gc_pause("b", Dur::from_ms(5_500), Dur::from_ms(100)));
        assert!(a_gone(&f), "{f:?}");
    }

    /// The CachedBool story with a 12 s GC pause of the holder `a` at 20 s, and 20 faults that
    /// do not matter (on b, short cuts, drift changes).
    fn cached_bool_pause() -> Scenario {
        Scenario::from_ron(
            r#"Scenario(
                duration: "60s",
                lease: (duration: "10s"),
                strategy: CachedBool,
                nodes: [
                    (name: "lock", role: Grantor),
                    (name: "a", role: Contender),
                    (name: "b", role: Contender, start: "100ms", drift_ppm: 40.0),
                ],
                network: (delay: Fixed("1ms")),
                faults: [
                    ClockStep(node: "b", at: "1.5s", by: "200ms"),
                    DriftChange(node: "b", at: "2s", drift_ppm: 80.0),
                    Partition(at: "2.5s", duration: "400ms", groups: [["b"], ["lock", "a"]]),
                    Pause(node: "b", at: "3s", duration: "300ms"),
                    ClockStep(node: "b", at: "4.2s", by: "-300ms"),
                    OneWay(from: "b", to: "lock", at: "5s", duration: "700ms"),
                    Crash(node: "b", at: "6s"),
                    Restart(node: "b", at: "7s"),
                    DelaySpike(at: "8s", duration: "1s", extra: "5ms", to: ["b"]),
                    ClockStep(node: "b", at: "9.9s", by: "1s"),
                    Partition(at: "11s", duration: "500ms", groups: [["a"], ["lock"]]),
                    DriftChange(node: "b", at: "12.5s", drift_ppm: -60.0),
                    Pause(node: "a", at: "20s", duration: "12s"),
                    Drop(at: "14s", duration: "200ms", from: ["b"]),
                    ClockStep(node: "b", at: "15.5s", by: "-1.5s"),
                    Pause(node: "b", at: "17s", duration: "1s"),
                    ClockStep(node: "b", at: "35s", by: "2s"),
                    DriftChange(node: "b", at: "40s", drift_ppm: 10.0),
                    Partition(at: "45s", duration: "1s", groups: [["b"], ["lock", "a"]]),
                    DelaySpike(at: "50s", duration: "2s", extra: "100ms"),
                    OneWay(from: "lock", to: "b", at: "52s", duration: "3s"),
                ],
            )"#,
        )
        .unwrap()
    }

    fn overlaps(s: &Scenario) -> bool {
        crate::run("shrink", s).is_ok_and(|o| o.summary.overlap.count > 0)
    }

    #[test]
    fn the_engine_keeps_only_the_pause_at_its_threshold() {
        let s = cached_bool_pause();
        assert_eq!(validate(&s), Vec::<String>::new());
        assert!(overlaps(&s));
        let out = shrink(s, &overlaps);
        let r = &out.scenario;
        // a's grant arrives at 2 ms (Acquire at 0, 1 ms each way); it renews every T/3 =
        // 3.333333333 s from there: ..., 16.668666665 s, then 20.001999998 s, inside the pause.
        // The grantor hears the last renewal at 16.669666665 s and frees the lease at
        // 26.669666665 s; b (queued since 100 ms) gets the grant at 26.670666665 s. a's bool is
        // cleared only when its renewal timer runs on resume at 20 s + d: an overlap iff
        // 20 + d > 26.670666665, so the least whole-ms pause is 6.671 s (6.670 s resumes
        // first and clears the bool before b's grant), and 7 s is its one-digit round-up
        // (+329 ms, under a tenth), which still overlaps.
        let pause = |d: i64| {
            let mut c = r.clone();
            if let Fault::Pause { duration, .. } = &mut c.faults[0] {
                *duration = ms(d);
            }
            c
        };
        assert!(overlaps(&pause(6_671)));
        assert!(!overlaps(&pause(6_670)));
        assert_eq!(
            r.faults,
            vec![gc_pause("a", Dur::from_secs(20), Dur::from_secs(7))]
        );
        // b is needed (the second believer); its drift does not matter.
        let kept: Vec<&str> = r.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(kept, ["lock", "a", "b"]);
        assert_eq!(r.nodes[2].drift_ppm, Some(0.0));
        // The run must reach b's grant at 26.670666665 s: the least is 26.671 s, and 27 s is
        // its whole-second round-up.
        assert_eq!(r.duration, Dur::from_secs(27));
        assert!(out.runs <= worst_case(&cached_bool_pause()));
        // 66 runs when written.
        assert!(out.runs <= 100, "{} runs", out.runs);
    }

    /// `forty`'s nodes with 50 pauses of `a`, 1.1 s each, 1.2 s apart, from 0.25 s.
    fn fifty_pauses() -> Scenario {
        let mut s = forty();
        s.faults = (0..50)
            .map(|i| Fault::Pause {
                node: "a".into(),
                at: ms(250 + 1_200 * i).into(),
                duration: ms(1_100),
                kind: PauseKind::Gc,
                clock: None,
            })
            .collect();
        assert_eq!(validate(&s), Vec::<String>::new());
        s
    }

    #[test]
    fn half_of_fifty_faults_stay_within_the_bound() {
        // Any 25 of the 50 pauses fail: ddmin must keep exactly 25, the costly case.
        let s = fifty_pauses();
        let half = |s: &Scenario| s.faults.len() >= 25;
        let out = shrink(s.clone(), &half);
        assert_eq!(out.scenario.faults.len(), 25);
        // 249 runs when written, against a worst case of 10 000 (the cap).
        assert!(out.runs <= worst_case(&s), "{} runs", out.runs);
        assert!(out.runs <= 400, "{} runs", out.runs);
        // Each pause then goes to 1 ms at a whole second: readable, and still 25 of them.
        for f in &out.scenario.faults {
            let Fault::Pause { at, duration, .. } = f else {
                panic!("{f:?}");
            };
            assert_eq!(*duration, ms(1));
            assert_eq!(at.ns() % NS_PER_S, 0, "{f:?}");
        }
    }

    #[test]
    fn a_predicate_with_no_order_ends_within_the_bound_still_failing() {
        // With 20 faults or more, fails for about half of all candidates, by a checksum of
        // their text: no search assumption holds, and still the shrink ends within its bound
        // on a valid scenario that fails.
        let chaos = |s: &Scenario| {
            let sum = s.to_ron().bytes().fold(0u64, |h, b| {
                h.wrapping_mul(1_099_511_628_211).wrapping_add(u64::from(b))
            });
            s.faults.len() == 50 || (s.faults.len() >= 20 && (sum >> 7) % 2 == 0)
        };
        let s = fifty_pauses();
        let out = shrink(s.clone(), &chaos);
        assert!(out.runs <= worst_case(&s), "{} runs", out.runs);
        assert!(out.runs > 20, "{} runs", out.runs);
        assert!(chaos(&out.scenario));
        assert_eq!(validate(&out.scenario), Vec::<String>::new());
        assert!((20..50).contains(&out.scenario.faults.len()));
        // The same again: deterministic even so.
        assert_eq!(shrink(s, &chaos).scenario.to_ron(), out.scenario.to_ron());
    }

    #[test]
    fn the_worst_case_counts_every_search_by_hand() {
        let mut s = Scenario::from_ron(
            r#"Scenario(
                duration: "10s",
                lease: (duration: "10s"),
                strategy: TwoSided(holder_margin: "100ms"),
                clocks: (drift_spread_ppm: 100.0),
                nodes: [
                    (name: "lock", role: Grantor),
                    (name: "a", role: Contender, drift_ppm: -5.0),
                    (name: "b", role: Contender),
                ],
                faults: [
                    Pause(node: "a", at: "5s", duration: "1s"),
                    Crash(node: "b", at: "6s"),
                    Restart(node: "b", at: "7s"),
                    DriftChange(node: "a", at: "2s", drift_ppm: 7.5),
                    ClockStep(node: "a", at: "3s", by: "-250ms"),
                    DelaySpike(at: "4s", duration: "300ms", extra: "3us"),
                ],
            )"#,
        )
        .unwrap();
        // A search of K grains costs 1 + bits(K) + 2. Six faults in five units (the crash
        // with its restart): ddmin 1 + 3 x 25 + 9 x 5 + 6 = 127; the pause, 1000 ms: 1 + 10 + 2
        // = 13; the drift change, 8 ppm: 7; the step, 250 ms: 11; the spike, 300 ms: 12, and
        // its extra, 3 us: 5; round times, 8 a fault: 48. The spread, 100 ppm: 10; a's drift,
        // 5 ppm: 6. Nodes: 3. The run, 10,000 ms: 17, and its whole seconds: 1.
        // 127 + 13 + 7 + 11 + 12 + 5 + 48 + 10 + 6 + 3 + 17 + 1 = 260 a round. Re-placing, from
        // at most 4 units down to 2: 12 x (4 x 3 + 3 x 2 + 2 x 1) = 240 moves, and each unit
        // removed with its gap closed, opened and closed by what it held up, 3 x (4 + 3 + 2) =
        // 27. Six rounds of 527.
        assert_eq!(worst_case(&s), 6 * (260 + 240 + 27));
        // Fifty units: 1 + 3 x 2500 + ... is more than the cap.
        let pause = s.faults[0].clone();
        s.faults = (0..50)
            .map(|i| {
                let mut p = pause.clone();
                *p.at_mut() = Dur::from_secs(i);
                p
            })
            .collect();
        assert_eq!(worst_case(&s), MAX_RUNS);
    }

    #[test]
    fn a_round_that_changed_something_is_followed_by_another() {
        // Fails with two faults in a run over 20 s, with one in a shorter run. Round 1 keeps
        // two faults (the run is 60 s) and then shortens the run to just past the later one
        // (2.001 s); only round 2 can then take one more fault away.
        let s = Scenario::from_ron(
            r#"Scenario(
                duration: "60s",
                lease: (duration: "10s"),
                strategy: TwoSided(holder_margin: "100ms"),
                nodes: [(name: "lock", role: Grantor), (name: "a", role: Contender)],
                faults: [
                    Pause(node: "a", at: "1s", duration: "1ms"),
                    Pause(node: "a", at: "2s", duration: "1ms"),
                    Pause(node: "a", at: "3s", duration: "1ms"),
                ],
            )"#,
        )
        .unwrap();
        let needs = |c: &Scenario| {
            let want = if c.duration > Dur::from_secs(20) {
                2
            } else {
                1
            };
            c.faults.len() >= want
        };
        let out = shrink(s, &needs);
        assert_eq!(out.scenario.faults.len(), 1);
        assert!(out.scenario.duration <= Dur::from_secs(20));
        assert_eq!(out.stopped, None);
    }

    #[test]
    fn a_budget_says_what_it_holds() {
        assert_eq!(
            format!("{:?}", Budget::runs(5)),
            "Budget { runs: 5, events: 18446744073709551615, deadline: false }"
        );
        let up = || true;
        let b = Budget {
            out_of_time: Some(&up),
            ..Budget::default()
        };
        assert_eq!(
            format!("{b:?}"),
            format!(
                "Budget {{ runs: {DEFAULT_BUDGET_RUNS}, events: {}, deadline: true }}",
                u64::MAX
            )
        );
    }

    /// `lock` and `a`, 60 s, with `faults` (RON).
    fn two_nodes(faults: &str) -> Scenario {
        Scenario::from_ron(&format!(
            r#"Scenario(
                duration: "60s",
                lease: (duration: "10s"),
                strategy: TwoSided(holder_margin: "100ms"),
                nodes: [
                    (name: "lock", role: Grantor),
                    (name: "a", role: Contender, drift_ppm: -73.0),
                ],
                faults: [{faults}],
            )"#
        ))
        .unwrap()
    }

    #[test]
    fn ddmin_tries_complements_first_and_keeps_what_is_left() {
        // Four pauses at 1 s to 4 s; the run fails while the pause at 2 s is in it.
        let s = two_nodes(
            r#"Pause(node: "a", at: "1s", duration: "1ms"),
               Pause(node: "a", at: "2s", duration: "1ms"),
               Pause(node: "a", at: "3s", duration: "1ms"),
               Pause(node: "a", at: "4s", duration: "1ms")"#,
        );
        let tried = std::sync::Mutex::new(Vec::new());
        let needs = |c: &Scenario| {
            let at: Vec<i64> = c
                .faults
                .iter()
                .map(|f| f.at().ns() / 1_000_000_000)
                .collect();
            let fails = at.contains(&2);
            tried.lock().expect("not poisoned").push(at);
            fails
        };
        let out = shrink(s, &needs);
        // No fault; then at n = 2 the complement of each half (the halves are each other's
        // complements, tried once): without the first half (3 s, 4 s) passes, without the
        // second (1 s, 2 s) fails and is kept; then n = 2 again over those two: without 1 s
        // (2 s alone) fails. Removing that last one alone is no fault at all, seen before.
        let tried = tried.lock().expect("not poisoned");
        assert_eq!(tried[..4], [vec![], vec![3, 4], vec![1, 2], vec![2]]);
        assert_eq!(out.scenario.faults.len(), 1);
        assert_eq!(out.scenario.faults[0].at(), Dur::from_secs(2));
    }

    #[test]
    fn a_search_never_rounds_above_where_it_started() {
        // The pause must stay at least 101 ms, from 105 ms: the search finds 101, and the
        // readable 110 (two digits) is above 105, so 101 it stays.
        let s = two_nodes(r#"Pause(node: "a", at: "1s", duration: "105ms")"#);
        let long = |c: &Scenario| {
            c.faults
                .iter()
                .any(|f| get_ns(f, Field::Length).is_some_and(|ns| ns >= 101_000_000))
        };
        let out = shrink(s, &long);
        assert_eq!(
            get_ns(&out.scenario.faults[0], Field::Length),
            Some(101_000_000)
        );
        // From 180 ms the same search finds 101 and rounds it to 110 (at most a tenth more).
        let s = two_nodes(r#"Pause(node: "a", at: "1s", duration: "180ms")"#);
        let out = shrink(s, &long);
        assert_eq!(
            get_ns(&out.scenario.faults[0], Field::Length),
            Some(110_000_000)
        );
    }

    #[test]
    fn a_drift_goes_to_the_least_whole_ppm_that_still_fails_its_sign_kept() {
        // a's drift of -73 ppm must stay at least 7 ppm fast or slow: it becomes -7 ppm (0
        // first, then a binary search of whole ppm).
        let s = two_nodes(r#"Pause(node: "a", at: "1s", duration: "1ms")"#);
        let drifting = |c: &Scenario| c.nodes[1].drift_ppm.is_some_and(|d| d.abs() >= 7.0);
        let out = shrink(s, &drifting);
        assert_eq!(out.scenario.nodes[1].drift_ppm, Some(-7.0));
        assert!(out.scenario.faults.is_empty());
    }

    /// The fault sets (by start, in seconds) a shrink of eight pauses at 1 s to 8 s asks
    /// about, in order, while the run fails with every pause of `needed` in it.
    fn asked(needed: &'static [i64]) -> Vec<Vec<i64>> {
        let faults: Vec<String> = (1..=8)
            .map(|s| format!(r#"Pause(node: "a", at: "{s}s", duration: "1ms")"#))
            .collect();
        let tried = std::sync::Mutex::new(Vec::new());
        let needs = |c: &Scenario| {
            let at: Vec<i64> = c
                .faults
                .iter()
                .map(|f| f.at().ns() / 1_000_000_000)
                .collect();
            let fails = needed.iter().all(|n| at.contains(n));
            tried.lock().expect("not poisoned").push(at);
            fails
        };
        shrink(two_nodes(&faults.join(", ")), &needs);
        tried.into_inner().expect("not poisoned")
    }

    #[test]
    fn ddmin_after_a_complement_goes_down_one_granularity() {
        // Needs 1 s and 8 s. n = 2: neither half. n = 4: no quarter alone; without the
        // second quarter (3 s, 4 s) fails: six left, n = 3. Alone each third was asked before;
        // without the second (5 s, 6 s) fails: four left, n = 2: both halves asked before, so
        // n = 4: no single alone; without 2 s fails, n = 3: without 7 s fails. 17 questions.
        let v = |x: &[i64]| x.to_vec();
        assert_eq!(
            asked(&[1, 8])[..17],
            [
                v(&[]),
                v(&[5, 6, 7, 8]),
                v(&[1, 2, 3, 4]),
                v(&[1, 2]),
                v(&[3, 4]),
                v(&[5, 6]),
                v(&[7, 8]),
                v(&[3, 4, 5, 6, 7, 8]),
                v(&[1, 2, 5, 6, 7, 8]),
                v(&[1, 2, 7, 8]),
                v(&[1]),
                v(&[2]),
                v(&[7]),
                v(&[8]),
                v(&[2, 7, 8]),
                v(&[1, 7, 8]),
                v(&[1, 8]),
            ]
        );
    }

    #[test]
    fn ddmin_doubles_its_granularity_when_nothing_goes() {
        // Needs 1 s, 3 s, 5 s and 7 s: one in each quarter, so n goes 2, 4, 8; at 8 every
        // single alone fails to fail, and without 2 s is the first reduction (question 21).
        let v = |x: &[i64]| x.to_vec();
        let asked = asked(&[1, 3, 5, 7]);
        let mut want = vec![
            v(&[]),
            v(&[5, 6, 7, 8]),
            v(&[1, 2, 3, 4]),
            v(&[1, 2]),
            v(&[3, 4]),
            v(&[5, 6]),
            v(&[7, 8]),
            v(&[3, 4, 5, 6, 7, 8]),
            v(&[1, 2, 5, 6, 7, 8]),
            v(&[1, 2, 3, 4, 7, 8]),
            v(&[1, 2, 3, 4, 5, 6]),
        ];
        want.extend((1..=8).map(|s| vec![s]));
        want.push(v(&[2, 3, 4, 5, 6, 7, 8]));
        want.push(v(&[1, 3, 4, 5, 6, 7, 8]));
        assert_eq!(asked[..21], want[..]);
    }

    #[test]
    fn a_drift_change_is_shortened_toward_zero() {
        let s = two_nodes(r#"DriftChange(node: "a", at: "1s", drift_ppm: 73.0)"#);
        let strong = |c: &Scenario| {
            c.faults.iter().any(
                |f| matches!(f, Fault::DriftChange { drift_ppm, .. } if drift_ppm.abs() >= 7.0),
            )
        };
        let out = shrink(s, &strong);
        assert!(matches!(
            out.scenario.faults[..],
            [Fault::DriftChange { drift_ppm, .. }] if drift_ppm == 7.0
        ));
    }

    #[test]
    fn a_start_goes_to_the_first_round_time_that_still_fails() {
        // (start, the window it must stay in, where it ends), in ns.
        let s = |x: f64| (x * 1e9).round() as i64;
        for (at, lo, hi, want) in [
            // 1 s: the floor (12 s) leaves the window, the nearest (13 s) does not.
            (12.7, 12.5, 13.000_001, 13.0),
            // 1 s fails both ways (12 s); 100 ms: the floor.
            (12.345_678, 12.3, 12.4, 12.3),
            // 10 ms: the floor; 100 ms's floor and nearest (12.3 s) were one.
            (12.345_678, 12.34, 12.35, 12.34),
            // 100 ms: the nearest, rounded up.
            (12.36, 12.4, 12.45, 12.4),
            // 1 ms: the nearest, 12.346 s.
            (12.345_678, 12.3455, 12.3465, 12.346),
            // No round time in the window: it stays.
            (12.345_678, 12.345_678, 12.345_679, 12.345_678),
        ] {
            let sc = two_nodes(&format!(
                r#"Pause(node: "a", at: "{}ns", duration: "1ms")"#,
                s(at)
            ));
            let inside = |c: &Scenario| {
                c.faults
                    .iter()
                    .any(|f| (s(lo)..s(hi)).contains(&f.at().ns()))
            };
            let out = shrink(sc, &inside);
            assert_eq!(
                out.scenario.faults[0].at().ns(),
                s(want),
                "{at} in [{lo}, {hi})"
            );
        }
    }

    #[test]
    fn a_run_ends_on_the_next_whole_second_after_its_last_fault() {
        // The last fault at 123.4556 s: the least run is 123.456 s (whole ms past it); rounded,
        // the next whole second, 124 s, comes before two significant digits (130 s).
        let s = Scenario {
            duration: Dur::from_secs(200),
            ..two_nodes(r#"Pause(node: "a", at: "123455600us", duration: "1ms")"#)
        };
        let asked = std::sync::Mutex::new(Vec::new());
        let any = |c: &Scenario| {
            asked.lock().expect("not poisoned").push(c.duration);
            !c.faults.is_empty()
        };
        let out = shrink(s, &any);
        assert_eq!(out.scenario.duration, Dur::from_secs(124));
        // The fault's start goes first, to the first round time that still fails (123 s, see
        // `a_start_goes_to_the_first_round_time_that_still_fails`); the first shorter run
        // asked about is then the least the search starts from: the first whole ms past that
        // start, 123000 + 1 = 123001 ms.
        let asked = asked.into_inner().expect("not poisoned");
        let first = asked.iter().find(|&&d| d < Dur::from_secs(200));
        assert_eq!(first, Some(&Dur::from_ms(123_001)));
    }

    #[test]
    fn a_span_is_searched_in_its_largest_whole_unit() {
        assert_eq!(grain(NS_PER_MS), NS_PER_MS);
        assert_eq!(grain(NS_PER_MS - 1), NS_PER_US);
        assert_eq!(grain(NS_PER_US), NS_PER_US);
        assert_eq!(grain(NS_PER_US - 1), 1);
        assert_eq!(grain(1), 1);
        assert_eq!((ceil_div(7, 2), ceil_div(8, 2), ceil_div(0, 3)), (4, 4, 0));
    }

    #[test]
    fn a_spikes_extra_delay_is_shortened_down_to_zero() {
        let s = two_nodes(r#"DelaySpike(at: "1s", duration: "50ms", extra: "300ms")"#);
        let extra_at_least = |ns: i64| {
            move |c: &Scenario| {
                c.faults
                    .iter()
                    .any(|f| get_ns(f, Field::Extra).is_some_and(|e| e >= ns))
            }
        };
        // Its length to 1 ms (a window is at least 1 ns long, and searched in ms), its extra
        // delay to the least that still fails: 7 ms, or 0 when any will do.
        for (least, want) in [(7_000_000, 7_000_000), (0, 0)] {
            let out = shrink(s.clone(), &extra_at_least(least));
            let f = &out.scenario.faults[0];
            assert_eq!(get_ns(f, Field::Length), Some(1_000_000));
            assert_eq!(get_ns(f, Field::Extra), Some(want));
        }
    }

    #[test]
    fn a_thread_stall_is_shortened_to_the_least_that_still_fails() {
        // A 7.3 s stall of a's renewal loop that fails from 2.5 s on: its length is searched in
        // ms down to 2500 ms, then rounded up within a tenth (2.5 s is round already).
        let s =
            two_nodes(r#"ThreadStall(node: "a", thread: Renewal, at: "1s", duration: "7300ms")"#);
        let f_len = |f: &Fault| get_ns(f, Field::Length).expect("a stall has a length");
        let long = |c: &Scenario| {
            c.faults
                .iter()
                .any(|f| matches!(f, Fault::ThreadStall { .. }) && f_len(f) >= 2_500_000_000)
        };
        let out = shrink(s, &long);
        assert_eq!(out.scenario.faults.len(), 1);
        assert_eq!(f_len(&out.scenario.faults[0]), 2_500_000_000);
    }

    #[test]
    fn a_node_goes_only_when_no_fault_needs_it() {
        let s = Scenario::from_ron(
            r#"Scenario(
                duration: "60s",
                lease: (duration: "10s"),
                strategy: TwoSided(holder_margin: "100ms"),
                nodes: [
                    (name: "lock", role: Grantor),
                    (name: "a", role: Contender),
                    (name: "b", role: Contender),
                    (name: "c", role: Contender),
                ],
            )"#,
        )
        .unwrap();
        let with = |faults: &str| Scenario {
            faults: crate::scenario::ron_options()
                .from_str(&format!("[{faults}]"))
                .unwrap(),
            ..s.clone()
        };
        let names =
            |c: &Scenario| -> Vec<String> { c.nodes.iter().map(|n| n.name.clone()).collect() };
        let c = 3; // node c
                   // A fault placed at c's moment needs c; one at another node's does not.
        let at_c = with(r#"Pause(node: "a", at: After(moment: Grant, node: "c"), duration: "1s")"#);
        assert!(without_node(&at_c, c).is_none());
        let at_b = with(r#"Pause(node: "a", at: After(moment: Grant, node: "b"), duration: "1s")"#);
        assert_eq!(names(&without_node(&at_b, c).unwrap()), ["lock", "a", "b"]);
        // A one-way cut from or to c needs it.
        for cut in [
            r#"OneWay(from: "c", to: "a", at: "1s", duration: "1s")"#,
            r#"OneWay(from: "a", to: "c", at: "1s", duration: "1s")"#,
        ] {
            assert!(without_node(&with(cut), c).is_none(), "{cut}");
        }
        assert!(without_node(
            &with(r#"OneWay(from: "a", to: "b", at: "1s", duration: "1s")"#),
            c
        )
        .is_some());
        // c leaves a partition's groups, and a group it was alone in.
        let p = without_node(
            &with(r#"Partition(at: "1s", duration: "1s", groups: [["c"], ["lock", "a", "b"]])"#),
            c,
        )
        .unwrap();
        assert!(
            matches!(&p.faults[0], Fault::Partition { groups, .. } if *groups == vec![names(&s)[..3].to_vec()])
        );
        let p = without_node(
            &with(r#"Partition(at: "1s", duration: "1s", groups: [["a", "c"], ["lock", "b"]])"#),
            c,
        )
        .unwrap();
        assert!(
            matches!(&p.faults[0], Fault::Partition { groups, .. } if groups[0] == ["a"] && groups[1] == ["lock", "b"])
        );
        // c leaves a spike's `from` list it shares, but a list of c alone needs it.
        let spike = without_node(
            &with(r#"DelaySpike(at: "1s", duration: "1s", extra: "1ms", from: ["a", "c"], to: ["b"])"#),
            c,
        )
        .unwrap();
        assert!(
            matches!(&spike.faults[0], Fault::DelaySpike { from: Some(f), to: Some(t), .. } if f == &["a"] && t == &["b"])
        );
        let alone = with(r#"Drop(at: "1s", duration: "1s", to: ["c"])"#);
        assert!(without_node(&alone, c).is_none());
        assert!(without_node(&alone, 2).is_some());
    }
}
