//! The scenario schema as serde types, and parsing from RON text.
//!
//! Every field documents its unit and default. Unknown fields are rejected everywhere, enum
//! struct variants included. Optional fields are written bare in RON (`drift_ppm: -50.0`).
//! This module only describes and parses; checking that a scenario makes sense lives in
//! [`validate`], and turning it into a runnable world lives in the engine.

pub mod duration;
pub mod library;
pub mod limits;
pub mod load;
pub mod moment;
pub mod names;
pub mod nemesis;
pub mod protocols;
pub mod random_faults;
pub(crate) mod spec_serde;
pub mod validate;

pub use crate::dist::DurationDist;
use crate::time::{Dur, LocalDur};
pub use moment::{AfterMoment, At, Moment};
pub use protocols::{Builtin, LeaseFields, Protocols, StrategyChecks, StrategyError};
use serde::{Deserialize, Serialize};

/// One scenario: nodes, clocks, network, workload, faults, a strategy and what to expect.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// What the scenario shows, in a sentence or two.
    #[serde(default)]
    pub description: String,
    /// Seed of every random stream. Default 0.
    #[serde(default)]
    pub seed: u64,
    /// Simulated true time to run.
    pub duration: Dur,
    pub lease: LeaseConfig,
    pub strategy: StrategySpec,
    #[serde(default)]
    pub clocks: ClocksConfig,
    pub nodes: Vec<NodeConfig>,
    #[serde(default)]
    pub network: NetworkConfig,
    #[serde(default)]
    pub workload: WorkloadConfig,
    #[serde(default)]
    pub resource: ResourceConfig,
    /// Faults at fixed true times.
    #[serde(default)]
    pub faults: Vec<Fault>,
    /// Fault generators drawing from the seed's fault stream.
    #[serde(default)]
    pub random_faults: Vec<RandomFault>,
    /// What `explore` may inject: ignored by every other command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nemesis: Option<nemesis::Nemesis>,
    /// Expected outcome, checked after the run.
    #[serde(default)]
    pub expect: Option<Expect>,
    /// Bounds on the run.
    #[serde(default)]
    pub limits: Limits,
}

/// The lease's timing parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeaseConfig {
    /// T, the lease term, as every node's clock measures it.
    pub duration: LocalDur,
    /// Renewal period of a holder, on its monotonic clock. Default T/3.
    #[serde(default)]
    pub renew_every: Option<LocalDur>,
    /// Period of `Acquire` retries of a contender holding nothing, on its monotonic clock.
    /// Default 1 s.
    #[serde(default = "default_retry")]
    pub retry_every: LocalDur,
    /// What a restarted grantor does before granting again. Default `Wait` (T + grantor margin).
    #[serde(default)]
    pub grantor_restart: GrantorRestart,
    /// The node that leads first, for a protocol that elects its holder (Raft): it campaigns as
    /// it first starts, instead of waiting out an election timeout, and adversarial drift
    /// placement slows it. Default: none (the first election timer to run out wins).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_leader: Option<String>,
}

fn default_retry() -> LocalDur {
    LocalDur::from_secs(1)
}

impl LeaseConfig {
    pub fn renew_every(&self) -> LocalDur {
        self.renew_every
            .unwrap_or(LocalDur::from_ns(self.duration.ns() / 3))
    }
}

/// What a grantor that restarts after a crash does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum GrantorRestart {
    /// Waits out T + grantor margin on its own clock before granting anything (Gray and Cheriton).
    #[default]
    Wait,
    /// Grants at once, having forgotten what it granted: the "failed-over grantor" stories.
    Forget,
}

/// The lease strategy: a protocol named as in a scenario's `strategy` field, with its settings
/// (`TwoSided(holder_margin: "5ms")`, `GrantorOnly`, `Majority(quorum: 3)`), kept as RON text.
///
/// The scenario does not know the protocols: it keeps the strategy's name and text, and a
/// [`Protocols`] (`strategy::Registry`: the built-in protocols and those a program registers)
/// reads the text into the protocol's settings. Loading a scenario ([`load`]) checks that it
/// reads and writes it as its protocol does ([`Protocols::normalize`]); [`Scenario::from_ron`]
/// keeps it as written. Written back ([`Scenario::to_ron`], or JSON, where it is a string), it
/// is that text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StrategySpec {
    /// The protocol's name (`TwoSided`).
    name: String,
    /// The whole strategy as RON text, its name included.
    ron: String,
}

