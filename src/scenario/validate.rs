//! Semantic checks of a parsed scenario: every problem is listed, each with the field it concerns.
//!
//! Parsing (syntax, unknown fields, malformed durations) has already succeeded when this runs; here
//! we check what the types cannot say: names that exist, one grantor, margins below T, faults
//! inside the run, crash/restart sequences that make sense, rates and probabilities in range.

use super::limits::{self, count};
use super::{
    DurationDist, Fault, FreezeClock, KindName, PauseKind, RandomFault, Role, Scenario,
    StrategySpec, Validity,
};
use crate::dist::Sampler;
use crate::strategy::{Registry, Strategy};
use crate::time::{DriftRate, Dur, LocalDur};
use std::collections::BTreeMap;

/// What is allowed but likely a mistake, each said with the fix: a holder margin below the
/// scenario's own T*rho (the most a holder's clock can fall behind the grantor's in one term,
/// with rho the spread of the drifts the nodes can have: `clocks.drift_spread_ppm` and the
/// nodes' own `drift_ppm`), under which beliefs can overlap through drift alone. For the
/// strategies with a holder margin and a grantor that waits out T; `TwoSided` counts its
/// grantor margin too.
pub fn warnings(s: &Scenario) -> Vec<String> {
    let margin = match &s.strategy {
        StrategySpec::TwoSided {
            holder_margin,
            grantor_margin,
        } => Some((
            LocalDur::from_ns(
                holder_margin
                    .ns()
                    .saturating_add(grantor_margin.ns().max(0)),
            ),
            "holder_margin + grantor_margin",
        )),
        StrategySpec::WallClock { holder_margin }
        | StrategySpec::OnReceiveStart { holder_margin }
        | StrategySpec::Custom {
            holder_margin,
            validity: Validity::Clock,
            ..
        } => Some((*holder_margin, "holder_margin")),
        _ => None,
    };
    let Some((margin, which)) = margin else {
        return Vec::new();
    };
    let spread = s.clocks.drift_spread_ppm;
    let drifts = s.nodes.iter().flat_map(|n| match n.drift_ppm {
        Some(d) => vec![d, d],
        None => vec![-spread / 2.0, spread / 2.0],
    });
    let (lo, hi) = drifts.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), d| {
        (lo.min(d), hi.max(d))
    });
    let rho_ppm = if hi >= lo { hi - lo } else { 0.0 };
    // A warning's arithmetic, not the clock path: whole nanoseconds, rounded up.
    let t = s.lease.duration;
    let bound_ns = (t.ns() as f64 * rho_ppm / 1e6).ceil() as i64;
    if margin.ns() >= bound_ns {
        return Vec::new();
    }
    vec![format!(
        "strategy {}: {which} is {margin}, below T*rho = {t} x {rho_ppm} ppm = {}, the most a \
         holder's clock can fall behind the grantor's in one term: beliefs can overlap through \
         drift alone; set holder_margin to at least {}",
        s.strategy.to_ron(),
        LocalDur::from_ns(bound_ns),
        LocalDur::from_ns(bound_ns),
    )]
}

/// Every problem of `s` under its own strategy, which must be a built-in one, in the order of
/// the file; empty if it can run.
pub fn validate(s: &Scenario) -> Vec<String> {
    validate_in(s, &Registry::new())
}

/// Every problem of `s` under its own strategy, built-in or known to `registry`, in the order
/// of the file; empty if it can run. A strategy `registry` cannot build is one problem
/// (`strategy: unknown strategy "Foo" (known: ...)`), and the checks that need the protocol
/// (its roles, its message kinds) are then left out.
pub fn validate_in(s: &Scenario, registry: &Registry) -> Vec<String> {
    match registry.build(&s.strategy) {
        Ok(strategy) => checks(s, Ok(&*strategy)),
        Err(e) => checks(s, Err(format!("strategy: {e}"))),
    }
}

