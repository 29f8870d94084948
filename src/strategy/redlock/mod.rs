//! Redlock: a lock over N independent Redis masters, each a `Grantor`.
//!
//! A client notes its monotonic time t0 and asks every master to `Lock` with a fresh value:
//! all at once (`acquire: Parallel`), deciding when every master has answered or
//! `request_timeout` has passed, or one master after the other (`Sequential`), giving each at
//! most `per_instance_timeout` before moving on and deciding after the last. With `quorum: One`
//! it decides at the first grant. It holds iff enough masters granted and the validity
//! T - elapsed - drift is positive, where drift = drift_factor * T + drift_allowance, and then
//! believes until t0 + T - drift on its monotonic clock. Otherwise it unlocks every master and
//! retries after a random delay in [retry_every/2, retry_every] from its own stream. While it
//! holds it extends every `renew_every` on every master at once; when enough extensions of one
//! round succeed, its deadline moves to (round send time) + T - drift; otherwise it keeps its
//! deadline.
//!
//! A master sets the key when it is absent or expired on its `expiry_clock` (Redis keeps
//! expiries on the wall clock, so an NTP step on a master moves them), with expiry = its clock +
//! T, and extends only a key that holds the client's value. A key is alive while the clock
//! reads at most its expiry and expired once it reads more (Redis's `keyIsExpired`). What a
//! crash leaves of the keys is `persistence`: nothing (`None`), the keys as they were at the
//! last whole second of the master's monotonic clock that it reached running (`EverySec`), or
//! every write (`Always`); the key comes back with its expiry, and one that expired meanwhile
//! is expired. Independently, with `lease.grantor_restart: Wait` a restarted master refuses
//! every lock for T first. The protected resource sits with the first master, apart from its
//! keys (it survives the master's crash), and has no fencing: Redlock has no fencing token. For
//! the oracle, each successful acquisition takes the next token of the run (see
//! [`Cx::next_run_token`]), so a later acquisition supersedes an earlier one.
//!
//! Redis speaks over TCP ([`Transport::Stream`]): a `Lock` to a master whose process is down is
//! refused, and the client counts that master as failed for the attempt at once (asking one by
//! one, it moves on); a command lost on the way waits for `request_timeout` or
//! `per_instance_timeout`. A refused `Extend` or `Unlock` changes nothing.
//!
//! Duplicates change nothing. Redis speaks over TCP, so a master never sees a copy of a
//! command the network duplicated (it ignores one: a second `SET NX` would be refused, and its
//! answer is a message more); the resource applies a duplicated write once; a client counts
//! one answer per master and round.

mod master;
pub mod msg;
pub mod settings;

use super::{
    Belief, Beliefs, Cx, Fact, LeaseParams, NodeLogic, Out, Protocol, Request, Store, Thread,
    TimerId, Transport,
};
use crate::clock::ClockKind;
use crate::msg::{NodeId, Token};
use crate::scenario::{Role, Scenario};
use crate::strategy::roles::{Grantors, LockServiceRoles};
use crate::time::{LocalDur, LocalTime};
pub use master::{Disk, Master};
pub use msg::Message;
pub use settings::{RedlockAcquire, RedlockHolder, RedlockPersistence, RedlockQuorum, RedlockWait};

/// Redlock with its parameters, all durations in exact nanoseconds: its settings build it.
#[derive(Clone, Debug)]
pub struct Redlock {
    /// drift_factor in parts per million (0.01 is 10,000).
    drift_ppm: i64,
    drift_allowance: LocalDur,
    request_timeout: LocalDur,
    expiry_clock: ClockKind,
    quorum: RedlockQuorum,
    acquire: RedlockAcquire,
    persistence: RedlockPersistence,
    holder: RedlockHolder,
    wait: RedlockWait,
    /// The settings as RON text.
    description: String,
}

impl Redlock {
    /// drift_factor * T + drift_allowance, exact to the nanosecond (rounded down).
    pub fn drift(&self, lease: LocalDur) -> LocalDur {
        let factor = (lease.ns() as i128 * self.drift_ppm as i128 / 1_000_000) as i64;
        LocalDur::from_ns(factor) + self.drift_allowance
    }
}

impl Protocol for Redlock {
    /// A client's commands to one Redis master travel on one TCP connection (RESP).
    const TRANSPORT: Transport = Transport::Stream;
    type Logic = RedlockNode;

    fn describe(&self) -> String {
        self.description.clone()
    }