impl StrategySpec {
    /// Reads a strategy written as in a scenario's `strategy` field (`--strategy` on the
    /// command line): a name, then its fields in parentheses or none; the text is kept as
    /// written. Only the syntax is checked here: the protocol reads the fields.
    pub fn from_ron(text: &str) -> Result<StrategySpec, ron::error::SpannedError> {
        let mut spec: StrategySpec = ron_options().from_str(text)?;
        if let Some(span) = value_span(text) {
            spec.ron = text[span].to_string();
        }
        Ok(spec)
    }

    /// The protocol's name alone (`TwoSided`, `CachedBool`, ...).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The strategy as RON text, its name included: as written, or as its protocol writes it
    /// once loaded.
    pub fn to_ron(&self) -> String {
        self.ron.clone()
    }
}

/// How drift rates are given to nodes without their own `drift_ppm`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClocksConfig {
    /// rho: the spread of drift rates, in ppm (both ends together). Default 0.
    #[serde(default)]
    pub drift_spread_ppm: f64,
    /// How rates are placed within the spread. Default `Random`.
    #[serde(default)]
    pub placement: Placement,
    /// Periodic clock syncs and an error bound on every node's wall clock (TrueTime).
    #[serde(default)]
    pub uncertainty: Option<Uncertainty>,
}

/// `clocks.uncertainty`: every node's wall clock knows its error. TT.now() =
/// [wall - e, wall + e] with e = base + growth_ppm * (true time since the last sync); at true
/// times sync_every, 2 sync_every, ... each wall clock is set to true time plus a residual drawn
/// uniformly from [-base, +base] (from true time 0 to the first sync, its error is its
/// `offset`). Monotonic clocks are never stepped.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Uncertainty {
    #[serde(default = "uncertainty_base")]
    pub base: LocalDur,
    /// How fast the bound grows between syncs, in ppm of true time (Spanner assumes 200).
    #[serde(default = "uncertainty_growth_ppm")]
    pub growth_ppm: f64,
    #[serde(default = "uncertainty_sync_every")]
    pub sync_every: Dur,
}

fn uncertainty_base() -> LocalDur {
    LocalDur::from_ms(1)
}
fn uncertainty_growth_ppm() -> f64 {
    200.0
}
fn uncertainty_sync_every() -> Dur {
    Dur::from_ms(30_000)
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Placement {
    /// Each node draws its drift uniformly from [-rho/2, +rho/2] (its own stream).
    #[default]
    Random,
    /// The grantor runs at +rho/2 and every contender at -rho/2: the worst case for a holder.
    Adversarial,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Role {
    /// An authority that grants leases (a lock service, a Redis master, an API server).
    Grantor,
    /// A node that wants the lease.
    Contender,
    /// A member of a consensus group whose leader holds the lease.
    Replica,
}

impl Role {
    /// Every role, in declaration order.
    pub const ALL: [Role; 3] = [Role::Grantor, Role::Contender, Role::Replica];
}

/// One node.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeConfig {
    pub name: String,
    pub role: Role,
    /// Drift of both clocks in ppm (fractions allowed); positive runs fast. Default from `clocks`.
    #[serde(default)]
    pub drift_ppm: Option<f64>,
    /// Wall clock minus monotonic clock at the start, in the node's clock. Default 0.
    #[serde(default)]
    pub offset: LocalDur,
    /// True time at which the node starts. Default 0.
    #[serde(default)]
    pub start: Dur,
    /// Its own settings of the scenario's protocol, for a fleet that runs mixed
    /// configurations: the strategy's name with the fields this node runs otherwise
    /// (`RaftLeaderLease(pre_vote: false)`); every field it leaves out is the strategy's. Only
    /// protocols that say so take them. Default: none (the strategy's settings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<StrategySpec>,
    /// The node's disk, for a protocol that writes to one before it answers: how long an fsync
    /// takes. Default: none (what the protocol writes is durable at once, and a crash keeps
    /// it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk: Option<DiskConfig>,
}

/// A node's disk: writes are made durable one fsync at a time, in order, each taking a draw of
/// `fsync`; the writes that come while one is under way share the next fsync (group commit).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiskConfig {
    pub fsync: DurationDist,
}

/// The network between nodes.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkConfig {
    /// One-way delay of every message. Default `Fixed("1ms")`.
    #[serde(default = "default_delay")]
    pub delay: DurationDist,
    /// Probability that a message is lost. Default 0.
    #[serde(default)]
    pub loss: f64,
    /// Probability that a message is delivered twice (the copy with its own delay). Default 0.
    #[serde(default)]
    pub duplicate: f64,
    /// Per-link delay overrides, first match wins.
    #[serde(default)]
    pub links: Vec<LinkConfig>,
}

fn default_delay() -> DurationDist {
    DurationDist::Fixed(Dur::from_ms(1))
}

