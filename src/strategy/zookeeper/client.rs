//! A ZooKeeper client with Curator's lock recipe: one session, and through it one lock node.
//!
//! The client connects at start (its first process `lease.retry_every` after it when
//! `lease.initial_leader` names another client), asking for `session_timeout`; the server's answer carries the
//! negotiated timeout t, from which it takes readTimeout = 2t/3 and pings when it has sent
//! nothing for readTimeout / 2 = t/3 (`ClientCnxn.SendThread`: `onConnected` and the ping
//! check in `run`; integer nanoseconds here, not whole milliseconds). Two refinements of the
//! Java client are left out: once idle for over a second it pings one second early, and it
//! pings at least every 10 s (MAX_SEND_PING_INTERVAL) whatever the timeout; with them a
//! session of over 30 s is touched more often than every t/3. With nothing
//! received for readTimeout it turns Disconnected and reconnects, asking again every
//! `lease.retry_every` until answered (the Java client sleeps up to 1 s between tries). A
//! reconnect of a live session resumes it; one the server expired is answered Expired, the only
//! way the client learns of it: it then opens a new session and queues for the lock again. A
//! session whose connection the server closes (`Closed`) is Disconnected at once.
//!
//! The lock (`InterProcessMutex`, `LockInternals.internalLockLoop`): once connected the client
//! creates its ephemeral sequential node and asks for its predecessor; it holds the lock when
//! it has none, and otherwise waits for the watch on the predecessor and asks again. The token
//! is the node's sequence number. After a reconnect it asks again.
//!
//! Curator's connection states (`ConnectionState`, `CuratorFrameworkImpl.validateConnection`):
//! CONNECTED at the first answer, SUSPENDED at Disconnected, RECONNECTED at every later answer
//! (its own session resumed, or a new one), LOST at Expired. `ConnectionStateManager` also
//! declares LOST by itself (`checkSessionExpiration`): its event thread waits, from SUSPENDED,
//! the last negotiated timeout x `simulatedSessionExpirationPercent` / 100 (a timed poll of its
//! queue, which waits on the monotonic clock), then compares that with the elapsed time by
//! `System.currentTimeMillis`, the wall clock, both readings of it taken as Curator takes them:
//! short (the wall clock was stepped back), it waits the rest; reached, it injects an expiry
//! (`ZooKeeper.getTestable().injectSessionExpiration`: the handle closes itself and delivers
//! Expired, telling the server nothing), and Curator's `ConnectionState.handleExpiredSession`
//! opens a new session. The server keeps the old one, and its lock node, until it expires it.
//! This runs under both error policies (0 turns it off); integer nanoseconds here, whole
//! milliseconds in Curator.
//!
//! The mutex does not listen to connection states itself: the application does, as Curator's
//! lock documentation asks, taking the lock as lost in the states its `ConnectionStateErrorPolicy`
//! calls errors (as `LeaderLatch.handleStateChange` does). Under the standard policy (SUSPENDED
//! and LOST) the holder acts from learning it is lowest until Disconnected, by its own clock
//! the instant readTimeout after the last message it received; under the session policy (LOST
//! only) until LOST, and a RECONNECTED of its own session keeps the lock (its node is still
//! the lowest); with `act_while_disconnected`, the raw ZooKeeper client (HBase), until the
//! Expired event, with no simulated expiry.

use super::emit::{self, Sink};
use super::msg::Message;
use super::ZkConfig;
use crate::clock::ClockKind;
use crate::msg::{NodeId, Token};
use crate::scenario::Role;
use crate::strategy::service_node;
use crate::strategy::{Belief, Cx, LeaseParams, Request, Store, Thread, TimerId};
use crate::time::{LocalDur, LocalTime};

pub(super) const PING: TimerId = 0;
pub(super) const READ_TIMEOUT: TimerId = 1;
pub(super) const RECONNECT: TimerId = 2;
/// `ConnectionStateManager`'s timed poll while SUSPENDED.
pub(super) const LOST_CHECK: TimerId = 3;

/// Curator's connection state (`ConnectionState`), as its `ConnectionStateManager` keeps it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conn {
    /// Before the first answer.
    Latent,
    Connected,
    /// Disconnected, since `since_wall` on the wall clock (`startOfSuspendedEpoch`).
    Suspended {
        since_wall: LocalTime,
    },
    Reconnected,
    /// Expired, told by the server or simulated; a new session is on its way.
    Lost,
}