    fn check(&self, scenario: &Scenario) -> Vec<String> {
        let mut p = LockServiceRoles {
            protocol: "Redlock",
            grantors: Grantors::AtLeastOne,
            grantor_is: "a Redis master",
            contender_is: "a client",
        }
        .check(scenario);
        if scenario.resource.fencing {
            p.push(
                "resource.fencing: Redlock has no fencing token (its lock values are random \
                 and do not increase), so the resource cannot fence; use a protocol with tokens"
                    .to_string(),
            );
        }
        let drift = self.drift(scenario.lease.duration);
        if drift >= scenario.lease.duration {
            p.push(format!(
                "strategy: drift_factor * T + drift_allowance ({drift}) leaves no validity of T ({})",
                scenario.lease.duration
            ));
        }
        if !(0..1_000_000).contains(&self.drift_ppm) {
            p.push("strategy.drift_factor: must be in [0, 1)".to_string());
        }
        p
    }

    fn renewal_loop(&self, role: Role) -> Option<&'static str> {
        (role == Role::Contender).then_some("the lock and extend loop (Redisson's watchdog)")
    }

    /// A master with `persistence` writes its key to the append-only file.
    fn persists(&self, role: Role) -> Option<&'static str> {
        (role == Role::Grantor && self.persistence != RedlockPersistence::None)
            .then_some("its key, to the append-only file")
    }

    fn node_logic(
        &self,
        node: NodeId,
        role: Role,
        params: &LeaseParams,
        disk: Disk,
    ) -> RedlockNode {
        match role {
            Role::Grantor => RedlockNode::Master(Master::new(
                node,
                *params,
                self.expiry_clock,
                self.persistence,
                disk,
            )),
            _ => RedlockNode::Client(Box::new(Client::new(self.clone(), *params))),
        }
    }
}

/// A Redlock node: a master or a client (boxed: a client's rounds and settings make it the
/// larger by far).
pub enum RedlockNode {
    Master(Master),
    Client(Box<Client>),
}

impl NodeLogic for RedlockNode {
    type Msg = Message;
    /// A master's disk holds the protected resource (when it hosts it) and its key as
    /// `persistence` keeps it.
    type Disk = Disk;

    fn on_start(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        match self {
            RedlockNode::Master(m) => m.on_start(cx, out),
            // `lease.initial_leader` names another client: this one's first attempt waits a
            // retry delay, as after a failed attempt, so the named one's Locks land first.
            RedlockNode::Client(c) if c.p.another_leads_first(cx) => c.retry_later(cx, None, out),
            RedlockNode::Client(c) => c.acquire(cx, out),
        }
    }

    fn on_message(&mut self, cx: &mut Cx, from: NodeId, msg: Message, out: &mut Out<Message>) {
        match self {
            RedlockNode::Master(m) => m.on_message(cx, from, msg, out),
            RedlockNode::Client(c) => c.on_message(cx, from, msg, out),
        }
    }

    /// A command to a master whose process is down is refused (connection refused): the
    /// client counts that master as failed for this attempt at once.
    fn on_refused(&mut self, cx: &mut Cx, to: NodeId, msg: Message, out: &mut Out<Message>) {
        if let RedlockNode::Client(c) = self {
            c.on_refused(cx, to, msg, out);
        }
    }

    fn on_timer(&mut self, cx: &mut Cx, timer: TimerId, out: &mut Out<Message>) {
        match self {
            RedlockNode::Master(m) => m.on_timer(cx, timer, out),
            RedlockNode::Client(c) => c.on_timer(cx, timer, out),
        }
    }

    /// A client's renewal loop runs its lock attempts and extensions (Redisson's watchdog
    /// timer task) and takes their answers; its worker acts, and stops at the validity its
    /// own clock check reads.
    fn thread_of_timer(&self, timer: TimerId) -> Thread {
        match (self, timer) {
            (RedlockNode::Client(_), RETRY | DECIDE | RENEW | NEXT_MASTER) => Thread::Renewal,
            _ => Thread::Worker,
        }
    }

    fn thread_of_message(&self, msg: &Message) -> Thread {
        match (self, msg) {
            (RedlockNode::Client(_), Message::LockReply { .. } | Message::ExtendReply { .. }) => {
                Thread::Renewal
            }
            _ => Thread::Worker,
        }
    }

    fn check(&self, cx: &Cx, _request: Request) -> Option<Token> {
        match self {
            RedlockNode::Master(_) => None,
            RedlockNode::Client(c) => c.check(cx),
        }
    }

    /// A master serves nothing; a client that holds no lock has nothing to act under.
    fn refuses_whatever_the_time(&self, _request: Request) -> bool {
        match self {
            RedlockNode::Master(_) => true,
            RedlockNode::Client(c) => c.held.is_none(),
        }
    }

    fn on_request(&mut self, cx: &mut Cx, request: Request, token: Token, out: &mut Out<Message>) {
        if let RedlockNode::Client(c) = self {
            match request {
                Request::Read { key } => out.report(Fact::Read {
                    token,
                    value: c.copy.get(key),
                }),
                Request::Write { key, value } => {
                    out.report(Fact::WriteSent { token });
                    out.send(resource_host(cx), Message::Write { token, key, value });
                }
            }
        }
    }

