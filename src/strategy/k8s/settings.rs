//! `K8sLeaderElection`'s settings as a scenario writes them: client-go's RenewDeadline,
//! RetryPeriod, JitterFactor and ReleaseOnCancel, its HTTP timeout, its fast path, what the process does when it
//! stops leading, and the clock candidates time the record by; checked as client-go's
//! `NewLeaderElector` checks them.

use super::{K8sConfig, K8sLeaderElection as K8sProtocol, OnLost};
use crate::clock::ClockKind;
use crate::scenario::{LeaseFields, Role, Scenario};
use crate::strategy::settings::check;
use crate::strategy::Settings;
use crate::time::LocalDur;
use serde::Deserialize;

/// Kubernetes leader election as client-go runs it: the API server (the one `Grantor`) stores
/// the Lease record and compares resourceVersions; candidates time it on their own clocks.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct K8sLeaderElection {
    /// The leader stops leading when a renew cycle has not succeeded for this long. Default
    /// 10 s.
    #[serde(default = "renew_deadline")]
    pub renew_deadline: LocalDur,
    /// The period of the leader's renew tries and (before jitter) of candidates' tries.
    /// Default 2 s.
    #[serde(default = "retry_period")]
    pub retry_period: LocalDur,
    /// Candidates try every retry_period * (1 + U[0, jitter_factor)); applied at 1 ppm
    /// resolution. Default 1.2.
    #[serde(default = "jitter_factor")]
    pub jitter_factor: f64,
    /// The clock candidates time the record by (observedTime): `Monotonic` (Go since 1.9, the
    /// default) or `Wall` (older clients, which a wall-clock step fools).
    #[serde(default = "monotonic")]
    pub observed_clock: ClockKind,
    /// What the process does when it stops leading: `Exit(restart: D)` (the default, with D =
    /// 10 s: kube-controller-manager and kube-scheduler exit, and come back D later as a new
    /// identity) or `Rerun` (it runs the elector again under the same identity).
    #[serde(default = "exit")]
    pub on_lost: OnLost,
    /// A leader whose lease is valid renews with one Update on the record it last wrote, with
    /// no Get, and falls back to a Get on a Conflict (client-go since 1.28). Default true.
    #[serde(default = "yes")]
    pub fast_path: bool,
    /// The leader writes an empty holder when it stops leading (ReleaseOnCancel). Default false.
    #[serde(default)]
    pub release_on_cancel: bool,
    /// The HTTP client's timeout of each Get and Update: a request with no answer by then fails.
    /// Default RenewDeadline / 2, at least 1 s, as client-go's
    /// `resourcelock.NewFromKubeconfig` sets it (the client kube-controller-manager and
    /// kube-scheduler elect with).
    #[serde(default)]
    pub http_timeout: Option<LocalDur>,
    /// client-go's LeaseDuration: what a leader writes in the record (LeaseDurationSeconds).
    /// Default: `lease.duration`. A candidate's own settings may give it another.
    #[serde(default)]
    pub lease_duration: Option<LocalDur>,
    /// How long a candidate waits out another's record: `Record` (its LeaseDurationSeconds,
    /// client-go since 1.27, kubernetes PR 114872; the default) or `Own` (its own
    /// LeaseDuration, as client-go did before: a candidate with a shorter one takes the lease
    /// from a leader with a longer one).
    #[serde(default)]
    pub expiry_from: ExpiryFrom,
}

/// Whose LeaseDuration a candidate waits out before it takes another's lease.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
pub enum ExpiryFrom {
    /// The record's LeaseDurationSeconds, which its holder wrote (client-go since 1.27).
    #[default]
    Record,
    /// The candidate's own LeaseDuration (client-go before 1.27).
    Own,
}

fn renew_deadline() -> LocalDur {
    LocalDur::from_ms(10_000)
}
fn retry_period() -> LocalDur {
    LocalDur::from_ms(2_000)
}
fn jitter_factor() -> f64 {
    1.2
}
fn monotonic() -> ClockKind {
    ClockKind::Monotonic
}
fn exit() -> OnLost {
    OnLost::Exit {
        restart: LocalDur::from_ms(10_000),
    }
}
fn yes() -> bool {
    true
}

impl K8sLeaderElection {
    /// The HTTP timeout as run: the one given, or client-go's max(RenewDeadline / 2, 1 s).
    pub fn http_timeout(&self) -> LocalDur {
        self.http_timeout.unwrap_or_else(|| {
            LocalDur::from_ns(self.renew_deadline.ns() / 2).max(LocalDur::from_secs(1))
        })
    }

