//! Semantic checks of a parsed scenario: every problem is listed, each with the field it concerns.
//!
//! Parsing (syntax, unknown fields, malformed durations) has already succeeded when this runs; here
//! we check what the types cannot say: names that exist, one grantor, margins below T, faults
//! inside the run, crash/restart sequences that make sense, rates and probabilities in range.
//!
//! One validator per section (a submodule each), in the order of the file: `lease`, then the
//! strategy's own settings (its protocol checks them, [`StrategyChecks::check_settings`]),
//! `clocks`, `nodes` (with the roles the protocol needs, [`StrategyChecks::check`]),
//! `network`, `workload`, `faults`, `random_faults`, the totals (`budgets`), `nemesis`
//! ([`super::nemesis::check`]) and `expect`. The protocol comes from a [`Protocols`]
//! (`strategy::Registry`; [`Builtin`] by default); the checks that need it (message kinds,
//! instructions, roles) are left out when the strategy cannot be read, which is then one
//! problem itself.

mod budgets;
mod clocks;
mod expect;
mod faults;
mod lease;
mod network;
mod nodes;
mod random_faults;
mod workload;

pub(crate) use budgets::{longest_delay_ns, rates_ok};

use super::limits;
use super::protocols::{Builtin, Protocols, StrategyChecks};
use super::{DurationDist, Scenario};
use crate::dist::Sampler;
use crate::time::{Dur, LocalDur};

/// What is allowed but likely a mistake, each said with the fix: a holder margin below the
/// scenario's own T*rho (the most a holder's clock can fall behind the grantor's in one term,
/// with rho the spread of the drifts the nodes can have: `clocks.drift_spread_ppm` and the
/// nodes' own `drift_ppm`), under which beliefs can overlap through drift alone. For the
/// protocols that name such a margin ([`StrategyChecks::drift_margin`]), built in; and
/// adversarial drift placed on a group of replicas with no `lease.initial_leader`, when the
/// replica it slows as the leader may never lead; and a drift beyond
/// [`limits::REALISTIC_DRIFT_PPM`] (10 %), allowed up to [`limits::MAX_DRIFT_PPM`] for questions
/// about clock-rate ratios, but farther off than any clock that software disciplines.
pub fn warnings(s: &Scenario) -> Vec<String> {
    warnings_in(s, &Builtin)
}

/// [`warnings`] under a strategy built in or known to `protocols` (none when it is neither).
pub fn warnings_in(s: &Scenario, protocols: &dyn Protocols) -> Vec<String> {
    let Ok(strategy) = protocols.checks(&s.strategy) else {
        return Vec::new();
    };
    warnings_with(s, &*strategy)
}

/// [`warnings`] under `strategy`.
pub fn warnings_with(s: &Scenario, strategy: &dyn StrategyChecks) -> Vec<String> {
    let mut all = drift_beyond_hardware_warnings(s);
    all.extend(drift_margin_warning(s, strategy));
    all.extend(slowed_leader_warning(s, strategy));
    all
}

/// Each drift beyond [`limits::REALISTIC_DRIFT_PPM`] either way (a spread beyond twice it): a
/// node's, a `DriftChange`'s, the spread of `clocks` and of `nemesis`.
fn drift_beyond_hardware_warnings(s: &Scenario) -> Vec<String> {
    let real = limits::REALISTIC_DRIFT_PPM;
    let mut drifts: Vec<(String, f64, f64)> = s
        .nodes
        .iter()
        .enumerate()
        .filter_map(|(i, n)| Some((format!("nodes[{i}].drift_ppm"), n.drift_ppm?, real)))
        .collect();
    for (i, f) in s.faults.iter().enumerate() {
        if let super::Fault::DriftChange { drift_ppm, .. } = f {
            drifts.push((format!("faults[{i}].drift_ppm"), *drift_ppm, real));
        }
    }
    let spread = 2.0 * real;
    drifts.push((
        "clocks.drift_spread_ppm".to_string(),
        s.clocks.drift_spread_ppm,
        spread,
    ));
    if let Some(rho) = s.nemesis.as_ref().and_then(|n| n.drift_ppm) {
        drifts.push(("nemesis.drift_ppm".to_string(), rho, spread));
    }
    drifts
        .into_iter()
        .filter(|&(_, ppm, bound)| ppm.abs() > bound)
        .map(|(at, ppm, bound)| {
            format!(
                "{at}: {ppm} ppm is beyond {bound} ppm ({}), farther off than any clock that \
                 software disciplines runs (Linux keeps adjtimex's tick within 10 % of nominal): \
                 a broken clock source or a thought experiment (see docs/src/limits.md)",
                if bound == real {
                    "10 % either way"
                } else {
                    "10 % either way at each end"
                }
            )
        })
        .collect()
}

