//! The ZooKeeper ensemble, one server standing for it: sessions, their expiry in tick buckets,
//! the lock's ephemeral sequential nodes and their watches, and the register.
//!
//! A connect request for a new session gets an id and the requested timeout clamped into the
//! server's bounds, [`min_session_timeout`, `max_session_timeout`], by default [2, 20] x
//! tick_time ([`Bounds`]; `ZooKeeperServer.processConnectRequest`). Every message of a live session touches it: its expiry
//! moves to `round_up(now + timeout)`, the next multiple of tick_time strictly after now +
//! timeout, on the server's monotonic clock (`ExpiryQueue.update` and `roundToNextInterval`).
//! The expirer (`SessionTrackerImpl.run`, `ExpiryQueue.poll`) runs at each bucket instant and
//! expires the sessions in it; a bucket with no session changes nothing, so the timer is armed
//! only at the earliest expiry. Expiring a session deletes its lock node, tells the node's
//! watcher (`NodeDeleted`) and closes the session's connection (`Closed`); a reconnect of it is
//! answered `Expired`, a request of it `Closed`.
//!
//! The lock's nodes are numbered from one sequence (the parent's cversion in ZooKeeper): the
//! lowest live node holds the lock, and its sequence number is the fencing token. A holder's
//! node has the lowest number alive, so every node made later has a higher one: tokens grow in
//! the order the lock is held. (The session's czxid grows too, but in the order sessions
//! opened, not the order they get the lock: an older session may queue behind a newer one.)
//! The server reports a grant (`Issued`) when a node becomes the lowest, until its session's
//! expiry, and each later move of that expiry (`Renewed`).
//!
//! What survives a restart ([`Disk`]): sessions and their timeouts, the nodes, both counters and
//! the register (the ensemble's database). With `lease.grantor_restart: Wait` every session is
//! touched at restart, as a new leader does with the sessions it loads; with `Forget` every
//! session expires at once.

use super::emit::{self, Sink};
use super::msg::Message;
use super::Disk;
use crate::msg::NodeId;
use crate::scenario::GrantorRestart;
use crate::strategy::service_node::Service;
use crate::strategy::{Cx, LeaseParams, Register, TimerId};
use crate::time::{LocalDur, LocalTime};

/// Fires at the earliest expiry bucket among the live sessions.
pub(super) const EXPIRER: TimerId = 0;

/// A live session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Session {
    pub(super) id: u64,
    pub(super) node: NodeId,
    /// The negotiated timeout.
    pub(super) timeout: LocalDur,
    /// The bucket it expires in, on the server's monotonic clock.
    pub(super) expiry: LocalTime,
}

/// A lock node: its sequence number and its session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct LockNode {
    pub(super) seq: u64,
    pub(super) session: u64,
}

/// A watch on node `pred`, for `node`'s session `session`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Watch {
    pred: u64,
    node: NodeId,
    session: u64,
}

/// The server.
pub struct Server {
    p: LeaseParams,
    tick: LocalDur,
    bounds: Bounds,
    /// Live sessions, in order of opening.
    pub(super) sessions: Vec<Session>,
    /// Live lock nodes, in sequence order.
    pub(super) nodes: Vec<LockNode>,
    watches: Vec<Watch>,
    last_session: u64,
    last_seq: u64,
    expirer_armed: Option<LocalTime>,
    register: Register,
}

/// The next multiple of `tick` strictly after `t` (`ExpiryQueue.roundToNextInterval`:
/// `(time / interval + 1) * interval`), flooring below zero too.
pub fn round_to_next_interval(t: LocalTime, tick: LocalDur) -> LocalTime {
    debug_assert!(tick.ns() > 0, "tick_time is checked positive");
    LocalTime::from_ns((t.ns().div_euclid(tick.ns()) + 1) * tick.ns())
}

/// The server's bounds on a session timeout: zoo.cfg's `minSessionTimeout` and
/// `maxSessionTimeout`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    pub min: LocalDur,
    pub max: LocalDur,
}

impl Bounds {
    /// The bounds a server has with `min` and `max` as written, each by default 2 and 20 ticks
    /// (`QuorumPeerConfig.parseProperties`: an unset bound, -1, becomes `tickTime * 2` and
    /// `tickTime * 20`). Saturating: validation asks for the event estimate of a tick it is
    /// about to refuse as too long, so the defaults must not overflow.
    pub fn of(tick: LocalDur, min: Option<LocalDur>, max: Option<LocalDur>) -> Bounds {
        Bounds {
            min: min.unwrap_or(LocalDur::from_ns(tick.ns().saturating_mul(2))),
            max: max.unwrap_or(LocalDur::from_ns(tick.ns().saturating_mul(20))),
        }
    }

