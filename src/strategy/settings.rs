//! A protocol's settings: what a scenario's `strategy: Name(field: value, ...)` reads into
//! ([`Settings`]), and everything the rest of leasesim asks of a protocol through them.
//!
//! Each protocol's folder has a `settings.rs` with its settings type(s): the fields and their
//! defaults (serde), the RON text it writes back, the checks of its fields against a scenario,
//! which lease periods it reads, which field `--vary epsilon=` means and whether the drift
//! bound applies to it, the rows `compare --strategies all` runs, and how to build the protocol.
//! A [`Registry`](super::Registry) reads a strategy into them by name ([`Resolved`], their
//! object-safe face) and builds the protocol: as a [`Strategy`] that also answers for the
//! settings ([`StrategyChecks::check_settings`]).

use super::{MsgOf, Protocol, ProtocolMessage, Strategy};
use crate::msg::NodeId;
use crate::oracle::Authorities;
use crate::scenario::limits;
use crate::scenario::spec_serde::overridden;
use crate::scenario::{LeaseConfig, LeaseFields, Role, Scenario, StrategyChecks, StrategySpec};
use crate::time::LocalDur;
use crate::trace::Observer;
use serde::de::DeserializeOwned;
use std::collections::BTreeSet;

/// The settings of one protocol, as a scenario writes them: `TwoSided(holder_margin: "5ms")`
/// reads its fields into the type whose [`Settings::NAME`] is `TwoSided`.
///
/// The type is a struct of named fields with `#[derive(serde::Deserialize)]` (durations as
/// `"10ms"`, optional fields bare; `#[serde(deny_unknown_fields)]` to refuse a misspelt one),
/// and it must write itself back ([`Settings::to_ron`]) as text that reads as the same
/// settings. Everything but its name, its text and its protocol has a default.
pub trait Settings: DeserializeOwned + Clone + Send + Sync + 'static {
    /// The strategy's name in a scenario (`TwoSided`): an identifier.
    const NAME: &'static str;
    /// The protocol these settings run.
    type Protocol: Protocol;

    /// The settings as RON text, as summaries, reports and loaded scenarios print them
    /// (`TwoSided(holder_margin: "5ms")`); it reads back as the same settings.
    fn to_ron(&self) -> String;

    /// The protocol with these settings.
    fn build(&self) -> Self::Protocol;

    /// The protocol with these settings, where each of `nodes` runs its own settings instead
    /// (a scenario's `nodes[i].settings` over these, checked as these are): for a fleet that
    /// runs mixed configurations. `None` (the default): the protocol takes no settings of a
    /// node's own, and a scenario that writes some is refused.
    fn build_nodes(&self, nodes: &[(NodeId, Self)]) -> Option<Self::Protocol> {
        let _ = nodes;
        None
    }

    /// Every problem of `own`, a node's own settings read over these, for a node of `role`
    /// (beyond [`Settings::validate`] and the protocol's checks, which it passes too): a field
    /// that is the whole system's, not a node's, written otherwise. Each is said as
    /// `field: ...`. None by default.
    fn check_own(&self, own: &Self, role: Role) -> Vec<String> {
        let _ = (own, role);
        Vec::new()
    }

    /// Every problem of these settings in `scenario`, each prefixed with its field path
    /// (`strategy.holder_margin: ...`). Checked right after the lease; the protocol's own
    /// [`Protocol::check`] comes with the nodes. None by default.
    fn validate(&self, _scenario: &Scenario) -> Vec<String> {
        Vec::new()
    }

    /// The lease periods the protocol reads (the others are not checked). All by default.
    fn lease_fields(&self) -> LeaseFields {
        LeaseFields::ALL
    }

    /// An estimate, from above, of the events the protocol's own timers and messages cause per
    /// simulated second of `scenario`, beyond what the scenario's estimate already counts
    /// (requests, the lease's renewals and retries, faults, clock syncs): what a run of it
    /// adds against `limits.max_events`. Periods are taken as checked (at least 1 us); a rough,
    /// conservative figure, not an exact one. 0 by default.
    fn events_per_second(&self, _scenario: &Scenario) -> f64 {
        0.0
    }

    /// The margin the drift warning compares with T*rho, and its name, for a holder that stops
    /// that long before a grantor times out the same term on its own clock. None by default.
    fn drift_margin(&self) -> Option<(LocalDur, &'static str)> {
        None
    }

    /// The field `--vary epsilon=` varies, its value, and whether epsilon >= T*rho bounds it
    /// (the sweep's charts draw that bound). None by default: epsilon is not one of its fields.
    fn epsilon(&self) -> Option<Margin> {
        None
    }

    /// The rows `compare --strategies all` runs after the scenario's own (and the registered
    /// protocols' defaults), each with where it came from: variants of these settings. `None`
    /// (the default): the common lineup, every protocol's [`Settings::lineup`], with the
    /// scenario's own margin ([`Settings::epsilon`]) or 1% of T.
    fn compare_variants(&self, _scenario: &Scenario) -> Option<Vec<(Self, String)>> {
        None
    }

    /// Rows of `compare --strategies all` that run these settings on the scenario with its
    /// `lease` section changed, each with the section and where it came from: a protocol's
    /// choice that a scenario writes in `lease`, not in the strategy (Redlock's delayed restart
    /// is `lease.grantor_restart: Wait`). None by default.
    fn compare_lease_variants(&self, _scenario: &Scenario) -> Vec<(Self, LeaseConfig, String)> {
        Vec::new()
    }

    /// What this protocol adds to the common lineup of `compare --strategies all` on
    /// `scenario`: settings with the margin `margin` where it has one (said as `from`), each
    /// with where it came from. None by default.
    fn lineup(_scenario: &Scenario, _margin: LocalDur, _from: &str) -> Vec<(Self, String)> {
        Vec::new()
    }

    /// The nodes of `scenario` (by index) that `explore` must not shrink away: those the
    /// protocol cannot run without. By default, each node whose removal gives the protocol's
    /// checks (of these settings and of the roles) a problem they do not have now.
    fn keeps(&self, scenario: &Scenario) -> Vec<usize> {
        let protocol = self.build();
        let problems = |s: &Scenario| -> BTreeSet<String> {
            let mut p = self.validate(s);
            p.extend(Protocol::check(&protocol, s));
            p.into_iter().collect()
        };
        let now = problems(scenario);
        (0..scenario.nodes.len())
            .filter(|&i| {
                let mut without = scenario.clone();
                without.nodes.remove(i);
                !problems(&without).is_subset(&now)
            })
            .collect()
    }
}

