//! The discrete-event engine: one run of a scenario in exact true time.
//!
//! Events come out of a queue keyed by (true time, sequence number), merged with the fault
//! schedule (`feed`), the Poisson streams' next arrivals (`arrivals`) and the admitted
//! requests' effects (`service`), which wait beside the queue under sequence numbers taken from
//! it, so that the order is that of one queue.
//! Node-bound events (message deliveries, timers, client requests and their effects) go to the
//! node's logic, or wait in the node's deferred list while it is paused and are handled at
//! resume in the order they fell due; a crashed node loses them. Timers are set on a node's
//! monotonic or wall clock at a local deadline and mapped to true time; when a mapping changes (wall step, drift change, stalled
//! freeze) the node's pending timers are re-mapped, except those that already fell due during a
//! pause (they wait in the deferred list, in their place). A timer holds at most one live queue entry,
//! which carries it to a later deadline when re-armed; stale entries are skipped by generation. A paused node's backlog is capped at [`MAX_DEFERRED`].
//!
//! The engine is generic over the [`Protocol`] (monomorphised: messages are never boxed). It knows
//! no protocol's rules: it calls [`NodeLogic`](crate::strategy::NodeLogic), carries out the actions it gives (sends,
//! timers), and passes its facts (grants, reads, writes applied) to the [`crate::oracle`] and
//! the [`Harm`] ledger, which judge; in debug builds it checks that no fact the oracle needs was
//! left out (`audit`). A duplicated message is delivered twice to node logic, the second time
//! with `cx.duplicate` set, so that a resource can apply a write once.
//!
//! The path of a message, in one place: node logic gives [`Action::Send`](crate::strategy::Action::Send) in its [`Out`];
//! `Sim::after_call` hands it to `send`, which asks the [`Network`] its fate and queues an
//! [`Ev::Deliver`]; at that instant `dispatch` checks for a cut, `route` hands it to the node (or
//! its deferred list while paused), and `handle` calls the recipient's
//! [`NodeLogic::on_message`](crate::strategy::NodeLogic::on_message). A message that reaches a
//! node whose process is down is lost on a datagram transport; on a stream
//! ([`crate::net::Transport::Stream`]) its host refuses it, and an [`Ev::Refused`] goes back to
//! the sender one network delay later (drawn by [`Network::refusal_delay`]), which
//! [`NodeLogic::on_refused`](crate::strategy::NodeLogic::on_refused) hears if the sender is still
//! the life that sent it. A cut loses messages and refusals alike without a word. After every call into node logic, `after_call` tells the oracle
//! what the node now believes.
//!
//! Invariants (asserted, in release builds too): time never goes backward; pause and stall
//! depths never wrap; a node that believes has a timer pending.
//!
//! The files, one job each: `run` (the loop, dispatch, routing to nodes, calls into node
//! logic), `node` (a node's state and its timers), `effects` (what a call's actions and facts
//! do), `audit` (the debug checks that node logic reported the facts the oracle needs),
//! `workload` (client requests), `faults` (node faults and clock syncs), `disk` (nodes' disks:
//! fsyncs, disk stalls, what waits for them), `feed` (the fault schedule as the run reaches
//! it), `build` (a run from a scenario), `stats` (the run's counters), `queue` (the event
//! queue), `arrivals` (the Poisson streams' next arrivals, beside the queue), `draws` (the
//! streams' gaps and keys, drawn on the run's thread or, for a long run, on a helper thread
//! ahead of it), `service` (the effects of admitted requests, beside the queue too), `waits`
//! (confirmed reads' waits).

mod arrivals;
mod audit;
#[cfg(test)]
mod audit_tests;
mod build;
#[cfg(test)]
mod count_tests;
mod disk;
#[cfg(test)]
mod disk_tests;
mod draws;
mod effects;
mod faults;
mod feed;
#[cfg(test)]
mod lane_tests;
mod moments;
mod node;
mod queue;
mod run;
mod service;
mod stats;
mod strategy;
#[cfg(test)]
mod thread_stall_tests;
#[cfg(test)]
mod timer_tests;
pub mod waits;
mod workload;

pub(crate) use build::place_drifts;
pub use build::{build, BuildError};
pub use draws::HELPER_THREAD_VAR;
pub use stats::{FirstHarm, Gap, HarmAct, Stats, GRANT_ORDER_CAP};
pub use strategy::simulate;