/// A client.
pub struct Client {
    c: ZkConfig,
    p: LeaseParams,
    /// The session's id (0 before the server gave one, and after it expired).
    pub(super) session: u64,
    /// The negotiated timeout, from the last connect answer.
    pub(super) timeout: LocalDur,
    pub(super) connected: bool,
    /// The connection state as Curator tells it to listeners.
    pub(super) state: Conn,
    /// The session a simulated expiry abandoned: a late answer for it is not taken up.
    abandoned: u64,
    last_send: LocalTime,
    last_recv: LocalTime,
    /// The session's lock node (0 before it is created).
    pub(super) seq: u64,
    /// The lock, once the client learned its node is the lowest.
    pub(super) held: Option<Token>,
    /// Its copy of the register: the values the answer that gave it the lock carried, and its
    /// own writes the server answered since.
    copy: Store,
}

/// readTimeout for a negotiated timeout `t`: 2t/3 (exact, and without overflow for the
/// longest timeout a saturated negotiation gives).
pub fn read_timeout(t: LocalDur) -> LocalDur {
    let ns = i128::from(t.ns()) * 2 / 3;
    LocalDur::from_ns(i64::try_from(ns).expect("2/3 of an i64 fits an i64"))
}

/// How long after SUSPENDED `ConnectionStateManager` declares LOST for a negotiated timeout `t`:
/// t x `percent` / 100 (`getUseSessionTimeoutMs`; exact, and without overflow).
pub fn simulated_expiry(t: LocalDur, percent: u32) -> LocalDur {
    let ns = i128::from(t.ns()) * i128::from(percent) / 100;
    LocalDur::from_ns(i64::try_from(ns).expect("at most 100% of an i64 fits an i64"))
}

/// The ping interval for a negotiated timeout `t`: readTimeout / 2.
pub fn ping_interval(t: LocalDur) -> LocalDur {
    LocalDur::from_ns(read_timeout(t).ns() / 2)
}

impl Client {
    pub(super) fn new(c: ZkConfig, p: LeaseParams) -> Client {
        Client {
            c,
            p,
            session: 0,
            timeout: LocalDur::ZERO,
            connected: false,
            state: Conn::Latent,
            abandoned: 0,
            last_send: LocalTime::from_ns(0),
            last_recv: LocalTime::from_ns(0),
            seq: 0,
            held: None,
            copy: Store::default(),
        }
    }

    fn server(cx: &Cx) -> NodeId {
        cx.peers(Role::Grantor).next().expect("checked: one server")
    }

    /// When the client turns Disconnected unless a message arrives first.
    fn disconnect_at(&self) -> LocalTime {
        self.last_recv + read_timeout(self.timeout)
    }

    /// Sends `msg` to the server; the ping timer runs from the last send.
    fn send(&mut self, cx: &Cx, msg: Message, out: &mut Sink) {
        emit::send(out, Self::server(cx), msg);
        self.last_send = cx.mono;
        if self.connected {
            emit::arm(out, PING, cx.mono + ping_interval(self.timeout));
        }
    }

    /// Asks to connect (a new session, or its own again) and to be asked again later.
    pub(super) fn connect(&mut self, cx: &Cx, out: &mut Sink) {
        let msg = Message::Connect {
            session: self.session,
            timeout: self.c.session_timeout,
        };
        self.send(cx, msg, out);
        emit::arm(out, RECONNECT, cx.mono + self.p.retry_every);
    }

    /// Disconnected, SUSPENDED: stops acting unless it acts while suspended, reconnects, and
    /// times the simulated expiry.
    fn disconnect(&mut self, cx: &Cx, out: &mut Sink) {
        debug_assert!(self.connected);
        self.connected = false;
        self.state = Conn::Suspended {
            since_wall: cx.wall,
        };
        emit::cancel(out, PING);
        emit::cancel(out, READ_TIMEOUT);
        if !self.c.acts_while_suspended {
            self.held = None;
        }
        if self.c.expiration_percent > 0 {
            let after = simulated_expiry(self.timeout, self.c.expiration_percent);
            emit::arm(out, LOST_CHECK, cx.mono + after);
        }
        self.connect(cx, out);
    }

