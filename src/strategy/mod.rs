//! Lease protocols as code: the [`Protocol`] and [`NodeLogic`] traits, and the built-in ones.
//!
//! A protocol brings its own message type ([`ProtocolMessage`]: `Clone`, moved through the
//! engine and cloned only when the network delivers a message twice), checks that a scenario's
//! roles fit it, and builds one [`NodeLogic`] per node. Node logic is pure: it sees the node's
//! clock readings, its peers and a random stream of its own in a [`Cx`], and one input (start,
//! message, timer, client request), and it answers into an [`Out`] in two kinds: [`Action`]s,
//! what it asks the engine to do (send a message, arm or cancel a timer), and [`Fact`]s, what it
//! reports for the oracle (grants issued, reads served, writes applied). It never reads a clock
//! of its own, so the engine controls everything it sees. It also says what it believes
//! ([`Beliefs`]): the oracle, not the protocol, turns that into exact intervals of true time.
//!
//! The engine is generic over the protocol (monomorphised: a message is never boxed); the
//! object-safe [`Strategy`] hides that type for the command line, and the engine implements it
//! for every protocol. A protocol owns its settings ([`Settings`], in its folder's
//! `settings.rs`): the fields a scenario's `strategy: Name(...)` reads, the text they are
//! written back as, their checks, and what `sweep`, `compare` and `explore` ask of it. A
//! [`Registry`] finds a protocol by that name; the built-in ones are registered with the same
//! call as a program's own ([`register_builtins`]). So adding a protocol is one folder under
//! `src/strategy/` and one registration line, and nothing outside them names it: not the
//! scenario schema, the engine, `sweep`, `compare` or the command line. A program of its own
//! registers one the same way (the command line's `cli::Cli::protocol`;
//! `examples/custom-protocol/` in the repository is a whole one).
//!
//! # What a protocol must report
//!
//! The oracle judges harm from facts, so a protocol must report them truthfully
//! ([`Out::report`]):
//! - [`Fact::Issued`] whenever an authority hands out a new exclusive grant (the token orders
//!   grants: every older token is superseded); [`Fact::Renewed`] when it extends one.
//! - [`Fact::Holding`] when a node starts to hold under a token.
//! - For every request [`NodeLogic::on_request`] is handed, exactly one of: [`Fact::Read`] for
//!   a read served at once, with the value the node's state holds for the key;
//!   [`Fact::WriteSent`] for a write that leaves the node for the resource (then send it, with
//!   the request's key and value); [`Fact::Appended`] for a write appended to a replicated log;
//!   [`Fact::Waiting`] for a read the node keeps (with [`Cx::stamp`]) until it confirms its
//!   authority or its state catches up, which it serves later with [`Fact::ConfirmedRead`] or
//!   gives up with [`Fact::Refused`], naming the stamp; or [`Fact::Refused`] for one the node
//!   will not serve.
//! - At the resource: [`Fact::WriteApplied`], [`Fact::WriteFenced`] or
//!   [`Fact::DuplicateWrite`] for each write that arrives ([`Register`] decides which), and an
//!   answer ([`Ack`]) to the writer of each write applied, which reports [`Fact::WriteAcked`]
//!   when it arrives; or, for a replicated log, [`Fact::Committed`] for each write entry a
//!   leader commits.
//!
//! A write is acknowledged when its writer hears from the resource that it took effect, or when
//! a quorum commits it (the leader that accepted it answers its client then; one a later leader
//! commits, its client learns of at the new leader): that is the write's response in the
//! history. A write never acknowledged may have taken effect or not, as a client that timed
//! out cannot tell.
//!
//! A read reports what it served, not why: the value its node's state held for its key (its
//! copy of the register, its applied log). The oracle judges it from the client history alone
//! (by linearizability), whatever the protocol. A node's state may hold a write that has not
//! taken effect only if the node wrote it (its latest write of the key, and none of its earlier
//! writes of the key still on its way: the oracle places a write read before it took effect
//! right after the writes that took effect before, so an earlier one landing later would make
//! the read look stale); any other value it holds took effect somewhere first. The built-in
//! protocols take a write into a copy only once it took effect (from the resource's answer, or
//! on commit).
//!
//! In debug builds the engine checks, after every call, the rules a forgotten fact would break
//! (a protocol that breaks one fails a `debug_assert!` there rather than misleading the oracle):
//! - A node whose [`NodeLogic::beliefs`] show an exclusive authority ([`Claim::Exclusive`])
//!   under a token it did not hold before the call has reported, in that call or earlier in
//!   the same life (since its last start), [`Fact::Holding`] for that token, or issued it to
//!   itself ([`Fact::Issued`] with `to` itself: a leader whose term is its grant).
//! - Each call to [`NodeLogic::on_request`] reports exactly one disposition of its request, as
//!   listed above; a fact that disposes of a request ([`Fact::Read`], [`Fact::WriteSent`],
//!   [`Fact::Appended`], [`Fact::Waiting`]) is reported by no other call. A
//!   [`Fact::ConfirmedRead`], and a [`Fact::Refused`] outside that call, each settle one read
//!   the node kept, named by its stamp. A crash settles every read the node kept.
//! - A read's value was written by a write that took effect, or by the node itself (its
//!   latest write of the key), or is [`INITIAL`].
//!
//! ```
//! use leasesim::strategy::{Beliefs, Cx, NodeLogic, Out, ProtocolMessage, Request, TimerId};
//! use leasesim::msg::{NodeId, Token};
//!
//! /// A message type with one kind.
//! #[derive(Clone, Debug)]
//! struct Ping;
//! impl ProtocolMessage for Ping {
//!     const KINDS: &'static [&'static str] = &["Ping"];
//!     fn kind(&self) -> usize { 0 }
//! }
//!
//! /// A node that never holds anything and serves nothing.
//! struct Idle;
//! impl NodeLogic for Idle {
//!     type Msg = Ping;
//!     type Disk = ();
//!     fn on_start(&mut self, _: &mut Cx, _: &mut Out<Ping>) {}
//!     fn on_message(&mut self, _: &mut Cx, _: NodeId, _: Ping, _: &mut Out<Ping>) {}
//!     fn on_timer(&mut self, _: &mut Cx, _: TimerId, _: &mut Out<Ping>) {}
//!     fn check(&self, _: &Cx, _: Request) -> Option<Token> { None }
//!     fn on_request(&mut self, _: &mut Cx, _: Request, _: Token, _: &mut Out<Ping>) {}
//!     fn beliefs(&self) -> Beliefs { Beliefs::NONE }
//!     fn into_disk(self) {}
//! }
//! ```

