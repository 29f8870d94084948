//! Lease strategies: pure node logic behind a trait.
//!
//! A strategy builds one [`NodeLogic`] per node. Node logic is pure: it sees the node's clock
//! readings in a [`Cx`] and one input (start, message, timer, client request), and it answers with
//! effects pushed into an [`Out`] (send, set or cancel a timer, note a grant). It never reads a
//! clock or a random stream of its own, so the engine controls everything it sees. It also tells
//! the oracle what it believes ([`Belief`]): the oracle, not the strategy, turns that into exact
//! intervals of true time.
//!
//! Adding a strategy means adding a type that implements [`Strategy`]; the engine is not touched.

pub mod base;
pub mod rules;

use crate::clock::ClockKind;
use crate::msg::{Message, NodeId, Token};
use crate::scenario::{GrantorRestart, Role, StrategySpec};
use crate::time::{Dur, LocalTime};

pub use rules::Rules;

/// A node's timers are named by small integers of the logic's choosing (at most [`MAX_TIMERS`]).
pub type TimerId = u8;
/// How many distinct timers one node's logic may have pending at once.
pub const MAX_TIMERS: usize = 8;

/// What node logic sees of the world when it runs.
#[derive(Clone, Copy, Debug)]
pub struct Cx {
    pub node: NodeId,
    /// The node that grants leases (the scenario's grantor).
    pub grantor: NodeId,
    /// The node's monotonic clock now.
    pub mono: LocalTime,
    /// The node's wall clock now.
    pub wall: LocalTime,
    /// True when the node is starting again after a crash.
    pub restarted: bool,
    /// How many times the node has crashed: durable, like a boot counter. Request ids that must
    /// stay unique across restarts can be built on it.
    pub incarnation: u32,
    /// The highest token this node has ever issued: durable, it survives crashes.
    pub last_token: Token,
    /// The protected register's current version (the grantor hosts it).
    pub register_version: u64,
}

impl Cx {
    pub fn read(&self, clock: ClockKind) -> LocalTime {
        match clock {
            ClockKind::Monotonic => self.mono,
            ClockKind::Wall => self.wall,
        }
    }
}

/// One thing node logic asks the engine to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    Send {
        to: NodeId,
        msg: Message,
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
    /// The grantor issued a new lease with `token` to `to`, free again when its monotonic clock
    /// reads `until`: every older token is superseded.
    Issued {
        token: Token,
        to: NodeId,
        until: LocalTime,
    },
    /// The grantor extended the current lease to `until` on its monotonic clock.
    Renewed {
        token: Token,
        until: LocalTime,
    },
    /// The holder took lease `token`; its copy of the register is at `version`.
    Holding {
        token: Token,
        version: u64,
    },
}

/// The effects of one call into node logic, in order. The engine reuses one buffer.
#[derive(Debug, Default)]
pub struct Out {
    effects: Vec<Effect>,
}

impl Out {
    pub fn send(&mut self, to: NodeId, msg: Message) {
        self.effects.push(Effect::Send { to, msg });
    }
    pub fn set_timer(&mut self, timer: TimerId, clock: ClockKind, at: LocalTime) {
        self.effects.push(Effect::SetTimer { timer, clock, at });
    }
    pub fn cancel_timer(&mut self, timer: TimerId) {
        self.effects.push(Effect::CancelTimer { timer });
    }
    pub fn push(&mut self, e: Effect) {
        self.effects.push(e);
    }
    /// Takes the effects out, leaving the buffer empty (its capacity kept by the caller).
    pub fn drain(&mut self) -> std::vec::Drain<'_, Effect> {
        self.effects.drain(..)
    }
    pub fn is_empty(&self) -> bool {
        self.effects.is_empty()
    }
    pub fn as_slice(&self) -> &[Effect] {
        &self.effects
    }
}

/// What a node believes about holding the lease, as the oracle needs it (SPEC 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Belief {
    /// Holds nothing.
    #[default]
    None,
    /// Believes unconditionally (a cached bool) until told otherwise.
    Bool { token: Token },
    /// Believes while `clock` reads less than `deadline`.
    Until {
        token: Token,
        clock: ClockKind,
        deadline: LocalTime,
    },
}

impl Belief {
    pub fn token(&self) -> Option<Token> {
        match *self {
            Belief::None => None,
            Belief::Bool { token } | Belief::Until { token, .. } => Some(token),
        }
    }
}

/// The per-node logic of a strategy.
pub trait NodeLogic: Send {
    /// The node starts (at its start time, or on restart after a crash).
    fn on_start(&mut self, cx: &Cx, out: &mut Out);
    fn on_message(&mut self, cx: &Cx, from: NodeId, msg: Message, out: &mut Out);
    fn on_timer(&mut self, cx: &Cx, timer: TimerId, out: &mut Out);
    /// The validity check a client request runs: the token to act under, or `None` to reject.
    fn check(&self, cx: &Cx) -> Option<Token>;
    /// What the node believes now.
    fn belief(&self) -> Belief;
}

/// The timing parameters every strategy gets.
#[derive(Clone, Copy, Debug)]
pub struct LeaseParams {
    pub lease: Dur,
    pub renew_every: Dur,
    pub retry_every: Dur,
    pub grantor_restart: GrantorRestart,
}

/// A lease strategy: builds the logic of each node.
pub trait Strategy: Send + Sync {
    /// The strategy as RON text (`TwoSided(holder_margin: "5ms", grantor_margin: "0s")`).
    fn describe(&self) -> String;
    fn node_logic(&self, role: Role, params: &LeaseParams) -> Box<dyn NodeLogic>;
}

/// The strategy a scenario's `strategy` field names.
pub fn from_spec(spec: &StrategySpec) -> Box<dyn Strategy> {
    Box::new(base::BaseProtocol::new(Rules::of(spec), spec.to_ron()))
}
