//! The Chubby cell's master: sessions, KeepAlives, the one lock, lock-delay, fail-over, and the
//! register.
//!
//! A session opens when the master first hears a session id from a client (a KeepAlive or an
//! Acquire), and then lives to (the master's last answer to one of its KeepAlives) + the
//! extension on the master's monotonic clock: T, or `extend_under_load` when set. Held open
//! (`keepalive: HeldOpen`), a KeepAlive is not answered at once: the master keeps it until the
//! session has `hold_margin` left, then extends the session and answers, saying how long it
//! held it. It answers at once a KeepAlive that opens a session, one of a session it has not
//! answered since it started (after a fail-over), and one whose client does not have its
//! latest answer (that answer was lost, or is late: the client's lease may be running out);
//! a newer KeepAlive of the same session replaces the one held. `Immediate` answers every
//! KeepAlive at once.
//!
//! When a session expires, its pending Acquire is dropped and, if it held the lock, the lock is
//! released and refused to everyone for `lock_delay`; a clean `Release` frees the lock with no
//! delay. Pending Acquires are served in FIFO order of their first arrival, at the exact instant
//! the lock is free and no lock-delay runs. Each grant carries the next generation number (the
//! sequencer), which is the fencing token.
//!
//! What the replicated database keeps across a fail-over ([`Disk`]): the sessions that are open
//! (not their expiries, nor the KeepAlives held), the newest session id of each client, the
//! lock's owner and generation, a lock-delay in progress and the register. With
//! `lease.grantor_restart: Wait` the new master extends every open session to (restart) + the
//! extension before it expires any (Burrows: it cannot know how far its predecessor extended
//! them); with `Forget` it skips that step and expires every session at once, so a lock held
//! across the fail-over is released (and lock-delay starts). The queue of pending Acquires is
//! not kept: clients retry every `retry_every`.
//!
//! Duplicates change nothing: Chubby's RPCs run over TCP, so the master never sees a copy of a
//! request the network duplicated, and the register applies a duplicated write once.

use super::msg::Message;
use super::{ChubbyConfig, Disk, KeepAliveMode};
use crate::clock::ClockKind;
use crate::msg::{NodeId, Token};
use crate::scenario::GrantorRestart;
use crate::strategy::service_node::{self, Service};
use crate::strategy::{Cx, Fact, LeaseParams, Out, Register, TimerId};
use crate::time::{LocalDur, LocalTime};

/// Fires at the earliest expiry among the open sessions.
pub(super) const EXPIRY: TimerId = 0;
/// Fires when a lock-delay ends.
pub(super) const LOCK_DELAY: TimerId = 1;
/// Fires at the earliest instant a held KeepAlive is due for its answer.
pub(super) const ANSWER: TimerId = 2;

/// An open session, as the master keeps it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Session {
    pub(super) node: NodeId,
    pub(super) id: u64,
    /// Monotonic time on the master at which it expires.
    pub(super) expiry: LocalTime,
    /// The newest KeepAlive heard: a duplicate (same id) extends the session once.
    keepalive_req: u64,
    /// The newest KeepAlive this master answered (0: none since it started).
    answered_req: u64,
    /// The KeepAlive held open, waiting for its answer.
    held: Option<Held>,
}

/// A KeepAlive the master holds.
#[derive(Clone, Copy, Debug)]
struct Held {
    req: u64,
    /// The client's send time, echoed in the answer.
    sent: LocalTime,
    /// When it arrived, on the master's monotonic clock.
    arrived: LocalTime,
}

impl Session {
    /// When a held KeepAlive of this session is due: `hold_margin` before it expires.
    fn answer_due(&self, c: &ChubbyConfig) -> LocalTime {
        self.expiry - c.hold_margin
    }
}

/// Who holds the lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Owner {
    pub(super) node: NodeId,
    pub(super) session: u64,
    /// The lock's generation number when it was granted.
    pub(super) token: Token,
}

/// What the master makes of a session id it hears from a client.
enum Heard {
    /// An open session, at this index.
    Open(usize),
    /// One that expired, or older than the client's newest.
    Expired,
}

