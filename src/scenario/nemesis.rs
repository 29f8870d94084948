//! The `nemesis` envelope (SPEC 4): what `explore` may inject, per fault kind a largest size and
//! a rate. It is the environment a configuration claims to survive; kinds left out are never
//! injected. Named profiles (`pauses`, `clocks`, `network`, `crashes`, `all`) give envelopes
//! scaled to the scenario's lease term.

use super::KindName;
use crate::time::{Dur, LocalDur};
use serde::{Deserialize, Serialize};

/// Bounds per fault kind. Every field is optional; an empty envelope injects nothing.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Nemesis {
    /// GC pauses (clocks keep counting), at most `max` long.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pauses: Option<PerMinute>,
    /// VM freezes, at most `max` long, with the clock mode they are drawn with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub freezes: Option<Freezes>,
    /// Wall-clock steps of at most `max` either way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<Steps>,
    /// rho: every node's drift lies within [-rho/2, +rho/2], placed at random or adversarially.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift_ppm: Option<f64>,
    /// Drift changes to a new rate inside the `drift_ppm` bound (which they need).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift_changes: Option<PerHourRate>,
    /// One node cut off from the rest, for at most `max`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partitions: Option<PerHour>,
    /// Messages from one node to another dropped, for at most `max`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub one_way: Option<PerHour>,
    /// Messages sent in a window of at most `max` delayed by up to `max_extra`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_spikes: Option<DelaySpikes>,
    /// Messages of the given kinds (all when left out) sent in a window of at most `max` dropped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drops: Option<Drops>,
    /// Crashes, each followed by a restart at most `max_down` later.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crashes: Option<Crashes>,
}

/// At most `max` long, `per_minute` per node on average.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerMinute {
    pub max: Dur,
    pub per_minute: f64,
}

/// At most `max` long, `per_hour` on average (per node for node faults).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerHour {
    pub max: Dur,
    pub per_hour: f64,
}

/// `per_hour` per node on average.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerHourRate {
    pub per_hour: f64,
}

/// VM freezes: at most `max`, `per_minute` per node; `clock: Stall` freezes the guest's clocks
/// (SPEC 2.4), `CatchUp` (the default) lets them read on as if nothing happened.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Freezes {
    pub max: Dur,
    pub per_minute: f64,
    #[serde(default)]
    pub clock: super::FreezeClock,
}

/// Wall-clock steps of at most `max` either way, `per_hour` per node.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Steps {
    pub max: LocalDur,
    pub per_hour: f64,
}

/// Delay spikes: windows of at most `max`, extra delay of at most `max_extra`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DelaySpikes {
    pub max: Dur,
    pub max_extra: Dur,
    pub per_hour: f64,
}

/// Drops: windows of at most `max` in which messages of `kinds` (all when left out) are lost.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Drops {
    pub max: Dur,
    pub per_hour: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kinds: Option<Vec<KindName>>,
}

/// Crashes, `per_hour` per node, each restarted at most `max_down` later.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Crashes {
    pub per_hour: f64,
    pub max_down: Dur,
}

/// The named profiles of `explore --nemesis`.
pub const PROFILES: &[&str] = &["pauses", "clocks", "network", "crashes", "all"];

/// The named profile `name` for scenario `s`, scaled to its lease term; `None` for an unknown
/// name.
pub fn profile(name: &str, s: &super::Scenario) -> Option<Nemesis> {
    let t = s.lease.duration.ns();
    let two_t = Dur::from_ns(t.saturating_mul(2));
    match name {
        "pauses" => Some(Nemesis {
            pauses: Some(PerMinute {
                max: two_t,
                per_minute: 1.0,
            }),
            ..Nemesis::default()
        }),
        _ => None,
    }
}
