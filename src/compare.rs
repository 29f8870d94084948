//! What `leasesim compare` runs: one scenario under several strategies on the same fault
//! schedule. [`all_strategies`] picks the rows of `--strategies all` for the scenario at hand
//! (its own strategy first; base strategies and lock services, or its protocol's variants),
//! each with the words that say where its settings came from; [`Row`] is a row of
//! `compare.json`. Running them and drawing the charts is the command line's.

use crate::clock::ClockKind;
use crate::outcome::Summary;
use crate::scenario::{RaftLeaseStart, RaftReads, RaftRule, RedlockQuorum, Scenario, StrategySpec};
use crate::strategy::Registry;
use crate::time::LocalDur;

/// What a row of `compare` says of where it came from.
pub const OWN: &str = "the scenario's own";

/// The strategies `compare --strategies all` runs, each with where it came from: the scenario's
/// own strategy first, as written; then the registered protocols (with their defaults, when
/// every field has one); then, for a Redlock scenario, its own settings with keys expiring on
/// the wall clock and on the monotonic clock and with a quorum of one; for a Raft or LeaseGuard
/// scenario, its variants; for any other, the six base-protocol strategies and the lock
/// services on the same roles ([`lock_services`]), with margins from the scenario: its own
/// strategy's holder margin if it has a positive one, else 1% of T. A strategy equal to the
/// scenario's own is not run twice.
pub fn all_strategies(s: &Scenario, registry: &Registry) -> Vec<(StrategySpec, String)> {
    let own = match s.strategy {
        StrategySpec::TwoSided { holder_margin, .. }
        | StrategySpec::WallClock { holder_margin }
        | StrategySpec::OnReceiveStart { holder_margin }
        | StrategySpec::Custom { holder_margin, .. }
        | StrategySpec::ChubbySession { holder_margin, .. }
        | StrategySpec::TrueTime { holder_margin } => holder_margin,
        StrategySpec::HolderOnly { margin } => margin,
        StrategySpec::GrantorOnly
        | StrategySpec::CachedBool
        | StrategySpec::Redlock { .. }
        | StrategySpec::RaftLeaderLease { .. }
        | StrategySpec::LeaseGuard { .. }
        | StrategySpec::K8sLeaderElection { .. }
        | StrategySpec::Other { .. } => LocalDur::ZERO,
    };
    let (m, from) = if own.ns() > 0 {
        (own, format!("margin {own} from the scenario's strategy"))
    } else {
        let m = LocalDur::from_ns(s.lease.duration.ns() / 100);
        (m, format!("margin {m}: 1% of T"))
    };
    let mut rows = vec![(s.strategy.clone(), OWN.to_string())];
    for name in registry.registered() {
        if s.strategy.name() == name {
            continue;
        }
        let alone = StrategySpec::Other {
            name: name.to_string(),
            ron: name.to_string(),
        };
        if registry.build(&alone).is_ok() {
            rows.push((alone, "its defaults".to_string()));
        }
    }
    if let StrategySpec::Redlock {
        drift_factor,
        drift_allowance,
        request_timeout,
        ..
    } = s.strategy
    {
        let redlock = |expiry_clock, quorum| StrategySpec::Redlock {
            drift_factor,
            drift_allowance,
            request_timeout,
            expiry_clock,
            quorum,
        };
        let settings = "the scenario's Redlock settings";
        rows.extend([
            (
                redlock(ClockKind::Wall, RedlockQuorum::Majority),
                format!("{settings}, keys expiring on the wall clock"),
            ),
            (
                redlock(ClockKind::Monotonic, RedlockQuorum::Majority),
                format!("{settings}, keys expiring on the monotonic clock"),
            ),
            (
                redlock(ClockKind::Wall, RedlockQuorum::One),
                format!("{settings}, a quorum of one"),
            ),
        ]);
    } else if let StrategySpec::RaftLeaderLease { .. } = s.strategy {
        rows.extend(raft_variants(&s.strategy));
    } else if let StrategySpec::LeaseGuard { .. } = s.strategy {
        rows.extend(leaseguard_modes(&s.strategy));
    } else {
        let none = || "no margin to set".to_string();
        rows.extend([
            (
                StrategySpec::TwoSided {
                    holder_margin: m,
                    grantor_margin: LocalDur::ZERO,
                },
                from.clone(),
            ),
            (StrategySpec::GrantorOnly, none()),
            (StrategySpec::HolderOnly { margin: m }, from.clone()),
            (StrategySpec::CachedBool, none()),
            (StrategySpec::WallClock { holder_margin: m }, from.clone()),
            (
                StrategySpec::OnReceiveStart { holder_margin: m },
                from.clone(),
            ),
        ]);
        rows.extend(lock_services(s, m, &from));
    }
    let mut seen = Vec::new();
    rows.retain(|(spec, _)| {
        let fresh = !seen.contains(spec);
        seen.push(spec.clone());
        fresh
    });
    rows
}

