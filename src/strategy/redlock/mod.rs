//! Redlock: a lock over N independent Redis masters, each a `Grantor`.
//!
//! A client notes its monotonic time t0 and sends `Lock` with a fresh value to every master; it
//! decides when every master has answered or `request_timeout` has passed (with `quorum: One`,
//! at the first grant). It holds iff enough masters granted and the validity
//! T - elapsed - drift is positive, where drift = drift_factor * T + drift_allowance, and then
//! believes until t0 + T - drift on its monotonic clock. Otherwise it unlocks every master and
//! retries after a random delay in [retry_every/2, retry_every] from its own stream. While it
//! holds it extends every `renew_every` on every master; when enough extensions of one round
//! succeed, its deadline moves to (round send time) + T - drift; otherwise it keeps its deadline.
//!
//! A master sets the key when it is absent or expired on its `expiry_clock` (Redis keeps
//! expiries on the wall clock, so an NTP step on a master moves them), with expiry = its clock +
//! T, and extends only a key that holds the client's value. A restarted master has lost its keys
//! (Redis without persistence); with `lease.grantor_restart: Wait` it refuses every lock for T
//! first. The protected resource sits with the first master, apart from its keys (it survives
//! the master's crash), and has no fencing: Redlock has no fencing token. For the oracle, each
//! successful acquisition takes the next token of the run (see [`Cx::next_run_token`]), so a
//! later acquisition supersedes an earlier one.
//!
//! Duplicates change nothing. Redis speaks over TCP, so a master never sees a copy of a
//! command the network duplicated (it ignores one: a second `SET NX` would be refused, and its
//! answer is a message more); the resource applies a duplicated write once; a client counts
//! one answer per master and round.

pub mod msg;
pub mod settings;

use super::{
    Belief, Beliefs, Cx, Fact, LeaseParams, NodeLogic, Out, Protocol, Register, Request, TimerId,
};
use crate::clock::ClockKind;
use crate::msg::{NodeId, Token};
use crate::scenario::{GrantorRestart, Role, Scenario};
use crate::strategy::roles::{Grantors, LockServiceRoles};
use crate::time::{LocalDur, LocalTime};
pub use msg::Message;
pub use settings::RedlockQuorum;

/// Redlock with its parameters, all durations in exact nanoseconds.
#[derive(Clone, Debug)]
pub struct Redlock {
    /// drift_factor in parts per million.
    drift_ppm: i64,
    drift_allowance: LocalDur,
    request_timeout: LocalDur,
    expiry_clock: ClockKind,
    quorum: RedlockQuorum,
    description: String,
}

impl Redlock {
    /// `drift_ppm` is drift_factor in parts per million (0.01 is 10,000).
    pub fn new(
        drift_ppm: i64,
        drift_allowance: LocalDur,
        request_timeout: LocalDur,
        expiry_clock: ClockKind,
        quorum: RedlockQuorum,
        description: String,
    ) -> Redlock {
        Redlock {
            drift_ppm,
            drift_allowance,
            request_timeout,
            expiry_clock,
            quorum,
            description,
        }
    }

    /// drift_factor * T + drift_allowance, exact to the nanosecond (rounded down).
    pub fn drift(&self, lease: LocalDur) -> LocalDur {
        let factor = (lease.ns() as i128 * self.drift_ppm as i128 / 1_000_000) as i64;
        LocalDur::from_ns(factor) + self.drift_allowance
    }
}

impl Protocol for Redlock {
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

    fn node_logic(
        &self,
        node: NodeId,
        role: Role,
        params: &LeaseParams,
        disk: Register,
    ) -> RedlockNode {
        match role {
            Role::Grantor => RedlockNode::Master(Master {
                p: *params,
                expiry_clock: self.expiry_clock,
                key: None,
                refusing: false,
                hosts_resource: None,
                register: disk,
                node,
            }),
            _ => RedlockNode::Client(Client::new(self.clone(), *params)),
        }
    }
}