pub mod base;
pub mod chubby;
pub mod consul;
pub mod etcd;
pub mod k8s;
pub mod leaseguard;
pub mod raft;
pub mod raft_core;
pub mod redlock;
pub mod register;
pub mod registry;
pub mod roles;
pub mod rules;
pub mod service_node;
pub mod settings;
pub mod zookeeper;

use crate::clock::ClockKind;
use crate::msg::{NodeId, Token};
use crate::rng::Rng;
use crate::scenario::{GrantorRestart, Role, Scenario, StrategyChecks, StrategySpec};
use crate::time::{LocalDur, LocalTime, SimTime};
use crate::trace::Observer;
use std::any::Any;

pub use crate::net::Transport;
pub use crate::oracle::belief::{Authorities, Belief, Beliefs, Claim};
pub use crate::scenario::StrategyError;
pub use crate::scenario::Thread;
pub use register::{Ack, Register, Store};
pub use registry::Registry;
pub use rules::{Expiry, LeaseStart, Rules, Validity};
pub use settings::{Margin, Resolved, Settings};

/// A node's timers are named by small integers of the logic's choosing (at most [`MAX_TIMERS`]).
pub type TimerId = u8;
/// How many distinct timers one node's logic may have pending at once.
pub const MAX_TIMERS: usize = 8;
/// How many message kinds one protocol may have (network filters keep them in a bit set).
pub const MAX_KINDS: usize = 32;

/// A protocol's message. The engine moves it from sender to receiver, and clones it only when
/// the network delivers two copies; a small one (most are a few integers) is cheapest.
pub trait ProtocolMessage: Clone + std::fmt::Debug + Send + 'static {
    /// The names of the message kinds, as scenario faults (`kinds: [Renew]`) and traces name
    /// them. At most [`MAX_KINDS`].
    const KINDS: &'static [&'static str];
    /// This message's kind: an index into [`Self::KINDS`].
    fn kind(&self) -> usize;
    /// The fencing token the message carries, if any (shown in traces).
    fn token(&self) -> Option<Token> {
        None
    }
}

/// An operator's instruction to a node's logic, from the scenario's fault schedule
/// (`StepDown`, `TransferLeader`). A protocol names the ones it understands
/// ([`Protocol::commands`]); a scenario that gives it any other is rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Command {
    /// A leader steps down.
    StepDown,
    /// The leader hands leadership to `to` (Raft's TimeoutNow). Every node gets it; only the
    /// leader acts.
    TransferLeader { to: NodeId },
}

impl Command {
    /// The name of the fault that gives it.
    pub fn name(&self) -> &'static str {
        match self {
            Command::StepDown => "StepDown",
            Command::TransferLeader { .. } => "TransferLeader",
        }
    }
}

pub use crate::msg::{Key, Value, INITIAL};

/// A client request: a read of one key, or a write of a value to one key. Every write's value
/// is its own (no two writes of a run write the same value), so that a read's value names the
/// write it saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Request {
    Read { key: Key },
    Write { key: Key, value: Value },
}