/// The field `--vary epsilon=` means for a protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Margin {
    /// The field of the strategy (`holder_margin`; the sweep varies `strategy.holder_margin`).
    pub field: &'static str,
    /// Its value.
    pub value: LocalDur,
    /// Whether the bound epsilon >= T*rho is this margin's: a holder that stops this long
    /// before the grantor, each timing T on its own clock.
    pub bounds_drift: bool,
}

/// A strategy read into its protocol's settings, with its type hidden: what
/// [`Registry::resolve`](super::Registry::resolve) returns. Implemented for every [`Settings`].
pub trait Resolved: Send + Sync {
    /// The strategy's name ([`Settings::NAME`]).
    fn name(&self) -> &'static str;
    /// [`Settings::to_ron`].
    fn to_ron(&self) -> String;
    /// The strategy as its protocol writes it ([`Settings::to_ron`]); `None` if that text does
    /// not read as the strategy (a bug of the protocol, which debug builds assert against).
    fn spec(&self) -> Option<StrategySpec>;
    /// [`Settings::validate`].
    fn validate(&self, scenario: &Scenario) -> Vec<String>;
    /// [`Settings::epsilon`].
    fn epsilon(&self) -> Option<Margin>;
    /// [`Settings::events_per_second`].
    fn events_per_second(&self, scenario: &Scenario) -> f64;
    /// [`Settings::compare_variants`], each as a strategy.
    fn compare_variants(&self, scenario: &Scenario) -> Option<Vec<(StrategySpec, String)>>;
    /// [`Settings::compare_lease_variants`], each as a strategy.
    fn compare_lease_variants(
        &self,
        scenario: &Scenario,
    ) -> Vec<(StrategySpec, LeaseConfig, String)>;
    /// [`Settings::keeps`].
    fn keeps(&self, scenario: &Scenario) -> Vec<usize>;
    /// The protocol, built, which answers for these settings too.
    fn build(&self) -> Box<dyn Strategy>;
}

