//! `Redlock`'s settings as a scenario writes them: the drift allowance (a factor of T and a
//! fixed part), the request timeout, the clock masters expire keys on, the quorum, how a client
//! asks the masters (all at once or one by one) and what a master's disk keeps of its keys.

use super::Redlock as RedlockProtocol;
use crate::clock::ClockKind;
use crate::scenario::{GrantorRestart, LeaseConfig, LeaseFields, Role, Scenario};
use crate::strategy::settings::check;
use crate::strategy::{Margin, Settings};
use crate::time::LocalDur;
use serde::{Deserialize, Serialize};

/// How many Redlock masters must grant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum RedlockQuorum {
    /// N/2 + 1 (Redlock).
    #[default]
    Majority,
    /// Any one master: the anti-pattern of several replicas each granting leases.
    One,
}

/// How a client asks the masters for a lock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum RedlockAcquire {
    /// Every master at once; the client decides when all have answered or `request_timeout`
    /// has passed.
    #[default]
    Parallel,
    /// One master after the other, in the order of the scenario's nodes, each given at most
    /// `per_instance_timeout` to answer before the client moves on (redlock-py, Redisson's
    /// RedissonRedLock): the time an attempt takes grows with the number of masters.
    Sequential { per_instance_timeout: LocalDur },
}

/// What a master's disk keeps of its keys when the master crashes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum RedlockPersistence {
    /// Nothing: a restarted master has no keys (Redis without AOF).
    #[default]
    None,
    /// `appendfsync everysec`: the master fsyncs at every whole second of its monotonic clock,
    /// so a crash loses the key writes made since the last whole second it reached running.
    EverySec,
    /// `appendfsync always`: every key write is on disk before it is answered.
    Always,
}

/// What a client does with the lock it got.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum RedlockHolder {
    /// Extends the key on every master every `lease.renew_every` (Redlock's extension,
    /// Redisson's watchdog), and acts while the validity of its last successful round lasts.
    #[default]
    Extends,
    /// Takes the key for T and never extends it (Redisson's `lock(leaseTime)`, a plain
    /// `SET key value NX PX T`): works for `work` on its monotonic clock from the grant, whether
    /// or not the key lapsed meanwhile, then unlocks and asks again.
    Lapses { work: LocalDur },
}

/// How long a client whose attempt failed waits before the next.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum RedlockWait {
    /// A delay drawn from [retry_every/2, retry_every] (Redlock's random retry delay).
    #[default]
    Jittered,
    /// The key's remaining time to live its refusal returned, from the answer (Redisson waits
    /// for the unlock message at most that long): with several masters, the longest any of them
    /// returned; with none returned (no answer), as `Jittered`.
    RemainingTtl,
}

/// Redlock over every Grantor as an independent Redis master.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Redlock {
    /// Clock drift allowed for, as a fraction of T (Redis's `CLOCK_DRIFT_FACTOR`); applied at
    /// 1 ppm resolution. Default 0.01.
    #[serde(default = "drift_factor")]
    pub drift_factor: f64,
    /// Default 2 ms.
    #[serde(default = "drift_allowance")]
    pub drift_allowance: LocalDur,
    /// How long a client waits for the masters' answers. Default 50 ms: the distlock page's
    /// figure for a 10 s TTL (redis-py has no socket timeout by default; Redisson waits 3 s).
    #[serde(default = "request_timeout")]
    pub request_timeout: LocalDur,
    /// The clock on which masters expire keys (Redis: the wall clock, the default).
    #[serde(default = "expiry_clock")]
    pub expiry_clock: ClockKind,
    #[serde(default)]
    pub quorum: RedlockQuorum,
    /// Default `Parallel`.
    #[serde(default)]
    pub acquire: RedlockAcquire,
    /// Default `None`.
    #[serde(default)]
    pub persistence: RedlockPersistence,
    /// Default `Extends`.
    #[serde(default)]
    pub holder: RedlockHolder,
    /// Default `Jittered`.
    #[serde(default)]
    pub wait: RedlockWait,
}