    fn beliefs(&self) -> Beliefs {
        match self {
            RedlockNode::Master(_) => Beliefs::NONE,
            RedlockNode::Client(c) => Beliefs::both(c.belief()),
        }
    }

    fn into_disk(self) -> Disk {
        match self {
            RedlockNode::Master(m) => m.into_disk(),
            RedlockNode::Client(_) => Disk::default(),
        }
    }

    /// A master writes its key (the append-only file); a client nothing.
    fn disk_image(&self) -> Option<Disk> {
        match self {
            RedlockNode::Master(m) => Some(m.disk_image()),
            RedlockNode::Client(_) => None,
        }
    }

    /// The key comes back as the disk made it durable; the resource the master hosts is not
    /// in the append-only file's model and survives as it was.
    fn into_disk_with(self, durable: Disk) -> Disk {
        match self {
            RedlockNode::Master(m) => Disk {
                key: durable.key,
                ..m.into_disk()
            },
            RedlockNode::Client(_) => Disk::default(),
        }
    }
}

/// The master that hosts the protected resource: the first Grantor.
fn resource_host(cx: &Cx) -> NodeId {
    cx.peers(Role::Grantor).next().expect("checked: a master")
}

// Timers.
const RETRY: TimerId = 0;
const DECIDE: TimerId = 1;
const RENEW: TimerId = 2;
const DEADLINE: TimerId = 3;
const REFUSE_UNTIL: TimerId = 4;
/// A master's fsync at a whole second (`persistence: EverySec`).
const FSYNC: TimerId = 5;
/// A client asking one master after the other gives up on the one it asks.
const NEXT_MASTER: TimerId = 6;

/// A round of requests to every master (a lock attempt or an extension).
struct Round {
    /// Local monotonic send time.
    sent: LocalTime,
    /// Per node: 0 not asked or no answer yet, 1 granted, 2 refused.
    answers: Vec<u8>,
    granted: usize,
    answered: usize,
    /// The longest remaining time to live a refusal returned.
    ttl: Option<LocalDur>,
}

impl Round {
    fn new(nodes: usize) -> Round {
        Round {
            sent: LocalTime::from_ns(0),
            answers: vec![0; nodes],
            granted: 0,
            answered: 0,
            ttl: None,
        }
    }

    fn open(&mut self, sent: LocalTime) {
        self.sent = sent;
        self.answers.fill(0);
        self.granted = 0;
        self.answered = 0;
        self.ttl = None;
    }

    /// Counts `master`'s answer once (a duplicated reply is not a second vote).
    fn answer(&mut self, master: NodeId, ok: bool) {
        if self.answers[master] == 0 {
            self.answers[master] = if ok { 1 } else { 2 };
            self.answered += 1;
            self.granted += ok as usize;
        }
    }
}

/// A Redlock client.
pub struct Client {
    r: Redlock,
    p: LeaseParams,
    /// drift_factor * T + drift_allowance.
    drift: LocalDur,
    /// How many masters there are (counted when the client starts asking).
    masters: usize,
    next_value: u64,
    /// The value of the current lock attempt or of the lock held.
    value: u64,
    /// A lock attempt is open.
    acquiring: bool,
    /// Asking one master after the other: which of the masters (counted from 0) is asked now.
    asking: Option<usize>,
    attempt: Option<Round>,
    extension: Option<Round>,
    extension_seq: u64,
    /// The resource's values, as the master hosting it answered the current attempt.
    attempt_values: Store,
    /// Its copy of the resource: the values of the attempt that made it holder, and its own
    /// writes the host answered since.
    copy: Store,
    /// The acquisition held, with its deadline on the monotonic clock.
    held: Option<(Token, LocalTime)>,
}

impl Client {
    fn new(r: Redlock, p: LeaseParams) -> Client {
        Client {
            drift: r.drift(p.lease),
            masters: 0,
            r,
            p,
            next_value: 0,
            value: 0,
            acquiring: false,
            asking: None,
            attempt: None,
            extension: None,
            extension_seq: 0,
            attempt_values: Store::default(),
            copy: Store::default(),
            held: None,
        }
    }

    /// How many grants make a lock (or an extension).
    fn needed(&self) -> usize {
        match self.r.quorum {
            RedlockQuorum::Majority => self.masters / 2 + 1,
            RedlockQuorum::One => 1,
        }
    }

    /// A value unique across the client's lives.
    fn new_value(&mut self, cx: &Cx) -> u64 {
        self.next_value += 1;
        ((cx.node as u64) << 48) | ((cx.incarnation as u64) << 32) | self.next_value
    }

