//! `LeaseGuard`'s settings as a scenario writes them: the mode, the clock error bound, the
//! no-op period, election timing and the log's write time. Its fields are checked with its
//! roles ([`Protocol::check`](crate::strategy::Protocol::check) of [`super::LeaseGuard`]).

use super::{LeaseGuard as LeaseGuardProtocol, LeaseGuardConfig};
use crate::scenario::{LeaseFields, Scenario};
use crate::strategy::settings::check;
use crate::strategy::{Margin, Settings};
use crate::time::LocalDur;
use serde::{Deserialize, Serialize};

/// What a LeaseGuard replica group does about leases.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum LeaseGuardMode {
    /// No lease: the leader serves reads from local state, unchecked.
    Inconsistent,
    /// No lease: a read waits for a quorum to commit an entry appended after it arrived.
    Quorum,
    /// The log-based lease: reads and writes wait until the prior term's entries expire.
    LogLease,
    /// LogLease, but writes are accepted and replicated meanwhile and commit in one burst.
    DeferCommit,
    /// DeferCommit, and a new leader serves reads at once under the lease it inherited.
    #[default]
    LeaseGuard,
}

/// Raft replicas whose log is the lease (LeaseGuard, SIGMOD 2026), in one of five modes from
/// no lease at all to LeaseGuard itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeaseGuard {
    #[serde(default)]
    pub mode: LeaseGuardMode,
    /// The bound on every node's wall-clock error: TT.now() = [wall - e, wall + e]. Default
    /// 200 us.
    #[serde(default = "max_clock_error")]
    pub max_clock_error: LocalDur,
    /// A leader appends an empty entry this often (on its monotonic clock), so that a
    /// read-only workload still renews the lease. Default 250 ms.
    #[serde(default = "noop_every")]
    pub noop_every: LocalDur,
    /// A follower that has not heard from a leader for this long (plus up to as much again,
    /// drawn) campaigns.
    pub election_timeout: LocalDur,
    /// Every replica's heartbeat period (a tenth of it while it knows no leader).
    pub heartbeat: LocalDur,
    /// How long a follower takes to write one entry to its log before acknowledging it.
    #[serde(default)]
    pub log_write: LocalDur,
}

fn max_clock_error() -> LocalDur {
    LocalDur::from_ns(200_000)
}
fn noop_every() -> LocalDur {
    LocalDur::from_ms(250)
}

impl Settings for LeaseGuard {
    const NAME: &'static str = "LeaseGuard";
    type Protocol = LeaseGuardProtocol;

    fn to_ron(&self) -> String {
        let LeaseGuard {
            mode,
            max_clock_error,
            noop_every,
            election_timeout,
            heartbeat,
            log_write,
        } = self;
        format!(
            "LeaseGuard(mode: {mode:?}, max_clock_error: \"{max_clock_error}\", noop_every: \
             \"{noop_every}\", election_timeout: \"{election_timeout}\", heartbeat: \
             \"{heartbeat}\", log_write: \"{log_write}\")"
        )
    }

    fn build(&self) -> LeaseGuardProtocol {
        LeaseGuardProtocol::new(
            LeaseGuardConfig {
                mode: self.mode,
                max_clock_error: self.max_clock_error,
                noop_every: self.noop_every,
                election_timeout: self.election_timeout,
                heartbeat: self.heartbeat,
                log_write: self.log_write,
            },
            self.to_ron(),
        )
    }

    /// Its periods at least the shortest interval (1 us: election timeout, heartbeat, no-op)
    /// and the clock error bound a margin under the lease (an error of a whole term leaves no
    /// lease). Their other bounds (positive, not negative) are checked with its roles.
    fn validate(&self, s: &Scenario) -> Vec<String> {
        let mut p = Vec::new();
        for (at, d) in [
            ("strategy.election_timeout", self.election_timeout),
            ("strategy.heartbeat", self.heartbeat),
            ("strategy.noop_every", self.noop_every),
        ] {
            check::interval(&mut p, at, d);
        }
        check::at_most_max(&mut p, "strategy.log_write", self.log_write);
        let e = self.max_clock_error;
        if e.ns() >= 0 {
            check::margin(&mut p, "strategy.max_clock_error", e, s.lease.duration);
        }
        p
    }

    /// Every replica heartbeats every other, each with its ack, and runs its timer: n (2n - 1)
    /// per heartbeat, taken at the leaderless tenth of it (from above). Per election timeout,
    /// at worst every replica campaigns: n (2n - 1) again. Per no-op, the leader's timer and the
    /// entry to and ack from each other: 2n - 1, with a log write each, n - 1 more.
    fn events_per_second(&self, s: &Scenario) -> f64 {
        let n = s.nodes.len() as f64;
        let all = n * (2.0 * n - 1.0);
        let leaderless = LocalDur::from_ns(self.heartbeat.ns() / 10);
        check::per_second(all, leaderless)
            + check::per_second(all, self.election_timeout)
            + check::per_second(3.0 * n - 2.0, self.noop_every)
    }

    /// Elections, heartbeats and no-ops are its own settings: renewals and retries are not
    /// timed by the lease. A scenario may name the replica that leads first.
    fn lease_fields(&self) -> LeaseFields {
        LeaseFields {
            initial_leader: true,
            ..LeaseFields::TERM_ONLY
        }
    }

