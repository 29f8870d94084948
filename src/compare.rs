//! What `leasesim compare` runs: one scenario under several strategies on the same fault
//! schedule. [`all_strategies`] picks the rows of `--strategies all` for the scenario at hand
//! (its own strategy first; base strategies and lock services, or its protocol's variants),
//! each with the words that say where its settings came from; [`Row`] is a row of
//! `compare.json`. Running them and drawing the charts is the command line's.

use crate::outcome::Summary;
use crate::scenario::{Scenario, StrategySpec};
use crate::strategy::Registry;
use crate::time::LocalDur;

/// What a row of `compare` says of where it came from.
pub const OWN: &str = "the scenario's own";

/// The strategies `compare --strategies all` runs, each with where it came from: the scenario's
/// own strategy first, as its protocol writes it; then the registered protocols (with their
/// defaults, when every field has one); then the variants its protocol names
/// (`Settings::compare_variants`: a Redlock scenario's settings with keys expiring on the wall
/// clock and on the monotonic clock and with a quorum of one, a Raft or LeaseGuard scenario's
/// variants), or else the common lineup, every protocol's part of it (`Settings::lineup`: the
/// six base-protocol strategies and the lock services on the same roles), with margins from
/// the scenario: its own strategy's margin (`Settings::epsilon`) if it has a positive one, else
/// 1% of T. A strategy equal to the scenario's own is not run twice.
pub fn all_strategies(s: &Scenario, registry: &Registry) -> Vec<(StrategySpec, String)> {
    let own = registry.resolve(&s.strategy).ok();
    let own_spec = own
        .as_ref()
        .and_then(|o| o.spec())
        .unwrap_or_else(|| s.strategy.clone());
    let mut rows = vec![(own_spec, OWN.to_string())];
    for name in registry.registered() {
        if s.strategy.name() == name {
            continue;
        }
        let alone = StrategySpec::from_ron(name).expect("a registered name is an identifier");
        if let Ok(defaults) = registry.resolve(&alone) {
            let spec = defaults.spec().unwrap_or(alone);
            rows.push((spec, "its defaults".to_string()));
        }
    }
    match own.as_ref().and_then(|o| o.compare_variants(s)) {
        Some(variants) => rows.extend(variants),
        None => {
            let margin = own.as_ref().and_then(|o| o.epsilon()).map(|m| m.value);
            let (m, from) = match margin.filter(|m| m.ns() > 0) {
                Some(m) => (m, format!("margin {m} from the scenario's strategy")),
                None => {
                    let m = LocalDur::from_ns(s.lease.duration.ns() / 100);
                    (m, format!("margin {m}: 1% of T"))
                }
            };
            rows.extend(registry.lineup(s, m, &from));
        }
    }
    let mut seen = Vec::new();
    rows.retain(|(spec, _)| {
        let fresh = !seen.contains(spec);
        seen.push(spec.clone());
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
            .map(|(spec, from)| (spec.to_ron(), from))
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

    /// Redlock's own variants: its settings with keys on the monotonic clock and with a quorum
    /// of one (keys on the wall clock with a majority are its own settings).
    #[test]
    fn redlock_compares_its_own_variants() {
        let own = r#"Redlock(drift_factor: 0.01, drift_allowance: "2ms", request_timeout: "50ms", expiry_clock: Wall, quorum: Majority)"#;
        let rows = rows("Redlock", LOCK, "");
        let specs: Vec<&str> = rows.iter().map(|(s, _)| s.as_str()).collect();
        assert_eq!(
            specs,
            [
                own,
                &own.replace("Wall", "Monotonic"),
                &own.replace("Majority", "One")
            ]
        );
        assert_eq!(
            rows[2].1,
            "the scenario's Redlock settings, a quorum of one"
        );
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
                format!("{raft}, timers not counted in ticks"),
            ]
        );
        assert!(
            rows[3].0.contains("lease_rule: CheckQuorumOnly"),
            "{rows:?}"
        );
        assert!(!rows[6].0.contains("tick"), "{rows:?}");
    }
}
