//! `Redlock`'s settings as a scenario writes them: the drift allowance (a factor of T and a
//! fixed part), the request timeout, the clock masters expire keys on, and the quorum.

use super::Redlock as RedlockProtocol;
use crate::clock::ClockKind;
use crate::scenario::{Role, Scenario};
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
    /// How long a client waits for the masters' answers. Default 50 ms.
    #[serde(default = "request_timeout")]
    pub request_timeout: LocalDur,
    /// The clock on which masters expire keys (Redis: the wall clock, the default).
    #[serde(default = "expiry_clock")]
    pub expiry_clock: ClockKind,
    #[serde(default)]
    pub quorum: RedlockQuorum,
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

    fn to_ron(&self) -> String {
        let Redlock {
            drift_factor,
            drift_allowance,
            request_timeout,
            expiry_clock,
            quorum,
        } = self;
        format!(
            "Redlock(drift_factor: {drift_factor:?}, drift_allowance: \"{drift_allowance}\", \
             request_timeout: \"{request_timeout}\", expiry_clock: {expiry_clock:?}, \
             quorum: {quorum:?})"
        )
    }

    fn build(&self) -> RedlockProtocol {
        RedlockProtocol::new(
            (self.drift_factor * 1e6).round() as i64,
            self.drift_allowance,
            self.request_timeout,
            self.expiry_clock,
            self.quorum,
            self.to_ron(),
        )
    }

    fn validate(&self, _: &Scenario) -> Vec<String> {
        let mut p = Vec::new();
        check::not_negative(&mut p, "strategy.drift_allowance", self.drift_allowance);
        check::positive(&mut p, "strategy.request_timeout", self.request_timeout);
        check::interval(&mut p, "strategy.request_timeout", self.request_timeout);
        check::at_most_max(&mut p, "strategy.request_timeout", self.request_timeout);
        p
    }

    /// A contender tries as often as twice every `lease.retry_every` (its delay is drawn from
    /// [retry_every/2, retry_every]): a timer, a request to and a reply from each of the g
    /// masters, and the request timeout's timer, 2g + 2 per try. The holder extends every
    /// `lease.renew_every` on every master, 2g + 2 again.
    fn events_per_second(&self, s: &Scenario) -> f64 {
        let count = |r: Role| s.nodes.iter().filter(|n| n.role == r).count() as f64;
        let round = 2.0 * count(Role::Grantor) + 2.0;
        check::per_second(2.0 * count(Role::Contender) * round, s.lease.retry_every)
            + check::per_second(round, s.lease.renew_every())
    }

    /// The drift allowance is varied as epsilon, but the bound epsilon >= T*rho is not its.
    fn epsilon(&self) -> Option<Margin> {
        Some(Margin {
            field: "drift_allowance",
            value: self.drift_allowance,
            bounds_drift: false,
        })
    }

    /// These settings with keys expiring on the wall clock and on the monotonic clock, and
    /// with a quorum of one.
    fn compare_variants(&self, _: &Scenario) -> Option<Vec<(Self, String)>> {
        let with = |expiry_clock, quorum| Redlock {
            expiry_clock,
            quorum,
            ..*self
        };
        let settings = "the scenario's Redlock settings";
        Some(vec![
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
        ])
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
