//! The `nemesis` envelope: what `explore` may inject, per fault kind a largest size and
//! a rate. It is the environment a configuration claims to survive; kinds left out are never
//! injected. Named profiles (`pauses`, `clocks`, `network`, `crashes`, `all`) give envelopes
//! scaled to the scenario's lease term.

use super::limits::{self, count};
use super::protocols::StrategyChecks;
use super::{FreezeClock, KindName, Scenario, Thread};
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
    /// Stalls of one loop of a live process (its renewal loop unless said), at most `max` long.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_stalls: Option<ThreadStalls>,
    /// Stalls of the disk of a node that has one, at most `max` long, `per_minute` per such
    /// node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_stalls: Option<PerMinute>,
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

/// VM freezes: at most `max`, `per_minute` per node; `clock: Stall` freezes the guest's clocks,
/// `CatchUp` (the default) lets them read on as if nothing happened.
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

/// Crashes, `per_hour` per node, each restarted at most `max_down` later (default 30 s, as in
/// the short form `crashes: (per_hour: 2.0)`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Crashes {
    pub per_hour: f64,
    #[serde(default = "default_max_down")]
    pub max_down: Dur,
}

/// Stalls of `thread` (the renewal loop by default), at most `max` long, `per_minute` per node
/// that has such a loop (under the scenario's protocol).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThreadStalls {
    pub max: Dur,
    pub per_minute: f64,
    #[serde(default = "renewal")]
    pub thread: Thread,
}

fn renewal() -> Thread {
    Thread::Renewal
}

fn default_max_down() -> Dur {
    Dur::from_secs(30)
}

/// The kinds of an envelope by field name, in field order: kind `k` (from 1) of
/// `rng::Component::Explore`'s streams is `KINDS[k - 1]`.
pub const KINDS: [&str; 12] = [
    "pauses",
    "freezes",
    "steps",
    "drift_ppm",
    "drift_changes",
    "partitions",
    "one_way",
    "delay_spikes",
    "drops",
    "crashes",
    "thread_stalls",
    "disk_stalls",
];

/// How a kind's rate counts: per node, or once for the cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scope {
    PerNode,
    Cluster,
}

impl Nemesis {
    /// Which of [`KINDS`] the envelope has, in that order.
    pub fn present(&self) -> [bool; 12] {
        [
            self.pauses.is_some(),
            self.freezes.is_some(),
            self.steps.is_some(),
            self.drift_ppm.is_some(),
            self.drift_changes.is_some(),
            self.partitions.is_some(),
            self.one_way.is_some(),
            self.delay_spikes.is_some(),
            self.drops.is_some(),
            self.crashes.is_some(),
            self.thread_stalls.is_some(),
            self.disk_stalls.is_some(),
        ]
    }

    /// Every rate of the envelope: its field path, its value as written, per second, how it
    /// counts, and the faults each draw adds as the random-fault budget counts them (a crash
    /// and its restart two; a partition lists every node and counts once per node).
    fn rates(&self) -> Vec<(&'static str, f64, f64, Scope, f64)> {
        let mut v = Vec::new();
        let m = |r: f64| r / 60.0;
        let h = |r: f64| r / 3600.0;
        if let Some(p) = &self.pauses {
            v.push((
                "pauses.per_minute",
                p.per_minute,
                m(p.per_minute),
                Scope::PerNode,
                1.0,
            ));
        }
        if let Some(f) = &self.freezes {
            v.push((
                "freezes.per_minute",
                f.per_minute,
                m(f.per_minute),
                Scope::PerNode,
                1.0,
            ));
        }
        if let Some(st) = &self.steps {
            v.push((
                "steps.per_hour",
                st.per_hour,
                h(st.per_hour),
                Scope::PerNode,
                1.0,
            ));
        }
        if let Some(d) = &self.drift_changes {
            v.push((
                "drift_changes.per_hour",
                d.per_hour,
                h(d.per_hour),
                Scope::PerNode,
                1.0,
            ));
        }
        // A partition's cost is the node count, filled in by `expected_faults`.
        if let Some(p) = &self.partitions {
            v.push((
                "partitions.per_hour",
                p.per_hour,
                h(p.per_hour),
                Scope::Cluster,
                -1.0,
            ));
        }
        if let Some(o) = &self.one_way {
            v.push((
                "one_way.per_hour",
                o.per_hour,
                h(o.per_hour),
                Scope::Cluster,
                1.0,
            ));
        }
        if let Some(d) = &self.delay_spikes {
            v.push((
                "delay_spikes.per_hour",
                d.per_hour,
                h(d.per_hour),
                Scope::Cluster,
                1.0,
            ));
        }
        if let Some(d) = &self.drops {
            v.push((
                "drops.per_hour",
                d.per_hour,
                h(d.per_hour),
                Scope::Cluster,
                1.0,
            ));
        }
        if let Some(c) = &self.crashes {
            v.push((
                "crashes.per_hour",
                c.per_hour,
                h(c.per_hour),
                Scope::PerNode,
                2.0,
            ));
        }
        // Counted on every node, as if each had the loop: an estimate from above.
        if let Some(t) = &self.thread_stalls {
            v.push((
                "thread_stalls.per_minute",
                t.per_minute,
                m(t.per_minute),
                Scope::PerNode,
                1.0,
            ));
        }
        // Counted on every node, as if each had a disk.
        if let Some(d) = &self.disk_stalls {
            v.push((
                "disk_stalls.per_minute",
                d.per_minute,
                m(d.per_minute),
                Scope::PerNode,
                1.0,
            ));
        }
        v
    }

