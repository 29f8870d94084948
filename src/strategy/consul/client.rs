//! A client of Consul's Go API lock (hashicorp/consul `api/lock.go`, `api/session.go`): the
//! application's acquire loop, the session's renewal loop and `monitorLock`, each with at most
//! one call outstanding.
//!
//! The acquire loop (`Lock()`, at start; `lock_retry` after it when `lease.initial_leader`
//! names another client and this is its first process): create a session (`Create`), start the renewal loop, then GET
//! the key (index 0: answered at once). Held by another session: GET again with the key's index,
//! blocking for `lock_wait`, until it changes. Free: `Acquire`. Refused with the key held: the
//! blocking GET again; refused with the key free (a lock-delay runs): sleep `lock_retry`, then
//! GET at index 0. Acquired: the client holds the lock and believes, with no deadline of its own
//! (a [`Belief::Bool`]), and starts `monitorLock`. Any failed call (no answer by its RPC
//! deadline, or refused because the leader's process is down) makes `Lock()` return an error:
//! the loop stops its session's renewal loop, which destroys the session, and the application
//! calls `Lock()` again after `lock_retry`, with a new session.
//!
//! The renewal loop (`RenewPeriodic`, the client's [`Thread::Renewal`]): a renew T/2 after the
//! session opened and T/2 after each success. "Not found" ends it (`ErrSessionExpired`). A
//! failed renew ends it with `renew: StopOnError` (the client before hashicorp/consul#912);
//! with `RetryEverySecond` it tries again 1 s later, unless more than T has passed since the
//! last success. When it ends nothing else happens: the holder keeps believing, and learns of
//! the session's end only from `monitorLock`.
//!
//! `monitorLock`: a consistent GET of the key at index 0, then blocking GETs of `query_wait`
//! at the index each answer gives, for as long as the key names this client's session. An
//! answer that names another session or none, or a failed GET (`MonitorRetries` is 0 by
//! default), closes the lock's channel: the client stops believing, and the application calls
//! `Unlock()` (a clean release of the key, which stops the renewal loop and so destroys the
//! session) and then `Lock()` again at once. Neither waits for the release's answer.
//!
//! Every call's RPC deadline is `rpc_timeout` past its send time, plus the wait and the jitter
//! of a blocking GET ([`ConsulConfig::deadline`]); with `rpc_timeout: None` a call with no
//! answer hangs its loop for ever (monitorLock's timer is then armed past the longest run,
//! [`limits::MAX_DURATION_NS`] ahead, and does nothing: the engine asks every believer to have
//! something pending).
//!
//! The holder serves reads from its copy of the register (the values its acquire carried, and
//! its own writes the leader answered since) and sends writes, with its LockIndex, to the
//! register at the leader. A `StepDown` is `Unlock()` then `Lock()`.

use super::msg::Message;
use super::{ConsulConfig, RenewPolicy};
use crate::clock::ClockKind;
use crate::msg::{NodeId, Token};
use crate::scenario::{limits, Role};
use crate::strategy::{Belief, Cx, Fact, LeaseParams, Out, Request, Store, Thread, TimerId};
use crate::time::{LocalDur, LocalTime};

/// The acquire loop's sleep, or the deadline of its call.
pub(super) const LOCK: TimerId = 0;
/// The deadline of monitorLock's GET.
pub(super) const MONITOR: TimerId = 1;
/// The renewal loop's next renew, or the deadline of its renew.
pub(super) const RENEW: TimerId = 2;

/// The renewal loop handles its timer (and the renew answers); the application the rest.
pub(super) fn thread_of_timer(timer: TimerId) -> Thread {
    match timer {
        RENEW => Thread::Renewal,
        _ => Thread::Worker,
    }
}

/// The acquire loop's call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Call {
    Create,
    Get,
    Acquire,
}

/// What the acquire loop does when its sleep ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Next {
    /// GET the key at index 0 (after a lock-delay refusal).
    Get,
    /// `Lock()` again, with a new session (after an error).
    Create,
}