/// A Redlock node: a master or a client.
pub enum RedlockNode {
    Master(Master),
    Client(Client),
}

impl NodeLogic for RedlockNode {
    type Msg = Message;
    /// A master's disk holds the protected resource (when it hosts it), not its keys.
    type Disk = Register;

    fn on_start(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        match self {
            RedlockNode::Master(m) => m.on_start(cx, out),
            RedlockNode::Client(c) => c.acquire(cx, out),
        }
    }

    fn on_message(&mut self, cx: &mut Cx, from: NodeId, msg: Message, out: &mut Out<Message>) {
        match self {
            RedlockNode::Master(m) => m.on_message(cx, from, msg, out),
            RedlockNode::Client(c) => c.on_message(cx, from, msg, out),
        }
    }

    fn on_timer(&mut self, cx: &mut Cx, timer: TimerId, out: &mut Out<Message>) {
        match self {
            RedlockNode::Master(m) => {
                if timer == REFUSE_UNTIL {
                    m.refusing = false;
                }
            }
            RedlockNode::Client(c) => c.on_timer(cx, timer, out),
        }
    }

    fn check(&self, cx: &Cx, _request: Request) -> Option<Token> {
        match self {
            RedlockNode::Master(_) => None,
            RedlockNode::Client(c) => c.check(cx),
        }
    }