    /// The number of faults the envelope is expected to draw over a run of `s` at full rate,
    /// counted as `random_faults` are counted for its limit (rate x duration, times the nodes
    /// for node faults; a partition counts once per node, a crash and its restart two). Rates
    /// must be finite.
    pub fn expected_faults(&self, s: &Scenario) -> f64 {
        let secs = s.duration.ns().max(0) as f64 / 1e9;
        let nodes = s.nodes.len() as f64;
        self.rates()
            .iter()
            .map(|&(_, _, per_second, scope, cost)| {
                let cost = if cost < 0.0 { nodes } else { cost };
                let times = match scope {
                    Scope::PerNode => nodes,
                    Scope::Cluster => 1.0,
                };
                per_second * secs * times * cost
            })
            .sum()
    }

    /// The number of wall-clock steps the envelope is expected to draw over a run of `s`.
    pub fn expected_steps(&self, s: &Scenario) -> f64 {
        let hours = s.duration.ns().max(0) as f64 / 3.6e12;
        self.steps
            .as_ref()
            .map_or(0.0, |st| st.per_hour * hours * s.nodes.len() as f64)
    }

    /// Multiplies every rate by `f` (for the profiles, to fit the limits).
    fn scale_rates(&mut self, f: f64) {
        if let Some(p) = &mut self.pauses {
            p.per_minute *= f;
        }
        if let Some(p) = &mut self.freezes {
            p.per_minute *= f;
        }
        if let Some(p) = &mut self.steps {
            p.per_hour *= f;
        }
        if let Some(p) = &mut self.drift_changes {
            p.per_hour *= f;
        }
        for p in [&mut self.partitions, &mut self.one_way]
            .into_iter()
            .flatten()
        {
            p.per_hour *= f;
        }
        if let Some(p) = &mut self.delay_spikes {
            p.per_hour *= f;
        }
        if let Some(p) = &mut self.drops {
            p.per_hour *= f;
        }
        if let Some(p) = &mut self.crashes {
            p.per_hour *= f;
        }
        if let Some(p) = &mut self.thread_stalls {
            p.per_minute *= f;
        }
        if let Some(p) = &mut self.disk_stalls {
            p.per_minute *= f;
        }
    }
}

/// The most faults a run of `explore` may be expected to list: its scenario's fixed faults,
/// those its `random_faults` are expected to draw and those the envelope is. A drawn run lists
/// them all as fixed faults, of which a scenario may have [`limits::MAX_FAULTS`]; drawing stops
/// there whatever the draws, and this half of it keeps the stop from biting in practice (as
/// [`limits::MAX_RANDOM_FAULTS`] is half of [`limits::RANDOM_FAULTS_HARD_STOP`]).
pub const MAX_EXPECTED_FAULTS: f64 = limits::MAX_FAULTS as f64 / 2.0;

/// The most wall-clock steps a run of `explore` may be expected to have (fixed, drawn by
/// `random_faults` and by the envelope): half of [`limits::MAX_CLOCK_STEPS`], where a drawn
/// run's steps, all fixed, stop.
pub const MAX_EXPECTED_STEPS: f64 = limits::MAX_CLOCK_STEPS / 2.0;