/// A client.
pub struct Client {
    c: ConsulConfig,
    p: LeaseParams,
    /// The current session's id (0 before the first).
    pub(super) session: u64,
    next_session: u64,
    /// The last request id used (ids grow across sessions).
    next_req: u64,
    /// The acquire loop's call outstanding, with its request id.
    lock_call: Option<(Call, u64)>,
    /// When the acquire loop's timer is due: its call's deadline, or its sleep's end.
    lock_due: Option<LocalTime>,
    /// What to do when the acquire loop's sleep ends.
    lock_next: Next,
    /// Whether the renewal loop runs.
    pub(super) renewing: bool,
    /// The renew outstanding.
    renew_call: Option<u64>,
    /// When the renewal loop's timer is due: its next renew, or its renew's deadline.
    renew_due: Option<LocalTime>,
    /// The last successful renew (or the loop's start), on the monotonic clock.
    last_renew: LocalTime,
    /// monitorLock's GET outstanding.
    monitor_call: Option<u64>,
    /// Its deadline, if it has one.
    monitor_due: Option<LocalTime>,
    /// The LockIndex of the lock, while the client holds it.
    pub(super) held: Option<Token>,
    /// Its copy of the register.
    copy: Store,
}

impl Client {
    pub(super) fn new(c: ConsulConfig, p: LeaseParams) -> Client {
        Client {
            c,
            p,
            session: 0,
            next_session: 0,
            next_req: 0,
            lock_call: None,
            lock_due: None,
            lock_next: Next::Create,
            renewing: false,
            renew_call: None,
            renew_due: None,
            last_renew: LocalTime::from_ns(0),
            monitor_call: None,
            monitor_due: None,
            held: None,
            copy: Store::default(),
        }
    }

    /// The leader (the protocol's check makes sure there is one).
    fn leader(cx: &Cx) -> NodeId {
        cx.peers(Role::Grantor).next().expect("checked: one leader")
    }

    fn req(&mut self) -> u64 {
        self.next_req += 1;
        self.next_req
    }

    /// The LockIndex to act under, while the client holds the lock.
    pub(super) fn held(&self) -> Option<Token> {
        self.held
    }

    pub(super) fn belief(&self) -> Belief {
        match self.held {
            Some(token) => Belief::Bool { token },
            None => Belief::None,
        }
    }

    /// Sets `timer` to `due`, or cancels it.
    fn arm(timer: TimerId, due: Option<LocalTime>, out: &mut Out<Message>) {
        match due {
            Some(at) => out.set_timer(timer, ClockKind::Monotonic, at),
            None => out.cancel_timer(timer),
        }
    }

    /// Sends the acquire loop's call `msg` and arms its deadline (`wait`: a blocking GET's).
    fn lock_send(
        &mut self,
        cx: &Cx,
        call: (Call, u64),
        msg: Message,
        wait: LocalDur,
        out: &mut Out<Message>,
    ) {
        out.send(Self::leader(cx), msg);
        self.lock_call = Some(call);
        self.lock_due = self.c.deadline(cx.mono, wait);
        Self::arm(LOCK, self.lock_due, out);
    }

    /// `Lock()`: a new session, larger than any this client opened in an earlier life.
    pub(super) fn create(&mut self, cx: &Cx, out: &mut Out<Message>) {
        self.next_session += 1;
        self.session = ((cx.incarnation as u64) << 32) | self.next_session;
        let req = self.req();
        let msg = Message::Create {
            session: self.session,
            req,
        };
        self.lock_send(cx, (Call::Create, req), msg, LocalDur::ZERO, out);
    }

    /// The acquire loop's GET of the key: at once with index 0, else blocking for lock_wait.
    fn get(&mut self, cx: &Cx, index: u64, out: &mut Out<Message>) {
        let req = self.req();
        let wait = self.c.lock_wait;
        let msg = Message::Get { req, index, wait };
        let blocking = if index == 0 { LocalDur::ZERO } else { wait };
        self.lock_send(cx, (Call::Get, req), msg, blocking, out);
    }

    fn acquire(&mut self, cx: &Cx, out: &mut Out<Message>) {
        out.report(Fact::Seeking);
        let req = self.req();
        let msg = Message::Acquire {
            session: self.session,
            req,
        };
        self.lock_send(cx, (Call::Acquire, req), msg, LocalDur::ZERO, out);
    }