/// Every problem of `s` run under `strategy` (whose own checks of roles and options come where
/// the nodes are), in the order of the file; empty if it can run.
pub fn validate_with(s: &Scenario, strategy: &dyn Strategy) -> Vec<String> {
    checks(s, Ok(strategy))
}

/// The checks, under `strategy` or without one (and the problem that says why).
fn checks(s: &Scenario, strategy: Result<&dyn Strategy, String>) -> Vec<String> {
    let mut p = Vec::new();
    let kinds: &[&str] = strategy.as_ref().map_or(&[], |st| st.kinds());
    let known_kinds = |p: &mut Vec<String>, at: &str, names: &Option<Vec<KindName>>| {
        let Ok(strategy) = strategy.as_ref() else {
            return; // no protocol, no kinds to check against
        };
        for KindName(kind) in names.iter().flatten() {
            if !kinds.contains(&kind.as_str()) {
                p.push(format!(
                    "{at}.kinds: {} has no message kind {kind:?} (its kinds: {})",
                    strategy.describe(),
                    kinds.join(", ")
                ));
            }
        }
    };
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
        if d.ns() <= 0 {
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

    // A span of time that some local deadline adds to a clock reading: at most the longest run.
    let at_most_max = |p: &mut Vec<String>, at: &str, d: Dur| {
        if d.ns() > limits::MAX_DURATION_NS {
            p.push(format!(
                "{at}: {} is above the limit of {} (see README, Limits)",
                limits::dur(d.ns()),
                limits::dur(limits::MAX_DURATION_NS)
            ));
        }
    };
    // The lease's own periods: positive, at least MIN_INTERVAL_NS, at most MAX_DURATION_NS.
    let interval = |p: &mut Vec<String>, at: &str, d: LocalDur| {
        if d.ns() <= 0 {
            p.push(format!("{at}: must be positive (got {d})"));
        } else if d.ns() < limits::MIN_INTERVAL_NS {
            p.push(format!(
                "{at}: {d} is below the limit of {} (see README, Limits)",
                Dur::from_ns(limits::MIN_INTERVAL_NS)
            ));
        }
        at_most_max(p, at, d.as_true());
    };

    positive(&mut p, "duration", s.duration);
    at_most_max(&mut p, "duration", s.duration);
    interval(&mut p, "lease.duration", t);
    let renew = s.lease.renew_every();
    interval(&mut p, "lease.renew_every", renew);
    if renew >= t && t.ns() > 0 {
        p.push(format!(
            "lease.renew_every: {renew} must be shorter than the lease ({t}), or the lease lapses between renewals"
        ));
    }
    interval(&mut p, "lease.retry_every", s.lease.retry_every);

    // Strategy margins.
    let margin = |p: &mut Vec<String>, at: &str, m: LocalDur| {
        if m.ns() < 0 {
            p.push(format!("strategy.{at}: must not be negative (got {m})"));
        } else if m >= t && t.ns() > 0 {
            p.push(format!(
                "strategy.{at}: {m} must be shorter than the lease ({t}), or the holder never holds"
            ));
        }
    };
    match &s.strategy {
        StrategySpec::Redlock {
            drift_allowance,
            request_timeout,
            ..
        } => {
            if drift_allowance.ns() < 0 {
                p.push(format!(
                    "strategy.drift_allowance: must not be negative (got {drift_allowance})"
                ));
            }
            positive(
                &mut p,
                "strategy.request_timeout",
                request_timeout.as_true(),
            );
            at_most_max(
                &mut p,
                "strategy.request_timeout",
                request_timeout.as_true(),
            );
        }
        StrategySpec::TwoSided {
            holder_margin,
            grantor_margin,
        } => {
            margin(&mut p, "holder_margin", *holder_margin);
            if grantor_margin.ns() < 0 {
                p.push(format!(
                    "strategy.grantor_margin: must not be negative (got {grantor_margin})"
                ));
            }
            at_most_max(&mut p, "strategy.grantor_margin", grantor_margin.as_true());
        }
        StrategySpec::Custom {
            holder_margin,
            grantor_margin,
            validity,
            ..
        } => {
            margin(&mut p, "holder_margin", *holder_margin);
            if *validity == Validity::CachedBool && holder_margin.ns() != 0 {
                p.push(format!(
                    "strategy.holder_margin: {holder_margin} does not apply with validity: \
                     CachedBool, whose bool is cleared at start + T (by the renewal loop or a \
                     Reject), never T - holder_margin; leave it out, or use validity: Clock"
                ));
            }
            if *validity == Validity::Unchecked && holder_margin.ns() != 0 {
                p.push(format!(
                    "strategy.holder_margin: {holder_margin} does not apply with validity: \
                     Unchecked, whose bool only a crash clears; leave it out, or use validity: \
                     Clock"
                ));
            }
            if grantor_margin.ns() <= -t.ns() {
                p.push(format!(
                    "strategy.grantor_margin: {grantor_margin} would free the lease before it is granted (T is {t})"
                ));
            }
            at_most_max(&mut p, "strategy.grantor_margin", grantor_margin.as_true());
        }
        StrategySpec::HolderOnly { margin: m } => margin(&mut p, "margin", *m),
        StrategySpec::WallClock { holder_margin }
        | StrategySpec::OnReceiveStart { holder_margin } => {
            margin(&mut p, "holder_margin", *holder_margin)
        }
        StrategySpec::GrantorOnly | StrategySpec::CachedBool => {}
        // Its fields are checked with its roles (`Protocol::check`).
        StrategySpec::RaftLeaderLease { .. }
        | StrategySpec::LeaseGuard { .. }
        | StrategySpec::ChubbySession { .. }
        | StrategySpec::K8sLeaderElection { .. }
        | StrategySpec::TrueTime { .. } => {}
        // Its fields are the protocol's to check (`Protocol::check`).
        StrategySpec::Other { .. } => {}
    }
    if let Err(unresolved) = &strategy {
        p.push(unresolved.clone());
    }

    // Nodes and clocks.
    let spread = s.clocks.drift_spread_ppm;
    if !(spread.is_finite() && (0.0..=limits::MAX_DRIFT_SPREAD_PPM).contains(&spread)) {
        p.push(format!(
            "clocks.drift_spread_ppm: {spread} is outside [0, {}], the limit (see README, Limits)",
            limits::MAX_DRIFT_SPREAD_PPM
        ));
    }
    if let Some(u) = &s.clocks.uncertainty {
        if u.base.ns() < 0 || u.base.ns() > limits::MAX_CLOCK_STEP_NS {
            p.push(format!(
                "clocks.uncertainty.base: {} is outside [0s, {}] (see README, Limits)",
                u.base,
                limits::dur(limits::MAX_CLOCK_STEP_NS)
            ));
        }
        if !(u.growth_ppm.is_finite() && (0.0..=limits::MAX_DRIFT_PPM).contains(&u.growth_ppm)) {
            p.push(format!(
                "clocks.uncertainty.growth_ppm: {} is outside [0, {}], the limit (see README, \
                 Limits)",
                u.growth_ppm,
                limits::MAX_DRIFT_PPM
            ));
        }
        if u.sync_every.ns() < limits::MIN_INTERVAL_NS {
            p.push(format!(
                "clocks.uncertainty.sync_every: {} is below the shortest interval, {} (see \
                 README, Limits)",
                u.sync_every,
                limits::dur(limits::MIN_INTERVAL_NS)
            ));
        }
    }
    // A drift a clock can have within the limits: |ppm| <= MAX_DRIFT_PPM.
    let drift = |p: &mut Vec<String>, at: &str, ppm: f64| {
        if !(ppm.is_finite()
            && ppm.abs() <= limits::MAX_DRIFT_PPM
            && DriftRate::from_ppm(ppm).is_some())
        {
            p.push(format!(
                "{at}: {ppm} is outside [-{m}, {m}], the limit (see README, Limits)",
                m = limits::MAX_DRIFT_PPM
            ));
        }
    };
    // A wall-clock offset or step: |d| <= MAX_CLOCK_STEP_NS.
    let clock_step = |p: &mut Vec<String>, at: &str, d: LocalDur| {
        if d.ns().unsigned_abs() > limits::MAX_CLOCK_STEP_NS as u64 {
            p.push(format!(
                "{at}: {} is beyond the limit of {} either way (see README, Limits)",
                limits::dur(d.ns()),
                limits::dur(limits::MAX_CLOCK_STEP_NS)
            ));
        }
    };
    if s.nodes.len() > limits::MAX_NODES {
        p.push(format!(
            "nodes: {} nodes, above the limit of {} (see README, Limits)",
            s.nodes.len(),
            limits::MAX_NODES
        ));
    }
    if let Ok(strategy) = &strategy {
        p.extend(strategy.check(s));
    }
    p.extend(super::names::problems(s));
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
            drift(&mut p, &format!("nodes[{i}].drift_ppm"), ppm);
        }
        clock_step(&mut p, &format!("nodes[{i}].offset"), n.offset);
        if n.start.ns() < 0 || n.start >= s.duration {
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
    if s.workload.service_time.ns() < 0 {
        p.push(format!(
            "workload.service_time: must not be negative (got {})",
            s.workload.service_time
        ));
    }
    at_most_max(&mut p, "workload.service_time", s.workload.service_time);
    for (at, r) in [
        ("workload.reads_per_second", s.workload.reads_per_second),
        ("workload.writes_per_second", s.workload.writes_per_second),
    ] {
        if r > limits::MAX_REQUEST_RATE {
            p.push(format!(
                "{at}: {r} is above the limit of {} per contender (see README, Limits)",
                limits::MAX_REQUEST_RATE
            ));
        }
    }

    if let Some(ops) = &s.workload.periodic {
        let min_every = (1e9 / limits::MAX_REQUEST_RATE) as i64;
        if ops.every.ns() < min_every {
            p.push(format!(
                "workload.periodic.every: must be at least {} (at most {} operations per second \
                 per contender, see README, Limits) (got {})",
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
        at_most_max(&mut p, "workload.periodic.jitter", ops.jitter);
    }
    if s.workload.keys == 0 || s.workload.keys > limits::MAX_KEYS {
        p.push(format!(
            "workload.keys: must be in [1, {}] (got {})",
            limits::MAX_KEYS,
            s.workload.keys
        ));
    }

    // Faults.
    if s.faults.len() > limits::MAX_FAULTS {
        p.push(format!(
            "faults: {} faults, above the limit of {} (see README, Limits)",
            s.faults.len(),
            limits::MAX_FAULTS
        ));
    }

    let mut life: BTreeMap<&str, Vec<(Dur, bool, usize)>> = BTreeMap::new();
    for (i, f) in s.faults.iter().enumerate() {
        let at = format!("faults[{i}]");
        if f.at().ns() < 0 || f.at() >= s.duration {
            p.push(format!(
                "{at}: starts at {}, outside the run [0, {})",
                f.at(),
                s.duration
            ));
        }
        match f {
            Fault::Pause {
                node: n,
                duration,
                kind,
                clock,
                ..
            } => {
                node(&mut p, &at, n);
                positive(&mut p, &format!("{at}.duration"), *duration);
                freeze_clock_applies(&mut p, &at, *kind, *clock);
            }
            Fault::Crash { node: n, at: when } => {
                node(&mut p, &at, n);
                life.entry(n).or_default().push((*when, false, i));
            }
            Fault::Restart { node: n, at: when } => {
                node(&mut p, &at, n);
                life.entry(n).or_default().push((*when, true, i));
            }
            Fault::ClockStep { node: n, by, .. } => {
                node(&mut p, &at, n);
                clock_step(&mut p, &format!("{at}.by"), *by);
            }
            Fault::DriftChange {
                node: n, drift_ppm, ..
            } => {
                node(&mut p, &at, n);
                drift(&mut p, &format!("{at}.drift_ppm"), *drift_ppm);
            }
            Fault::StepDown { node: n, .. } | Fault::TransferLeader { to: n, .. } => {
                node(&mut p, &at, n);
                let name = match f {
                    Fault::StepDown { .. } => "StepDown",
                    _ => "TransferLeader",
                };
                if let Ok(strategy) = strategy.as_ref() {
                    if !strategy.commands().contains(&name) {
                        p.push(format!(
                            "{at}: {name} is an instruction to a leader, which {} does not take (it takes: {})",
                            strategy.describe(),
                            if strategy.commands().is_empty() {
                                "none".to_string()
                            } else {
                                strategy.commands().join(", ")
                            }
                        ));
                    }
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
                kinds,
                ..
            } => {
                positive(&mut p, &format!("{at}.duration"), *duration);
                if extra.ns() < 0 {
                    p.push(format!("{at}.extra: must not be negative (got {extra})"));
                }
                nodes(&mut p, &at, from);
                nodes(&mut p, &at, to);
                known_kinds(&mut p, &at, kinds);
            }
            Fault::Drop {
                duration,
                from,
                to,
                kinds,
                ..
            } => {
                positive(&mut p, &format!("{at}.duration"), *duration);
                nodes(&mut p, &at, from);
                nodes(&mut p, &at, to);
                known_kinds(&mut p, &at, kinds);
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
                kind,
                clock,
            } => {
                freeze_clock_applies(&mut p, &at, *kind, *clock);
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
                if Sampler::new(by).is_ok() {
                    let (lo, hi) = (limits::draw_floor_ns(by), limits::draw_bound_ns(by));
                    if lo.unsigned_abs().max(hi.unsigned_abs()) > limits::MAX_CLOCK_STEP_NS as u64 {
                        p.push(format!(
                            "{at}.by: draws reach {} (heavy tails cut at their 1 - 1e-9 quantile), beyond the limit of {} either way (see README, Limits)",
                            limits::dur(if hi.unsigned_abs() >= lo.unsigned_abs() { hi } else { lo }),
                            limits::dur(limits::MAX_CLOCK_STEP_NS)
                        ));
                    }
                }
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

    budgets(s, &mut p);

    if let Some(n) = &s.nemesis {
        p.extend(super::nemesis::check(n, s, strategy.as_ref().ok().copied()));
    }

    if let Some(e) = &s.expect {
        for (key, a) in [
            ("min_availability", e.min_availability),
            ("max_availability", e.max_availability),
        ] {
            if a.is_some_and(|a| !(0.0..=1.0).contains(&a)) {
                let a = a.unwrap_or_default();
                p.push(format!(
                    "expect.{key}: must be a fraction in [0, 1] (got {a})"
                ));
            }
        }
        for (i, name) in e.holders.iter().flatten().enumerate() {
            node(&mut p, &format!("expect.holders[{i}]"), name);
        }
        for kind in e.messages.iter().flat_map(|m| m.keys()) {
            if strategy.is_ok() && !kinds.contains(&kind.as_str()) {
                p.push(format!(
                    "expect.messages: unknown message kind {kind:?} (known: {})",
                    kinds.join(", ")
                ));
            }
        }
    }
    p
}

/// A pause's `clock` applies only to a `VmFreeze`: a GC pause stops no clock, so a `clock`
/// given for one would be ignored. Refuses it (`clock` is kept as given to tell).
fn freeze_clock_applies(
    p: &mut Vec<String>,
    at: &str,
    kind: PauseKind,
    clock: Option<FreezeClock>,
) {
    if let (PauseKind::Gc, Some(clock)) = (kind, clock) {
        p.push(format!(
            "{at}.clock: {clock:?} does not apply to a Gc pause, whose clocks keep counting \
             (clock only applies to kind: VmFreeze); remove it, or set kind: VmFreeze"
        ));
    }
}

/// The limits on totals (see [`limits`]): random faults, clock steps, requests waiting in a
/// paused node or in flight, and events. Skipped where a rate is already reported as invalid.
fn budgets(s: &Scenario, p: &mut Vec<String>) {
    let see = "(see README, Limits)";
    if s.limits.max_events > limits::MAX_EVENTS {
        p.push(format!(
            "limits.max_events: {} is above the limit of {} {see}",
            s.limits.max_events,
            limits::MAX_EVENTS
        ));
    }
    if !rates_ok(s) || s.duration.ns() <= 0 {
        return;
    }
    for (i, g) in s.random_faults.iter().enumerate() {
        let (field, per_second) = match g {
            RandomFault::Pauses { per_minute, .. } => ("per_minute", per_minute / 60.0),
            RandomFault::ClockSteps { per_hour, .. }
            | RandomFault::Partitions { per_hour, .. }
            | RandomFault::Crashes { per_hour, .. } => ("per_hour", per_hour / 3600.0),
        };
        if per_second > limits::MAX_FAULT_RATE_PER_SECOND {
            p.push(format!(
                "random_faults[{i}].{field}: {} per second, above the limit of {} per second (a mean gap of {}) {see}",
                count(per_second),
                count(limits::MAX_FAULT_RATE_PER_SECOND),
                Dur::from_ns(limits::MIN_INTERVAL_NS)
            ));
        }
    }

    let expected = limits::expected_random_faults(s);
    let total: f64 = expected.iter().sum();
    if total > limits::MAX_RANDOM_FAULTS {
        p.push(format!(
            "random_faults: the generators are expected to draw {} faults over {} (rate x duration x nodes; a partition counts once per node), above the limit of {} {see}",
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
            "faults, random_faults: {} clock steps ({} fixed, {} expected to be drawn), above the limit of {} {see}",
            count(fixed_steps + drawn_steps),
            count(fixed_steps),
            count(drawn_steps),
            count(limits::MAX_CLOCK_STEPS)
        ));
    }

    // Requests that wait: in a paused contender until it resumes, and for their effect.
    let w = &s.workload;
    let per_second = w.requests_per_second();
    if per_second > 0.0 {
        let run = s.duration.ns();
        let mut longest: (i64, String) = (0, String::new());
        let mut windows: BTreeMap<&str, Vec<(i64, i64)>> = BTreeMap::new();
        for f in &s.faults {
            if let Fault::Pause {
                node, at, duration, ..
            } = f
            {
                let start = at.ns().clamp(0, run);
                let end = at.ns().saturating_add(duration.ns().max(0)).clamp(0, run);
                windows.entry(node).or_default().push((start, end));
            }
        }
        for (node, ws) in windows {
            if s.node_index(node)
                .is_some_and(|i| s.nodes[i].role == Role::Contender)
            {
                let merged = longest_merged(ws);
                if merged > longest.0 {
                    longest = (merged, format!("fixed pauses of {node:?}"));
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
                "workload: {} requests/s x ({why}service_time {}) = {} requests waiting at one contender, above the limit of {} {see}",
                per_second,
                w.service_time,
                count(pending),
                count(limits::MAX_PENDING_REQUESTS)
            ));
        }
    }
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
                "workload.writes_per_second: {} writes/s x a delay of up to {} (network.delay and delay spikes; heavy tails cut at their 1 - 1e-9 quantile) = {} writes in flight from one contender, above the limit of {} {see}",
                w.writes_per_second,
                Dur::from_ns(delay),
                count(in_flight),
                count(limits::MAX_PENDING_REQUESTS)
            ));
        }
    }

    let events = limits::estimated_events(s);
    if events > limits::MAX_EVENTS as f64 {
        p.push(format!(
            "duration: a run of {} needs about {} events (requests, retries, renewals, faults), above the limit of {} {see}; shorten it or lower the rates",
            limits::dur(s.duration.ns()),
            count(events),
            count(limits::MAX_EVENTS as f64)
        ));
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