/// Every problem of the envelope `n` of scenario `s` (whose own problems are reported apart),
/// each as `nemesis.<field>.<sub>: what is wrong (got X)`: lengths positive and within the
/// limits (a pause, a cut, a window, a crash at most `limits::MAX_DURATION_NS`; a step at most
/// `limits::MAX_CLOCK_STEP_NS`), rates finite, >= 0 and at most
/// `limits::MAX_FAULT_RATE_PER_SECOND`, `drift_ppm` in [0, `limits::MAX_DRIFT_SPREAD_PPM`],
/// `drift_changes` only with `drift_ppm`, `drops.kinds` kinds of `strategy` (unchecked without
/// one), and the totals a drawn run must stay within: faults ([`MAX_EXPECTED_FAULTS`]), clock
/// steps ([`MAX_EXPECTED_STEPS`]), requests waiting in the longest pause, writes in flight
/// through the largest delay spike, events.
pub fn check(n: &Nemesis, s: &Scenario, strategy: Option<&dyn StrategyChecks>) -> Vec<String> {
    let mut p = Vec::new();
    let see = "(see docs/src/limits.md)";
    let span = |p: &mut Vec<String>, at: &str, ns: i64, limit: i64| {
        if ns <= 0 {
            p.push(format!(
                "nemesis.{at}: must be positive (got {})",
                Dur::from_ns(ns)
            ));
        } else if ns > limit {
            p.push(format!(
                "nemesis.{at}: {} is above the limit of {} {see}",
                limits::dur(ns),
                limits::dur(limit)
            ));
        }
    };
    let dur_limit = limits::MAX_DURATION_NS;
    if let Some(x) = &n.pauses {
        span(&mut p, "pauses.max", x.max.ns(), dur_limit);
    }
    if let Some(x) = &n.freezes {
        span(&mut p, "freezes.max", x.max.ns(), dur_limit);
    }
    if let Some(x) = &n.steps {
        span(&mut p, "steps.max", x.max.ns(), limits::MAX_CLOCK_STEP_NS);
    }
    if let Some(rho) = n.drift_ppm {
        if !(rho.is_finite() && (0.0..=limits::MAX_DRIFT_SPREAD_PPM).contains(&rho)) {
            p.push(format!(
                "nemesis.drift_ppm: {rho} is outside [0, {}], the limit {see}",
                limits::MAX_DRIFT_SPREAD_PPM
            ));
        }
    }
    if n.drift_changes.is_some() && n.drift_ppm.is_none() {
        p.push(
            "nemesis.drift_changes: needs drift_ppm, the bound its new rates are drawn within \
             (got no drift_ppm)"
                .to_string(),
        );
    }
    if let Some(x) = &n.partitions {
        span(&mut p, "partitions.max", x.max.ns(), dur_limit);
    }
    if let Some(x) = &n.one_way {
        span(&mut p, "one_way.max", x.max.ns(), dur_limit);
    }
    if let Some(x) = &n.delay_spikes {
        span(&mut p, "delay_spikes.max", x.max.ns(), dur_limit);
        span(
            &mut p,
            "delay_spikes.max_extra",
            x.max_extra.ns(),
            dur_limit,
        );
    }
    if let Some(x) = &n.drops {
        span(&mut p, "drops.max", x.max.ns(), dur_limit);
        if let Some(strategy) = strategy {
            let kinds = strategy.kinds();
            for KindName(kind) in x.kinds.iter().flatten() {
                if !kinds.contains(&kind.as_str()) {
                    p.push(format!(
                        "nemesis.drops.kinds: {} has no message kind {kind:?} (its kinds: {})",
                        strategy.describe(),
                        kinds.join(", ")
                    ));
                }
            }
        }
    }
    if let Some(x) = &n.crashes {
        span(&mut p, "crashes.max_down", x.max_down.ns(), dur_limit);
    }
    if let Some(x) = &n.thread_stalls {
        span(&mut p, "thread_stalls.max", x.max.ns(), dur_limit);
        if let (Thread::Renewal, Some(strategy)) = (x.thread, strategy) {
            renewal_loops(strategy, s, &mut p);
        }
    }
    if let Some(x) = &n.disk_stalls {
        span(&mut p, "disk_stalls.max", x.max.ns(), dur_limit);
        if s.nodes.iter().all(|node| node.disk.is_none()) {
            p.push(
                "nemesis.disk_stalls: no node of the scenario has a disk (give one a \
                 `disk: (fsync: ...)`)"
                    .to_string(),
            );
        }
    }
    let mut rates_ok = true;
    for (at, r, per_second, _, _) in n.rates() {
        if !(r.is_finite() && r >= 0.0) {
            p.push(format!(
                "nemesis.{at}: must be a finite rate >= 0 (got {r})"
            ));
            rates_ok = false;
        } else if per_second > limits::MAX_FAULT_RATE_PER_SECOND {
            p.push(format!(
                "nemesis.{at}: {} per second, above the limit of {} per second (a mean gap of {}) {see}",
                count(per_second),
                count(limits::MAX_FAULT_RATE_PER_SECOND),
                Dur::from_ns(limits::MIN_INTERVAL_NS)
            ));
        }
    }
    if rates_ok && super::validate::rates_ok(s) && s.duration.ns() > 0 {
        budgets(n, s, strategy, &mut p);
    }
    p
}

