//! `ConsulSession`'s settings as a scenario writes them: the leader's TTL multiplier and
//! lock-delay, the renewal loop's policy on errors, the waits of the client's blocking GETs,
//! its pause between tries, and its RPC timeout. The session TTL is `lease.duration`. Its
//! fields are checked with its roles ([`super::ConsulSession`]'s `check`).

use super::{ConsulConfig, ConsulSession as ConsulProtocol, RenewPolicy};
use crate::scenario::{LeaseFields, Role, Scenario};
use crate::strategy::settings::check;
use crate::strategy::Settings;
use crate::time::LocalDur;
use serde::Deserialize;

/// A lock held through a Consul session with the servers' leader, the one `Grantor`, by
/// clients of the Go API's `api.Lock`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConsulSession {
    /// The leader invalidates a session this many TTLs after its last renew
    /// (`structs.SessionTTLMultiplier`). Default 2.
    #[serde(default = "ttl_multiplier")]
    pub ttl_multiplier: u32,
    /// After a session is invalidated, the lock it held refuses every acquire for this long,
    /// at most 60 s (the session's `LockDelay`). Default 15 s.
    #[serde(default = "lock_delay")]
    pub lock_delay: LocalDur,
    /// What the renewal loop does when a renew fails. Default `RetryEverySecond`.
    #[serde(default)]
    pub renew: RenewPolicy,
    /// The wait of monitorLock's blocking GET, which sets none and gets the servers'
    /// `default_query_time`. Default 5 min.
    #[serde(default = "query_wait")]
    pub query_wait: LocalDur,
    /// The wait of the acquire loop's blocking GET (`LockWaitTime`). Default 15 s.
    #[serde(default = "lock_wait")]
    pub lock_wait: LocalDur,
    /// The pause after an acquire refused under lock-delay (`LockRetryTime`), and before the
    /// application calls `Lock()` again after it failed. Default 5 s.
    #[serde(default = "lock_retry")]
    pub lock_retry: LocalDur,
    /// How long past its own wait (and jitter) a call waits for its answer before it fails:
    /// `rpc_hold_timeout`, as Consul since hashicorp/consul#11500 adds it. `None`: calls never
    /// time out (before it: hashicorp/consul#8504). Default 7 s.
    #[serde(default = "rpc_timeout")]
    pub rpc_timeout: Option<LocalDur>,
}

fn ttl_multiplier() -> u32 {
    2
}

fn lock_delay() -> LocalDur {
    LocalDur::from_secs(15)
}

fn query_wait() -> LocalDur {
    LocalDur::from_secs(300)
}

fn lock_wait() -> LocalDur {
    LocalDur::from_secs(15)
}

fn lock_retry() -> LocalDur {
    LocalDur::from_secs(5)
}

fn rpc_timeout() -> Option<LocalDur> {
    Some(LocalDur::from_secs(7))
}

impl Default for ConsulSession {
    fn default() -> Self {
        ConsulSession {
            ttl_multiplier: ttl_multiplier(),
            lock_delay: lock_delay(),
            renew: RenewPolicy::default(),
            query_wait: query_wait(),
            lock_wait: lock_wait(),
            lock_retry: lock_retry(),
            rpc_timeout: rpc_timeout(),
        }
    }
}

impl Settings for ConsulSession {
    const NAME: &'static str = "ConsulSession";
    type Protocol = ConsulProtocol;

    fn to_ron(&self) -> String {
        let ConsulSession {
            ttl_multiplier,
            lock_delay,
            renew,
            query_wait,
            lock_wait,
            lock_retry,
            rpc_timeout,
        } = self;
        let rpc = match rpc_timeout {
            Some(x) => format!("\"{x}\""),
            None => "None".to_string(),
        };
        format!(
            "ConsulSession(ttl_multiplier: {ttl_multiplier}, lock_delay: \"{lock_delay}\", \
             renew: {renew:?}, query_wait: \"{query_wait}\", lock_wait: \"{lock_wait}\", \
             lock_retry: \"{lock_retry}\", rpc_timeout: {rpc})"
        )
    }

    fn build(&self) -> ConsulProtocol {
        ConsulProtocol::new(
            ConsulConfig {
                ttl_multiplier: self.ttl_multiplier,
                lock_delay: self.lock_delay,
                renew: self.renew,
                query_wait: self.query_wait,
                lock_wait: self.lock_wait,
                lock_retry: self.lock_retry,
                rpc_timeout: self.rpc_timeout,
            },
            self.to_ron(),
        )
    }

    /// The session TTL is T; renewals (every T/2) and tries (every `lock_retry`) are timed by
    /// the client library, not by `lease.renew_every` or `lease.retry_every`. And
    /// `lease.initial_leader`: the client that calls `Lock()` first (the others' first call
    /// waits `lock_retry`).
    fn lease_fields(&self) -> LeaseFields {
        LeaseFields {
            initial_leader: true,
            ..LeaseFields::TERM_ONLY
        }
    }

