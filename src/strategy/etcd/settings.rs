//! `EtcdLease`'s settings as a scenario writes them: the cluster's Raft timing, and which etcd
//! it is, by the fixes it has (`check_own_key`, `ensure_leadership`, the lessor's clock) and
//! whether checkpointing is on, and what the application does when its session ends.
//!
//! The TTL is the scenario's `lease.duration` (whole seconds, as etcd's TTLs are), raised to
//! the cluster's minimum (1.5 election timeouts, rounded up to whole seconds) as a member
//! grants it; `lease.retry_every` is how long a client waits for an answer before it calls
//! again, through the next member.

use super::{EtcdConfig, EtcdLease as EtcdProtocol};
use crate::clock::ClockKind;
use crate::scenario::{LeaseFields, Role, Scenario};
use crate::strategy::settings::check;
use crate::strategy::Settings;
use crate::time::LocalDur;
use serde::Deserialize;

/// A lock held through an etcd session (clientv3 `concurrency.Mutex`), the etcd cluster being
/// the `Replica`s and the clients the `Contender`s.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EtcdLease {
    /// `--election-timeout`. Default 1 s (etcd's). A new leader extends every lease by it.
    #[serde(default = "election_timeout")]
    pub election_timeout: LocalDur,
    /// `--heartbeat-interval`, Raft's tick. Default 100 ms (etcd's).
    #[serde(default = "heartbeat")]
    pub heartbeat: LocalDur,
    /// After waiting for the keys before its own, the lock checks that its own key is still
    /// there (`ErrSessionExpired` if not). Default true; false is etcd's client before the
    /// fix of issues 9921 and 11456.
    #[serde(default = "yes")]
    pub check_own_key: bool,
    /// A lessor's revoke is proposed only while its member leads. Default true; false is etcd
    /// before PR 16822 (issues 15247 and 12528).
    #[serde(default = "yes")]
    pub ensure_leadership: bool,
    /// Lease checkpointing and its interval (`--experimental-enable-lease-checkpoint`,
    /// `--experimental-lease-checkpoint-interval`, default there 5 min). Default off.
    #[serde(default)]
    pub checkpoint_interval: Option<LocalDur>,
    /// The clock the lessor times leases on. Default `Monotonic`; `Wall` is etcd before PR
    /// 12292 (issue 12291).
    #[serde(default)]
    pub expiry_clock: ExpiryClock,
    /// The application stops acting when its session ends (`Session.Done()`). Default true;
    /// false is a caller that holds the lock until it unlocks (the Lock RPC, issue 9921).
    #[serde(default = "yes")]
    pub app_watches_session: bool,
}

/// The lessor's clock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
pub enum ExpiryClock {
    #[default]
    Monotonic,
    Wall,
}

impl ExpiryClock {
    fn kind(self) -> ClockKind {
        match self {
            ExpiryClock::Monotonic => ClockKind::Monotonic,
            ExpiryClock::Wall => ClockKind::Wall,
        }
    }
}

fn election_timeout() -> LocalDur {
    LocalDur::from_secs(1)
}
fn heartbeat() -> LocalDur {
    LocalDur::from_ms(100)
}
fn yes() -> bool {
    true
}

impl EtcdLease {
    pub fn config(&self) -> EtcdConfig {
        EtcdConfig {
            election_timeout: self.election_timeout,
            heartbeat: self.heartbeat,
            check_own_key: self.check_own_key,
            ensure_leadership: self.ensure_leadership,
            checkpoint_interval: self.checkpoint_interval,
            expiry_clock: self.expiry_clock.kind(),
            app_watches_session: self.app_watches_session,
        }
    }
}

impl Settings for EtcdLease {
    const NAME: &'static str = "EtcdLease";
    type Protocol = EtcdProtocol;

    fn to_ron(&self) -> String {
        let EtcdLease {
            election_timeout,
            heartbeat,
            check_own_key,
            ensure_leadership,
            checkpoint_interval,
            expiry_clock,
            app_watches_session,
        } = self;
        let checkpoint = checkpoint_interval
            .map(|d| format!(", checkpoint_interval: \"{d}\""))
            .unwrap_or_default();
        format!(
            "EtcdLease(election_timeout: \"{election_timeout}\", heartbeat: \"{heartbeat}\", \
             check_own_key: {check_own_key}, ensure_leadership: {ensure_leadership}\
             {checkpoint}, expiry_clock: {expiry_clock:?}, app_watches_session: \
             {app_watches_session})"
        )
    }

    fn build(&self) -> EtcdProtocol {
        EtcdProtocol::new(self.config(), self.to_ron())
    }

    fn validate(&self, _: &Scenario) -> Vec<String> {
        let mut p = Vec::new();
        for (at, d) in [
            ("strategy.election_timeout", self.election_timeout),
            ("strategy.heartbeat", self.heartbeat),
        ] {
            check::positive(&mut p, at, d);
            check::interval(&mut p, at, d);
        }
        let (et, hb) = (self.election_timeout, self.heartbeat);
        if hb.ns() > 0 && et.ns() > 0 && (hb >= et || et.ns() % hb.ns() != 0) {
            p.push(format!(
                "strategy.election_timeout: must be a whole number (2 or more) of heartbeats of \
                 {hb}, Raft's tick (got {et})"
            ));
        }
        if let Some(d) = self.checkpoint_interval {
            let at = "strategy.checkpoint_interval";
            check::positive(&mut p, at, d);
            check::interval(&mut p, at, d);
        }
        p
    }

