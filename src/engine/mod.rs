//! The discrete-event engine: one run of a scenario in exact true time.
//!
//! Events come out of a queue keyed by (true time, sequence number). Node-bound events (message
//! deliveries, timers, client requests and their effects) go to the node's logic, or wait in the
//! node's deferred list while it is paused and are handled at resume in the order they fell due;
//! a crashed node loses them. Timers are set on a node's monotonic or wall clock at a local
//! deadline and mapped to true time; when a mapping changes (wall step, drift change, stalled
//! freeze) the node's pending timers are re-mapped, except those that already fell due during a
//! pause (they wait in the deferred list, in their place). A timer's stale queue entries are
//! skipped by generation number. A paused node's backlog is capped at [`MAX_DEFERRED`].
//!
//! The engine is generic over the [`Protocol`] (monomorphised: messages are never boxed). It knows
//! no protocol's rules: it calls [`NodeLogic`], carries out the effects it returns (sends,
//! timers), and passes the rest (grants, reads, writes applied) to the [`crate::oracle`] and
//! the [`Harm`] ledger, which judge. A duplicated message is delivered twice to node logic, the second time
//! with `cx.duplicate` set, so that a resource can apply a write once.
//!
//! The path of a message, in one place: node logic pushes [`Effect::Send`] into its [`Out`];
//! `Sim::after_call` hands it to `send`, which asks the [`Network`] its fate and queues an
//! [`Ev::Deliver`]; at that instant `dispatch` checks for a cut, `route` hands it to the node (or
//! its deferred list while paused), and `handle` calls the recipient's
//! [`NodeLogic::on_message`]. After every call into node logic, `after_call` tells the oracle
//! what the node now believes.
//!
//! Invariants (asserted, in release builds too): time never goes backward; pause and stall
//! depths never wrap; a node that believes has a timer pending.

mod build;
mod queue;
mod strategy;
pub mod waits;

pub(crate) use build::place_drifts;
pub use build::{build, BuildError};
pub use strategy::simulate;

use crate::clock::{ClockKind, NodeClock};
use crate::dist::Sampler;
use crate::msg::{NodeId, Token};
use crate::net::Network;
use crate::oracle::authority::{AuthorityOracles, AuthorityReports};
use crate::oracle::failover::{Failover, Failovers};
use crate::oracle::harm::Harm;
use crate::rng::Rng;
use crate::scenario::{FreezeClock, PauseKind, Role};
use crate::strategy::{
    Beliefs, Command, Cx, Effect, Key, LeaseParams, MsgOf, NodeLogic, Out, Protocol,
    ProtocolMessage, Request, Stamp, TimerId, TtNow, MAX_TIMERS,
};
use crate::time::{DriftRate, Dur, LocalDur, SimTime};
use crate::trace::{DropReason, Observer, TraceEvent, TraceKind};
use queue::EventQueue;
use std::collections::BTreeMap;

/// The most input a paused node keeps for its resume: messages and client requests beyond it are
/// dropped (a full socket backlog) and counted, so that no pause, however long and however busy
/// the node, holds unbounded memory. Timers and effects of admitted requests always wait: there
/// are few of them. Validation keeps scenarios within their limits below it (see
/// `scenario::limits::MAX_PENDING_REQUESTS`), so only merged random pauses can reach it.
pub const MAX_DEFERRED: usize = 1 << 20;