/// The totals of [`check`]: what a drawn run of `s` adds up to, the protocol's own timers and
/// messages included.
fn budgets(n: &Nemesis, s: &Scenario, strategy: Option<&dyn StrategyChecks>, p: &mut Vec<String>) {
    let see = "(see docs/src/limits.md)";
    let drawn = n.expected_faults(s);
    let fixed = s.faults.len() as f64;
    let random = limits::expected_random_faults(s)
        .iter()
        .fold(0.0, |a, e| a + e);
    if fixed + random + drawn > MAX_EXPECTED_FAULTS {
        p.push(format!(
            "nemesis: the envelope is expected to draw {} faults over {} (rate x duration, x nodes \
             for node faults; a partition counts once per node, a crash and its restart two), \
             with the scenario's {} fixed faults and {} from random_faults {} in all, above the \
             limit of {}: a run lists them all as fixed faults, at most {} {see}",
            count(drawn),
            s.duration,
            count(fixed),
            count(random),
            count(fixed + random + drawn),
            count(MAX_EXPECTED_FAULTS),
            count(limits::MAX_FAULTS as f64)
        ));
    }
    let fixed_steps = s
        .faults
        .iter()
        .filter(|f| matches!(f, super::Fault::ClockStep { .. }))
        .count() as f64;
    // A fold from 0.0: an empty f64 sum is -0.
    let random_steps = s
        .random_faults
        .iter()
        .zip(limits::expected_random_faults(s))
        .filter(|(g, _)| matches!(g, super::RandomFault::ClockSteps { .. }))
        .fold(0.0, |a, (_, e)| a + e);
    let steps = n.expected_steps(s);
    if fixed_steps + random_steps + steps > MAX_EXPECTED_STEPS {
        p.push(format!(
            "nemesis.steps.per_hour: {} clock steps expected ({} fixed, {} from random_faults, {} \
             from the envelope), above the limit of {}: a run lists them all as fixed steps, at \
             most {} {see}",
            count(fixed_steps + random_steps + steps),
            count(fixed_steps),
            count(random_steps),
            count(steps),
            count(MAX_EXPECTED_STEPS),
            count(limits::MAX_CLOCK_STEPS)
        ));
    }
    let w = &s.workload;
    let per_second = w.requests_per_second();
    // A stall of the worker keeps requests waiting as a pause does.
    let worker_stalls = n
        .thread_stalls
        .as_ref()
        .filter(|x| x.thread == Thread::Worker);
    for (at, what, max) in [
        ("pauses.max", "pause", n.pauses.as_ref().map(|x| x.max)),
        ("freezes.max", "pause", n.freezes.as_ref().map(|x| x.max)),
        ("thread_stalls.max", "stall", worker_stalls.map(|x| x.max)),
        // A disk stall holds the worker of a node that must write.
        (
            "disk_stalls.max",
            "stall",
            n.disk_stalls.as_ref().map(|x| x.max),
        ),
    ] {
        let Some(max) = max else { continue };
        // Drawn pauses never overlap another pause of their node (nor stalls another stall of
        // their loop), so none is longer than this.
        let wait = max
            .ns()
            .clamp(0, s.duration.ns())
            .saturating_add(w.service_time.ns().max(0));
        let pending = per_second * wait as f64 / 1e9;
        if pending > limits::MAX_PENDING_REQUESTS {
            p.push(format!(
                "nemesis.{at}: {per_second} requests/s x (a {what} of {max} plus service_time {}) \
                 = {} requests waiting at one contender, above the limit of {} {see}",
                w.service_time,
                count(pending),
                count(limits::MAX_PENDING_REQUESTS)
            ));
        }
    }
    if let Some(spikes) = &n.delay_spikes {
        if w.writes_per_second > 0.0 {
            let delay = super::validate::longest_delay_ns(s)
                .saturating_add(spikes.max_extra.ns().max(0))
                .min(s.duration.ns());
            let in_flight = w.writes_per_second * delay as f64 / 1e9;
            if in_flight > limits::MAX_PENDING_REQUESTS {
                p.push(format!(
                    "nemesis.delay_spikes.max_extra: {} writes/s x a delay of up to {} \
                     (network.delay and a spike of {}) = {} writes in flight from one \
                     contender, above the limit of {} {see}",
                    w.writes_per_second,
                    Dur::from_ns(delay),
                    spikes.max_extra,
                    count(in_flight),
                    count(limits::MAX_PENDING_REQUESTS)
                ));
            }
        }
    }
    let events = limits::estimated_events(s) + limits::protocol_events(s, strategy) + 2.0 * drawn;
    if events > limits::MAX_EVENTS as f64 {
        p.push(format!(
            "nemesis: a run of {} with the envelope's faults needs about {} events, above the \
             limit of {} {see}",
            limits::dur(s.duration.ns()),
            count(events),
            count(limits::MAX_EVENTS as f64)
        ));
    }
}

/// Stalls of the renewal loop need a node that has one under `strategy`.
fn renewal_loops(strategy: &dyn StrategyChecks, s: &Scenario, p: &mut Vec<String>) {
    if s.nodes
        .iter()
        .any(|n| strategy.renewal_loop(n.role).is_some())
    {
        return;
    }
    let with: Vec<String> = super::Role::ALL
        .into_iter()
        .filter_map(|r| strategy.renewal_loop(r).map(|l| format!("a {r:?} ({l})")))
        .collect();
    p.push(format!(
        "nemesis.thread_stalls.thread: under {}, no node of the scenario has a renewal loop \
         apart from its work ({}); stall the Worker loop instead",
        strategy.describe(),
        if with.is_empty() {
            "no role has one".to_string()
        } else {
            format!("only {} would", with.join(" or "))
        }
    ));
}

/// The named envelopes of `explore --nemesis NAME`.
pub const PROFILES: &[&str] = &["pauses", "clocks", "network", "crashes", "threads", "all"];