impl Default for NetworkConfig {
    fn default() -> Self {
        NetworkConfig {
            delay: default_delay(),
            loss: 0.0,
            duplicate: 0.0,
            links: Vec::new(),
        }
    }
}

/// A directed link's own delay distribution.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkConfig {
    pub from: String,
    pub to: String,
    pub delay: DurationDist,
}

/// What clients ask of every contender.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadConfig {
    /// Poisson rate of reads at each contender. Default 0.
    #[serde(default)]
    pub reads_per_second: f64,
    /// Poisson rate of writes at each contender. Default 0.
    #[serde(default)]
    pub writes_per_second: f64,
    /// Time between the validity check and the request's effect. Default 0 (immediate).
    #[serde(default)]
    pub service_time: Dur,
    /// Operations at a fixed rate with jitter at each contender, besides the Poisson streams.
    #[serde(default)]
    pub periodic: Option<PeriodicOps>,
    /// How many keys requests spread over, uniformly. Default 1: one register.
    #[serde(default = "one_key")]
    pub keys: u32,
}

fn one_key() -> u32 {
    1
}

impl WorkloadConfig {
    /// Requests per second at each contender, all streams together.
    pub fn requests_per_second(&self) -> f64 {
        let periodic = self
            .periodic
            .as_ref()
            .filter(|o| o.every.ns() > 0)
            .map_or(0.0, |o| 1e9 / o.every.ns() as f64);
        self.reads_per_second.max(0.0) + self.writes_per_second.max(0.0) + periodic
    }
}

impl Default for WorkloadConfig {
    fn default() -> Self {
        WorkloadConfig {
            reads_per_second: 0.0,
            writes_per_second: 0.0,
            service_time: Dur::ZERO,
            periodic: None,
            keys: one_key(),
        }
    }
}

/// Fixed-rate operations: the i-th (from 0) arrives at `start + jitter + i * every`, shifted by
/// a uniform draw in `[-jitter, +jitter]`; every `write_every`-th one (the 0th, the nth, ...)
/// is a write, the others reads.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PeriodicOps {
    pub every: Dur,
    #[serde(default)]
    pub jitter: Dur,
    /// 1: every operation writes. 0: none does.
    #[serde(default)]
    pub write_every: u32,
}

/// The protected register.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResourceConfig {
    /// Reject writes whose token is below the highest token applied. Default false.
    #[serde(default)]
    pub fencing: bool,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum PauseKind {
    /// A stop-the-world garbage collection: the clocks keep counting.
    #[default]
    Gc,
    /// The hypervisor freezes the guest (live migration, host overload).
    VmFreeze,
}

/// What a VM freeze does to the guest's clocks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum FreezeClock {
    /// The clocks read on resume as if nothing happened.
    #[default]
    CatchUp,
    /// The clocks stop for the freeze and are behind true time afterwards.
    Stall,
}

/// Which of a node's loops a [`Fault::ThreadStall`] stops. A protocol says which of its timers
/// and messages each loop handles (its docs page names them); client requests are the
/// worker's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Thread {
    /// The loop that keeps the lease: sends renewals and takes their answers (a lock's
    /// watchdog, a leader elector's renew goroutine, a session's keep-alive).
    Renewal,
    /// The loop that acts: serves client requests, and handles every timer and message the
    /// renewal loop does not.
    Worker,
}

impl Thread {
    /// Both, in the order the engine indexes them.
    pub const ALL: [Thread; 2] = [Thread::Renewal, Thread::Worker];

    /// The name a scenario gives it.
    pub fn name(self) -> &'static str {
        match self {
            Thread::Renewal => "Renewal",
            Thread::Worker => "Worker",
        }
    }
}

