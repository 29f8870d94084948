//! An etcd client holding the lock through a session: clientv3's `concurrency.Session` (a lease
//! kept alive) and `concurrency.Mutex` (client/v3/concurrency/mutex.go).
//!
//! The client grants a lease of T (`lease.duration`), keeps it alive, and locks: the lock's
//! `Txn` puts its key (attached to the lease) if it has none and gets the owner, the key with
//! the smallest create revision. Owner, it holds the lock under its key's revision. Else it
//! waits until every older key is deleted (`waitDeletes`) and then, unless `check_own_key` is
//! off (etcd before the fix of issues 9921 and 11456), checks that its own key still exists by a
//! linearizable `Get`: a key revoked with its lease while it waited, or since, means
//! `ErrSessionExpired`, and it starts over.
//!
//! The session's keep-alive loop (client/v3/lease.go) is the renewal loop: a KeepAlive is due
//! TTL/3 after the last answer (`nextKeepAlive`), the session ends when an answer says the
//! lease is gone or when a TTL has passed since the last answer's arrival (`deadline`: from the
//! answer's receipt, not its send). Both loops look every 500 ms (`sendKeepAliveLoop`'s
//! `retryConnWait`, `deadlineLoop`), on the client's monotonic clock from its start. The
//! application acts while it holds the lock and, with `app_watches_session`, while the session
//! lives (it stops at `Session.Done()`; without it, it holds until it unlocks, as a caller of
//! the Lock RPC that keeps no session does). A session that ends makes it start over with a
//! new one.
//!
//! A client calls one member, its endpoint: clients are spread over the members in node order
//! starting from the second (the first client calls the second member), and a call not
//! answered within `lease.retry_every` is made again to the next member.

use super::msg::{Call, Message, Reply};
use super::{EtcdConfig, LeaseId};
use crate::clock::ClockKind;
use crate::msg::{NodeId, Token};
use crate::scenario::Role;
use crate::strategy::{Belief, Cx, Fact, LeaseParams, Out, Request, Store, Thread, TimerId};
use crate::time::{LocalDur, LocalTime};

/// The keep-alive and deadline loops' look (every [`POLL_EVERY`]).
const POLL: TimerId = 0;
/// A call not answered, or a waiter's watch, made again.
const RETRY: TimerId = 1;
/// How often the session's loops look (clientv3 `retryConnWait`, the deadline loop's period).
pub const POLL_EVERY: LocalDur = LocalDur::from_ms(500);

/// The session: its lease and what the keep-alive loop knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Session {
    pub lease: LeaseId,
    /// The TTL the last answer gave.
    pub ttl: LocalDur,
    /// The session ends once the clock passes this (`ka.deadline`).
    pub deadline: LocalTime,
    /// A KeepAlive is sent at the first look past this (`ka.nextKeepAlive`).
    pub next_keepalive: LocalTime,
    /// `Session.Done()` has closed.
    pub done: bool,
}

/// Where the lock stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Lock {
    /// No lock call under way (before the session, or between sessions).
    Idle,
    /// The lock's `Txn` sent.
    Locking,
    /// Waiting for the keys before its own (created at `rev`) to go.
    Waiting { rev: Token },
    /// They went: its `Get` of its own key sent.
    Checking { rev: Token },
    /// Holding under its key's revision.
    Holding { rev: Token },
}

pub struct Client {
    c: EtcdConfig,
    p: LeaseParams,
    /// Its endpoint, as a position among the members.
    endpoint: usize,
    next_req: u64,
    /// The call waiting for an answer: its number and itself.
    pending: Option<(u64, Call)>,
    pub(super) session: Option<Session>,
    pub(super) lock: Lock,
    /// Its copy of the protected keys: the values the lock's answer carried, and its own
    /// writes as their answers arrive.
    copy: Store,
    /// Its monotonic reading at start: the loops look at this plus whole periods.
    origin: LocalTime,
}