/// One event, carrying messages of type `M`. Small and `Copy`: scheduling one allocates nothing.
#[derive(Clone, Copy, Debug)]
pub enum Ev<M> {
    Deliver {
        to: u32,
        from: u32,
        msg: M,
        id: u64,
        /// The network made two copies of this message and both are on their way.
        twin: bool,
    },
    Timer {
        node: u32,
        timer: TimerId,
        gen: u32,
    },
    /// A client request arrives at a node: from a Poisson stream (which then draws its next
    /// arrival) or from the fixed-rate one.
    Arrival {
        node: u32,
        kind: Request,
        periodic: bool,
    },
    /// The fixed-rate stream of a node draws its next operation (see [`Periodic`]).
    Generate {
        node: u32,
    },
    /// A request admitted `service_time` ago takes effect (unless the node has crashed since:
    /// `life` is the node's life at admission).
    Effect {
        node: u32,
        life: u32,
        kind: Request,
        token: Token,
    },
    /// A node fault from the schedule.
    Fault {
        index: u32,
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
}

#[derive(Clone, Copy, Debug, Default)]
struct TimerSlot {
    gen: u32,
    armed: bool,
    /// The timer fell due while its node was paused and waits in the deferred list: it has fired
    /// as far as the clock is concerned, so a later change of the mapping must not move it.
    fell_due: bool,
    clock: Option<ClockKind>,
    at: crate::time::LocalTime,
    /// The true instant its queue entry is due ([`SimTime::NEVER`]: a stalled clock).
    due: SimTime,
}

struct Node<L: NodeLogic> {
    role: Role,
    logic: Option<L>,
    /// What the logic kept when the node last crashed, for its restart.
    disk: Option<L::Disk>,
    /// The node logic's own random stream.
    rng: Rng,
    /// Incremented at every crash: a pause end from an earlier life is ignored.
    life: u32,
    pause_depth: u32,
    stall_depth: u32,
    deferred: Vec<Ev<L::Msg>>,
    timers: [TimerSlot; MAX_TIMERS],
    started: bool,
    reads: Option<(Sampler, Rng)>,
    writes: Option<(Sampler, Rng)>,
    ops: Option<Periodic>,
}

/// A node's fixed-rate operations (`workload.periodic`): operation i arrives at
/// `start + jitter + i * every`, shifted by a uniform draw in `[-jitter, +jitter]`. It is drawn
/// by an [`Ev::Generate`] at `start + i * every`, the earliest it can arrive, so that one
/// pending draw suffices however far the jitter reorders operations.
pub(crate) struct Periodic {
    pub(crate) every: Dur,
    pub(crate) jitter: Dur,
    pub(crate) write_every: u32,
    pub(crate) rng: Rng,
    /// The next operation's index, and the true time of the stream's start.
    pub(crate) next: u64,
    pub(crate) start: SimTime,
}

impl<L: NodeLogic> Node<L> {
    fn up(&self) -> bool {
        self.logic.is_some()
    }
    fn running(&self) -> bool {
        self.up() && self.pause_depth == 0
    }
}

/// Counters of one run.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub events: u64,
    pub truncated: bool,
    /// Messages sent, by kind (indexed as the protocol's `KINDS`).
    pub messages_sent: Vec<u64>,
    pub messages_dropped: u64,
    pub grants: u64,
    pub renewals: u64,
    pub reads_arrived: u64,
    pub writes_arrived: u64,
    pub reads_admitted: u64,
    pub writes_admitted: u64,
    /// Reads served from local state at once ([`Effect::Read`]).
    pub reads_local: u64,
    /// Reads served after a confirmation round ([`Effect::ConfirmedRead`]), and how long they
    /// waited for it.
    pub reads_confirmed: u64,
    pub confirmed_read_waits: waits::ReadWaits,
    /// Client requests dropped because their paused node's backlog was full.
    pub requests_shed: u64,
    /// The longest stretch between two reads served (anywhere), and between two writes
    /// acknowledged to their clients (applied at the resource; in a replicated log, committed by
    /// the leader that accepted them): when clients saw reads or writes stop and resume.
    pub read_gap: Gap,
    pub write_gap: Gap,
    pub pauses: u64,
    pub crashes: u64,
    /// The recipients of the first [`GRANT_ORDER_CAP`] grants, in the order they were issued
    /// (bounded: a long run's later grants are counted in `grants` only).
    pub grant_order: Vec<NodeId>,
}

/// The longest stretch between two successive events of one kind (reads served, writes taking
/// effect), tracked in constant memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Gap {
    last: Option<SimTime>,
    /// The longest stretch so far: (from, to), the two events that bound it.
    pub longest: Option<(SimTime, SimTime)>,
}

impl Gap {
    /// One event at `t` (times never go backwards).
    pub fn event(&mut self, t: SimTime) {
        if let Some(last) = self.last {
            debug_assert!(t >= last, "events come in time order");
            if self.longest.is_none_or(|(a, b)| t.since(last) > b.since(a)) {
                self.longest = Some((last, t));
            }
        }
        self.last = Some(t);
    }
}

/// How many grant recipients [`Stats::grant_order`] keeps.
pub const GRANT_ORDER_CAP: usize = 64;

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
    nodes: Vec<Node<P::Logic>>,
    /// Every node's role, by node id (node logic sees it as its peers).
    roles: Vec<Role>,
    clocks: Vec<NodeClock>,
    net: Network,
    oracle: AuthorityOracles,
    harm: Harm,
    failovers: Failovers,
    protocol: &'o P,
    params: LeaseParams,
    service_time: Dur,
    faults: Vec<(NodeId, NodeFault)>,
    out: Out<MsgOf<P>>,
    /// The run-wide token sequence ([`Cx::next_run_token`]).
    run_token: Token,
    /// `workload.keys`.
    keys: u32,
    /// The key of the request the current call into node logic handles (0 for other calls).
    call_key: Key,
    /// [`MAX_DEFERRED`] (lowered by tests to reach it cheaply).
    max_deferred: usize,
    stats: Stats,
    next_msg_id: u64,
    /// Messages sent as two copies of which one has been delivered (`true`) or lost (`false`)
    /// and the other is still on its way: how a second delivery is told from a first.
    twins: BTreeMap<u64, bool>,
    observer: Option<&'o mut (dyn Observer + 'static)>,
    /// Clock syncs, with `clocks.uncertainty`.
    syncs: Option<Syncs>,
}

/// The clock syncs of `clocks.uncertainty`: their period, the base error their residuals are
/// drawn within, and each node's stream for them.
pub(crate) struct Syncs {
    pub every: Dur,
    pub base: LocalDur,
    pub rngs: Vec<crate::rng::Rng>,
}