impl<S: Settings> Resolved for S {
    fn name(&self) -> &'static str {
        S::NAME
    }
    fn to_ron(&self) -> String {
        Settings::to_ron(self)
    }
    fn spec(&self) -> Option<StrategySpec> {
        spec_of(self)
    }
    fn validate(&self, scenario: &Scenario) -> Vec<String> {
        Settings::validate(self, scenario)
    }
    fn epsilon(&self) -> Option<Margin> {
        Settings::epsilon(self)
    }
    fn events_per_second(&self, scenario: &Scenario) -> f64 {
        Settings::events_per_second(self, scenario)
    }
    fn compare_variants(&self, scenario: &Scenario) -> Option<Vec<(StrategySpec, String)>> {
        Settings::compare_variants(self, scenario).map(specs)
    }
    fn compare_lease_variants(
        &self,
        scenario: &Scenario,
    ) -> Vec<(StrategySpec, LeaseConfig, String)> {
        Settings::compare_lease_variants(self, scenario)
            .into_iter()
            .filter_map(|(s, lease, from)| spec_of(&s).map(|spec| (spec, lease, from)))
            .collect()
    }
    fn keeps(&self, scenario: &Scenario) -> Vec<usize> {
        Settings::keeps(self, scenario)
    }
    fn build(&self) -> Box<dyn Strategy> {
        Box::new(Built {
            protocol: Settings::build(self),
            settings: self.clone(),
        })
    }
}

/// `settings` as a strategy, or `None` if its text does not read (a bug of the protocol's
/// [`Settings::to_ron`], which debug builds assert against).
pub(crate) fn spec_of<S: Settings>(settings: &S) -> Option<StrategySpec> {
    let text = settings.to_ron();
    let spec = StrategySpec::from_ron(&text);
    debug_assert!(
        spec.as_ref().is_ok_and(|s| s.name() == S::NAME),
        "{}'s to_ron writes {text:?}, which does not read as the strategy",
        S::NAME
    );
    spec.ok().filter(|s| s.name() == S::NAME)
}

/// Settings with where each came from, as strategies (those whose text reads).
pub(crate) fn specs<S: Settings>(rows: Vec<(S, String)>) -> Vec<(StrategySpec, String)> {
    rows.into_iter()
        .filter_map(|(s, from)| spec_of(&s).map(|spec| (spec, from)))
        .collect()
}

/// A protocol built from its settings: it runs as the protocol, and answers for the settings
/// too (their checks, the lease periods it reads, its drift margin).
struct Built<S: Settings> {
    settings: S,
    protocol: S::Protocol,
}

impl<S: Settings> StrategyChecks for Built<S> {
    fn describe(&self) -> String {
        Protocol::describe(&self.protocol)
    }
    fn kinds(&self) -> &'static [&'static str] {
        <MsgOf<S::Protocol> as ProtocolMessage>::KINDS
    }
    fn commands(&self) -> &'static [&'static str] {
        Protocol::commands(&self.protocol)
    }
    fn renewal_loop(&self, role: crate::scenario::Role) -> Option<&'static str> {
        Protocol::renewal_loop(&self.protocol, role)
    }
    fn persists(&self, role: crate::scenario::Role) -> Option<&'static str> {
        Protocol::persists(&self.protocol, role)
    }
    fn check_settings(&self, scenario: &Scenario) -> Vec<String> {
        Settings::validate(&self.settings, scenario)
    }
    fn check(&self, scenario: &Scenario) -> Vec<String> {
        Protocol::check(&self.protocol, scenario)
    }
    /// Each node's own settings read over the strategy's, checked as the strategy's are
    /// (their problems said at `nodes[i].settings`), and taken by the protocol.
    fn check_node_settings(&self, scenario: &Scenario) -> Vec<String> {
        let (nodes, mut problems) = node_settings(&self.settings, scenario);
        for &(n, ref settings) in &nodes {
            let at = |p: String| match p.strip_prefix("strategy.") {
                Some(rest) => format!("nodes[{n}].settings.{rest}"),
                None => format!("nodes[{n}].settings: {p}"),
            };
            let role = scenario.nodes[n].role;
            let own = self.settings.check_own(settings, role);
            problems.extend(own.into_iter().map(|p| format!("nodes[{n}].settings.{p}")));
            problems.extend(Settings::validate(settings, scenario).into_iter().map(at));
            let protocol = Settings::build(settings);
            problems.extend(Protocol::check(&protocol, scenario).into_iter().map(at));
        }
        if !nodes.is_empty() && problems.is_empty() && self.settings.build_nodes(&nodes).is_none() {
            for &(n, _) in &nodes {
                problems.push(format!(
                    "nodes[{n}].settings: {} takes no settings of a node's own",
                    S::NAME
                ));
            }
        }
        problems
    }
    fn lease_fields(&self) -> LeaseFields {
        Settings::lease_fields(&self.settings)
    }
    fn drift_margin(&self) -> Option<(LocalDur, &'static str)> {
        Settings::drift_margin(&self.settings)
    }
    fn events_per_second(&self, scenario: &Scenario) -> f64 {
        Settings::events_per_second(&self.settings, scenario)
    }
}