/// A fault at a fixed true time. Lists left out mean "all".
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub enum Fault {
    Pause {
        node: String,
        at: At,
        duration: Dur,
        #[serde(default)]
        kind: PauseKind,
        /// Only for `VmFreeze`: `CatchUp` (the default, when left out) or `Stall`. Kept as
        /// given, so that one given for a GC pause can be refused; see [`Fault::freeze_clock`].
        #[serde(default)]
        clock: Option<FreezeClock>,
    },
    /// One loop of a live process stops for `duration` (a starved thread, a lock held by the
    /// other loop, a blocked event loop): what it handles waits, and is handled in order when
    /// it ends, while the node's other loop and its clocks run on.
    ThreadStall {
        node: String,
        thread: Thread,
        at: At,
        duration: Dur,
    },
    /// The node's disk makes nothing durable for `duration` (a stalled or saturated device):
    /// an fsync under way finishes that much later, and the loops that wait for one wait on.
    /// The node must have a `disk`.
    DiskStall {
        node: String,
        at: At,
        duration: Dur,
    },
    Crash {
        node: String,
        at: At,
    },
    Restart {
        node: String,
        at: At,
    },
    /// Steps the wall clock by `by` (negative: backward).
    ClockStep {
        node: String,
        at: At,
        by: LocalDur,
    },
    DriftChange {
        node: String,
        at: At,
        drift_ppm: f64,
    },
    /// Nodes in different groups cannot reach each other; nodes in no group reach everyone.
    Partition {
        at: At,
        duration: Dur,
        groups: Vec<Vec<String>>,
    },
    /// Messages from `from` to `to` are dropped; the other direction works.
    OneWay {
        from: String,
        to: String,
        at: At,
        duration: Dur,
    },
    /// Messages sent in the window get `extra` delay.
    DelaySpike {
        at: At,
        duration: Dur,
        extra: Dur,
        #[serde(default)]
        from: Option<Vec<String>>,
        #[serde(default)]
        to: Option<Vec<String>>,
        #[serde(default)]
        kinds: Option<Vec<KindName>>,
    },
    /// A leader steps down (protocols with leaders: `RaftLeaderLease`).
    StepDown {
        node: String,
        at: At,
    },
    /// The leader, whichever node it is then, hands leadership to `to` (Raft's TimeoutNow).
    TransferLeader {
        at: At,
        to: String,
    },
    /// Messages sent in the window are dropped.
    Drop {
        at: At,
        duration: Dur,
        #[serde(default)]
        from: Option<Vec<String>>,
        #[serde(default)]
        to: Option<Vec<String>>,
        #[serde(default)]
        kinds: Option<Vec<KindName>>,
    },
}

impl Fault {
    /// What a pause does to the node's clocks: `Stall` only for a `VmFreeze` that says so, else
    /// `CatchUp` (a GC pause stops no clock). `None` for a fault that is not a pause.
    pub fn freeze_clock(&self) -> Option<FreezeClock> {
        match self {
            Fault::Pause {
                kind: PauseKind::VmFreeze,
                clock,
                ..
            } => Some(clock.unwrap_or_default()),
            Fault::Pause { .. } => Some(FreezeClock::CatchUp),
            _ => None,
        }
    }

    /// The fault in a few words, without its start: `Pause a 12s (Gc)`,
    /// `Partition [a] | [lock, b] for 5s`. For reports.
    pub fn describe(&self) -> String {
        let list = |v: &Option<Vec<String>>| v.as_ref().map(|v| v.join(", "));
        let filters = |from: &Option<Vec<String>>,
                       to: &Option<Vec<String>>,
                       kinds: &Option<Vec<KindName>>| {
            let mut f = Vec::new();
            if let Some(from) = list(from) {
                f.push(format!("from {from}"));
            }
            if let Some(to) = list(to) {
                f.push(format!("to {to}"));
            }
            if let Some(kinds) = kinds {
                let k: Vec<&str> = kinds.iter().map(|k| k.0.as_str()).collect();
                f.push(format!("kinds {}", k.join(", ")));
            }
            if f.is_empty() {
                String::new()
            } else {
                format!(" ({})", f.join("; "))
            }
        };
        match self {
            Fault::Pause {
                node,
                duration,
                kind,
                ..
            } => {
                let stall = if self.freeze_clock() == Some(FreezeClock::Stall) {
                    ", clocks stall"
                } else {
                    ""
                };
                format!("Pause {node} {duration} ({kind:?}{stall})")
            }
            Fault::ThreadStall {
                node,
                thread,
                duration,
                ..
            } => format!("ThreadStall {node} {} loop {duration}", thread.name()),
            Fault::DiskStall { node, duration, .. } => format!("DiskStall {node} {duration}"),
            Fault::Crash { node, .. } => format!("Crash {node}"),
            Fault::Restart { node, .. } => format!("Restart {node}"),
            Fault::ClockStep { node, by, .. } => format!("ClockStep {node} wall clock by {by}"),
            Fault::DriftChange {
                node, drift_ppm, ..
            } => format!("DriftChange {node} to {drift_ppm:+} ppm"),
            Fault::StepDown { node, .. } => format!("StepDown {node}"),
            Fault::TransferLeader { to, .. } => format!("TransferLeader to {to}"),
            Fault::Partition {
                duration, groups, ..
            } => {
                let g: Vec<String> = groups
                    .iter()
                    .map(|g| format!("[{}]", g.join(", ")))
                    .collect();
                format!("Partition {} for {duration}", g.join(" | "))
            }
            Fault::OneWay {
                from, to, duration, ..
            } => format!("OneWay {from} -> {to} cut for {duration}"),
            Fault::DelaySpike {
                duration,
                extra,
                from,
                to,
                kinds,
                ..
            } => format!(
                "DelaySpike +{extra} for {duration}{}",
                filters(from, to, kinds)
            ),
            Fault::Drop {
                duration,
                from,
                to,
                kinds,
                ..
            } => format!("Drop for {duration}{}", filters(from, to, kinds)),
        }
    }