impl<P: Protocol> Sim<'_, P> {
    /// Runs to the end of the scenario (or the event bound) and returns what happened.
    pub fn run(mut self) -> RunResult {
        while let Some((at, ev)) = self.queue.pop() {
            if at >= self.end {
                break;
            }
            if self.stats.events >= self.max_events {
                self.stats.truncated = true;
                break;
            }
            self.stats.events += 1;
            assert!(
                at >= self.now,
                "time went backward: {at:?} < {:?}",
                self.now
            );
            self.now = at;
            self.dispatch(ev);
        }
        let end = if self.stats.truncated {
            self.now
        } else {
            self.end
        };
        let drifts = self.clocks.iter().map(|c| c.drift()).collect();
        self.oracle.finish(end, &self.clocks);
        self.report_to_observer();
        if let Some(o) = self.observer.as_mut() {
            o.finish(end);
        }
        RunResult {
            oracle: self.oracle.into_reports(),
            harm: self.harm.counts().clone(),
            failovers: self.failovers.failovers(),
            stats: self.stats,
            duration: end.since(SimTime::ZERO),
            drifts,
            kinds: <MsgOf<P> as ProtocolMessage>::KINDS,
            outside_interval_ns: self.syncs.as_ref().map(|_| {
                self.clocks
                    .iter()
                    .map(|c| c.max_outside_interval_ns(end))
                    .collect()
            }),
        }
    }

    fn dispatch(&mut self, ev: Ev<MsgOf<P>>) {
        match ev {
            Ev::Fault { index } => {
                let (node, fault) = self.faults[index as usize];
                self.apply_fault(node, fault);
            }
            Ev::PauseEnd { node, life, stall } => self.end_pause(node as NodeId, life, stall),
            Ev::Sync { node } => self.sync_clock(node as NodeId),
            Ev::Arrival {
                node,
                kind,
                periodic,
            } => {
                let n = node as NodeId;
                if !periodic {
                    self.schedule_arrival(n, kind.is_write());
                }
                if kind.is_write() {
                    self.stats.writes_arrived += 1;
                } else {
                    self.stats.reads_arrived += 1;
                }
                self.route(n, ev);
            }
            Ev::Generate { node } => self.generate(node as NodeId),
            Ev::Deliver {
                to,
                from,
                msg,
                id,
                twin,
            } => {
                if self.net.is_cut(self.now, from as NodeId, to as NodeId) {
                    self.stats.messages_dropped += 1;
                    self.twin_consumed(twin, id, false);
                    self.emit_drop(from, to, msg, id, DropReason::Cut);
                    return;
                }
                self.route(to as NodeId, ev);
            }
            Ev::Timer { node, .. } | Ev::Effect { node, .. } | Ev::Command { node, .. } => {
                self.route(node as NodeId, ev)
            }
        }
    }

    /// Hands a node-bound event to its node: now, later (paused), or never (down).
    fn route(&mut self, n: NodeId, ev: Ev<MsgOf<P>>) {
        let node = &mut self.nodes[n];
        if !node.up() {
            if let Ev::Deliver {
                from,
                to,
                msg,
                id,
                twin,
            } = ev
            {
                self.stats.messages_dropped += 1;
                self.twin_consumed(twin, id, false);
                self.emit_drop(from, to, msg, id, DropReason::Down);
            }
            return;
        }
        if node.pause_depth > 0 {
            if node.deferred.len() >= self.max_deferred {
                match ev {
                    Ev::Arrival { .. } => {
                        self.stats.requests_shed += 1;
                        return;
                    }
                    Ev::Deliver {
                        from,
                        to,
                        msg,
                        id,
                        twin,
                    } => {
                        self.stats.messages_dropped += 1;
                        self.twin_consumed(twin, id, false);
                        self.emit_drop(from, to, msg, id, DropReason::Backlog);
                        return;
                    }
                    _ => {}
                }
            }
            let node = &mut self.nodes[n];
            if let Ev::Timer { timer, gen, .. } = ev {
                let slot = &mut node.timers[timer as usize];
                if slot.armed && slot.gen == gen {
                    slot.fell_due = true;
                }
            }
            node.deferred.push(ev);
            return;
        }
        self.handle(n, ev);
    }

    fn handle(&mut self, n: NodeId, ev: Ev<MsgOf<P>>) {
        match ev {
            Ev::Deliver {
                from,
                msg,
                id,
                twin,
                ..
            } => {
                if self.observer.is_some() {
                    let kind = TraceKind::Deliver {
                        from: from as NodeId,
                        kind: kind_name(&msg),
                        id,
                        token: msg.token(),
                    };
                    self.emit(n, kind);
                }
                let duplicate = self.twin_consumed(twin, id, true);
                self.call(n, false, duplicate, |logic, cx, out| {
                    logic.on_message(cx, from as NodeId, msg, out)
                });
            }
            Ev::Timer { timer, gen, .. } => {
                let slot = &mut self.nodes[n].timers[timer as usize];
                if !slot.armed || slot.gen != gen {
                    return; // cancelled, re-armed or re-mapped since
                }
                slot.armed = false;
                slot.fell_due = false;
                self.call(n, false, false, |logic, cx, out| {
                    logic.on_timer(cx, timer, out)
                });
            }
            Ev::Arrival { kind, .. } => {
                let checked = self.with_cx(n, false, false, kind.key(), |logic, cx, _| {
                    logic.check(cx, kind)
                });
                let Some(token) = checked else {
                    if self.observer.is_some() {
                        let write = kind.is_write();
                        self.emit(n, TraceKind::Rejected { write });
                    }
                    return;
                };
                if kind.is_write() {
                    self.stats.writes_admitted += 1;
                } else {
                    self.stats.reads_admitted += 1;
                }
                if self.service_time.ns() == 0 {
                    self.take_effect(n, kind, token);
                } else {
                    let ev = Ev::Effect {
                        node: n as u32,
                        life: self.nodes[n].life,
                        kind,
                        token,
                    };
                    self.queue.push(self.now + self.service_time, ev);
                }
            }
            Ev::Effect {
                kind, token, life, ..
            } => {
                if life == self.nodes[n].life {
                    self.take_effect(n, kind, token);
                }
            }
            Ev::Command { command, .. } => {
                self.call(n, false, false, |logic, cx, out| {
                    logic.on_command(cx, command, out)
                });
            }
            Ev::Fault { .. } | Ev::PauseEnd { .. } | Ev::Generate { .. } | Ev::Sync { .. } => {
                unreachable!("not node-bound")
            }
        }
    }

    /// A request admitted under `token` takes effect: node logic serves the read or sends the
    /// write.
    fn take_effect(&mut self, n: NodeId, kind: Request, token: Token) {
        self.with_cx(n, false, false, kind.key(), |logic, cx, out| {
            logic.on_request(cx, kind, token, out)
        });
        self.after_call(n);
    }

    /// Node `n` served a read admitted under `token`, taken up when the register was at
    /// `as_of.0` and the newest token was `as_of.1`: judge it as of then and show it.
    fn served_read(&mut self, n: NodeId, token: Token, view: Option<u64>, as_of: (u64, Token)) {
        self.stats.read_gap.event(self.now);
        let (zombie, stale) = match view {
            None => self.harm.read(n, token, as_of),
            Some(version) => self.harm.read_at(token, version, as_of),
        };
        self.failovers.read(token, self.now);
        if self.observer.is_some() {
            let kind = TraceKind::Read {
                token,
                zombie,
                stale,
            };
            self.emit(n, kind);
        }
    }

    /// Runs `f` on node `n`'s logic with its context (the node must be up).
    /// `key`: the key of the request being handled (0 for any other call), which the stamp
    /// judges reads by.
    fn with_cx<R>(
        &mut self,
        n: NodeId,
        restarted: bool,
        duplicate: bool,
        key: Key,
        f: impl FnOnce(&mut P::Logic, &mut Cx, &mut Out<MsgOf<P>>) -> R,
    ) -> R {
        self.call_key = key;
        let clock = &self.clocks[n];
        let mono = clock.mono(self.now);
        let wall = clock.wall_of(mono);
        let tt = if clock.has_bound() {
            TtNow {
                earliest: clock.read(ClockKind::TtEarliest, self.now),
                latest: clock.read(ClockKind::TtLatest, self.now),
            }
        } else {
            TtNow::exact(wall)
        };
        let node = &mut self.nodes[n];
        let mut cx = Cx {
            node: n,
            roles: &self.roles,
            mono,
            wall,
            tt,
            restarted,
            incarnation: node.life,
            duplicate,
            rng: &mut node.rng,
            run_token: &mut self.run_token,
            stamp: Stamp::new(
                self.now,
                self.harm.version_of(key),
                self.harm.latest_token(),
            ),
        };
        let logic = node.logic.as_mut().expect("node is up");
        f(logic, &mut cx, &mut self.out)
    }

    /// Calls into node `n`'s logic with `f`, then carries out what it asked for.
    fn call(
        &mut self,
        n: NodeId,
        restarted: bool,
        duplicate: bool,
        f: impl FnOnce(&mut P::Logic, &mut Cx, &mut Out<MsgOf<P>>),
    ) {
        self.with_cx(n, restarted, duplicate, 0, f);
        self.after_call(n);
    }

    /// Carries out the effects of a call into node `n`'s logic and tells the oracle what changed.
    fn after_call(&mut self, n: NodeId) {
        let beliefs = self.nodes[n].logic.as_ref().expect("node is up").beliefs();
        let mut out = std::mem::take(&mut self.out);
        for effect in out.drain() {
            match effect.with_clock() {
                Effect::Send { to, msg } => self.send(n, to, msg),
                Effect::SetTimer { timer, clock, at } => {
                    let slot = &mut self.nodes[n].timers[timer as usize];
                    slot.gen = slot.gen.wrapping_add(1);
                    slot.armed = true;
                    slot.fell_due = false;
                    slot.clock = Some(clock);
                    slot.at = at;
                    self.schedule_timer(n, timer);
                }
                Effect::CancelTimer { timer } => {
                    let slot = &mut self.nodes[n].timers[timer as usize];
                    slot.gen = slot.gen.wrapping_add(1);
                    slot.armed = false;
                    slot.fell_due = false;
                }
                Effect::Issued { .. } | Effect::Renewed { .. } => {
                    unreachable!("named with their clock above")
                }
                Effect::IssuedOn {
                    token,
                    to,
                    clock,
                    until,
                } => {
                    self.stats.grants += 1;
                    if self.stats.grant_order.len() < GRANT_ORDER_CAP {
                        self.stats.grant_order.push(to);
                    }
                    self.harm.issued(token);
                    self.failovers.issued(token, to, self.now);
                    if self.observer.is_some() {
                        let until = self.clocks[n].reaches(clock, until, self.now);
                        self.emit(n, TraceKind::Grant { token, to, until });
                    }
                }
                Effect::RenewedOn {
                    token,
                    clock,
                    until,
                } => {
                    self.stats.renewals += 1;
                    if self.observer.is_some() {
                        let until = self.clocks[n].reaches(clock, until, self.now);
                        self.emit(n, TraceKind::Renewed { token, until });
                    }
                }
                Effect::Holding { token, version } => self.harm.holding(n, token, version),
                Effect::Read { token } => {
                    self.stats.reads_local += 1;
                    // Served at once, in the call that took it up (of key `call_key`).
                    let now = (
                        self.harm.version_of(self.call_key),
                        self.harm.latest_token(),
                    );
                    self.served_read(n, token, None, now);
                }
                Effect::ConfirmedRead { token, since } => {
                    self.stats.reads_confirmed += 1;
                    let wait = self.now.since(since.time());
                    self.stats.confirmed_read_waits.record(wait);
                    self.served_read(n, token, None, since.harm_state());
                }
                Effect::LogRead {
                    token,
                    version,
                    since,
                } => {
                    if since.time() == self.now {
                        self.stats.reads_local += 1;
                    } else {
                        self.stats.reads_confirmed += 1;
                        let wait = self.now.since(since.time());
                        self.stats.confirmed_read_waits.record(wait);
                    }
                    self.served_read(n, token, Some(version), since.harm_state());
                }
                Effect::WriteSent { token } => {
                    let zombie = self.harm.write_sent(token);
                    if self.observer.is_some() {
                        self.emit(n, TraceKind::WriteSent { token, zombie });
                    }
                }
                Effect::WriteApplied { writer, token } => {
                    self.stats.write_gap.event(self.now);
                    let unsafe_write = self.harm.write_applied(writer, token, None);
                    self.failovers.write(token, self.now);
                    self.emit_write(n, writer, token, true, unsafe_write, false);
                }
                Effect::WriteFenced { writer, token } => {
                    self.harm.write_fenced();
                    self.emit_write(n, writer, token, false, false, false);
                }
                Effect::DuplicateWrite { writer, token } => {
                    self.harm.duplicate_write();
                    self.emit_write(n, writer, token, false, false, true);
                }
                Effect::Committed {
                    index,
                    writer,
                    token,
                    key,
                } => {
                    if self.harm.first_commit(index, token) {
                        // Its client hears of it only from the leader that accepted it; one
                        // that a later leader commits was reported failed (or timed out).
                        if writer == n {
                            self.stats.write_gap.event(self.now);
                        }
                        let unsafe_write = self.harm.write_applied(writer, token, Some(key));
                        self.failovers.write(token, self.now);
                        self.emit_write(n, writer, token, true, unsafe_write, false);
                    }
                }
            }
        }
        self.out = out;
        // A node that believes must have something pending that will renew or end the belief
        // (a renewal, a deadline); otherwise it would believe forever without asking anyone.
        assert!(
            beliefs == Beliefs::NONE || self.nodes[n].timers.iter().any(|t| t.armed),
            "node {n} believes {beliefs:?} with no timer pending"
        );
        if beliefs != self.oracle.beliefs(n) {
            self.oracle.settle(n, self.now, &self.clocks[n]);
            self.oracle.set_beliefs(n, beliefs);
            if self.oracle.maybe_flush(self.now, &self.clocks) {
                self.report_to_observer();
            }
        }
    }

    /// Passes what the oracle has swept since last time to the observer.
    fn report_to_observer(&mut self) {
        if let Some(o) = self.observer.as_mut() {
            self.oracle.report(&mut **o);
        }
    }

    /// Tells the observer (there must be one) that `kind` happened at node `n` now.
    fn emit(&mut self, n: NodeId, kind: TraceKind) {
        let clock = &self.clocks[n];
        let mono = clock.mono(self.now);
        let e = TraceEvent {
            t: self.now,
            node: n,
            mono,
            wall: clock.wall_of(mono),
            kind,
        };
        if let Some(o) = self.observer.as_mut() {
            o.event(&e);
        }
    }

    /// Tells the observer that a write from `writer` reached the resource at node `n`.
    fn emit_write(
        &mut self,
        n: NodeId,
        writer: NodeId,
        token: Token,
        applied: bool,
        unsafe_write: bool,
        duplicate: bool,
    ) {
        if self.observer.is_some() {
            let kind = TraceKind::WriteArrived {
                writer,
                token,
                applied,
                unsafe_write,
                duplicate,
            };
            self.emit(n, kind);
        }
    }

    fn emit_drop(&mut self, from: u32, to: u32, msg: MsgOf<P>, id: u64, reason: DropReason) {
        if self.observer.is_some() {
            let kind = TraceKind::Drop {
                from: from as NodeId,
                to: to as NodeId,
                kind: kind_name(&msg),
                id,
                reason,
            };
            self.emit(to as NodeId, kind);
        }
    }

    fn send(&mut self, from: NodeId, to: NodeId, msg: MsgOf<P>) {
        let kind = msg.kind();
        self.stats.messages_sent[kind] += 1;
        let id = self.next_msg_id;
        self.next_msg_id += 1;
        let fate = self.net.send(self.now, from, to, kind);
        if self.observer.is_some() {
            let arrives = fate.first.map(|d| self.now + d);
            let token = msg.token();
            self.emit(
                from,
                TraceKind::Send {
                    to,
                    kind: kind_name(&msg),
                    id,
                    token,
                    arrives,
                },
            );
        }
        let ev = Ev::Deliver {
            to: to as u32,
            from: from as u32,
            msg,
            id,
            twin: fate.first.is_some() && fate.copy.is_some(),
        };
        match fate.first {
            Some(d) => self.queue.push(self.now + d, ev),
            None => {
                self.stats.messages_dropped += 1;
                self.emit_drop(from as u32, to as u32, msg, id, DropReason::Lost);
            }
        }
        if let Some(d) = fate.copy {
            self.queue.push(self.now + d, ev);
        }
    }

    /// One copy of message `id` was delivered (`delivered`) or lost on the way. Returns whether
    /// this is the second copy and the first was delivered: a duplicate delivery.
    fn twin_consumed(&mut self, twin: bool, id: u64, delivered: bool) -> bool {
        if !twin {
            return false;
        }
        match self.twins.remove(&id) {
            Some(first_delivered) => first_delivered && delivered,
            None => {
                self.twins.insert(id, delivered);
                false
            }
        }
    }

    /// Maps timer `timer` of node `n` to true time and queues it (if its clock can reach it).
    fn schedule_timer(&mut self, n: NodeId, timer: TimerId) {
        let due = self.timer_due(n, timer);
        self.queue_timer(n, timer, due);
    }

    /// When timer `timer` of node `n` falls due under the current clock mapping.
    fn timer_due(&self, n: NodeId, timer: TimerId) -> SimTime {
        let slot = &self.nodes[n].timers[timer as usize];
        let clock = slot.clock.expect("an armed timer has a clock");
        self.clocks[n].reaches(clock, slot.at, self.now)
    }

    /// Queues timer `timer` of node `n` at `due` under its current generation (never, if a
    /// stalled clock cannot reach it).
    fn queue_timer(&mut self, n: NodeId, timer: TimerId, due: SimTime) {
        let slot = &mut self.nodes[n].timers[timer as usize];
        slot.due = due;
        if due != SimTime::NEVER {
            let ev = Ev::Timer {
                node: n as u32,
                timer,
                gen: slot.gen,
            };
            self.queue.push(due, ev);
        }
    }

    /// The mapping of node `n`'s clocks changed: re-map its pending timers (`wall_only`: those
    /// on the clocks a wall step moves). A timer that already fell due during a pause keeps its place in the
    /// deferred list: its clock reached the deadline before the change. A timer whose due
    /// instant did not move keeps its queue entry, and so its place among events of that
    /// instant: a change that moves nothing changes nothing.
    fn remap_timers(&mut self, n: NodeId, wall_only: bool) {
        for timer in 0..MAX_TIMERS {
            let slot = self.nodes[n].timers[timer];
            let moved = !wall_only || slot.clock.is_some_and(ClockKind::follows_wall);
            if !slot.armed || slot.fell_due || !moved {
                continue;
            }
            let due = self.timer_due(n, timer as TimerId);
            if due == slot.due {
                continue;
            }
            let slot = &mut self.nodes[n].timers[timer];
            slot.gen = slot.gen.wrapping_add(1);
            self.queue_timer(n, timer as TimerId, due);
        }
    }

    /// Draws the next arrival of node `n`'s Poisson stream of writes (or reads), and its key.
    fn schedule_arrival(&mut self, n: NodeId, write: bool) {
        let node = &mut self.nodes[n];
        let stream = if write {
            node.writes.as_mut()
        } else {
            node.reads.as_mut()
        };
        if let Some((sampler, rng)) = stream {
            let gap = sampler.sample(rng);
            let key = draw_key(rng, self.keys);
            let kind = if write {
                Request::Write { key }
            } else {
                Request::Read { key }
            };
            self.queue.push(
                self.now + gap,
                Ev::Arrival {
                    node: n as u32,
                    kind,
                    periodic: false,
                },
            );
        }
    }

    /// Node `n`'s fixed-rate stream draws its next operation (its jitter, its key) and the
    /// draw after it.
    fn generate(&mut self, n: NodeId) {
        use rand::RngExt;
        let keys = self.keys;
        let Some(ops) = self.nodes[n].ops.as_mut() else {
            return;
        };
        let i = ops.next;
        ops.next += 1;
        let j = ops.jitter.ns();
        let shift = if j > 0 {
            ops.rng.random_range(0..=2 * j)
        } else {
            0
        };
        let key = draw_key(&mut ops.rng, keys);
        let write = ops.write_every > 0 && i % u64::from(ops.write_every) == 0;
        let kind = if write {
            Request::Write { key }
        } else {
            Request::Read { key }
        };
        // Drawn at start + i * every (now): it arrives at that plus a shift in [0, 2 jitter].
        // One that would arrive after the run is never queued: a jitter far beyond the run
        // must not fill the queue with requests that never arrive.
        let next = ops.start + Dur::from_ns(ops.every.ns().saturating_mul(i as i64 + 1));
        let at = self.now + Dur::from_ns(shift);
        if at < self.end {
            self.queue.push(
                at,
                Ev::Arrival {
                    node: n as u32,
                    kind,
                    periodic: true,
                },
            );
        }
        if next < self.end {
            self.queue.push(next, Ev::Generate { node: n as u32 });
        }
    }

    fn set_running(&mut self, n: NodeId) {
        self.oracle.settle(n, self.now, &self.clocks[n]);
        self.oracle.set_running(n, self.nodes[n].running());
    }

    fn apply_fault(&mut self, n: NodeId, fault: NodeFault) {
        match fault {
            NodeFault::Start | NodeFault::Restart => {
                let before_start = matches!(fault, NodeFault::Restart) && !self.nodes[n].started;
                if self.nodes[n].up() || before_start {
                    return; // running already, or a restart before the node's own start
                }
                let restarted = self.nodes[n].started;
                let first_start = !self.nodes[n].started;
                self.nodes[n].started = true;
                let node = &mut self.nodes[n];
                let disk = node.disk.take().unwrap_or_default();
                let logic = self.protocol.node_logic(n, node.role, &self.params, disk);
                node.logic = Some(logic);
                self.set_running(n);
                if self.observer.is_some() {
                    self.emit(n, TraceKind::Start { restarted });
                }
                self.call(n, restarted, false, |logic, cx, out| {
                    logic.on_start(cx, out)
                });
                if first_start {
                    self.schedule_arrival(n, false);
                    self.schedule_arrival(n, true);
                    if let Some(ops) = self.nodes[n].ops.as_mut() {
                        ops.start = self.now;
                        self.queue.push(self.now, Ev::Generate { node: n as u32 });
                    }
                }
            }
            NodeFault::Crash => {
                if !self.nodes[n].up() {
                    return;
                }
                self.stats.crashes += 1;
                self.oracle.settle(n, self.now, &self.clocks[n]);
                self.oracle.set_beliefs(n, Beliefs::NONE);
                let node = &mut self.nodes[n];
                node.disk = node.logic.take().map(NodeLogic::into_disk);
                node.life += 1;
                node.pause_depth = 0;
                for ev in std::mem::take(&mut node.deferred) {
                    if let Ev::Deliver { twin, id, .. } = ev {
                        self.twin_consumed(twin, id, false);
                    }
                }
                let node = &mut self.nodes[n];
                for slot in node.timers.iter_mut() {
                    slot.gen = slot.gen.wrapping_add(1);
                    slot.armed = false;
                    slot.fell_due = false;
                }
                self.harm.forget(n);
                self.set_running(n);
                if self.observer.is_some() {
                    self.emit(n, TraceKind::Crash);
                }
            }
            NodeFault::Pause {
                duration,
                kind,
                clock,
            } => {
                if !self.nodes[n].up() {
                    return;
                }
                self.stats.pauses += 1;
                let depth = &mut self.nodes[n].pause_depth;
                *depth = depth.checked_add(1).expect("pause depth never wraps");
                self.set_running(n);
                let stall = kind == PauseKind::VmFreeze && clock == FreezeClock::Stall;
                if stall {
                    let depth = &mut self.nodes[n].stall_depth;
                    *depth = depth.checked_add(1).expect("stall depth never wraps");
                    if self.nodes[n].stall_depth == 1 {
                        self.oracle.settle(n, self.now, &self.clocks[n]);
                        self.clocks[n].stall(self.now);
                        self.remap_timers(n, false);
                    }
                }
                if self.observer.is_some() {
                    let until = self.now + duration;
                    self.emit(n, TraceKind::PauseBegin { kind, stall, until });
                }
                let life = self.nodes[n].life;
                let ev = Ev::PauseEnd {
                    node: n as u32,
                    life,
                    stall,
                };
                self.queue.push(self.now + duration, ev);
            }
            NodeFault::ClockStep { by } => {
                self.oracle.settle(n, self.now, &self.clocks[n]);
                self.clocks[n].step_wall(self.now, by);
                self.remap_timers(n, true);
                if self.observer.is_some() {
                    self.emit(n, TraceKind::ClockStep { by });
                }
            }
            NodeFault::DriftChange { drift } => {
                self.oracle.settle(n, self.now, &self.clocks[n]);
                self.clocks[n].set_drift(self.now, drift);
                self.remap_timers(n, false);
                if self.observer.is_some() {
                    self.emit(n, TraceKind::DriftChange { drift });
                }
            }
            NodeFault::Command(command) => self.route(
                n,
                Ev::Command {
                    node: n as u32,
                    command,
                },
            ),
        }
    }

    /// A clock sync of node `n` (`clocks.uncertainty`): its wall clock is set to true time plus
    /// a residual within the base error, unless a stalled freeze holds the clock (the sync
    /// daemon is frozen with it); the residual is drawn either way, so that the stream does not
    /// depend on the freeze. The next sync is one period later.
    fn sync_clock(&mut self, n: NodeId) {
        use rand::RngExt;
        let syncs = self
            .syncs
            .as_mut()
            .expect("syncs are queued only with uncertainty");
        let base = syncs.base.ns();
        let residual = LocalDur::from_ns(syncs.rngs[n].random_range(-base..=base));
        let next = self.now + syncs.every;
        if self.nodes[n].stall_depth == 0 {
            self.oracle.settle(n, self.now, &self.clocks[n]);
            let before = self.clocks[n].wall(self.now);
            self.clocks[n].sync(self.now, residual);
            self.remap_timers(n, true);
            if self.observer.is_some() {
                let by = self.clocks[n].wall(self.now) - before;
                self.emit(n, TraceKind::ClockStep { by });
            }
        }
        if next < self.end {
            self.queue.push(next, Ev::Sync { node: n as u32 });
        }
    }

    fn end_pause(&mut self, n: NodeId, life: u32, stall: bool) {
        if stall {
            // The VM's clock resumes whatever became of the process.
            let depth = &mut self.nodes[n].stall_depth;
            *depth = depth
                .checked_sub(1)
                .expect("a stall ends only after it began");
            if self.nodes[n].stall_depth == 0 {
                self.oracle.settle(n, self.now, &self.clocks[n]);
                self.clocks[n].resume(self.now);
                self.remap_timers(n, false);
            }
        }
        let node = &mut self.nodes[n];
        if node.life != life || node.pause_depth == 0 {
            return;
        }
        node.pause_depth -= 1;
        if self.observer.is_some() {
            self.emit(n, TraceKind::PauseEnd);
        }
        if self.nodes[n].pause_depth > 0 {
            return;
        }
        self.set_running(n);
        // Handle what fell due meanwhile, in the order it fell due.
        let mut deferred = std::mem::take(&mut self.nodes[n].deferred);
        for ev in deferred.drain(..) {
            if !self.nodes[n].up() {
                break;
            }
            self.handle(n, ev);
        }
        self.nodes[n].deferred = deferred;
    }
}