impl Request {
    /// The key it reads or writes.
    pub fn key(self) -> Key {
        match self {
            Request::Read { key } | Request::Write { key, .. } => key,
        }
    }

    pub fn is_write(self) -> bool {
        matches!(self, Request::Write { .. })
    }
}

/// What node logic sees of the world when it runs.
pub struct Cx<'a> {
    pub node: NodeId,
    /// Every node's role, by node id: how a node finds its peers.
    pub roles: &'a [Role],
    /// The node's monotonic clock now.
    pub mono: LocalTime,
    /// The node's wall clock now.
    pub wall: LocalTime,
    /// TT.now(): the node's wall clock less and plus its error bound now (`clocks.uncertainty`;
    /// without it, both are the wall clock).
    pub tt: TtNow,
    /// True when the node is starting again after a crash.
    pub restarted: bool,
    /// How many times the node has crashed: durable, like a boot counter. Request ids that must
    /// stay unique across restarts can be built on it.
    pub incarnation: u32,
    /// True while handling the second copy of a message the network duplicated, when the first
    /// copy was delivered too (a resource that applies writes once tells them apart this way;
    /// real systems do it with request ids).
    pub duplicate: bool,
    /// The node's own random stream, derived from (seed, node): the only randomness node logic
    /// may use.
    pub rng: &'a mut Rng,
    /// The last token taken from the run-wide sequence (see [`Cx::next_run_token`]).
    pub run_token: &'a mut Token,
    /// The stamp of the request this call takes up (in [`NodeLogic::on_request`]), to hand back
    /// in [`Fact::ConfirmedRead`] or [`Fact::Refused`] for a read kept for later.
    pub stamp: Stamp,
}

/// TrueTime's TT.now() (Spanner): an interval of wall-clock readings that holds true time
/// while the clock keeps within its error bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TtNow {
    pub earliest: LocalTime,
    pub latest: LocalTime,
}

impl TtNow {
    /// The interval of a clock with no error bound: its reading alone.
    pub fn exact(wall: LocalTime) -> TtNow {
        TtNow {
            earliest: wall,
            latest: wall,
        }
    }
}

/// An opaque mark of a client request, handed to the call into node logic that takes it up
/// ([`Cx::stamp`]): node logic cannot read it, only hand it back when it serves or gives up a
/// read it kept ([`Fact::ConfirmedRead`], [`Fact::Refused`]), so that the engine knows which
/// request that was, when it arrived and how long it waited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    at: SimTime,
    op: u64,
}

impl Stamp {
    /// For the engine: the stamp of request `op`, taken up at `at`.
    pub(crate) fn new(at: SimTime, op: u64) -> Stamp {
        Stamp { at, op }
    }

    /// For the engine: the instant its request was taken up.
    pub(crate) fn time(self) -> SimTime {
        self.at
    }

    /// For the engine: its request (the tick of its invocation).
    pub(crate) fn op(self) -> u64 {
        self.op
    }
}

impl Cx<'_> {
    pub fn read(&self, clock: ClockKind) -> LocalTime {
        match clock {
            ClockKind::Monotonic => self.mono,
            ClockKind::Wall => self.wall,
            ClockKind::TtEarliest => self.tt.earliest,
            ClockKind::TtLatest => self.tt.latest,
        }
    }

    /// A token from one sequence shared by the whole run, for protocols that have no token of
    /// their own (Redlock): it orders acquisitions in true time for the oracle (a later one
    /// supersedes an earlier one). No node sees it unless the protocol sends it.
    pub fn next_run_token(&mut self) -> Token {
        *self.run_token += 1;
        *self.run_token
    }

    /// The nodes with `role`, in node order.
    pub fn peers(&self, role: Role) -> impl Iterator<Item = NodeId> + '_ {
        (0..self.roles.len()).filter(move |&n| self.roles[n] == role)
    }
}

/// What node logic asks the engine to do: the commands of one call, carried out in order.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Action<M> {
    Send {
        to: NodeId,
        msg: M,
    },
    /// Arms (or re-arms) `timer` to fire when `clock` first reads `at` or more.
    SetTimer {
        timer: TimerId,
        clock: ClockKind,
        at: LocalTime,
    },
    CancelTimer {
        timer: TimerId,
    },
    /// Writes the node's state to its disk ([`Out::persist`]; `wait: false`:
    /// [`Out::persist_in_background`]).
    Persist {
        wait: bool,
    },
}