impl<S: Settings> Strategy for Built<S> {
    fn authorities(&self) -> Authorities {
        Protocol::authorities(&self.protocol)
    }
    fn simulate(
        &self,
        scenario: &Scenario,
        observer: Option<&mut (dyn Observer + 'static)>,
    ) -> super::Ran {
        // The protocol's own run, monomorphised by the engine; with the nodes' own settings
        // (validated) if the scenario gives any.
        let (nodes, problems) = node_settings(&self.settings, scenario);
        debug_assert!(problems.is_empty(), "{problems:?}");
        match self.settings.build_nodes(&nodes) {
            Some(protocol) if !nodes.is_empty() => {
                Strategy::simulate(&protocol, scenario, observer)
            }
            _ => Strategy::simulate(&self.protocol, scenario, observer),
        }
    }
}

/// The settings of each node of `scenario` that writes its own (`nodes[i].settings`, read over
/// `base`), by node, and the problems of those that do not read: another strategy's name, or
/// fields these settings do not have.
fn node_settings<S: Settings>(base: &S, scenario: &Scenario) -> (Vec<(NodeId, S)>, Vec<String>) {
    let (mut nodes, mut problems) = (Vec::new(), Vec::new());
    let Some(base_spec) = spec_of(base) else {
        return (nodes, problems);
    };
    for (i, node) in scenario.nodes.iter().enumerate() {
        let Some(own) = &node.settings else { continue };
        if own.name() != S::NAME {
            problems.push(format!(
                "nodes[{i}].settings: a node's own settings are the strategy's fields, written                  {}(field: value, ...) (got {})",
                S::NAME,
                own.name()
            ));
            continue;
        }
        let read = overridden(&base_spec, own).and_then(|spec| {
            super::registry::read_settings::<S>(&spec.to_ron()).map_err(|e| e.code.to_string())
        });
        match read {
            Ok(settings) => nodes.push((i, settings)),
            Err(e) => problems.push(format!("nodes[{i}].settings: {e}")),
        }
    }
    (nodes, problems)
}

pub mod check {
    //! The checks most settings share, each said with the field at fault (`at`, a path such
    //! as `strategy.holder_margin`).

    use super::*;

    /// A holder margin `m` under a lease of `t`: not negative, and shorter than the lease.
    pub fn margin(p: &mut Vec<String>, at: &str, m: LocalDur, t: LocalDur) {
        if m.ns() < 0 {
            p.push(format!("{at}: must not be negative (got {m})"));
        } else if m >= t && t.ns() > 0 {
            p.push(format!(
                "{at}: {m} must be shorter than the lease ({t}), or the holder never holds"
            ));
        }
    }

    /// `d` not negative.
    pub fn not_negative(p: &mut Vec<String>, at: &str, d: LocalDur) {
        if d.ns() < 0 {
            p.push(format!("{at}: must not be negative (got {d})"));
        }
    }

    /// `d` positive.
    pub fn positive(p: &mut Vec<String>, at: &str, d: LocalDur) {
        if d.ns() <= 0 {
            p.push(format!("{at}: must be positive (got {d})"));
        }
    }