use crate::clock::NodeClock;
use crate::msg::Token;
use crate::net::Network;
use crate::oracle::authority::{AuthorityOracles, AuthorityReports};
use crate::oracle::failover::{Failover, Failovers};
use crate::oracle::harm::Harm;
use crate::scenario::{FreezeClock, PauseKind, Role, Thread};
use crate::strategy::{Command, LeaseParams, MsgOf, Out, Protocol, Request, TimerId};
use crate::time::{DriftRate, Dur, LocalDur, SimTime};
use crate::trace::tally::Tally;
use crate::trace::Observer;
use node::Node;
use queue::EventQueue;
use std::collections::BTreeMap;

/// The most input a paused node keeps for its resume: messages and client requests beyond it are
/// dropped (a full socket backlog) and counted, so that no pause, however long and however busy
/// the node, holds unbounded memory. Timers and effects of admitted requests always wait: there
/// are few of them. Validation keeps scenarios within their limits below it (see
/// `scenario::limits::MAX_PENDING_REQUESTS`), so only merged random pauses can reach it.
pub const MAX_DEFERRED: usize = 1 << 20;

/// One event, carrying messages of type `M`. Moved into the queue and out of it: scheduling one
/// allocates nothing (unless the message itself does).
#[derive(Clone, Debug)]
pub enum Ev<M> {
    Deliver {
        to: u32,
        from: u32,
        msg: M,
        id: u64,
        /// The network made two copies of this message and both are on their way.
        twin: bool,
        /// The sender's life when it sent the message (a refusal reaches only that life).
        life: u32,
    },
    /// On a stream transport, the host of `from` refused message `id` that `to` sent in its life
    /// `life` (`from`'s process was down when it arrived): `to` learns it now.
    Refused {
        to: u32,
        from: u32,
        msg: M,
        id: u64,
        life: u32,
    },
    /// A timer's queue entry: the timer falls due, or the entry carries it forward
    /// (`node::TimerSlot`).
    Timer {
        node: u32,
        timer: TimerId,
        gen: u32,
        seq: u64,
    },
    /// A client request arrives at a node: from a Poisson stream (which then draws its next
    /// arrival) or from the fixed-rate one. `op` names it in the history: the tick of its
    /// invocation, given when it arrives (0 until then); a write's value is its `op`.
    Arrival {
        node: u32,
        kind: Request,
        periodic: bool,
        op: u64,
    },
    /// The fixed-rate stream of a node draws its next operation (see `workload::Periodic`).
    Generate {
        node: u32,
    },
    /// Request `op`, admitted `service_time` ago, takes effect (unless the node has crashed
    /// since: `life` is the node's life at admission).
    Effect {
        node: u32,
        life: u32,
        kind: Request,
        token: Token,
        op: u64,
    },
    /// A clock sync of a node (`clocks.uncertainty`).
    Sync {
        node: u32,
    },
    PauseEnd {
        node: u32,
        life: u32,
        stall: bool,
    },
    /// An fsync of a node's disk begins, once the calls of the instant it was asked for are
    /// made (stale unless `gen` is the disk's and `life` the node's).
    FsyncStart {
        node: u32,
        life: u32,
        gen: u32,
    },
    /// An fsync of a node's disk finishes (stale unless `gen` is the disk's and `life` the
    /// node's).
    FsyncDone {
        node: u32,
        life: u32,
        gen: u32,
    },
    /// A node handles its oldest finished fsync: held messages leave, waiting loops go on.
    Durable {
        node: u32,
    },
    /// A stall of a node's disk ends.
    DiskStallEnd {
        node: u32,
    },
    /// A stall of one loop of a node, begun in its life `life`, ends.
    ThreadStallEnd {
        node: u32,
        life: u32,
        thread: Thread,
    },
    /// An operator's instruction reaches a node's logic (waits while it is paused, is lost
    /// while it is down).
    Command {
        node: u32,
        command: Command,
    },
}