/// The name of a message's kind (for traces).
/// A uniform key in `[0, keys)`, drawn only when there is more than one (so that a one-key
/// workload's streams are what they were before keys existed).
fn draw_key(rng: &mut Rng, keys: u32) -> Key {
    use rand::RngExt;
    if keys > 1 {
        rng.random_range(0..keys)
    } else {
        0
    }
}

fn kind_name<M: ProtocolMessage>(msg: &M) -> &'static str {
    M::KINDS[msg.kind()]
}

#[cfg(test)]
mod tests {
    use crate::strategy::from_spec;
    use crate::Scenario;

    /// A paused node's backlog beyond the cap sheds client requests and drops messages (a full
    /// socket backlog), and counts both. With the cap lowered to 10: a's Acquire leaves at 0 and
    /// the grant is sent back at 1 ms; a pauses over [1 ms, 50 ms) while reads arrive at
    /// 100,000/s, so about 100 arrive before the grant does at 2 ms and the 10 places are long
    /// taken: the grant is dropped (the run's only lost message), and every read past the tenth
    /// is shed.
    #[test]
    fn a_full_backlog_sheds_requests_and_drops_messages() {
        let s = Scenario::from_ron(
            r#"Scenario(
                seed: 3,
                duration: "100ms",
                lease: (duration: "10s"),
                strategy: TwoSided(holder_margin: "10ms"),
                nodes: [(name: "lock", role: Grantor), (name: "a", role: Contender)],
                network: (delay: Fixed("1ms")),
                workload: (reads_per_second: 100000.0),
                faults: [Pause(node: "a", at: "1ms", duration: "49ms", kind: Gc)],
            )"#,
        )
        .unwrap();
        let strategy = from_spec(&s.strategy).unwrap();
        assert!(strategy.check(&s).is_empty());
        let protocol =
            crate::strategy::Settings::build(&crate::strategy::base::settings::TwoSided {
                holder_margin: crate::time::LocalDur::from_ms(10),
                grantor_margin: crate::time::LocalDur::ZERO,
            });
        let mut sim = super::build(&s, &protocol, None);
        sim.max_deferred = 10;
        let r = sim.run();
        assert_eq!(r.stats.messages_dropped, 1);
        assert_eq!(r.stats.grants, 1);
        assert!(r.stats.requests_shed >= 50, "{}", r.stats.requests_shed);
        // Every read that arrived was shed, or handled (and rejected: a never holds).
        assert_eq!(r.stats.reads_admitted, 0);
        assert!(r.stats.requests_shed < r.stats.reads_arrived);
    }
}