    /// LOST: the session is gone (Expired, or given up by the manager); the lock with it. A new
    /// session is asked for.
    fn lose(&mut self, cx: &Cx, out: &mut Sink) {
        self.state = Conn::Lost;
        self.session = 0;
        self.seq = 0;
        self.held = None;
        emit::cancel(out, LOST_CHECK);
        self.connect(cx, out);
    }

    /// `ConnectionStateManager.checkSessionExpiration` when its poll times out: LOST once the
    /// wall clock says the simulated expiry has passed since SUSPENDED, else a poll for the rest.
    fn check_expiry(&mut self, cx: &Cx, out: &mut Sink) {
        let Conn::Suspended { since_wall } = self.state else {
            return;
        };
        let after = simulated_expiry(self.timeout, self.c.expiration_percent);
        let elapsed = cx.wall - since_wall;
        if elapsed >= after {
            self.abandoned = self.session;
            self.lose(cx, out);
        } else {
            emit::arm(out, LOST_CHECK, cx.mono + (after - elapsed));
        }
    }

    /// Turns Disconnected first if readTimeout has run out (its timer has not run yet, as
    /// after a pause): the send thread looks at the time before it reads.
    fn catch_up(&mut self, cx: &Cx, out: &mut Sink) {
        if self.connected && cx.mono >= self.disconnect_at() {
            self.disconnect(cx, out);
        }
    }

    fn received(&mut self, cx: &Cx, out: &mut Sink) {
        self.last_recv = cx.mono;
        emit::arm(out, READ_TIMEOUT, self.disconnect_at());
    }

    /// Creates the lock node, or asks for its predecessor.
    fn ask(&mut self, cx: &Cx, out: &mut Sink) {
        let session = self.session;
        if self.seq == 0 {
            out.report(crate::strategy::Fact::Seeking);
        }
        let msg = match self.seq {
            0 => Message::Create { session },
            seq => Message::Check { session, seq },
        };
        self.send(cx, msg, out);
    }

    fn on_reply(&mut self, cx: &Cx, msg: Message, out: &mut Sink) {
        match msg {
            Message::Created { seq, .. } => {
                self.seq = seq;
                self.ask(cx, out);
            }
            Message::Checked {
                seq, pred, values, ..
            } if seq == self.seq && pred == 0 && self.held != Some(seq) => {
                self.held = Some(seq);
                self.copy = values;
                emit::holding(out, seq);
            }
            Message::NodeDeleted { .. } => self.ask(cx, out),
            _ => {}
        }
    }
}

/// The session a server's answer belongs to.
fn session_of(m: &Message) -> Option<u64> {
    match *m {
        Message::Pong { session }
        | Message::Created { session, .. }
        | Message::Checked { session, .. }
        | Message::NodeDeleted { session, .. } => Some(session),
        _ => None,
    }
}

impl service_node::Client for Client {
    type Msg = Message;

    /// The Java client's SendThread pings, times reads out, reconnects and reads every answer
    /// off the socket; Curator's ConnectionStateManager (its timed poll while suspended) and
    /// the application are the worker.
    fn thread_of_timer(&self, timer: TimerId) -> Thread {
        match timer {
            PING | READ_TIMEOUT | RECONNECT => Thread::Renewal,
            _ => Thread::Worker,
        }
    }

    fn thread_of_message(&self, _msg: &Message) -> Thread {
        Thread::Renewal
    }

    /// Connects at start. When `lease.initial_leader` names another client, this one's first
    /// process asks to connect only when its reconnect timer runs out, `lease.retry_every` from
    /// now, as if its first try had found no server: the named client's session and lock node
    /// come first, and this one's node queues behind it. `retry_every` is the model's period of
    /// connection tries (the Java client sleeps up to 1 s between them), so waiting it is a
    /// modelling choice. After a crash it connects at once, as ever.
    fn on_start(&mut self, cx: &Cx, out: &mut Sink) {
        if self.p.another_leads_first(cx) {
            emit::arm(out, RECONNECT, cx.mono + self.p.retry_every);
            return;
        }
        self.connect(cx, out);
    }