impl Client {
    pub(super) fn new(c: EtcdConfig, p: LeaseParams) -> Client {
        Client {
            c,
            p,
            endpoint: 0,
            next_req: 0,
            pending: None,
            session: None,
            lock: Lock::Idle,
            copy: Store::default(),
            origin: LocalTime::from_ns(0),
        }
    }

    /// The member it calls now.
    fn member(&self, cx: &Cx) -> NodeId {
        let members: Vec<NodeId> = cx.peers(Role::Replica).collect();
        members[self.endpoint % members.len()]
    }

    /// Makes `call` (numbered afresh) and waits `retry_every` for its answer.
    fn call(&mut self, cx: &Cx, call: Call, out: &mut Out<Message>) {
        self.next_req += 1;
        self.pending = Some((self.next_req, call));
        self.send_pending(cx, out);
    }

    fn send_pending(&mut self, cx: &Cx, out: &mut Out<Message>) {
        if let Some((req, call)) = self.pending {
            out.send(self.member(cx), Message::Call { req, call });
            out.set_timer(RETRY, ClockKind::Monotonic, cx.mono + self.p.retry_every);
        }
    }

    /// A new session: `LeaseGrant(T)`.
    fn new_session(&mut self, cx: &Cx, out: &mut Out<Message>) {
        out.report(Fact::Seeking);
        self.session = None;
        self.lock = Lock::Idle;
        let ttl = self.p.lease;
        self.call(cx, Call::Grant { ttl }, out);
    }

    /// The session's lease granted: kept alive from now, and the lock's `Txn` sent.
    fn granted(&mut self, cx: &Cx, lease: LeaseId, ttl: LocalDur, out: &mut Out<Message>) {
        self.session = Some(Session {
            lease,
            ttl,
            deadline: cx.mono + ttl,
            next_keepalive: cx.mono,
            done: false,
        });
        self.lock = Lock::Locking;
        self.call(cx, Call::Lock { lease }, out);
    }

    /// The lock's `Txn` answered: the owner holds; any other waits for the keys before its own.
    fn locked(&mut self, cx: &Cx, rev: Token, owner: bool, values: Store, out: &mut Out<Message>) {
        if owner {
            self.hold(rev, values, out);
        } else {
            self.lock = Lock::Waiting { rev };
            self.watch(cx, rev, out);
        }
    }

    /// `waitDeletes`, made again every `retry_every` until answered (a watch re-established).
    fn watch(&self, cx: &Cx, rev: Token, out: &mut Out<Message>) {
        out.send(self.member(cx), Message::WaitDeletes { rev });
        out.set_timer(RETRY, ClockKind::Monotonic, cx.mono + self.p.retry_every);
    }

    /// The keys before its own are gone: it gets its own key (`check_own_key`), or goes on as
    /// if it found it.
    fn turn(&mut self, cx: &Cx, rev: Token, values: Store, out: &mut Out<Message>) {
        out.cancel_timer(RETRY);
        if self.c.check_own_key {
            self.lock = Lock::Checking { rev };
            self.call(cx, Call::Get { rev }, out);
        } else {
            self.checked(cx, rev, true, values, out);
        }
    }

    /// Its own key found (`exists`) or not: it holds, unless the key is gone
    /// (`ErrSessionExpired`) or its application watches a session that has ended.
    fn checked(
        &mut self,
        cx: &Cx,
        rev: Token,
        exists: bool,
        values: Store,
        out: &mut Out<Message>,
    ) {
        let ended = self.c.app_watches_session && self.session.is_none_or(|s| s.done);
        if !exists || ended {
            self.new_session(cx, out);
        } else {
            self.hold(rev, values, out);
        }
    }

    fn hold(&mut self, rev: Token, values: Store, out: &mut Out<Message>) {
        self.lock = Lock::Holding { rev };
        self.copy = values;
        out.report(Fact::Holding { token: rev });
    }

    /// The session ended (`Session.Done()`): an application that watches it stops and starts
    /// over with a new session, unless it is waiting in the lock, which the session does not
    /// end. One that does not watch keeps what it holds.
    fn session_done(&mut self, cx: &Cx, out: &mut Out<Message>) {
        if let Some(s) = &mut self.session {
            s.done = true;
        }
        match self.lock {
            Lock::Waiting { .. } | Lock::Checking { .. } => {}
            Lock::Holding { .. } if !self.c.app_watches_session => {}
            _ => self.new_session(cx, out),
        }
    }