/// The named envelope `name` (one of [`PROFILES`]) for scenario `s`, or `None` for an unknown
/// name. With T the lease term (`lease.duration`) and rates per node for node faults (pauses,
/// freezes, steps, drift changes, crashes) and per cluster for the others:
///
/// - `pauses`: GC pauses up to 2T at 1 per minute, VM freezes (`CatchUp`) up to 2T at 0.2 per
///   minute (12 per hour).
/// - `clocks`: drifts within rho = 200 ppm (every node within +-100 ppm), drift changes at 2
///   per hour, wall-clock steps up to T/2 either way at 4 per hour.
/// - `network`: partitions (one node cut off) up to 2T at 6 per hour, one-way cuts up to 2T at
///   6 per hour, delay spikes of windows up to T adding up to T at 6 per hour, drops of every
///   message kind in windows up to T at 6 per hour.
/// - `crashes`: crashes at 2 per hour, each restarted up to 2T later.
/// - `threads`: stalls of the renewal loop up to 2T at 1 per minute, on every node that has
///   one under the scenario's protocol (one without any is refused by [`check`]).
/// - `all`: all of the above but `threads`, so that it fits every protocol (a renewal loop
///   apart from the work is a trait of some clients only).
///
/// Scaled to the run's length D too: every rate is at least one expected fault over the run
/// (per node for node faults), i.e. max(rate, 1/D), so that a short run sees each kind. Then
/// fitted to the limits, as [`check`] checks them: lengths at most 1000 h (steps 100 h) and at
/// least 1 ns; every rate scaled down together (by the same factor) when the run's expected
/// faults or clock steps would exceed [`MAX_EXPECTED_FAULTS`] or [`MAX_EXPECTED_STEPS`]; pauses
/// and freezes shortened when the workload's requests waiting in one would exceed
/// `limits::MAX_PENDING_REQUESTS`, and delay spikes' extra likewise for writes in flight.
pub fn profile(name: &str, s: &Scenario) -> Option<Nemesis> {
    let (pauses, clocks, network, crashes) = match name {
        "pauses" => (true, false, false, false),
        "clocks" => (false, true, false, false),
        "network" => (false, false, true, false),
        "crashes" | "threads" => (false, false, false, name == "crashes"),
        "all" => (true, true, true, true),
        _ => return None,
    };
    let t = s.lease.duration.ns().max(1);
    let w = &s.workload;
    // A pause longer than this would keep more requests waiting than the limit allows.
    let per_second = w.requests_per_second();
    let pause_cap = if per_second > 0.0 {
        ((limits::MAX_PENDING_REQUESTS / per_second * 1e9) as i64)
            .saturating_sub(w.service_time.ns().max(0))
    } else {
        i64::MAX
    };
    let length = |ns: i64, limit: i64| Dur::from_ns(ns.min(limit).max(1));
    let two_t = length(t.saturating_mul(2), limits::MAX_DURATION_NS);
    let pause = length(two_t.ns(), pause_cap);
    let one_t = length(t, limits::MAX_DURATION_NS);
    let extra_cap = if w.writes_per_second > 0.0 {
        ((limits::MAX_PENDING_REQUESTS / w.writes_per_second * 1e9) as i64)
            .saturating_sub(super::validate::longest_delay_ns(s))
    } else {
        i64::MAX
    };
    let hours = s.duration.ns().max(1) as f64 / 3.6e12;
    // At least one expected over the run.
    let per_hour = |nominal: f64| nominal.max(1.0 / hours);
    let mut n = Nemesis::default();
    if pauses {
        n.pauses = Some(PerMinute {
            max: pause,
            per_minute: per_hour(60.0) / 60.0,
        });
        n.freezes = Some(Freezes {
            max: pause,
            per_minute: per_hour(12.0) / 60.0,
            clock: FreezeClock::CatchUp,
        });
    }
    if clocks {
        n.drift_ppm = Some(200.0);
        n.drift_changes = Some(PerHourRate {
            per_hour: per_hour(2.0),
        });
        n.steps = Some(Steps {
            max: LocalDur::from_ns((t / 2).clamp(1, limits::MAX_CLOCK_STEP_NS)),
            per_hour: per_hour(4.0),
        });
    }
    if network {
        let cut = PerHour {
            max: two_t,
            per_hour: per_hour(6.0),
        };
        n.partitions = Some(cut.clone());
        n.one_way = Some(cut);
        n.delay_spikes = Some(DelaySpikes {
            max: one_t,
            max_extra: length(t, extra_cap),
            per_hour: per_hour(6.0),
        });
        n.drops = Some(Drops {
            max: one_t,
            per_hour: per_hour(6.0),
            kinds: None,
        });
    }
    if crashes {
        n.crashes = Some(Crashes {
            per_hour: per_hour(2.0),
            max_down: two_t,
        });
    }
    if name == "threads" {
        n.thread_stalls = Some(ThreadStalls {
            max: two_t,
            per_minute: per_hour(60.0) / 60.0,
            thread: Thread::Renewal,
        });
    }
    // Fit the totals, with a hundredth to spare for rounding.
    if super::validate::rates_ok(s) {
        let fixed = s.faults.len() as f64;
        let random: f64 = limits::expected_random_faults(s).iter().sum();
        let room = (MAX_EXPECTED_FAULTS - fixed - random).max(0.0);
        let drawn = n.expected_faults(s);
        if drawn > room {
            n.scale_rates(0.99 * room / drawn);
        }
        let steps = n.expected_steps(s);
        let step_room = MAX_EXPECTED_STEPS
            - s.faults
                .iter()
                .filter(|f| matches!(f, super::Fault::ClockStep { .. }))
                .count() as f64
            - s.random_faults
                .iter()
                .zip(limits::expected_random_faults(s))
                .filter(|(g, _)| matches!(g, super::RandomFault::ClockSteps { .. }))
                .map(|(_, e)| e)
                .sum::<f64>();
        if steps > step_room.max(0.0) {
            if let Some(st) = &mut n.steps {
                st.per_hour *= 0.99 * step_room.max(0.0) / steps;
            }
        }
    }
    Some(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::validate::validate;

    /// Three nodes (`lock`, `a`, `b`), T = 10 s, a run of `duration`, with `extra` fields.
    fn scenario(duration: &str, extra: &str) -> Scenario {
        let text = format!(
            r#"Scenario(
                duration: "{duration}",
                lease: (duration: "10s"),
                strategy: TwoSided(holder_margin: "100ms"),
                nodes: [
                    (name: "lock", role: Grantor),
                    (name: "a", role: Contender),
                    (name: "b", role: Contender),
                ],
                {extra}
            )"#
        );
        Scenario::from_ron(&text).unwrap_or_else(|e| panic!("{e}"))
    }

    fn problems(nemesis: &str) -> Vec<String> {
        validate(&scenario("1h", &format!("nemesis: {nemesis},")))
    }

    /// The envelope's documented example reads, with a crash's downtime at its default.
    #[test]
    fn the_spec_example_reads_and_is_valid() {
        let spec = r#"(pauses: (max: "2s", per_minute: 1.0), steps: (max: "100ms", per_hour:
            4.0), drift_ppm: 200.0, partitions: (max: "10s", per_hour: 6.0), crashes: (per_hour: 2.0))"#;
        assert_eq!(problems(spec), Vec::<String>::new());
        let s = scenario("1h", &format!("nemesis: {spec},"));
        let crashes = s.nemesis.unwrap().crashes.unwrap();
        assert_eq!(crashes.max_down, Dur::from_secs(30));
    }

    #[test]
    fn a_valid_envelope_has_no_problem() {
        let p = problems(
            r#"(
                pauses: (max: "20s", per_minute: 1.0),
                freezes: (max: "20s", per_minute: 0.2, clock: Stall),
                steps: (max: "5s", per_hour: 4.0),
                drift_ppm: 200.0,
                drift_changes: (per_hour: 2.0),
                partitions: (max: "20s", per_hour: 6.0),
                one_way: (max: "20s", per_hour: 6.0),
                delay_spikes: (max: "10s", max_extra: "10s", per_hour: 6.0),
                drops: (max: "10s", per_hour: 6.0, kinds: [Renew, RenewAck]),
                crashes: (per_hour: 2.0, max_down: "20s"),
            )"#,
        );
        assert_eq!(p, Vec::<String>::new());
    }

    #[test]
    fn every_problem_is_listed() {
        let p = problems(
            r#"(
                pauses: (max: "0s", per_minute: -1.0),
                freezes: (max: "1001h", per_minute: NaN),
                steps: (max: "101h", per_hour: 1.0),
                drift_changes: (per_hour: 2.0),
                partitions: (max: "-1s", per_hour: 1.0),
                one_way: (max: "1s", per_hour: 1e12),
                delay_spikes: (max: "1s", max_extra: "0s", per_hour: 1.0),
                drops: (max: "1s", per_hour: 1.0, kinds: [Renew, Bogus]),
                crashes: (per_hour: 1.0, max_down: "0s"),
            )"#,
        );
        let want = [
            "nemesis.pauses.max: must be positive (got 0s)",
            "nemesis.freezes.max: 3603600s (1001h) is above the limit of 3600000s (1000h) (see docs/src/limits.md)",
            "nemesis.steps.max: 363600s (101h) is above the limit of 360000s (100h) (see docs/src/limits.md)",
            "nemesis.drift_changes: needs drift_ppm, the bound its new rates are drawn within (got no drift_ppm)",
            "nemesis.partitions.max: must be positive (got -1s)",
            "nemesis.delay_spikes.max_extra: must be positive (got 0s)",
            "nemesis.drops.kinds: TwoSided(holder_margin: \"100ms\") has no message kind \"Bogus\" (its kinds: Acquire, Grant, Renew, RenewAck, Reject, Write, WriteAck)",
            "nemesis.crashes.max_down: must be positive (got 0s)",
            "nemesis.pauses.per_minute: must be a finite rate >= 0 (got -1)",
            "nemesis.freezes.per_minute: must be a finite rate >= 0 (got NaN)",
            // 1e12 per hour / 3600 = 2.778e8 per second, above 1e6.
            "nemesis.one_way.per_hour: 2.778e8 per second, above the limit of 1.000e6 per second",
        ];
        for w in want {
            assert!(
                p.iter().any(|x| x.starts_with(w)),
                "{w}\nnot in:\n{}",
                p.join("\n")
            );
        }
        assert_eq!(p.len(), want.len(), "{}", p.join("\n"));
    }

    #[test]
    fn drift_outside_the_spread_limit() {
        for (rho, bad) in [
            ("1000000.0", false),
            ("1000000.5", true),
            ("-1.0", true),
            ("inf", true),
        ] {
            let p = problems(&format!("(drift_ppm: {rho})"));
            assert_eq!(!p.is_empty(), bad, "{rho}: {p:?}");
            if bad {
                assert!(p[0].starts_with("nemesis.drift_ppm: "), "{p:?}");
                assert!(p[0].contains("outside [0, 1000000]"), "{p:?}");
            }
        }
    }

    #[test]
    fn drop_kinds_unchecked_without_a_protocol() {
        let s = scenario(
            "1h",
            "nemesis: (drops: (max: \"1s\", per_hour: 1.0, kinds: [Bogus])),",
        );
        let p = check(s.nemesis.as_ref().unwrap(), &s, None);
        assert_eq!(p, Vec::<String>::new());
    }

    #[test]
    fn totals_are_bounded() {
        // 1000 pauses per minute x 60 min x 3 nodes = 180,000 expected, above 50,000.
        let p = problems(r#"(pauses: (max: "1ms", per_minute: 1000.0))"#);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            p[0].starts_with("nemesis: the envelope is expected to draw 180000 faults over 3600s"),
            "{p:?}"
        );
        // A partition counts once per node: 20,000 per hour x 1 h x 3 nodes = 60,000.
        let p = problems(r#"(partitions: (max: "1ms", per_hour: 20000.0))"#);
        assert!(p[0].contains("draw 60000 faults"), "{p:?}");
        // 1,000 steps per hour x 3 nodes = 3,000 clock steps, above 2,500.
        let p = problems(r#"(steps: (max: "1ms", per_hour: 1000.0))"#);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            p[0].starts_with("nemesis.steps.per_hour: 3000 clock steps expected (0 fixed, 0 from random_faults, 3000 from the envelope), above the limit of 2500"),
            "{p:?}"
        );
        // With the scenario's own: 40,000 random pauses (1000/min x 60 min / 1.5 nodes ...): a
        // generator at 200 per minute on all 3 nodes expects 200 x 60 x 3 = 36,000, plus the
        // envelope's 100 x 60 x 3 = 18,000: 54,000 in all.
        let s = scenario(
            "1h",
            r#"random_faults: [Pauses(per_minute: 200.0, duration: Fixed("1ms"))],
               nemesis: (pauses: (max: "1ms", per_minute: 100.0)),"#,
        );
        let p = validate(&s);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            p[0].contains(
                "with the scenario's 0 fixed faults and 36000 from random_faults 54000 in all"
            ),
            "{p:?}"
        );
    }

    #[test]
    fn waiting_requests_and_writes_in_flight_are_bounded() {
        // 100,000 reads/s x a 20 s pause = 2,000,000 waiting, above 1,000,000.
        let s = scenario(
            "1h",
            r#"workload: (reads_per_second: 100000.0),
               nemesis: (pauses: (max: "20s", per_minute: 1.0), freezes: (max: "5s", per_minute: 1.0)),"#,
        );
        let p = validate(&s);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].starts_with("nemesis.pauses.max: 100000 requests/s x (a pause of 20s plus service_time 0s) = 2.000e6 requests waiting"), "{p:?}");
        // 100,000 writes/s x (1 ms + 10 s) = 1,000,100 in flight, above 1,000,000 (the pending
        // count too: 100,000 x 20 s).
        let s = scenario(
            "1h",
            r#"workload: (writes_per_second: 100000.0),
               nemesis: (delay_spikes: (max: "1s", max_extra: "10s", per_hour: 1.0)),"#,
        );
        let p = validate(&s);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            p[0].starts_with(
                "nemesis.delay_spikes.max_extra: 100000 writes/s x a delay of up to 10.001s"
            ),
            "{p:?}"
        );
    }

    #[test]
    fn profiles_scale_to_the_lease_term_and_the_run() {
        assert_eq!(profile("nope", &scenario("1h", "")), None);
        // T = 10 s, a run of 1 h: every nominal rate is at least one per run (1/h).
        let s = scenario("1h", "");
        let all = profile("all", &s).unwrap();
        let secs = Dur::from_secs;
        assert_eq!(
            all.pauses,
            Some(PerMinute {
                max: secs(20),
                per_minute: 1.0
            })
        );
        let f = all.freezes.as_ref().unwrap();
        assert_eq!(
            (f.max, f.per_minute, f.clock),
            (secs(20), 0.2, FreezeClock::CatchUp)
        );
        assert_eq!(all.drift_ppm, Some(200.0));
        assert_eq!(all.drift_changes, Some(PerHourRate { per_hour: 2.0 }));
        let st = all.steps.as_ref().unwrap();
        assert_eq!((st.max, st.per_hour), (LocalDur::from_secs(5), 4.0));
        let cut = Some(PerHour {
            max: secs(20),
            per_hour: 6.0,
        });
        assert_eq!((&all.partitions, &all.one_way), (&cut, &cut));
        let d = all.delay_spikes.as_ref().unwrap();
        assert_eq!((d.max, d.max_extra, d.per_hour), (secs(10), secs(10), 6.0));
        let dr = all.drops.as_ref().unwrap();
        assert_eq!((dr.max, dr.per_hour, &dr.kinds), (secs(10), 6.0, &None));
        let c = all.crashes.as_ref().unwrap();
        assert_eq!((c.per_hour, c.max_down), (2.0, secs(20)));
        // Each profile is its part of `all`.
        let p = profile("pauses", &s).unwrap();
        assert_eq!(
            (p.pauses, p.freezes, p.steps),
            (all.pauses.clone(), all.freezes.clone(), None)
        );
        assert_eq!(profile("clocks", &s).unwrap().drift_ppm, Some(200.0));
        assert!(profile("network", &s).unwrap().crashes.is_none());
        assert_eq!(
            profile("crashes", &s)
                .unwrap()
                .present()
                .iter()
                .filter(|&&x| x)
                .count(),
            1
        );
        // Renewal-loop stalls up to 2T at 1 a minute, alone; `all` leaves them out.
        let threads = profile("threads", &s).unwrap();
        assert_eq!(
            threads.thread_stalls,
            Some(ThreadStalls {
                max: secs(20),
                per_minute: 1.0,
                thread: Thread::Renewal
            })
        );
        assert_eq!(threads.present().iter().filter(|&&x| x).count(), 1);
        assert_eq!(all.thread_stalls, None);
        // A run of 1 min: at least 60 per hour, so crashes at 60/h, pauses still 1/min.
        let short = profile("all", &scenario("1min", "")).unwrap();
        assert_eq!(short.crashes.as_ref().unwrap().per_hour, 60.0);
        assert_eq!(short.pauses.as_ref().unwrap().per_minute, 1.0);
        assert_eq!(short.freezes.as_ref().unwrap().per_minute, 1.0);
        for name in PROFILES {
            for s in [&s, &scenario("1min", "")] {
                let mut s = s.clone();
                s.nemesis = profile(name, &s);
                assert_eq!(validate(&s), Vec::<String>::new(), "{name}");
            }
        }
    }

    #[test]
    fn profiles_fit_the_limits() {
        // 1000 h, T = 10 s: pauses at 1/min on 3 nodes alone expect 180,000 faults; the rates
        // are scaled down to fit 50,000 in all, the steps to fit 2,500.
        let mut s = scenario("1000h", "");
        let all = profile("all", &s).unwrap();
        assert!(all.expected_faults(&s) <= MAX_EXPECTED_FAULTS);
        assert!(all.expected_faults(&s) > 0.9 * MAX_EXPECTED_FAULTS);
        s.nemesis = Some(all);
        assert_eq!(validate(&s), Vec::<String>::new());
        // 100,000 reads/s: a pause of at most 1,000,000 / 100,000 = 10 s, not 2T.
        let mut s = scenario(
            "1h",
            r#"workload: (reads_per_second: 50000.0, writes_per_second: 50000.0),"#,
        );
        let p = profile("all", &s).unwrap();
        assert_eq!(p.pauses.as_ref().unwrap().max, Dur::from_secs(10));
        // Writes: 1,000,000 / 50,000 = 20 s of delay, less the 1 ms network delay.
        assert_eq!(
            p.delay_spikes.as_ref().unwrap().max_extra,
            Dur::from_secs(10)
        );
        s.nemesis = Some(p);
        assert_eq!(validate(&s), Vec::<String>::new());
    }

    /// 1000 h, T = 10 s: renewal stalls at 1/min on 3 nodes expect 180,000 faults (counted
    /// on every node), scaled down with the others' rates to fit 50,000 (with a hundredth to
    /// spare): 1/min x 0.99 x 50,000 / 180,000 = 0.275 a minute.
    #[test]
    fn the_threads_profile_fits_the_limits() {
        let mut s = scenario("1000h", "");
        let threads = profile("threads", &s).unwrap();
        let rate = threads.thread_stalls.as_ref().unwrap().per_minute;
        assert!((rate - 0.275).abs() < 1e-9, "{rate}");
        s.nemesis = Some(threads);
        assert_eq!(validate(&s), Vec::<String>::new());
    }

    /// A stall of the worker keeps requests waiting as a pause does; one of the renewal loop
    /// does not. At 100,000 requests/s a stall of up to 20 s keeps 2,000,000 waiting (plus
    /// the 1 ms of service: 2,000,100, printed 2.000e6), above the limit of 1,000,000.
    #[test]
    fn worker_stalls_count_the_requests_they_keep_waiting() {
        let mut s = scenario(
            "1h",
            r#"workload: (reads_per_second: 100000.0, service_time: "1ms"),"#,
        );
        let stalls = |thread: &str| {
            crate::scenario::ron_options()
                .from_str::<Nemesis>(&format!(
                    r#"(thread_stalls: (max: "20s", per_minute: 1.0, thread: {thread}))"#
                ))
                .unwrap()
        };
        s.nemesis = Some(stalls("Renewal"));
        assert_eq!(validate(&s), Vec::<String>::new());
        s.nemesis = Some(stalls("Worker"));
        let p = validate(&s);
        assert!(
            p.len() == 1
                && p[0]
                    .starts_with("nemesis.thread_stalls.max: 100000 requests/s x (a stall of 20s")
                && p[0].contains("= 2.000e6 requests waiting at one contender"),
            "{p:?}"
        );
    }
}