    /// When the fault begins, to move it: its true time, or its delay after its moment.
    pub fn at_mut(&mut self) -> &mut Dur {
        self.start_mut().offset_mut()
    }

    /// When the fault begins: its true time, or its delay after its moment (see
    /// [`Fault::start`] for which).
    pub fn at(&self) -> Dur {
        self.start().offset()
    }

    /// The moment the fault follows, if it follows one.
    pub fn after(&self) -> Option<&moment::AfterMoment> {
        self.start().after()
    }

    /// When the fault begins, to change it.
    pub fn start_mut(&mut self) -> &mut At {
        match self {
            Fault::Pause { at, .. }
            | Fault::ThreadStall { at, .. }
            | Fault::DiskStall { at, .. }
            | Fault::Crash { at, .. }
            | Fault::Restart { at, .. }
            | Fault::ClockStep { at, .. }
            | Fault::DriftChange { at, .. }
            | Fault::StepDown { at, .. }
            | Fault::TransferLeader { at, .. }
            | Fault::Partition { at, .. }
            | Fault::OneWay { at, .. }
            | Fault::DelaySpike { at, .. }
            | Fault::Drop { at, .. } => at,
        }
    }

    /// When the fault begins.
    pub fn start(&self) -> &At {
        match self {
            Fault::Pause { at, .. }
            | Fault::ThreadStall { at, .. }
            | Fault::DiskStall { at, .. }
            | Fault::Crash { at, .. }
            | Fault::Restart { at, .. }
            | Fault::ClockStep { at, .. }
            | Fault::DriftChange { at, .. }
            | Fault::StepDown { at, .. }
            | Fault::TransferLeader { at, .. }
            | Fault::Partition { at, .. }
            | Fault::OneWay { at, .. }
            | Fault::DelaySpike { at, .. }
            | Fault::Drop { at, .. } => at,
        }
    }
}

/// A generator of faults drawn from the seed's fault stream.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub enum RandomFault {
    /// Pauses with Poisson start times; overlapping pauses merge.
    Pauses {
        #[serde(default)]
        nodes: Option<Vec<String>>,
        per_minute: f64,
        duration: DurationDist,
        #[serde(default)]
        kind: PauseKind,
        /// Only for `VmFreeze`, as in [`Fault::Pause`].
        #[serde(default)]
        clock: Option<FreezeClock>,
    },
    /// Wall-clock steps with Poisson times; `by` may take negative values.
    ClockSteps {
        #[serde(default)]
        nodes: Option<Vec<String>>,
        per_hour: f64,
        by: DurationDist,
    },
    /// One random node (of `nodes`) cut off from all others for a drawn duration.
    Partitions {
        #[serde(default)]
        nodes: Option<Vec<String>>,
        per_hour: f64,
        duration: DurationDist,
    },
    /// Crashes with Poisson times, each followed by a restart after a drawn delay.
    Crashes {
        #[serde(default)]
        nodes: Option<Vec<String>>,
        per_hour: f64,
        restart_after: DurationDist,
    },
}