    /// The acquire loop sleeps `lock_retry`, then does `next`.
    fn sleep(&mut self, cx: &Cx, next: Next, out: &mut Out<Message>) {
        self.lock_call = None;
        self.lock_next = next;
        self.lock_due = Some(cx.mono + self.c.lock_retry);
        Self::arm(LOCK, self.lock_due, out);
    }

    /// `Lock()` failed: the session's renewal loop is stopped (destroying the session), and the
    /// application tries again after lock_retry.
    fn lock_failed(&mut self, cx: &Cx, out: &mut Out<Message>) {
        self.stop_renewing(cx, out);
        self.sleep(cx, Next::Create, out);
    }

    /// Closes the renewal loop's done channel: if it still runs, it destroys the session.
    fn stop_renewing(&mut self, cx: &Cx, out: &mut Out<Message>) {
        if self.renewing {
            out.send(
                Self::leader(cx),
                Message::Destroy {
                    session: self.session,
                },
            );
        }
        self.end_renewing(out);
    }

    /// The renewal loop returns.
    fn end_renewing(&mut self, out: &mut Out<Message>) {
        self.renewing = false;
        self.renew_call = None;
        self.renew_due = None;
        out.cancel_timer(RENEW);
    }

    /// The session is open: the renewal loop starts, and the acquire loop GETs the key.
    fn created(&mut self, cx: &Cx, out: &mut Out<Message>) {
        self.renewing = true;
        self.renew_call = None;
        self.last_renew = cx.mono;
        self.renew_due = Some(cx.mono + self.half_ttl());
        Self::arm(RENEW, self.renew_due, out);
        self.get(cx, 0, out);
    }

    fn half_ttl(&self) -> LocalDur {
        LocalDur::from_ns(self.p.lease.ns() / 2)
    }

    /// The acquire loop's GET is answered.
    fn key_seen(
        &mut self,
        cx: &Cx,
        index: u64,
        holder: Option<(NodeId, u64)>,
        out: &mut Out<Message>,
    ) {
        match holder {
            Some((node, id)) if (node, id) != (cx.node, self.session) => self.get(cx, index, out),
            // Free, or already this session's (an acquire's answer was lost): acquire, which
            // answers a holder with its LockIndex.
            _ => self.acquire(cx, out),
        }
    }

    /// The acquire is answered.
    fn acquired(&mut self, cx: &Cx, result: Message, out: &mut Out<Message>) {
        let Message::AcquireResult {
            found,
            locked,
            token,
            index,
            holder,
            values,
            ..
        } = result
        else {
            return;
        };
        if !found {
            // "invalid session": Lock() fails.
            self.lock_failed(cx, out);
        } else if locked {
            self.hold(cx, token, values, out);
        } else if holder.is_some() {
            self.get(cx, index, out);
        } else {
            // The key is free but refused: a lock-delay runs.
            self.sleep(cx, Next::Get, out);
        }
    }

    /// The lock is this client's: it believes, and monitorLock starts.
    fn hold(&mut self, cx: &Cx, token: Token, values: Store, out: &mut Out<Message>) {
        self.lock_call = None;
        self.lock_due = None;
        out.cancel_timer(LOCK);
        self.held = Some(token);
        self.copy = values;
        out.report(Fact::Holding { token });
        self.monitor(cx, 0, out);
    }

    /// monitorLock's GET at `index` (0: at once), blocking for query_wait.
    fn monitor(&mut self, cx: &Cx, index: u64, out: &mut Out<Message>) {
        let req = self.req();
        let wait = self.c.query_wait;
        out.send(Self::leader(cx), Message::Get { req, index, wait });
        self.monitor_call = Some(req);
        let blocking = if index == 0 { LocalDur::ZERO } else { wait };
        self.monitor_due = self.c.deadline(cx.mono, blocking);
        // With no deadline the GET waits for ever; the timer is still armed, past the longest
        // run, because the engine asks a believer to have something pending. It changes
        // nothing when it fires.
        let never = cx.mono + LocalDur::from_ns(limits::MAX_DURATION_NS);
        Self::arm(MONITOR, Some(self.monitor_due.unwrap_or(never)), out);
    }

    /// monitorLock returns: the client stops believing, the application calls `Unlock()` and
    /// then `Lock()` again.
    fn lost(&mut self, cx: &Cx, out: &mut Out<Message>) {
        self.monitor_call = None;
        self.monitor_due = None;
        out.cancel_timer(MONITOR);
        self.unlock_and_lock(cx, out);
    }