/// What node logic reports for the oracle: a grant, a holding, a request served or given up, a
/// write that reached the resource. Facts name no message, so their type is the same for every
/// protocol; the engine checks the ones it can (see "What a protocol must report" above).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fact {
    /// This node issued a new lease with `token` to `to`, free again when its monotonic clock
    /// reads `until`: every older token is superseded.
    Issued {
        token: Token,
        to: NodeId,
        until: LocalTime,
    },
    /// This node extended lease `token` to `until` on its monotonic clock.
    Renewed { token: Token, until: LocalTime },
    /// [`Fact::Issued`], free again when `clock` reads `until` (TrueTime: its earliest bound).
    IssuedOn {
        token: Token,
        to: NodeId,
        clock: ClockKind,
        until: LocalTime,
    },
    /// [`Fact::Renewed`], until `clock` reads `until`.
    RenewedOn {
        token: Token,
        clock: ClockKind,
        until: LocalTime,
    },
    /// This node holds lease `token` now: what it acts under from here on.
    Holding { token: Token },
    /// This node begins an attempt to hold: an election (its pre-vote, when it has one; a
    /// second round after a split vote goes on with the attempt, and is not reported, while
    /// a campaign after falling back to following begins a new one), an
    /// acquire or lock request (each poll or retry of a loop that asks again is an attempt).
    /// The last one before the node is granted ends a failover's detection and begins its
    /// election or acquisition.
    Seeking,
    /// A read of the request this call took up, admitted under `token`, was served at once:
    /// the state the node serves from held `value` for its key.
    Read { token: Token, value: Value },
    /// A read admitted under `token` waits: the node keeps it (with [`Cx::stamp`]) and serves
    /// it later with [`Fact::ConfirmedRead`], or gives it up with [`Fact::Refused`].
    Waiting { token: Token },
    /// A read the node kept, stamped `since`, was served now (Raft's ReadIndex, once a quorum
    /// acknowledged a round started after it arrived; a read held until an entry commits):
    /// the state it was served from held `value` for its key.
    ConfirmedRead {
        token: Token,
        since: Stamp,
        value: Value,
    },
    /// The write of the request this call took up, admitted under `token`, left this node for
    /// the resource (carrying the request's key and value).
    WriteSent { token: Token },
    /// The write of the request this call took up, admitted under `token`, was appended to
    /// this leader's log: it takes effect if a quorum commits it ([`Fact::Committed`]), and
    /// never otherwise.
    Appended { token: Token },
    /// The node gives up request `since`, admitted under `token`: the one this call took up
    /// (deposed since its check, no room to keep it), or a read it kept (dropped when it
    /// stepped down). Its client times out.
    Refused { token: Token, since: Stamp },
    /// The write of `value` to `key` from `writer` under `token` was applied at the resource
    /// (this node): it took effect.
    WriteApplied {
        writer: NodeId,
        token: Token,
        key: Key,
        value: Value,
    },
    /// This node heard from the resource that its write of `value` to `key` was applied (the
    /// resource's [`Ack`]): the write's client is answered now.
    WriteAcked { key: Key, value: Value },
    /// A write from `writer` under `token` was rejected by the resource's fencing check.
    WriteFenced { writer: NodeId, token: Token },
    /// A second copy of a write the resource already applied arrived, and was not applied.
    DuplicateWrite { writer: NodeId, token: Token },
    /// A quorum committed log entry `index`, a client write of `value` to `key` that `writer`
    /// accepted under `token`: the write took effect (for a replicated log, committing is
    /// applying). Several nodes may report the same index (a later leader commits again what an
    /// earlier one did); the oracle counts each index once, so a protocol reports every commit
    /// it makes.
    Committed {
        index: u64,
        writer: NodeId,
        token: Token,
        key: Key,
        value: Value,
        /// The commit acknowledges the write: a member that took the request answers its
        /// client now. False for a writer outside the group (a client of etcd's members), which
        /// reports [`Fact::WriteAcked`] when the answer reaches it.
        acked: bool,
    },
}

impl Fact {
    /// The fact with the clock of a grant's or a renewal's end named: `Issued` and `Renewed`
    /// become `IssuedOn` and `RenewedOn` the monotonic clock; every other fact is itself.
    pub(crate) fn with_clock(self) -> Fact {
        match self {
            Fact::Issued { token, to, until } => Fact::IssuedOn {
                token,
                to,
                clock: ClockKind::Monotonic,
                until,
            },
            Fact::Renewed { token, until } => Fact::RenewedOn {
                token,
                clock: ClockKind::Monotonic,
                until,
            },
            other => other,
        }
    }
}

/// What one call into node logic gives the engine: its [`Action`]s and its [`Fact`]s, in two
/// buffers. The engine reuses one `Out` for every call, so giving either allocates nothing once
/// the buffers have grown. It carries out actions and facts in the order they were given (each
/// fact remembers how many actions came before it), so that a trace shows them in that order.
#[derive(Debug)]
pub struct Out<M> {
    actions: Vec<Action<M>>,
    facts: Vec<Fact>,
    /// For each fact, how many actions were given before it.
    after: Vec<u32>,
}

