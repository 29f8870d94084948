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

    /// The database as logged: sessions, nodes and counters (the register too, though a
    /// crash keeps the live one).
    fn disk_image(&self) -> Option<Disk> {
        Some(Disk {
            sessions: self.sessions.clone(),
            nodes: self.nodes.clone(),
            last_session: self.last_session,
            last_seq: self.last_seq,
            register: self.register.clone(),
        })
    }

    /// The sessions and nodes come back as logged; the register, which stands for the
    /// protected resource (its writes take effect when they arrive), as it was.
    fn into_disk_with(self, durable: Disk) -> Disk {
        Disk {
            register: self.register,
            ..durable
        }
    }

    fn on_start(&mut self, cx: &mut Cx, out: &mut Sink) {
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

    fn on_message(&mut self, cx: &mut Cx, from: NodeId, msg: Message, out: &mut Sink) {
        let before = self.transactions();
        self.message(cx, from, msg, out);
        self.log_if_changed(before, out);
    }

    fn on_timer(&mut self, cx: &mut Cx, timer: TimerId, out: &mut Sink) {
        if timer == EXPIRER {
            let before = self.transactions();
            self.expirer_armed = None;
            self.expire(cx, out);
            self.log_if_changed(before, out);
        }
    }
}

impl Server {
    /// What the transactions of a call change, at a glance: sessions opened and closed, lock
    /// nodes made and deleted. Pings (touches) are not logged, and the register is kept
    /// apart (see [`Service::into_disk_with`]).
    fn transactions(&self) -> (u64, u64, usize, usize) {
        let (s, n) = (self.sessions.len(), self.nodes.len());
        (self.last_session, self.last_seq, s, n)
    }

    /// A call that logged a transaction (its creation of a session, say) answers once the
    /// log is durable (`SyncRequestProcessor` before `FinalRequestProcessor`).
    fn log_if_changed(&self, before: (u64, u64, usize, usize), out: &mut Sink) {
        if self.transactions() != before {
            emit::persist(out);
        }
    }