    fn on_request(&mut self, cx: &mut Cx, request: Request, token: Token, out: &mut Out<Message>) {
        if let RedlockNode::Client(_) = self {
            match request {
                Request::Read { .. } => out.report(Fact::Read { token }),
                Request::Write { .. } => {
                    out.report(Fact::WriteSent { token });
                    out.send(resource_host(cx), Message::Write { token });
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

    fn into_disk(self) -> Register {
        match self {
            RedlockNode::Master(m) => m.register,
            RedlockNode::Client(_) => Register::default(),
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

/// One Redis master.
pub struct Master {
    p: LeaseParams,
    expiry_clock: ClockKind,
    /// The key: (value, expiry on `expiry_clock`).
    key: Option<(u64, LocalTime)>,
    /// After a restart with `grantor_restart: Wait`: refuses every lock until a timer fires.
    refusing: bool,
    /// Whether this master hosts the resource (known at start).
    hosts_resource: Option<bool>,
    register: Register,
    node: NodeId,
}

impl Master {
    fn on_start(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        self.hosts_resource = Some(resource_host(cx) == self.node);
        if cx.restarted && self.p.grantor_restart == GrantorRestart::Wait {
            self.refusing = true;
            out.set_timer(REFUSE_UNTIL, ClockKind::Monotonic, cx.mono + self.p.lease);
        }
    }

    /// The key's value, if it is set and not expired now.
    fn live_key(&self, cx: &Cx) -> Option<u64> {
        self.key
            .filter(|&(_, expiry)| cx.read(self.expiry_clock) < expiry)
            .map(|(value, _)| value)
    }

    fn on_message(&mut self, cx: &mut Cx, from: NodeId, msg: Message, out: &mut Out<Message>) {
        let expiry = cx.read(self.expiry_clock) + self.p.lease;
        match msg {
            // Redis speaks over TCP, which delivers a command once: a copy the network
            // duplicated is not seen (a second `SET NX` would be refused and answered again).
            Message::Lock { .. } | Message::Extend { .. } | Message::Unlock { .. }
                if cx.duplicate => {}
            Message::Lock { value } => {
                let ok = !self.refusing && self.live_key(cx).is_none();
                if ok {
                    self.key = Some((value, expiry));
                }
                let version = if self.hosts_resource == Some(true) {
                    self.register.version()
                } else {
                    0
                };
                out.send(from, Message::LockReply { value, ok, version });
            }
            Message::Extend { value, seq } => {
                let ok = self.live_key(cx) == Some(value);
                if ok {
                    self.key = Some((value, expiry));
                }
                out.send(from, Message::ExtendReply { value, seq, ok });
            }
            Message::Unlock { value } if self.key.is_some_and(|(v, _)| v == value) => {
                self.key = None;
            }
            Message::Write { token } if self.hosts_resource == Some(true) => {
                let fact = self.register.apply(from, token, false, cx.duplicate);
                out.report(fact);
            }
            _ => {}
        }
    }
}

/// A round of requests to every master (a lock attempt or an extension).
struct Round {
    /// Local monotonic send time.
    sent: LocalTime,
    /// Per node: 0 not asked or no answer yet, 1 granted, 2 refused.
    answers: Vec<u8>,
    granted: usize,
    answered: usize,
}

impl Round {
    fn new(nodes: usize) -> Round {
        Round {
            sent: LocalTime::from_ns(0),
            answers: vec![0; nodes],
            granted: 0,
            answered: 0,
        }
    }

    fn open(&mut self, sent: LocalTime) {
        self.sent = sent;
        self.answers.fill(0);
        self.granted = 0;
        self.answered = 0;
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
    attempt: Option<Round>,
    extension: Option<Round>,
    extension_seq: u64,
    /// The version of the resource reported by the masters of the current attempt.
    version: u64,
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
            attempt: None,
            extension: None,
            extension_seq: 0,
            version: 0,
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
        self.masters = cx.peers(Role::Grantor).count();
        self.value = self.new_value(cx);
        self.acquiring = true;
        self.version = 0;
        let nodes = cx.roles.len();
        let round = self.attempt.get_or_insert_with(|| Round::new(nodes));
        round.open(cx.mono);
        for m in cx.peers(Role::Grantor) {
            out.send(m, Message::Lock { value: self.value });
        }
        out.set_timer(
            DECIDE,
            ClockKind::Monotonic,
            cx.mono + self.r.request_timeout,
        );
    }

    /// The attempt is over (all answered, timed out, or one grant with `quorum: One`).
    fn decide(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        self.acquiring = false;
        out.cancel_timer(DECIDE);
        let round = self.attempt.as_ref().expect("an attempt is open");
        let elapsed = cx.mono - round.sent;
        let validity = self.p.lease - elapsed - self.drift;
        if round.granted >= self.needed() && validity.ns() > 0 {
            let token = cx.next_run_token();
            let deadline = round.sent + self.p.lease - self.drift;
            self.held = Some((token, deadline));
            out.report(Fact::Issued {
                token,
                to: cx.node,
                until: deadline,
            });
            out.report(Fact::Holding {
                token,
                version: self.version,
            });
            out.set_timer(DEADLINE, ClockKind::Monotonic, deadline);
            out.set_timer(RENEW, ClockKind::Monotonic, cx.mono + self.p.renew_every);
        } else {
            for m in cx.peers(Role::Grantor) {
                out.send(m, Message::Unlock { value: self.value });
            }
            self.retry_later(cx, out);
        }
    }

    fn retry_later(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        use rand::RngExt;
        let most = self.p.retry_every.ns().max(2);
        let delay = cx.rng.random_range(most / 2..=most);
        out.set_timer(
            RETRY,
            ClockKind::Monotonic,
            cx.mono + LocalDur::from_ns(delay),
        );
    }

    fn on_message(&mut self, cx: &mut Cx, from: NodeId, msg: Message, out: &mut Out<Message>) {
        match msg {
            Message::LockReply { value, ok, version } if self.acquiring && value == self.value => {
                let round = self.attempt.as_mut().expect("an attempt is open");
                round.answer(from, ok);
                self.version = self.version.max(version);
                let quorum_one = self.r.quorum == RedlockQuorum::One && round.granted >= 1;
                if quorum_one || round.answered == self.masters {
                    self.decide(cx, out);
                }
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

    fn on_timer(&mut self, cx: &mut Cx, timer: TimerId, out: &mut Out<Message>) {
        match timer {
            RETRY if self.held.is_none() && !self.acquiring => self.acquire(cx, out),
            DECIDE if self.acquiring => self.decide(cx, out),
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
    use crate::strategy::Action;

    const S: i64 = 1_000_000_000;

    fn redlock() -> Redlock {
        Redlock::new(
            10_000,
            LocalDur::from_ms(2),
            LocalDur::from_ms(50),
            ClockKind::Monotonic,
            RedlockQuorum::Majority,
            String::new(),
        )
    }

    fn params() -> LeaseParams {
        LeaseParams {
            lease: LocalDur::from_secs(10),
            renew_every: LocalDur::from_secs(3),
            retry_every: LocalDur::from_secs(1),
            grantor_restart: GrantorRestart::Wait,
            fencing: false,
        }
    }

    /// Node 0 is a client, nodes 1 and 2 masters: node 1, the first master, hosts the resource.
    const ROLES: &[Role] = &[Role::Contender, Role::Grantor, Role::Grantor];

    fn master(node: NodeId) -> RedlockNode {
        redlock().node_logic(node, Role::Grantor, &params(), Register::default())
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

    fn lock_reply(given: &Out<Message>) -> (bool, u64) {
        given
            .actions()
            .iter()
            .find_map(|e| match e {
                Action::Send {
                    msg: Message::LockReply { ok, version, .. },
                    ..
                } => Some((*ok, *version)),
                _ => None,
            })
            .expect("a LockReply")
    }

    #[test]
    fn the_first_master_hosts_the_resource_keeps_it_and_reports_its_version() {
        let (mut host, mut other) = (master(1), master(2));
        call(&mut host, 1, 0, |m, cx, out| m.on_start(cx, out));
        call(&mut other, 2, 0, |m, cx, out| m.on_start(cx, out));
        // Two writes from the client: the host applies them, the other master ignores them.
        for _ in 0..2 {
            let w = |m: &mut RedlockNode, cx: &mut Cx, out: &mut Out<Message>| {
                m.on_message(cx, 0, Message::Write { token: 1 }, out)
            };
            let applied = call(&mut host, 1, 0, w);
            assert!(matches!(
                applied.facts(),
                [Fact::WriteApplied { writer: 0, .. }]
            ));
            let ignored = call(&mut other, 2, 0, w);
            assert!(ignored.actions().is_empty() && ignored.facts().is_empty());
        }
        // A lock reply carries the resource's version from the host, 0 from the others.
        let lock = |m: &mut RedlockNode, cx: &mut Cx, out: &mut Out<Message>| {
            m.on_message(cx, 0, Message::Lock { value: 7 }, out)
        };
        assert_eq!(lock_reply(&call(&mut host, 1, 0, lock)), (true, 2));
        assert_eq!(lock_reply(&call(&mut other, 2, 0, lock)), (true, 0));
        // The resource survives the host's crash.
        assert_eq!(host.into_disk().version(), 2);
    }

    #[test]
    fn a_key_is_live_until_its_expiry_and_not_at_it() {
        // Locked at 0 with T = 10 s: at 10 s - 1 ns another lock fails, at 10 s it succeeds.
        let mut m = master(1);
        call(&mut m, 1, 0, |m, cx, out| m.on_start(cx, out));
        let lock = |value| {
            move |m: &mut RedlockNode, cx: &mut Cx, out: &mut Out<Message>| {
                m.on_message(cx, 0, Message::Lock { value }, out)
            }
        };
        assert!(lock_reply(&call(&mut m, 1, 0, lock(1))).0);
        assert!(!lock_reply(&call(&mut m, 1, 10 * S - 1, lock(2))).0);
        assert!(lock_reply(&call(&mut m, 1, 10 * S, lock(3))).0);
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
