//! The base single-grantor lease protocol, parameterised by [`Rules`]; with
//! [`Expiry::TrueTime`] it is also the `TrueTime` lease.
//!
//! The grantor keeps a FIFO of pending acquirers (a retry keeps its place and replaces its request
//! id), frees the lease when its monotonic clock reaches the last grant or renewal + T + grantor
//! margin, and grants with a new token and the register's values. A contender acquires, holds
//! until its own deadline on its own clock, renews every `renew_every`, and lets go on its
//! deadline or a `Reject`. Late grants and acks are ignored by a node that has let go. Duplicated
//! messages are harmless: a grant or ack repeats what the holder has, and a duplicated `Renew`
//! is recognised by its request id and renews (or is refused) once. (The protocol assumes no
//! transport that drops copies, so each side keys what it has answered by what messages carry.) The grantor also hosts the protected
//! register; it and the last token issued are on its disk and survive a crash.
//!
//! Under TrueTime the grantor's clock is TT.now(): a grant or renewal ends at E =
//! TT.now().latest + T, sent with it; the lease is free, and a restarted grantor may grant,
//! once TT.now().earliest passes E (a timer on the earliest bound, re-armed when a sync moved
//! the bound back before it was handled). The holder's deadline is E - holder_margin on its
//! TT.now().latest.

pub mod msg;
pub mod settings;

use super::{
    Belief, Beliefs, Cx, Expiry, Fact, LeaseParams, LeaseStart, NodeLogic, Out, Protocol, Register,
    Request, Rules, Store, Thread, TimerId, Validity,
};
use crate::clock::ClockKind;
use crate::msg::{NodeId, Token};
use crate::scenario::{GrantorRestart, Role, Scenario};
use crate::strategy::roles::{Grantors, LockServiceRoles};
use crate::time::{LocalDur, LocalTime};
pub use msg::Message;

const RETRY: TimerId = 0;
const RENEW: TimerId = 1;
const DEADLINE: TimerId = 2;
const EXPIRY: TimerId = 3;
const RESTART_WAIT: TimerId = 4;

/// Every strategy in the table of `strategy::rules`: the base protocol with one set of rules.
pub struct BaseProtocol {
    rules: Rules,
    description: String,
}

impl BaseProtocol {
    pub fn new(rules: Rules, description: String) -> BaseProtocol {
        BaseProtocol { rules, description }
    }
}

impl Protocol for BaseProtocol {
    type Logic = BaseNode;

    fn describe(&self) -> String {
        self.description.clone()
    }

    fn check(&self, scenario: &Scenario) -> Vec<String> {
        let protocol = match self.rules.expiry {
            Expiry::OwnClocks => "the base protocol",
            Expiry::TrueTime => "TrueTime",
        };
        let mut problems = LockServiceRoles {
            protocol,
            grantors: Grantors::ExactlyOne,
            grantor_is: "",
            contender_is: "",
        }
        .check(scenario);
        if self.rules.expiry == Expiry::TrueTime && scenario.clocks.uncertainty.is_none() {
            problems.push(
                "clocks.uncertainty: TrueTime needs clocks that know their error, e.g. \
                 clocks: (uncertainty: (base: \"1ms\", growth_ppm: 200.0, sync_every: \"30s\"))"
                    .to_string(),
            );
        }
        problems
    }

    fn renewal_loop(&self, role: Role) -> Option<&'static str> {
        (role == Role::Contender).then_some("the acquire and renew loop")
    }

    fn node_logic(&self, _node: NodeId, role: Role, params: &LeaseParams, disk: Disk) -> BaseNode {
        match role {
            Role::Grantor => BaseNode::Grantor(Grantor::new(self.rules, *params, disk)),
            _ => BaseNode::Contender(Contender::new(self.rules, *params)),
        }
    }
}

/// What the grantor keeps across a crash.
#[derive(Clone, Debug, Default)]
pub struct Disk {
    /// The highest token it has issued: tokens keep increasing after a restart.
    last_token: Token,
    /// The protected register it hosts.
    register: Register,
}

/// A node of the base protocol.
pub enum BaseNode {
    Grantor(Grantor),
    Contender(Contender),
}

impl NodeLogic for BaseNode {
    type Msg = Message;
    type Disk = Disk;

    fn on_start(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        match self {
            BaseNode::Grantor(g) => g.on_start(cx, out),
            // `lease.initial_leader` names another contender: this one's first Acquire waits a
            // retry period, so the named one's is first in the grantor's FIFO.
            BaseNode::Contender(c) if c.p.another_leads_first(cx) => {
                out.set_timer(RETRY, ClockKind::Monotonic, cx.mono + c.p.retry_every);
            }
            BaseNode::Contender(c) => c.acquire(cx, out),
        }
    }

