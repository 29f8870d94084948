//! What `leasesim compare` runs: one scenario under several strategies on the same fault
//! schedule. [`all_strategies`] picks the rows of `--strategies all` for the scenario at hand
//! (its own strategy first; its protocol's variants, and base strategies and lock services),
//! each with the words that say where its settings came from; [`Row`] is a row of
//! `compare.json`. Running them and drawing the charts is the command line's.

use crate::outcome::Summary;
use crate::scenario::{LeaseConfig, Scenario, StrategySpec};
use crate::strategy::Registry;
use crate::time::LocalDur;

/// What a row of `compare` says of where it came from.
pub const OWN: &str = "the scenario's own";

/// A row `compare` runs: a strategy, the scenario's `lease` section when the row changes it
/// (a choice a protocol makes there, such as Redlock's delayed restart), and where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub strategy: StrategySpec,
    /// `None`: the scenario's own.
    pub lease: Option<LeaseConfig>,
    pub origin: String,
}

impl Entry {
    /// `strategy` on the scenario's own lease, from `origin`.
    pub fn new(strategy: StrategySpec, origin: impl Into<String>) -> Entry {
        Entry {
            strategy,
            lease: None,
            origin: origin.into(),
        }
    }

    /// `scenario` as this row runs it: its strategy, and its lease section if it changes it.
    pub fn apply(&self, scenario: &mut Scenario) {
        scenario.strategy = self.strategy.clone();
        if let Some(lease) = &self.lease {
            scenario.lease = lease.clone();
        }
    }
}

/// The strategies `compare --strategies all` runs, each with where it came from: the scenario's
/// own strategy first, as its protocol writes it; then the registered protocols (with their
/// defaults, when every field has one); then the variants its protocol names: its choices
/// (`Settings::compare_variants`: a Redlock scenario's settings with keys expiring on the
/// monotonic clock, with a quorum of one and with each other persistence, a Raft, LeaseGuard,
/// etcd, ZooKeeper, Chubby, Consul or Kubernetes scenario's settings with each choice turned
/// over) and those it makes in the scenario's `lease` section
/// (`Settings::compare_lease_variants`: Redlock's delayed restart). Then the common lineup,
/// every protocol's part of it (`Settings::lineup`: the six base-protocol strategies and the
/// lock services on the same roles), when the scenario's protocol is part of it or names no
/// variants, with margins from the scenario: its own strategy's margin (`Settings::epsilon`)
/// if it has a positive one, else 1% of T. A row equal to the scenario's own is not run twice.
pub fn all_strategies(s: &Scenario, registry: &Registry) -> Vec<Entry> {
    let own = registry.resolve(&s.strategy).ok();
    let own_spec = own
        .as_ref()
        .and_then(|o| o.spec())
        .unwrap_or_else(|| s.strategy.clone());
    let mut rows = vec![Entry::new(own_spec, OWN)];
    for name in registry.registered() {
        if s.strategy.name() == name {
            continue;
        }
        let alone = StrategySpec::from_ron(name).expect("a registered name is an identifier");
        if let Ok(defaults) = registry.resolve(&alone) {
            let spec = defaults.spec().unwrap_or(alone);
            rows.push(Entry::new(spec, "its defaults"));
        }
    }
    let variants = own.as_ref().and_then(|o| o.compare_variants(s));
    let names_variants = variants.is_some();
    for (spec, from) in variants.into_iter().flatten() {
        rows.push(Entry::new(spec, from));
    }
    for (spec, lease, from) in own.iter().flat_map(|o| o.compare_lease_variants(s)) {
        let lease = (lease != s.lease).then_some(lease);
        rows.push(Entry {
            strategy: spec,
            lease,
            origin: from,
        });
    }
    let margin = own.as_ref().and_then(|o| o.epsilon()).map(|m| m.value);
    let (m, from) = match margin.filter(|m| m.ns() > 0) {
        Some(m) => (m, format!("margin {m} from the scenario's strategy")),
        None => {
            let m = LocalDur::from_ns(s.lease.duration.ns() / 100);
            (m, format!("margin {m}: 1% of T"))
        }
    };
    let lineup = registry.lineup(s, m, &from);
    let in_lineup = lineup
        .iter()
        .any(|(spec, _)| spec.name() == s.strategy.name());
    if in_lineup || !names_variants {
        rows.extend(
            lineup
                .into_iter()
                .map(|(spec, from)| Entry::new(spec, from)),
        );
    }
    let mut seen: Vec<(StrategySpec, Option<LeaseConfig>)> = Vec::new();
    rows.retain(|row| {
        let key = (row.strategy.clone(), row.lease.clone());
        let fresh = !seen.contains(&key);
        seen.push(key);
        fresh
    });
    rows
}