    fn on_message(&mut self, cx: &Cx, msg: Message, out: &mut Sink) {
        self.catch_up(cx, out);
        match msg {
            // The protected resource's answer: not session traffic.
            Message::WriteAck(ack) => {
                self.copy.merge(ack);
                emit::write_acked(out, ack);
            }
            Message::Connected { session, timeout }
                if !self.connected
                    && session != self.abandoned
                    && (self.session == 0 || self.session == session) =>
            {
                self.session = session;
                self.timeout = timeout;
                self.connected = true;
                self.state = match self.state {
                    Conn::Latent => Conn::Connected,
                    _ => Conn::Reconnected,
                };
                emit::cancel(out, RECONNECT);
                emit::cancel(out, LOST_CHECK);
                self.received(cx, out);
                self.ask(cx, out);
            }
            Message::Expired { session } if session == self.session && !self.connected => {
                self.lose(cx, out);
            }
            Message::Closed { session } if session == self.session && self.connected => {
                self.disconnect(cx, out);
            }
            m if self.connected && session_of(&m) == Some(self.session) => {
                self.received(cx, out);
                self.on_reply(cx, m, out);
            }
            _ => {}
        }
    }

    fn on_timer(&mut self, cx: &Cx, timer: TimerId, out: &mut Sink) {
        self.catch_up(cx, out);
        match timer {
            PING if self.connected && cx.mono >= self.last_send + ping_interval(self.timeout) => {
                let msg = Message::Ping {
                    session: self.session,
                };
                self.send(cx, msg, out);
            }
            RECONNECT if !self.connected => self.connect(cx, out),
            LOST_CHECK => self.check_expiry(cx, out),
            _ => {}
        }
    }

    fn refuses_whatever_the_time(&self) -> bool {
        self.held.is_none()
    }

    fn check(&self, cx: &Cx) -> Option<Token> {
        let token = self.held?;
        let through = self.c.acts_while_suspended;
        let acts = through || cx.mono < self.disconnect_at();
        (acts && (self.connected || through)).then_some(token)
    }

    /// A read is served from the local copy; a write goes to the register at the server.
    fn on_request(&mut self, cx: &Cx, request: Request, token: Token, out: &mut Sink) {
        match request {
            Request::Read { key } => emit::read(out, token, self.copy.get(key)),
            Request::Write { key, value } => {
                emit::write(out, Self::server(cx), token, (key, value))
            }
        }
    }