    fn on_message(&mut self, cx: &mut Cx, from: NodeId, msg: Message, out: &mut Out<Message>) {
        match self {
            BaseNode::Grantor(g) => g.on_message(cx, from, msg, out),
            BaseNode::Contender(c) => c.on_message(cx, msg, out),
        }
    }

    fn on_timer(&mut self, cx: &mut Cx, timer: TimerId, out: &mut Out<Message>) {
        match self {
            BaseNode::Grantor(g) => g.on_timer(cx, timer, out),
            BaseNode::Contender(c) => c.on_timer(cx, timer, out),
        }
    }

    fn check(&self, cx: &Cx, _request: Request) -> Option<Token> {
        match self {
            BaseNode::Grantor(_) => None,
            BaseNode::Contender(c) => c.check(cx),
        }
    }

    /// A grantor serves nothing; a contender with no token has nothing to act under.
    fn refuses_whatever_the_time(&self, _request: Request) -> bool {
        match self {
            BaseNode::Grantor(_) => true,
            BaseNode::Contender(c) => c.token.is_none(),
        }
    }

    fn on_request(&mut self, cx: &mut Cx, request: Request, token: Token, out: &mut Out<Message>) {
        if let BaseNode::Contender(c) = self {
            c.on_request(cx, request, token, out);
        }
    }

    /// A contender's renewal loop sends its Acquire and Renew messages (the RETRY and RENEW
    /// timers) and takes their answers; its worker serves requests, writes, and lets go at the
    /// deadline its own clock check reads.
    fn thread_of_timer(&self, timer: TimerId) -> Thread {
        match (self, timer) {
            (BaseNode::Contender(_), RETRY | RENEW) => Thread::Renewal,
            _ => Thread::Worker,
        }
    }

    fn thread_of_message(&self, msg: &Message) -> Thread {
        match (self, msg) {
            (
                BaseNode::Contender(_),
                Message::Grant { .. } | Message::RenewAck { .. } | Message::Reject { .. },
            ) => Thread::Renewal,
            _ => Thread::Worker,
        }
    }

    fn beliefs(&self) -> Beliefs {
        match self {
            BaseNode::Grantor(_) => Beliefs::NONE,
            BaseNode::Contender(c) => Beliefs::both(c.belief()),
        }
    }

