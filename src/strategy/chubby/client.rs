//! A Chubby client: one session with the master, and through it the one lock it wants.
//!
//! The client opens a session at start (a KeepAlive and an Acquire with a fresh session id),
//! sends a KeepAlive every `renew_every` and, while it holds no lock, an Acquire every
//! `retry_every`. Its local lease is (send time of the newest acknowledged KeepAlive) + T -
//! holder_margin on its monotonic clock; when that passes it is in jeopardy and keeps sending
//! KeepAlives: an acknowledgement of one restores the session (and the lock, which the master
//! kept), as long as it arrives before the grace period, `grace` on the same clock from the end
//! of the local lease, is over. Then, or when the master answers `SessionExpired`, the session
//! and the lock are lost, and the client opens a new session and asks again.
//!
//! It acts on the lock (serves reads, sends writes with the lock's generation number) while it
//! holds the lock and its local lease runs; with `act_in_jeopardy` (the bug) until grace ends.
//! A `StepDown` makes it release the lock cleanly and queue for it again.

use super::msg::Message;
use super::ChubbyConfig;
use crate::clock::ClockKind;
use crate::msg::{NodeId, Token};
use crate::scenario::Role;
use crate::strategy::service_node;
use crate::strategy::{Belief, Cx, Fact, LeaseParams, Out, Request, TimerId};
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
    next_req: u64,
    /// The end of the local lease on the monotonic clock, once a KeepAlive of this session has
    /// been acknowledged.
    pub(super) lease_end: Option<LocalTime>,
    /// The lock's generation number, while this session holds it.
    pub(super) held: Option<Token>,
    /// The highest generation number ever granted to this client: an older grant is ignored.
    last_token: Token,
}

impl Client {
    pub(super) fn new(c: ChubbyConfig, p: LeaseParams) -> Client {
        Client {
            c,
            p,
            session: 0,
            next_session: 0,
            next_req: 0,
            lease_end: None,
            held: None,
            last_token: 0,
        }
    }

    /// The master (the protocol's check makes sure there is one).
    fn master(cx: &Cx) -> NodeId {
        cx.peers(Role::Grantor).next().expect("checked: one master")
    }

    /// Opens a new session, larger than any this client opened in an earlier life, and asks
    /// for the lock through it.
    pub(super) fn open_session(&mut self, cx: &Cx, out: &mut Out<Message>) {
        self.next_session += 1;
        self.session = ((cx.incarnation as u64) << 32) | self.next_session;
        self.lease_end = None;
        self.held = None;
        out.cancel_timer(GRACE_END);
        self.keep_alive(cx, out);
        self.acquire(cx, out);
    }

    fn keep_alive(&mut self, cx: &Cx, out: &mut Out<Message>) {
        self.next_req += 1;
        let msg = Message::KeepAlive {
            session: self.session,
            req: self.next_req,
            sent: cx.mono,
        };
        out.send(Self::master(cx), msg);
        out.set_timer(
            KEEPALIVE,
            ClockKind::Monotonic,
            cx.mono + self.p.renew_every,
        );
    }

    fn acquire(&mut self, cx: &Cx, out: &mut Out<Message>) {
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

/// The local lease an acknowledged KeepAlive gives, from its send time: T - holder_margin.
pub(super) fn local_lease(c: &ChubbyConfig, p: &LeaseParams) -> LocalDur {
    p.lease - c.holder_margin
}

impl service_node::Client for Client {
    type Msg = Message;

    fn on_start(&mut self, cx: &Cx, out: &mut Out<Message>) {
        self.open_session(cx, out);
    }

    fn on_message(&mut self, cx: &Cx, msg: Message, out: &mut Out<Message>) {
        match msg {
            Message::KeepAliveAck { session, sent, .. } if session == self.session => {
                if self.grace_over(cx.mono) {
                    // Grace ended before this answer came (its timer has not run yet, as after
                    // a pause): the session is lost, whatever the master says now.
                    self.open_session(cx, out);
                    return;
                }
                let end = sent + local_lease(&self.c, &self.p);
                if self.lease_end.is_none_or(|e| end > e) {
                    self.lease_end = Some(end);
                    out.set_timer(GRACE_END, ClockKind::Monotonic, end + self.c.grace);
                }
            }
            Message::SessionExpired { session } if session == self.session => {
                self.open_session(cx, out);
            }
            Message::Grant {
                session,
                token,
                version,
            } if session == self.session && token > self.last_token => {
                self.last_token = token;
                self.held = Some(token);
                out.cancel_timer(RETRY);
                out.report(Fact::Holding { token, version });
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

    fn check(&self, cx: &Cx) -> Option<Token> {
        let token = self.held?;
        (cx.mono < self.deadline()?).then_some(token)
    }

    /// A request admitted under `token` takes effect: a read is served from the local copy, a
    /// write goes to the register at the master.
    fn on_request(&self, cx: &Cx, request: Request, token: Token, out: &mut Out<Message>) {
        match request {
            Request::Read { .. } => out.report(Fact::Read { token }),
            Request::Write { .. } => {
                out.report(Fact::WriteSent { token });
                out.send(Self::master(cx), Message::Write { token });
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
    use crate::strategy::Action;

    const S: i64 = 1_000_000_000;
    const MS: i64 = 1_000_000;
    /// Node 0 is the master, node 1 this client.
    const ROLES: &[Role] = &[Role::Grantor, Role::Contender];

    /// A client with T = 12 s, KeepAlives every 4 s, a 50 ms margin and a 45 s grace.
    fn client(act_in_jeopardy: bool) -> Client {
        let c = ChubbyConfig {
            grace: LocalDur::from_secs(45),
            lock_delay: LocalDur::ZERO,
            act_in_jeopardy,
            holder_margin: LocalDur::from_ms(50),
        };
        let p = LeaseParams {
            lease: LocalDur::from_secs(12),
            renew_every: LocalDur::from_secs(4),
            retry_every: LocalDur::from_secs(1),
            grantor_restart: GrantorRestart::Wait,
            fencing: false,
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

    fn ack(session: u64, sent_ns: i64) -> Message {
        Message::KeepAliveAck {
            session,
            req: 1,
            sent: LocalTime::from_ns(sent_ns),
        }
    }

    fn grant(session: u64, token: Token) -> Message {
        Message::Grant {
            session,
            token,
            version: 0,
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
        let sent: Vec<Message> = effects
            .actions()
            .iter()
            .filter_map(|e| match *e {
                Action::Send { to: 0, msg } => Some(msg),
                _ => None,
            })
            .collect();
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
}