/// The master.
pub struct Master {
    p: LeaseParams,
    c: ChubbyConfig,
    /// Open sessions, in order of opening.
    pub(super) sessions: Vec<Session>,
    /// Per client node, the newest session id ever opened.
    newest: Vec<u64>,
    pub(super) owner: Option<Owner>,
    /// The last generation number granted.
    pub(super) generation: Token,
    /// While a lock-delay runs, the master's monotonic time at which it ends.
    pub(super) delay_until: Option<LocalTime>,
    /// Sessions waiting for the lock, oldest first: (node, session).
    pub(super) pending: Vec<(NodeId, u64)>,
    /// Where the expiry timer is armed, if it is.
    expiry_armed: Option<LocalTime>,
    /// Where the answer timer is armed, if it is.
    answer_armed: Option<LocalTime>,
    register: Register,
}

impl Master {
    pub(super) fn new(p: LeaseParams, c: ChubbyConfig, disk: Disk) -> Master {
        let sessions = disk
            .sessions
            .iter()
            .map(|&(node, id)| Session {
                node,
                id,
                expiry: LocalTime::from_ns(i64::MIN), // set in on_start
                keepalive_req: 0,
                answered_req: 0,
                held: None,
            })
            .collect();
        Master {
            p,
            c,
            sessions,
            newest: disk.newest,
            owner: disk.owner,
            generation: disk.generation,
            delay_until: disk.delay_until,
            pending: Vec::new(),
            expiry_armed: None,
            answer_armed: None,
            register: disk.register,
        }
    }

    /// What a session is extended by: T, or the bound under load.
    fn extension(&self) -> LocalDur {
        self.c.extension(&self.p)
    }

    fn heard(&mut self, cx: &Cx, node: NodeId, id: u64, out: &mut Out<Message>) -> Heard {
        if let Some(i) = self
            .sessions
            .iter()
            .position(|s| s.node == node && s.id == id)
        {
            return Heard::Open(i);
        }
        if self.newest.len() <= node {
            self.newest.resize(node + 1, 0);
        }
        if id <= self.newest[node] {
            return Heard::Expired;
        }
        self.newest[node] = id;
        self.sessions.push(Session {
            node,
            id,
            expiry: cx.mono + self.extension(),
            keepalive_req: 0,
            answered_req: 0,
            held: None,
        });
        self.arm_expiry(out);
        Heard::Open(self.sessions.len() - 1)
    }

    /// Arms the expiry timer at the earliest expiry of an open session, if it moved.
    fn arm_expiry(&mut self, out: &mut Out<Message>) {
        let earliest = self.sessions.iter().map(|s| s.expiry).min();
        service_node::arm_earliest(EXPIRY, earliest, &mut self.expiry_armed, out);
    }

    /// Arms the answer timer at the earliest instant a held KeepAlive is due, if it moved.
    fn arm_answer(&mut self, out: &mut Out<Message>) {
        let c = &self.c;
        let earliest = self
            .sessions
            .iter()
            .filter(|s| s.held.is_some())
            .map(|s| s.answer_due(c))
            .min();
        service_node::arm_earliest(ANSWER, earliest, &mut self.answer_armed, out);
    }

    /// A KeepAlive of the open session `i`: held, or answered at once (see the module doc).
    fn keep_alive(
        &mut self,
        cx: &Cx,
        i: usize,
        (req, acked, sent): (u64, u64, LocalTime),
        out: &mut Out<Message>,
    ) {
        let c = self.c;
        let s = &mut self.sessions[i];
        s.keepalive_req = req;
        let hold = c.keepalive == KeepAliveMode::HeldOpen
            && s.answered_req != 0
            && acked == s.answered_req
            && cx.mono < s.answer_due(&c);
        // A newer KeepAlive replaces one held: the older is never answered.
        s.held = Some(Held {
            req,
            sent,
            arrived: cx.mono,
        });
        if hold {
            debug_assert!(
                c.hold_margin > LocalDur::ZERO,
                "a held KeepAlive is due before expiry"
            );
            self.arm_answer(out);
        } else {
            self.answer(cx, i, out);
        }
    }

    /// Answers the KeepAlive session `i` holds: extends the session from now by the extension
    /// and says so, with how long the KeepAlive was held.
    fn answer(&mut self, cx: &Cx, i: usize, out: &mut Out<Message>) {
        let extension = self.extension();
        let s = &mut self.sessions[i];
        let held = s.held.take().expect("a KeepAlive to answer");
        s.answered_req = held.req;
        s.expiry = cx.mono + extension;
        let (node, session, until) = (s.node, s.id, s.expiry);
        let ack = Message::KeepAliveAck {
            session,
            req: held.req,
            sent: held.sent,
            held: cx.mono - held.arrived,
            extension,
        };
        out.send(node, ack);
        if let Some(o) = self
            .owner
            .filter(|o| (o.node, o.session) == (node, session))
        {
            out.report(Fact::Renewed {
                token: o.token,
                until,
            });
        }
        self.arm_expiry(out);
        self.arm_answer(out);
    }