    fn belief(&self) -> Belief {
        match self.held {
            Some(token) if self.c.acts_while_suspended => Belief::Bool { token },
            Some(token) if self.connected => Belief::Until {
                token,
                clock: ClockKind::Monotonic,
                deadline: self.disconnect_at(),
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
    use crate::strategy::{with_test_cx, Ack, Action, Fact, Out};

    const MS: i64 = 1_000_000;
    /// Node 0 is the server, node 1 the client.
    const ROLES: &[Role] = &[Role::Grantor, Role::Contender];

    fn client() -> Client {
        client_with(false, 100)
    }

    #[test]
    fn a_client_refuses_whatever_the_time_exactly_while_it_holds_nothing() {
        use crate::strategy::service_node::Client as _;
        let mut c = client();
        assert!(c.refuses_whatever_the_time());
        c.held = Some(1);
        assert!(!c.refuses_whatever_the_time());
    }

    /// A client asking for 3 s, retrying every second.
    fn client_with(acts_while_suspended: bool, expiration_percent: u32) -> Client {
        let config = ZkConfig {
            tick_time: LocalDur::from_secs(1),
            session_timeout: LocalDur::from_secs(3),
            bounds: super::super::server::Bounds::of(LocalDur::from_secs(1), None, None),
            acts_while_suspended,
            expiration_percent,
        };
        let params = LeaseParams {
            lease: LocalDur::from_secs(3),
            renew_every: LocalDur::from_secs(1),
            retry_every: LocalDur::from_secs(1),
            grantor_restart: GrantorRestart::Wait,
            fencing: false,
            initial_leader: None,
        };
        Client::new(config, params)
    }

    /// Hands `msg` to the client at `ms` on its clocks; what it did.
    fn deliver(c: &mut Client, ms: i64, msg: Message) -> Sink {
        let mut out = Out::default();
        with_test_cx(1, ROLES, LocalTime::from_ns(ms * MS), |cx| {
            c.on_message(cx, msg, &mut out)
        });
        out
    }

    /// A message that arrives after readTimeout ran out but before the READ_TIMEOUT timer ran
    /// (the two are due at the same instant, or the client was paused) does not keep the
    /// connection: the client first turns Disconnected as of that instant, then looks at the
    /// message, which no longer belongs to a connected session. ZooKeeper's
    /// `ClientCnxn.SendThread.run` computes `to = readTimeout - clientCnxnSocket.getIdleRecv()`
    /// and throws `SessionTimeoutException` when it is <= 0 *before* `doTransport` reads
    /// anything; Curator then reports SUSPENDED and the lock holder stops.
    ///
    /// By hand: the session is negotiated at t = 3 s, so readTimeout = 2t/3 = 2 s. The client
    /// hears Connected at 1 ms, Created at 2 ms and Checked (lowest, holds token 1) at 3 ms: its
    /// last receive is 3 ms, so it turns Disconnected at 3 ms + 2 s = 2.003 s. A Pong arrives at
    /// 2.5 s, past that instant, with the timer not yet run. Caught up first, the client is
    /// Suspended, holds nothing, admits nothing (check: None), sends a reconnect (Connect of
    /// session 1), and the Pong is dropped. Handled before catching up, the Pong would move its
    /// last receive to 2.5 s and keep it holding token 1 until 4.5 s.
    #[test]
    fn a_message_after_the_read_timeout_finds_the_client_disconnected_first() {
        let mut c = client();
        with_test_cx(1, ROLES, LocalTime::from_ns(0), |cx| {
            c.on_start(cx, &mut Out::default())
        });
        let t = LocalDur::from_secs(3);
        deliver(
            &mut c,
            1,
            Message::Connected {
                session: 1,
                timeout: t,
            },
        );
        deliver(&mut c, 2, Message::Created { session: 1, seq: 1 });
        let values = Store::default();
        let m = Message::Checked {
            session: 1,
            seq: 1,
            pred: 0,
            values,
        };
        deliver(&mut c, 3, m);
        assert_eq!(c.held, Some(1));
        assert_eq!(c.disconnect_at(), LocalTime::from_ns(2_003 * MS));
        // Still holding just before the instant.
        let before = LocalTime::from_ns(2_002 * MS);
        assert_eq!(with_test_cx(1, ROLES, before, |cx| c.check(cx)), Some(1));

        let out = deliver(&mut c, 2_500, Message::Pong { session: 1 });
        assert!(!c.connected);
        assert!(matches!(c.state, Conn::Suspended { .. }));
        assert_eq!(c.held, None);
        let at = LocalTime::from_ns(2_500 * MS);
        assert_eq!(with_test_cx(1, ROLES, at, |cx| c.check(cx)), None);
        let reconnect = Message::Connect {
            session: 1,
            timeout: t,
        };
        let sent: Vec<&Message> = out
            .actions()
            .iter()
            .filter_map(|a| match a {
                Action::Send { msg, .. } => Some(msg),
                _ => None,
            })
            .collect();
        assert_eq!(sent, [&reconnect]);
        assert_eq!(c.belief(), Belief::None);
    }

    fn at_ms(ms: i64) -> LocalTime {
        LocalTime::from_ns(ms * MS)
    }

    /// Runs `timer` at `ms` on the client's clocks; what it did.
    fn timer(c: &mut Client, ms: i64, timer: TimerId) -> Sink {
        let mut out = Out::default();
        with_test_cx(1, ROLES, at_ms(ms), |cx| c.on_timer(cx, timer, &mut out));
        out
    }

    /// The messages sent (all go to the server, node 0).
    fn sends(given: &Sink) -> Vec<Message> {
        given
            .actions()
            .iter()
            .filter_map(|a| match a {
                Action::Send { to, msg } => {
                    assert_eq!(*to, 0);
                    Some(msg.clone())
                }
                _ => None,
            })
            .collect()
    }

    fn set(timer: TimerId, ms: i64) -> Action<Message> {
        Action::SetTimer {
            timer,
            clock: ClockKind::Monotonic,
            at: at_ms(ms),
        }
    }

    fn checked(seq: u64, pred: u64) -> Message {
        Message::Checked {
            session: 1,
            seq,
            pred,
            values: Store::default(),
        }
    }

    const T: LocalDur = LocalDur::from_secs(3);

    /// Started at 0, connected to session 1 (t = 3 s) at 1 ms, node 1 created at 2 ms, the
    /// lowest at 3 ms: holds token 1, Disconnected at 3 ms + 2 s unless it hears more.
    fn holding(c: &mut Client) {
        with_test_cx(1, ROLES, at_ms(0), |cx| c.on_start(cx, &mut Out::default()));
        let connected = Message::Connected {
            session: 1,
            timeout: T,
        };
        deliver(c, 1, connected);
        deliver(c, 2, Message::Created { session: 1, seq: 1 });
        deliver(c, 3, checked(1, 0));
        assert_eq!(c.held, Some(1));
    }

    #[test]
    fn the_timeouts_are_exact_fractions_of_the_negotiated_one() {
        let ns = LocalDur::from_ns;
        assert_eq!(read_timeout(T), LocalDur::from_secs(2));
        // 2 x 10 / 3 = 6.67: 6 ns; the ping every 3 ns; 10 x 33 / 100 = 3.3: 3 ns.
        assert_eq!(read_timeout(ns(10)), ns(6));
        assert_eq!(ping_interval(ns(10)), ns(3));
        assert_eq!(simulated_expiry(ns(10), 33), ns(3));
        assert_eq!(simulated_expiry(T, 50), LocalDur::from_ns(1_500 * MS));
        // The longest timeout does not overflow: 2 x (2^63 - 1) / 3.
        assert_eq!(read_timeout(ns(i64::MAX)), ns(6_148_914_691_236_517_204));
        assert_eq!(simulated_expiry(ns(i64::MAX), 100), ns(i64::MAX));
    }

    #[test]
    fn the_first_answer_connects_and_creates_a_later_one_reconnects_and_checks() {
        let mut c = client();
        let mut start = Out::default();
        with_test_cx(1, ROLES, at_ms(0), |cx| c.on_start(cx, &mut start));
        let ask = Message::Connect {
            session: 0,
            timeout: T,
        };
        // Not connected yet: no ping timer, a reconnect a second later.
        assert_eq!(
            start.actions(),
            [
                Action::Send {
                    to: 0,
                    msg: ask.clone()
                },
                set(RECONNECT, 1_000)
            ]
        );
        let connected = Message::Connected {
            session: 1,
            timeout: T,
        };
        let first = deliver(&mut c, 1, connected.clone());
        assert_eq!(c.state, Conn::Connected);
        // readTimeout 2 s from 1 ms; a ping t/3 = 1 s after the Create.
        assert_eq!(
            first.actions(),
            [
                Action::CancelTimer { timer: RECONNECT },
                Action::CancelTimer { timer: LOST_CHECK },
                set(READ_TIMEOUT, 2_001),
                Action::Send {
                    to: 0,
                    msg: Message::Create { session: 1 }
                },
                set(PING, 1_001)
            ]
        );
        // A copy of the answer while connected changes nothing.
        assert!(deliver(&mut c, 1, connected.clone()).actions().is_empty());
        let created = deliver(&mut c, 2, Message::Created { session: 1, seq: 5 });
        assert_eq!(sends(&created), [Message::Check { session: 1, seq: 5 }]);
        // Node 4 is before it: wait for its deletion, then ask again.
        assert!(deliver(&mut c, 3, checked(5, 4)).facts().is_empty());
        assert_eq!(c.held, None);
        let deleted = deliver(
            &mut c,
            4,
            Message::NodeDeleted {
                session: 1,
                pred: 4,
            },
        );
        assert_eq!(sends(&deleted), [Message::Check { session: 1, seq: 5 }]);
        // Another node's answer is not its own; its own makes it the holder, once.
        deliver(&mut c, 5, checked(6, 0));
        assert_eq!(c.held, None);
        assert_eq!(
            deliver(&mut c, 5, checked(5, 0)).facts(),
            [Fact::Holding { token: 5 }]
        );
        assert!(deliver(&mut c, 6, checked(5, 0)).facts().is_empty());
        // The server closes the connection at 10 ms: SUSPENDED, the lock dropped, a reconnect
        // of session 1 and the simulated expiry timed t x 100 % later.
        let closed = deliver(&mut c, 10, Message::Closed { session: 1 });
        assert_eq!(
            c.state,
            Conn::Suspended {
                since_wall: at_ms(10)
            }
        );
        assert_eq!(c.held, None);
        let reconnect = Message::Connect {
            session: 1,
            timeout: T,
        };
        assert_eq!(
            closed.actions(),
            [
                Action::CancelTimer { timer: PING },
                Action::CancelTimer {
                    timer: READ_TIMEOUT
                },
                set(LOST_CHECK, 3_010),
                Action::Send {
                    to: 0,
                    msg: reconnect
                },
                set(RECONNECT, 1_010)
            ]
        );
        // Answered: RECONNECTED, and the node it has is checked again.
        let again = deliver(&mut c, 20, connected);
        assert_eq!(c.state, Conn::Reconnected);
        assert_eq!(sends(&again), [Message::Check { session: 1, seq: 5 }]);
    }

    #[test]
    fn an_expired_session_is_lost_with_its_lock_and_a_new_one_asked_for() {
        let mut c = client();
        holding(&mut c);
        // Expired of a connected session, or of another, is not taken up.
        assert!(deliver(&mut c, 4, Message::Expired { session: 1 })
            .actions()
            .is_empty());
        deliver(&mut c, 5, Message::Closed { session: 1 });
        assert!(deliver(&mut c, 6, Message::Expired { session: 2 })
            .actions()
            .is_empty());
        let expired = deliver(&mut c, 7, Message::Expired { session: 1 });
        assert_eq!(c.state, Conn::Lost);
        assert_eq!((c.session, c.seq, c.held), (0, 0, None));
        let ask = Message::Connect {
            session: 0,
            timeout: T,
        };
        assert_eq!(
            expired.actions(),
            [
                Action::CancelTimer { timer: LOST_CHECK },
                Action::Send { to: 0, msg: ask },
                set(RECONNECT, 1_007)
            ]
        );
        // A new session is taken, and its node created anew.
        let fresh = Message::Connected {
            session: 2,
            timeout: T,
        };
        let created = deliver(&mut c, 8, fresh);
        assert_eq!(sends(&created), [Message::Create { session: 2 }]);
    }

    #[test]
    fn the_simulated_expiry_waits_by_the_wall_clock_then_abandons_the_session() {
        // SUSPENDED at 5 ms; LOST is due 3 s later by the wall clock.
        let mut c = client();
        holding(&mut c);
        deliver(&mut c, 5, Message::Closed { session: 1 });
        let check = |c: &mut Client, mono_ms: i64, wall_ns: i64| {
            let mut out = Out::default();
            with_test_cx(1, ROLES, at_ms(mono_ms), |cx| {
                cx.wall = LocalTime::from_ns(wall_ns);
                c.on_timer(cx, LOST_CHECK, &mut out)
            });
            out
        };
        // The poll returns at 3.005 s, but the wall clock was stepped back 1 ns: 1 ns short,
        // so it polls 1 ns more.
        let short = check(&mut c, 3_005, 3_005 * MS - 1);
        assert_eq!(
            short.actions(),
            [Action::SetTimer {
                timer: LOST_CHECK,
                clock: ClockKind::Monotonic,
                at: LocalTime::from_ns(3_005 * MS + 1),
            }]
        );
        assert!(matches!(c.state, Conn::Suspended { .. }));
        // Exactly 3 s by the wall clock: LOST; session 1 abandoned, a new one asked for.
        let lost = check(&mut c, 3_006, 3_005 * MS);
        assert_eq!(c.state, Conn::Lost);
        let ask = Message::Connect {
            session: 0,
            timeout: T,
        };
        assert_eq!(sends(&lost), [ask]);
        // The late answer for session 1 is not taken up; one for a new session is.
        let late = Message::Connected {
            session: 1,
            timeout: T,
        };
        assert!(deliver(&mut c, 3_100, late).actions().is_empty());
        assert!(!c.connected);
        let fresh = Message::Connected {
            session: 2,
            timeout: T,
        };
        deliver(&mut c, 3_200, fresh);
        assert_eq!((c.session, c.state), (2, Conn::Reconnected));
        // Once connected, a stray poll changes nothing.
        assert!(timer(&mut c, 3_300, LOST_CHECK).actions().is_empty());
    }

    #[test]
    fn without_a_simulated_expiry_no_poll_is_timed() {
        let mut c = client_with(false, 0);
        holding(&mut c);
        let closed = deliver(&mut c, 5, Message::Closed { session: 1 });
        assert!(closed
            .actions()
            .iter()
            .all(|a| !matches!(a, Action::SetTimer { timer, .. } if *timer == LOST_CHECK)));
    }

    #[test]
    fn a_ping_waits_for_an_idle_interval_and_a_reconnect_for_a_disconnection() {
        let mut c = client();
        holding(&mut c);
        // The Check left at 2 ms: the ping is due at 1.002 s, not before.
        assert!(timer(&mut c, 1_001, PING).actions().is_empty());
        let ping = timer(&mut c, 1_002, PING);
        assert_eq!(
            ping.actions(),
            [
                Action::Send {
                    to: 0,
                    msg: Message::Ping { session: 1 }
                },
                set(PING, 2_002)
            ]
        );
        // Connected: the reconnect timer does nothing.
        assert!(timer(&mut c, 1_003, RECONNECT).actions().is_empty());
        // A Pong at 1.5 s moves readTimeout to 3.5 s.
        let pong = deliver(&mut c, 1_500, Message::Pong { session: 1 });
        assert_eq!(pong.actions(), [set(READ_TIMEOUT, 3_500)]);
        // The read timeout fires: Disconnected; then the reconnect timer asks again.
        timer(&mut c, 3_500, READ_TIMEOUT);
        assert!(!c.connected);
        let retry = timer(&mut c, 4_500, RECONNECT);
        let ask = Message::Connect {
            session: 1,
            timeout: T,
        };
        assert_eq!(sends(&retry), [ask]);
    }

    #[test]
    fn the_holder_acts_until_its_read_timeout_or_through_it_when_told() {
        let mut c = client();
        holding(&mut c);
        let check =
            |c: &Client, ns: i64| with_test_cx(1, ROLES, LocalTime::from_ns(ns), |cx| c.check(cx));
        // Last receive 3 ms: acts until 2.003 s, not at it.
        assert_eq!(check(&c, 2_003 * MS - 1), Some(1));
        assert_eq!(check(&c, 2_003 * MS), None);
        assert_eq!(
            c.belief(),
            Belief::Until {
                token: 1,
                clock: ClockKind::Monotonic,
                deadline: at_ms(2_003)
            }
        );
        // The raw client acts through the disconnection and after readTimeout.
        let mut raw = client_with(true, 0);
        holding(&mut raw);
        deliver(&mut raw, 5, Message::Closed { session: 1 });
        assert_eq!(raw.held, Some(1));
        assert_eq!(check(&raw, 10_000 * MS), Some(1));
        assert_eq!(raw.belief(), Belief::Bool { token: 1 });
        // One that does not hold believes nothing.
        assert_eq!(check(&client(), 0), None);
        assert_eq!(client().belief(), Belief::None);
    }

    #[test]
    fn reads_come_from_the_copy_and_writes_go_to_the_server() {
        let mut c = client();
        holding(&mut c);
        // Its own write of 9 to key 2 answered: the copy has it.
        let ack = Ack {
            key: 2,
            value: 9,
            seq: 1,
        };
        let acked = deliver(&mut c, 10, Message::WriteAck(ack));
        assert_eq!(acked.facts(), [Fact::WriteAcked { key: 2, value: 9 }]);
        let mut out = Out::default();
        with_test_cx(1, ROLES, at_ms(11), |cx| {
            c.on_request(cx, Request::Read { key: 2 }, 1, &mut out);
            c.on_request(cx, Request::Write { key: 3, value: 4 }, 1, &mut out);
        });
        assert_eq!(
            out.facts(),
            [
                Fact::Read { token: 1, value: 9 },
                Fact::WriteSent { token: 1 }
            ]
        );
        let write = Message::Write {
            token: 1,
            key: 3,
            value: 4,
        };
        assert_eq!(sends(&out), [write]);
    }

    #[test]
    fn a_close_of_another_session_or_while_disconnected_changes_nothing() {
        let mut c = client();
        holding(&mut c);
        assert!(deliver(&mut c, 4, Message::Closed { session: 2 })
            .actions()
            .is_empty());
        assert!(c.connected && c.held == Some(1));
        deliver(&mut c, 5, Message::Closed { session: 1 });
        assert!(deliver(&mut c, 6, Message::Closed { session: 1 })
            .actions()
            .is_empty());
    }

    #[test]
    fn the_server_is_found_wherever_it_is_listed() {
        // The ensemble listed second: the client's Connect goes to node 1.
        let roles = [Role::Contender, Role::Grantor];
        let mut c = client();
        let mut out = Out::default();
        with_test_cx(0, &roles, at_ms(0), |cx| c.on_start(cx, &mut out));
        assert!(matches!(
            out.actions(),
            [
                Action::Send {
                    to: 1,
                    msg: Message::Connect { .. }
                },
                _
            ]
        ));
    }
}