impl<M> Default for Out<M> {
    fn default() -> Self {
        Out {
            actions: Vec::new(),
            facts: Vec::new(),
            after: Vec::new(),
        }
    }
}

impl<M> Out<M> {
    /// Sends `msg` to node `to`.
    pub fn send(&mut self, to: NodeId, msg: M) {
        self.actions.push(Action::Send { to, msg });
    }
    /// Arms (or re-arms) `timer` to fire when `clock` first reads `at` or more.
    pub fn set_timer(&mut self, timer: TimerId, clock: ClockKind, at: LocalTime) {
        self.actions.push(Action::SetTimer { timer, clock, at });
    }
    pub fn cancel_timer(&mut self, timer: TimerId) {
        self.actions.push(Action::CancelTimer { timer });
    }
    /// Writes the node's state to its disk and waits until it is durable (an fsync before
    /// the answer: Raft's term, vote and entries, Redis's `appendfsync always`). On a node
    /// with a disk, the loop that made this call handles nothing new until the write is
    /// durable, and every message the call sends leaves then (persist, then send); then the
    /// loop handles all that came meanwhile at once, their writes sharing one fsync. The disk
    /// takes [`NodeLogic::disk_image`] at the end of the call as what it writes. On a node
    /// without one, nothing happens: the state is durable at once.
    pub fn persist(&mut self) {
        self.actions.push(Action::Persist { wait: true });
    }
    /// Writes the node's state to its disk in the background (Redis's `appendfsync
    /// everysec`): nothing waits for it, and a crash before it is durable loses it.
    pub fn persist_in_background(&mut self) {
        self.actions.push(Action::Persist { wait: false });
    }
    /// Reports `fact` to the oracle.
    pub fn report(&mut self, fact: Fact) {
        self.after.push(self.actions.len() as u32);
        self.facts.push(fact);
    }
    /// The actions given so far, in order.
    pub fn actions(&self) -> &[Action<M>] {
        &self.actions
    }
    /// The facts reported so far, in order.
    pub fn facts(&self) -> &[Fact] {
        &self.facts
    }
    /// For tests: takes the actions and the facts out, leaving the buffers empty.
    #[cfg(test)]
    pub(crate) fn take(&mut self) -> (Vec<Action<M>>, Vec<Fact>) {
        self.after.clear();
        (
            std::mem::take(&mut self.actions),
            std::mem::take(&mut self.facts),
        )
    }
    /// Takes everything out, leaving the buffers empty (their capacity kept): each fact with
    /// the number of actions given before it, and the actions.
    /// Whether nothing was asked or reported since the last drain.
    pub(crate) fn is_empty(&self) -> bool {
        self.actions.is_empty() && self.facts.is_empty()
    }

    /// Takes out the one fact given, if the call gave that and nothing else (most calls that
    /// ask for anything: a read served), leaving the buffers empty.
    pub(crate) fn take_only_fact(&mut self) -> Option<Fact> {
        if !self.actions.is_empty() || self.facts.len() != 1 {
            return None;
        }
        self.after.clear();
        self.facts.pop()
    }

    pub(crate) fn drain(
        &mut self,
    ) -> (
        impl Iterator<Item = (usize, Fact)> + '_,
        std::vec::Drain<'_, Action<M>>,
    ) {
        let facts = self
            .after
            .drain(..)
            .map(|a| a as usize)
            .zip(self.facts.drain(..));
        (facts, self.actions.drain(..))
    }
}

/// The per-node logic of a protocol.
pub trait NodeLogic: Send {
    /// The protocol's messages.
    type Msg: ProtocolMessage;
    /// What survives a crash of the node (its disk): taken by [`NodeLogic::into_disk`] when the
    /// node crashes, handed to [`Protocol::node_logic`] when it restarts.
    type Disk: Default + Send;