    /// The clock error bound is varied as epsilon, but the bound epsilon >= T*rho is not its.
    fn epsilon(&self) -> Option<Margin> {
        Some(Margin {
            field: "max_clock_error",
            value: self.max_clock_error,
            bounds_drift: false,
        })
    }

    /// These settings in each of the five modes, from no lease to LeaseGuard.
    fn compare_variants(&self, _: &Scenario) -> Option<Vec<(Self, String)>> {
        use LeaseGuardMode as M;
        let modes = [
            M::Inconsistent,
            M::Quorum,
            M::LogLease,
            M::DeferCommit,
            M::LeaseGuard,
        ];
        let with = |mode| LeaseGuard { mode, ..*self };
        let rows = modes
            .into_iter()
            .map(|m| (with(m), format!("the scenario's settings, mode {m:?}")));
        Some(rows.collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 3 replicas: all-to-all heartbeats with acks and timers are 3 x 5 = 15 per leaderless
    /// heartbeat (100 ms / 10 = 10 ms): 1500 a second; elections 15 per 1 s: 15; no-ops
    /// 3 x 3 - 2 = 7 per 250 ms: 28. 1543 in all.
    #[test]
    fn heartbeats_elections_and_noops_are_counted() {
        let s = Scenario::from_ron(
            r#"Scenario(duration: "10s", lease: (duration: "3s"),
                strategy: LeaseGuard(election_timeout: "1s", heartbeat: "100ms"),
                nodes: [(name: "r1", role: Replica), (name: "r2", role: Replica),
                (name: "r3", role: Replica)])"#,
        )
        .unwrap();
        let g: LeaseGuard =
            ron::from_str(r#"(election_timeout: "1s", heartbeat: "100ms")"#).unwrap();
        assert_eq!(Settings::events_per_second(&g, &s), 1543.0);
    }

    fn scenario(fields: &str) -> (Scenario, LeaseGuard) {
        let s = Scenario::from_ron(&format!(
            r#"Scenario(duration: "10s", lease: (duration: "3s"),
                strategy: LeaseGuard(election_timeout: "1s", heartbeat: "100ms"{fields}),
                nodes: [(name: "r1", role: Replica)])"#
        ))
        .unwrap();
        let g = crate::scenario::ron_options()
            .from_str(&s.strategy.to_ron())
            .unwrap();
        (s, g)
    }

    fn problems(fields: &str) -> Vec<String> {
        let (s, g) = scenario(fields);
        Settings::validate(&g, &s)
    }

    #[test]
    fn the_defaults_are_leaseguard_200us_250ms_and_an_instant_write_and_round_trip() {
        let (_, g) = scenario("");
        let written = "LeaseGuard(mode: LeaseGuard, max_clock_error: \"200us\", noop_every: \
                       \"250ms\", election_timeout: \"1s\", heartbeat: \"100ms\", log_write: \
                       \"0s\")";
        assert_eq!(g.to_ron(), written);
        let (_, back) = scenario(r#", mode: Quorum, log_write: "1ms""#);
        let again: LeaseGuard = crate::scenario::ron_options()
            .from_str(&back.to_ron())
            .unwrap();
        assert_eq!(again, back);
        assert_eq!(back.log_write, LocalDur::from_ms(1));
    }

    #[test]
    fn the_clock_error_is_shorter_than_the_lease_and_the_periods_at_least_the_floor() {
        assert!(problems("").is_empty());
        assert!(problems(r#", max_clock_error: "2999999999ns""#).is_empty());
        assert_eq!(
            problems(r#", max_clock_error: "3s""#),
            [
                "strategy.max_clock_error: 3s must be shorter than the lease (3s), or the holder \
              never holds"
            ]
        );
        // A negative error is the protocol's check to report, once.
        assert!(problems(r#", max_clock_error: "-1ns""#).is_empty());
        let p = problems(r#", noop_every: "999ns""#);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].starts_with("strategy.noop_every: "), "{p:?}");
    }

    #[test]
    fn an_initial_leader_is_read_epsilon_is_the_clock_error_and_compare_runs_every_mode() {
        let (s, g) = scenario(r#", mode: LogLease, max_clock_error: "1ms""#);
        let fields = Settings::lease_fields(&g);
        assert!(fields.initial_leader && !fields.renew_every && !fields.retry_every);
        let epsilon = Margin {
            field: "max_clock_error",
            value: LocalDur::from_ms(1),
            bounds_drift: false,
        };
        assert_eq!(Settings::epsilon(&g), Some(epsilon));
        let rows = Settings::compare_variants(&g, &s).expect("a row per mode");
        let modes: Vec<(LeaseGuardMode, LocalDur)> = rows
            .iter()
            .map(|(v, _)| (v.mode, v.max_clock_error))
            .collect();
        use LeaseGuardMode as M;
        let ms = LocalDur::from_ms(1);
        assert_eq!(
            modes,
            [
                (M::Inconsistent, ms),
                (M::Quorum, ms),
                (M::LogLease, ms),
                (M::DeferCommit, ms),
                (M::LeaseGuard, ms)
            ]
        );
        assert_eq!(rows[1].1, "the scenario's settings, mode Quorum");
    }
}
