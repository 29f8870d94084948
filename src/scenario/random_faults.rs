//! Drawing the `random_faults` generators into concrete faults, from the seed's fault streams.
//!
//! Each generator has its own stream per node (or one stream, for partitions), so adding a
//! generator or a node does not move the faults another one draws. Start times form a Poisson
//! process over the run; the drawn schedule is an ordinary fault list, which is what the engine
//! runs and what a shrinker can cut down.
//!
//! Bounded whatever the draws (see [`limits`]): each draw is clamped to the distribution's
//! [`limits::draw_bound_ns`] (heavy tails cut at their 1 - 1e-9 quantile; a clock step also at
//! [`limits::MAX_CLOCK_STEP_NS`]), and drawing stops once [`limits::RANDOM_FAULTS_HARD_STOP`]
//! faults (a partition counting once per node) or [`limits::CLOCK_STEPS_HARD_STOP`] clock steps
//! are drawn. Validation keeps the expected counts at half those, so the stops never bite a
//! valid scenario in practice.

use super::{limits, DurationDist, Fault, FreezeClock, PauseKind, RandomFault, Scenario};
use crate::dist::Sampler;
use crate::rng::{self, Component, Rng};
use crate::time::{Dur, LocalDur, NS_PER_S};
use rand::RngExt;

/// The faults every generator of `s` draws, in generator order, then node order, then time.
/// `s` must be valid.
pub fn materialize(s: &Scenario) -> Vec<Fault> {
    let mut draw = Drawing {
        s,
        all: s.nodes.iter().map(|n| n.name.clone()).collect(),
        g: 0,
        out: Vec::new(),
        cost: 0,
        steps: 0,
    };
    for (g, gen) in s.random_faults.iter().enumerate() {
        if draw.cost >= limits::RANDOM_FAULTS_HARD_STOP {
            break;
        }
        draw.g = g;
        match gen {
            RandomFault::Pauses {
                nodes,
                per_minute,
                duration,
                kind,
                clock,
            } => draw.pauses(nodes, *per_minute, duration, *kind, *clock),
            RandomFault::ClockSteps {
                nodes,
                per_hour,
                by,
            } => draw.clock_steps(nodes, *per_hour, by),
            RandomFault::Partitions {
                nodes,
                per_hour,
                duration,
            } => draw.partitions(nodes, *per_hour, duration),
            RandomFault::Crashes {
                nodes,
                per_hour,
                restart_after,
            } => draw.crashes(nodes, *per_hour, restart_after),
        }
    }
    draw.out
}

/// One drawing of a scenario's generators: the faults drawn so far, and what they cost as
/// the hard stops count it.
struct Drawing<'a> {
    s: &'a Scenario,
    /// Every node's name, in order.
    all: Vec<String>,
    /// The generator drawing now (its index in `random_faults`).
    g: usize,
    out: Vec<Fault>,
    /// Faults drawn, a partition counting once per node.
    cost: usize,
    /// Clock steps drawn.
    steps: usize,
}

impl Drawing<'_> {
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
            .map(|n| (self.s.node_index(n).expect("validated"), n.clone()))
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
        let d = Clamped::new(duration);
        for (i, name) in self.chosen(nodes) {
            let mut r = self.stream(i);
            let left = limits::RANDOM_FAULTS_HARD_STOP.saturating_sub(self.cost);
            for at in poisson(&mut r, per_minute / 60.0, self.s.duration, left) {
                self.cost += 1;
                self.out.push(Fault::Pause {
                    node: name.clone(),
                    at: at.into(),
                    duration: positive(d.sample(&mut r)),
                    kind,
                    clock,
                });
            }
        }
    }

    /// Steps of each chosen node's wall clock, at `per_hour`, by `by`.
    fn clock_steps(&mut self, nodes: &Option<Vec<String>>, per_hour: f64, by: &DurationDist) {
        let d = Clamped::new(by);
        for (i, name) in self.chosen(nodes) {
            let mut r = self.stream(i);
            let left = limits::RANDOM_FAULTS_HARD_STOP
                .saturating_sub(self.cost)
                .min(limits::CLOCK_STEPS_HARD_STOP.saturating_sub(self.steps));
            for at in poisson(&mut r, per_hour / 3600.0, self.s.duration, left) {
                self.cost += 1;
                self.steps += 1;
                self.out.push(Fault::ClockStep {
                    node: name.clone(),
                    at: at.into(),
                    // The drawn number of nanoseconds is a step of the node's wall clock.
                    by: LocalDur::from_ns(d.sample(&mut r).ns()),
                });
            }
        }
    }

    /// Partitions at `per_hour` lasting `duration`, each cutting one chosen node off from all
    /// the others.
    fn partitions(&mut self, nodes: &Option<Vec<String>>, per_hour: f64, duration: &DurationDist) {
        let partition_cost = self.all.len().max(1);
        let d = Clamped::new(duration);
        let candidates = self.chosen(nodes);
        let mut r = self.stream(0xffff);
        let left = limits::RANDOM_FAULTS_HARD_STOP.saturating_sub(self.cost) / partition_cost;
        for at in poisson(&mut r, per_hour / 3600.0, self.s.duration, left) {
            if candidates.is_empty() {
                break;
            }
            self.cost += partition_cost;
            let (_, cut) = &candidates[r.random_range(0..candidates.len())];
            let rest = self.all.iter().filter(|n| *n != cut).cloned().collect();
            self.out.push(Fault::Partition {
                at: at.into(),
                duration: positive(d.sample(&mut r)),
                groups: vec![vec![cut.clone()], rest],
            });
        }
    }

    /// Crashes of each chosen node at `per_hour`, each followed by a restart `restart_after`.
    fn crashes(
        &mut self,
        nodes: &Option<Vec<String>>,
        per_hour: f64,
        restart_after: &DurationDist,
    ) {
        let d = Clamped::new(restart_after);
        let rate = per_hour / 3600.0;
        for (i, name) in self.chosen(nodes) {
            let mut r = self.stream(i);
            // From the node's start; the next crash is drawn from the restart on, so a node is
            // never crashed twice, nor crashed before it has started.
            let mut t = self.s.nodes[i].start;
            while let Some(gap) = exp_gap(&mut r, rate) {
                if self.cost + 2 > limits::RANDOM_FAULTS_HARD_STOP {
                    break;
                }
                self.cost += 2;
                let at = t + gap;
                if at >= self.s.duration {
                    break;
                }
                self.out.push(Fault::Crash {
                    node: name.clone(),
                    at: at.into(),
                });
                let back = at + positive(d.sample(&mut r));
                if back >= self.s.duration {
                    break;
                }
                self.out.push(Fault::Restart {
                    node: name.clone(),
                    at: back.into(),
                });
                t = back;
            }
        }
    }
}

fn sampler(d: &DurationDist) -> Sampler {
    Sampler::new(d).expect("validated distribution")
}

/// A sampler whose draws are clamped to what [`limits`] promises: the distribution's own
/// bounds (heavy tails cut at their 1 - 1e-9 quantile) and at most a maximal clock step either
/// way (validation rejects a distribution that reaches beyond, so this only cuts tails).
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

/// Poisson start times in [0, end) at `per_second`, at most `most` of them (also the nemesis's,
/// `explore::draw`).
pub(crate) fn poisson(r: &mut Rng, per_second: f64, end: Dur, most: usize) -> Vec<Dur> {
    let mut times = Vec::new();
    let mut t = Dur::ZERO;
    while times.len() < most {
        let Some(gap) = exp_gap(r, per_second) else {
            break;
        };
        t += gap;
        if t >= end {
            break;
        }
        times.push(t);
    }
    times
}