    /// `Unlock()` (a clean release, the renewal loop stopped) and `Lock()` again.
    fn unlock_and_lock(&mut self, cx: &Cx, out: &mut Out<Message>) {
        if let Some(token) = self.held.take() {
            let session = self.session;
            out.send(Self::leader(cx), Message::Release { session, token });
        }
        self.stop_renewing(cx, out);
        self.create(cx, out);
    }

    /// Renews the session now.
    fn renew(&mut self, cx: &Cx, out: &mut Out<Message>) {
        let req = self.req();
        let session = self.session;
        out.send(Self::leader(cx), Message::Renew { session, req });
        self.renew_call = Some(req);
        self.renew_due = self.c.deadline(cx.mono, LocalDur::ZERO);
        Self::arm(RENEW, self.renew_due, out);
    }

    /// A renew failed (no answer by its deadline, or refused).
    fn renew_failed(&mut self, cx: &Cx, out: &mut Out<Message>) {
        self.renew_call = None;
        let gave_up = cx.mono - self.last_renew > self.p.lease;
        if self.c.renew == RenewPolicy::StopOnError || gave_up {
            self.end_renewing(out);
        } else {
            self.renew_due = Some(cx.mono + LocalDur::from_secs(1));
            Self::arm(RENEW, self.renew_due, out);
        }
    }

    /// The renew is answered.
    fn renewed(&mut self, cx: &Cx, found: bool, out: &mut Out<Message>) {
        self.renew_call = None;
        if found {
            self.last_renew = cx.mono;
            self.renew_due = Some(cx.mono + self.half_ttl());
            Self::arm(RENEW, self.renew_due, out);
        } else {
            // ErrSessionExpired.
            self.end_renewing(out);
        }
    }

    /// Whether `due` has come at `now`.
    fn due(due: Option<LocalTime>, now: LocalTime) -> bool {
        due.is_some_and(|d| now >= d)
    }

    /// `Lock()` at start. When `lease.initial_leader` names another client, this one's first
    /// process sleeps `lock_retry` first (`LockRetryTime`, the pause `api.Lock` takes before
    /// trying again), as if its application had called `Lock()` once already and failed: the
    /// named client's session and Acquire reach the leader first, and this one's first GET finds
    /// the key held and blocks on it. Which period to wait is a modelling choice; `lock_retry`
    /// is the acquire loop's own. After a crash it calls `Lock()` at once, as ever.
    pub(super) fn on_start(&mut self, cx: &Cx, out: &mut Out<Message>) {
        if self.p.another_leads_first(cx) {
            self.sleep(cx, Next::Create, out);
            return;
        }
        self.create(cx, out);
    }

    pub(super) fn on_message(&mut self, cx: &Cx, msg: Message, out: &mut Out<Message>) {
        match msg {
            Message::Created { req, .. } if self.lock_call == Some((Call::Create, req)) => {
                self.lock_call = None;
                self.created(cx, out);
            }
            Message::KeyState {
                req, index, holder, ..
            } => {
                if self.lock_call == Some((Call::Get, req)) {
                    self.lock_call = None;
                    self.key_seen(cx, index, holder, out);
                } else if self.monitor_call == Some(req) {
                    self.monitor_call = None;
                    if holder == Some((cx.node, self.session)) {
                        self.monitor(cx, index, out);
                    } else {
                        self.lost(cx, out);
                    }
                }
            }
            Message::AcquireResult { req, .. } if self.lock_call == Some((Call::Acquire, req)) => {
                self.lock_call = None;
                self.acquired(cx, msg, out);
            }
            Message::RenewResult { req, found, .. } if self.renew_call == Some(req) => {
                self.renewed(cx, found, out);
            }
            Message::WriteAck(ack) => {
                self.copy.merge(ack);
                out.report(Fact::WriteAcked {
                    key: ack.key,
                    value: ack.value,
                });
            }
            _ => {}
        }
    }

