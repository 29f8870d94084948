//! `ZooKeeperSession`'s settings as a scenario writes them: the server's tick and its bounds on
//! a session timeout, the timeout a client asks for, and what the client is: a Curator client
//! with its connection-state error policy and simulated expiry (the default), or the raw
//! ZooKeeper client that acts while Disconnected (`act_while_disconnected`, HBase).
//!
//! A `session_timeout` outside [`min_session_timeout`, `max_session_timeout`] (by default
//! [2, 20] x `tick_time`) is not an error: ZooKeeper clamps it (so does the server here, and
//! the client works with what it is told). Bounds with min above max are, as in ZooKeeper's
//! `QuorumPeerConfig.parseProperties` ("minSessionTimeout must not be larger than
//! maxSessionTimeout"), the defaults resolved first. Zero or negative values are too (ZooKeeper
//! reads -1 as "unset" and does not check further; a timeout of zero here would ping without
//! end), as are values out of the limits for a period (1 us to 1000 h).
//!
//! `error_policy` and `simulated_session_expiration_percent` are Curator's
//! (`CuratorFrameworkFactory.Builder`): written with `act_while_disconnected: true`, the raw
//! client, they are refused, since that client has no `ConnectionStateManager`. A percent above
//! 100 is refused as the builder refuses it; 0 is accepted and read as `ConnectionStateManager`
//! reads it, no simulated expiry (the builder itself refuses 0, so only a manager built by hand
//! has it). Like the bounds, both are printed only when written.

use super::client::{ping_interval, read_timeout, simulated_expiry};
use super::server::Bounds;
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
    /// The server's tick: sessions expire in buckets this wide, and the default bounds are 2
    /// and 20 ticks. Default 2 s (ZooKeeper's sample configuration).
    #[serde(default = "tick_time")]
    pub tick_time: LocalDur,
    /// The timeout a client asks for. Default 30 s.
    #[serde(default = "session_timeout")]
    pub session_timeout: LocalDur,
    /// The shortest timeout the server grants (zoo.cfg `minSessionTimeout`). Default
    /// 2 x `tick_time`.
    #[serde(default)]
    pub min_session_timeout: Option<LocalDur>,
    /// The longest timeout the server grants (zoo.cfg `maxSessionTimeout`). Default
    /// 20 x `tick_time`.
    #[serde(default)]
    pub max_session_timeout: Option<LocalDur>,
    /// The raw ZooKeeper client (HBase, Kafka's controller): the holder acts until the Expired
    /// event arrives, and nothing simulates an expiry. `false` (the default): a Curator client.
    #[serde(default)]
    pub act_while_disconnected: bool,
    /// A Curator client's `ConnectionStateErrorPolicy`: which states count as losing the lock.
    /// Default `Standard` (Curator's).
    #[serde(default)]
    pub error_policy: Option<ErrorPolicy>,
    /// Curator's `simulatedSessionExpirationPercent`: LOST is injected once the negotiated
    /// timeout x this / 100 has passed on the wall clock since SUSPENDED. Default 100; 0: never.
    #[serde(default)]
    pub simulated_session_expiration_percent: Option<u32>,
}

/// Curator's `ConnectionStateErrorPolicy`: the connection states in which a recipe (and an
/// application following it) takes its lock as lost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
pub enum ErrorPolicy {
    /// `StandardConnectionStateErrorPolicy`: SUSPENDED and LOST.
    #[default]
    Standard,
    /// `SessionConnectionStateErrorPolicy`: LOST only.
    Session,
}

/// Curator's default `simulatedSessionExpirationPercent` (`CuratorFrameworkFactory.Builder`).
pub const EXPIRATION_PERCENT: u32 = 100;

fn tick_time() -> LocalDur {
    LocalDur::from_secs(2)
}
fn session_timeout() -> LocalDur {
    LocalDur::from_secs(30)
}

impl ZooKeeperSession {
    /// The server's bounds, defaults resolved.
    pub fn bounds(&self) -> Bounds {
        Bounds::of(
            self.tick_time,
            self.min_session_timeout,
            self.max_session_timeout,
        )
    }

