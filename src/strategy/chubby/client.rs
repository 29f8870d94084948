//! A Chubby client: one session with the master, and through it the one lock it wants.
//!
//! The client opens a session at start (a KeepAlive and an Acquire with a fresh session id) and,
//! while it holds no lock, sends an Acquire every `retry_every` (its first process sends its
//! first Acquire `retry_every` late when `lease.initial_leader` names another client). With `keepalive: HeldOpen` it
//! sends the next KeepAlive as soon as one is answered, so that one is almost always held at
//! the master; when none is answered by the end of its local lease (or, before the session's
//! first answer, within `renew_every`) it sends one then, and again every `renew_every`. With
//! `Immediate` it sends one every `renew_every`. Its local lease is (send time of the
//! KeepAlive) + (how long the master held it) + (the extension the master granted) -
//! holder_margin on its monotonic clock, from the answer that gives the latest end: the master
//! extended the session from its answer, which left at least that long after the send. When
//! that passes the client is in jeopardy and keeps sending KeepAlives: an answer to one restores
//! the session (and the lock, which the master kept), as long as it arrives before the grace
//! period, `grace` on the same clock from the end of the local lease, is over. Then, or when the
//! master answers `SessionExpired`, the session and the lock are lost, and the client opens a
//! new session and asks again.
//!
//! It acts on the lock (serves reads, sends writes with the lock's generation number) while it
//! holds the lock and its local lease runs; with `act_in_jeopardy` (the bug) until grace ends.
//! A `StepDown` makes it release the lock cleanly and queue for it again.

use super::msg::Message;
use super::{ChubbyConfig, KeepAliveMode};
use crate::clock::ClockKind;
use crate::msg::{NodeId, Token};
use crate::scenario::Role;
use crate::strategy::service_node;
use crate::strategy::{Belief, Cx, Fact, LeaseParams, Out, Request, Store, Thread, TimerId};
use crate::time::{LocalDur, LocalTime};

const KEEPALIVE: TimerId = 0;
const RETRY: TimerId = 1;
const GRACE_END: TimerId = 2;

/// A client.
pub struct Client {
    c: ChubbyConfig,
    p: LeaseParams,
    /// The current session's id (0 before the first).
    pub(super) session: u64,
    next_session: u64,
    /// The newest KeepAlive sent (ids grow across sessions).
    next_req: u64,
    /// The newest KeepAlive of this session answered (0: none yet).
    acked: u64,
    /// The end of the local lease on the monotonic clock, once a KeepAlive of this session has
    /// been acknowledged.
    pub(super) lease_end: Option<LocalTime>,
    /// The lock's generation number, while this session holds it.
    pub(super) held: Option<Token>,
    /// The highest generation number ever granted to this client: an older grant is ignored.
    last_token: Token,
    /// Its copy of the register: the values its last grant carried, and its own writes the
    /// master answered since.
    copy: Store,
}

impl Client {
    pub(super) fn new(c: ChubbyConfig, p: LeaseParams) -> Client {
        Client {
            c,
            p,
            session: 0,
            next_session: 0,
            next_req: 0,
            acked: 0,
            lease_end: None,
            held: None,
            last_token: 0,
            copy: Store::default(),
        }
    }

    /// The master (the protocol's check makes sure there is one).
    fn master(cx: &Cx) -> NodeId {
        cx.peers(Role::Grantor).next().expect("checked: one master")
    }

    /// Opens a new session, larger than any this client opened in an earlier life, and asks
    /// for the lock through it.
    pub(super) fn open_session(&mut self, cx: &Cx, out: &mut Out<Message>) {
        self.new_session(cx, out);
        self.acquire(cx, out);
    }

    /// Opens a new session (its first KeepAlive), asking for nothing yet.
    fn new_session(&mut self, cx: &Cx, out: &mut Out<Message>) {
        self.next_session += 1;
        self.session = ((cx.incarnation as u64) << 32) | self.next_session;
        self.lease_end = None;
        self.acked = 0;
        self.held = None;
        out.cancel_timer(GRACE_END);
        self.keep_alive(cx, out);
    }