    /// jitter_factor in parts per million.
    fn jitter_ppm(&self) -> i64 {
        (self.jitter_factor * 1e6).round() as i64
    }
}

impl Settings for K8sLeaderElection {
    const NAME: &'static str = "K8sLeaderElection";
    type Protocol = K8sProtocol;

    /// The observed clock, `on_lost`, `fast_path` and `release_on_cancel` are written only when
    /// they are not the defaults.
    fn to_ron(&self) -> String {
        let mut rest = String::new();
        if self.observed_clock != ClockKind::Monotonic {
            rest += &format!(", observed_clock: {:?}", self.observed_clock);
        }
        match self.on_lost {
            lost if lost == exit() => {}
            OnLost::Exit { restart } => rest += &format!(", on_lost: Exit(restart: \"{restart}\")"),
            OnLost::Rerun => rest += ", on_lost: Rerun",
        }
        if !self.fast_path {
            rest += ", fast_path: false";
        }
        if self.release_on_cancel {
            rest += ", release_on_cancel: true";
        }
        if let Some(d) = self.lease_duration {
            rest += &format!(", lease_duration: \"{d}\"");
        }
        if self.expiry_from != ExpiryFrom::Record {
            rest += &format!(", expiry_from: {:?}", self.expiry_from);
        }
        if let Some(d) = self.http_timeout {
            rest += &format!(", http_timeout: \"{d}\"");
        }
        format!(
            "K8sLeaderElection(renew_deadline: \"{}\", retry_period: \"{}\", jitter_factor: \
             {:?}{rest})",
            self.renew_deadline, self.retry_period, self.jitter_factor
        )
    }

    fn build(&self) -> K8sProtocol {
        K8sProtocol::new(
            K8sConfig {
                renew_deadline: self.renew_deadline,
                retry_period: self.retry_period,
                jitter_ppm: self.jitter_ppm(),
                observed_clock: self.observed_clock,
                on_lost: self.on_lost,
                fast_path: self.fast_path,
                release_on_cancel: self.release_on_cancel,
                lease_duration: self.lease_duration,
                expiry_from: self.expiry_from,
                http_timeout: self.http_timeout(),
            },
            self.to_ron(),
        )
    }

    /// Each candidate may run its own settings (client-go's LeaderElectionConfig is each
    /// process's: replicas of different versions or flags differ); the API server runs none.
    fn build_nodes(&self, nodes: &[(usize, Self)]) -> Option<K8sProtocol> {
        let own = nodes.iter().map(|(n, s)| (*n, s.build().config()));
        Some(self.build().with_own(own.collect()))
    }

    fn check_own(&self, _own: &Self, role: Role) -> Vec<String> {
        if role != Role::Grantor {
            return Vec::new();
        }
        vec![
            "renew_deadline: the API server runs no elector: settings of its own are for \
              candidates"
                .into(),
        ]
    }

    /// client-go's NewLeaderElector: every duration positive, LeaseDuration > RenewDeadline >
    /// JitterFactor * RetryPeriod.
    fn validate(&self, scenario: &Scenario) -> Vec<String> {
        let mut p = Vec::new();
        let t = self.lease_duration.unwrap_or(scenario.lease.duration);
        if let Some(d) = self.lease_duration {
            check::interval(&mut p, "strategy.lease_duration", d);
        }
        for (field, d) in [
            ("renew_deadline", self.renew_deadline),
            ("retry_period", self.retry_period),
        ] {
            if d <= LocalDur::ZERO {
                p.push(format!(
                    "strategy.{field}: must be greater than zero, as client-go requires (got {d})"
                ));
            }
            check::interval(&mut p, &format!("strategy.{field}"), d);
        }
        if self.renew_deadline >= t {
            p.push(format!(
                "strategy.renew_deadline: must be shorter than the lease (client-go's \
                 LeaseDuration: lease_duration, or lease.duration: {t}), as client-go requires \
                 (got {})",
                self.renew_deadline
            ));
        }
        if let Some(d) = self.http_timeout {
            if d <= LocalDur::ZERO {
                p.push(format!(
                    "strategy.http_timeout: must be greater than zero (got {d})"
                ));
            }
            check::interval(&mut p, "strategy.http_timeout", d);
        }
        if let OnLost::Exit { restart } = self.on_lost {
            if restart <= LocalDur::ZERO {
                p.push(format!(
                    "strategy.on_lost: Exit(restart: {restart}): the restart delay must be \
                     greater than zero (a process that exits comes back no sooner than it left)"
                ));
            }
            check::interval(&mut p, "strategy.on_lost.restart", restart);
        }
        let (factor, ppm) = (self.jitter_factor, self.jitter_ppm());
        if !factor.is_finite() || ppm < 0 {
            p.push(format!(
                "strategy.jitter_factor: must be a number at least 0 (got {factor})"
            ));
        } else if self.renew_deadline.ns() as i128 * 1_000_000
            <= self.retry_period.ns() as i128 * ppm as i128
        {
            p.push(format!(
                "strategy.renew_deadline: must be greater than jitter_factor x retry_period = \
                 {factor} x {}, as client-go requires (got {})",
                self.retry_period, self.renew_deadline
            ));
        }
        p
    }

