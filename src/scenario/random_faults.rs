//! Drawing the `random_faults` generators into concrete faults, from the seed's fault streams.
//!
//! Each generator has its own stream per node (or one stream, for partitions), so adding a
//! generator or a node does not move the faults another one draws. Start times form a Poisson
//! process over the run.
//!
//! A [`FaultStream`] draws one stream's faults one at a time, in time order, so that a run holds
//! only the next fault of each stream however long it is: the engine merges the streams as it
//! reaches them. [`materialize`] drains the same streams into an ordinary fault list, which is
//! what explore and its shrinker cut down and a report lists: both paths make the same draws.
//! A Poisson stream draws every start time before what the faults are (their durations, steps,
//! cut nodes), from the one stream; a lazy stream follows it with two generators, one at the
//! stream's start for the times and one where the times end for the rest, found by drawing the
//! times once ahead (time, not memory).
//!
//! Bounded whatever the draws (see [`limits`]): each draw is clamped to the distribution's
//! [`limits::draw_bound_ns`] (heavy tails cut at their 1 - 1e-9 quantile; a clock step also at
//! [`limits::MAX_CLOCK_STEP_NS`]), and drawing stops once [`limits::RANDOM_FAULTS_HARD_STOP`]
//! faults (a partition counting once per node) or [`limits::CLOCK_STEPS_HARD_STOP`] clock steps
//! are drawn, counted in generator order, then node order. Validation keeps the expected counts
//! at half those, so the stops never bite a valid scenario in practice.

use super::{limits, DurationDist, Fault, FreezeClock, PauseKind, RandomFault, Scenario};
use crate::dist::Sampler;
use crate::rng::{self, Component, Rng};
use crate::time::{Dur, LocalDur, NS_PER_S};
use rand::RngExt;

/// The faults every generator of `s` draws, in generator order, then node order, then time.
/// `s` must be valid.
pub fn materialize(s: &Scenario) -> Vec<Fault> {
    streams(s).into_iter().flatten().collect()
}

/// Every stream of `s`'s generators, in generator order, then node order (a partition
/// generator has one), each with its share of the hard stops settled: draining them in order
/// gives [`materialize`]'s list. `s` must be valid.
pub fn streams(s: &Scenario) -> Vec<FaultStream> {
    let mut plan = Plan {
        s,
        all: s.nodes.iter().map(|n| n.name.clone()).collect(),
        g: 0,
        out: Vec::new(),
        cost: 0,
        steps: 0,
    };
    for (g, gen) in s.random_faults.iter().enumerate() {
        if plan.cost >= limits::RANDOM_FAULTS_HARD_STOP {
            break;
        }
        plan.g = g;
        match gen {
            RandomFault::Pauses {
                nodes,
                per_minute,
                duration,
                kind,
                clock,
            } => plan.pauses(nodes, *per_minute, duration, *kind, *clock),
            RandomFault::ClockSteps {
                nodes,
                per_hour,
                by,
            } => plan.clock_steps(nodes, *per_hour, by),
            RandomFault::Partitions {
                nodes,
                per_hour,
                duration,
            } => plan.partitions(nodes, *per_hour, duration),
            RandomFault::Crashes {
                nodes,
                per_hour,
                restart_after,
            } => plan.crashes(nodes, *per_hour, restart_after),
        }
    }
    plan.out
}

/// The streams of a scenario's generators, set up in order: what the streams set up so far
/// will draw, as the hard stops count it.
struct Plan<'a> {
    s: &'a Scenario,
    /// Every node's name, in order.
    all: Vec<String>,
    /// The generator set up now (its index in `random_faults`).
    g: usize,
    out: Vec<FaultStream>,
    /// Faults the streams so far draw, a partition counting once per node.
    cost: usize,
    /// Clock steps the streams so far draw.
    steps: usize,
}