/// Adversarial placement slows the replica meant to lead; under a protocol that elects its
/// leader and with no `lease.initial_leader`, that is the first replica, which leads only if it
/// wins the first election.
fn slowed_leader_warning(s: &Scenario, strategy: &dyn StrategyChecks) -> Option<String> {
    let c = &s.clocks;
    let replicas = s
        .nodes
        .iter()
        .filter(|n| n.role == super::Role::Replica)
        .count();
    if c.placement != super::Placement::Adversarial
        || c.drift_spread_ppm <= 0.0
        || replicas < 2
        || !strategy.lease_fields().initial_leader
        || s.lease.initial_leader.is_some()
    {
        return None;
    }
    let slowed = &s.nodes[s.slowed_replica()?];
    if slowed.drift_ppm.is_some() {
        return None;
    }
    Some(format!(
        "clocks.placement: Adversarial slows {} (the first replica) as the leader, but the first \
         election decides who leads; set lease.initial_leader: {:?} to make it lead first",
        slowed.name, slowed.name
    ))
}

/// The holder margin against T*rho, for a protocol that names one.
fn drift_margin_warning(s: &Scenario, strategy: &dyn StrategyChecks) -> Option<String> {
    let (margin, which) = strategy.drift_margin()?;
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
        return None;
    }
    Some(format!(
        "strategy {}: {which} is {margin}, below T*rho = {t} x {rho_ppm} ppm = {}, the most a \
         holder's clock can fall behind the grantor's in one term: beliefs can overlap through \
         drift alone; set holder_margin to at least {}",
        strategy.describe(),
        LocalDur::from_ns(bound_ns),
        LocalDur::from_ns(bound_ns),
    ))
}

/// Every problem of `s` under its own strategy, which must be a built-in one, in the order of
/// the file; empty if it can run.
pub fn validate(s: &Scenario) -> Vec<String> {
    validate_in(s, &Builtin)
}

/// Every problem of `s` under its own strategy, built-in or known to `protocols`, in the order
/// of the file; empty if it can run. A strategy `protocols` cannot read is one problem
/// (`strategy: unknown strategy "Foo" (known: ...)`), and the checks that need the protocol
/// (its roles, its message kinds) are then left out.
pub fn validate_in(s: &Scenario, protocols: &dyn Protocols) -> Vec<String> {
    match protocols.checks(&s.strategy) {
        Ok(strategy) => checks(s, Ok(&*strategy)),
        Err(e) => checks(s, Err(format!("strategy: {e}"))),
    }
}

/// Every problem of `s` run under `strategy` (whose own checks of its settings come after the
/// lease, and of roles and options where the nodes are), in the order of the file; empty if it
/// can run.
pub fn validate_with(s: &Scenario, strategy: &dyn StrategyChecks) -> Vec<String> {
    checks(s, Ok(strategy))
}

/// The checks, under `strategy` or without one (and the problem that says why).
fn checks(s: &Scenario, strategy: Result<&dyn StrategyChecks, String>) -> Vec<String> {
    let protocol = strategy.as_ref().ok().copied();
    let mut p = Problems::new(s);
    p.positive("duration", s.duration);
    p.at_most_max("duration", s.duration);
    lease::check(&mut p, protocol);
    match &strategy {
        Ok(strategy) => p.list.extend(strategy.check_settings(s)),
        Err(unresolved) => p.push(unresolved.clone()),
    }
    clocks::check(&mut p);
    nodes::check(&mut p, protocol);
    if let Some(strategy) = protocol {
        p.list.extend(strategy.check_node_settings(s));
    }
    network::check(&mut p);
    workload::check(&mut p);
    faults::check(&mut p, protocol);
    random_faults::check(&mut p);
    budgets::check(&mut p, protocol);
    if let Some(n) = &s.nemesis {
        p.list.extend(super::nemesis::check(n, s, protocol));
    }
    expect::check(&mut p, protocol);
    p.list
}

/// The problems found so far, and the checks every section shares.
struct Problems<'s> {
    s: &'s Scenario,
    list: Vec<String>,
    /// The nodes' names, for a problem that names an unknown one.
    known: String,
}