    /// The loops' look: the session ends past its deadline; else a KeepAlive goes if due.
    fn poll(&mut self, cx: &Cx, out: &mut Out<Message>) {
        let since = (cx.mono - self.origin).ns();
        let next = self.origin.ns() + (since.div_euclid(POLL_EVERY.ns()) + 1) * POLL_EVERY.ns();
        out.set_timer(POLL, ClockKind::Monotonic, LocalTime::from_ns(next));
        let Some(s) = self.session.filter(|s| !s.done) else {
            return;
        };
        if s.deadline < cx.mono {
            self.session_done(cx, out);
        } else if s.next_keepalive < cx.mono {
            let lease = s.lease;
            out.send(self.member(cx), Message::KeepAlive { lease });
        }
    }

    /// A KeepAlive's answer: the deadline and the next KeepAlive move on, or the session ends.
    fn keepalive_answered(
        &mut self,
        cx: &Cx,
        lease: LeaseId,
        ttl: Option<LocalDur>,
        out: &mut Out<Message>,
    ) {
        let Some(s) = self
            .session
            .as_mut()
            .filter(|s| s.lease == lease && !s.done)
        else {
            return;
        };
        match ttl {
            Some(ttl) => {
                s.ttl = ttl;
                s.deadline = cx.mono + ttl;
                s.next_keepalive = cx.mono + LocalDur::from_ns(ttl.ns() / 3);
            }
            None => self.session_done(cx, out),
        }
    }

    fn answered(&mut self, cx: &Cx, req: u64, reply: Reply, out: &mut Out<Message>) {
        let Some((pending, call)) = self.pending else {
            return;
        };
        if pending != req {
            return;
        }
        self.pending = None;
        out.cancel_timer(RETRY);
        match (call, reply) {
            (Call::Grant { .. }, Reply::Granted { lease, ttl }) => {
                self.granted(cx, lease, ttl, out)
            }
            (Call::Lock { .. }, Reply::Locked { rev, owner, values }) => {
                self.locked(cx, rev, owner, values, out)
            }
            (Call::Lock { .. }, Reply::LeaseNotFound) => self.new_session(cx, out),
            (Call::Get { rev }, Reply::Key { exists, values }) => {
                self.checked(cx, rev, exists, values, out)
            }
            _ => {}
        }
    }

    /// A call not answered is made again to the next member; a waiter's watch again.
    fn retry(&mut self, cx: &Cx, out: &mut Out<Message>) {
        if self.pending.is_some() {
            self.endpoint += 1;
            self.send_pending(cx, out);
        } else if let Lock::Waiting { rev } = self.lock {
            self.watch(cx, rev, out);
        }
    }

    /// Whether the application acts now, and under which revision.
    fn acting(&self) -> Option<Token> {
        let Lock::Holding { rev } = self.lock else {
            return None;
        };
        let live = self.session.is_some_and(|s| !s.done);
        (live || !self.c.app_watches_session).then_some(rev)
    }

    pub(super) fn thread_of_timer(&self, timer: TimerId) -> Thread {
        match timer {
            POLL => Thread::Renewal,
            _ => Thread::Worker,
        }
    }

    pub(super) fn thread_of_message(&self, msg: &Message) -> Thread {
        match msg {
            Message::KeepAliveResp { .. } => Thread::Renewal,
            _ => Thread::Worker,
        }
    }

    /// Client number k (in node order among the clients) calls member k + 1 first.
    pub(super) fn on_start(&mut self, cx: &Cx, out: &mut Out<Message>) {
        let k = cx.peers(Role::Contender).position(|n| n == cx.node);
        self.endpoint = k.unwrap_or(0) + 1;
        self.origin = cx.mono;
        out.set_timer(POLL, ClockKind::Monotonic, cx.mono + POLL_EVERY);
        self.new_session(cx, out);
    }