impl Plan<'_> {
    /// The current generator's stream for node `node` (`0xffff`: the generator's own).
    fn stream(&self, node: usize) -> Rng {
        rng::stream(
            self.s.seed,
            Component::Faults,
            ((self.g as u64) << 16) | node as u64,
        )
    }

    /// The nodes a generator names (all of them when it names none), with their indices.
    fn chosen(&self, names: &Option<Vec<String>>) -> Vec<(usize, String)> {
        names
            .as_ref()
            .unwrap_or(&self.all)
            .iter()
            .map(|n| {
                (
                    self.s.node_index(n).expect("validated node name"),
                    n.clone(),
                )
            })
            .collect()
    }

    /// Pauses of each chosen node, at `per_minute`, lasting `duration`.
    fn pauses(
        &mut self,
        nodes: &Option<Vec<String>>,
        per_minute: f64,
        duration: &DurationDist,
        kind: PauseKind,
        clock: Option<FreezeClock>,
    ) {
        for (i, node) in self.chosen(nodes) {
            let left = limits::RANDOM_FAULTS_HARD_STOP.saturating_sub(self.cost);
            let what = What::Pause {
                node,
                d: Clamped::new(duration),
                kind,
                clock,
            };
            let (stream, n) = Starts::stream(self.stream(i), per_minute / 60.0, self.s, left, what);
            self.cost += n;
            self.out.push(stream);
        }
    }

    /// Steps of each chosen node's wall clock, at `per_hour`, by `by`.
    fn clock_steps(&mut self, nodes: &Option<Vec<String>>, per_hour: f64, by: &DurationDist) {
        for (i, node) in self.chosen(nodes) {
            let left = limits::RANDOM_FAULTS_HARD_STOP
                .saturating_sub(self.cost)
                .min(limits::CLOCK_STEPS_HARD_STOP.saturating_sub(self.steps));
            let what = What::Step {
                node,
                d: Clamped::new(by),
            };
            let (stream, n) = Starts::stream(self.stream(i), per_hour / 3600.0, self.s, left, what);
            self.cost += n;
            self.steps += n;
            self.out.push(stream);
        }
    }

    /// Partitions at `per_hour` lasting `duration`, each cutting one chosen node off from all
    /// the others.
    fn partitions(&mut self, nodes: &Option<Vec<String>>, per_hour: f64, duration: &DurationDist) {
        let partition_cost = self.all.len().max(1);
        let candidates: Vec<String> = self.chosen(nodes).into_iter().map(|(_, n)| n).collect();
        // With no node to cut, no start time makes a fault.
        let left = if candidates.is_empty() {
            0
        } else {
            limits::RANDOM_FAULTS_HARD_STOP.saturating_sub(self.cost) / partition_cost
        };
        let what = What::Partition {
            candidates,
            all: self.all.clone(),
            d: Clamped::new(duration),
        };
        let r = self.stream(0xffff);
        let (stream, n) = Starts::stream(r, per_hour / 3600.0, self.s, left, what);
        self.cost += n * partition_cost;
        self.out.push(stream);
    }

    /// Crashes of each chosen node at `per_hour`, each followed by a restart `restart_after`.
    fn crashes(
        &mut self,
        nodes: &Option<Vec<String>>,
        per_hour: f64,
        restart_after: &DurationDist,
    ) {
        for (i, node) in self.chosen(nodes) {
            let stream = Crashes {
                r: self.stream(i),
                per_second: per_hour / 3600.0,
                d: Clamped::new(restart_after),
                end: self.s.duration,
                // From the node's start; the next crash is drawn from the restart on, so a node
                // is never crashed twice, nor crashed before it has started.
                t: self.s.nodes[i].start,
                node,
                budget: limits::RANDOM_FAULTS_HARD_STOP.saturating_sub(self.cost),
                used: 0,
                restart: None,
                done: false,
            };
            // What it will cost is known only once drawn: draw it ahead, and drop the draws.
            let mut ahead = stream.clone();
            ahead.by_ref().for_each(drop);
            self.cost += ahead.used;
            self.out.push(FaultStream(Draw::Crashes(Box::new(stream))));
        }
    }
}

/// One stream's faults, drawn as they are asked for, in time order (ties: in draw order).
#[derive(Clone, Debug)]
pub struct FaultStream(Draw);

#[derive(Clone, Debug)]
enum Draw {
    Starts(Box<Starts>),
    Crashes(Box<Crashes>),
}

impl Iterator for FaultStream {
    type Item = Fault;

    fn next(&mut self) -> Option<Fault> {
        match &mut self.0 {
            Draw::Starts(s) => s.next(),
            Draw::Crashes(c) => c.next(),
        }
    }
}

/// Faults at Poisson start times: the stream draws every start time first (`times`), then what
/// each fault is, in the same order (`values`, the stream where the times end).
#[derive(Clone, Debug)]
struct Starts {
    times: Poisson,
    values: Rng,
    what: What,
}