    fn acquire(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        out.report(Fact::Seeking);
        self.masters = cx.peers(Role::Grantor).count();
        self.value = self.new_value(cx);
        self.acquiring = true;
        self.attempt_values = Store::default();
        let nodes = cx.roles.len();
        let round = self.attempt.get_or_insert_with(|| Round::new(nodes));
        round.open(cx.mono);
        match self.r.acquire {
            RedlockAcquire::Parallel => {
                for m in cx.peers(Role::Grantor) {
                    out.send(m, Message::Lock { value: self.value });
                }
                let at = cx.mono + self.r.request_timeout;
                out.set_timer(DECIDE, ClockKind::Monotonic, at);
            }
            RedlockAcquire::Sequential { .. } => self.ask(cx, 0, out),
        }
    }

    /// Asking one master after the other: asks master `index` (counted from 0), or decides
    /// when every master has had its turn.
    fn ask(&mut self, cx: &mut Cx, index: usize, out: &mut Out<Message>) {
        let RedlockAcquire::Sequential {
            per_instance_timeout,
        } = self.r.acquire
        else {
            unreachable!("only a client asking one master after the other asks one");
        };
        debug_assert!(self.acquiring && index <= self.masters);
        let master = cx.peers(Role::Grantor).nth(index);
        match master {
            Some(master) => {
                self.asking = Some(index);
                out.send(master, Message::Lock { value: self.value });
                let at = cx.mono + per_instance_timeout;
                out.set_timer(NEXT_MASTER, ClockKind::Monotonic, at);
            }
            None => self.decide(cx, out),
        }
    }

    /// The attempt is over (all answered or timed out, or one grant with `quorum: One`).
    fn decide(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        self.acquiring = false;
        match self.r.acquire {
            RedlockAcquire::Parallel => out.cancel_timer(DECIDE),
            RedlockAcquire::Sequential { .. } => {
                self.asking = None;
                out.cancel_timer(NEXT_MASTER);
            }
        }
        let round = self.attempt.as_ref().expect("an attempt is open");
        let elapsed = cx.mono - round.sent;
        let validity = self.p.lease - elapsed - self.drift;
        if round.granted >= self.needed() && validity.ns() > 0 {
            let token = cx.next_run_token();
            // Extending, it acts while the validity lasts; taking the key for T alone, for as
            // long as its work takes, the key's lapse unseen.
            let deadline = match self.r.holder {
                RedlockHolder::Extends => round.sent + self.p.lease - self.drift,
                RedlockHolder::Lapses { work } => cx.mono + work,
            };
            self.held = Some((token, deadline));
            out.report(Fact::Issued {
                token,
                to: cx.node,
                until: deadline,
            });
            self.copy = self.attempt_values.clone();
            out.report(Fact::Holding { token });
            out.set_timer(DEADLINE, ClockKind::Monotonic, deadline);
            if self.r.holder == RedlockHolder::Extends {
                out.set_timer(RENEW, ClockKind::Monotonic, cx.mono + self.p.renew_every);
            }
        } else {
            let ttl = round.ttl;
            for m in cx.peers(Role::Grantor) {
                out.send(m, Message::Unlock { value: self.value });
            }
            self.retry_later(cx, ttl, out);
        }
    }

    /// Arms the next attempt: after the remaining time to live `ttl` a refusal returned, if
    /// the client waits for it, else after a delay drawn from [retry_every/2, retry_every].
    fn retry_later(&mut self, cx: &mut Cx, ttl: Option<LocalDur>, out: &mut Out<Message>) {
        use rand::RngExt;
        let delay = match (self.r.wait, ttl) {
            (RedlockWait::RemainingTtl, Some(ttl)) => ttl,
            _ => {
                let most = self.p.retry_every.ns().max(2);
                LocalDur::from_ns(cx.rng.random_range(most / 2..=most))
            }
        };
        out.set_timer(RETRY, ClockKind::Monotonic, cx.mono + delay);
    }

    fn on_message(&mut self, cx: &mut Cx, from: NodeId, msg: Message, out: &mut Out<Message>) {
        match msg {
            // The host's answer to a write: the copy takes it.
            Message::WriteAck(ack) => {
                self.copy.merge(ack);
                out.report(Fact::WriteAcked {
                    key: ack.key,
                    value: ack.value,
                });
            }
            Message::LockReply {
                value,
                ok,
                values,
                ttl,
            } if self.acquiring && value == self.value && self.awaits(cx, from) => {
                if let Some(values) = values {
                    self.attempt_values = values;
                }
                self.lock_answered(cx, from, (ok, ttl), out);
            }
            Message::ExtendReply { value, seq, ok }
                if self.held.is_some() && value == self.value && seq == self.extension_seq =>
            {
                let needed = self.needed();
                let round = self.extension.as_mut().expect("an extension is open");
                let before = round.granted;
                round.answer(from, ok);
                if before < needed && round.granted >= needed {
                    let deadline = round.sent + self.p.lease - self.drift;
                    let (token, current) = self.held.expect("held");
                    if deadline > current {
                        self.held = Some((token, deadline));
                        out.set_timer(DEADLINE, ClockKind::Monotonic, deadline);
                        out.report(Fact::Renewed {
                            token,
                            until: deadline,
                        });
                    }
                }
            }
            _ => {}
        }
    }