    pub(super) fn on_message(&mut self, cx: &Cx, msg: Message, out: &mut Out<Message>) {
        match msg {
            Message::Answer {
                reply: Reply::Written(ack),
                ..
            } => {
                self.copy.merge(ack);
                let (key, value) = (ack.key, ack.value);
                out.report(Fact::WriteAcked { key, value });
            }
            Message::Answer { req, reply } => self.answered(cx, req, reply, out),
            Message::KeepAliveResp { lease, ttl } => self.keepalive_answered(cx, lease, ttl, out),
            Message::Turn { rev, values } if self.lock == (Lock::Waiting { rev }) => {
                self.turn(cx, rev, values, out)
            }
            _ => {}
        }
    }

    pub(super) fn on_timer(&mut self, cx: &Cx, timer: TimerId, out: &mut Out<Message>) {
        match timer {
            POLL => self.poll(cx, out),
            RETRY => self.retry(cx, out),
            _ => {}
        }
    }

    pub(super) fn check(&self) -> Option<Token> {
        self.acting()
    }

    /// A read is served from the copy; a write is a `Put` to etcd under the lock's revision,
    /// into the copy when its commit is answered.
    pub(super) fn on_request(
        &mut self,
        cx: &Cx,
        request: Request,
        token: Token,
        out: &mut Out<Message>,
    ) {
        match request {
            Request::Read { key } => out.report(Fact::Read {
                token,
                value: self.copy.get(key),
            }),
            Request::Write { key, value } => {
                out.report(Fact::WriteSent { token });
                let call = Call::Put { key, value, token };
                out.send(self.member(cx), Message::Call { req: 0, call });
            }
        }
    }