    /// The requested timeout moved into the bounds, in ZooKeeper's order
    /// (`ZooKeeperServer.processConnectRequest`: raised to `minSessionTimeout`, then lowered to
    /// `maxSessionTimeout`). Validation refuses min > max, as `QuorumPeerConfig` does; the
    /// event estimate it makes on the way gets max then, and no panic.
    pub fn negotiate(&self, requested: LocalDur) -> LocalDur {
        let mut t = requested;
        if t < self.min {
            t = self.min;
        }
        if t > self.max {
            t = self.max;
        }
        t
    }
}

impl Server {
    pub(super) fn new(p: LeaseParams, tick: LocalDur, bounds: Bounds, disk: Disk) -> Server {
        Server {
            p,
            tick,
            bounds,
            sessions: disk.sessions,
            nodes: disk.nodes,
            watches: Vec::new(),
            last_session: disk.last_session,
            last_seq: disk.last_seq,
            expirer_armed: None,
            register: disk.register,
        }
    }

    /// The lowest node and its session.
    fn holder(&self) -> Option<(LockNode, Session)> {
        let low = *self.nodes.first()?;
        let s = *self.sessions.iter().find(|s| s.id == low.session)?;
        Some((low, s))
    }

    fn live(&self, id: u64) -> Option<usize> {
        self.sessions.iter().position(|s| s.id == id)
    }

    /// A message of session `i` arrives at `now`: its expiry moves to the bucket after
    /// now + timeout; if its node holds the lock, that is a renewal.
    fn touch(&mut self, i: usize, now: LocalTime, out: &mut Sink) {
        let s = &mut self.sessions[i];
        let expiry = round_to_next_interval(now + s.timeout, self.tick);
        if expiry == s.expiry {
            return;
        }
        s.expiry = expiry;
        let id = s.id;
        if let Some(low) = self.nodes.first().filter(|n| n.session == id) {
            emit::renewed(out, low.seq, expiry);
        }
        self.arm_expirer(out);
    }

    fn arm_expirer(&mut self, out: &mut Sink) {
        let earliest = self.sessions.iter().map(|s| s.expiry).min();
        if earliest != self.expirer_armed {
            match earliest {
                Some(at) => emit::arm(out, EXPIRER, at),
                None => emit::cancel(out, EXPIRER),
            }
            self.expirer_armed = earliest;
        }
    }

    /// Expires every session whose bucket has come, in order of opening: deletes its node,
    /// fires the watches on it, closes its connection; grants the lock to a new lowest node.
    fn expire(&mut self, cx: &Cx, out: &mut Sink) {
        let before = self.nodes.first().copied();
        let now = cx.mono;
        let expired: Vec<Session> = self
            .sessions
            .iter()
            .filter(|s| s.expiry <= now)
            .copied()
            .collect();
        self.sessions.retain(|s| s.expiry > now);
        for s in expired {
            emit::send(out, s.node, Message::Closed { session: s.id });
            let gone: Vec<u64> = self
                .nodes
                .iter()
                .filter(|n| n.session == s.id)
                .map(|n| n.seq)
                .collect();
            self.nodes.retain(|n| n.session != s.id);
            self.watches.retain(|w| w.session != s.id);
            for pred in gone {
                self.fire_watches(pred, out);
            }
        }
        self.arm_expirer(out);
        self.grant_if_new(before, out);
    }

    fn fire_watches(&mut self, pred: u64, out: &mut Sink) {
        for w in self.watches.iter().filter(|w| w.pred == pred) {
            let msg = Message::NodeDeleted {
                session: w.session,
                pred,
            };
            emit::send(out, w.node, msg);
        }
        self.watches.retain(|w| w.pred != pred);
    }

    /// Reports the grant to the lowest node if it is not `before`.
    fn grant_if_new(&self, before: Option<LockNode>, out: &mut Sink) {
        if let Some((low, s)) = self.holder().filter(|h| Some(h.0) != before) {
            // Tokens grow in the order the lock is held: every node below it is gone.
            debug_assert!(before.is_none_or(|b| b.seq < low.seq));
            emit::issued(out, low.seq, s.node, s.expiry);
        }
    }