    /// A period or timeout `d` of the protocol's own: when positive (a protocol says on its
    /// own that it must be), at least the shortest interval, 1 us, as the lease's periods are
    /// (shorter ones only multiply events), and at most the longest run.
    pub fn interval(p: &mut Vec<String>, at: &str, d: LocalDur) {
        if d.ns() > 0 && d.ns() < limits::MIN_INTERVAL_NS {
            p.push(format!(
                "{at}: {d} is below the limit of {} (see docs/src/limits.md)",
                limits::dur(limits::MIN_INTERVAL_NS)
            ));
        }
        at_most_max(p, at, d);
    }

    /// A margin `m` of either sign under a lease of `t`: |m| shorter than the lease. A holder
    /// that believes `-m` past its term overlaps the next holder's (the grantor's own wait
    /// covers less than a term), and one that stops `m >= t` early never acts.
    pub fn signed_margin(p: &mut Vec<String>, at: &str, m: LocalDur, t: LocalDur) {
        if t.ns() > 0 && m.ns() <= -t.ns() {
            p.push(format!(
                "{at}: {m} must be above minus the lease (-{t}): a holder that believes that \
                 long past its term overlaps the next one, which the grantor's wait does not cover"
            ));
        } else if t.ns() > 0 && m >= t {
            p.push(format!(
                "{at}: {m} must be shorter than the lease ({t}), or the holder never holds"
            ));
        }
    }

    /// The events per simulated second of something that happens `count` times every `d`
    /// (0 for a period that is not positive, which is reported on its own).
    pub fn per_second(count: f64, d: LocalDur) -> f64 {
        if d.ns() > 0 {
            count * 1e9 / d.ns() as f64
        } else {
            0.0
        }
    }