    /// Every client (each node but the leader) renews every T/2 at most (its timer, the renew
    /// and the answer: 3), and its acquire loop or monitorLock makes a call, with its answer
    /// and a timer, at most every `lock_retry` when it does not block (3 more); a blocking
    /// GET waits longer. Refusals come at most once per call.
    fn events_per_second(&self, s: &Scenario) -> f64 {
        let clients = s.nodes.iter().filter(|n| n.role != Role::Grantor).count() as f64;
        let half = LocalDur::from_ns(s.lease.duration.ns() / 2);
        check::per_second(3.0 * clients, half) + check::per_second(3.0 * clients, self.lock_retry)
    }

    /// These settings with each of Consul's choices turned over: the renewal loop's policy on
    /// an error (the client before hashicorp/consul#912 stopped at the first), and the
    /// session's lock-delay (0 s, which Consul allows, or its default 15 s); each labelled
    /// with what changed. The common lineup follows (Consul is part of it).
    fn compare_variants(&self, _: &Scenario) -> Option<Vec<(Self, String)>> {
        let renew = Self {
            renew: match self.renew {
                RenewPolicy::RetryEverySecond => RenewPolicy::StopOnError,
                RenewPolicy::StopOnError => RenewPolicy::RetryEverySecond,
            },
            ..*self
        };
        let delay = Self {
            lock_delay: if self.lock_delay.ns() == 0 {
                lock_delay()
            } else {
                LocalDur::ZERO
            },
            ..*self
        };
        let said = |what: String| format!("the scenario's settings, {what}");
        Some(vec![
            (renew, said(format!("renew: {:?}", renew.renew))),
            (delay, said(format!("lock_delay: {}", delay.lock_delay))),
        ])
    }

    /// Consul's defaults: the client has no margin to vary, so `_from` (where a margin came
    /// from) says nothing here.
    fn lineup(_s: &Scenario, _m: LocalDur, _from: &str) -> Vec<(Self, String)> {
        let words = "Consul's defaults: TTL x 2, 15 s lock-delay".to_string();
        vec![(ConsulSession::default(), words)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(text: &str) -> ConsulSession {
        crate::scenario::ron_options().from_str(text).unwrap()
    }

    /// Every field is written, and what is written reads back; the defaults are Consul's.
    #[test]
    fn the_settings_are_written_whole_and_read_back() {
        let d = settings("ConsulSession()");
        assert_eq!(d, ConsulSession::default());
        assert_eq!(
            Settings::to_ron(&d),
            r#"ConsulSession(ttl_multiplier: 2, lock_delay: "15s", renew: RetryEverySecond, query_wait: "300s", lock_wait: "15s", lock_retry: "5s", rpc_timeout: "7s")"#
        );
        let text = r#"ConsulSession(ttl_multiplier: 3, lock_delay: "1s", renew: StopOnError, query_wait: "10s", lock_wait: "2s", lock_retry: "500ms", rpc_timeout: None)"#;
        let c = settings(text);
        assert_eq!(Settings::to_ron(&c), text);
        assert_eq!(c.rpc_timeout, None);
        assert_eq!(c.renew, RenewPolicy::StopOnError);
        use crate::strategy::Protocol;
        assert_eq!(Settings::build(&c).describe(), text);
        let config = Settings::build(&c).config;
        assert_eq!(config.ttl_multiplier, 3);
        assert_eq!(
            (
                config.lock_delay,
                config.query_wait,
                config.lock_wait,
                config.lock_retry
            ),
            (c.lock_delay, c.query_wait, c.lock_wait, c.lock_retry)
        );
        assert_eq!(
            settings(r#"ConsulSession(rpc_timeout: "60s")"#).rpc_timeout,
            Some(LocalDur::from_secs(60))
        );
    }

    /// Two clients, T = 15 s: a renew every 7.5 s and a try every 5 s each, 3 events apiece:
    /// 2 x 3 / 7.5 + 2 x 3 / 5 = 0.8 + 1.2 = 2 a second (the leader is not a client).
    #[test]
    fn renewals_and_tries_of_every_client_are_counted() {
        let s = Scenario::from_ron(
            r#"Scenario(duration: "10s", lease: (duration: "15s"),
                strategy: ConsulSession, nodes: [(name: "l", role: Grantor),
                (name: "a", role: Contender), (name: "b", role: Contender)])"#,
        )
        .unwrap();
        let c = ConsulSession::lineup(&s, LocalDur::ZERO, "")[0].0;
        assert!((Settings::events_per_second(&c, &s) - 2.0).abs() < 1e-9);
        let fields = LeaseFields {
            initial_leader: true,
            ..LeaseFields::TERM_ONLY
        };
        assert_eq!(Settings::lease_fields(&c), fields);
    }
}