    /// Answers every held KeepAlive that is due.
    fn answer_all_due(&mut self, cx: &Cx, out: &mut Out<Message>) {
        for i in 0..self.sessions.len() {
            let s = &self.sessions[i];
            if s.held.is_some() && s.answer_due(&self.c) <= cx.mono {
                self.answer(cx, i, out);
            }
        }
    }

    fn delaying(&self, cx: &Cx) -> bool {
        self.delay_until.is_some_and(|until| cx.mono < until)
    }

    /// Grants the lock to the oldest pending session, if it is free and no lock-delay runs.
    fn try_grant(&mut self, cx: &Cx, out: &mut Out<Message>) {
        if self.owner.is_some() || self.delaying(cx) || self.pending.is_empty() {
            return;
        }
        let (node, session) = self.pending.remove(0);
        self.generation += 1;
        let token = self.generation;
        self.owner = Some(Owner {
            node,
            session,
            token,
        });
        let until = self
            .sessions
            .iter()
            .find(|s| s.node == node && s.id == session)
            .expect("a pending session is open")
            .expiry;
        out.send(
            node,
            Message::Grant {
                session,
                token,
                values: self.register.values().clone(),
            },
        );
        out.report(Fact::Issued {
            token,
            to: node,
            until,
        });
    }

    /// Expires every session whose time has come; releases the lock of one that held it.
    fn expire(&mut self, cx: &Cx, out: &mut Out<Message>) {
        let now = cx.mono;
        let mut released = false;
        for s in self.sessions.iter().filter(|s| s.expiry <= now) {
            self.pending.retain(|&(n, id)| (n, id) != (s.node, s.id));
            if self
                .owner
                .is_some_and(|o| (o.node, o.session) == (s.node, s.id))
            {
                self.owner = None;
                released = true;
            }
        }
        self.sessions.retain(|s| s.expiry > now);
        if released && self.c.lock_delay > LocalDur::ZERO {
            let until = now + self.c.lock_delay;
            self.delay_until = Some(until);
            out.set_timer(LOCK_DELAY, ClockKind::Monotonic, until);
        }
        self.arm_expiry(out);
        self.arm_answer(out);
        self.try_grant(cx, out);
    }
}

impl Service for Master {
    type Msg = Message;
    type Disk = Disk;

    /// What the replicated database holds.
    fn into_disk(self) -> Disk {
        Disk {
            sessions: self.sessions.iter().map(|s| (s.node, s.id)).collect(),
            newest: self.newest,
            owner: self.owner,
            generation: self.generation,
            delay_until: self.delay_until,
            register: self.register,
        }
    }

    fn on_start(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        if !cx.restarted {
            return;
        }
        match self.p.grantor_restart {
            GrantorRestart::Wait => {
                // Fail-over: every session the database knows lives an extension from now.
                let expiry = cx.mono + self.extension();
                for s in &mut self.sessions {
                    s.expiry = expiry;
                }
            }
            GrantorRestart::Forget => {
                // The bug: the new master does not extend the sessions it found.
                for s in &mut self.sessions {
                    s.expiry = cx.mono;
                }
            }
        }
        if let Some(until) = self.delay_until {
            out.set_timer(LOCK_DELAY, ClockKind::Monotonic, until);
        }
        self.expire(cx, out);
    }