    pub(super) fn belief(&self) -> Belief {
        match self.acting() {
            Some(token) => Belief::Bool { token },
            None => Belief::None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::GrantorRestart;
    use crate::strategy::{call_for_test, Action};

    /// Two members, then this client (node 2): it calls member 1 first.
    const ROLES: &[Role] = &[Role::Replica, Role::Replica, Role::Contender];
    const MS: i64 = 1_000_000;

    fn at(ms: i64) -> LocalTime {
        LocalTime::from_ns(ms * MS)
    }

    fn client() -> Client {
        let s: super::super::settings::EtcdLease = crate::scenario::ron_options()
            .from_str("EtcdLease()")
            .unwrap();
        let p = LeaseParams {
            lease: LocalDur::from_secs(4),
            renew_every: LocalDur::from_secs(1),
            retry_every: LocalDur::from_secs(1),
            grantor_restart: GrantorRestart::Wait,
            fencing: false,
            initial_leader: None,
        };
        Client::new(s.config(), p)
    }

    #[test]
    fn a_client_not_holding_the_lock_refuses_whatever_the_time() {
        use crate::strategy::NodeLogic as _;
        let read = Request::Read { key: 0 };
        let mut node = super::super::Node::Client(Box::new(client()));
        assert!(node.refuses_whatever_the_time(read));
        let super::super::Node::Client(c) = &mut node else {
            unreachable!("built as a client")
        };
        // Holding the lock with its session ended: an application that watches the session
        // stops acting, one that does not acts on.
        c.lock = Lock::Holding { rev: 3 };
        assert!(node.refuses_whatever_the_time(read));
        let super::super::Node::Client(c) = &mut node else {
            unreachable!("built as a client")
        };
        c.c.app_watches_session = false;
        assert!(!node.refuses_whatever_the_time(read));
    }

    /// What one call into the client sent: the messages, to whom.
    fn sent(out: &Out<Message>) -> Vec<(NodeId, Message)> {
        out.actions()
            .iter()
            .filter_map(|a| match a {
                Action::Send { to, msg } => Some((*to, msg.clone())),
                _ => None,
            })
            .collect()
    }

    fn call(
        c: &mut Client,
        ms: i64,
        f: impl FnOnce(&mut Client, &Cx, &mut Out<Message>),
    ) -> Out<Message> {
        call_for_test(c, 2, ROLES, at(ms), |c, cx, out| f(c, cx, out))
    }

    #[test]
    fn keepalives_and_the_session_s_end_fall_on_the_loops_looks() {
        // Started at 100 ms: the loops look at 600, 1100, 1600, ... ms. The lease (TTL 4 s) is
        // granted at 106 ms: a KeepAlive is due at once, and goes at the look of 600 ms.
        let mut c = client();
        let out = call(&mut c, 100, |c, cx, out| c.on_start(cx, out));
        assert_eq!(
            sent(&out)[0].0,
            1,
            "the first client calls the second member"
        );
        let granted = Reply::Granted {
            lease: 2,
            ttl: LocalDur::from_secs(4),
        };
        call(&mut c, 106, |c, cx, out| c.answered(cx, 1, granted, out));
        let out = call(&mut c, 600, |c, cx, out| c.poll(cx, out));
        assert_eq!(sent(&out), [(1, Message::KeepAlive { lease: 2 })]);
        // Answered at 604 ms: deadline 4.604 s, next KeepAlive past 604 + 1333.333333 ms =
        // 1.937333333 s, so none at the look of 1.6 s and one at 2.1 s.
        let ttl = Some(LocalDur::from_secs(4));
        call(&mut c, 604, |c, cx, out| {
            c.keepalive_answered(cx, 2, ttl, out)
        });
        assert!(sent(&call(&mut c, 1600, |c, cx, out| c.poll(cx, out))).is_empty());
        assert_eq!(
            sent(&call(&mut c, 2100, |c, cx, out| c.poll(cx, out))).len(),
            1
        );
        // No answer to it: the look of 4.6 s is before the deadline (it sends again), the look
        // of 5.1 s past it: the session ends and a new one is asked for (LeaseGrant, call 3).
        assert_eq!(
            sent(&call(&mut c, 4600, |c, cx, out| c.poll(cx, out))).len(),
            1
        );
        let out = call(&mut c, 5100, |c, cx, out| c.poll(cx, out));
        let ttl = LocalDur::from_secs(4);
        assert_eq!(
            sent(&out),
            [(
                1,
                Message::Call {
                    req: 3,
                    call: Call::Grant { ttl }
                }
            )]
        );
        assert!(c.session.is_none());
    }

    #[test]
    fn a_waiter_told_its_turn_gets_its_own_key_and_holds_only_if_it_is_there() {
        // A waiter under key 5 (lease 2, call 2 its lock's Txn) is told its turn: it sends
        // `Get(myKey)` as call 3 and does not hold yet. The key there: it holds under 5. Gone
        // (revoked since the turn): it starts over, `LeaseGrant` as call 4.
        for (exists, holds) in [(true, Some(5)), (false, None)] {
            let mut c = client();
            call(&mut c, 100, |c, cx, out| c.on_start(cx, out));
            let ttl = LocalDur::from_secs(4);
            let granted = Reply::Granted { lease: 2, ttl };
            call(&mut c, 106, |c, cx, out| c.answered(cx, 1, granted, out));
            let locked = Reply::Locked {
                rev: 5,
                owner: false,
                values: Store::default(),
            };
            call(&mut c, 112, |c, cx, out| c.answered(cx, 2, locked, out));
            let turn = Message::Turn {
                rev: 5,
                values: Store::default(),
            };
            let out = call(&mut c, 200, |c, cx, out| c.on_message(cx, turn, out));
            let get = Message::Call {
                req: 3,
                call: Call::Get { rev: 5 },
            };
            assert_eq!(sent(&out), [(1, get)]);
            assert_eq!(c.acting(), None, "not before the Get is answered");
            let key = Reply::Key {
                exists,
                values: Store::default(),
            };
            let out = call(&mut c, 206, |c, cx, out| c.answered(cx, 3, key, out));
            assert_eq!(c.acting(), holds, "key there: {exists}");
            let again = Message::Call {
                req: 4,
                call: Call::Grant { ttl },
            };
            let started_over = sent(&out) == [(1, again)];
            assert_eq!(started_over, !exists, "key there: {exists}");
        }
    }
}
