//! The `workload` section: request rates, service time, periodic operations and keys.

use super::Problems;
use crate::scenario::limits;
use crate::time::Dur;

pub(super) fn check(p: &mut Problems) {
    let w = &p.s.workload;
    p.rate("workload.reads_per_second", w.reads_per_second);
    p.rate("workload.writes_per_second", w.writes_per_second);
    if w.service_time.ns() < 0 {
        p.push(format!(
            "workload.service_time: must not be negative (got {})",
            w.service_time
        ));
    }
    p.at_most_max("workload.service_time", w.service_time);
    for (at, r) in [
        ("workload.reads_per_second", w.reads_per_second),
        ("workload.writes_per_second", w.writes_per_second),
    ] {
        if r > limits::MAX_REQUEST_RATE {
            p.push(format!(
                "{at}: {r} is above the limit of {} per contender (see docs/src/limits.md)",
                limits::MAX_REQUEST_RATE
            ));
        }
    }
    if let Some(ops) = &w.periodic {
        let min_every = (1e9 / limits::MAX_REQUEST_RATE) as i64;
        if ops.every.ns() < min_every {
            p.push(format!(
                "workload.periodic.every: must be at least {} (at most {} operations per second \
                 per contender, see docs/src/limits.md) (got {})",
                Dur::from_ns(min_every),
                limits::MAX_REQUEST_RATE,
                ops.every
            ));
        }
        if ops.jitter.ns() < 0 {
            p.push(format!(
                "workload.periodic.jitter: must not be negative (got {})",
                ops.jitter
            ));
        }
        p.at_most_max("workload.periodic.jitter", ops.jitter);
    }
    if w.keys == 0 || w.keys > limits::MAX_KEYS {
        p.push(format!(
            "workload.keys: must be in [1, {}] (got {})",
            limits::MAX_KEYS,
            w.keys
        ));
    }
}