    /// The node starts (at its start time, or on restart after a crash: `cx.restarted`).
    fn on_start(&mut self, cx: &mut Cx, out: &mut Out<Self::Msg>);
    fn on_message(&mut self, cx: &mut Cx, from: NodeId, msg: Self::Msg, out: &mut Out<Self::Msg>);
    fn on_timer(&mut self, cx: &mut Cx, timer: TimerId, out: &mut Out<Self::Msg>);
    /// The validity check a client request runs when it arrives: the token to act under, or
    /// `None` to reject it.
    fn check(&self, cx: &Cx, request: Request) -> Option<Token>;
    /// Whether [`NodeLogic::check`] would refuse `request` now whatever the node's clocks read
    /// (a node that holds nothing to act under): the engine then refuses it without reading a
    /// clock or calling the check, the cheaper for the many requests a node that does not hold
    /// refuses. `false` (the default) whenever in doubt: the check decides. Debug builds run
    /// the check anyway and panic if it admits a request this said it refuses.
    fn refuses_whatever_the_time(&self, _request: Request) -> bool {
        false
    }
    /// A request admitted under `token` takes effect (the workload's service time after the
    /// check): serve the read ([`Fact::Read`]) or send the write ([`Fact::WriteSent`]), or
    /// report what became of it (see "What a protocol must report" above).
    fn on_request(&mut self, cx: &mut Cx, request: Request, token: Token, out: &mut Out<Self::Msg>);
    /// An operator's instruction arrives (see [`Command`]); only those the protocol names in
    /// [`Protocol::commands`] are ever given.
    fn on_command(&mut self, _cx: &mut Cx, _command: Command, _out: &mut Out<Self::Msg>) {}
    /// On a [`Transport::Stream`]: `msg`, sent to `to` by this process, reached `to`'s host while
    /// `to`'s process was down (crashed or not started), and the host refused it (a connection
    /// refused or reset). Called one network delay after it arrived there, unless a cut loses the
    /// refusal or this process has crashed since it sent `msg`. Ignored by default: the sender's
    /// own timeout decides, as for a message lost on the way.
    fn on_refused(
        &mut self,
        _cx: &mut Cx,
        _to: NodeId,
        _msg: Self::Msg,
        _out: &mut Out<Self::Msg>,
    ) {
    }
    /// Which loop of the node handles timer `timer`: the worker's by default (see
    /// [`Protocol::renewal_loop`]).
    fn thread_of_timer(&self, _timer: TimerId) -> Thread {
        Thread::Worker
    }
    /// Which loop of the node handles message `msg` when it arrives: the worker's by default.
    fn thread_of_message(&self, _msg: &Self::Msg) -> Thread {
        Thread::Worker
    }
    /// What the node believes now.
    fn beliefs(&self) -> Beliefs;
    /// The node crashed: what it keeps.
    fn into_disk(self) -> Self::Disk;
    /// What the node's disk holds once what it writes now is durable: taken on a node with a
    /// disk at its start (what it started from is on the disk) and at the end of every call
    /// that persists ([`Out::persist`]). A crash of such a node keeps the last image made
    /// durable ([`NodeLogic::into_disk_with`]). `None` (the default): the protocol writes
    /// nothing ([`Protocol::persists`]).
    fn disk_image(&self) -> Option<Self::Disk> {
        None
    }
    /// The node, which has a disk, crashed: what it keeps, given `durable`, the last image its
    /// disk made durable. By default that image; a protocol whose [`NodeLogic::Disk`] also
    /// holds what the disk model does not write (a resource it hosts) takes that from itself.
    fn into_disk_with(self, durable: Self::Disk) -> Self::Disk
    where
        Self: Sized,
    {
        drop(self);
        durable
    }
}

/// The timing parameters every protocol gets from the scenario.
#[derive(Clone, Copy, Debug)]
pub struct LeaseParams {
    /// T.
    pub lease: LocalDur,
    pub renew_every: LocalDur,
    pub retry_every: LocalDur,
    pub grantor_restart: GrantorRestart,
    /// `resource.fencing`: the resource rejects writes with an old token.
    pub fencing: bool,
    /// `lease.initial_leader`: the node that leads first, for a protocol that elects its holder
    /// and reads it ([`LeaseFields::initial_leader`](crate::scenario::LeaseFields)).
    pub initial_leader: Option<NodeId>,
}

impl LeaseParams {
    /// Whether the node of `cx`, at its first start (not a restart after a crash), is to let
    /// another node lead first: `lease.initial_leader` names one that is not it. A protocol
    /// whose contenders race delays this node's first try (by a retry period, as its own)
    /// so that the named one's lands first.
    pub fn another_leads_first(&self, cx: &Cx) -> bool {
        !cx.restarted && cx.incarnation == 0 && self.initial_leader.is_some_and(|n| n != cx.node)
    }
}