/// What a Poisson stream's faults are.
#[derive(Clone, Debug)]
enum What {
    Pause {
        node: String,
        d: Clamped,
        kind: PauseKind,
        clock: Option<FreezeClock>,
    },
    Step {
        node: String,
        d: Clamped,
    },
    /// One of `candidates` cut off from the rest of `all`.
    Partition {
        candidates: Vec<String>,
        all: Vec<String>,
        d: Clamped,
    },
}

impl Starts {
    /// The stream of start times `r` draws at `per_second` over `s`'s run, at most `most`, and
    /// how many faults it gives.
    fn stream(
        r: Rng,
        per_second: f64,
        s: &Scenario,
        most: usize,
        what: What,
    ) -> (FaultStream, usize) {
        let mut ahead = Poisson::new(r.clone(), per_second, s.duration, most);
        let n = ahead.by_ref().count();
        let starts = Starts {
            times: Poisson::new(r, per_second, s.duration, n),
            values: ahead.r,
            what,
        };
        (FaultStream(Draw::Starts(Box::new(starts))), n)
    }

    fn next(&mut self) -> Option<Fault> {
        let at = self.times.next()?;
        let r = &mut self.values;
        Some(match &self.what {
            What::Pause {
                node,
                d,
                kind,
                clock,
            } => Fault::Pause {
                node: node.clone(),
                at: at.into(),
                duration: positive(d.sample(r)),
                kind: *kind,
                clock: *clock,
            },
            What::Step { node, d } => Fault::ClockStep {
                node: node.clone(),
                at: at.into(),
                // The drawn number of nanoseconds is a step of the node's wall clock.
                by: LocalDur::from_ns(d.sample(r).ns()),
            },
            What::Partition { candidates, all, d } => {
                let cut = &candidates[r.random_range(0..candidates.len())];
                let rest = all.iter().filter(|n| *n != cut).cloned().collect();
                Fault::Partition {
                    at: at.into(),
                    duration: positive(d.sample(r)),
                    groups: vec![vec![cut.clone()], rest],
                }
            }
        })
    }
}

/// A node's crashes, each followed by its restart, drawn in turn (the gap to the crash, then
/// the time to the restart), until the run ends or the stream's share of the hard stop is
/// spent (each crash drawn counting two).
#[derive(Clone, Debug)]
struct Crashes {
    r: Rng,
    per_second: f64,
    d: Clamped,
    end: Dur,
    /// The next crash is drawn from here.
    t: Dur,
    node: String,
    /// What the stream may cost, and what it has.
    budget: usize,
    used: usize,
    /// The restart of the crash given last, not yet given.
    restart: Option<Dur>,
    done: bool,
}

impl Iterator for Crashes {
    type Item = Fault;

    fn next(&mut self) -> Option<Fault> {
        let node = self.node.clone();
        if let Some(at) = self.restart.take() {
            return Some(Fault::Restart {
                node,
                at: at.into(),
            });
        }
        if self.done {
            return None;
        }
        let gap = exp_gap(&mut self.r, self.per_second);
        let within = self.used + 2 <= self.budget;
        let at = gap
            .map(|gap| self.t + gap)
            .filter(|&at| within && at < self.end);
        if gap.is_some() && within {
            self.used += 2;
        }
        let Some(at) = at else {
            self.done = true;
            return None;
        };
        let back = at + positive(self.d.sample(&mut self.r));
        if back < self.end {
            self.restart = Some(back);
            self.t = back;
        } else {
            self.done = true;
        }
        Some(Fault::Crash {
            node,
            at: at.into(),
        })
    }
}

fn sampler(d: &DurationDist) -> Sampler {
    Sampler::new(d).expect("validated distribution")
}

/// A sampler whose draws are clamped to what [`limits`] promises: the distribution's own
/// bounds (heavy tails cut at their 1 - 1e-9 quantile) and at most a maximal clock step either
/// way (validation rejects a distribution that reaches beyond, so this only cuts tails).
#[derive(Clone, Debug)]
struct Clamped {
    sampler: Sampler,
    lo: i64,
    hi: i64,
}

impl Clamped {
    fn new(d: &DurationDist) -> Clamped {
        let sampler = sampler(d);
        let hi = limits::draw_bound_ns(d);
        let lo = limits::draw_floor_ns(d).min(hi);
        Clamped { sampler, lo, hi }
    }

    fn sample(&self, r: &mut Rng) -> Dur {
        Dur::from_ns(self.sampler.sample(r).ns().clamp(self.lo, self.hi))
    }
}