    fn into_disk(self) -> Disk {
        match self {
            BaseNode::Grantor(g) => Disk {
                last_token: g.last_token,
                register: g.register,
            },
            BaseNode::Contender(_) => Disk::default(),
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Pending {
    node: NodeId,
    req: u64,
    sent: LocalTime,
}

/// The lease authority, and the host of the protected register.
pub struct Grantor {
    rules: Rules,
    p: LeaseParams,
    /// Pending requesters in order of their first request.
    pending: Vec<Pending>,
    /// Per node, the request id its last grant answered; older retries are ignored.
    granted_req: Vec<u64>,
    holder: Option<(NodeId, Token)>,
    /// The newest renewal request of the current holder already honoured: a duplicated
    /// `Renew` (same id) is ignored, so one request renews once.
    renewed_req: u64,
    /// Per node, the newest renewal request refused: a duplicated `Renew` (same id) of a lease
    /// that is not the current one is refused once.
    rejected_req: Vec<u64>,
    /// Local (monotonic) time at which the current lease is free.
    expiry: LocalTime,
    last_token: Token,
    /// After a restart, nothing is granted before the grantor's clock passes this.
    waiting_out: Option<LocalTime>,
    register: Register,
}

impl Grantor {
    fn new(rules: Rules, p: LeaseParams, disk: Disk) -> Grantor {
        Grantor {
            rules,
            p,
            pending: Vec::new(),
            granted_req: Vec::new(),
            holder: None,
            renewed_req: 0,
            rejected_req: Vec::new(),
            expiry: LocalTime::from_ns(i64::MIN),
            last_token: disk.last_token,
            waiting_out: None,
            register: disk.register,
        }
    }

    /// The end of a term granted or renewed now, on the grantor's clock: under TrueTime the
    /// absolute expiry E the holder is told.
    fn term_end(&self, cx: &Cx) -> LocalTime {
        match self.rules.expiry {
            Expiry::OwnClocks => cx.mono + self.p.lease + self.rules.grantor_margin,
            Expiry::TrueTime => cx.tt.latest + self.p.lease,
        }
    }

    /// True once the grantor's clock has passed `end`: it may grant again.
    fn past(&self, cx: &Cx, end: LocalTime) -> bool {
        match self.rules.expiry {
            Expiry::OwnClocks => cx.mono >= end,
            Expiry::TrueTime => cx.tt.earliest > end,
        }
    }

    /// The clock and reading at which the grantor's clock first passes `end`.
    fn free_at(&self, end: LocalTime) -> (ClockKind, LocalTime) {
        match self.rules.expiry {
            Expiry::OwnClocks => (ClockKind::Monotonic, end),
            Expiry::TrueTime => (ClockKind::TtEarliest, end + LocalDur::from_ns(1)),
        }
    }

    /// Arms `timer` for the first instant the grantor's clock passes `end`.
    fn wake_past(&self, timer: TimerId, end: LocalTime, out: &mut Out<Message>) {
        let (clock, at) = self.free_at(end);
        out.set_timer(timer, clock, at);
    }

    fn granted_req(&self, node: NodeId) -> u64 {
        self.granted_req.get(node).copied().unwrap_or(0)
    }

    fn try_grant(&mut self, cx: &Cx, out: &mut Out<Message>) {
        if self.holder.is_some() || self.waiting_out.is_some() || self.pending.is_empty() {
            return;
        }
        let next = self.pending.remove(0);
        self.last_token += 1;
        let token = self.last_token;
        self.holder = Some((next.node, token));
        self.renewed_req = 0;
        if self.granted_req.len() <= next.node {
            self.granted_req.resize(next.node + 1, 0);
        }
        self.granted_req[next.node] = next.req;
        self.expiry = self.term_end(cx);
        self.wake_past(EXPIRY, self.expiry, out);
        out.send(
            next.node,
            Message::Grant {
                req: next.req,
                sent: next.sent,
                token,
                values: self.register.values().clone(),
                expiry: self.expiry,
            },
        );
        let (clock, until) = self.free_at(self.expiry);
        out.report(Fact::IssuedOn {
            token,
            to: next.node,
            clock,
            until,
        });
    }
}

impl Grantor {
    fn on_start(&mut self, cx: &Cx, out: &mut Out<Message>) {
        if cx.restarted && self.p.grantor_restart == GrantorRestart::Wait {
            // It cannot know what it granted before the crash: wait out the longest term.
            let end = self.term_end(cx);
            self.waiting_out = Some(end);
            self.wake_past(RESTART_WAIT, end, out);
        }
    }

    fn on_message(&mut self, cx: &Cx, from: NodeId, msg: Message, out: &mut Out<Message>) {
        match msg {
            Message::Acquire { req, sent } => {
                if req <= self.granted_req(from) {
                    return; // a retry older than the request already granted
                }
                match self.pending.iter_mut().find(|p| p.node == from) {
                    Some(p) => {
                        p.req = req;
                        p.sent = sent;
                    }
                    None => self.pending.push(Pending {
                        node: from,
                        req,
                        sent,
                    }),
                }
                self.try_grant(cx, out);
            }
            Message::Renew { token, req, sent } => {
                if self.holder == Some((from, token)) {
                    if req <= self.renewed_req {
                        return; // a duplicate of a renewal already honoured (and answered)
                    }
                    self.renewed_req = req;
                    self.expiry = self.term_end(cx);
                    self.wake_past(EXPIRY, self.expiry, out);
                    // A holder that renews has its grant: drop a retry it sent before that.
                    self.pending.retain(|p| p.node != from);
                    let expiry = self.expiry;
                    out.send(
                        from,
                        Message::RenewAck {
                            token,
                            req,
                            sent,
                            expiry,
                        },
                    );
                    let (clock, until) = self.free_at(expiry);
                    out.report(Fact::RenewedOn {
                        token,
                        clock,
                        until,
                    });
                } else {
                    if self.rejected_req.len() <= from {
                        self.rejected_req.resize(from + 1, 0);
                    }
                    if req <= self.rejected_req[from] {
                        return; // a duplicate of a renewal already refused
                    }
                    self.rejected_req[from] = req;
                    out.send(from, Message::Reject { token });
                }
            }
            Message::Write { token, key, value } => {
                let write = (from, token, (key, value));
                let (fencing, duplicate) = (self.p.fencing, cx.duplicate);
                (self.register).serve(out, write, fencing, duplicate, Message::WriteAck);
            }
            _ => {}
        }
    }

    fn on_timer(&mut self, cx: &Cx, timer: TimerId, out: &mut Out<Message>) {
        // A timer on TT.now().earliest that fell due during a pause may be handled after a sync
        // moved the bound back: then it is not yet past, and waits again.
        match timer {
            EXPIRY if self.holder.is_some() => {
                if self.past(cx, self.expiry) {
                    self.holder = None;
                    self.try_grant(cx, out);
                } else {
                    self.wake_past(EXPIRY, self.expiry, out);
                }
            }
            RESTART_WAIT => match self.waiting_out {
                Some(end) if !self.past(cx, end) => self.wake_past(RESTART_WAIT, end, out),
                _ => {
                    self.waiting_out = None;
                    self.try_grant(cx, out);
                }
            },
            _ => {}
        }
    }
}

/// A node that wants the lease and serves clients while it believes it holds it.
pub struct Contender {
    rules: Rules,
    p: LeaseParams,
    next_req: u64,
    /// The lease held, if any.
    token: Option<Token>,
    /// Holder-clock time at which the lease ends (for `CachedBool`: start + T, seen by renewals).
    deadline: LocalTime,
    /// The highest token ever accepted: a duplicate or late grant is ignored.
    last_token: Token,
    /// Monotonic time at which the pending renewal runs (while holding, one is always pending).
    renew_at: LocalTime,
    /// Its copy of the register: the values its last grant carried, and its own writes the
    /// register answered since.
    copy: Store,
}

impl Contender {
    fn new(rules: Rules, p: LeaseParams) -> Contender {
        Contender {
            rules,
            p,
            next_req: 0,
            token: None,
            deadline: LocalTime::from_ns(i64::MIN),
            last_token: 0,
            renew_at: LocalTime::from_ns(i64::MIN),
            copy: Store::default(),
        }
    }

    fn clock(&self) -> ClockKind {
        self.rules.holder_clock
    }

    fn uses_clock(&self) -> bool {
        self.rules.validity == Validity::Clock
    }

    /// True when nothing but a crash clears the holder's bool (`Validity::Unchecked`).
    fn unchecked(&self) -> bool {
        self.rules.validity == Validity::Unchecked
    }

    /// The end of a term that starts at `start` on the holder's clock.
    fn term_end(&self, start: LocalTime) -> LocalTime {
        match self.rules.validity {
            Validity::Clock => start + self.p.lease - self.rules.holder_margin,
            Validity::CachedBool | Validity::Unchecked => start + self.p.lease,
        }
    }

    /// The holder's deadline for an answer to a request sent at `sent` (under TrueTime: that
    /// grants until E = `expiry`).
    fn deadline_of(&self, cx: &Cx, sent: LocalTime, expiry: LocalTime) -> LocalTime {
        match self.rules.expiry {
            Expiry::OwnClocks => self.term_end(self.start_of(cx, sent)),
            Expiry::TrueTime => expiry - self.rules.holder_margin,
        }
    }

    /// Where the term starts for an answer to a request sent at `sent`.
    fn start_of(&self, cx: &Cx, sent: LocalTime) -> LocalTime {
        match self.rules.lease_start {
            LeaseStart::OnSend => sent,
            LeaseStart::OnReceive => cx.read(self.clock()),
        }
    }

    /// A fresh request id, larger than any this node sent in an earlier life: the grantor
    /// ignores ids at or below the last one it granted, so ids must not restart from 1.
    fn new_req(&mut self, cx: &Cx) -> u64 {
        self.next_req += 1;
        ((cx.incarnation as u64) << 40) | self.next_req
    }

    /// The grantor (the protocol's check makes sure there is one).
    fn grantor(cx: &Cx) -> NodeId {
        cx.peers(Role::Grantor)
            .next()
            .expect("checked: one grantor")
    }

    fn acquire(&mut self, cx: &Cx, out: &mut Out<Message>) {
        out.report(Fact::Seeking);
        let req = self.new_req(cx);
        out.send(
            Self::grantor(cx),
            Message::Acquire {
                req,
                sent: cx.read(self.clock()),
            },
        );
        out.set_timer(RETRY, ClockKind::Monotonic, cx.mono + self.p.retry_every);
    }

    fn arm_renew(&mut self, at: LocalTime, out: &mut Out<Message>) {
        self.renew_at = at;
        out.set_timer(RENEW, ClockKind::Monotonic, at);
    }

    /// Makes sure the next renewal runs before the deadline: after renew_every, or halfway
    /// through what is left of the term when that is shorter (a grant answering an old retry,
    /// or a late ack that moved the deadline only a little past now).
    fn renew_before_deadline(&mut self, cx: &Cx, out: &mut Out<Message>) {
        let left = self.deadline - cx.read(self.clock());
        // At exactly renew_every left, renewing after renew_every would renew on the deadline
        // itself, too late to send anything: halve then too.
        let first = if left <= self.p.renew_every {
            LocalDur::from_ns(left.ns().max(0) / 2)
        } else {
            self.p.renew_every
        };
        let at = cx.mono + first;
        if at < self.renew_at {
            self.arm_renew(at, out);
        }
    }

    fn let_go(&mut self, cx: &Cx, out: &mut Out<Message>) {
        self.token = None;
        out.cancel_timer(RENEW);
        out.cancel_timer(DEADLINE);
        self.acquire(cx, out);
    }
}

impl Contender {
    fn on_message(&mut self, cx: &Cx, msg: Message, out: &mut Out<Message>) {
        match msg {
            Message::Grant {
                sent,
                token,
                values,
                expiry,
                ..
            } => {
                if self.token.is_some() || token <= self.last_token {
                    return; // already holding, or a late or duplicated grant
                }
                self.last_token = token;
                let deadline = self.deadline_of(cx, sent, expiry);
                if cx.read(self.clock()) >= deadline && !self.unchecked() {
                    return; // arrived after its own end: nothing to hold
                }
                self.token = Some(token);
                self.deadline = deadline;
                out.cancel_timer(RETRY);
                if self.uses_clock() {
                    out.set_timer(DEADLINE, self.clock(), deadline);
                }
                self.renew_at = LocalTime::from_ns(i64::MAX); // no renewal pending yet
                self.renew_before_deadline(cx, out);
                self.copy = values;
                out.report(Fact::Holding { token });
            }
            Message::RenewAck {
                token,
                sent,
                expiry,
                ..
            } if self.token == Some(token) => {
                let deadline = self.deadline_of(cx, sent, expiry);
                if deadline > self.deadline {
                    self.deadline = deadline;
                    if self.uses_clock() {
                        out.set_timer(DEADLINE, self.clock(), deadline);
                    }
                    // A late ack can move a deadline that had (nearly) passed: the renewal
                    // pending may now come too late to keep the lease.
                    self.renew_before_deadline(cx, out);
                }
            }
            // Its copy takes its write once the register applied it.
            Message::WriteAck(ack) => {
                self.copy.merge(ack);
                out.report(Fact::WriteAcked {
                    key: ack.key,
                    value: ack.value,
                });
            }
            // An unchecked holder reads nothing from a Reject: its renewals go on, unanswered.
            Message::Reject { token } if self.token == Some(token) && !self.unchecked() => {
                self.let_go(cx, out)
            }
            _ => {}
        }
    }

    fn on_timer(&mut self, cx: &Cx, timer: TimerId, out: &mut Out<Message>) {
        match timer {
            RETRY if self.token.is_none() => self.acquire(cx, out),
            RENEW => {
                let Some(token) = self.token else { return };
                let now = cx.read(self.clock());
                if now >= self.deadline && !self.unchecked() {
                    if !self.uses_clock() {
                        self.let_go(cx, out); // the renewal loop is what clears the cached bool
                        return;
                    }
                    // A clock-checked lease lets go on its deadline timer, which may still wait
                    // behind a late ack that extends the lease: keep a renewal pending so that
                    // a holder revived by that ack goes on renewing.
                    self.arm_renew(cx.mono + self.p.renew_every, out);
                    return;
                }
                let req = self.new_req(cx);
                out.send(
                    Self::grantor(cx),
                    Message::Renew {
                        token,
                        req,
                        sent: now,
                    },
                );
                self.arm_renew(cx.mono + self.p.renew_every, out);
            }
            DEADLINE if self.token.is_some() && cx.read(self.clock()) >= self.deadline => {
                self.let_go(cx, out)
            }
            _ => {}
        }
    }

    fn check(&self, cx: &Cx) -> Option<Token> {
        let token = self.token?;
        if !self.uses_clock() || cx.read(self.clock()) < self.deadline {
            Some(token)
        } else {
            None
        }
    }

    /// A request admitted under `token` takes effect: a read is served from the local copy, a
    /// write goes to the register at the grantor (and into the copy when the register answers).
    fn on_request(&mut self, cx: &Cx, request: Request, token: Token, out: &mut Out<Message>) {
        match request {
            Request::Read { key } => out.report(Fact::Read {
                token,
                value: self.copy.get(key),
            }),
            Request::Write { key, value } => {
                out.report(Fact::WriteSent { token });
                out.send(Self::grantor(cx), Message::Write { token, key, value });
            }
        }
    }

    fn belief(&self) -> Belief {
        match self.token {
            None => Belief::None,
            Some(token) if !self.uses_clock() => Belief::Bool { token },
            Some(token) => Belief::Until {
                token,
                clock: self.clock(),
                deadline: self.deadline,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::Action;

    const MS: i64 = 1_000_000;

    fn holder() -> Contender {
        let rules = Rules {
            holder_margin: LocalDur::from_ms(50),
            ..Rules::default()
        };
        let p = LeaseParams {
            lease: LocalDur::from_secs(10),
            renew_every: LocalDur::from_secs(3),
            retry_every: LocalDur::from_secs(1),
            grantor_restart: GrantorRestart::Wait,
            fencing: false,
            initial_leader: None,
        };
        Contender::new(rules, p)
    }

    const ROLES: &[Role] = &[Role::Grantor, Role::Contender];

    fn cx<'a>(mono_ms: i64, rng: &'a mut crate::rng::Rng, run_token: &'a mut Token) -> Cx<'a> {
        Cx {
            node: 1,
            roles: ROLES,
            mono: LocalTime::from_ns(mono_ms * MS),
            wall: LocalTime::from_ns(mono_ms * MS),
            tt: crate::strategy::TtNow::exact(LocalTime::from_ns(mono_ms * MS)),
            restarted: false,
            incarnation: 0,
            duplicate: false,
            rng,
            run_token,
            stamp: crate::strategy::Stamp::new(crate::time::SimTime::ZERO, 0),
        }
    }

    fn grantor() -> Grantor {
        let h = holder();
        Grantor::new(h.rules, h.p, Disk::default())
    }

    fn sends(out: &mut Out<Message>) -> Vec<(NodeId, Message)> {
        out.take()
            .0
            .into_iter()
            .filter_map(|e| match e {
                Action::Send { to, msg } => Some((to, msg)),
                _ => None,
            })
            .collect()
    }

    fn grant(token: Token, sent_ms: i64) -> Message {
        Message::Grant {
            req: 1,
            sent: LocalTime::from_ns(sent_ms * MS),
            token,
            values: Store::default(),
            expiry: LocalTime::from_ns(0),
        }
    }

    /// A holder of token 2 (granted at 2 ms for an Acquire sent at 0: deadline 9.95 s).
    fn holding_token_2(rng: &mut crate::rng::Rng, tok: &mut Token) -> Contender {
        let mut h = holder();
        let mut out = Out::default();
        h.on_message(&cx(2, rng, tok), grant(2, 0), &mut out);
        assert_eq!(h.check(&cx(2, rng, tok)), Some(2));
        h
    }

    /// Hands `f` the grantor's context (node 0 of a grantor and two contenders) when TT.now()
    /// reads [`earliest_ns`, `latest_ns`] (its wall clock in the middle).
    fn at_tt<R>(earliest_ns: i64, latest_ns: i64, f: impl FnOnce(&Cx) -> R) -> R {
        const THREE: &[Role] = &[Role::Grantor, Role::Contender, Role::Contender];
        let mid = LocalTime::from_ns((earliest_ns + latest_ns) / 2);
        crate::strategy::with_test_cx(0, THREE, mid, |cx| {
            cx.tt = crate::strategy::TtNow {
                earliest: LocalTime::from_ns(earliest_ns),
                latest: LocalTime::from_ns(latest_ns),
            };
            f(cx)
        })
    }

    /// The timers `out` arms: (timer, clock, at).
    fn armed(out: &Out<Message>) -> Vec<(TimerId, ClockKind, i64)> {
        out.actions()
            .iter()
            .filter_map(|a| match *a {
                Action::SetTimer { timer, clock, at } => Some((timer, clock, at.ns())),
                _ => None,
            })
            .collect()
    }

    /// A TrueTime grantor treats a term as over only once TT.now().earliest has passed its end
    /// E: Spanner's leader waits until TT.after(E), which the paper defines as
    /// TT.now().earliest > E (Corbett et al., "Spanner", OSDI 2012, sections 3 and 4.1.1: "before
    /// abdicating, a leader must wait until TT.after(smax)"). TT.now().latest past E only says
    /// E may have passed.
    ///
    /// By hand (T = 10 s, e = 5 ms): node 1's Acquire reaches the grantor when TT.now() =
    /// [0.995, 1.005] s: token 1 until E = latest + T = 11.005 s, the EXPIRY timer armed on
    /// TT.earliest at E + 1 ns = 11.005000001 s. Node 2's Acquire queues behind it. The timer
    /// is handled when (after a sync moved the bounds) TT.now() = [10.998, 11.008] s: latest
    /// is past E, earliest is not, so no grant, and the timer waits again for earliest >
    /// 11.005 s. At [11.005000001, 11.015000001] s the lease is free: token 2 goes to node 2
    /// until 11.015000001 + 10 = 21.015000001 s.
    #[test]
    fn a_truetime_grantor_frees_the_lease_once_earliest_passes_the_expiry() {
        let rules = Rules {
            expiry: Expiry::TrueTime,
            ..Rules::default()
        };
        let mut g = Grantor::new(rules, holder().p, Disk::default());
        let e = 5 * MS;
        let s = 1_000 * MS;
        let mut out = Out::default();
        at_tt(s - e, s + e, |cx| {
            let acquire = Message::Acquire {
                req: 1,
                sent: LocalTime::from_ns(s),
            };
            g.on_message(cx, 1, acquire, &mut out)
        });
        let end = 11_005 * MS;
        assert_eq!(armed(&out), [(EXPIRY, ClockKind::TtEarliest, end + 1)]);
        let issued = Fact::IssuedOn {
            token: 1,
            to: 1,
            clock: ClockKind::TtEarliest,
            until: LocalTime::from_ns(end + 1),
        };
        assert_eq!(out.facts(), [issued]);
        assert!(matches!(
            sends(&mut out)[..],
            [(1, Message::Grant { token: 1, expiry, .. })] if expiry.ns() == end
        ));
        at_tt(1_500 * MS - e, 1_500 * MS + e, |cx| {
            let acquire = Message::Acquire {
                req: 1,
                sent: LocalTime::from_ns(1_500 * MS),
            };
            g.on_message(cx, 2, acquire, &mut out)
        });
        assert!(sends(&mut out).is_empty());

        // Latest past E, earliest not: still held.
        at_tt(10_998 * MS, 11_008 * MS, |cx| {
            g.on_timer(cx, EXPIRY, &mut out)
        });
        assert_eq!(armed(&out), [(EXPIRY, ClockKind::TtEarliest, end + 1)]);
        assert!(sends(&mut out).is_empty());
        assert_eq!(g.holder, Some((1, 1)));

        // Earliest past E: free, and node 2 is granted.
        let (earliest, latest) = (end + 1, end + 1 + 2 * e);
        at_tt(earliest, latest, |cx| g.on_timer(cx, EXPIRY, &mut out));
        assert!(matches!(
            sends(&mut out)[..],
            [(2, Message::Grant { token: 2, expiry, .. })] if expiry.ns() == 21_015_000_001
        ));
        assert_eq!(g.holder, Some((2, 2)));
    }

    #[test]
    fn a_grant_with_exactly_renew_every_left_renews_halfway() {
        // Received at 7 s for an Acquire sent at 50 ms: deadline 0.05 + 9.95 = 10 s, 3 s ahead,
        // exactly renew_every. Renewing 3 s later would be on the deadline itself; halfway is
        // at 7 + 1.5 = 8.5 s.
        let mut h = holder();
        let mut out = Out::default();
        let mut rng = crate::rng::stream(0, crate::rng::Component::Node, 1);
        let mut tok = 0;
        h.on_message(&cx(7_000, &mut rng, &mut tok), grant(1, 50), &mut out);
        assert_eq!(renewals_armed(&mut out), vec![8_500]);
    }

    #[test]
    fn the_check_passes_before_the_deadline_and_not_at_it() {
        // Deadline 9.95 s: a request at 9.949999999 s is served, one at 9.95 s is not.
        let mut rng = crate::rng::stream(0, crate::rng::Component::Node, 1);
        let mut tok = 0;
        let h = holding_token_2(&mut rng, &mut tok);
        let mut at = |ns: i64| {
            let mut c = cx(0, &mut rng, &mut tok);
            c.mono = LocalTime::from_ns(ns);
            h.check(&c)
        };
        assert_eq!(at(9_950 * MS - 1), Some(2));
        assert_eq!(at(9_950 * MS), None);
    }

    #[test]
    fn only_a_node_with_nothing_to_act_under_refuses_whatever_the_time() {
        // A grantor and a contender with no token refuse whatever their clocks read; a holder
        // past its deadline refuses too, but only by its clock: the check must read it.
        let read = Request::Read { key: 0 };
        assert!(BaseNode::Grantor(grantor()).refuses_whatever_the_time(read));
        assert!(BaseNode::Contender(holder()).refuses_whatever_the_time(read));
        let mut rng = crate::rng::stream(0, crate::rng::Component::Node, 1);
        let mut tok = 0;
        let h = BaseNode::Contender(holding_token_2(&mut rng, &mut tok));
        assert!(!h.refuses_whatever_the_time(read));
        let past = cx(9_950, &mut rng, &mut tok);
        assert_eq!(h.check(&past, read), None);
    }

    #[test]
    fn messages_and_timers_about_another_lease_change_nothing() {
        // The holder of token 2 gets a late Reject and a late RenewAck of token 1 (its earlier
        // lease: the ack would move the deadline to 5 s + 9.95 s), and stale RETRY and DEADLINE
        // timers (the deadline is 9.95 s): it keeps token 2 and its deadline, and sends nothing.
        let mut rng = crate::rng::stream(0, crate::rng::Component::Node, 1);
        let mut tok = 0;
        let mut h = holding_token_2(&mut rng, &mut tok);
        let before = h.belief();
        let mut out = Out::default();
        let c = cx(5_000, &mut rng, &mut tok);
        h.on_message(&c, Message::Reject { token: 1 }, &mut out);
        let ack = Message::RenewAck {
            token: 1,
            req: 9,
            sent: LocalTime::from_ns(5_000 * MS),
            expiry: LocalTime::from_ns(0),
        };
        h.on_message(&c, ack, &mut out);
        h.on_timer(&c, RETRY, &mut out);
        h.on_timer(&c, DEADLINE, &mut out);
        assert_eq!(h.belief(), before);
        assert!(out.actions().is_empty() && out.facts().is_empty());
    }

    #[test]
    fn the_grantor_ignores_an_acquire_it_already_granted_and_an_early_expiry() {
        // Node 1 asks with request 5 and is granted token 1 until 10 s on the grantor's clock.
        let mut g = grantor();
        let mut out = Out::default();
        let mut rng = crate::rng::stream(0, crate::rng::Component::Node, 0);
        let mut tok = 0;
        let acquire = Message::Acquire {
            req: 5,
            sent: LocalTime::from_ns(0),
        };
        g.on_message(&cx(0, &mut rng, &mut tok), 1, acquire.clone(), &mut out);
        assert_eq!(g.holder, Some((1, 1)));
        // A duplicate of that request, or an older retry, does not queue node 1 again.
        g.on_message(&cx(1, &mut rng, &mut tok), 1, acquire, &mut out);
        let older = Message::Acquire {
            req: 4,
            sent: LocalTime::from_ns(0),
        };
        g.on_message(&cx(1, &mut rng, &mut tok), 1, older, &mut out);
        assert!(g.pending.is_empty());
        // A stale expiry timer before 10 s frees nothing.
        out.take();
        g.on_timer(&cx(9_999, &mut rng, &mut tok), EXPIRY, &mut out);
        assert_eq!(g.holder, Some((1, 1)));
        assert!(sends(&mut out).is_empty());
    }

    #[test]
    fn a_contender_asks_the_grantor_wherever_it_is_listed() {
        // Roles [Contender, Contender, Grantor]: node 0 sends its Acquire to node 2.
        let mut h = holder();
        let mut out = Out::default();
        let mut rng = crate::rng::stream(0, crate::rng::Component::Node, 0);
        let mut tok = 0;
        let mut c = cx(0, &mut rng, &mut tok);
        c.node = 0;
        c.roles = &[Role::Contender, Role::Contender, Role::Grantor];
        h.acquire(&c, &mut out);
        let to: Vec<NodeId> = sends(&mut out).into_iter().map(|(to, _)| to).collect();
        assert_eq!(to, [2]);
    }

    fn renewals_armed(out: &mut Out<Message>) -> Vec<i64> {
        out.take()
            .0
            .into_iter()
            .filter_map(|e| match e {
                Action::SetTimer {
                    timer: RENEW, at, ..
                } => Some(at.ns() / MS),
                _ => None,
            })
            .collect()
    }

    /// A holder whose renewal runs late (after a pause) past its own deadline sends nothing but
    /// keeps a renewal pending; a late ack that then moves the deadline to just past now brings
    /// that renewal forward, so the holder renews in time and keeps the lease.
    #[test]
    fn a_revived_holder_renews_before_its_deadline() {
        let mut h = holder();
        let mut out = Out::default();
        let mut rng = crate::rng::stream(0, crate::rng::Component::Node, 1);
        let mut tok = 0;
        // Granted at 2 ms for the Acquire sent at 0: deadline 0 + 10 s - 50 ms = 9.95 s, first
        // renewal after renew_every, at 3.002 s.
        let grant = Message::Grant {
            req: 1,
            sent: LocalTime::from_ns(0),
            token: 1,
            values: Store::default(),
            expiry: LocalTime::from_ns(0),
        };
        h.on_message(&cx(2, &mut rng, &mut tok), grant, &mut out);
        assert_eq!(renewals_armed(&mut out), vec![3_002]);
        // The renewal sent at 3.002 s is answered late; meanwhile a pause holds everything and
        // the renewal timer of 6.002 s runs at 11 s, past the 9.95 s deadline: nothing is sent,
        // and the next renewal is armed at 11 + 3 = 14 s.
        h.on_timer(&cx(11_000, &mut rng, &mut tok), RENEW, &mut out);
        let sent = |a: &Action<Message>| matches!(a, Action::Send { .. });
        assert!(!out.actions().iter().any(sent));
        assert_eq!(renewals_armed(&mut out), vec![14_000]);
        // The ack for the renewal sent at 3.002 s arrives at 11 s: deadline 3.002 + 9.95 =
        // 12.952 s, 1.952 s ahead, less than renew_every: renew halfway, at 11 + 0.976 s.
        let ack = Message::RenewAck {
            token: 1,
            req: 2,
            sent: LocalTime::from_ns(3_002 * MS),
            expiry: LocalTime::from_ns(0),
        };
        h.on_message(&cx(11_000, &mut rng, &mut tok), ack, &mut out);
        assert_eq!(renewals_armed(&mut out), vec![11_976]);
        assert_eq!(
            h.belief(),
            Belief::Until {
                token: 1,
                clock: ClockKind::Monotonic,
                deadline: LocalTime::from_ns(12_952 * MS)
            }
        );
    }
}
