//! Semantic checks of a parsed scenario: every problem is listed, each with the field it concerns.
//!
//! Parsing (syntax, unknown fields, malformed durations) has already succeeded when this runs; here
//! we check what the types cannot say: names that exist, one grantor, margins below T, faults
//! inside the run, crash/restart sequences that make sense, rates and probabilities in range.

use super::{DurationDist, Fault, RandomFault, Role, Scenario, StrategySpec};
use crate::dist::Sampler;
use crate::time::{DriftRate, Dur};
use std::collections::BTreeMap;

/// Every problem of `s`, in the order of the file; empty if it can run.
pub fn validate(s: &Scenario) -> Vec<String> {
    let mut p = Vec::new();
    let t = s.lease.duration;
    let known = s
        .nodes
        .iter()
        .map(|n| n.name.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let node = |p: &mut Vec<String>, at: &str, name: &str| {
        if s.node_index(name).is_none() {
            p.push(format!("{at}: unknown node {name:?} (known: {known})"));
        }
    };
    let nodes = |p: &mut Vec<String>, at: &str, names: &Option<Vec<String>>| {
        for name in names.iter().flatten() {
            node(p, at, name);
        }
    };
    let positive = |p: &mut Vec<String>, at: &str, d: Dur| {
        if d.0 <= 0 {
            p.push(format!("{at}: must be positive (got {d})"));
        }
    };
    let dist = |p: &mut Vec<String>, at: &str, d: &DurationDist, signed: bool| {
        if let Err(e) = Sampler::new(d) {
            p.push(format!("{at}: {e}"));
        } else if !signed && Sampler::new(d).is_ok_and(|s| s.min_ns() < 0) {
            p.push(format!("{at}: durations cannot be negative"));
        }
    };
    let rate = |p: &mut Vec<String>, at: &str, r: f64| {
        if !(r.is_finite() && r >= 0.0) {
            p.push(format!("{at}: must be a finite rate >= 0 (got {r})"));
        }
    };
    let prob = |p: &mut Vec<String>, at: &str, x: f64| {
        if !(0.0..=1.0).contains(&x) {
            p.push(format!("{at}: must be a probability in [0, 1] (got {x})"));
        }
    };

    positive(&mut p, "duration", s.duration);
    positive(&mut p, "lease.duration", t);
    let renew = s.lease.renew_every();
    positive(&mut p, "lease.renew_every", renew);
    if renew >= t && t.0 > 0 {
        p.push(format!(
            "lease.renew_every: {renew} must be shorter than the lease ({t}), or the lease lapses between renewals"
        ));
    }
    positive(&mut p, "lease.retry_every", s.lease.retry_every);

    // Strategy margins.
    let margin = |p: &mut Vec<String>, at: &str, m: Dur| {
        if m.0 < 0 {
            p.push(format!("strategy.{at}: must not be negative (got {m})"));
        } else if m >= t && t.0 > 0 {
            p.push(format!(
                "strategy.{at}: {m} must be shorter than the lease ({t}), or the holder never holds"
            ));
        }
    };
    match &s.strategy {
        StrategySpec::TwoSided {
            holder_margin,
            grantor_margin,
        } => {
            margin(&mut p, "holder_margin", *holder_margin);
            if grantor_margin.0 < 0 {
                p.push(format!(
                    "strategy.grantor_margin: must not be negative (got {grantor_margin})"
                ));
            }
        }
        StrategySpec::Custom {
            holder_margin,
            grantor_margin,
            ..
        } => {
            margin(&mut p, "holder_margin", *holder_margin);
            if grantor_margin.0 <= -t.0 {
                p.push(format!(
                    "strategy.grantor_margin: {grantor_margin} would free the lease before it is granted (T is {t})"
                ));
            }
        }
        StrategySpec::HolderOnly { margin: m } => margin(&mut p, "margin", *m),
        StrategySpec::WallClock { holder_margin }
        | StrategySpec::OnReceiveStart { holder_margin } => {
            margin(&mut p, "holder_margin", *holder_margin)
        }
        StrategySpec::GrantorOnly | StrategySpec::CachedBool => {}
    }

    // Nodes and clocks.
    let spread = s.clocks.drift_spread_ppm;
    if !(spread.is_finite() && spread >= 0.0 && DriftRate::from_ppm(spread / 2.0).is_some()) {
        p.push(format!(
            "clocks.drift_spread_ppm: must be >= 0 and below 2,000,000 (got {spread})"
        ));
    }
    let grantors = s.nodes.iter().filter(|n| n.role == Role::Grantor).count();
    if grantors != 1 {
        p.push(format!(
            "nodes: the base protocol needs exactly one node with role Grantor (found {grantors})"
        ));
    }
    if !s.nodes.iter().any(|n| n.role == Role::Contender) {
        p.push("nodes: no node with role Contender: nobody wants the lease".into());
    }
    let mut seen = BTreeMap::new();
    for (i, n) in s.nodes.iter().enumerate() {
        if n.name.is_empty() {
            p.push(format!("nodes[{i}]: name is empty"));
        }
        if let Some(j) = seen.insert(n.name.as_str(), i) {
            p.push(format!(
                "nodes[{i}]: name {:?} is already used by nodes[{j}]",
                n.name
            ));
        }
        if let Some(ppm) = n.drift_ppm {
            if DriftRate::from_ppm(ppm).is_none() {
                p.push(format!(
                    "nodes[{i}].drift_ppm: {ppm} is not a drift a clock can have (must be above -1000000)"
                ));
            }
        }
        if n.start.0 < 0 || n.start >= s.duration {
            p.push(format!(
                "nodes[{i}].start: {} is not within the run [0, {})",
                n.start, s.duration
            ));
        }
    }

    // Network and workload.
    dist(&mut p, "network.delay", &s.network.delay, false);
    prob(&mut p, "network.loss", s.network.loss);
    prob(&mut p, "network.duplicate", s.network.duplicate);
    for (i, l) in s.network.links.iter().enumerate() {
        let at = format!("network.links[{i}]");
        node(&mut p, &at, &l.from);
        node(&mut p, &at, &l.to);
        dist(&mut p, &format!("{at}.delay"), &l.delay, false);
    }
    rate(
        &mut p,
        "workload.reads_per_second",
        s.workload.reads_per_second,
    );
    rate(
        &mut p,
        "workload.writes_per_second",
        s.workload.writes_per_second,
    );
    if s.workload.service_time.0 < 0 {
        p.push(format!(
            "workload.service_time: must not be negative (got {})",
            s.workload.service_time
        ));
    }

    // Faults.
    let mut life: BTreeMap<&str, Vec<(Dur, bool, usize)>> = BTreeMap::new();
    for (i, f) in s.faults.iter().enumerate() {
        let at = format!("faults[{i}]");
        if f.at().0 < 0 || f.at() >= s.duration {
            p.push(format!(
                "{at}: starts at {}, outside the run [0, {})",
                f.at(),
                s.duration
            ));
        }
        match f {
            Fault::Pause {
                node: n, duration, ..
            } => {
                node(&mut p, &at, n);
                positive(&mut p, &format!("{at}.duration"), *duration);
            }
            Fault::Crash { node: n, at: when } => {
                node(&mut p, &at, n);
                life.entry(n).or_default().push((*when, false, i));
            }
            Fault::Restart { node: n, at: when } => {
                node(&mut p, &at, n);
                life.entry(n).or_default().push((*when, true, i));
            }
            Fault::ClockStep { node: n, .. } => node(&mut p, &at, n),
            Fault::DriftChange {
                node: n, drift_ppm, ..
            } => {
                node(&mut p, &at, n);
                if DriftRate::from_ppm(*drift_ppm).is_none() {
                    p.push(format!(
                        "{at}.drift_ppm: {drift_ppm} is not a drift a clock can have"
                    ));
                }
            }
            Fault::Partition {
                duration, groups, ..
            } => {
                positive(&mut p, &format!("{at}.duration"), *duration);
                let mut group_of = BTreeMap::new();
                for (g, names) in groups.iter().enumerate() {
                    for n in names {
                        node(&mut p, &at, n);
                        if let Some(h) = group_of.insert(n.as_str(), g) {
                            if h != g {
                                p.push(format!("{at}.groups: node {n:?} is in groups {h} and {g}"));
                            }
                        }
                    }
                }
                if groups.len() < 2 {
                    p.push(format!(
                        "{at}.groups: a partition needs at least two groups"
                    ));
                }
            }
            Fault::OneWay {
                from, to, duration, ..
            } => {
                node(&mut p, &at, from);
                node(&mut p, &at, to);
                positive(&mut p, &format!("{at}.duration"), *duration);
            }
            Fault::DelaySpike {
                duration,
                extra,
                from,
                to,
                ..
            } => {
                positive(&mut p, &format!("{at}.duration"), *duration);
                if extra.0 < 0 {
                    p.push(format!("{at}.extra: must not be negative (got {extra})"));
                }
                nodes(&mut p, &at, from);
                nodes(&mut p, &at, to);
            }
            Fault::Drop {
                duration, from, to, ..
            } => {
                positive(&mut p, &format!("{at}.duration"), *duration);
                nodes(&mut p, &at, from);
                nodes(&mut p, &at, to);
            }
        }
    }
    for (name, mut events) in life {
        if s.node_index(name).is_none() {
            continue; // already reported as unknown
        }
        events.sort_by_key(|e| e.0);
        let mut up = true;
        for (_, restart, i) in events {
            if restart && up {
                p.push(format!(
                    "faults[{i}]: Restart of {name:?}, which is not down at that time (crash it first)"
                ));
            } else if !restart && !up {
                p.push(format!(
                    "faults[{i}]: Crash of {name:?}, which is already down since an earlier Crash"
                ));
            }
            up = restart;
        }
    }

    for (i, g) in s.random_faults.iter().enumerate() {
        let at = format!("random_faults[{i}]");
        match g {
            RandomFault::Pauses {
                nodes: ns,
                per_minute,
                duration,
                ..
            } => {
                nodes(&mut p, &at, ns);
                rate(&mut p, &format!("{at}.per_minute"), *per_minute);
                dist(&mut p, &format!("{at}.duration"), duration, false);
            }
            RandomFault::ClockSteps {
                nodes: ns,
                per_hour,
                by,
            } => {
                nodes(&mut p, &at, ns);
                rate(&mut p, &format!("{at}.per_hour"), *per_hour);
                dist(&mut p, &format!("{at}.by"), by, true);
            }
            RandomFault::Partitions {
                nodes: ns,
                per_hour,
                duration,
            } => {
                nodes(&mut p, &at, ns);
                rate(&mut p, &format!("{at}.per_hour"), *per_hour);
                dist(&mut p, &format!("{at}.duration"), duration, false);
            }
            RandomFault::Crashes {
                nodes: ns,
                per_hour,
                restart_after,
            } => {
                nodes(&mut p, &at, ns);
                rate(&mut p, &format!("{at}.per_hour"), *per_hour);
                dist(&mut p, &format!("{at}.restart_after"), restart_after, false);
            }
        }
    }

    if let Some(e) = &s.expect {
        if let Some(a) = e.min_availability {
            if !(0.0..=1.0).contains(&a) {
                p.push(format!(
                    "expect.min_availability: must be a fraction in [0, 1] (got {a})"
                ));
            }
        }
    }
    p
}