    /// Master `from` answered the current attempt (`ok`: granted; `ttl`: a refusal's remaining
    /// time to live), or failed it: decide, or ask the next master, as the answers so far allow.
    fn lock_answered(
        &mut self,
        cx: &mut Cx,
        from: NodeId,
        (ok, ttl): (bool, Option<LocalDur>),
        out: &mut Out<Message>,
    ) {
        let round = self.attempt.as_mut().expect("an attempt is open");
        round.answer(from, ok);
        round.ttl = round.ttl.max(ttl);
        let quorum_one = self.r.quorum == RedlockQuorum::One && round.granted >= 1;
        match self.asking {
            _ if quorum_one => self.decide(cx, out),
            Some(index) => self.ask(cx, index + 1, out),
            None if round.answered == self.masters => self.decide(cx, out),
            None => {}
        }
    }

    /// The `Lock` of the current attempt to master `to` was refused (its process is down): that
    /// master has failed this attempt, at once rather than at the timeout. A refused `Extend`
    /// changes nothing (a round moves the deadline only on enough grants), nor does an `Unlock`.
    fn on_refused(&mut self, cx: &mut Cx, to: NodeId, msg: Message, out: &mut Out<Message>) {
        if let Message::Lock { value } = msg {
            if self.acquiring && value == self.value && self.awaits(cx, to) {
                self.lock_answered(cx, to, (false, None), out);
            }
        }
    }

    /// Whether a lock reply from `from` counts: asking all at once, any master's; asking one
    /// after the other, only the one asked now (a reply after its turn ended is not counted).
    fn awaits(&self, cx: &Cx, from: NodeId) -> bool {
        match self.asking {
            None => true,
            Some(index) => cx.peers(Role::Grantor).nth(index) == Some(from),
        }
    }

    fn on_timer(&mut self, cx: &mut Cx, timer: TimerId, out: &mut Out<Message>) {
        match timer {
            RETRY if self.held.is_none() && !self.acquiring => self.acquire(cx, out),
            DECIDE if self.acquiring => self.decide(cx, out),
            NEXT_MASTER if self.acquiring => {
                let index = self.asking.expect("asking one master after the other");
                self.ask(cx, index + 1, out);
            }
            RENEW if self.held.is_some() => {
                self.extension_seq += 1;
                let nodes = cx.roles.len();
                let round = self.extension.get_or_insert_with(|| Round::new(nodes));
                round.open(cx.mono);
                for m in cx.peers(Role::Grantor) {
                    let msg = Message::Extend {
                        value: self.value,
                        seq: self.extension_seq,
                    };
                    out.send(m, msg);
                }
                out.set_timer(RENEW, ClockKind::Monotonic, cx.mono + self.p.renew_every);
            }
            DEADLINE => {
                if let Some((_, deadline)) = self.held {
                    if cx.mono >= deadline {
                        self.held = None;
                        out.cancel_timer(RENEW);
                        // Its work done, a client that never extends unlocks (a no-op on a
                        // master whose key lapsed to another client).
                        if let RedlockHolder::Lapses { .. } = self.r.holder {
                            for m in cx.peers(Role::Grantor) {
                                out.send(m, Message::Unlock { value: self.value });
                            }
                        }
                        self.acquire(cx, out);
                    }
                }
            }
            _ => {}
        }
    }

    fn check(&self, cx: &Cx) -> Option<Token> {
        let (token, deadline) = self.held?;
        (cx.mono < deadline).then_some(token)
    }