    /// Opens a new session as [`Self::open_session`] does, but asks for the lock only when the
    /// retry timer runs out, `retry_every` from now (another client is to hold first).
    fn open_session_waiting(&mut self, cx: &Cx, out: &mut Out<Message>) {
        self.new_session(cx, out);
        out.set_timer(RETRY, ClockKind::Monotonic, cx.mono + self.p.retry_every);
    }

    /// Sends a KeepAlive, and arms the timer for the next one if no answer comes first: held
    /// open, at the end of the local lease while it runs.
    fn keep_alive(&mut self, cx: &Cx, out: &mut Out<Message>) {
        self.next_req += 1;
        let msg = Message::KeepAlive {
            session: self.session,
            req: self.next_req,
            acked: self.acked,
            sent: cx.mono,
        };
        out.send(Self::master(cx), msg);
        let next = match (self.c.keepalive, self.lease_end) {
            (KeepAliveMode::HeldOpen, Some(end)) if end > cx.mono => end,
            _ => cx.mono + self.p.renew_every,
        };
        out.set_timer(KEEPALIVE, ClockKind::Monotonic, next);
    }

    /// The master's answer to KeepAlive `req` of this session: the local lease it gives, then,
    /// held open, the next KeepAlive at once if this answers the newest one sent.
    fn answered(&mut self, cx: &Cx, req: u64, end: LocalTime, out: &mut Out<Message>) {
        self.acked = self.acked.max(req);
        if self.lease_end.is_none_or(|e| end > e) {
            self.lease_end = Some(end);
            out.set_timer(GRACE_END, ClockKind::Monotonic, end + self.c.grace);
        }
        if self.c.keepalive == KeepAliveMode::HeldOpen && req == self.next_req {
            self.keep_alive(cx, out);
        }
    }

    fn acquire(&mut self, cx: &Cx, out: &mut Out<Message>) {
        out.report(Fact::Seeking);
        let msg = Message::Acquire {
            session: self.session,
        };
        out.send(Self::master(cx), msg);
        out.set_timer(RETRY, ClockKind::Monotonic, cx.mono + self.p.retry_every);
    }

    /// When grace ends: the end of the local lease plus `grace`.
    fn grace_end(&self) -> Option<LocalTime> {
        self.lease_end.map(|end| end + self.c.grace)
    }

    /// The session is over at `now` by the client's own clock.
    fn grace_over(&self, now: LocalTime) -> bool {
        self.grace_end().is_some_and(|end| now >= end)
    }

    /// The end of what the client believes of the lock: its local lease, or with
    /// `act_in_jeopardy` the end of grace.
    fn deadline(&self) -> Option<LocalTime> {
        if self.c.act_in_jeopardy {
            self.grace_end()
        } else {
            self.lease_end
        }
    }
}

/// The local lease an answered KeepAlive gives, from its send time: how long the master held
/// it, plus the extension it granted, minus holder_margin.
pub(super) fn local_lease(c: &ChubbyConfig, held: LocalDur, extension: LocalDur) -> LocalDur {
    held + extension - c.holder_margin
}

impl service_node::Client for Client {
    type Msg = Message;

    /// The client library's session loop sends KeepAlives and keeps the grace period; the
    /// application's asks for the lock and acts.
    fn thread_of_timer(&self, timer: TimerId) -> Thread {
        match timer {
            KEEPALIVE | GRACE_END => Thread::Renewal,
            _ => Thread::Worker,
        }
    }

    fn thread_of_message(&self, msg: &Message) -> Thread {
        match msg {
            Message::KeepAliveAck { .. } | Message::SessionExpired { .. } => Thread::Renewal,
            _ => Thread::Worker,
        }
    }

    /// Opens a session and asks for the lock. When `lease.initial_leader` names another
    /// client, this one's first process opens its session at once but sends its first Acquire
    /// `lease.retry_every` late, as its own retry after a refused Acquire: the named client's
    /// Acquire reaches the master first. `retry_every` is the model's period of Acquire tries
    /// (the paper gives Chubby's client none of its own), so waiting it is a modelling choice.
    /// After a crash it asks at once, as ever.
    fn on_start(&mut self, cx: &Cx, out: &mut Out<Message>) {
        if self.p.another_leads_first(cx) {
            self.open_session_waiting(cx, out);
            return;
        }
        self.open_session(cx, out);
    }

