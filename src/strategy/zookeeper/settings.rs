//! `ZooKeeperSession`'s settings as a scenario writes them: the server's tick, the session
//! timeout a client asks for, and whether a holder acts while Disconnected.
//!
//! A `session_timeout` outside [2, 20] x `tick_time` is not an error: ZooKeeper clamps it (so
//! does the server here, and the client works with what it is told). Zero or negative values
//! are, as are values out of the limits for a period (1 us to 1000 h).

use super::client::{ping_interval, read_timeout};
use super::server::negotiate;
use super::{ZkConfig, ZooKeeperSession as ZkProtocol};
use crate::scenario::{LeaseFields, Role, Scenario};
use crate::strategy::settings::check;
use crate::strategy::Settings;
use crate::time::LocalDur;
use serde::Deserialize;

/// A lock held through a ZooKeeper session (Curator's `InterProcessMutex`), the ensemble being
/// the one `Grantor`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZooKeeperSession {
    /// The server's tick: sessions expire in buckets this wide, and a timeout is clamped into
    /// [2, 20] ticks. Default 2 s (ZooKeeper's sample configuration).
    #[serde(default = "tick_time")]
    pub tick_time: LocalDur,
    /// The timeout a client asks for. Default 30 s.
    #[serde(default = "session_timeout")]
    pub session_timeout: LocalDur,
    /// HBase's behaviour: the holder acts until the Expired event arrives, not only until
    /// Disconnected (Curator's default).
    #[serde(default)]
    pub act_while_disconnected: bool,
}

fn tick_time() -> LocalDur {
    LocalDur::from_secs(2)
}
fn session_timeout() -> LocalDur {
    LocalDur::from_secs(30)
}

impl ZooKeeperSession {
    /// The timeout the server grants.
    pub fn negotiated(&self) -> LocalDur {
        negotiate(self.session_timeout, self.tick_time)
    }
}

impl Settings for ZooKeeperSession {
    const NAME: &'static str = "ZooKeeperSession";
    type Protocol = ZkProtocol;

    fn to_ron(&self) -> String {
        let ZooKeeperSession {
            tick_time,
            session_timeout,
            act_while_disconnected,
        } = self;
        format!(
            "ZooKeeperSession(tick_time: \"{tick_time}\", session_timeout: \
             \"{session_timeout}\", act_while_disconnected: {act_while_disconnected})"
        )
    }

    fn build(&self) -> ZkProtocol {
        let config = ZkConfig {
            tick_time: self.tick_time,
            session_timeout: self.session_timeout,
            act_while_disconnected: self.act_while_disconnected,
        };
        ZkProtocol::new(config, self.to_ron())
    }

    fn validate(&self, _: &Scenario) -> Vec<String> {
        let mut p = Vec::new();
        for (field, d) in [
            ("tick_time", self.tick_time),
            ("session_timeout", self.session_timeout),
        ] {
            let at = format!("strategy.{field}");
            check::positive(&mut p, &at, d);
            check::interval(&mut p, &at, d);
        }
        p
    }

    /// Pings and connects time themselves; `lease.retry_every` is the reconnect period.
    fn lease_fields(&self) -> LeaseFields {
        LeaseFields {
            retry_every: true,
            ..LeaseFields::TERM_ONLY
        }
    }

    /// Every client pings every t/3 of the negotiated timeout when idle (its timer, the ping,
    /// the answer: 3), and the server's expirer runs at most once a tick.
    fn events_per_second(&self, s: &Scenario) -> f64 {
        let clients = s.nodes.iter().filter(|n| n.role != Role::Grantor).count() as f64;
        let pings = if self.tick_time.ns() > 0 {
            check::per_second(3.0 * clients, ping_interval(self.negotiated()))
        } else {
            0.0
        };
        pings + check::per_second(1.0, self.tick_time)
    }

    /// The holder stops readTimeout = 2t/3 after its last answer, the server expires it at
    /// least t after the message answered: t/3 apart, each on its own clock. Acting until
    /// Expired has no such margin.
    fn drift_margin(&self) -> Option<(LocalDur, &'static str)> {
        if self.act_while_disconnected || self.tick_time.ns() <= 0 {
            return None;
        }
        let t = self.negotiated();
        Some((
            t - read_timeout(t),
            "session timeout / 3 (readTimeout = 2/3 of it)",
        ))
    }

    // No `epsilon`: no field is a margin. The client's t/3 before the server's t comes with
    // the timeout (see `drift_margin`), so `--vary epsilon=` has nothing to vary here.

    /// The scenario's settings with `act_while_disconnected` the other way.
    fn compare_variants(&self, _: &Scenario) -> Option<Vec<(Self, String)>> {
        let flipped = ZooKeeperSession {
            act_while_disconnected: !self.act_while_disconnected,
            ..*self
        };
        let what = format!(
            "the scenario's settings, act_while_disconnected: {}",
            flipped.act_while_disconnected
        );
        Some(vec![(flipped, what)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(strategy: &str) -> Scenario {
        Scenario::from_ron(&format!(
            r#"Scenario(duration: "10s", lease: (duration: "30s"), strategy: {strategy},
                nodes: [(name: "zk", role: Grantor), (name: "a", role: Contender),
                (name: "b", role: Contender)])"#
        ))
        .unwrap()
    }

    fn settings(s: &Scenario) -> ZooKeeperSession {
        ron::from_str(&s.strategy.to_ron()).unwrap()
    }

    /// Two clients; t = 30 s: readTimeout 20 s, a ping every 10 s with its timer and answer,
    /// 2 x 3 / 10 = 0.6 a second; the expirer once per 2 s tick, 0.5: 1.1.
    #[test]
    fn pings_of_every_client_and_the_expirer_are_counted() {
        let s = scenario("ZooKeeperSession()");
        let z = settings(&s);
        assert!((Settings::events_per_second(&z, &s) - 1.1).abs() < 1e-12);
    }

    /// Zero and negative values are refused by field; a timeout outside [2, 20] ticks is not.
    #[test]
    fn bad_values_name_their_field_and_a_clamped_timeout_is_accepted() {
        let s = scenario(r#"ZooKeeperSession(tick_time: "0s", session_timeout: "-1s")"#);
        let p = Settings::validate(&settings(&s), &s);
        assert_eq!(
            p,
            [
                "strategy.tick_time: must be positive (got 0s)",
                "strategy.session_timeout: must be positive (got -1s)"
            ]
        );
        let s = scenario(r#"ZooKeeperSession(tick_time: "2s", session_timeout: "90s")"#);
        let z = settings(&s);
        assert!(Settings::validate(&z, &s).is_empty());
        assert_eq!(z.negotiated(), LocalDur::from_secs(40));
    }

    /// A tick far past the longest run (2,000,000 h = 7.2e18 ns: twice it overflows an i64) is
    /// refused, and the event estimate that validation makes on the way does not overflow.
    #[test]
    fn a_tick_past_every_limit_is_refused_without_overflow() {
        let s = scenario(r#"ZooKeeperSession(tick_time: "2000000h")"#);
        let z = settings(&s);
        assert_eq!(z.negotiated().ns(), i64::MAX);
        let p = crate::scenario::validate::validate(&s);
        assert!(
            p.iter()
                .any(|p| p.starts_with("strategy.tick_time: ") && p.contains("above the limit")),
            "{p:?}"
        );
    }
}