/// A row of `compare.json`: the run's summary, and where its strategy came from.
#[derive(serde::Serialize)]
pub struct Row<'a> {
    /// "the scenario's own", or how its margins were chosen.
    pub origin: &'a str,
    #[serde(flatten)]
    pub summary: &'a Summary,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::load;

    /// The rows of `--strategies all` for a 10 s lease on `nodes` under `strategy`, as text.
    fn rows(strategy: &str, nodes: &str, clocks: &str) -> Vec<(String, String)> {
        let text = format!(
            r#"Scenario(duration: "30s", lease: (duration: "10s"), strategy: {strategy},
                clocks: ({clocks}), nodes: [{nodes}])"#
        );
        let s = load::from_text("t", &text).unwrap();
        all_strategies(&s, &Registry::new())
            .into_iter()
            .map(|e| {
                let lease = match e.lease {
                    Some(l) => format!(" on {:?}", l.grantor_restart),
                    None => String::new(),
                };
                (e.strategy.to_ron() + &lease, e.origin)
            })
            .collect()
    }

    const LOCK: &str = r#"(name: "lock", role: Grantor), (name: "a", role: Contender)"#;
    const REPLICAS: &str =
        r#"(name: "r0", role: Replica), (name: "r1", role: Replica), (name: "r2", role: Replica)"#;

    /// A base strategy: the common lineup with its own margin, 5 ms, in registration order;
    /// TwoSided with it is the scenario's own, not run twice. ConsulSession has no margin: its
    /// defaults. client-go's 10 s renew deadline
    /// and 2 s retry for a 15 s lease, scaled to T = 10 s: 10 s / 3 x 2 = 6.666 s and
    /// 10 s / 15 x 2 = 1.333 s (each cut to whole ms). No TrueTime: the clocks know no error.
    #[test]
    fn a_base_strategy_gets_the_common_lineup_with_its_margin() {
        let from = "margin 5ms from the scenario's strategy";
        let none = "no margin to set";
        let want = [
            (r#"TwoSided(holder_margin: "5ms")"#, OWN),
            ("GrantorOnly", none),
            (r#"HolderOnly(margin: "5ms")"#, from),
            ("CachedBool", none),
            (r#"WallClock(holder_margin: "5ms")"#, from),
            (r#"OnReceiveStart(holder_margin: "5ms")"#, from),
            (
                r#"ChubbySession(grace: "45s", lock_delay: "0s", act_in_jeopardy: false, holder_margin: "5ms", keepalive: HeldOpen, hold_margin: "1s")"#,
                "margin 5ms from the scenario's strategy; Chubby's 45 s grace",
            ),
            (
                r#"ConsulSession(ttl_multiplier: 2, lock_delay: "15s", renew: RetryEverySecond, query_wait: "300s", lock_wait: "15s", lock_retry: "5s", rpc_timeout: "7s")"#,
                "Consul's defaults: TTL x 2, 15 s lock-delay",
            ),
            (
                r#"K8sLeaderElection(renew_deadline: "6.666s", retry_period: "1.333s", jitter_factor: 1.2)"#,
                "client-go's 15/10/2 s scaled to T (in whole ms)",
            ),
        ]
        .map(|(s, f)| (s.to_string(), f.to_string()));
        assert_eq!(rows(r#"TwoSided(holder_margin: "5ms")"#, LOCK, ""), want);
        // Without a margin of its own: 1% of T = 100 ms; with clocks that know their error,
        // TrueTime comes last, with that margin.
        let rows = rows("GrantorOnly", LOCK, "uncertainty: ()");
        assert_eq!(rows[0], ("GrantorOnly".to_string(), OWN.to_string()));
        assert_eq!(rows[1].0, r#"TwoSided(holder_margin: "100ms")"#);
        assert_eq!(
            rows.last().unwrap(),
            &(
                r#"TrueTime(holder_margin: "100ms")"#.to_string(),
                "margin 100ms: 1% of T".to_string()
            )
        );
    }

    /// Redlock's own variants: its settings with keys on the monotonic clock, with a quorum of
    /// one, with each other persistence (`Always` the fix), and its fix in the lease section, a
    /// delayed restart (keys on the wall clock with a majority are its own settings). Not the
    /// common lineup: Redlock is not part of it.
    #[test]
    fn redlock_compares_its_own_variants() {
        let own = r#"Redlock(drift_factor: 0.01, drift_allowance: "2ms", request_timeout: "50ms", expiry_clock: Wall, quorum: Majority)"#;
        let masters = r#"(name: "m1", role: Grantor), (name: "m2", role: Grantor),
            (name: "m3", role: Grantor), (name: "a", role: Contender)"#;
        let text = format!(
            r#"Scenario(duration: "30s", lease: (duration: "10s", grantor_restart: Forget),
                strategy: Redlock, nodes: [{masters}])"#
        );
        let s = load::from_text("t", &text).unwrap();
        let rows = all_strategies(&s, &Registry::new());
        let specs: Vec<String> = rows
            .iter()
            .map(|e| {
                let restart = e.lease.as_ref().map(|l| l.grantor_restart);
                format!(
                    "{}{}",
                    e.strategy.to_ron(),
                    restart.map_or(String::new(), |r| format!(" {r:?}"))
                )
            })
            .collect();
        let with = |p: &str| own.replace(")", &format!(", persistence: {p})"));
        assert_eq!(
            specs,
            [
                own.to_string(),
                own.replace("Wall", "Monotonic"),
                own.replace("Majority", "One"),
                with("EverySec"),
                with("Always"),
                format!("{own} Wait"),
            ]
        );
        assert_eq!(
            rows[2].origin,
            "the scenario's Redlock settings, a quorum of one"
        );
        assert!(rows[4].origin.contains("appendfsync always"), "{rows:?}");
        assert!(rows[5].origin.contains("a delayed restart"), "{rows:?}");
        // Every row but the delayed restart runs on the scenario's own lease section.
        assert!(rows[..5].iter().all(|e| e.lease.is_none()), "{rows:?}");
    }

    /// Raft's variants, one field changed at a time; `reads: Lease` is its own, and with a tick
    /// the last row counts none.
    #[test]
    fn raft_compares_its_own_variants() {
        let rows = rows(
            r#"RaftLeaderLease(election_timeout: "1s", tick: "100ms")"#,
            REPLICAS,
            "",
        );
        let from: Vec<&str> = rows.iter().map(|(_, f)| f.as_str()).collect();
        let raft = "the scenario's Raft settings";
        assert_eq!(
            from,
            [
                OWN.to_string(),
                format!("{raft}, reads: ReadIndex"),
                format!("{raft}, reads: LeaseOrReadIndex"),
                format!("{raft}, the other lease rule"),
                format!("{raft}, transfer_suspect turned over"),
                format!("{raft}, the other lease start"),
                format!("{raft}, pre_vote turned over"),
                format!("{raft}, check_quorum turned over"),
                format!("{raft}, timers not counted in ticks"),
            ]
        );
        assert!(
            rows[3].0.contains("lease_rule: CheckQuorumOnly"),
            "{rows:?}"
        );
        assert!(rows[6].0.contains("pre_vote: true"), "{rows:?}");
        assert!(rows[7].0.contains("check_quorum: false"), "{rows:?}");
        assert!(!rows[8].0.contains("tick"), "{rows:?}");
    }
}