    fn on_message(&mut self, cx: &Cx, msg: Message, out: &mut Out<Message>) {
        match msg {
            Message::KeepAliveAck {
                session,
                req,
                sent,
                held,
                extension,
            } if session == self.session => {
                if self.grace_over(cx.mono) {
                    // Grace ended before this answer came (its timer has not run yet, as after
                    // a pause): the session is lost, whatever the master says now.
                    self.open_session(cx, out);
                    return;
                }
                let end = sent + local_lease(&self.c, held, extension);
                self.answered(cx, req, end, out);
            }
            Message::WriteAck(ack) => {
                self.copy.merge(ack);
                out.report(Fact::WriteAcked {
                    key: ack.key,
                    value: ack.value,
                });
            }
            Message::SessionExpired { session } if session == self.session => {
                self.open_session(cx, out);
            }
            Message::Grant {
                session,
                token,
                values,
            } if session == self.session && token > self.last_token => {
                self.last_token = token;
                self.held = Some(token);
                self.copy = values;
                out.cancel_timer(RETRY);
                out.report(Fact::Holding { token });
            }
            _ => {}
        }
    }

    fn on_timer(&mut self, cx: &Cx, timer: TimerId, out: &mut Out<Message>) {
        match timer {
            KEEPALIVE => self.keep_alive(cx, out),
            RETRY if self.held.is_none() => self.acquire(cx, out),
            GRACE_END if self.grace_over(cx.mono) => self.open_session(cx, out),
            _ => {}
        }
    }

    fn refuses_whatever_the_time(&self) -> bool {
        self.held.is_none()
    }

    fn check(&self, cx: &Cx) -> Option<Token> {
        let token = self.held?;
        (cx.mono < self.deadline()?).then_some(token)
    }

    /// A request admitted under `token` takes effect: a read is served from the local copy, a
    /// write goes to the register at the master (and into the copy when the master answers).
    fn on_request(&mut self, cx: &Cx, request: Request, token: Token, out: &mut Out<Message>) {
        match request {
            Request::Read { key } => out.report(Fact::Read {
                token,
                value: self.copy.get(key),
            }),
            Request::Write { key, value } => {
                out.report(Fact::WriteSent { token });
                out.send(Self::master(cx), Message::Write { token, key, value });
            }
        }
    }

    /// An operator's `StepDown`: release the lock cleanly and queue for it again.
    fn step_down(&mut self, cx: &Cx, out: &mut Out<Message>) {
        if let Some(token) = self.held.take() {
            let msg = Message::Release {
                session: self.session,
                token,
            };
            out.send(Self::master(cx), msg);
            self.acquire(cx, out);
        }
    }

