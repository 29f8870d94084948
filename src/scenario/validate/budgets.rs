//! The totals a run may reach (see [`limits`]): random faults and their rates, clock steps,
//! requests waiting in a paused node or in flight, and events. Skipped where a rate is already
//! reported as invalid.

use super::Problems;
use crate::dist::Sampler;
use crate::scenario::limits::{self, count};
use crate::scenario::{Fault, RandomFault, Role, Scenario, StrategyChecks, Thread};
use crate::time::Dur;
use std::collections::BTreeMap;

const SEE: &str = "(see docs/src/limits.md)";

pub(super) fn check(p: &mut Problems, protocol: Option<&dyn StrategyChecks>) {
    let s = p.s;
    if s.limits.max_events > limits::MAX_EVENTS {
        p.push(format!(
            "limits.max_events: {} is above the limit of {} {SEE}",
            s.limits.max_events,
            limits::MAX_EVENTS
        ));
    }
    if !rates_ok(s) || s.duration.ns() <= 0 {
        return;
    }
    fault_rates(p, s);
    fault_totals(p, s);
    waiting(p, s);
    in_flight(p, s);
    events(p, s, protocol);
}

/// The estimated events of the run against [`limits::MAX_EVENTS`]: the scenario's own
/// ([`limits::estimated_events`]) plus the protocol's timers and messages, each part named.
fn events(p: &mut Problems, s: &Scenario, protocol: Option<&dyn StrategyChecks>) {
    let own = limits::protocol_events(s, protocol);
    let syncs = limits::clock_syncs(s);
    let base = limits::estimated_events(s) - syncs;
    let events = base + syncs + own;
    if events > limits::MAX_EVENTS as f64 {
        let mut parts = vec![format!(
            "requests, retries, renewals, faults: {}",
            count(base)
        )];
        if let Some(u) = s.clocks.uncertainty.filter(|_| syncs > 0.0) {
            parts.push(format!(
                "clock syncs, one per node every clocks.uncertainty.sync_every = {}: {}",
                u.sync_every,
                count(syncs)
            ));
        }
        if let Some(x) = protocol.filter(|_| own > 0.0) {
            parts.push(format!(
                "the timers and messages of strategy {}: {}",
                x.describe(),
                count(own)
            ));
        }
        p.push(format!(
            "duration: a run of {} needs about {} events ({}), above the limit of {} {SEE}; shorten it, lower the rates or lengthen the periods",
            limits::dur(s.duration.ns()),
            count(events),
            parts.join("; "),
            count(limits::MAX_EVENTS as f64)
        ));
    }
}

/// Each generator's rate at most one fault per shortest interval.
fn fault_rates(p: &mut Problems, s: &Scenario) {
    for (i, g) in s.random_faults.iter().enumerate() {
        let (field, per_second) = match g {
            RandomFault::Pauses { per_minute, .. } => ("per_minute", per_minute / 60.0),
            RandomFault::ClockSteps { per_hour, .. }
            | RandomFault::Partitions { per_hour, .. }
            | RandomFault::Crashes { per_hour, .. } => ("per_hour", per_hour / 3600.0),
        };
        if per_second > limits::MAX_FAULT_RATE_PER_SECOND {
            p.push(format!(
                "random_faults[{i}].{field}: {} per second, above the limit of {} per second (a mean gap of {}) {SEE}",
                count(per_second),
                count(limits::MAX_FAULT_RATE_PER_SECOND),
                Dur::from_ns(limits::MIN_INTERVAL_NS)
            ));
        }
    }
}

/// The faults the generators are expected to draw, and the clock steps fixed and drawn.
fn fault_totals(p: &mut Problems, s: &Scenario) {
    let expected = limits::expected_random_faults(s);
    let total: f64 = expected.iter().sum();
    if total > limits::MAX_RANDOM_FAULTS {
        p.push(format!(
            "random_faults: the generators are expected to draw {} faults over {} (rate x duration x nodes; a partition counts once per node), above the limit of {} {SEE}",
            count(total),
            s.duration,
            count(limits::MAX_RANDOM_FAULTS)
        ));
    }
    let fixed_steps = s
        .faults
        .iter()
        .filter(|f| matches!(f, Fault::ClockStep { .. }))
        .count() as f64;
    let drawn_steps: f64 = s
        .random_faults
        .iter()
        .zip(&expected)
        .filter(|(g, _)| matches!(g, RandomFault::ClockSteps { .. }))
        .map(|(_, e)| e)
        .sum();
    if fixed_steps + drawn_steps > limits::MAX_CLOCK_STEPS {
        p.push(format!(
            "faults, random_faults: {} clock steps ({} fixed, {} expected to be drawn), above the limit of {} {SEE}",
            count(fixed_steps + drawn_steps),
            count(fixed_steps),
            count(drawn_steps),
            count(limits::MAX_CLOCK_STEPS)
        ));
    }
}