    /// Every candidate (each node but the API server) tries every retry period at the most
    /// (jitter only lengthens it), the leader renews as often: a timer, a Get or Update and its
    /// answer, and a second round trip when it writes, 5 per try.
    fn events_per_second(&self, s: &Scenario) -> f64 {
        let candidates = s.nodes.iter().filter(|n| n.role != Role::Grantor).count() as f64;
        check::per_second(5.0 * candidates, self.retry_period)
    }

    /// Its own periods time renewals and tries: `lease.renew_every` and `lease.retry_every`
    /// are not read.
    /// The term, and `lease.initial_leader`: the candidate that tries first (the others' first
    /// try waits a jittered retry period).
    fn lease_fields(&self) -> LeaseFields {
        LeaseFields {
            initial_leader: true,
            ..LeaseFields::TERM_ONLY
        }
    }

    /// These settings with each of client-go's choices turned over: the fast path, release on
    /// cancel, what the process does when it stops leading, and the clock observedTime is
    /// read on (the monotonic clock since Go 1.9, the wall clock before); each labelled with
    /// what changed. The common lineup follows (Kubernetes is part of it).
    fn compare_variants(&self, _: &Scenario) -> Option<Vec<(Self, String)>> {
        let said = |what: String| format!("the scenario's settings, {what}");
        let fast = Self {
            fast_path: !self.fast_path,
            ..*self
        };
        let release = Self {
            release_on_cancel: !self.release_on_cancel,
            ..*self
        };
        let on_lost = Self {
            on_lost: match self.on_lost {
                OnLost::Exit { .. } => OnLost::Rerun,
                OnLost::Rerun => exit(),
            },
            ..*self
        };
        let clock = Self {
            observed_clock: match self.observed_clock {
                ClockKind::Wall => ClockKind::Monotonic,
                _ => ClockKind::Wall,
            },
            ..*self
        };
        Some(vec![
            (fast, said(format!("fast_path: {}", fast.fast_path))),
            (
                release,
                said(format!("release_on_cancel: {}", release.release_on_cancel)),
            ),
            (on_lost, said(format!("on_lost: {:?}", on_lost.on_lost))),
            (
                clock,
                said(format!("observed_clock: {:?}", clock.observed_clock)),
            ),
        ])
    }