    /// A request of `session` arrives: touched if it lives, else its connection is closed.
    fn heard(&mut self, cx: &Cx, from: NodeId, session: u64, out: &mut Sink) -> Option<usize> {
        let Some(i) = self.live(session) else {
            emit::send(out, from, Message::Closed { session });
            return None;
        };
        self.touch(i, cx.mono, out);
        Some(i)
    }

    fn connect(&mut self, cx: &Cx, from: NodeId, session: u64, req: LocalDur, out: &mut Sink) {
        let i = if session == 0 {
            self.last_session += 1;
            self.sessions.push(Session {
                id: self.last_session,
                node: from,
                timeout: self.bounds.negotiate(req),
                expiry: LocalTime::from_ns(i64::MIN),
            });
            self.sessions.len() - 1
        } else if let Some(i) = self.live(session) {
            i
        } else {
            emit::send(out, from, Message::Expired { session });
            return;
        };
        self.touch(i, cx.mono, out);
        let s = self.sessions[i];
        let msg = Message::Connected {
            session: s.id,
            timeout: s.timeout,
        };
        emit::send(out, from, msg);
    }

    /// The session's node: the one it has, or a new one at the end of the sequence.
    fn create(&mut self, session: u64, out: &mut Sink) -> u64 {
        if let Some(n) = self.nodes.iter().find(|n| n.session == session) {
            return n.seq;
        }
        let before = self.nodes.first().copied();
        debug_assert!(
            self.nodes.iter().all(|n| n.seq <= self.last_seq),
            "nodes are numbered from one sequence, in order"
        );
        self.last_seq += 1;
        self.nodes.push(LockNode {
            seq: self.last_seq,
            session,
        });
        self.grant_if_new(before, out);
        self.last_seq
    }

    /// Answers node `seq`'s predecessor, and watches it for `from` if there is one.
    fn check(&mut self, from: NodeId, session: u64, seq: u64, out: &mut Sink) {
        let pred = self
            .nodes
            .iter()
            .rev()
            .find(|n| n.seq < seq)
            .map_or(0, |n| n.seq);
        if pred != 0 {
            let w = Watch {
                pred,
                node: from,
                session,
            };
            if !self.watches.contains(&w) {
                self.watches.push(w);
            }
        }
        let msg = Message::Checked {
            session,
            seq,
            pred,
            values: self.register.values().clone(),
        };
        emit::send(out, from, msg);
    }
}

impl Service for Server {
    type Msg = Message;
    type Disk = Disk;

    fn into_disk(self) -> Disk {
        Disk {
            sessions: self.sessions,
            nodes: self.nodes,
            last_session: self.last_session,
            last_seq: self.last_seq,
            register: self.register,
        }
    }

    fn on_start(&mut self, cx: &Cx, out: &mut Sink) {
        if !cx.restarted {
            return;
        }
        for i in 0..self.sessions.len() {
            match self.p.grantor_restart {
                GrantorRestart::Wait => self.touch(i, cx.mono, out),
                GrantorRestart::Forget => self.sessions[i].expiry = cx.mono,
            }
        }
        self.expire(cx, out);
    }

    fn on_message(&mut self, cx: &Cx, from: NodeId, msg: Message, out: &mut Sink) {
        match msg {
            Message::Connect { session, timeout } => self.connect(cx, from, session, timeout, out),
            Message::Ping { session } => {
                if self.heard(cx, from, session, out).is_some() {
                    emit::send(out, from, Message::Pong { session });
                }
            }
            Message::Create { session } => {
                if self.heard(cx, from, session, out).is_some() {
                    let seq = self.create(session, out);
                    emit::send(out, from, Message::Created { session, seq });
                }
            }
            Message::Check { session, seq } => {
                if self.heard(cx, from, session, out).is_some() {
                    self.check(from, session, seq, out);
                }
            }
            Message::Write { token, key, value } => {
                let (fencing, dup) = (self.p.fencing, cx.duplicate);
                let write = (key, value);
                emit::apply(out, &mut self.register, (from, token, write), fencing, dup);
            }
            Message::Connected { .. }
            | Message::WriteAck(_)
            | Message::Expired { .. }
            | Message::Closed { .. }
            | Message::Pong { .. }
            | Message::Created { .. }
            | Message::Checked { .. }
            | Message::NodeDeleted { .. } => {}
        }
    }

    fn on_timer(&mut self, cx: &Cx, timer: TimerId, out: &mut Sink) {
        if timer == EXPIRER {
            self.expirer_armed = None;
            self.expire(cx, out);
        }
    }
}