/// The single-grantor protocols of real lock services, beside the base strategies on the same
/// roles and fault schedule: Chubby's session with the margin `m`, client-go's leader election
/// with its defaults (15 s lease, 10 s renew deadline, 2 s retry) scaled to the scenario's T,
/// and, when the clocks know their error, TrueTime with the margin `m`. Each keeps its own
/// defaults otherwise.
fn lock_services(s: &Scenario, m: LocalDur, from: &str) -> Vec<(StrategySpec, String)> {
    // Whole milliseconds, as a person would write them.
    let ms_of = |ns: i64| LocalDur::from_ns(ns / 1_000_000 * 1_000_000);
    let t = s.lease.duration.ns();
    let mut rows = vec![
        (
            StrategySpec::ChubbySession {
                grace: LocalDur::from_ms(45_000),
                lock_delay: LocalDur::ZERO,
                act_in_jeopardy: false,
                holder_margin: m,
            },
            format!("{from}; Chubby's 45 s grace"),
        ),
        (
            StrategySpec::K8sLeaderElection {
                renew_deadline: ms_of(t / 3 * 2),
                retry_period: ms_of(t / 15 * 2),
                jitter_factor: 1.2,
                observed_clock: ClockKind::Monotonic,
            },
            "client-go's 15/10/2 s scaled to T (in whole ms)".to_string(),
        ),
    ];
    if s.clocks.uncertainty.is_some() {
        rows.push((
            StrategySpec::TrueTime { holder_margin: m },
            from.to_string(),
        ));
    }
    rows
}

/// A LeaseGuard scenario's settings in each of the five modes, from no lease to LeaseGuard.
fn leaseguard_modes(own: &StrategySpec) -> Vec<(StrategySpec, String)> {
    use crate::scenario::LeaseGuardMode as M;
    [
        M::Inconsistent,
        M::Quorum,
        M::LogLease,
        M::DeferCommit,
        M::LeaseGuard,
    ]
    .into_iter()
    .map(|m| {
        let mut spec = own.clone();
        if let StrategySpec::LeaseGuard { mode, .. } = &mut spec {
            *mode = m;
        }
        (spec, format!("the scenario's settings, mode {m:?}"))
    })
    .collect()
}

/// A row of `compare.json`: the run's summary, and where its strategy came from.
#[derive(serde::Serialize)]
pub struct Row<'a> {
    /// "the scenario's own", or how its margins were chosen.
    pub origin: &'a str,
    #[serde(flatten)]
    pub summary: &'a Summary,
}

/// Variants of a Raft scenario's own settings, one field changed at a time: each other read
/// path (Lease, ReadIndex, LeaseOrReadIndex), the other lease rule (HeartbeatQuorum or etcd's
/// CheckQuorumOnly), `transfer_suspect` turned over, the other lease start (OnSend, or
/// OnAck: the bug), and with a `tick`, timers not counted in ticks; each labelled with what
/// changed. Duplicates of the own are dropped later.
fn raft_variants(own: &StrategySpec) -> Vec<(StrategySpec, String)> {
    let with = |what: &str, f: &dyn Fn(&mut RaftFields)| {
        let mut s = own.clone();
        if let StrategySpec::RaftLeaderLease {
            reads,
            lease_rule,
            lease_start,
            transfer_suspect,
            tick,
            ..
        } = &mut s
        {
            f(&mut RaftFields {
                reads,
                lease_rule,
                lease_start,
                transfer_suspect,
                tick,
            });
        }
        (s, format!("the scenario's Raft settings, {what}"))
    };
    let ticks = matches!(own, StrategySpec::RaftLeaderLease { tick: Some(_), .. });
    let mut variants = vec![
        with("reads: Lease", &|f| *f.reads = RaftReads::Lease),
        with("reads: ReadIndex", &|f| *f.reads = RaftReads::ReadIndex),
        with("reads: LeaseOrReadIndex", &|f| {
            *f.reads = RaftReads::LeaseOrReadIndex
        }),
        with("the other lease rule", &|f| {
            *f.lease_rule = match *f.lease_rule {
                RaftRule::HeartbeatQuorum => RaftRule::CheckQuorumOnly,
                RaftRule::CheckQuorumOnly => RaftRule::HeartbeatQuorum,
            }
        }),
        with("transfer_suspect turned over", &|f| {
            *f.transfer_suspect = !*f.transfer_suspect
        }),
        with("the other lease start", &|f| {
            *f.lease_start = match *f.lease_start {
                RaftLeaseStart::OnSend => RaftLeaseStart::OnAck,
                RaftLeaseStart::OnAck => RaftLeaseStart::OnSend,
            }
        }),
    ];
    if ticks {
        variants.push(with("timers not counted in ticks", &|f| *f.tick = None));
    }
    variants
}

/// The fields of a Raft strategy that [`raft_variants`] varies.
struct RaftFields<'a> {
    reads: &'a mut RaftReads,
    lease_rule: &'a mut RaftRule,
    lease_start: &'a mut RaftLeaseStart,
    transfer_suspect: &'a mut bool,
    tick: &'a mut Option<LocalDur>,
}
