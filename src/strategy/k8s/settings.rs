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
    fn lease_fields(&self) -> LeaseFields {
        LeaseFields::TERM_ONLY
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