/// Requests that wait: in a paused contender (or one whose worker loop is stalled) until it
/// resumes, and for their effect.
fn waiting(p: &mut Problems, s: &Scenario) {
    let w = &s.workload;
    let per_second = w.requests_per_second();
    if per_second > 0.0 {
        let run = s.duration.ns();
        let mut longest: (i64, String) = (0, String::new());
        let mut windows: BTreeMap<&str, Vec<(i64, i64)>> = BTreeMap::new();
        for f in &s.faults {
            let (Fault::Pause {
                node, at, duration, ..
            }
            | Fault::ThreadStall {
                node,
                at,
                duration,
                thread: Thread::Worker,
            }) = f
            else {
                continue;
            };
            let start = at.ns().clamp(0, run);
            let end = at.ns().saturating_add(duration.ns().max(0)).clamp(0, run);
            windows.entry(node).or_default().push((start, end));
        }
        for (node, ws) in windows {
            if s.node_index(node)
                .is_some_and(|i| s.nodes[i].role == Role::Contender)
            {
                let merged = longest_merged(ws);
                if merged > longest.0 {
                    longest = (
                        merged,
                        format!("fixed pauses and worker stalls of {node:?}"),
                    );
                }
            }
        }
        for (i, g) in s.random_faults.iter().enumerate() {
            if let RandomFault::Pauses { duration, .. } = g {
                if Sampler::new(duration).is_ok() {
                    let d = limits::draw_bound_ns(duration).min(run);
                    if d > longest.0 {
                        longest = (d, format!("random_faults[{i}] (largest draw)"));
                    }
                }
            }
        }
        let wait_ns = longest.0.saturating_add(w.service_time.ns().max(0));
        let pending = per_second * wait_ns as f64 / 1e9;
        if pending > limits::MAX_PENDING_REQUESTS {
            let why = if longest.0 > 0 {
                format!(
                    "a pause of {} ({}) plus ",
                    Dur::from_ns(longest.0),
                    longest.1
                )
            } else {
                String::new()
            };
            p.push(format!(
                "workload: {} requests/s x ({why}service_time {}) = {} requests waiting at one contender, above the limit of {} {SEE}",
                per_second,
                w.service_time,
                count(pending),
                count(limits::MAX_PENDING_REQUESTS)
            ));
        }
    }
}

/// Writes in flight from one contender, over the longest delay.
fn in_flight(p: &mut Problems, s: &Scenario) {
    let w = &s.workload;
    if w.writes_per_second > 0.0 {
        let mut delay = longest_delay_ns(s);
        let extra = s
            .faults
            .iter()
            .filter_map(|f| match f {
                Fault::DelaySpike { extra, .. } => Some(extra.ns().max(0)),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        delay = delay.saturating_add(extra).min(s.duration.ns());
        let in_flight = w.writes_per_second * delay as f64 / 1e9;
        if in_flight > limits::MAX_PENDING_REQUESTS {
            p.push(format!(
                "workload.writes_per_second: {} writes/s x a delay of up to {} (network.delay and delay spikes; heavy tails cut at their 1 - 1e-9 quantile) = {} writes in flight from one contender, above the limit of {} {SEE}",
                w.writes_per_second,
                Dur::from_ns(delay),
                count(in_flight),
                count(limits::MAX_PENDING_REQUESTS)
            ));
        }
    }
}

/// Whether the rates the budgets multiply are finite and >= 0: those of `random_faults` and
/// the workload's (an invalid one is reported on its own, and the budgets are then skipped).
pub(crate) fn rates_ok(s: &Scenario) -> bool {
    s.random_faults.iter().all(|g| {
        let r = match g {
            RandomFault::Pauses { per_minute, .. } => *per_minute,
            RandomFault::ClockSteps { per_hour, .. }
            | RandomFault::Partitions { per_hour, .. }
            | RandomFault::Crashes { per_hour, .. } => *per_hour,
        };
        r.is_finite() && r >= 0.0
    }) && [s.workload.reads_per_second, s.workload.writes_per_second]
        .iter()
        .all(|r| r.is_finite() && *r >= 0.0)
}

/// The longest one-way delay `network.delay` and its `links` can draw, in ns (heavy tails cut
/// at their 1 - 1e-9 quantile); invalid distributions, already reported, are left out.
pub(crate) fn longest_delay_ns(s: &Scenario) -> i64 {
    [&s.network.delay]
        .into_iter()
        .chain(s.network.links.iter().map(|l| &l.delay))
        .filter(|d| Sampler::new(d).is_ok())
        .map(limits::draw_bound_ns)
        .max()
        .unwrap_or(0)
}

/// The longest stretch covered by the union of the windows `[start, end)`.
fn longest_merged(mut ws: Vec<(i64, i64)>) -> i64 {
    ws.sort_unstable();
    let mut best = 0;
    let mut cur: Option<(i64, i64)> = None;
    for (x, y) in ws {
        cur = match cur {
            Some((a, b)) if x <= b => Some((a, b.max(y))),
            Some((a, b)) => {
                best = best.max(b - a);
                Some((x, y))
            }
            None => Some((x, y)),
        };
    }
    cur.map_or(best, |(a, b)| best.max(b - a))
}