    /// The timeout the server grants.
    pub fn negotiated(&self) -> LocalDur {
        self.bounds().negotiate(self.session_timeout)
    }

    /// The error policy, Curator's default resolved.
    pub fn policy(&self) -> ErrorPolicy {
        self.error_policy.unwrap_or_default()
    }

    /// The simulated expiry's percent as the client uses it: 0 for the raw client, which has
    /// no `ConnectionStateManager`.
    pub fn expiration_percent(&self) -> u32 {
        match self.act_while_disconnected {
            true => 0,
            false => self
                .simulated_session_expiration_percent
                .unwrap_or(EXPIRATION_PERCENT),
        }
    }

    /// Whether the holder acts through SUSPENDED: the raw client, or Curator's session policy.
    pub fn acts_while_suspended(&self) -> bool {
        self.act_while_disconnected || self.policy() == ErrorPolicy::Session
    }

    /// The Curator fields written along with the raw client, refused; and a percent above 100.
    fn curator_problems(&self, p: &mut Vec<String>) {
        if self.act_while_disconnected {
            for (field, written) in [
                ("error_policy", self.error_policy.is_some()),
                (
                    "simulated_session_expiration_percent",
                    self.simulated_session_expiration_percent.is_some(),
                ),
            ] {
                if written {
                    p.push(format!(
                        "strategy.{field}: a Curator client's setting, but \
                         act_while_disconnected: true is the raw ZooKeeper client (HBase), \
                         which has no ConnectionStateManager: remove one of the two"
                    ));
                }
            }
        }
        if let Some(percent) = self.simulated_session_expiration_percent {
            if percent > 100 {
                p.push(format!(
                    "strategy.simulated_session_expiration_percent: must be at most 100 (got \
                     {percent}), as CuratorFrameworkFactory.Builder requires"
                ));
            }
        }
    }
}

impl Settings for ZooKeeperSession {
    const NAME: &'static str = "ZooKeeperSession";
    type Protocol = ZkProtocol;

    fn to_ron(&self) -> String {
        let ZooKeeperSession {
            tick_time,
            session_timeout,
            min_session_timeout,
            max_session_timeout,
            act_while_disconnected,
            error_policy,
            simulated_session_expiration_percent,
        } = self;
        // A bound left unset stays unset: its default follows `tick_time` (as `--vary
        // tick_time=` varies it), which a written value would not.
        let bound = |field: &str, d: &Option<LocalDur>| {
            d.map(|d| format!(", {field}: \"{d}\"")).unwrap_or_default()
        };
        let min = bound("min_session_timeout", min_session_timeout);
        let max = bound("max_session_timeout", max_session_timeout);
        // Curator's fields too are printed only when written, so that a raw client's line and
        // every line written before they existed read as they did.
        let policy = error_policy
            .map(|e| format!(", error_policy: {e:?}"))
            .unwrap_or_default();
        let percent = simulated_session_expiration_percent
            .map(|n| format!(", simulated_session_expiration_percent: {n}"))
            .unwrap_or_default();
        format!(
            "ZooKeeperSession(tick_time: \"{tick_time}\", session_timeout: \
             \"{session_timeout}\"{min}{max}, act_while_disconnected: \
             {act_while_disconnected}{policy}{percent})"
        )
    }

    fn build(&self) -> ZkProtocol {
        let config = ZkConfig {
            tick_time: self.tick_time,
            session_timeout: self.session_timeout,
            bounds: self.bounds(),
            acts_while_suspended: self.acts_while_suspended(),
            expiration_percent: self.expiration_percent(),
        };
        ZkProtocol::new(config, self.to_ron())
    }

    /// Each client may ask its own timeout and be its own kind of client (raw or Curator, its
    /// policy): ZooKeeper clients of one ensemble often differ so.
    fn build_nodes(&self, nodes: &[(usize, Self)]) -> Option<ZkProtocol> {
        let own = nodes.iter().map(|(n, s)| (*n, s.build().config()));
        Some(self.build().with_own(own.collect()))
    }