    /// client-go's defaults (15 s lease, 10 s renew deadline, 2 s retry) scaled to the
    /// scenario's T, in whole milliseconds as a person would write them.
    fn lineup(s: &Scenario, _: LocalDur, _: &str) -> Vec<(Self, String)> {
        let ms_of = |ns: i64| LocalDur::from_ns(ns / 1_000_000 * 1_000_000);
        let t = s.lease.duration.ns();
        let scaled = K8sLeaderElection {
            renew_deadline: ms_of(t / 3 * 2),
            retry_period: ms_of(t / 15 * 2),
            jitter_factor: jitter_factor(),
            observed_clock: ClockKind::Monotonic,
            on_lost: exit(),
            fast_path: true,
            release_on_cancel: false,
            lease_duration: None,
            expiry_from: ExpiryFrom::Record,
            http_timeout: None,
        };
        vec![(
            scaled,
            "client-go's 15/10/2 s scaled to T (in whole ms)".to_string(),
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(strategy: &str) -> Scenario {
        Scenario::from_ron(&format!(
            r#"Scenario(duration: "60s", lease: (duration: "15s"), strategy: {strategy},
                nodes: [(name: "api", role: Grantor), (name: "a", role: Contender),
                (name: "b", role: Contender), (name: "c", role: Contender)])"#
        ))
        .unwrap()
    }

    fn settings(text: &str) -> K8sLeaderElection {
        crate::scenario::ron_options().from_str(text).unwrap()
    }

    fn problems(strategy: &str) -> Vec<String> {
        let s = scenario(strategy);
        Settings::validate(&settings(&s.strategy.to_ron()), &s)
    }

    #[test]
    fn client_go_s_defaults_are_valid_and_written_bare() {
        let k = settings("K8sLeaderElection()");
        assert!(problems("K8sLeaderElection()").is_empty());
        assert_eq!(
            Settings::to_ron(&k),
            r#"K8sLeaderElection(renew_deadline: "10s", retry_period: "2s", jitter_factor: 1.2)"#
        );
        // NewFromKubeconfig: max(10 s / 2, 1 s) = 5 s; 1.2 is 1,200,000 ppm.
        assert_eq!(k.http_timeout(), LocalDur::from_secs(5));
        assert_eq!(k.jitter_ppm(), 1_200_000);
        let c = Settings::build(&k).config();
        assert_eq!(
            (c.http_timeout, c.jitter_ppm),
            (LocalDur::from_secs(5), 1_200_000)
        );
        assert_eq!(
            (c.renew_deadline, c.retry_period),
            (k.renew_deadline, k.retry_period)
        );
        assert!(c.fast_path && !c.release_on_cancel);
        assert_eq!(c.on_lost, exit());
    }

    #[test]
    fn every_setting_off_its_default_is_written_and_reads_back() {
        let text = r#"K8sLeaderElection(renew_deadline: "8s", retry_period: "1s", jitter_factor: 0.5, observed_clock: Wall, on_lost: Exit(restart: "3s"), fast_path: false, release_on_cancel: true, lease_duration: "12s", expiry_from: Own, http_timeout: "700ms")"#;
        let k = settings(text);
        assert_eq!(Settings::to_ron(&k), text);
        assert_eq!(settings(&Settings::to_ron(&k)), k);
        let rerun = settings(r#"K8sLeaderElection(on_lost: Rerun)"#);
        assert!(Settings::to_ron(&rerun).ends_with(", on_lost: Rerun)"));
        // A timeout given is run as given, even under 1 s; the config carries every field.
        assert_eq!(k.http_timeout(), LocalDur::from_ms(700));
        let c = Settings::build(&k).config();
        assert_eq!(c.observed_clock, ClockKind::Wall);
        assert_eq!(
            c.on_lost,
            OnLost::Exit {
                restart: LocalDur::from_secs(3)
            }
        );
        assert!(!c.fast_path && c.release_on_cancel);
        assert_eq!(c.lease_duration, Some(LocalDur::from_secs(12)));
        assert_eq!(c.expiry_from, ExpiryFrom::Own);
        assert_eq!(c.jitter_ppm, 500_000);
    }

    #[test]
    fn the_http_timeout_is_half_the_renew_deadline_and_at_least_one_second() {
        // 1.5 s / 2 = 750 ms, raised to 1 s; 3 s / 2 = 1.5 s as it is.
        let short = settings(r#"K8sLeaderElection(renew_deadline: "1500ms")"#);
        assert_eq!(short.http_timeout(), LocalDur::from_secs(1));
        let long = settings(r#"K8sLeaderElection(renew_deadline: "3s")"#);
        assert_eq!(long.http_timeout(), LocalDur::from_ms(1_500));
        // 0.0000015 is 1.5 ppm, rounded to 2.
        let fine = settings(r#"K8sLeaderElection(jitter_factor: 0.0000015)"#);
        assert_eq!(fine.jitter_ppm(), 2);
    }

    /// Each rule names its field. (0 s is above 1.2 x -1 s, so the jitter rule holds here.)
    #[test]
    fn new_leader_elector_s_rules_are_checked_field_by_field() {
        assert_eq!(
            problems(r#"K8sLeaderElection(renew_deadline: "0s", retry_period: "-1s")"#),
            [
                "strategy.renew_deadline: must be greater than zero, as client-go requires (got \
                 0s)",
                "strategy.retry_period: must be greater than zero, as client-go requires (got \
                 -1s)",
            ]
        );
        // The lease: 15 s, or the strategy's own LeaseDuration.
        assert_eq!(
            problems(r#"K8sLeaderElection(renew_deadline: "15s")"#),
            [
                "strategy.renew_deadline: must be shorter than the lease (client-go's \
                 LeaseDuration: lease_duration, or lease.duration: 15s), as client-go requires \
                 (got 15s)"
            ]
        );
        assert!(problems(r#"K8sLeaderElection(renew_deadline: "14999999999ns")"#).is_empty());
        assert_eq!(
            problems(r#"K8sLeaderElection(lease_duration: "9s")"#).len(),
            1,
            "10 s is not shorter than a LeaseDuration of 9 s"
        );
        assert_eq!(
            problems(r#"K8sLeaderElection(http_timeout: "0s", on_lost: Exit(restart: "0s"))"#),
            [
                "strategy.http_timeout: must be greater than zero (got 0s)",
                "strategy.on_lost: Exit(restart: 0s): the restart delay must be greater than \
                 zero (a process that exits comes back no sooner than it left)",
            ]
        );
        assert!(problems(r#"K8sLeaderElection(on_lost: Rerun)"#).is_empty());
    }

    #[test]
    fn the_renew_deadline_must_exceed_the_jittered_retry_period() {
        // 1.2 x 2 s = 2.4 s: a renew deadline of exactly 2.4 s is refused, 1 ns more is not.
        assert_eq!(
            problems(r#"K8sLeaderElection(renew_deadline: "2400ms")"#),
            [
                "strategy.renew_deadline: must be greater than jitter_factor x retry_period = 1.2 \
                 x 2s, as client-go requires (got 2.4s)"
            ]
        );
        assert!(problems(r#"K8sLeaderElection(renew_deadline: "2400000001ns")"#).is_empty());
        // Jitter 0 asks only that the deadline exceed the period; a negative factor is refused.
        assert!(
            problems(r#"K8sLeaderElection(renew_deadline: "2001ms", jitter_factor: 0.0)"#)
                .is_empty()
        );
        assert_eq!(
            problems(r#"K8sLeaderElection(jitter_factor: -0.5)"#),
            ["strategy.jitter_factor: must be a number at least 0 (got -0.5)"]
        );
    }

    #[test]
    fn periods_below_the_floor_are_refused_with_the_limit_named() {
        let p = problems(
            r#"K8sLeaderElection(renew_deadline: "10s", retry_period: "1ns", http_timeout: "1ns", lease_duration: "1ns", on_lost: Exit(restart: "1ns"))"#,
        );
        for field in [
            "strategy.retry_period",
            "strategy.http_timeout",
            "strategy.lease_duration",
            "strategy.on_lost.restart",
        ] {
            assert!(
                p.iter()
                    .any(|m| m.starts_with(&format!("{field}: 1ns is below the limit"))),
                "{field}: {p:?}"
            );
        }
    }

    #[test]
    fn only_candidates_run_settings_of_their_own() {
        let k = settings("K8sLeaderElection()");
        assert_eq!(
            Settings::check_own(&k, &k, Role::Grantor),
            [
                "renew_deadline: the API server runs no elector: settings of its own are for \
              candidates"
            ]
        );
        assert!(Settings::check_own(&k, &k, Role::Contender).is_empty());
        // Candidate 2 runs a 5 s renew deadline of its own; the others the strategy's 10 s.
        let own = settings(r#"K8sLeaderElection(renew_deadline: "5s")"#);
        let p = Settings::build_nodes(&k, &[(2, own)]).expect("a protocol");
        assert_eq!(p.config.renew_deadline, LocalDur::from_secs(10));
        let [(2, c)] = p.own[..] else {
            panic!("one candidate with its own settings")
        };
        assert_eq!(c.renew_deadline, LocalDur::from_secs(5));
    }

    /// Three candidates, a try every 2 s of 5 events: 3 x 5 / 2 = 7.5 a second.
    #[test]
    fn every_candidate_s_tries_are_counted() {
        let s = scenario("K8sLeaderElection()");
        assert_eq!(
            Settings::events_per_second(&settings("K8sLeaderElection()"), &s),
            7.5
        );
    }

    /// T = 15 s gives client-go's own 10 s and 2 s; T = 10 s gives 10 / 3 x 2 = 6.666 s and
    /// 10 / 15 x 2 = 1.333 s, cut to whole milliseconds.
    #[test]
    fn the_lineup_scales_client_go_s_defaults_to_the_lease() {
        let s = scenario("K8sLeaderElection()");
        let (k, _) = &K8sLeaderElection::lineup(&s, LocalDur::ZERO, "")[0];
        assert_eq!(
            (k.renew_deadline, k.retry_period),
            (renew_deadline(), retry_period())
        );
        assert_eq!(*k, settings("K8sLeaderElection()"));
        let mut s = s;
        s.lease.duration = LocalDur::from_secs(10);
        let (k, _) = &K8sLeaderElection::lineup(&s, LocalDur::ZERO, "")[0];
        assert_eq!(
            (k.renew_deadline, k.retry_period),
            (LocalDur::from_ms(6_666), LocalDur::from_ms(1_333))
        );
    }
}