/// Expectations checked after the run. Each key present must hold.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    #[serde(default)]
    pub overlap: Option<bool>,
    #[serde(default)]
    pub max_overlap_at_most: Option<Dur>,
    #[serde(default)]
    pub max_overlap_at_least: Option<Dur>,
    #[serde(default)]
    pub zombie_actions: Option<bool>,
    #[serde(default)]
    pub stale_reads: Option<bool>,
    #[serde(default)]
    pub unsafe_writes: Option<bool>,
    #[serde(default)]
    pub fenced_writes: Option<bool>,
    /// Fraction 0..1.
    #[serde(default)]
    pub min_availability: Option<f64>,
    /// Fraction 0..1: availability must not exceed it (with `min_availability`, a window).
    #[serde(default)]
    pub max_availability: Option<f64>,
    /// Exactly this many overlap intervals.
    #[serde(default)]
    pub overlap_count: Option<u64>,
    /// The longest stretch with no running believer (`max_unavailable_ns`) is at most this.
    #[serde(default)]
    pub max_unavailable_at_most: Option<Dur>,
    /// The longest stretch with no running believer is at least this.
    #[serde(default)]
    pub max_unavailable_at_least: Option<Dur>,
    /// Liveness: a running node believes it holds the lease within this of the end of the
    /// run's last fault (of the run's start when it has none).
    #[serde(default)]
    pub recovers_within: Option<Dur>,
    /// The safety slack (`min_slack_ns`: the closest handover, negative for an overlap) is at
    /// least this; may be negative. Holds when there was no handover.
    #[serde(default)]
    pub min_slack_at_least: Option<Dur>,
    /// The safety slack (`min_slack_ns`) is exactly this; fails when there was no handover.
    #[serde(default)]
    pub min_slack: Option<Dur>,
    /// Exactly this many grants (new tokens issued).
    #[serde(default)]
    pub grants: Option<u64>,
    /// Exactly this many renewals granted.
    #[serde(default)]
    pub renewals: Option<u64>,
    /// Exactly this many crashes took effect (a crash of a node already down does not count).
    #[serde(default)]
    pub crashes: Option<u64>,
    /// Exactly this many pauses began (a pause of a node that is down does not count).
    #[serde(default)]
    pub pauses: Option<u64>,
    /// The nodes granted the lease, in grant order (the summary's `holders`: the first 64).
    #[serde(default)]
    pub holders: Option<Vec<String>>,
    /// The longest gap between two reads served ends (reads resume) within this window of
    /// true time since the start: `("1s", "1.005s")`.
    #[serde(default)]
    pub reads_resume_between: Option<(Dur, Dur)>,
    /// The same for writes taking effect.
    #[serde(default)]
    pub writes_resume_between: Option<(Dur, Dur)>,
    /// Exactly this many stale reads.
    #[serde(default)]
    pub stale_read_count: Option<u64>,
    /// Exactly this many zombie actions (late, under a superseded token).
    #[serde(default)]
    pub zombie_action_count: Option<u64>,
    /// Exactly this many unsafe writes (applied after a write under a newer token).
    #[serde(default)]
    pub unsafe_write_count: Option<u64>,
    /// With `clocks.uncertainty`: the most by which any node's true time lay outside its
    /// interval [wall - e, wall + e] is exactly this (`"0s"`: the bound held throughout).
    #[serde(default)]
    pub max_outside_interval: Option<Dur>,
    /// Exactly this many messages sent of each kind listed (`{"Acquire": 38}`); kinds left out
    /// are not checked.
    #[serde(default)]
    pub messages: Option<std::collections::BTreeMap<String, u64>>,
    /// Exactly this many warnings from `check` (a margin below T*rho, a drift beyond 10 %, ...):
    /// the scenario means them, so `run` and `check` print them as notes marked expected. A
    /// count that no longer matches fails the run, and the warnings print as warnings.
    #[serde(default)]
    pub warnings: Option<u64>,
}

impl Expect {
    /// True when the scenario asks for an overlap (`overlap: true`, an `overlap_count` above 0
    /// or a `max_overlap_at_least` above 0): a story meant to show one.
    pub fn asks_for_overlap(&self) -> bool {
        self.overlap == Some(true)
            || self.overlap_count.is_some_and(|n| n > 0)
            || self.max_overlap_at_least.is_some_and(|d| d.ns() > 0)
    }

    /// Why the `count` warnings of the scenario are meant, if they are: its `warnings` says
    /// exactly that many, or (with no `warnings`) it asks for an overlap, a story meant to show
    /// what its margin allows.
    pub fn means_warnings(&self, count: usize) -> Option<String> {
        match self.warnings {
            Some(n) if n == count as u64 => Some(format!(
                "its expect says {n} warning{}",
                if n == 1 { "" } else { "s" }
            )),
            Some(_) => None,
            None => self
                .asks_for_overlap()
                .then(|| "its expect asks for an overlap".to_string()),
        }
    }
}

/// Bounds on one run.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// The run stops (and says so) after this many events. Default 10^8, at most 10^10
    /// (see [`limits`]).
    #[serde(default = "default_max_events")]
    pub max_events: u64,
}

fn default_max_events() -> u64 {
    limits::DEFAULT_MAX_EVENTS
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_events: default_max_events(),
        }
    }
}

/// A message kind as a scenario names it (`kinds: [Renew, RenewAck]`): a bare identifier, which
/// validation checks against the kinds of the scenario's protocol.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct KindName(pub String);

impl<'de> Deserialize<'de> for KindName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Name;
        impl serde::de::Visitor<'_> for Name {
            type Value = KindName;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a message kind, such as Renew")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<KindName, E> {
                Ok(KindName(v.to_string()))
            }
        }
        d.deserialize_identifier(Name)
    }
}

impl Serialize for KindName {
    /// Written bare, as it is read.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let raw = ron::value::RawValue::from_ron(&self.0).map_err(serde::ser::Error::custom)?;
        raw.serialize(s)
    }
}