    /// The server's fields (its tick and bounds) are the ensemble's: a client cannot have its
    /// own, and the ensemble takes none of a node's own.
    fn check_own(&self, own: &Self, role: Role) -> Vec<String> {
        if role == Role::Grantor {
            return vec![
                "tick_time: the ensemble runs the strategy's settings; write them there".into(),
            ];
        }
        let server = |s: &Self| (s.tick_time, s.bounds());
        if server(own) == server(self) {
            return Vec::new();
        }
        vec![
            "tick_time: the server's tick and its bounds on a session timeout are the              ensemble's: write them in the strategy, not in a client's own settings"
                .into(),
        ]
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
        for (field, d) in [
            ("min_session_timeout", self.min_session_timeout),
            ("max_session_timeout", self.max_session_timeout),
        ] {
            if let Some(d) = d {
                let at = format!("strategy.{field}");
                check::positive(&mut p, &at, d);
                check::interval(&mut p, &at, d);
            }
        }
        // `QuorumPeerConfig.parseProperties`: the defaults resolved, min must not be larger
        // than max. Checked only when both are positive (else said above).
        let Bounds { min, max } = self.bounds();
        if min.ns() > 0 && max.ns() > 0 && min > max {
            let min = match self.min_session_timeout {
                Some(_) => format!("{min}"),
                None => format!("{min} (2 x tick_time, its default)"),
            };
            let max = match self.max_session_timeout {
                Some(_) => format!("{max}"),
                None => format!("{max}: 20 x tick_time, its default"),
            };
            p.push(format!(
                "strategy.min_session_timeout: {min} must not be larger than \
                 strategy.max_session_timeout ({max})"
            ));
        }
        self.curator_problems(&mut p);
        p
    }

    /// Pings and connects time themselves; `lease.retry_every` is the reconnect period. And
    /// `lease.initial_leader`: the client that connects first (the others' first connect waits
    /// `retry_every`).
    fn lease_fields(&self) -> LeaseFields {
        LeaseFields {
            retry_every: true,
            initial_leader: true,
            ..LeaseFields::TERM_ONLY
        }
    }

    /// Every client pings every t/3 of the negotiated timeout when idle (its timer, the ping,
    /// the answer: 3), and the server's expirer runs at most once a tick.
    fn events_per_second(&self, s: &Scenario) -> f64 {
        let clients = s.nodes.iter().filter(|n| n.role != Role::Grantor).count() as f64;
        // `per_second` counts 0 for a timeout that is not positive (reported on its own).
        let pings = check::per_second(3.0 * clients, ping_interval(self.negotiated()));
        pings + check::per_second(1.0, self.tick_time)
    }

    /// The holder stops readTimeout = 2t/3 after its last answer, the server expires it at
    /// least t after the message answered: t/3 apart, each on its own clock. Under the session
    /// policy it stops at LOST, t x percent / 100 later still: a margin only for a percent
    /// under 33 (and none at 0, acting until Expired). Acting until Expired has no margin.
    fn drift_margin(&self) -> Option<(LocalDur, &'static str)> {
        let t = self.negotiated();
        if self.act_while_disconnected || t.ns() <= 0 {
            return None;
        }
        let standard = t - read_timeout(t);
        if self.policy() == ErrorPolicy::Standard {
            return Some((standard, "session timeout / 3 (readTimeout = 2/3 of it)"));
        }
        let percent = self.expiration_percent();
        let margin = standard - simulated_expiry(t, percent);
        (percent > 0 && margin.ns() > 0).then_some((
            margin,
            "session timeout / 3 less the simulated expiry (percent of the timeout)",
        ))
    }

    // No `epsilon`: no field is a margin. The client's t/3 before the server's t comes with
    // the timeout (see `drift_margin`), so `--vary epsilon=` has nothing to vary here.