    /// The leader's process is down: the call `msg` fails at once.
    pub(super) fn on_refused(&mut self, cx: &Cx, msg: Message, out: &mut Out<Message>) {
        match msg {
            Message::Create { req, .. }
            | Message::Get { req, .. }
            | Message::Acquire { req, .. }
                if self.lock_call.is_some_and(|(_, r)| r == req) =>
            {
                self.lock_failed(cx, out)
            }
            Message::Get { req, .. } if self.monitor_call == Some(req) => self.lost(cx, out),
            Message::Renew { req, .. } if self.renew_call == Some(req) => {
                self.renew_failed(cx, out)
            }
            _ => {}
        }
    }

    pub(super) fn on_timer(&mut self, cx: &Cx, timer: TimerId, out: &mut Out<Message>) {
        let now = cx.mono;
        match timer {
            LOCK if Self::due(self.lock_due, now) => {
                self.lock_due = None;
                match (self.lock_call, self.lock_next) {
                    (Some(_), _) => self.lock_failed(cx, out),
                    (None, Next::Get) => self.get(cx, 0, out),
                    (None, Next::Create) => self.create(cx, out),
                }
            }
            MONITOR if Self::due(self.monitor_due, now) && self.monitor_call.is_some() => {
                self.lost(cx, out)
            }
            RENEW if Self::due(self.renew_due, now) && self.renewing => {
                self.renew_due = None;
                if self.renew_call.is_some() {
                    self.renew_failed(cx, out);
                } else {
                    self.renew(cx, out);
                }
            }
            _ => {}
        }
    }