/// RON options for scenario files: optional fields written bare.
pub fn ron_options() -> ron::Options {
    ron::Options::default().with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
}

impl Scenario {
    /// Parses a scenario from RON text (no semantic checks; see [`validate::validate`]). The
    /// strategy keeps its text as written.
    pub fn from_ron(text: &str) -> Result<Scenario, ron::error::SpannedError> {
        let mut s: Scenario = ron_options().from_str(text)?;
        if let Some(span) = strategy_span(text) {
            s.strategy.ron = text[span].to_string();
        }
        Ok(s)
    }

    /// The scenario as RON text that [`Scenario::from_ron`] reads back.
    pub fn to_ron(&self) -> String {
        ron_options()
            .to_string_pretty(self, ron::ser::PrettyConfig::default())
            .expect("a scenario always serializes")
    }

    /// [`Scenario::to_ron`] without every field that reads back as what it says when left out
    /// (a default, an empty list, a `None`): what a person reads in a written scenario file.
    /// Each field, a whole block when it spans lines, is dropped only if the text without it
    /// reads back as the same scenario; so the result always reads back as `self`. Each try
    /// reads the whole text back, so past [`MINIMAL_RON_MAX_LINES`] lines (thousands of
    /// faults) only the `None` fields are dropped, which always read back as `None`.
    pub fn to_ron_minimal(&self) -> String {
        let full = self.to_ron();
        let mut lines: Vec<&str> = full.lines().collect();
        if lines.len() > MINIMAL_RON_MAX_LINES {
            lines.retain(|l| {
                let t = l.trim_start();
                !(t.ends_with(": None,")
                    && t[..t.len() - ": None,".len()]
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_'))
            });
            let mut out = lines.join("\n");
            out.push('\n');
            return out;
        }
        let mut i = 0;
        while i < lines.len() {
            let end = field_extent(&lines, i);
            if let Some(end) = end {
                let mut without = lines.clone();
                without.drain(i..=end);
                let same =
                    Scenario::from_ron(&without.join("\n")).is_ok_and(|back| back.to_ron() == full);
                if same {
                    lines = without;
                    continue;
                }
            }
            i += 1;
        }
        let mut out = lines.join("\n");
        out.push('\n');
        out
    }

    /// The scenario with every drawn fault time (`at: Uniform(min, max)`) drawn: a true time
    /// uniform in `[min, max]` from the stream of the seed for the fault's place in `faults`,
    /// so that a run draws it the same every time and another seed draws anew. `None` when no
    /// time is drawn (the scenario runs as it is).
    pub fn with_drawn_times(&self) -> Option<Scenario> {
        use rand::RngExt;
        if self.faults.iter().all(|f| f.start().drawn().is_none()) {
            return None;
        }
        let mut s = self.clone();
        for (i, f) in s.faults.iter_mut().enumerate() {
            if let Some((min, max)) = f.start().drawn() {
                let mut rng =
                    crate::rng::stream(self.seed, crate::rng::Component::FaultTimes, i as u64);
                let ns = rng.random_range(min.ns()..=max.ns());
                *f.start_mut() = moment::At::Time(Dur::from_ns(ns));
            }
        }
        Some(s)
    }

    /// Every fault the run injects: the fixed `faults` first, in the file's order, then those
    /// the `random_faults` generators draw ([`random_faults::materialize`]). What the engine
    /// runs, and what a report lists, with every drawn time drawn ([`Self::with_drawn_times`]).
    /// The scenario must be valid.
    pub fn fault_schedule(&self) -> Vec<Fault> {
        let drawn = self.with_drawn_times();
        let mut all = drawn.map_or_else(|| self.faults.clone(), |s| s.faults);
        all.extend(random_faults::materialize(self));
        all
    }

    /// Whether node `i` runs fast (+rho/2, else -rho/2) under adversarial drift placement
    /// (`Placement::Adversarial`, and `explore`'s adversarial draws): the node whose timer must
    /// outwait the holder's runs fast, the holder slow: a grantor fast and contenders slow; in
    /// a group of replicas the one that leads first slow (`lease.initial_leader`, else the
    /// first replica) and the others fast.
    pub(crate) fn runs_fast_adversarially(&self, i: usize) -> bool {
        match self.nodes[i].role {
            Role::Grantor => true,
            Role::Replica => Some(i) != self.slowed_replica(),
            _ => false,
        }
    }

    /// The replica that adversarial drift placement slows: the initial leader if the scenario
    /// names one, else the first replica (`None` without replicas).
    pub fn slowed_replica(&self) -> Option<usize> {
        let named = self.lease.initial_leader.as_deref();
        named
            .and_then(|name| self.node_index(name))
            .or_else(|| self.nodes.iter().position(|n| n.role == Role::Replica))
    }

    /// The index of the node called `name`.
    pub fn node_index(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.name == name)
    }
}