    fn belief(&self) -> Belief {
        match self.held {
            None => Belief::None,
            Some((token, deadline)) => Belief::Until {
                token,
                clock: ClockKind::Monotonic,
                deadline,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::GrantorRestart;
    use crate::strategy::{Ack, Action};

    const S: i64 = 1_000_000_000;

    fn redlock() -> Redlock {
        Redlock {
            drift_ppm: 10_000,
            drift_allowance: LocalDur::from_ms(2),
            request_timeout: LocalDur::from_ms(50),
            expiry_clock: ClockKind::Monotonic,
            quorum: RedlockQuorum::Majority,
            acquire: RedlockAcquire::Parallel,
            persistence: RedlockPersistence::None,
            holder: RedlockHolder::Extends,
            wait: RedlockWait::Jittered,
            description: String::new(),
        }
    }

    fn params() -> LeaseParams {
        LeaseParams {
            lease: LocalDur::from_secs(10),
            renew_every: LocalDur::from_secs(3),
            retry_every: LocalDur::from_secs(1),
            grantor_restart: GrantorRestart::Wait,
            fencing: false,
            initial_leader: None,
        }
    }

    /// Node 0 is a client, nodes 1 and 2 masters: node 1, the first master, hosts the resource.
    const ROLES: &[Role] = &[Role::Contender, Role::Grantor, Role::Grantor];

    fn master(node: NodeId) -> RedlockNode {
        redlock().node_logic(node, Role::Grantor, &params(), Disk::default())
    }

    #[test]
    fn a_master_and_a_client_holding_no_lock_refuse_whatever_the_time() {
        let read = Request::Read { key: 0 };
        assert!(master(1).refuses_whatever_the_time(read));
        let mut client = redlock().node_logic(0, Role::Contender, &params(), Disk::default());
        assert!(client.refuses_whatever_the_time(read));
        let RedlockNode::Client(c) = &mut client else {
            panic!("node 0 is a client")
        };
        c.held = Some((1, LocalTime::from_ns(10 * S)));
        assert!(!client.refuses_whatever_the_time(read));
    }

    /// Calls `f` on `m` with node `node`'s context at monotonic reading `mono_ns`; what it gave.
    fn call(
        m: &mut RedlockNode,
        node: NodeId,
        mono_ns: i64,
        f: impl FnOnce(&mut RedlockNode, &mut Cx, &mut Out<Message>),
    ) -> Out<Message> {
        crate::strategy::call_for_test(m, node, ROLES, LocalTime::from_ns(mono_ns), f)
    }

    /// The LockReply sent: whether it granted, and the value of key 0 it carries (`None`: it
    /// carries no values, from a master that does not host the resource).
    fn lock_reply(given: &Out<Message>) -> (bool, Option<u64>) {
        given
            .actions()
            .iter()
            .find_map(|e| match e {
                Action::Send {
                    msg: Message::LockReply { ok, values, .. },
                    ..
                } => Some((*ok, values.as_ref().map(|v| v.get(0)))),
                _ => None,
            })
            .expect("a LockReply")
    }

    #[test]
    fn the_first_master_hosts_the_resource_keeps_it_and_reports_its_version() {
        let (mut host, mut other) = (master(1), master(2));
        call(&mut host, 1, 0, |m, cx, out| m.on_start(cx, out));
        call(&mut other, 2, 0, |m, cx, out| m.on_start(cx, out));
        // Two writes from the client (values 11 and 12 to key 0): the host applies them and
        // answers each, the other master ignores them.
        for value in [11, 12] {
            let w = |m: &mut RedlockNode, cx: &mut Cx, out: &mut Out<Message>| {
                let write = Message::Write {
                    token: 1,
                    key: 0,
                    value,
                };
                m.on_message(cx, 0, write, out)
            };
            let applied = call(&mut host, 1, 0, w);
            assert!(matches!(
                applied.facts(),
                [Fact::WriteApplied { writer: 0, .. }]
            ));
            assert!(matches!(
                applied.actions(),
                [Action::Send {
                    to: 0,
                    msg: Message::WriteAck(Ack { value: v, .. })
                }] if *v == value
            ));
            let ignored = call(&mut other, 2, 0, w);
            assert!(ignored.actions().is_empty() && ignored.facts().is_empty());
        }
        // A lock reply carries the resource's values from the host, none from the others.
        let lock = |m: &mut RedlockNode, cx: &mut Cx, out: &mut Out<Message>| {
            m.on_message(cx, 0, Message::Lock { value: 7 }, out)
        };
        assert_eq!(lock_reply(&call(&mut host, 1, 0, lock)), (true, Some(12)));
        assert_eq!(lock_reply(&call(&mut other, 2, 0, lock)), (true, None));
        // The resource survives the host's crash.
        assert_eq!(host.into_disk().register.applied(), 2);
    }

    /// A `Lock` of `value` from the client, node 0.
    fn lock(value: u64) -> impl FnOnce(&mut RedlockNode, &mut Cx, &mut Out<Message>) {
        move |m, cx, out| m.on_message(cx, 0, Message::Lock { value }, out)
    }

    /// The remaining time to live a refusal carries.
    fn refusal_ttl(given: &Out<Message>) -> Option<LocalDur> {
        given.actions().iter().find_map(|e| match e {
            Action::Send {
                msg: Message::LockReply { ttl, .. },
                ..
            } => *ttl,
            _ => None,
        })
    }

    #[test]
    fn a_refusal_carries_the_remaining_time_to_live_of_the_key() {
        // Locked at 0 with T = 10 s (expiry 10 s): refused at 4 s with 6 s to live, at 10 s
        // (alive at its expiry) with none left; granted at 10 s + 1 ns, with no time to live.
        let mut m = master(1);
        call(&mut m, 1, 0, |m, cx, out| m.on_start(cx, out));
        let first = call(&mut m, 1, 0, lock(1));
        assert_eq!((lock_reply(&first).0, refusal_ttl(&first)), (true, None));
        let at_4s = call(&mut m, 1, 4 * S, lock(2));
        assert_eq!(refusal_ttl(&at_4s), Some(LocalDur::from_secs(6)));
        let at_expiry = call(&mut m, 1, 10 * S, lock(3));
        assert_eq!(refusal_ttl(&at_expiry), Some(LocalDur::ZERO));
        let after = call(&mut m, 1, 10 * S + 1, lock(4));
        assert_eq!((lock_reply(&after).0, refusal_ttl(&after)), (true, None));
    }

    /// The client's next attempt, from what it armed.
    fn retry_at(given: &Out<Message>) -> Option<i64> {
        given.actions().iter().find_map(|e| match e {
            Action::SetTimer {
                timer: RETRY, at, ..
            } => Some(at.ns()),
            _ => None,
        })
    }

    #[test]
    fn a_client_waiting_for_the_key_sleeps_the_longest_time_to_live_it_was_refused_with() {
        // Both masters refuse the attempt begun at 0 (6 s and 4 s to live), the last answer at
        // 2 ms: the next attempt is 6 s after it, at 6.002 s. Drawing a delay instead, it
        // comes within [retry_every/2, retry_every] = [0.5 s, 1 s] of the answer.
        let client = |wait| {
            let r = Redlock { wait, ..redlock() };
            r.node_logic(0, Role::Contender, &params(), Disk::default())
        };
        for wait in [RedlockWait::RemainingTtl, RedlockWait::Jittered] {
            let mut c = client(wait);
            let asked = call(&mut c, 0, 0, |c, cx, out| c.on_start(cx, out));
            let value = asked
                .actions()
                .iter()
                .find_map(|e| match e {
                    Action::Send {
                        msg: Message::Lock { value },
                        ..
                    } => Some(*value),
                    _ => None,
                })
                .expect("a lock request");
            let answer = |ttl_s| Message::LockReply {
                value,
                ok: false,
                values: None,
                ttl: Some(LocalDur::from_secs(ttl_s)),
            };
            call(&mut c, 0, S / 1000, |c, cx, out| {
                c.on_message(cx, 1, answer(6), out)
            });
            let decided = call(&mut c, 0, 2 * S / 1000, |c, cx, out| {
                c.on_message(cx, 2, answer(4), out)
            });
            let at = retry_at(&decided).expect("a retry armed");
            match wait {
                RedlockWait::RemainingTtl => assert_eq!(at, 6 * S + 2 * S / 1000),
                RedlockWait::Jittered => {
                    assert!(
                        (S / 2 + 2 * S / 1000..=S + 2 * S / 1000).contains(&at),
                        "{at}"
                    )
                }
            }
        }
    }

    #[test]
    fn a_client_that_lets_the_key_lapse_never_extends_and_acts_for_its_work() {
        // Both masters grant the attempt begun at 0, the last answer at 2 ms: the client holds
        // until 2 ms + 3 s of work, and arms no extension (Extends would, 3 s after).
        let r = Redlock {
            holder: RedlockHolder::Lapses {
                work: LocalDur::from_secs(3),
            },
            ..redlock()
        };
        let mut c = r.node_logic(0, Role::Contender, &params(), Disk::default());
        call(&mut c, 0, 0, |c, cx, out| c.on_start(cx, out));
        let granted = |value| Message::LockReply {
            value,
            ok: true,
            values: None,
            ttl: None,
        };
        let RedlockNode::Client(client) = &c else {
            unreachable!()
        };
        let value = client.value;
        call(&mut c, 0, S / 1000, |c, cx, out| {
            c.on_message(cx, 1, granted(value), out)
        });
        let held = call(&mut c, 0, 2 * S / 1000, |c, cx, out| {
            c.on_message(cx, 2, granted(value), out)
        });
        let timers: Vec<(TimerId, i64)> = held
            .actions()
            .iter()
            .filter_map(|e| match e {
                Action::SetTimer { timer, at, .. } => Some((*timer, at.ns())),
                _ => None,
            })
            .collect();
        assert_eq!(timers, vec![(DEADLINE, 3 * S + 2 * S / 1000)]);
    }

    #[test]
    fn a_key_is_alive_at_its_expiry_and_expired_a_nanosecond_later() {
        // Locked at 0 with T = 10 s, so the expiry is 10 s: Redis keeps a key while now <= when.
        // At 10 s another lock fails, at 10 s + 1 ns it succeeds.
        let mut m = master(1);
        call(&mut m, 1, 0, |m, cx, out| m.on_start(cx, out));
        assert!(lock_reply(&call(&mut m, 1, 0, lock(1))).0);
        assert!(!lock_reply(&call(&mut m, 1, 10 * S, lock(2))).0);
        assert!(lock_reply(&call(&mut m, 1, 10 * S + 1, lock(3))).0);
    }

    fn master_keeping(node: NodeId, persistence: RedlockPersistence, disk: Disk) -> RedlockNode {
        let r = Redlock {
            persistence,
            ..redlock()
        };
        r.node_logic(node, Role::Grantor, &params(), disk)
    }

    fn send(msg: Message) -> impl FnOnce(&mut RedlockNode, &mut Cx, &mut Out<Message>) {
        move |m, cx, out| m.on_message(cx, 0, msg, out)
    }

    fn fsync(m: &mut RedlockNode, cx: &mut Cx, out: &mut Out<Message>) {
        m.on_timer(cx, FSYNC, out)
    }

    /// The fsync timers `given` arms, as monotonic readings in ns.
    fn fsyncs_armed(given: &Out<Message>) -> Vec<i64> {
        let armed = given.actions().iter().filter_map(|a| match a {
            Action::SetTimer {
                timer: FSYNC, at, ..
            } => Some(at.ns()),
            _ => None,
        });
        armed.collect()
    }

    #[test]
    fn everysec_keeps_the_writes_made_before_the_last_whole_second() {
        // Keys expire on the monotonic clock here, T = 10 s: a lock at 0.5 s expires at 10.5 s.
        let every_sec = |disk| master_keeping(1, RedlockPersistence::EverySec, disk);
        let lock = Message::Lock { value: 1 };
        // A crash before the fsync at 1 s loses the lock; the lock armed that fsync.
        let mut m = every_sec(Disk::default());
        assert_eq!(
            fsyncs_armed(&call(&mut m, 1, S / 2, send(lock.clone()))),
            [S]
        );
        assert_eq!(m.into_disk().key, None);
        // After the fsync at 1 s the disk has it; an extension at 1.2 s (to 11.2 s) is not on
        // disk until 2 s, so a crash before then keeps the lock's expiry, 10.5 s.
        let mut m = every_sec(Disk::default());
        call(&mut m, 1, S / 2, send(lock.clone()));
        call(&mut m, 1, S, fsync);
        let extend = Message::Extend { value: 1, seq: 1 };
        assert_eq!(
            fsyncs_armed(&call(&mut m, 1, 6 * S / 5, send(extend.clone()))),
            [2 * S]
        );
        let disk = m.into_disk();
        assert_eq!(disk.key, Some((1, LocalTime::from_ns(10 * S + S / 2))));
        // A write at the very reading of a due fsync whose timer has not run yet comes after
        // it: the disk gets the key as it was before the write.
        let mut m = every_sec(Disk::default());
        call(&mut m, 1, S / 2, send(lock.clone()));
        assert_eq!(
            fsyncs_armed(&call(&mut m, 1, S, send(extend.clone()))),
            [2 * S]
        );
        assert_eq!(m.into_disk().key, disk.key);
        // The restarted master has the key back: alive through 10.5 s, expired after.
        let mut back = every_sec(disk);
        call(&mut back, 1, 2 * S, |m, cx, out| m.on_start(cx, out));
        let other = Message::Lock { value: 2 };
        assert!(!lock_reply(&call(&mut back, 1, 10 * S + S / 2, send(other.clone()))).0);
        assert!(lock_reply(&call(&mut back, 1, 10 * S + S / 2 + 1, send(other.clone()))).0);
    }

    #[test]
    fn always_keeps_every_write_and_none_keeps_nothing() {
        let lock = Message::Lock { value: 1 };
        let mut m = master_keeping(1, RedlockPersistence::Always, Disk::default());
        assert!(fsyncs_armed(&call(&mut m, 1, S / 2, send(lock.clone()))).is_empty());
        assert_eq!(
            m.into_disk().key,
            Some((1, LocalTime::from_ns(10 * S + S / 2)))
        );
        let mut m = master_keeping(1, RedlockPersistence::Always, Disk::default());
        call(&mut m, 1, S / 2, send(lock.clone()));
        call(&mut m, 1, S, send(Message::Unlock { value: 1 }));
        assert_eq!(m.into_disk().key, None);
        let mut m = master_keeping(1, RedlockPersistence::None, Disk::default());
        call(&mut m, 1, S / 2, send(lock.clone()));
        assert_eq!(m.into_disk().key, None);
    }

    #[test]
    fn redlock_takes_no_replica() {
        let text = r#"Scenario(
            duration: "10s",
            lease: (duration: "5s"),
            strategy: Redlock(),
            nodes: [(name: "m", role: Grantor), (name: "c", role: Contender),
                    (name: "r", role: Replica)],
        )"#;
        let err = crate::scenario::load::from_text("x", text)
            .unwrap_err()
            .to_string();
        assert!(err.contains("Redlock has no Replica role"), "{err}");
    }
}