    fn message(&mut self, cx: &mut Cx, from: NodeId, msg: Message, out: &mut Sink) {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ClockKind;
    use crate::scenario::Role;
    use crate::strategy::{Action, Fact, Out, Store};

    const S: i64 = 1_000_000_000;
    const MS: i64 = 1_000_000;
    /// Node 0 is the server, nodes 1 to 3 clients.
    const ROLES: &[Role] = &[
        Role::Grantor,
        Role::Contender,
        Role::Contender,
        Role::Contender,
    ];

    fn at(ns: i64) -> LocalTime {
        LocalTime::from_ns(ns)
    }

    fn secs(s: i64) -> LocalDur {
        LocalDur::from_secs(s)
    }

    fn params(restart: GrantorRestart) -> LeaseParams {
        LeaseParams {
            lease: secs(3),
            renew_every: secs(1),
            retry_every: secs(1),
            grantor_restart: restart,
            fencing: false,
            initial_leader: None,
        }
    }

    /// A 1 s tick and the default bounds, [2 s, 20 s].
    fn server_from(restart: GrantorRestart, disk: Disk) -> Server {
        let tick = secs(1);
        Server::new(params(restart), tick, Bounds::of(tick, None, None), disk)
    }

    fn server() -> Server {
        server_from(GrantorRestart::Wait, Disk::default())
    }

    fn call(s: &mut Server, at_ns: i64, f: impl FnOnce(&mut Server, &mut Cx, &mut Sink)) -> Sink {
        crate::strategy::with_test_cx(0, ROLES, at(at_ns), |cx| {
            let mut out = Out::default();
            f(s, cx, &mut out);
            out
        })
    }

    fn from(s: &mut Server, at_ns: i64, node: NodeId, msg: Message) -> Sink {
        call(s, at_ns, |s, cx, out| s.on_message(cx, node, msg, out))
    }

    fn expirer(s: &mut Server, at_ns: i64) -> Sink {
        call(s, at_ns, |s, cx, out| s.on_timer(cx, EXPIRER, out))
    }

    fn sent(given: &Sink) -> Vec<(NodeId, Message)> {
        given
            .actions()
            .iter()
            .filter_map(|a| match a {
                Action::Send { to, msg } => Some((*to, msg.clone())),
                _ => None,
            })
            .collect()
    }

    fn armed(given: &Sink) -> Vec<LocalTime> {
        given
            .actions()
            .iter()
            .filter_map(|a| match *a {
                Action::SetTimer { timer, at, .. } if timer == EXPIRER => Some(at),
                _ => None,
            })
            .collect()
    }

    fn connect(timeout_s: i64) -> Message {
        Message::Connect {
            session: 0,
            timeout: secs(timeout_s),
        }
    }

    /// Clients 1 and 2 connect at 0 asking 3 s (sessions 1 and 2, expiring in the bucket after
    /// 0 + 3 s, at 4 s) and create nodes 1 and 2: client 1 holds the lock.
    /// Whether the call logged a transaction (its answer waits for the log).
    fn logged(given: &Sink) -> bool {
        given.actions().contains(&Action::Persist { wait: true })
    }

    #[test]
    fn sessions_and_nodes_made_or_gone_are_logged_and_pings_are_not() {
        let mut s = server();
        assert!(logged(&from(&mut s, 0, 1, connect(3))), "a new session");
        let create = Message::Create { session: 1 };
        assert!(
            logged(&from(&mut s, 0, 1, create.clone())),
            "a new lock node"
        );
        // The same Create again finds its node: nothing new to log.
        assert!(!logged(&from(&mut s, 0, 1, create)));
        let ping = Message::Ping { session: 1 };
        assert!(!logged(&from(&mut s, S, 1, ping)), "a touch");
        // Session 1 (3 s, last touched at 1 s) expires in the bucket of 5 s: its session and
        // node go, logged; an expirer run with nothing to expire logs nothing.
        assert!(!logged(&expirer(&mut s, 4 * S)));
        assert!(logged(&expirer(&mut s, 5 * S)));
    }

    fn two_nodes() -> Server {
        let mut s = server();
        for node in [1, 2] {
            from(&mut s, 0, node, connect(3));
            let session = node as u64;
            let created = from(&mut s, 0, node, Message::Create { session });
            let seq = session;
            assert_eq!(sent(&created), [(node, Message::Created { session, seq })]);
        }
        s
    }

    #[test]
    fn the_next_interval_is_strictly_after_and_floors_below_zero() {
        let tick = secs(1);
        for (t, next) in [
            (0, S),
            (3 * S, 4 * S),
            (3 * S + 1, 4 * S),
            (4 * S - 1, 4 * S),
        ] {
            assert_eq!(round_to_next_interval(at(t), tick), at(next), "{t}");
        }
        // -0.5 s lies in the bucket [-1 s, 0): the next multiple is 0, as is -1 s's.
        assert_eq!(round_to_next_interval(at(-S / 2), tick), at(0));
        assert_eq!(round_to_next_interval(at(-S), tick), at(0));
    }

    #[test]
    fn a_timeout_is_raised_to_the_minimum_then_lowered_to_the_maximum() {
        let b = Bounds::of(secs(1), None, None);
        assert_eq!(
            b,
            Bounds {
                min: secs(2),
                max: secs(20)
            }
        );
        let written = Bounds::of(secs(1), Some(secs(5)), Some(secs(7)));
        assert_eq!(
            written,
            Bounds {
                min: secs(5),
                max: secs(7)
            }
        );
        for (asked, got) in [(1, 2), (2, 2), (3, 3), (20, 20), (25, 20)] {
            assert_eq!(b.negotiate(secs(asked)), secs(got), "asked {asked} s");
        }
        // Bounds the checker refuses (min above max) give the maximum, in that order.
        let crossed = Bounds {
            min: secs(10),
            max: secs(5),
        };
        assert_eq!(crossed.negotiate(secs(1)), secs(5));
        // A tick too long to double saturates.
        let huge = Bounds::of(LocalDur::from_ns(i64::MAX), None, None);
        assert_eq!(huge.min, LocalDur::from_ns(i64::MAX));
    }

    #[test]
    fn a_new_session_gets_the_next_id_the_negotiated_timeout_and_its_bucket() {
        // Connect at 0.5 s asking 1 s: timeout 2 s, expiry after 2.5 s: bucket 3 s.
        let mut s = server();
        let first = from(&mut s, S / 2, 1, connect(1));
        let connected = Message::Connected {
            session: 1,
            timeout: secs(2),
        };
        assert_eq!(
            first.actions(),
            [
                Action::SetTimer {
                    timer: EXPIRER,
                    clock: ClockKind::Monotonic,
                    at: at(3 * S)
                },
                Action::Send {
                    to: 1,
                    msg: connected
                },
                // The new session is logged before the answer leaves.
                Action::Persist { wait: true },
            ]
        );
        // Asking 25 s at 0.6 s: session 2 with 20 s, to 21 s; the expirer stays at 3 s.
        let second = from(&mut s, 600 * MS, 2, connect(25));
        let connected = Message::Connected {
            session: 2,
            timeout: secs(20),
        };
        assert_eq!(sent(&second), [(2, connected)]);
        assert!(armed(&second).is_empty());
        assert_eq!(s.sessions[1].expiry, at(21 * S));
    }

    #[test]
    fn a_message_moves_its_sessions_bucket_and_the_holders_move_is_a_renewal() {
        let mut s = two_nodes();
        // A ping at 1.5 s: bucket after 4.5 s, 5 s; node 1 holds, so the lock goes to 5 s.
        let ping = from(&mut s, 1_500 * MS, 1, Message::Ping { session: 1 });
        assert_eq!(sent(&ping), [(1, Message::Pong { session: 1 })]);
        assert_eq!(
            ping.facts(),
            [Fact::Renewed {
                token: 1,
                until: at(5 * S)
            }]
        );
        // A ping at 1.7 s lands in the same bucket: nothing moves.
        let same = from(&mut s, 1_700 * MS, 1, Message::Ping { session: 1 });
        assert!(same.facts().is_empty() && armed(&same).is_empty());
        // Node 2's ping moves its own session only: no renewal; the expirer stays at 4 s.
        let other = from(&mut s, 1_500 * MS, 2, Message::Ping { session: 2 });
        assert!(other.facts().is_empty());
        assert_eq!(s.sessions[1].expiry, at(5 * S));
        // Both now end at 5 s: the expirer moves there.
        assert_eq!(armed(&other), [at(5 * S)]);
    }

    #[test]
    fn an_expired_holder_loses_its_node_its_watcher_is_told_once_and_granted() {
        let mut s = two_nodes();
        // Node 2 asks twice whether node 2 is lowest: its predecessor is node 1, watched once.
        for _ in 0..2 {
            let checked = from(&mut s, 0, 2, Message::Check { session: 2, seq: 2 });
            let answer = Message::Checked {
                session: 2,
                seq: 2,
                pred: 1,
                values: Store::default(),
            };
            assert_eq!(sent(&checked), [(2, answer)]);
        }
        // Node 2 pings at 2 s: to the bucket after 5 s, 6 s. Node 1 stays at 4 s.
        from(&mut s, 2 * S, 2, Message::Ping { session: 2 });
        let early = expirer(&mut s, 4 * S - 1);
        assert!(sent(&early).is_empty() && early.facts().is_empty());
        assert_eq!(s.sessions.len(), 2);
        let due = expirer(&mut s, 4 * S);
        let deleted = Message::NodeDeleted {
            session: 2,
            pred: 1,
        };
        assert_eq!(
            sent(&due),
            [(1, Message::Closed { session: 1 }), (2, deleted)]
        );
        let grant = Fact::Issued {
            token: 2,
            to: 2,
            until: at(6 * S),
        };
        assert_eq!(due.facts(), [grant]);
        assert_eq!(armed(&due), [at(6 * S)]);
        // Session 1 is gone: a reconnect hears Expired, a request Closed and makes no node.
        let reconnect = Message::Connect {
            session: 1,
            timeout: secs(3),
        };
        let expired = from(&mut s, 5 * S, 1, reconnect);
        assert_eq!(sent(&expired), [(1, Message::Expired { session: 1 })]);
        for msg in [Message::Ping { session: 1 }, Message::Create { session: 1 }] {
            let closed = from(&mut s, 5 * S, 1, msg);
            assert_eq!(sent(&closed), [(1, Message::Closed { session: 1 })]);
        }
        assert_eq!(s.nodes, [LockNode { seq: 2, session: 2 }]);
    }

    #[test]
    fn a_check_names_the_highest_node_below_and_a_create_is_made_once() {
        let mut s = two_nodes();
        from(&mut s, 0, 3, connect(3));
        from(&mut s, 0, 3, Message::Create { session: 3 });
        let pred = |s: &mut Server, node: NodeId, seq: u64| {
            let session = node as u64;
            match &sent(&from(s, 0, node, Message::Check { session, seq }))[..] {
                [(_, Message::Checked { pred, .. })] => *pred,
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(pred(&mut s, 3, 3), 2);
        assert_eq!(pred(&mut s, 1, 1), 0);
        // Node 1 asks to create again: its node, no new one, no new grant.
        let again = from(&mut s, 0, 1, Message::Create { session: 1 });
        assert_eq!(sent(&again), [(1, Message::Created { session: 1, seq: 1 })]);
        assert!(again.facts().is_empty());
        assert_eq!(s.nodes.len(), 3);
    }

    #[test]
    fn a_restart_touches_every_session_or_forgets_them_and_keeps_the_counters() {
        let disk = two_nodes().into_disk();
        // Not a restart: nothing.
        let mut s = server_from(GrantorRestart::Wait, disk.clone());
        let start = call(&mut s, 100 * S, |s, cx, out| s.on_start(cx, out));
        assert!(start.actions().is_empty());
        // Wait, up at 100 s: both sessions to the bucket after 103 s, 104 s; the holder's lock
        // with them.
        let restart = |how| {
            let mut s = server_from(how, disk.clone());
            let out = call(&mut s, 100 * S, |s, cx, out| {
                cx.restarted = true;
                s.on_start(cx, out)
            });
            (s, out)
        };
        let (s, out) = restart(GrantorRestart::Wait);
        assert!(s.sessions.iter().all(|s| s.expiry == at(104 * S)));
        assert_eq!(
            out.facts(),
            [Fact::Renewed {
                token: 1,
                until: at(104 * S)
            }]
        );
        assert!(sent(&out).is_empty());
        // Forget: both expire at once; the next session and node are numbered on from 2.
        let (mut s, out) = restart(GrantorRestart::Forget);
        let closed: Vec<NodeId> = sent(&out).iter().map(|&(to, _)| to).collect();
        assert_eq!(closed, [1, 2]);
        assert!(s.sessions.is_empty() && s.nodes.is_empty());
        let connected = from(&mut s, 101 * S, 3, connect(3));
        assert!(matches!(
            sent(&connected)[..],
            [(3, Message::Connected { session: 3, .. })]
        ));
        let created = from(&mut s, 101 * S, 3, Message::Create { session: 3 });
        assert_eq!(
            sent(&created),
            [(3, Message::Created { session: 3, seq: 3 })]
        );
    }

    #[test]
    fn only_the_expirer_timer_expires() {
        let mut s = two_nodes();
        let other = call(&mut s, 10 * S, |s, cx, out| {
            s.on_timer(cx, EXPIRER + 1, out)
        });
        assert!(other.actions().is_empty());
        assert_eq!(s.sessions.len(), 2);
    }

    #[test]
    fn a_fired_watch_is_gone_and_the_next_in_line_still_watches() {
        // Node 3 watches node 2, node 2 watches node 1. Node 1's session ends at 4 s; nodes 2
        // and 3, pinged at 2 s, at 6 s; node 3, pinged again at 5 s, at 9 s.
        let mut s = two_nodes();
        from(&mut s, 0, 3, connect(3));
        from(&mut s, 0, 3, Message::Create { session: 3 });
        from(&mut s, 0, 2, Message::Check { session: 2, seq: 2 });
        from(&mut s, 0, 3, Message::Check { session: 3, seq: 3 });
        for node in [2, 3] {
            let session = node as u64;
            from(&mut s, 2 * S, node, Message::Ping { session });
        }
        let first = expirer(&mut s, 4 * S);
        let told: Vec<NodeId> = sent(&first).iter().map(|&(to, _)| to).collect();
        assert_eq!(told, [1, 2]);
        from(&mut s, 5 * S, 3, Message::Ping { session: 3 });
        let second = expirer(&mut s, 6 * S);
        let deleted = Message::NodeDeleted {
            session: 3,
            pred: 2,
        };
        assert_eq!(
            sent(&second),
            [(2, Message::Closed { session: 2 }), (3, deleted)]
        );
    }

    #[test]
    fn a_write_reaches_the_register_and_is_answered() {
        let mut s = server();
        let write = Message::Write {
            token: 1,
            key: 4,
            value: 9,
        };
        let answer = from(&mut s, 0, 2, write);
        assert!(matches!(
            sent(&answer)[..],
            [(
                2,
                Message::WriteAck(crate::strategy::Ack {
                    key: 4,
                    value: 9,
                    ..
                })
            )]
        ));
    }
}