impl<'s> Problems<'s> {
    fn new(s: &'s Scenario) -> Problems<'s> {
        let known = s
            .nodes
            .iter()
            .map(|n| n.name.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        Problems {
            s,
            list: Vec::new(),
            known,
        }
    }

    fn push(&mut self, problem: String) {
        self.list.push(problem);
    }

    /// `name` must be a node's.
    fn node(&mut self, at: &str, name: &str) {
        if self.s.node_index(name).is_none() {
            let known = &self.known;
            self.list
                .push(format!("{at}: unknown node {name:?} (known: {known})"));
        }
    }

    /// Every name of a list left out or given must be a node's.
    fn nodes(&mut self, at: &str, names: &Option<Vec<String>>) {
        for name in names.iter().flatten() {
            self.node(at, name);
        }
    }

    fn positive(&mut self, at: &str, d: Dur) {
        if d.ns() <= 0 {
            self.push(format!("{at}: must be positive (got {d})"));
        }
    }

    /// A distribution that can be sampled; with `signed`, one that may draw below zero.
    fn dist(&mut self, at: &str, d: &DurationDist, signed: bool) {
        if let Err(e) = Sampler::new(d) {
            self.push(format!("{at}: {e}"));
        } else if !signed && Sampler::new(d).is_ok_and(|s| s.min_ns() < 0) {
            self.push(format!("{at}: durations cannot be negative"));
        }
    }

    fn rate(&mut self, at: &str, r: f64) {
        if !(r.is_finite() && r >= 0.0) {
            self.push(format!("{at}: must be a finite rate >= 0 (got {r})"));
        }
    }

    fn prob(&mut self, at: &str, x: f64) {
        if !(0.0..=1.0).contains(&x) {
            self.push(format!("{at}: must be a probability in [0, 1] (got {x})"));
        }
    }

    /// A span of time that some local deadline adds to a clock reading: at most the longest run.
    fn at_most_max(&mut self, at: &str, d: Dur) {
        if d.ns() > limits::MAX_DURATION_NS {
            self.push(format!(
                "{at}: {} is above the limit of {} (see docs/src/limits.md)",
                limits::dur(d.ns()),
                limits::dur(limits::MAX_DURATION_NS)
            ));
        }
    }

    /// The lease's own periods: positive, at least MIN_INTERVAL_NS, at most MAX_DURATION_NS.
    fn interval(&mut self, at: &str, d: LocalDur) {
        if d.ns() <= 0 {
            self.push(format!("{at}: must be positive (got {d})"));
        } else if d.ns() < limits::MIN_INTERVAL_NS {
            self.push(format!(
                "{at}: {d} is below the limit of {} (see docs/src/limits.md)",
                Dur::from_ns(limits::MIN_INTERVAL_NS)
            ));
        }
        self.at_most_max(at, d.as_true());
    }

    /// A drift a clock can have within the limits: |ppm| <= MAX_DRIFT_PPM.
    fn drift(&mut self, at: &str, ppm: f64) {
        if !(ppm.is_finite()
            && ppm.abs() <= limits::MAX_DRIFT_PPM
            && crate::time::DriftRate::from_ppm(ppm).is_some())
        {
            self.push(format!(
                "{at}: {ppm} is outside [-{m}, {m}], the limit (see docs/src/limits.md)",
                m = limits::MAX_DRIFT_PPM
            ));
        }
    }

    /// A wall-clock offset or step: |d| <= MAX_CLOCK_STEP_NS.
    fn clock_step(&mut self, at: &str, d: LocalDur) {
        if d.ns().unsigned_abs() > limits::MAX_CLOCK_STEP_NS as u64 {
            self.push(format!(
                "{at}: {} is beyond the limit of {} either way (see docs/src/limits.md)",
                limits::dur(d.ns()),
                limits::dur(limits::MAX_CLOCK_STEP_NS)
            ));
        }
    }

    /// Every kind a `kinds:` filter names must be one of the protocol's (unchecked without one).
    fn kinds(
        &mut self,
        at: &str,
        names: &Option<Vec<super::KindName>>,
        protocol: Option<&dyn StrategyChecks>,
    ) {
        let Some(protocol) = protocol else {
            return; // no protocol, no kinds to check against
        };
        let kinds = protocol.kinds();
        for super::KindName(kind) in names.iter().flatten() {
            if !kinds.contains(&kind.as_str()) {
                self.push(format!(
                    "{at}.kinds: {} has no message kind {kind:?} (its kinds: {})",
                    protocol.describe(),
                    kinds.join(", ")
                ));
            }
        }
    }
}