    fn belief(&self) -> Belief {
        match (self.held, self.deadline()) {
            (Some(token), Some(deadline)) => Belief::Until {
                token,
                clock: ClockKind::Monotonic,
                deadline,
            },
            _ => Belief::None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::GrantorRestart;
    use crate::strategy::service_node::Client as _;
    use crate::strategy::{Ack, Action, ProtocolMessage};

    const S: i64 = 1_000_000_000;
    const MS: i64 = 1_000_000;
    /// Node 0 is the master, node 1 this client.
    const ROLES: &[Role] = &[Role::Grantor, Role::Contender];

    /// A client with T = 12 s, KeepAlives answered at once and sent every 4 s, a 50 ms margin
    /// and a 45 s grace.
    fn client(act_in_jeopardy: bool) -> Client {
        client_with(act_in_jeopardy, KeepAliveMode::Immediate)
    }

    fn client_with(act_in_jeopardy: bool, keepalive: KeepAliveMode) -> Client {
        let c = ChubbyConfig {
            grace: LocalDur::from_secs(45),
            lock_delay: LocalDur::ZERO,
            act_in_jeopardy,
            holder_margin: LocalDur::from_ms(50),
            keepalive,
            hold_margin: LocalDur::from_secs(1),
            extend_under_load: None,
        };
        let p = LeaseParams {
            lease: LocalDur::from_secs(12),
            renew_every: LocalDur::from_secs(4),
            retry_every: LocalDur::from_secs(1),
            grantor_restart: GrantorRestart::Wait,
            fencing: false,
            initial_leader: None,
        };
        Client::new(c, p)
    }

    fn call(
        c: &mut Client,
        at_ns: i64,
        f: impl FnOnce(&mut Client, &mut Cx, &mut Out<Message>),
    ) -> Out<Message> {
        crate::strategy::with_test_cx(1, ROLES, LocalTime::from_ns(at_ns), |cx| {
            let mut out = Out::default();
            f(c, cx, &mut out);
            out
        })
    }

    /// An answer to KeepAlive 1, sent at `sent_ns`, with the session extended by 12 s at once.
    fn ack(session: u64, sent_ns: i64) -> Message {
        held_ack(session, 1, sent_ns, 0)
    }

    /// An answer to KeepAlive `req`, sent at `sent_ns` and held `held_ns` by the master, with
    /// the session extended by 12 s.
    fn held_ack(session: u64, req: u64, sent_ns: i64, held_ns: i64) -> Message {
        Message::KeepAliveAck {
            session,
            req,
            sent: LocalTime::from_ns(sent_ns),
            held: LocalDur::from_ns(held_ns),
            extension: LocalDur::from_secs(12),
        }
    }

    fn grant(session: u64, token: Token) -> Message {
        Message::Grant {
            session,
            token,
            values: Store::default(),
        }
    }

    /// A client that opened session 1 at 0 and holds generation 1, its KeepAlive of 0 answered
    /// at 5 s (late).
    fn holding() -> Client {
        let mut c = client(false);
        call(&mut c, 0, |c, cx, out| c.open_session(cx, out));
        assert_eq!(c.session, 1);
        call(&mut c, 5 * S, |c, cx, out| c.on_message(cx, ack(1, 0), out));
        call(&mut c, 5 * S, |c, cx, out| {
            c.on_message(cx, grant(1, 1), out)
        });
        c
    }

    #[test]
    fn a_client_refuses_whatever_the_time_exactly_while_it_holds_nothing() {
        use crate::strategy::service_node::Client as _;
        assert!(client(false).refuses_whatever_the_time());
        assert!(!holding().refuses_whatever_the_time());
    }

    /// A client in its third life (incarnation 2) opens session 2 << 32 | 1 = 8,589,934,593,
    /// larger than any id of its earlier lives (at most 1 << 32 | n), and sends its KeepAlive
    /// and Acquire to the master wherever it is listed: here node 1, the client node 0.
    #[test]
    fn a_session_id_carries_the_life_and_goes_to_the_listed_master() {
        let mut c = client(false);
        let roles = [Role::Contender, Role::Grantor];
        let out = crate::strategy::with_test_cx(0, &roles, LocalTime::from_ns(0), |cx| {
            cx.incarnation = 2;
            let mut out = Out::default();
            c.open_session(cx, &mut out);
            out
        });
        assert_eq!(c.session, 8_589_934_593);
        let to: Vec<(NodeId, &'static str)> = out
            .actions()
            .iter()
            .filter_map(|a| match a {
                Action::Send { to, msg } => Some((*to, Message::KINDS[msg.kind()])),
                _ => None,
            })
            .collect();
        assert_eq!(to, [(1, "KeepAlive"), (1, "Acquire")]);
    }

    /// The messages `given` sends to the master (node 0), in order.
    fn sent_to_master(given: &Out<Message>) -> Vec<Message> {
        given
            .actions()
            .iter()
            .filter_map(|a| match a {
                Action::Send { to: 0, msg } => Some(msg.clone()),
                _ => None,
            })
            .collect()
    }

    /// When `given` arms `timer`, if it does.
    fn armed(given: &Out<Message>, timer: TimerId) -> Option<i64> {
        given.actions().iter().find_map(|a| match a {
            Action::SetTimer { timer: t, at, .. } if *t == timer => Some(at.ns()),
            _ => None,
        })
    }

    /// By hand (T = 12 s, margin 50 ms, grace 45 s, retry_every 1 s, renew_every 4 s): started
    /// at 0, the client opens session 1 with a KeepAlive (the next due at 4 s) and an Acquire
    /// (retried at 1 s). The answer to KeepAlive 1 (sent at 0, not held) gives a local lease to
    /// 12 s - 50 ms = 11.95 s, so grace ends at 56.95 s. The same answer again (a duplicate)
    /// ends it no later: nothing is re-armed. A write's acknowledgement is reported and kept.
    #[test]
    fn a_started_client_opens_a_session_and_an_answer_arms_its_grace() {
        let mut c = client(false);
        let e = call(&mut c, 0, |c, cx, out| c.on_start(cx, out));
        assert_eq!(c.session, 1);
        assert_eq!(
            (armed(&e, KEEPALIVE), armed(&e, RETRY)),
            (Some(4 * S), Some(S))
        );
        let e = call(&mut c, 2 * MS, |c, cx, out| {
            c.on_message(cx, ack(1, 0), out)
        });
        assert_eq!(armed(&e, GRACE_END), Some(56_950 * MS));
        let e = call(&mut c, 3 * MS, |c, cx, out| {
            c.on_message(cx, ack(1, 0), out)
        });
        assert_eq!(armed(&e, GRACE_END), None);
        let write = Message::WriteAck(Ack {
            key: 0,
            value: 9,
            seq: 1,
        });
        let e = call(&mut c, 4 * MS, |c, cx, out| c.on_message(cx, write, out));
        assert_eq!(e.facts(), [Fact::WriteAcked { key: 0, value: 9 }]);
    }

    /// A client without the lock asks again every retry_every; one holding it does not. A
    /// holder reads its copy and sends its writes, under its generation, to the master.
    #[test]
    fn only_a_client_without_the_lock_asks_again_and_a_holder_serves() {
        let mut waiting = client(false);
        call(&mut waiting, 0, |c, cx, out| c.open_session(cx, out));
        let e = call(&mut waiting, S, |c, cx, out| c.on_timer(cx, RETRY, out));
        assert_eq!(sent_to_master(&e), [Message::Acquire { session: 1 }]);
        assert_eq!(armed(&e, RETRY), Some(2 * S));
        let mut h = holding();
        let e = call(&mut h, 6 * S, |c, cx, out| c.on_timer(cx, RETRY, out));
        assert!(e.actions().is_empty(), "{:?}", e.actions());
        let e = call(&mut h, 6 * S, |c, cx, out| {
            c.on_request(cx, Request::Read { key: 0 }, 1, out)
        });
        assert_eq!(e.facts(), [Fact::Read { token: 1, value: 0 }]);
        let e = call(&mut h, 6 * S, |c, cx, out| {
            c.on_request(cx, Request::Write { key: 0, value: 4 }, 1, out)
        });
        assert_eq!(e.facts(), [Fact::WriteSent { token: 1 }]);
        assert!(matches!(
            e.actions(),
            [Action::Send {
                to: 0,
                msg: Message::Write {
                    token: 1,
                    key: 0,
                    value: 4
                }
            }]
        ));
    }

    fn check_at(c: &Client, at_ns: i64) -> Option<Token> {
        crate::strategy::with_test_cx(1, ROLES, LocalTime::from_ns(at_ns), |cx| c.check(cx))
    }

    #[test]
    fn the_local_lease_runs_from_the_keepalive_send_time() {
        // Sent at 0, answered at 5 s: the lease ends at 0 + 12 - 0.05 = 11.95 s, not 16.95 s.
        let c = holding();
        assert_eq!(
            c.belief(),
            Belief::Until {
                token: 1,
                clock: ClockKind::Monotonic,
                deadline: LocalTime::from_ns(11_950 * MS)
            }
        );
        assert_eq!(check_at(&c, 11_950 * MS - 1), Some(1));
        assert_eq!(check_at(&c, 11_950 * MS), None);
    }

    #[test]
    fn acting_in_jeopardy_lasts_until_grace_ends() {
        // The same lease with the bug: the client acts to 11.95 + 45 = 56.95 s.
        let mut c = client(true);
        call(&mut c, 0, |c, cx, out| c.open_session(cx, out));
        call(&mut c, 5 * S, |c, cx, out| c.on_message(cx, ack(1, 0), out));
        call(&mut c, 5 * S, |c, cx, out| {
            c.on_message(cx, grant(1, 1), out)
        });
        assert_eq!(check_at(&c, 56_950 * MS - 1), Some(1));
        assert_eq!(check_at(&c, 56_950 * MS), None);
    }

    #[test]
    fn an_answer_within_grace_restores_the_lock_and_one_after_it_nothing() {
        // In jeopardy from 11.95 s; grace ends at 56.95 s.
        let mut c = holding();
        // Answered at 56.949999999 s, the KeepAlive sent at 56 s restores the session and the
        // lock: the local lease runs to 56 + 11.95 = 67.95 s.
        call(&mut c, 56_950 * MS - 1, |c, cx, out| {
            c.on_message(cx, ack(1, 56 * S), out)
        });
        assert_eq!(check_at(&c, 60 * S), Some(1));
        // Another client, the same story, but the answer comes at 56.95 s (after a pause, before
        // the grace timer has run): the session is lost, the client opens session 2 and holds
        // nothing.
        let mut c = holding();
        let effects = call(&mut c, 56_950 * MS, |c, cx, out| {
            c.on_message(cx, ack(1, 56 * S), out)
        });
        assert_eq!(c.belief(), Belief::None);
        assert_eq!(c.session, 2);
        assert!(effects.actions().iter().any(|e| matches!(
            e,
            Action::Send {
                msg: Message::KeepAlive { session: 2, .. },
                ..
            }
        )));
    }

    #[test]
    fn grace_ends_the_session_on_the_clients_clock() {
        let mut c = holding();
        // A stale grace timer changes nothing; one at 56.95 s ends the session.
        call(&mut c, 56_950 * MS - 1, |c, cx, out| {
            c.on_timer(cx, GRACE_END, out)
        });
        assert_eq!(c.session, 1);
        assert_eq!(c.held, Some(1));
        call(&mut c, 56_950 * MS, |c, cx, out| {
            c.on_timer(cx, GRACE_END, out)
        });
        assert_eq!((c.session, c.held, c.lease_end), (2, None, None));
        // Answers for session 1 are now ignored: its grant, its acks.
        call(&mut c, 57 * S, |c, cx, out| {
            c.on_message(cx, grant(1, 2), out)
        });
        call(&mut c, 57 * S, |c, cx, out| {
            c.on_message(cx, ack(1, 57 * S), out)
        });
        assert_eq!((c.held, c.lease_end), (None, None));
    }

    #[test]
    fn session_expired_ends_the_session_and_the_lock_at_once() {
        let mut c = holding();
        call(&mut c, 6 * S, |c, cx, out| {
            c.on_message(cx, Message::SessionExpired { session: 1 }, out)
        });
        assert_eq!(check_at(&c, 6 * S), None);
        assert_eq!(c.session, 2);
        // A stale SessionExpired for session 1 does not end session 2.
        call(&mut c, 7 * S, |c, cx, out| {
            c.on_message(cx, Message::SessionExpired { session: 1 }, out)
        });
        assert_eq!(c.session, 2);
    }

    #[test]
    fn a_step_down_releases_the_lock_and_asks_again() {
        let mut c = holding();
        let effects = call(&mut c, 6 * S, |c, cx, out| c.step_down(cx, out));
        let sent = sent_to_master(&effects);
        assert_eq!(
            sent,
            [
                Message::Release {
                    session: 1,
                    token: 1
                },
                Message::Acquire { session: 1 }
            ]
        );
        assert_eq!(c.belief(), Belief::None);
        // A duplicate of the old grant does not bring it back.
        call(&mut c, 6 * S, |c, cx, out| {
            c.on_message(cx, grant(1, 1), out)
        });
        assert_eq!(c.held, None);
    }

    /// The KeepAlives a call sent, as (req, acked, sent), and where it armed the KeepAlive
    /// timer.
    fn keepalives(effects: &Out<Message>) -> (Vec<(u64, u64, i64)>, Option<i64>) {
        let mut sent = Vec::new();
        let mut timer = None;
        for e in effects.actions() {
            match *e {
                Action::Send {
                    msg:
                        Message::KeepAlive {
                            req,
                            acked,
                            sent: s,
                            ..
                        },
                    ..
                } => sent.push((req, acked, s.ns())),
                Action::SetTimer {
                    timer: KEEPALIVE,
                    at,
                    ..
                } => timer = Some(at.ns()),
                _ => {}
            }
        }
        (sent, timer)
    }

    #[test]
    fn held_open_the_answer_counts_the_hold_and_the_next_keepalive_goes_at_once() {
        let mut c = client_with(false, KeepAliveMode::HeldOpen);
        // Session 1 opens at 0 with KeepAlive 1; no lease yet, so another goes at 0 + 4 s if
        // no answer comes.
        let opened = call(&mut c, 0, |c, cx, out| c.open_session(cx, out));
        assert_eq!(keepalives(&opened), (vec![(1, 0, 0)], Some(4 * S)));
        // Answered at once, at 2 ms: the lease runs to 0 + 0 + 12 - 0.05 = 11.95 s. KeepAlive
        // 2 goes at once, saying it has answer 1; the next without an answer at 11.95 s.
        let first = call(&mut c, 2 * MS, |c, cx, out| {
            c.on_message(cx, held_ack(1, 1, 0, 0), out)
        });
        assert_eq!(c.lease_end, Some(LocalTime::from_ns(11_950 * MS)));
        assert_eq!(
            keepalives(&first),
            (vec![(2, 1, 2 * MS)], Some(11_950 * MS))
        );
        // KeepAlive 2, sent at 2 ms, held 10.998 s by the master and answered at 11.002 s:
        // 0.002 + 10.998 + 12 - 0.05 = 22.95 s (counting from the send alone would give 11.952
        // s, already nearly over). KeepAlive 3 goes at once.
        let second = call(&mut c, 11_002 * MS, |c, cx, out| {
            c.on_message(cx, held_ack(1, 2, 2 * MS, 10_998 * MS), out)
        });
        assert_eq!(c.lease_end, Some(LocalTime::from_ns(22_950 * MS)));
        assert_eq!(
            keepalives(&second),
            (vec![(3, 2, 11_002 * MS)], Some(22_950 * MS))
        );
        // A copy of that answer sends nothing more: it answers KeepAlive 2, not the newest.
        let copy = call(&mut c, 11_002 * MS, |c, cx, out| {
            c.on_message(cx, held_ack(1, 2, 2 * MS, 10_998 * MS), out)
        });
        assert_eq!(keepalives(&copy), (vec![], None));
        // No answer to KeepAlive 3: at 22.95 s the client is in jeopardy and sends KeepAlive
        // 4, then one every 4 s (the next at 26.95 s).
        assert_eq!(check_at(&c, 22_950 * MS), None);
        let jeopardy = call(&mut c, 22_950 * MS, |c, cx, out| {
            c.on_timer(cx, KEEPALIVE, out)
        });
        assert_eq!(
            keepalives(&jeopardy),
            (vec![(4, 2, 22_950 * MS)], Some(26_950 * MS))
        );
    }

    #[test]
    fn answered_at_once_keepalives_go_every_renew_every() {
        // Immediate: the answer at 2 ms sends nothing; the timer armed at 0 sends the next at
        // 4 s and arms one at 8 s.
        let mut c = client(false);
        call(&mut c, 0, |c, cx, out| c.open_session(cx, out));
        let first = call(&mut c, 2 * MS, |c, cx, out| {
            c.on_message(cx, ack(1, 0), out)
        });
        assert_eq!(keepalives(&first), (vec![], None));
        let timer = call(&mut c, 4 * S, |c, cx, out| c.on_timer(cx, KEEPALIVE, out));
        assert_eq!(keepalives(&timer), (vec![(2, 1, 4 * S)], Some(8 * S)));
    }
}