fn drift_factor() -> f64 {
    0.01
}
fn drift_allowance() -> LocalDur {
    LocalDur::from_ms(2)
}
fn request_timeout() -> LocalDur {
    LocalDur::from_ms(50)
}
fn expiry_clock() -> ClockKind {
    ClockKind::Wall
}

impl Settings for Redlock {
    const NAME: &'static str = "Redlock";
    type Protocol = RedlockProtocol;

    /// Every period, and `lease.initial_leader`: the named client's first attempt comes
    /// first (the others' waits a retry delay).
    fn lease_fields(&self) -> LeaseFields {
        LeaseFields::RACING
    }

    fn to_ron(&self) -> String {
        let Redlock {
            drift_factor,
            drift_allowance,
            request_timeout,
            expiry_clock,
            quorum,
            acquire,
            persistence,
            holder,
            wait,
        } = self;
        // The fields added later are written only when they differ from their defaults, so
        // that the text of settings that do not use them stays what it was.
        let mut later = String::new();
        if let RedlockAcquire::Sequential {
            per_instance_timeout,
        } = acquire
        {
            later +=
                &format!(", acquire: Sequential(per_instance_timeout: \"{per_instance_timeout}\")");
        }
        if *persistence != RedlockPersistence::None {
            later += &format!(", persistence: {persistence:?}");
        }
        if let RedlockHolder::Lapses { work } = holder {
            later += &format!(", holder: Lapses(work: \"{work}\")");
        }
        if *wait != RedlockWait::Jittered {
            later += &format!(", wait: {wait:?}");
        }
        format!(
            "Redlock(drift_factor: {drift_factor:?}, drift_allowance: \"{drift_allowance}\", \
             request_timeout: \"{request_timeout}\", expiry_clock: {expiry_clock:?}, \
             quorum: {quorum:?}{later})"
        )
    }

    fn build(&self) -> RedlockProtocol {
        RedlockProtocol {
            drift_ppm: (self.drift_factor * 1e6).round() as i64,
            drift_allowance: self.drift_allowance,
            request_timeout: self.request_timeout,
            expiry_clock: self.expiry_clock,
            quorum: self.quorum,
            acquire: self.acquire,
            persistence: self.persistence,
            holder: self.holder,
            wait: self.wait,
            description: self.to_ron(),
        }
    }

    fn validate(&self, scenario: &Scenario) -> Vec<String> {
        let mut p = Vec::new();
        check::not_negative(&mut p, "strategy.drift_allowance", self.drift_allowance);
        check::positive(&mut p, "strategy.request_timeout", self.request_timeout);
        check::interval(&mut p, "strategy.request_timeout", self.request_timeout);
        check::at_most_max(&mut p, "strategy.request_timeout", self.request_timeout);
        if let RedlockAcquire::Sequential {
            per_instance_timeout,
        } = self.acquire
        {
            let at = "strategy.acquire.per_instance_timeout";
            check::positive(&mut p, at, per_instance_timeout);
            check::interval(&mut p, at, per_instance_timeout);
            let lease = scenario.lease.duration;
            if per_instance_timeout > lease {
                p.push(format!(
                    "{at}: {per_instance_timeout} is above the lease ({lease}): one master that \
                     does not answer would outlast every key the client set"
                ));
            }
        }
        if let RedlockHolder::Lapses { work } = self.holder {
            let at = "strategy.holder.work";
            check::positive(&mut p, at, work);
            check::interval(&mut p, at, work);
            check::at_most_max(&mut p, at, work);
        }
        p
    }

    /// A contender tries as often as twice every `lease.retry_every` (its delay is drawn from
    /// [retry_every/2, retry_every]): a timer, a request to and a reply from each of the g
    /// masters, and the request timeout's timer, 2g + 2 per try (asking one by one, a timeout
    /// per master instead: 3g + 1, counted as 3g + 2). The holder extends every
    /// `lease.renew_every` on every master, 2g + 2 again. With `EverySec`, each master's fsync
    /// timer fires at most once a second: g more.
    fn events_per_second(&self, s: &Scenario) -> f64 {
        let count = |r: Role| s.nodes.iter().filter(|n| n.role == r).count() as f64;
        let masters = count(Role::Grantor);
        let round = 2.0 * masters + 2.0;
        let try_round = match self.acquire {
            RedlockAcquire::Parallel => round,
            RedlockAcquire::Sequential { .. } => round + masters,
        };
        let fsyncs = match self.persistence {
            RedlockPersistence::EverySec => masters,
            RedlockPersistence::None | RedlockPersistence::Always => 0.0,
        };
        check::per_second(
            2.0 * count(Role::Contender) * try_round,
            s.lease.retry_every,
        ) + check::per_second(round, s.lease.renew_every())
            + fsyncs
    }