/// At least one nanosecond: a fault that lasts no time is no fault.
fn positive(d: Dur) -> Dur {
    Dur::from_ns(d.ns().max(1))
}

/// One exponential gap at `per_second`, or `None` for a zero rate.
fn exp_gap(r: &mut Rng, per_second: f64) -> Option<Dur> {
    if per_second <= 0.0 {
        return None;
    }
    let mean = Dur::from_ns(crate::dist::to_ns(NS_PER_S as f64 / per_second));
    Some(sampler(&DurationDist::Exponential { mean }).sample(r))
}

/// Poisson start times in [0, end) at `per_second`, at most `most` of them, drawn one at a
/// time from `r`; once it has given its last it draws nothing more.
#[derive(Clone, Debug)]
struct Poisson {
    r: Rng,
    per_second: f64,
    end: Dur,
    /// How many more it may give.
    left: usize,
    t: Dur,
}

impl Poisson {
    fn new(r: Rng, per_second: f64, end: Dur, most: usize) -> Poisson {
        Poisson {
            r,
            per_second,
            end,
            left: most,
            t: Dur::ZERO,
        }
    }
}

impl Iterator for Poisson {
    type Item = Dur;

    fn next(&mut self) -> Option<Dur> {
        if self.left == 0 {
            return None;
        }
        let next = exp_gap(&mut self.r, self.per_second).map(|gap| self.t + gap);
        match next {
            Some(t) if t < self.end => {
                self.t = t;
                self.left -= 1;
                Some(t)
            }
            _ => {
                self.left = 0;
                None
            }
        }
    }
}

/// Poisson start times in [0, end) at `per_second`, at most `most` of them (also the nemesis's,
/// `explore::draw`).
pub(crate) fn poisson(r: &mut Rng, per_second: f64, end: Dur, most: usize) -> Vec<Dur> {
    let mut times = Poisson::new(r.clone(), per_second, end, most);
    let out = times.by_ref().collect();
    *r = times.r;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stream draws what drawing a generator whole draws: for pauses, every start time from
    /// the node's stream first, then every duration from where the times end; for crashes, each
    /// gap then its restart, in turn. Written out here the whole-schedule way, for two seeds.
    #[test]
    fn streams_draw_what_drawing_whole_draws() {
        for seed in [7, 8] {
            let s = Scenario::from_ron(&format!(
                r#"Scenario(
                    seed: {seed},
                    duration: "1h",
                    lease: (duration: "2s"),
                    strategy: TwoSided(holder_margin: "10ms"),
                    nodes: [(name: "g", role: Grantor), (name: "c", role: Contender)],
                    random_faults: [
                        Pauses(nodes: ["c"], per_minute: 3.0, duration: Exponential(mean: "1s")),
                        Crashes(nodes: ["g"], per_hour: 60.0, restart_after: Fixed("2s")),
                    ],
                )"#
            ))
            .expect("valid");
            // Generator 0 at node 1 (c); generator 1 at node 0 (g).
            let mut r = rng::stream(seed, Component::Faults, 1);
            let times = poisson(&mut r, 3.0 / 60.0, s.duration, usize::MAX);
            let d = Clamped::new(&DurationDist::Exponential {
                mean: Dur::from_secs(1),
            });
            let mut want: Vec<Fault> = times
                .into_iter()
                .map(|at| Fault::Pause {
                    node: "c".into(),
                    at: at.into(),
                    duration: positive(d.sample(&mut r)),
                    kind: PauseKind::default(),
                    clock: None,
                })
                .collect();
            let mut r = rng::stream(seed, Component::Faults, 1 << 16);
            let mut t = Dur::ZERO;
            while let Some(gap) = exp_gap(&mut r, 60.0 / 3600.0) {
                let at = t + gap;
                if at >= s.duration {
                    break;
                }
                want.push(Fault::Crash {
                    node: "g".into(),
                    at: at.into(),
                });
                // Fixed("2s") is drawn like any distribution (it takes no randomness).
                let back = at
                    + positive(
                        Clamped::new(&DurationDist::Fixed(Dur::from_secs(2))).sample(&mut r),
                    );
                if back >= s.duration {
                    break;
                }
                want.push(Fault::Restart {
                    node: "g".into(),
                    at: back.into(),
                });
                t = back;
            }
            // About 180 pauses and 60 crashes with their restarts in an hour.
            assert!(want.len() > 200, "seed {seed}: {}", want.len());
            assert_eq!(materialize(&s), want, "seed {seed}");
        }
    }
}