    /// Calls are made again after `lease.retry_every`; elections and KeepAlives time
    /// themselves. A scenario may name the member that leads first.
    fn lease_fields(&self) -> LeaseFields {
        LeaseFields {
            retry_every: true,
            initial_leader: true,
            ..LeaseFields::TERM_ONLY
        }
    }

    /// Per heartbeat, an append to each of the n - 1 other members and its ack, and the timer:
    /// 2n - 1. Per election timeout, at worst every member pre-campaigns and campaigns: n (4n -
    /// 3). Each member's lessor looks twice a second; each client's loops twice a second, and
    /// its KeepAlive (sent, forwarded, answered, relayed) every TTL/3.
    fn events_per_second(&self, s: &Scenario) -> f64 {
        let count = |role| s.nodes.iter().filter(|x| x.role == role).count() as f64;
        let (n, k) = (count(Role::Replica), count(Role::Contender));
        let round = 2.0 * n - 1.0;
        let heartbeats = check::per_second(round, self.heartbeat);
        let elections = check::per_second(n * (4.0 * n - 3.0), self.election_timeout);
        let loops = check::per_second(n + k, LocalDur::from_ms(500));
        let ttl = LocalDur::from_ns(s.lease.duration.ns() / 3);
        heartbeats + elections + loops + check::per_second(4.0 * k, ttl)
    }

    /// These settings with each fix turned over, and the other lessor clock.
    fn compare_variants(&self, _: &Scenario) -> Option<Vec<(Self, String)>> {
        let own_key = EtcdLease {
            check_own_key: !self.check_own_key,
            ..*self
        };
        let leadership = EtcdLease {
            ensure_leadership: !self.ensure_leadership,
            ..*self
        };
        let watches = EtcdLease {
            app_watches_session: !self.app_watches_session,
            ..*self
        };
        let clock = EtcdLease {
            expiry_clock: match self.expiry_clock {
                ExpiryClock::Monotonic => ExpiryClock::Wall,
                ExpiryClock::Wall => ExpiryClock::Monotonic,
            },
            ..*self
        };
        let said =
            |field: &str, value: String| format!("the scenario's settings, {field}: {value}");
        Some(vec![
            (
                own_key,
                said("check_own_key", own_key.check_own_key.to_string()),
            ),
            (
                leadership,
                said(
                    "ensure_leadership",
                    leadership.ensure_leadership.to_string(),
                ),
            ),
            (
                watches,
                said(
                    "app_watches_session",
                    watches.app_watches_session.to_string(),
                ),
            ),
            (
                clock,
                said("expiry_clock", format!("{:?}", clock.expiry_clock)),
            ),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(text: &str) -> EtcdLease {
        crate::scenario::ron_options().from_str(text).unwrap()
    }

    fn problems(strategy: &str) -> Vec<String> {
        let s = Scenario::from_ron(&format!(
            r#"Scenario(duration: "10s", lease: (duration: "5s"), strategy: {strategy},
                nodes: [(name: "m", role: Replica), (name: "a", role: Contender)])"#
        ))
        .unwrap();
        settings(strategy).validate(&s)
    }

    #[test]
    fn defaults_are_etcds_and_read_back_as_written() {
        let d = settings("EtcdLease()");
        assert_eq!(d.election_timeout, LocalDur::from_secs(1));
        assert_eq!(d.heartbeat, LocalDur::from_ms(100));
        assert!(d.check_own_key && d.ensure_leadership && d.app_watches_session);
        assert_eq!(
            (d.checkpoint_interval, d.expiry_clock),
            (None, ExpiryClock::Monotonic)
        );
        let text = d.to_ron();
        assert_eq!(settings(&text), d);
        let with = settings(r#"EtcdLease(checkpoint_interval: "2s", expiry_clock: Wall)"#);
        assert_eq!(settings(&with.to_ron()), with);
        assert!(with.to_ron().contains(r#"checkpoint_interval: "2s""#));
        // etcd's minimum TTL: 15 ticks of 100 ms = 1.5 s, rounded up: 2 s.
        assert_eq!(d.config().min_ttl(), LocalDur::from_secs(2));
    }

    #[test]
    fn the_election_timeout_is_whole_heartbeats() {
        assert!(problems("EtcdLease()").is_empty());
        let p = problems(r#"EtcdLease(election_timeout: "1050ms")"#);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            p[0].starts_with("strategy.election_timeout: must be a whole number"),
            "{p:?}"
        );
        let p = problems(r#"EtcdLease(heartbeat: "1s")"#);
        assert_eq!(p.len(), 1, "{p:?}");
        let p = problems(r#"EtcdLease(checkpoint_interval: "0s")"#);
        assert!(
            p[0].starts_with("strategy.checkpoint_interval: must be positive"),
            "{p:?}"
        );
    }
}