/// A node fault of the schedule, compiled to node ids (network faults live in [`Network`]).
#[derive(Clone, Copy, Debug)]
pub enum NodeFault {
    Start,
    Pause {
        duration: Dur,
        kind: PauseKind,
        clock: FreezeClock,
    },
    Crash,
    Restart,
    ClockStep {
        by: LocalDur,
    },
    DriftChange {
        drift: DriftRate,
    },
    /// An operator's instruction to the node's logic.
    Command(Command),
    /// One loop of the node stops for `duration`.
    ThreadStall {
        thread: Thread,
        duration: Dur,
    },
    /// The node's disk makes nothing durable for `duration`.
    DiskStall {
        duration: Dur,
    },
}

/// The raw result of a run, before it is summarised.
pub struct RunResult {
    pub stats: Stats,
    pub oracle: AuthorityReports,
    pub harm: crate::oracle::harm::HarmCounts,
    /// Every change of holder among the first tokens issued.
    pub failovers: Vec<Failover>,
    pub duration: Dur,
    /// Each node's drift as run (after placement).
    pub drifts: Vec<DriftRate>,
    /// The protocol's message kinds, as `stats.messages_sent` counts them.
    pub kinds: &'static [&'static str],
    /// With `clocks.uncertainty`: for each node, the most by which true time lay outside its
    /// interval [wall - e, wall + e], in ns.
    pub outside_interval_ns: Option<Vec<i64>>,
}

/// A scenario ready to run under protocol `P`; `'o` is the lifetime of the protocol and of an
/// attached observer.
pub struct Sim<'o, P: Protocol> {
    now: SimTime,
    end: SimTime,
    max_events: u64,
    queue: EventQueue<MsgOf<P>>,
    /// The Poisson streams' next arrivals, merged with the queue's events by (time, seq).
    arrivals: arrivals::Arrivals,
    /// The admitted requests' effects waiting for their service time, merged likewise.
    service: service::Service,
    /// The thread that draws the Poisson streams ahead of the run, if it has one.
    draws: Option<draws::Helper>,
    nodes: Vec<Node<P::Logic>>,
    /// Every node's role, by node id (node logic sees it as its peers).
    roles: Vec<Role>,
    clocks: Vec<NodeClock>,
    net: Network,
    oracle: AuthorityOracles,
    harm: Harm,
    failovers: Failovers,
    /// When each node last began an attempt to hold ([`crate::strategy::Fact::Seeking`]).
    seeking: Vec<Option<SimTime>>,
    protocol: &'o P,
    params: LeaseParams,
    service_time: Dur,
    /// The fault schedule still to come.
    feed: feed::Feed,
    /// The faults placed at protocol moments, waiting or placed.
    anchors: moments::Anchors,
    out: Out<MsgOf<P>>,
    /// What node logic has reported, checked in debug builds.
    audit: audit::Audit,
    /// The run-wide token sequence ([`Cx::next_run_token`]).
    run_token: Token,
    /// `workload.keys`.
    keys: u32,
    /// The request the current call into node logic takes up, with its history name (`op`).
    call_request: Option<(u64, Request)>,
    /// [`MAX_DEFERRED`] (lowered by tests to reach it cheaply).
    max_deferred: usize,
    stats: Stats,
    next_msg_id: u64,
    /// Messages sent as two copies of which one has been delivered (`true`) or lost (`false`)
    /// and the other is still on its way: how a second delivery is told from a first.
    twins: BTreeMap<u64, bool>,
    observer: Option<&'o mut (dyn Observer + 'static)>,
    /// The observer wants the client history ([`Observer::wants_history`]).
    history_wanted: bool,
    /// Requests refused as they arrived, counted for the observer once it takes them so
    /// ([`Observer::as_counts`]).
    refusal_tally: Option<Tally>,
    /// Plain reads counted for the observer once it takes them so, with the last tick before
    /// that: reads invoked after it are counted ([`crate::trace::tally::Countable::PlainReads`]).
    read_tally: Option<(Tally, u64)>,
    /// Clock syncs, with `clocks.uncertainty`.
    syncs: Option<Syncs>,
    /// The loop that handles the current call into node logic.
    call_thread: Thread,
    /// While a call that persists and waits is carried out: the messages it sends, held until
    /// its write is durable.
    held_sends: Option<Vec<(crate::msg::NodeId, MsgOf<P>)>>,
}

/// The clock syncs of `clocks.uncertainty`: their period, the base error their residuals are
/// drawn within, and each node's stream for them.
pub(crate) struct Syncs {
    pub every: Dur,
    pub base: LocalDur,
    pub rngs: Vec<crate::rng::Rng>,
}