    /// The scenario's settings with `act_while_disconnected` the other way (Curator's fields
    /// dropped for the raw client), and for a Curator client the other error policy.
    fn compare_variants(&self, _: &Scenario) -> Option<Vec<(Self, String)>> {
        let raw = !self.act_while_disconnected;
        let flipped = match raw {
            // The raw client has none of Curator's fields.
            true => ZooKeeperSession {
                act_while_disconnected: true,
                error_policy: None,
                simulated_session_expiration_percent: None,
                ..*self
            },
            false => ZooKeeperSession {
                act_while_disconnected: false,
                ..*self
            },
        };
        let what = format!("the scenario's settings, act_while_disconnected: {raw}");
        let mut rows = vec![(flipped, what)];
        if !self.act_while_disconnected {
            let other = match self.policy() {
                ErrorPolicy::Standard => ErrorPolicy::Session,
                ErrorPolicy::Session => ErrorPolicy::Standard,
            };
            let settings = ZooKeeperSession {
                error_policy: Some(other),
                ..*self
            };
            rows.push((
                settings,
                format!("the scenario's settings, error_policy: {other:?}"),
            ));
        }
        Some(rows)
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
        // Optional fields written bare, as a scenario file writes them.
        crate::scenario::ron_options()
            .from_str(&s.strategy.to_ron())
            .unwrap()
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

    /// `SessionTest.testMinMaxSessionTimeout` (ZooKeeper's tests): tickTime 3 s with
    /// minSessionTimeout 20 s and maxSessionTimeout 240 s (neither a default: 2 and 20 ticks
    /// would be 6 s and 60 s): asked 120 s, granted 120 s (inside); asked 10 s, granted 20 s
    /// (raised to min); asked 480 s, granted 240 s (lowered to max). And its
    /// `testSessionTimeoutAccess`, the defaults with the same tick: asked 12 s (4 ticks), 12 s;
    /// asked 3 s (1 tick), 6 s (2 ticks); asked 90 s (30 ticks), 60 s (20 ticks).
    #[test]
    fn the_server_grants_a_timeout_inside_its_bounds() {
        let granted = |bounds: &str, asked: &str| {
            let s = scenario(&format!(
                r#"ZooKeeperSession(tick_time: "3s", session_timeout: "{asked}"{bounds})"#
            ));
            let z = settings(&s);
            assert!(Settings::validate(&z, &s).is_empty(), "{bounds} {asked}");
            z.negotiated()
        };
        let set = r#", min_session_timeout: "20s", max_session_timeout: "240s""#;
        assert_eq!(granted(set, "120s"), LocalDur::from_secs(120));
        assert_eq!(granted(set, "10s"), LocalDur::from_secs(20));
        assert_eq!(granted(set, "480s"), LocalDur::from_secs(240));
        assert_eq!(granted("", "12s"), LocalDur::from_secs(12));
        assert_eq!(granted("", "3s"), LocalDur::from_secs(6));
        assert_eq!(granted("", "90s"), LocalDur::from_secs(60));
        // One bound set, the other its default: with a 3 s tick, max 240 s lets 90 s through;
        // min 20 s raises 3 s to 20 s.
        let max = r#", max_session_timeout: "240s""#;
        assert_eq!(granted(max, "90s"), LocalDur::from_secs(90));
        let min = r#", min_session_timeout: "20s""#;
        assert_eq!(granted(min, "3s"), LocalDur::from_secs(20));
    }

    /// The bound with its default resolved, min above max is refused as ZooKeeper refuses it
    /// (`QuorumPeerConfig.parseProperties`); equal bounds are not (every timeout is that one).
    /// With a 2 s tick the defaults are 4 s and 40 s: a min of 50 s is above the default max,
    /// a max of 3 s below the default min. A bound of zero is refused as every period is.
    #[test]
    fn bounds_with_min_above_max_are_refused_naming_both() {
        let problems = |bounds: &str| {
            let s = scenario(&format!(r#"ZooKeeperSession(tick_time: "2s"{bounds})"#));
            Settings::validate(&settings(&s), &s)
        };
        assert_eq!(
            problems(r#", min_session_timeout: "50s""#),
            ["strategy.min_session_timeout: 50s must not be larger than \
                 strategy.max_session_timeout (40s: 20 x tick_time, its default)"]
        );
        assert_eq!(
            problems(r#", max_session_timeout: "3s""#),
            [
                "strategy.min_session_timeout: 4s (2 x tick_time, its default) must not be \
                 larger than strategy.max_session_timeout (3s)"
            ]
        );
        assert_eq!(
            problems(r#", min_session_timeout: "30s", max_session_timeout: "20s""#),
            ["strategy.min_session_timeout: 30s must not be larger than \
                 strategy.max_session_timeout (20s)"]
        );
        assert_eq!(
            problems(r#", min_session_timeout: "0s", max_session_timeout: "-1s""#),
            [
                "strategy.min_session_timeout: must be positive (got 0s)",
                "strategy.max_session_timeout: must be positive (got -1s)"
            ]
        );
        assert!(problems(r#", min_session_timeout: "25s", max_session_timeout: "25s""#).is_empty());
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

    /// Curator's fields are printed when written, whatever their value (a default written stays
    /// written), and not otherwise; what is printed reads back as the same settings.
    #[test]
    fn curator_fields_round_trip_when_written_and_only_then() {
        let printed = |strategy: &str| Settings::to_ron(&settings(&scenario(strategy)));
        assert!(!printed("ZooKeeperSession()").contains("error_policy"));
        let text =
            r#"ZooKeeperSession(error_policy: Standard, simulated_session_expiration_percent: 0)"#;
        let z = settings(&scenario(text));
        assert_eq!(z.error_policy, Some(ErrorPolicy::Standard));
        assert_eq!(z.simulated_session_expiration_percent, Some(0));
        let again: ZooKeeperSession = crate::scenario::ron_options()
            .from_str(&Settings::to_ron(&z))
            .unwrap();
        assert_eq!(again, z);
        assert!(printed(text).ends_with(
            "act_while_disconnected: false, error_policy: Standard, \
             simulated_session_expiration_percent: 0)"
        ));
    }

    /// t = 30 s: the standard policy stops t/3 = 10 s before the server (readTimeout 20 s);
    /// the session policy t x percent / 100 later: 10 - 3 = 7 s at 10%, none at 100% (30 s
    /// after) nor at 0 (until Expired); the raw client none. The percent is 0 for the raw
    /// client whatever the default.
    #[test]
    fn the_drift_margin_follows_the_policy_and_the_percent() {
        let margin = |strategy: &str| {
            let z = settings(&scenario(strategy));
            Settings::drift_margin(&z).map(|(d, _)| d)
        };
        let s = LocalDur::from_secs;
        assert_eq!(margin("ZooKeeperSession()"), Some(s(10)));
        let session = |n: u32| {
            margin(&format!(
                "ZooKeeperSession(error_policy: Session, simulated_session_expiration_percent: {n})"
            ))
        };
        assert_eq!(session(10), Some(s(7)));
        assert_eq!(session(100), None);
        assert_eq!(session(0), None);
        assert_eq!(
            margin("ZooKeeperSession(act_while_disconnected: true)"),
            None
        );
        let raw = settings(&scenario("ZooKeeperSession(act_while_disconnected: true)"));
        assert_eq!(
            (raw.expiration_percent(), raw.acts_while_suspended()),
            (0, true)
        );
    }

    /// `compare` runs the raw client without Curator's fields (else it would be refused), and a
    /// Curator client under the other policy as well.
    #[test]
    fn compare_flips_the_client_and_the_policy() {
        let s = scenario(
            r#"ZooKeeperSession(error_policy: Session, simulated_session_expiration_percent: 50)"#,
        );
        let rows = Settings::compare_variants(&settings(&s), &s).unwrap();
        let raw = &rows[0].0;
        assert!(raw.act_while_disconnected);
        assert_eq!(
            (raw.error_policy, raw.simulated_session_expiration_percent),
            (None, None)
        );
        assert!(Settings::validate(raw, &s).is_empty());
        assert_eq!(rows[1].0.error_policy, Some(ErrorPolicy::Standard));
        assert_eq!(rows[1].0.simulated_session_expiration_percent, Some(50));
        let s = scenario("ZooKeeperSession(act_while_disconnected: true)");
        let rows = Settings::compare_variants(&settings(&s), &s).unwrap();
        assert_eq!(rows.len(), 1);
        assert!(!rows[0].0.act_while_disconnected);
    }

    fn problems(strategy: &str) -> Vec<String> {
        let s = scenario(strategy);
        Settings::validate(&settings(&s), &s)
    }

    #[test]
    fn the_holder_acts_while_suspended_as_the_raw_client_or_under_the_session_policy() {
        let acts = |strategy: &str| settings(&scenario(strategy)).acts_while_suspended();
        assert!(acts("ZooKeeperSession(act_while_disconnected: true)"));
        assert!(acts("ZooKeeperSession(error_policy: Session)"));
        assert!(!acts("ZooKeeperSession(error_policy: Standard)"));
        assert!(!acts("ZooKeeperSession()"));
    }

    #[test]
    fn curators_fields_are_refused_for_the_raw_client_and_the_percent_is_at_most_100() {
        let raw = problems("ZooKeeperSession(act_while_disconnected: true, error_policy: Session)");
        assert_eq!(raw.len(), 1, "{raw:?}");
        assert!(raw[0].starts_with("strategy.error_policy: a Curator client's setting"));
        for percent in [0, 50, 100] {
            let written =
                format!("ZooKeeperSession(simulated_session_expiration_percent: {percent})");
            assert!(problems(&written).is_empty(), "{percent}");
        }
        assert_eq!(
            problems("ZooKeeperSession(simulated_session_expiration_percent: 101)"),
            [
                "strategy.simulated_session_expiration_percent: must be at most 100 (got 101), \
                 as CuratorFrameworkFactory.Builder requires"
            ]
        );
    }

    #[test]
    fn a_zero_maximum_is_refused_once_not_also_as_below_the_minimum() {
        let p = problems(r#"ZooKeeperSession(max_session_timeout: "0s")"#);
        assert_eq!(
            p,
            ["strategy.max_session_timeout: must be positive (got 0s)"]
        );
    }

    #[test]
    fn a_client_may_have_its_own_timeout_and_kind_but_not_the_ensembles_fields() {
        let z = settings(&scenario("ZooKeeperSession()"));
        let own = |fields: &str| settings(&scenario(&format!("ZooKeeperSession({fields})")));
        let timeout = own(r#"session_timeout: "7s", act_while_disconnected: true"#);
        assert!(Settings::check_own(&z, &timeout, Role::Contender).is_empty());
        let tick = Settings::check_own(&z, &own(r#"tick_time: "1s""#), Role::Contender);
        assert_eq!(tick.len(), 1, "{tick:?}");
        assert!(tick[0].starts_with("tick_time: the server's tick and its bounds"));
        let server = Settings::check_own(&z, &timeout, Role::Grantor);
        assert_eq!(
            server,
            ["tick_time: the ensemble runs the strategy's settings; write them there"]
        );
        // The client's own settings reach its config.
        let built = Settings::build_nodes(&z, &[(2, timeout)]).expect("own settings");
        let config = |node| built.own.iter().find(|(n, _)| *n == node).map(|(_, c)| *c);
        let c = config(2).expect("node 2's own");
        assert_eq!(c.session_timeout, LocalDur::from_secs(7));
        assert!(c.acts_while_suspended && config(1).is_none());
    }

    #[test]
    fn a_reconnect_period_is_read_from_the_lease() {
        let z = settings(&scenario("ZooKeeperSession()"));
        let fields = Settings::lease_fields(&z);
        assert!(fields.retry_every && !fields.renew_every);
    }

    /// t = 100 ns under the session policy: readTimeout 66 ns leaves 34 ns, and a simulated
    /// expiry of 34 % is 34 ns: no margin is left.
    #[test]
    fn a_simulated_expiry_that_uses_up_the_margin_leaves_none() {
        let z = settings(&scenario(
            r#"ZooKeeperSession(tick_time: "10ns", session_timeout: "100ns", error_policy: Session,
                simulated_session_expiration_percent: 34)"#,
        ));
        assert_eq!(z.negotiated(), LocalDur::from_ns(100));
        assert_eq!(Settings::drift_margin(&z), None);
        let z = ZooKeeperSession {
            simulated_session_expiration_percent: Some(33),
            ..z
        };
        assert_eq!(
            Settings::drift_margin(&z).map(|m| m.0),
            Some(LocalDur::from_ns(1))
        );
    }
}