    /// `d` at most the longest run: a span some local deadline adds to a clock reading.
    pub fn at_most_max(p: &mut Vec<String>, at: &str, d: LocalDur) {
        if d.ns() > limits::MAX_DURATION_NS {
            p.push(format!(
                "{at}: {} is above the limit of {} (see docs/src/limits.md)",
                limits::dur(d.ns()),
                limits::dur(limits::MAX_DURATION_NS)
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::{Scenario, StrategySpec};
    use crate::strategy::Registry;

    fn scenario(strategy: &str, nodes: &str) -> Scenario {
        Scenario::from_ron(&format!(
            r#"Scenario(duration: "1s", lease: (duration: "1s"), strategy: {strategy},
                nodes: [{nodes}])"#
        ))
        .unwrap()
    }

    /// By default a node is kept when the scenario without it fails a check it passes with
    /// it: the base protocol's one Grantor always, its only Contender, but not one of two; a
    /// Raft group runs on any number of Replicas from one.
    #[test]
    fn explore_keeps_the_nodes_a_protocol_cannot_run_without() {
        let keeps = |s: &Scenario| Registry::new().resolve(&s.strategy).unwrap().keeps(s);
        let lock = r#"(name: "lock", role: Grantor), (name: "a", role: Contender)"#;
        let two = format!(r#"{lock}, (name: "b", role: Contender)"#);
        assert_eq!(keeps(&scenario("CachedBool", lock)), [0, 1]);
        assert_eq!(keeps(&scenario("CachedBool", &two)), [0]);
        let raft = r#"RaftLeaderLease(election_timeout: "1s")"#;
        let replicas = r#"(name: "r0", role: Replica), (name: "r1", role: Replica)"#;
        assert_eq!(keeps(&scenario(raft, replicas)), Vec::<usize>::new());
    }

    /// Every built-in protocol writes its settings back as it writes them (defaults and zero
    /// margins as it always did), and that text reads as the same settings.
    #[test]
    fn every_built_in_writes_its_settings_back_as_they_read() {
        let registry = Registry::new();
        for (text, written) in [
            ("TwoSided", "TwoSided()"),
            (
                r#"TwoSided(grantor_margin: "0s", holder_margin: "5ms")"#,
                r#"TwoSided(holder_margin: "5ms")"#,
            ),
            ("GrantorOnly()", "GrantorOnly"),
            ("HolderOnly", "HolderOnly()"),
            ("CachedBool", "CachedBool"),
            (
                r#"WallClock(holder_margin: "1.5s")"#,
                r#"WallClock(holder_margin: "1.5s")"#,
            ),
            ("OnReceiveStart()", "OnReceiveStart()"),
            (
                "Redlock(quorum: One)",
                r#"Redlock(drift_factor: 0.01, drift_allowance: "2ms", request_timeout: "50ms", expiry_clock: Wall, quorum: One)"#,
            ),
            (
                r#"Redlock(wait: RemainingTtl, holder: Lapses(work: "3s"))"#,
                r#"Redlock(drift_factor: 0.01, drift_allowance: "2ms", request_timeout: "50ms", expiry_clock: Wall, quorum: Majority, holder: Lapses(work: "3s"), wait: RemainingTtl)"#,
            ),
            (
                r#"RaftLeaderLease(election_timeout: "1s", tick: "100ms")"#,
                r#"RaftLeaderLease(election_timeout: "1s", tick: "100ms", reads: Lease, max_clock_skew: "0s", lease_rule: HeartbeatQuorum, lease_start: OnSend, check_quorum: true, transfer_suspect: true, read_before_commit: Hold, pre_vote: false)"#,
            ),
            (
                r#"LeaseGuard(election_timeout: "1s", heartbeat: "100ms")"#,
                r#"LeaseGuard(mode: LeaseGuard, max_clock_error: "200us", noop_every: "250ms", election_timeout: "1s", heartbeat: "100ms", log_write: "0s")"#,
            ),
            (
                "ChubbySession",
                r#"ChubbySession(grace: "45s", lock_delay: "0s", act_in_jeopardy: false, holder_margin: "0s", keepalive: HeldOpen, hold_margin: "1s")"#,
            ),
            (
                "ZooKeeperSession",
                r#"ZooKeeperSession(tick_time: "2s", session_timeout: "30s", act_while_disconnected: false)"#,
            ),
            (
                r#"ZooKeeperSession(max_session_timeout: "240s", min_session_timeout: "20s", tick_time: "3s")"#,
                r#"ZooKeeperSession(tick_time: "3s", session_timeout: "30s", min_session_timeout: "20s", max_session_timeout: "240s", act_while_disconnected: false)"#,
            ),
            (
                r#"ZooKeeperSession(max_session_timeout: "1m")"#,
                r#"ZooKeeperSession(tick_time: "2s", session_timeout: "30s", max_session_timeout: "60s", act_while_disconnected: false)"#,
            ),
            (
                r#"ZooKeeperSession(simulated_session_expiration_percent: 100, error_policy: Standard)"#,
                r#"ZooKeeperSession(tick_time: "2s", session_timeout: "30s", act_while_disconnected: false, error_policy: Standard, simulated_session_expiration_percent: 100)"#,
            ),
            (
                r#"ZooKeeperSession(error_policy: Session)"#,
                r#"ZooKeeperSession(tick_time: "2s", session_timeout: "30s", act_while_disconnected: false, error_policy: Session)"#,
            ),
            (
                "ConsulSession(renew: StopOnError, rpc_timeout: None)",
                r#"ConsulSession(ttl_multiplier: 2, lock_delay: "15s", renew: StopOnError, query_wait: "300s", lock_wait: "15s", lock_retry: "5s", rpc_timeout: None)"#,
            ),
            (
                "K8sLeaderElection(observed_clock: Wall)",
                r#"K8sLeaderElection(renew_deadline: "10s", retry_period: "2s", jitter_factor: 1.2, observed_clock: Wall)"#,
            ),
            (
                r#"EtcdLease(checkpoint_interval: "2s", expiry_clock: Wall)"#,
                r#"EtcdLease(election_timeout: "1s", heartbeat: "100ms", check_own_key: true, ensure_leadership: true, checkpoint_interval: "2s", expiry_clock: Wall, app_watches_session: true)"#,
            ),
            ("TrueTime", "TrueTime()"),
            (
                "Custom(holder_clock: Wall, lease_start: OnReceive, validity: Clock)",
                r#"Custom(holder_clock: Wall, lease_start: OnReceive, holder_margin: "0s", grantor_margin: "0s", validity: Clock)"#,
            ),
        ] {
            let spec = StrategySpec::from_ron(text).unwrap();
            let settings = registry.resolve(&spec).unwrap();
            assert_eq!(settings.to_ron(), written, "{text}");
            assert_eq!(settings.build().describe(), written, "{text}");
            let again = registry.resolve(&settings.spec().unwrap()).unwrap();
            assert_eq!(again.to_ron(), written, "{text}");
        }
        // Every built-in is in the list.
        assert_eq!(registry.names().len(), 16);
    }
}