    /// The drift allowance is varied as epsilon, but the bound epsilon >= T*rho is not its.
    fn epsilon(&self) -> Option<Margin> {
        Some(Margin {
            field: "drift_allowance",
            value: self.drift_allowance,
            bounds_drift: false,
        })
    }

    /// These settings with keys expiring on the wall clock and on the monotonic clock, with a
    /// quorum of one, and with each other persistence (`Always` is the distlock page's fix for
    /// a master that restarts: every key on disk before the answer).
    fn compare_variants(&self, _: &Scenario) -> Option<Vec<(Self, String)>> {
        let with = |expiry_clock, quorum| Redlock {
            expiry_clock,
            quorum,
            ..*self
        };
        let settings = "the scenario's Redlock settings";
        let mut rows = vec![
            (
                with(ClockKind::Wall, RedlockQuorum::Majority),
                format!("{settings}, keys expiring on the wall clock"),
            ),
            (
                with(ClockKind::Monotonic, RedlockQuorum::Majority),
                format!("{settings}, keys expiring on the monotonic clock"),
            ),
            (
                with(ClockKind::Wall, RedlockQuorum::One),
                format!("{settings}, a quorum of one"),
            ),
        ];
        use RedlockPersistence as P;
        for persistence in [P::None, P::EverySec, P::Always] {
            if persistence != self.persistence {
                let what = match persistence {
                    P::None => "persistence: None (a restarted master has no keys)",
                    P::EverySec => "persistence: EverySec (appendfsync everysec)",
                    P::Always => "persistence: Always (appendfsync always: the fix)",
                };
                let settings_with = Redlock {
                    persistence,
                    ..*self
                };
                rows.push((settings_with, format!("{settings}, {what}")));
            }
        }
        Some(rows)
    }

    /// These settings with the other restart policy of the masters: a delayed restart
    /// (`lease.grantor_restart: Wait`, the distlock page's other fix: a restarted master takes
    /// part in no lock for T) or, from a scenario that delays, one that forgets at once.
    fn compare_lease_variants(&self, s: &Scenario) -> Vec<(Self, LeaseConfig, String)> {
        let (restart, what) = match s.lease.grantor_restart {
            GrantorRestart::Forget => (
                GrantorRestart::Wait,
                "a delayed restart (lease.grantor_restart: Wait: a restarted master grants \
                 nothing for T)",
            ),
            GrantorRestart::Wait => (
                GrantorRestart::Forget,
                "an immediate restart (lease.grantor_restart: Forget)",
            ),
        };
        let lease = LeaseConfig {
            grantor_restart: restart,
            ..s.lease.clone()
        };
        vec![(
            *self,
            lease,
            format!("the scenario's Redlock settings, {what}"),
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 3 masters: a round is 2 x 3 + 2 = 8 events. One contender tries up to twice every
    /// 100 ms: 2 x 8 / 0.1 = 160 a second; the holder extends every 1 s: 8. 168 in all.
    #[test]
    fn tries_and_extensions_on_every_master_are_counted() {
        let s = Scenario::from_ron(
            r#"Scenario(duration: "10s",
                lease: (duration: "3s", renew_every: "1s", retry_every: "100ms"),
                strategy: Redlock, nodes: [(name: "m1", role: Grantor),
                (name: "m2", role: Grantor), (name: "m3", role: Grantor),
                (name: "a", role: Contender)])"#,
        )
        .unwrap();
        let r: Redlock = ron::from_str("(quorum: Majority)").unwrap();
        assert_eq!(Settings::events_per_second(&r, &s), 168.0);
    }
}
