//! The checks, in debug builds, that node logic reported the facts the oracle needs: what a
//! node holds before it believes, and what became of every request it was handed. The rules are
//! the protocol's side of the contract, written in the strategy module's docs ("What a protocol
//! must report"); a protocol that breaks one fails a `debug_assert!` here, in the call that
//! broke it, instead of leaving the oracle to judge without the fact. Release builds skip every
//! call into this module (`cfg!(debug_assertions)` at each call site).

use crate::msg::{Key, NodeId, Token, Value, INITIAL};
use crate::oracle::belief::{Authorities, Belief, Beliefs, Claim};
use crate::strategy::{Fact, Request, Stamp};
use std::collections::{BTreeMap, BTreeSet};

/// How many values of writes that took effect the audit remembers to check reads against (past
/// that, a run's reads go unchecked: a debug build's memory stays bounded too).
const EFFECTIVE_KEPT: usize = 1 << 20;

/// What one node has reported in its current life (since its last start).
#[derive(Clone, Copy, Debug, Default)]
struct Reported {
    /// The token of its last [`Fact::Holding`].
    holding: Option<Token>,
    /// The token of the last grant it issued to itself (a leader's term).
    self_issued: Option<Token>,
    /// Reads it reported [`Fact::Waiting`] and has neither served nor given up since.
    waiting: u64,
}

/// The request a call into [`crate::strategy::NodeLogic::on_request`] was handed, while that
/// call's facts are taken.
#[derive(Clone, Copy, Debug)]
struct Handed {
    node: NodeId,
    /// The call's [`crate::strategy::Cx::stamp`]: a [`Fact::Refused`] stamped with it gives
    /// the request up at once.
    stamp: Stamp,
    /// A fact has said what became of it.
    disposed: bool,
}

/// Every node's [`Reported`], and the request of the call under way, if any.
#[derive(Debug, Default)]
pub(super) struct Audit {
    nodes: Vec<Reported>,
    handed: Option<Handed>,
    /// Per (node, key), the value of the node's latest write of the key in this life.
    own: BTreeMap<(NodeId, Key), Value>,
    /// The values of writes that took effect (up to [`EFFECTIVE_KEPT`]).
    effective: BTreeSet<Value>,
}

impl Audit {
    pub(super) fn new(nodes: usize) -> Audit {
        Audit {
            nodes: vec![Reported::default(); nodes],
            ..Audit::default()
        }
    }

    /// Node `n` is handed `request` in a call stamped `stamp`: its facts must dispose of it.
    pub(super) fn handing(&mut self, n: NodeId, stamp: Stamp, request: Request) {
        self.handed = Some(Handed {
            node: n,
            stamp,
            disposed: false,
        });
        if let Request::Write { key, value } = request {
            self.own.insert((n, key), value);
        }
    }

    /// Node `n` crashed: it forgets what it held and wrote, and its waiting reads are lost
    /// with it.
    pub(super) fn crashed(&mut self, n: NodeId) {
        self.nodes[n] = Reported::default();
        self.own.retain(|&(m, _), _| m != n);
    }

    /// The request of the call under way, if node `n` was handed one and no fact has
    /// disposed of it yet.
    fn open_request(&mut self, n: NodeId) -> Option<&mut Handed> {
        self.handed.as_mut().filter(|h| h.node == n && !h.disposed)
    }

    /// Node `n` reported `fact` (its clock named).
    pub(super) fn fact(&mut self, n: NodeId, fact: &Fact) {
        match *fact {
            Fact::Holding { token } => self.nodes[n].holding = Some(token),
            Fact::IssuedOn { token, to, .. } if to == n => self.nodes[n].self_issued = Some(token),
            Fact::Read { value, .. } => {
                self.read_value(n, value);
                self.dispose(n, fact);
            }
            Fact::WriteSent { .. } | Fact::Appended { .. } => self.dispose(n, fact),
            Fact::Waiting { .. } => {
                self.dispose(n, fact);
                self.nodes[n].waiting += 1;
            }
            Fact::ConfirmedRead { value, .. } => {
                self.read_value(n, value);
                self.settle_waiting(n, fact);
            }
            Fact::Refused { since, .. } => match self.open_request(n) {
                Some(h) if h.stamp == since => h.disposed = true,
                _ => self.settle_waiting(n, fact),
            },
            Fact::WriteApplied { value, .. } | Fact::Committed { value, .. }
                if self.effective.len() < EFFECTIVE_KEPT =>
            {
                self.effective.insert(value);
            }
            _ => {}
        }
    }

    /// Node `n` served a read with `value`: the initial value, one that took effect, or one of
    /// its own writes of this life (which only it has seen).
    fn read_value(&self, n: NodeId, value: Value) {
        if self.effective.len() >= EFFECTIVE_KEPT {
            return;
        }
        let known = value == INITIAL
            || self.effective.contains(&value)
            || self.own.iter().any(|(&(m, _), &v)| m == n && v == value);
        debug_assert!(
            known,
            "node {n} served a read with value {value}, which no write that took effect wrote, \
             nor its own latest write of a key"
        );
    }

    /// `fact` says what became of the request node `n` was handed in this call.
    fn dispose(&mut self, n: NodeId, fact: &Fact) {
        let open = self.open_request(n);
        debug_assert!(
            open.is_some(),
            "node {n} reported {fact:?} outside a call that handed it a request, or for one \
             whose fate it had already reported"
        );
        if let Some(h) = open {
            h.disposed = true;
        }
    }

    /// `fact` serves or gives up one of node `n`'s waiting reads.
    fn settle_waiting(&mut self, n: NodeId, fact: &Fact) {
        let waiting = &mut self.nodes[n].waiting;
        debug_assert!(
            *waiting > 0,
            "node {n} reported {fact:?} for a waiting read, but no read waits (a read kept for \
             later is reported as Waiting when it is taken up)"
        );
        *waiting = waiting.saturating_sub(1);
    }

    /// A call into node `n` ends with its beliefs gone from `before` to `after` under the
    /// protocol's `claims`: a request it was handed is disposed of, and an exclusive authority
    /// newly held is under a token it reported holding (or issued itself).
    pub(super) fn end_call(
        &mut self,
        n: NodeId,
        before: Beliefs,
        after: Beliefs,
        claims: Authorities,
    ) {
        if let Some(h) = self.handed.take() {
            debug_assert!(
                h.node != n || h.disposed,
                "node {n} was handed a request and reported nothing of what became of it \
                 (Read, WriteSent, Appended, Waiting or Refused)"
            );
        }
        let authorities = [
            (claims.write, before.write, after.write),
            (claims.read, before.read, after.read),
        ];
        let reported = self.nodes[n];
        for (claim, was, is) in authorities {
            let Some(token) = token_of(is) else {
                continue;
            };
            if claim != Claim::Exclusive || token_of(was) == Some(token) {
                continue;
            }
            debug_assert!(
                reported.holding == Some(token) || reported.self_issued == Some(token),
                "node {n} believes {is:?}, an exclusive authority under token {token} it did \
                 not hold before, with no Holding for it (nor a grant to itself) in this life"
            );
        }
    }
}

/// The token a belief is held under, if it holds anything.
fn token_of(belief: Belief) -> Option<Token> {
    match belief {
        Belief::None => None,
        Belief::Bool { token } | Belief::Until { token, .. } => Some(token),
    }
}
