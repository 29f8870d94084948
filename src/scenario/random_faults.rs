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

use super::{limits, DurationDist, Fault, RandomFault, Scenario};
use crate::dist::Sampler;
use crate::rng::{self, Component, Rng};
use crate::time::{Dur, LocalDur, NS_PER_S};
use rand::RngExt;

/// The faults every generator of `s` draws, in generator order, then node order, then time.
/// `s` must be valid.
pub fn materialize(s: &Scenario) -> Vec<Fault> {
    let mut out = Vec::new();
    let all: Vec<String> = s.nodes.iter().map(|n| n.name.clone()).collect();
    // What has been drawn, as the hard stops count it.
    let mut cost = 0usize;
    let mut steps = 0usize;
    let partition_cost = all.len().max(1);
    for (g, gen) in s.random_faults.iter().enumerate() {
        if cost >= limits::RANDOM_FAULTS_HARD_STOP {
            break;
        }
        let stream =
            |node: usize| rng::stream(s.seed, Component::Faults, ((g as u64) << 16) | node as u64);
        let chosen = |names: &Option<Vec<String>>| -> Vec<(usize, String)> {
            names
                .as_ref()
                .unwrap_or(&all)
                .iter()
                .map(|n| (s.node_index(n).expect("validated"), n.clone()))
                .collect()
        };
        match gen {
            RandomFault::Pauses {
                nodes,
                per_minute,
                duration,
                kind,
                clock,
            } => {
                let d = Clamped::new(duration);
                for (i, name) in chosen(nodes) {
                    let mut r = stream(i);
                    let left = limits::RANDOM_FAULTS_HARD_STOP.saturating_sub(cost);
                    for at in poisson(&mut r, per_minute / 60.0, s.duration, left) {
                        cost += 1;
                        out.push(Fault::Pause {
                            node: name.clone(),
                            at,
                            duration: positive(d.sample(&mut r)),
                            kind: *kind,
                            clock: *clock,
                        });
                    }
                }
            }
            RandomFault::ClockSteps {
                nodes,
                per_hour,
                by,
            } => {
                let d = Clamped::new(by);
                for (i, name) in chosen(nodes) {
                    let mut r = stream(i);
                    let left = limits::RANDOM_FAULTS_HARD_STOP
                        .saturating_sub(cost)
                        .min(limits::CLOCK_STEPS_HARD_STOP.saturating_sub(steps));
                    for at in poisson(&mut r, per_hour / 3600.0, s.duration, left) {
                        cost += 1;
                        steps += 1;
                        out.push(Fault::ClockStep {
                            node: name.clone(),
                            at,
                            // The drawn number of nanoseconds is a step of the node's wall clock.
                            by: LocalDur::from_ns(d.sample(&mut r).ns()),
                        });
                    }
                }
            }
            RandomFault::Partitions {
                nodes,
                per_hour,
                duration,
            } => {
                let d = Clamped::new(duration);
                let candidates = chosen(nodes);
                let mut r = stream(0xffff);
                let left = limits::RANDOM_FAULTS_HARD_STOP.saturating_sub(cost) / partition_cost;
                for at in poisson(&mut r, per_hour / 3600.0, s.duration, left) {
                    if candidates.is_empty() {
                        break;
                    }
                    cost += partition_cost;
                    let (_, cut) = &candidates[r.random_range(0..candidates.len())];
                    let rest = all.iter().filter(|n| *n != cut).cloned().collect();
                    out.push(Fault::Partition {
                        at,
                        duration: positive(d.sample(&mut r)),
                        groups: vec![vec![cut.clone()], rest],
                    });
                }
            }
            RandomFault::Crashes {
                nodes,
                per_hour,
                restart_after,
            } => {
                let d = Clamped::new(restart_after);
                let rate = per_hour / 3600.0;
                for (i, name) in chosen(nodes) {
                    let mut r = stream(i);
                    // From the node's start; the next crash is drawn from the restart on, so a
                    // node is never crashed twice, nor crashed before it has started.
                    let mut t = s.nodes[i].start;
                    while let Some(gap) = exp_gap(&mut r, rate) {
                        if cost + 2 > limits::RANDOM_FAULTS_HARD_STOP {
                            break;
                        }
                        cost += 2;
                        let at = t + gap;
                        if at >= s.duration {
                            break;
                        }
                        out.push(Fault::Crash {
                            node: name.clone(),
                            at,
                        });
                        let back = at + positive(d.sample(&mut r));
                        if back >= s.duration {
                            break;
                        }
                        out.push(Fault::Restart {
                            node: name.clone(),
                            at: back,
                        });
                        t = back;
                    }
                }
            }
        }
    }
    out
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
