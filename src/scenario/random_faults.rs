//! Drawing the `random_faults` generators into concrete faults, from the seed's fault streams.
//!
//! Each generator has its own stream per node (or one stream, for partitions), so adding a
//! generator or a node does not move the faults another one draws. Start times form a Poisson
//! process over the run; the drawn schedule is an ordinary fault list, which is what the engine
//! runs and what a shrinker can cut down.

use super::{DurationDist, Fault, RandomFault, Scenario};
use crate::dist::Sampler;
use crate::rng::{self, Component, Rng};
use crate::time::{Dur, NS_PER_S};
use rand::RngExt;

/// The faults every generator of `s` draws, in generator order, then node order, then time.
/// `s` must be valid.
pub fn materialize(s: &Scenario) -> Vec<Fault> {
    let mut out = Vec::new();
    let all: Vec<String> = s.nodes.iter().map(|n| n.name.clone()).collect();
    for (g, gen) in s.random_faults.iter().enumerate() {
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
                let d = sampler(duration);
                for (i, name) in chosen(nodes) {
                    let mut r = stream(i);
                    for at in poisson(&mut r, per_minute / 60.0, s.duration) {
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
                let d = sampler(by);
                for (i, name) in chosen(nodes) {
                    let mut r = stream(i);
                    for at in poisson(&mut r, per_hour / 3600.0, s.duration) {
                        out.push(Fault::ClockStep {
                            node: name.clone(),
                            at,
                            by: d.sample(&mut r),
                        });
                    }
                }
            }
            RandomFault::Partitions {
                nodes,
                per_hour,
                duration,
            } => {
                let d = sampler(duration);
                let candidates = chosen(nodes);
                let mut r = stream(0xffff);
                for at in poisson(&mut r, per_hour / 3600.0, s.duration) {
                    if candidates.is_empty() {
                        break;
                    }
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
                let d = sampler(restart_after);
                let rate = per_hour / 3600.0;
                for (i, name) in chosen(nodes) {
                    let mut r = stream(i);
                    // From the node's start; the next crash is drawn from the restart on, so a
                    // node is never crashed twice, nor crashed before it has started.
                    let mut t = s.nodes[i].start;
                    while let Some(gap) = exp_gap(&mut r, rate) {
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

/// At least one nanosecond: a fault that lasts no time is no fault.
fn positive(d: Dur) -> Dur {
    Dur(d.0.max(1))
}

/// One exponential gap at `per_second`, or `None` for a zero rate.
fn exp_gap(r: &mut Rng, per_second: f64) -> Option<Dur> {
    if per_second <= 0.0 {
        return None;
    }
    let mean = Dur(crate::dist::to_ns(NS_PER_S as f64 / per_second));
    Some(sampler(&DurationDist::Exponential { mean }).sample(r))
}

/// Poisson start times in [0, end) at `per_second`.
fn poisson(r: &mut Rng, per_second: f64, end: Dur) -> Vec<Dur> {
    let mut times = Vec::new();
    let mut t = Dur::ZERO;
    while let Some(gap) = exp_gap(r, per_second) {
        t += gap;
        if t >= end {
            break;
        }
        times.push(t);
    }
    times
}