/// A lease protocol: checks that a scenario fits it and builds the logic of each node.
pub trait Protocol: Send + Sync + 'static {
    type Logic: NodeLogic;
    /// The protocol as RON text (`TwoSided(holder_margin: "5ms", grantor_margin: "0s")`).
    fn describe(&self) -> String;
    /// How its transport orders the messages between two nodes: datagrams unless it says
    /// otherwise.
    const TRANSPORT: Transport = Transport::Datagram;
    /// Which authorities it grants, and how.
    fn authorities(&self) -> Authorities {
        Authorities::ONE_LEASE
    }
    /// Every reason `scenario` does not fit the protocol (roles and their counts, options it
    /// does not support), each prefixed with the field at fault.
    fn check(&self, scenario: &Scenario) -> Vec<String>;
    /// The [`Command`]s (by fault name) its logic understands. None by default.
    fn commands(&self) -> &'static [&'static str] {
        &[]
    }
    /// What the renewal loop of a node with `role` is, in a few words ("the lock watchdog"),
    /// or `None` (the default) if such a node has none apart from its work. Its logic then
    /// says which timers and messages the loop handles ([`NodeLogic::thread_of_timer`],
    /// [`NodeLogic::thread_of_message`]): a `ThreadStall` of the `Renewal` loop holds those,
    /// one of the `Worker` loop everything else.
    fn renewal_loop(&self, _role: Role) -> Option<&'static str> {
        None
    }
    /// What a node with `role` writes to its disk, in a few words ("its term, vote and log"),
    /// or `None` (the default) if it writes nothing. Its logic then persists
    /// ([`Out::persist`]) and gives the engine the image of what it wrote
    /// ([`NodeLogic::disk_image`]); a scenario may give such a node a `disk`.
    fn persists(&self, _role: Role) -> Option<&'static str> {
        None
    }
    /// Whether the client workload sends requests to nodes with `role`: by default contenders
    /// and replicas (a follower rejects them); a lock service whose replicas serve no client
    /// of their own says no to them.
    fn takes_requests(&self, role: Role) -> bool {
        matches!(role, Role::Contender | Role::Replica)
    }
    /// The logic of node `node` with `role`, starting from `disk` (the default on first start).
    fn node_logic(
        &self,
        node: NodeId,
        role: Role,
        params: &LeaseParams,
        disk: <Self::Logic as NodeLogic>::Disk,
    ) -> Self::Logic;
}

/// The message type of protocol `P`.
pub type MsgOf<P> = <<P as Protocol>::Logic as NodeLogic>::Msg;

/// A protocol with its types hidden: what the command line and [`crate::run_with`] take. The
/// engine implements it for every [`Protocol`] (it runs the protocol, monomorphised); what
/// validation asks of a protocol ([`StrategyChecks`]: its description, message kinds,
/// instructions and checks) comes with it.
pub trait Strategy: StrategyChecks + Send + Sync {
    fn authorities(&self) -> Authorities;
    /// Runs `scenario` (validated by the caller) under this protocol. The result is the
    /// engine's (`engine::RunResult`), which this module, below the engine, does not name: it
    /// comes back as a [`Ran`], and `engine::simulate` opens it.
    fn simulate(&self, scenario: &Scenario, observer: Option<&mut (dyn Observer + 'static)>)
        -> Ran;
}

/// A finished run as [`Strategy::simulate`] hands it back: the engine's result, boxed.
pub struct Ran(Box<dyn Any>);

impl Ran {
    /// A run's result, as the engine makes it.
    pub fn new<R: Any>(result: R) -> Ran {
        Ran(Box::new(result))
    }

    /// The result, if it is an `R`.
    pub fn take<R: Any>(self) -> Option<R> {
        self.0.downcast().ok().map(|r| *r)
    }
}

/// What validation asks of a protocol, answered by the protocol itself.
impl<P: Protocol> StrategyChecks for P {
    fn describe(&self) -> String {
        Protocol::describe(self)
    }
    fn kinds(&self) -> &'static [&'static str] {
        <MsgOf<P> as ProtocolMessage>::KINDS
    }
    fn commands(&self) -> &'static [&'static str] {
        Protocol::commands(self)
    }
    fn renewal_loop(&self, role: Role) -> Option<&'static str> {
        Protocol::renewal_loop(self, role)
    }
    fn persists(&self, role: Role) -> Option<&'static str> {
        Protocol::persists(self, role)
    }
    fn check(&self, scenario: &Scenario) -> Vec<String> {
        Protocol::check(self, scenario)
    }
}

/// Registers the built-in protocols, in the order `leasesim` lists them: one line each.
/// Adding a protocol is a folder of its own under `src/strategy/` (its code and its
/// `settings.rs`) and one line here.
pub fn register_builtins(registry: &mut Registry) {
    registry
        .register::<base::settings::TwoSided>()
        .register::<base::settings::GrantorOnly>()
        .register::<base::settings::HolderOnly>()
        .register::<base::settings::CachedBool>()
        .register::<base::settings::WallClock>()
        .register::<base::settings::OnReceiveStart>()
        .register::<redlock::settings::Redlock>()
        .register::<raft::settings::RaftLeaderLease>()
        .register::<leaseguard::settings::LeaseGuard>()
        .register::<chubby::settings::ChubbySession>()
        .register::<zookeeper::settings::ZooKeeperSession>()
        .register::<consul::settings::ConsulSession>()
        .register::<k8s::settings::K8sLeaderElection>()
        .register::<etcd::settings::EtcdLease>()
        .register::<base::settings::TrueTime>()
        .register::<base::settings::Custom>();
}