    fn on_message(&mut self, cx: &mut Cx, from: NodeId, msg: Message, out: &mut Out<Message>) {
        match msg {
            // Chubby's RPCs run over TCP, which delivers a request once: a copy the network
            // duplicated is not seen (a second `Acquire` would have its grant said again, a
            // request of an expired session its `SessionExpired`). Writes stay: the register
            // counts their copies.
            Message::KeepAlive { .. } | Message::Acquire { .. } | Message::Release { .. }
                if cx.duplicate => {}
            Message::KeepAlive {
                session,
                req,
                acked,
                sent,
            } => match self.heard(cx, from, session, out) {
                Heard::Open(i) => {
                    // An older KeepAlive than one already heard (a copy, or overtaken) changes
                    // nothing.
                    if req > self.sessions[i].keepalive_req {
                        self.keep_alive(cx, i, (req, acked, sent), out);
                    }
                }
                Heard::Expired => out.send(from, Message::SessionExpired { session }),
            },
            Message::Acquire { session } => match self.heard(cx, from, session, out) {
                Heard::Open(_) => {
                    if let Some(o) = self
                        .owner
                        .filter(|o| (o.node, o.session) == (from, session))
                    {
                        // Its grant was lost or is late: say it again (the client ignores a
                        // generation it already has).
                        let values = self.register.values().clone();
                        out.send(
                            from,
                            Message::Grant {
                                session,
                                token: o.token,
                                values,
                            },
                        );
                    } else if !self.pending.contains(&(from, session)) {
                        self.pending.push((from, session));
                        self.try_grant(cx, out);
                    }
                }
                Heard::Expired => out.send(from, Message::SessionExpired { session }),
            },
            Message::Release { session, token } => {
                if self.owner
                    == Some(Owner {
                        node: from,
                        session,
                        token,
                    })
                {
                    self.owner = None; // a clean release: no lock-delay
                    self.try_grant(cx, out);
                }
            }
            Message::Write { token, key, value } => {
                let write = (from, token, (key, value));
                let (fencing, duplicate) = (self.p.fencing, cx.duplicate);
                (self.register).serve(out, write, fencing, duplicate, Message::WriteAck);
            }
            Message::KeepAliveAck { .. }
            | Message::SessionExpired { .. }
            | Message::Grant { .. }
            | Message::WriteAck(_) => {}
        }
    }