/// Above this many lines of RON, [`Scenario::to_ron_minimal`] drops only `None` fields.
pub const MINIMAL_RON_MAX_LINES: usize = 2_000;

/// The last line of the field that starts on line `i` of pretty RON (`name: value,` on one
/// line, or `name: (` / `name: [` through its closing line at the same indentation); `None`
/// when line `i` starts no field.
fn field_extent(lines: &[&str], i: usize) -> Option<usize> {
    let line = lines[i];
    let body = line.trim_start();
    let indent = line.len() - body.len();
    let (name, value) = body.split_once(": ")?;
    if indent == 0 || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    if !(value.ends_with('(') || value.ends_with('[')) {
        return Some(i);
    }
    (i + 1..lines.len()).find(|&j| {
        let l = lines[j];
        let t = l.trim_start();
        l.len() - t.len() == indent && (t.starts_with(')') || t.starts_with(']'))
    })
}

/// Where the `strategy` value of a scenario's RON text is, as a byte range (comments and
/// whitespace around it left out); `None` if the text does not parse that far.
pub(crate) fn strategy_span(text: &str) -> Option<std::ops::Range<usize>> {
    /// Every other field is skipped.
    #[derive(Deserialize)]
    #[serde(rename = "Scenario")]
    struct StrategyText<'a> {
        #[serde(borrow)]
        strategy: &'a ron::value::RawValue,
    }
    let found: StrategyText = ron_options().from_str(text).ok()?;
    span_in(text, found.strategy)
}

/// Where the one value of a RON text is (a strategy alone, as `--strategy` gives it).
pub(crate) fn value_span(text: &str) -> Option<std::ops::Range<usize>> {
    span_in(text, ron_options().from_str(text).ok()?)
}

/// Where `raw`, a slice of `text` itself, is in it, without whitespace and comments around.
fn span_in(text: &str, raw: &ron::value::RawValue) -> Option<std::ops::Range<usize>> {
    let raw = raw.trim().get_ron();
    let start = (raw.as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
    let end = start + raw.len();
    (text.get(start..end) == Some(raw)).then_some(start..end)
}

#[cfg(test)]
mod tests {

    /// A long scenario (past the line limit) written minimal drops its `None` fields only, and
    /// reads back as itself.
    #[test]
    fn a_long_scenario_written_minimal_reads_back_as_itself() {
        let mut s = Scenario::from_ron(library::text("q4-gc-pause-two-sided").unwrap()).unwrap();
        let pause = s.faults[0].clone();
        s.faults = vec![pause; 500];
        let full = s.to_ron();
        assert!(full.lines().count() > MINIMAL_RON_MAX_LINES);
        let minimal = s.to_ron_minimal();
        assert!(minimal.len() < full.len() && !minimal.contains(": None,"));
        assert_eq!(Scenario::from_ron(&minimal).unwrap().to_ron(), full);
    }

    /// Every bundled scenario, written minimal, reads back as itself.
    #[test]
    fn minimal_ron_reads_back_as_the_scenario() {
        for name in library::names() {
            let s = Scenario::from_ron(library::text(name).unwrap()).unwrap();
            let minimal = s.to_ron_minimal();
            let back = Scenario::from_ron(&minimal).unwrap();
            assert_eq!(back.to_ron(), s.to_ron(), "{name}");
            assert!(minimal.len() < s.to_ron().len(), "{name}: nothing left out");
        }
    }
    use super::*;

    #[test]
    fn strategy_text_round_trips() {
        for text in [
            "TwoSided()",
            r#"TwoSided(holder_margin: "5ms")"#,
            r#"TwoSided(holder_margin: "5ms", grantor_margin: "1ms")"#,
            "GrantorOnly",
            r#"HolderOnly(margin: "20ms")"#,
            "CachedBool",
            r#"WallClock(holder_margin: "1.5s")"#,
            r#"OnReceiveStart(holder_margin: "5ms")"#,
            r#"Custom(holder_clock: Wall, lease_start: OnReceive, holder_margin: "1ms", grantor_margin: "2ms", validity: CachedBool)"#,
        ] {
            // Read as part of a scenario, the text is put back together from its fields as
            // written; alone, it is kept as it is.
            let spec: StrategySpec = ron_options()
                .from_str(text)
                .unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(spec.to_ron(), text);
            assert_eq!(StrategySpec::from_ron(text).unwrap(), spec);
            let again: StrategySpec = ron_options().from_str(&spec.to_ron()).unwrap();
            assert_eq!(spec, again, "{text} -> {}", spec.to_ron());
        }
    }
}
