//! The `random_faults` section: each generator's nodes, rate and distributions.

use super::faults::freeze_clock_applies;
use super::Problems;
use crate::dist::Sampler;
use crate::scenario::{limits, RandomFault};

pub(super) fn check(p: &mut Problems) {
    for (i, g) in p.s.random_faults.iter().enumerate() {
        let at = format!("random_faults[{i}]");
        match g {
            RandomFault::Pauses {
                nodes,
                per_minute,
                duration,
                kind,
                clock,
            } => {
                freeze_clock_applies(p, &at, *kind, *clock);
                p.nodes(&at, nodes);
                p.rate(&format!("{at}.per_minute"), *per_minute);
                p.dist(&format!("{at}.duration"), duration, false);
            }
            RandomFault::ClockSteps {
                nodes,
                per_hour,
                by,
            } => {
                p.nodes(&at, nodes);
                p.rate(&format!("{at}.per_hour"), *per_hour);
                p.dist(&format!("{at}.by"), by, true);
                if Sampler::new(by).is_ok() {
                    let (lo, hi) = (limits::draw_floor_ns(by), limits::draw_bound_ns(by));
                    if lo.unsigned_abs().max(hi.unsigned_abs()) > limits::MAX_CLOCK_STEP_NS as u64 {
                        p.push(format!(
                            "{at}.by: draws reach {} (heavy tails cut at their 1 - 1e-9 \
                             quantile), beyond the limit of {} either way (see docs/src/limits.md)",
                            limits::dur(if hi.unsigned_abs() >= lo.unsigned_abs() {
                                hi
                            } else {
                                lo
                            }),
                            limits::dur(limits::MAX_CLOCK_STEP_NS)
                        ));
                    }
                }
            }
            RandomFault::Partitions {
                nodes,
                per_hour,
                duration,
            } => {
                p.nodes(&at, nodes);
                p.rate(&format!("{at}.per_hour"), *per_hour);
                p.dist(&format!("{at}.duration"), duration, false);
            }
            RandomFault::Crashes {
                nodes,
                per_hour,
                restart_after,
            } => {
                p.nodes(&at, nodes);
                p.rate(&format!("{at}.per_hour"), *per_hour);
                p.dist(&format!("{at}.restart_after"), restart_after, false);
            }
        }
    }
}