/// The built-in strategy a scenario's `strategy` field names, built. One that is not built in
/// is an error here: a [`Registry`] that knows it builds it.
pub fn from_spec(spec: &StrategySpec) -> Result<Box<dyn Strategy>, StrategyError> {
    Registry::builtin().build(spec)
}

/// For unit tests of node logic: runs `f` with node `node`'s context when both its clocks
/// read `at` (a fresh random stream of the node, no duplicate, first incarnation).
#[cfg(test)]
pub(crate) fn with_test_cx<R>(
    node: NodeId,
    roles: &[Role],
    at: LocalTime,
    f: impl FnOnce(&mut Cx) -> R,
) -> R {
    let mut rng = crate::rng::stream(0, crate::rng::Component::Node, node as u64);
    let mut run_token = 0;
    let mut cx = Cx {
        node,
        roles,
        mono: at,
        wall: at,
        tt: TtNow::exact(at),
        restarted: false,
        incarnation: 0,
        duplicate: false,
        rng: &mut rng,
        run_token: &mut run_token,
        stamp: Stamp::new(SimTime::from_ns(at.ns()), 0),
    };
    f(&mut cx)
}

/// For unit tests of node logic (or of a part of it: a lock service's master, a client): calls
/// `f` on `logic` as [`with_test_cx`] does, and returns what it gave (its actions and its
/// facts).
#[cfg(test)]
pub(crate) fn call_for_test<L, M>(
    logic: &mut L,
    node: NodeId,
    roles: &[Role],
    at: LocalTime,
    f: impl FnOnce(&mut L, &mut Cx, &mut Out<M>),
) -> Out<M> {
    with_test_cx(node, roles, at, |cx| {
        let mut out = Out::default();
        f(logic, cx, &mut out);
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Debug)]
    struct Tokenless;
    impl ProtocolMessage for Tokenless {
        const KINDS: &'static [&'static str] = &["Tokenless"];
        fn kind(&self) -> usize {
            0
        }
    }

    #[test]
    fn each_fact_keeps_its_place_among_the_actions() {
        // A fact reported first, two actions, a fact: the facts come out with 0 and 2 actions
        // before them, so the engine carries all four out in the order given.
        let mut out = Out::default();
        out.report(Fact::Read { token: 1, value: 0 });
        out.send(1, Tokenless);
        out.cancel_timer(0);
        out.report(Fact::WriteSent { token: 1 });
        assert_eq!(out.actions().len(), 2);
        let (facts, actions) = out.drain();
        let facts: Vec<_> = facts.collect();
        assert_eq!(actions.count(), 2);
        let (read, sent) = (
            Fact::Read { token: 1, value: 0 },
            Fact::WriteSent { token: 1 },
        );
        assert_eq!(facts, [(0, read), (2, sent)]);
        // Drained: both buffers are empty for the next call.
        assert!(out.actions().is_empty() && out.facts().is_empty());
    }

    /// A node that admits everything and says nothing else: every default of [`NodeLogic`].
    struct Open;
    impl NodeLogic for Open {
        type Msg = Tokenless;
        type Disk = ();
        fn on_start(&mut self, _: &mut Cx, _: &mut Out<Tokenless>) {}
        fn on_message(&mut self, _: &mut Cx, _: NodeId, _: Tokenless, _: &mut Out<Tokenless>) {}
        fn on_timer(&mut self, _: &mut Cx, _: TimerId, _: &mut Out<Tokenless>) {}
        fn check(&self, _: &Cx, _: Request) -> Option<Token> {
            Some(1)
        }
        fn on_request(&mut self, _: &mut Cx, _: Request, _: Token, _: &mut Out<Tokenless>) {}
        fn beliefs(&self) -> Beliefs {
            Beliefs::NONE
        }
        fn into_disk(self) {}
    }

    #[test]
    fn a_protocol_that_says_nothing_of_its_refusals_is_always_checked() {
        // The engine may skip the check only on the protocol's word: by default it never does.
        for r in [
            Request::Read { key: 0 },
            Request::Write { key: 0, value: 1 },
        ] {
            assert!(!Open.refuses_whatever_the_time(r));
        }
    }

    #[test]
    fn a_message_carries_no_token_unless_its_protocol_says() {
        // Traces show a token only for messages that have one.
        assert_eq!(Tokenless.token(), None);
    }

    #[test]
    fn commands_are_named_as_the_faults_that_give_them() {
        let to = 1;
        assert_eq!(Command::StepDown.name(), "StepDown");
        assert_eq!(Command::TransferLeader { to }.name(), "TransferLeader");
        // The replicated protocols understand both, by those names.
        let spec = StrategySpec::from_ron(r#"RaftLeaderLease(election_timeout: "1s")"#).unwrap();
        let raft = from_spec(&spec).unwrap();
        for c in [Command::StepDown, Command::TransferLeader { to }] {
            assert!(raft.commands().contains(&c.name()));
        }
    }
}