    fn on_timer(&mut self, cx: &mut Cx, timer: TimerId, out: &mut Out<Message>) {
        match timer {
            EXPIRY => {
                self.expiry_armed = None;
                self.expire(cx, out);
            }
            ANSWER => {
                self.answer_armed = None;
                // After a pause a session may be past its expiry too: it expires unanswered.
                self.expire(cx, out);
                self.answer_all_due(cx, out);
                self.arm_answer(out);
            }
            LOCK_DELAY if !self.delaying(cx) => {
                self.delay_until = None;
                self.try_grant(cx, out);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Role;
    use crate::strategy::{Action, Store};

    const S: i64 = 1_000_000_000;
    const MS: i64 = 1_000_000;
    /// Node 0 is the master, nodes 1 to 3 clients.
    const ROLES: &[Role] = &[
        Role::Grantor,
        Role::Contender,
        Role::Contender,
        Role::Contender,
    ];

    fn params(restart: GrantorRestart) -> LeaseParams {
        LeaseParams {
            lease: LocalDur::from_secs(12),
            renew_every: LocalDur::from_secs(4),
            retry_every: LocalDur::from_secs(1),
            grantor_restart: restart,
            fencing: false,
            initial_leader: None,
        }
    }

    /// The settings of most tests: KeepAlives answered at once, a `lock_delay_s` lock-delay.
    fn config(lock_delay_s: i64, keepalive: KeepAliveMode) -> ChubbyConfig {
        ChubbyConfig {
            grace: LocalDur::from_secs(45),
            lock_delay: LocalDur::from_secs(lock_delay_s),
            act_in_jeopardy: false,
            holder_margin: LocalDur::ZERO,
            keepalive,
            hold_margin: LocalDur::from_secs(1),
            extend_under_load: None,
        }
    }

    fn master(lock_delay_s: i64) -> Master {
        let c = config(lock_delay_s, KeepAliveMode::Immediate);
        Master::new(params(GrantorRestart::Wait), c, Disk::default())
    }

    /// Calls `f` on `m` when the master's clocks read `at_ns`; what it gave.
    fn call(
        m: &mut Master,
        at_ns: i64,
        f: impl FnOnce(&mut Master, &mut Cx, &mut Out<Message>),
    ) -> Out<Message> {
        crate::strategy::call_for_test(m, 0, ROLES, LocalTime::from_ns(at_ns), f)
    }

    fn from(m: &mut Master, at_ns: i64, node: NodeId, msg: Message) -> Out<Message> {
        call(m, at_ns, |m, cx, out| m.on_message(cx, node, msg, out))
    }

    /// KeepAlive `req` of a client that has no answer in this session.
    fn keep_alive(session: u64, req: u64) -> Message {
        keep_alive_acked(session, req, 0)
    }

    fn keep_alive_acked(session: u64, req: u64, acked: u64) -> Message {
        Message::KeepAlive {
            session,
            req,
            acked,
            sent: LocalTime::from_ns(0),
        }
    }

    /// The answers sent, as (req, held, extension) in ns.
    fn answers(given: &Out<Message>) -> Vec<(u64, i64, i64)> {
        sent(given)
            .into_iter()
            .filter_map(|(_, m)| match m {
                Message::KeepAliveAck {
                    req,
                    held,
                    extension,
                    ..
                } => Some((req, held.ns(), extension.ns())),
                _ => None,
            })
            .collect()
    }

    /// The messages sent, with their destinations.
    fn sent(given: &Out<Message>) -> Vec<(NodeId, Message)> {
        given
            .actions()
            .iter()
            .filter_map(|e| match e {
                Action::Send { to, msg } => Some((*to, msg.clone())),
                _ => None,
            })
            .collect()
    }

    /// Who got a grant, with which generation.
    fn granted(given: &Out<Message>) -> Vec<(NodeId, Token)> {
        given
            .facts()
            .iter()
            .filter_map(|e| match *e {
                Fact::Issued { token, to, .. } => Some((to, token)),
                _ => None,
            })
            .collect()
    }

    /// Node 1 holds generation 1 through session 1 (opened at 0, to 12 s); nodes 2 and 3 queue
    /// behind it, in that order, through their sessions 1 (opened at 1 and 2 s).
    fn held_by_1_with_2_and_3_queued(lock_delay_s: i64) -> Master {
        let mut m = master(lock_delay_s);
        from(&mut m, 0, 1, keep_alive(1, 1));
        assert_eq!(
            granted(&from(&mut m, 0, 1, Message::Acquire { session: 1 })),
            [(1, 1)]
        );
        for node in [2, 3] {
            let at = (node as i64 - 1) * S;
            from(&mut m, at, node, keep_alive(1, 1));
            assert!(granted(&from(&mut m, at, node, Message::Acquire { session: 1 })).is_empty());
        }
        m
    }

    #[test]
    fn an_expired_session_is_told_so_and_a_newer_one_opens() {
        let mut m = master(0);
        from(&mut m, 0, 1, keep_alive(1, 1));
        // Open to 12 s: a KeepAlive at 11.999999999 s is answered and moves it to 23.999999999 s.
        let ack = from(&mut m, 12 * S - 1, 1, keep_alive(1, 2));
        assert!(matches!(
            sent(&ack)[..],
            [(1, Message::KeepAliveAck { .. })]
        ));
        // A duplicate of that KeepAlive is not answered twice.
        assert!(sent(&from(&mut m, 12 * S, 1, keep_alive(1, 2))).is_empty());
        call(&mut m, 24 * S - 2, |m, cx, out| m.on_timer(cx, EXPIRY, out));
        assert_eq!(m.sessions.len(), 1, "open until 23.999999999 s");
        call(&mut m, 24 * S - 1, |m, cx, out| m.on_timer(cx, EXPIRY, out));
        assert!(m.sessions.is_empty());
        let late = from(&mut m, 25 * S, 1, keep_alive(1, 3));
        assert_eq!(sent(&late), [(1, Message::SessionExpired { session: 1 })]);
        let acquire = from(&mut m, 25 * S, 1, Message::Acquire { session: 1 });
        assert_eq!(
            sent(&acquire),
            [(1, Message::SessionExpired { session: 1 })]
        );
        // Session 2 of the same client is new: it opens.
        let fresh = from(&mut m, 25 * S, 1, keep_alive(2, 4));
        assert!(matches!(
            sent(&fresh)[..],
            [(1, Message::KeepAliveAck { session: 2, .. })]
        ));
    }

    #[test]
    fn an_expired_holder_hands_the_lock_to_the_oldest_waiter_after_lock_delay() {
        // Node 1's session expires at 12 s; the lock is refused until 12 + 60 = 72 s, then
        // granted to node 2 (queued before node 3) with generation 2. Nodes 2 and 3 keep their
        // sessions alive meanwhile.
        let mut m = held_by_1_with_2_and_3_queued(60);
        for at in [10, 20, 30, 40, 50, 60, 70] {
            from(&mut m, at * S, 2, keep_alive(1, at as u64));
            from(&mut m, at * S, 3, keep_alive(1, at as u64));
        }
        let expiry = call(&mut m, 12 * S, |m, cx, out| m.on_timer(cx, EXPIRY, out));
        assert!(granted(&expiry).is_empty());
        assert_eq!(m.owner, None);
        assert!(granted(&call(&mut m, 72 * S - 1, |m, cx, out| m
            .on_timer(cx, LOCK_DELAY, out)))
        .is_empty());
        let at_end = call(&mut m, 72 * S, |m, cx, out| m.on_timer(cx, LOCK_DELAY, out));
        assert_eq!(granted(&at_end), [(2, 2)]);
    }

    #[test]
    fn a_clean_release_hands_the_lock_over_at_once() {
        // With a 60 s lock-delay, node 1 releases generation 1 at 5 s: node 2 has it at 5 s.
        let mut m = held_by_1_with_2_and_3_queued(60);
        // A release of another generation, or from another session, changes nothing.
        for (node, session, token) in [(1, 1, 7), (1, 2, 1), (2, 1, 1)] {
            let r = from(&mut m, 5 * S, node, Message::Release { session, token });
            assert!(granted(&r).is_empty());
        }
        let r = from(
            &mut m,
            5 * S,
            1,
            Message::Release {
                session: 1,
                token: 1,
            },
        );
        assert_eq!(granted(&r), [(2, 2)]);
        assert_eq!(m.delay_until, None);
    }

    #[test]
    fn the_owner_asking_again_hears_its_grant_again() {
        let mut m = held_by_1_with_2_and_3_queued(0);
        let again = from(&mut m, 3 * S, 1, Message::Acquire { session: 1 });
        assert!(granted(&again).is_empty());
        assert_eq!(
            sent(&again),
            [(
                1,
                Message::Grant {
                    session: 1,
                    token: 1,
                    values: Store::default()
                }
            )]
        );
    }

    #[test]
    fn a_restarted_master_extends_every_session_before_expiring_any() {
        // The database after a crash at 5 s: node 1 holds generation 1, node 2 has a session.
        let disk = held_by_1_with_2_and_3_queued(0).into_disk();
        let restart = |how| {
            let c = config(0, KeepAliveMode::Immediate);
            let mut m = Master::new(params(how), c, disk.clone());
            let effects = call(&mut m, 100 * S, |m, cx, out| {
                cx.restarted = true;
                m.on_start(cx, out)
            });
            (m, effects)
        };
        // Wait: every session lives to 100 + 12 = 112 s; node 1 keeps the lock.
        let (m, effects) = restart(GrantorRestart::Wait);
        assert!(m
            .sessions
            .iter()
            .all(|s| s.expiry == LocalTime::from_ns(112 * S)));
        assert_eq!(m.owner.map(|o| (o.node, o.token)), Some((1, 1)));
        assert!(effects.actions().contains(&Action::SetTimer {
            timer: EXPIRY,
            clock: ClockKind::Monotonic,
            at: LocalTime::from_ns(112 * S)
        }));
        // Forget: every session expires at once and the lock is free; the next grant, to
        // node 2's new session, is generation 2.
        let (mut m, _) = restart(GrantorRestart::Forget);
        assert!(m.sessions.is_empty() && m.owner.is_none());
        from(&mut m, 101 * S, 2, keep_alive(2, 1));
        let grant = from(&mut m, 101 * S, 2, Message::Acquire { session: 2 });
        assert_eq!(granted(&grant), [(2, 2)]);
    }

    fn held_open(extend_under_load: Option<LocalDur>) -> Master {
        let c = ChubbyConfig {
            extend_under_load,
            ..config(0, KeepAliveMode::HeldOpen)
        };
        Master::new(params(GrantorRestart::Wait), c, Disk::default())
    }

    #[test]
    fn a_held_keepalive_is_answered_when_the_session_has_the_hold_margin_left() {
        let mut m = held_open(None);
        // KeepAlive 1 opens the session at 0: answered at once, to 0 + 12 = 12 s.
        assert_eq!(
            answers(&from(&mut m, 0, 1, keep_alive(1, 1))),
            [(1, 0, 12 * S)]
        );
        // KeepAlive 2 from a client that has answer 1, at 1 ms: held until 12 - 1 = 11 s.
        let held = from(&mut m, MS, 1, keep_alive_acked(1, 2, 1));
        assert!(sent(&held).is_empty());
        assert!(held.actions().contains(&Action::SetTimer {
            timer: ANSWER,
            clock: ClockKind::Monotonic,
            at: LocalTime::from_ns(11 * S)
        }));
        let early = call(&mut m, 11 * S - 1, |m, cx, out| m.on_timer(cx, ANSWER, out));
        assert!(sent(&early).is_empty());
        // At 11 s: held 11 - 0.001 = 10.999 s, the session extended to 11 + 12 = 23 s.
        let due = call(&mut m, 11 * S, |m, cx, out| m.on_timer(cx, ANSWER, out));
        assert_eq!(answers(&due), [(2, 10_999 * MS, 12 * S)]);
        assert_eq!(m.sessions[0].expiry, LocalTime::from_ns(23 * S));
        // A client that says it has only answer 1 (answer 2 was lost) is answered at once, at
        // 15 s: to 15 + 12 = 27 s.
        let lost = from(&mut m, 15 * S, 1, keep_alive_acked(1, 3, 1));
        assert_eq!(answers(&lost), [(3, 0, 12 * S)]);
        // KeepAlive 4 at 16 s is held (due at 27 - 1 = 26 s); KeepAlive 5 at 17 s replaces
        // it: at 26 s only 5 is answered, held 26 - 17 = 9 s.
        assert!(sent(&from(&mut m, 16 * S, 1, keep_alive_acked(1, 4, 3))).is_empty());
        assert!(sent(&from(&mut m, 17 * S, 1, keep_alive_acked(1, 5, 3))).is_empty());
        let due = call(&mut m, 26 * S, |m, cx, out| m.on_timer(cx, ANSWER, out));
        assert_eq!(answers(&due), [(5, 9 * S, 12 * S)]);
    }

    #[test]
    fn under_load_every_extension_is_the_bound() {
        // extend_under_load 60 s: the session opens to 0 + 60 s, KeepAlive 2 of 1 ms is held
        // until 60 - 1 = 59 s and extends it to 59 + 60 = 119 s.
        let mut m = held_open(Some(LocalDur::from_secs(60)));
        assert_eq!(
            answers(&from(&mut m, 0, 1, keep_alive(1, 1))),
            [(1, 0, 60 * S)]
        );
        assert!(sent(&from(&mut m, MS, 1, keep_alive_acked(1, 2, 1))).is_empty());
        let due = call(&mut m, 59 * S, |m, cx, out| m.on_timer(cx, ANSWER, out));
        assert_eq!(answers(&due), [(2, 58_999 * MS, 60 * S)]);
        assert_eq!(m.sessions[0].expiry, LocalTime::from_ns(119 * S));
    }

    #[test]
    fn a_new_master_answers_the_first_keepalive_of_each_session_at_once() {
        // Session 1 answered (KeepAlive 1) then holding KeepAlive 2 when the master crashes at
        // 5 s; the new master, up at 100 s, extends it to 112 s and answers KeepAlive 3
        // (acked 1) at once: its client's lease from the old master is long over.
        let mut m = held_open(None);
        from(&mut m, 0, 1, keep_alive(1, 1));
        from(&mut m, MS, 1, keep_alive_acked(1, 2, 1));
        let c = config(0, KeepAliveMode::HeldOpen);
        let mut m = Master::new(params(GrantorRestart::Wait), c, m.into_disk());
        call(&mut m, 100 * S, |m, cx, out| {
            cx.restarted = true;
            m.on_start(cx, out)
        });
        let first = from(&mut m, 100 * S, 1, keep_alive_acked(1, 3, 1));
        assert_eq!(answers(&first), [(3, 0, 12 * S)]);
        // Then held again: KeepAlive 4 (acked 3) waits until 112 - 1 = 111 s.
        assert!(sent(&from(&mut m, 100 * S, 1, keep_alive_acked(1, 4, 3))).is_empty());
    }

    /// Grants with their nominal ends, as (node, generation, until in ns).
    fn issued(given: &Out<Message>) -> Vec<(NodeId, Token, i64)> {
        given
            .facts()
            .iter()
            .filter_map(|e| match *e {
                Fact::Issued { token, to, until } => Some((to, token, until.ns())),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn an_acquire_opens_its_session_for_one_extension_and_the_grant_ends_with_it() {
        // No KeepAlive first: the Acquire at 5 s opens session 1 to 5 + 12 = 17 s, and the
        // grant's nominal end is that expiry.
        let mut m = master(0);
        let grant = from(&mut m, 5 * S, 1, Message::Acquire { session: 1 });
        assert_eq!(issued(&grant), [(1, 1, 17 * S)]);
    }

    #[test]
    fn a_grant_ends_with_the_session_of_its_own_client() {
        // Every client's session is number 1: node 1's ends at 12 s, node 2's (opened at 1 s)
        // at 13 s. Node 1 releases at 5 s; node 2's grant ends at 13 s, not 12 s.
        let mut m = held_by_1_with_2_and_3_queued(0);
        let release = Message::Release {
            session: 1,
            token: 1,
        };
        assert_eq!(issued(&from(&mut m, 5 * S, 1, release)), [(2, 2, 13 * S)]);
    }

    #[test]
    fn only_the_owners_keepalive_renews_the_lock() {
        // At 4 s node 1's KeepAlive moves its session and the lock to 4 + 12 = 16 s; node 2's
        // moves its session only.
        let mut m = held_by_1_with_2_and_3_queued(0);
        let renewed = |given: &Out<Message>| -> Vec<(Token, i64)> {
            given
                .facts()
                .iter()
                .filter_map(|e| match *e {
                    Fact::Renewed { token, until } => Some((token, until.ns())),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(
            renewed(&from(&mut m, 4 * S, 1, keep_alive(1, 2))),
            [(1, 16 * S)]
        );
        let other = from(&mut m, 4 * S, 2, keep_alive(1, 2));
        assert_eq!(answers(&other), [(2, 0, 12 * S)]);
        assert!(renewed(&other).is_empty());
    }

    #[test]
    fn a_keepalive_arriving_when_its_answer_is_due_is_answered_at_once() {
        // Answered at 0 to 12 s, so a held KeepAlive would be due at 12 - 1 = 11 s: one that
        // arrives at 11 s exactly is not held.
        let mut m = held_open(None);
        from(&mut m, 0, 1, keep_alive(1, 1));
        let at_due = from(&mut m, 11 * S, 1, keep_alive_acked(1, 2, 1));
        assert_eq!(answers(&at_due), [(2, 0, 12 * S)]);
    }

    #[test]
    fn only_the_holders_expiry_starts_the_lock_delay() {
        // Lock-delay 60 s. Node 3's session (opened at 2 s, to 14 s) expires while node 1's
        // was kept alive at 10 s (to 22 s): no lock-delay, so node 1's release at 15 s hands
        // the lock to node 2 (kept alive to 22 s) at once.
        let mut m = held_by_1_with_2_and_3_queued(60);
        from(&mut m, 10 * S, 1, keep_alive(1, 2));
        from(&mut m, 10 * S, 2, keep_alive(1, 2));
        call(&mut m, 14 * S, |m, cx, out| m.on_timer(cx, EXPIRY, out));
        assert_eq!(m.sessions.len(), 2, "node 3's session expired");
        assert_eq!(m.delay_until, None);
        let release = Message::Release {
            session: 1,
            token: 1,
        };
        assert_eq!(granted(&from(&mut m, 15 * S, 1, release)), [(2, 2)]);
    }

    #[test]
    fn without_a_lock_delay_an_expired_holder_sets_no_delay_timer() {
        // Lock-delay 0: node 1's session expires at 12 s and node 2 has the lock at once, with
        // no lock-delay timer armed.
        let mut m = held_by_1_with_2_and_3_queued(0);
        from(&mut m, 10 * S, 2, keep_alive(1, 2));
        let expiry = call(&mut m, 12 * S, |m, cx, out| m.on_timer(cx, EXPIRY, out));
        assert_eq!(granted(&expiry), [(2, 2)]);
        assert_eq!(m.delay_until, None);
        assert!(!expiry
            .actions()
            .iter()
            .any(|a| matches!(a, Action::SetTimer { timer, .. } if *timer == LOCK_DELAY)));
    }

    #[test]
    fn a_request_the_network_duplicated_is_not_seen() {
        // The owner's duplicated Acquire is not answered with its grant again, a duplicated
        // KeepAlive not answered, and a duplicated Acquire of a new client not queued.
        let mut m = held_by_1_with_2_and_3_queued(0);
        let dup = |m: &mut Master, node, msg| {
            call(m, 3 * S, |m, cx, out| {
                cx.duplicate = true;
                m.on_message(cx, node, msg, out)
            })
        };
        assert!(sent(&dup(&mut m, 1, Message::Acquire { session: 1 })).is_empty());
        assert!(sent(&dup(&mut m, 1, keep_alive(1, 2))).is_empty());
        assert!(dup(&mut m, 4, Message::Acquire { session: 1 })
            .actions()
            .is_empty());
        assert_eq!(m.pending, [(2, 1), (3, 1)]);
    }
}