    /// A request admitted under `token` takes effect: a read is served from the copy, a write
    /// goes to the register at the leader.
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
                out.send(Self::leader(cx), Message::Write { token, key, value });
            }
        }
    }

    /// An operator's `StepDown`: `Unlock()`, then `Lock()` again.
    pub(super) fn step_down(&mut self, cx: &Cx, out: &mut Out<Message>) {
        if self.held.is_some() {
            self.monitor_call = None;
            self.monitor_due = None;
            out.cancel_timer(MONITOR);
            self.unlock_and_lock(cx, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::GrantorRestart;
    use crate::strategy::{Action, ProtocolMessage};

    const S: i64 = 1_000_000_000;
    const MS: i64 = 1_000_000;
    /// Node 0 is the leader, node 1 this client.
    const ROLES: &[Role] = &[Role::Grantor, Role::Contender];

    /// A client with T = 15 s and Consul's defaults, but `renew` and `rpc_timeout`.
    fn client(renew: RenewPolicy, rpc_timeout: Option<LocalDur>) -> Client {
        let c = ConsulConfig {
            ttl_multiplier: 2,
            lock_delay: LocalDur::from_secs(15),
            renew,
            query_wait: LocalDur::from_secs(300),
            lock_wait: LocalDur::from_secs(15),
            lock_retry: LocalDur::from_secs(5),
            rpc_timeout,
        };
        let p = LeaseParams {
            lease: LocalDur::from_secs(15),
            renew_every: LocalDur::from_secs(5),
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

    fn deliver(c: &mut Client, at_ns: i64, msg: Message) -> Out<Message> {
        call(c, at_ns, |c, cx, out| c.on_message(cx, msg, out))
    }

    /// The kinds of the messages sent, in order.
    fn kinds(given: &Out<Message>) -> Vec<&'static str> {
        given
            .actions()
            .iter()
            .filter_map(|a| match a {
                Action::Send { msg, .. } => Some(Message::KINDS[msg.kind()]),
                _ => None,
            })
            .collect()
    }

    fn armed(given: &Out<Message>, timer: TimerId) -> Option<i64> {
        given.actions().iter().find_map(|a| match a {
            Action::SetTimer { timer: t, at, .. } if *t == timer => Some(at.ns()),
            _ => None,
        })
    }

    /// Started at 0: Create (req 1); Created at 2 ms: the renewal loop's first renew at 2 ms +
    /// 7.5 s, and the GET (req 2) of the free key; then Acquire (req 3), locked with LockIndex
    /// 4 at 6 ms: it holds, and monitorLock GETs (req 4) at index 0.
    fn holding(renew: RenewPolicy, rpc_timeout: Option<LocalDur>) -> Client {
        let mut c = client(renew, rpc_timeout);
        let started = call(&mut c, 0, |c, cx, out| c.on_start(cx, out));
        assert_eq!(kinds(&started), ["Create"]);
        let session = c.session;
        let created = deliver(&mut c, 2 * MS, Message::Created { session, req: 1 });
        assert_eq!(kinds(&created), ["Get"]);
        assert_eq!(armed(&created, RENEW), Some(7_502 * MS));
        let free = Message::KeyState {
            req: 2,
            index: 0,
            holder: None,
            lock_index: 0,
        };
        assert_eq!(kinds(&deliver(&mut c, 4 * MS, free)), ["Acquire"]);
        let locked = Message::AcquireResult {
            session,
            req: 3,
            found: true,
            locked: true,
            token: 4,
            index: 7,
            holder: Some((1, session)),
            values: Store::default(),
        };
        let held = deliver(&mut c, 6 * MS, locked);
        assert_eq!(held.facts(), [Fact::Holding { token: 4 }]);
        assert_eq!(kinds(&held), ["Get"]);
        assert_eq!(c.belief(), Belief::Bool { token: 4 });
        c
    }

    #[test]
    fn a_client_refuses_whatever_the_time_exactly_while_it_holds_nothing() {
        use crate::strategy::service_node::Client as _;
        let c = client(RenewPolicy::RetryEverySecond, None);
        assert!(c.refuses_whatever_the_time());
        assert!(!holding(RenewPolicy::RetryEverySecond, None).refuses_whatever_the_time());
    }

    /// monitorLock's answer naming this session keeps the belief and blocks at its index, with
    /// a deadline of 8 ms + 300 + 18.75 + 7 s; one naming no holder ends it: the client
    /// releases the key, destroys its session (the renewal loop still ran) and creates a new
    /// one.
    #[test]
    fn monitor_lock_keeps_the_belief_until_the_key_changes_hands() {
        let mut c = holding(RenewPolicy::RetryEverySecond, Some(LocalDur::from_secs(7)));
        let session = c.session;
        let mine = Message::KeyState {
            req: 4,
            index: 7,
            holder: Some((1, session)),
            lock_index: 4,
        };
        let again = deliver(&mut c, 8 * MS, mine);
        assert_eq!(armed(&again, MONITOR), Some(325_758 * MS));
        let gone = Message::KeyState {
            req: 5,
            index: 8,
            holder: None,
            lock_index: 4,
        };
        let lost = deliver(&mut c, 40 * S, gone);
        assert_eq!(c.belief(), Belief::None);
        assert_eq!(kinds(&lost), ["Release", "Destroy", "Create"]);
        assert!(c.session > session);
    }

    /// With no RPC timeout the monitor's GET has no deadline: its timer sits 1000 h ahead and
    /// does nothing when it fires; the client keeps believing.
    #[test]
    fn without_an_rpc_timeout_the_monitor_waits_for_ever() {
        let mut c = holding(RenewPolicy::RetryEverySecond, None);
        let session = c.session;
        let mine = Message::KeyState {
            req: 4,
            index: 7,
            holder: Some((1, session)),
            lock_index: 4,
        };
        let again = deliver(&mut c, 8 * MS, mine);
        let never = 8 * MS + limits::MAX_DURATION_NS;
        assert_eq!(armed(&again, MONITOR), Some(never));
        let fired = call(&mut c, never, |c, cx, out| c.on_timer(cx, MONITOR, out));
        assert!(fired.actions().is_empty());
        assert_eq!(c.belief(), Belief::Bool { token: 4 });
    }

    /// The renew of 7.502 s (req 5) is refused at 7.504 s. StopOnError: the loop ends, the
    /// client still believes. RetryEverySecond: again at 8.504 s; refused then too, and so on
    /// until a refusal comes more than T = 15 s after the loop's start at 2 ms.
    #[test]
    fn a_refused_renew_ends_or_retries_the_renewal_loop() {
        let refuse = |c: &mut Client, at_ns: i64, req: u64| {
            let session = c.session;
            call(c, at_ns, |c, cx, out| {
                c.on_refused(cx, Message::Renew { session, req }, out)
            })
        };
        let mut stop = holding(RenewPolicy::StopOnError, Some(LocalDur::from_secs(7)));
        call(&mut stop, 7_502 * MS, |c, cx, out| {
            c.on_timer(cx, RENEW, out)
        });
        refuse(&mut stop, 7_504 * MS, 5);
        assert!(!stop.renewing);
        assert_eq!(stop.belief(), Belief::Bool { token: 4 });
        let mut retry = holding(RenewPolicy::RetryEverySecond, Some(LocalDur::from_secs(7)));
        let sent = call(&mut retry, 7_502 * MS, |c, cx, out| {
            c.on_timer(cx, RENEW, out)
        });
        assert_eq!(armed(&sent, RENEW), Some(14_502 * MS), "its RPC deadline");
        let again = refuse(&mut retry, 7_504 * MS, 5);
        assert_eq!(armed(&again, RENEW), Some(8_504 * MS));
        // A refusal at 15.002 s is exactly T after 2 ms: not more, so one more try at
        // 16.002 s; its refusal at 16.004 s is more: the loop ends.
        call(&mut retry, 15_001 * MS, |c, cx, out| {
            c.on_timer(cx, RENEW, out)
        });
        assert_eq!(
            armed(&refuse(&mut retry, 15_002 * MS, 6), RENEW),
            Some(16_002 * MS)
        );
        call(&mut retry, 16_002 * MS, |c, cx, out| {
            c.on_timer(cx, RENEW, out)
        });
        assert!(retry.renewing);
        refuse(&mut retry, 16_004 * MS, 7);
        assert!(!retry.renewing);
    }

    /// "Not found" ends the renewal loop (ErrSessionExpired), not the belief.
    #[test]
    fn a_renew_of_an_invalidated_session_ends_the_loop() {
        let mut c = holding(RenewPolicy::RetryEverySecond, Some(LocalDur::from_secs(7)));
        call(&mut c, 7_502 * MS, |c, cx, out| c.on_timer(cx, RENEW, out));
        let session = c.session;
        let gone = Message::RenewResult {
            session,
            req: 5,
            found: false,
        };
        deliver(&mut c, 7_504 * MS, gone);
        assert!(!c.renewing);
        assert_eq!(c.belief(), Belief::Bool { token: 4 });
    }

    /// Refused under lock-delay with the key free, the acquire loop sleeps lock_retry and then
    /// GETs at index 0; refused with the key held, it blocks on the key's index.
    #[test]
    fn a_refused_acquire_sleeps_under_lock_delay_or_waits_on_the_key() {
        let refused = |holder| Message::AcquireResult {
            session: 1,
            req: 3,
            found: true,
            locked: false,
            token: 1,
            index: 9,
            holder,
            values: Store::default(),
        };
        let ready = || {
            let mut c = client(RenewPolicy::RetryEverySecond, Some(LocalDur::from_secs(7)));
            call(&mut c, 0, |c, cx, out| c.on_start(cx, out));
            deliver(&mut c, 2 * MS, Message::Created { session: 1, req: 1 });
            let free = Message::KeyState {
                req: 2,
                index: 0,
                holder: None,
                lock_index: 0,
            };
            deliver(&mut c, 4 * MS, free);
            c
        };
        let mut c = ready();
        let sleep = deliver(&mut c, 6 * MS, refused(None));
        assert_eq!(armed(&sleep, LOCK), Some(5_006 * MS));
        assert!(kinds(&sleep).is_empty());
        let woke = call(&mut c, 5_006 * MS, |c, cx, out| c.on_timer(cx, LOCK, out));
        assert!(matches!(
            woke.actions()[0],
            Action::Send {
                msg: Message::Get { index: 0, .. },
                ..
            }
        ));
        let mut c = ready();
        let wait = deliver(&mut c, 6 * MS, refused(Some((2, 1))));
        assert!(matches!(
            wait.actions()[0],
            Action::Send {
                msg: Message::Get { index: 9, .. },
                ..
            }
        ));
        // Its deadline: 6 ms + 15 + 15/16 + 7 s.
        assert_eq!(armed(&wait, LOCK), Some(22_943_500 * 1_000));
    }

    /// The renewal loop is the client's renewal thread; the acquire loop and monitorLock are
    /// the worker's.
    #[test]
    fn only_the_renew_timer_is_the_renewal_loops() {
        assert_eq!(thread_of_timer(RENEW), Thread::Renewal);
        assert_eq!(thread_of_timer(LOCK), Thread::Worker);
        assert_eq!(thread_of_timer(MONITOR), Thread::Worker);
    }
}
