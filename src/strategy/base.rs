//! The base single-grantor lease protocol (SPEC 2.5), parameterised by [`Rules`].
//!
//! The grantor keeps a FIFO of pending acquirers (a retry keeps its place and replaces its request
//! id), frees the lease when its monotonic clock reaches the last grant or renewal + T + grantor
//! margin, and grants with a new token and the register's version. A contender acquires, holds
//! until its own deadline on its own clock, renews every `renew_every`, and lets go on its
//! deadline or a `Reject`. Late grants and acks are ignored by a node that has let go. Duplicated
//! messages are harmless: a grant or ack repeats what the holder has, and a duplicated `Renew`
//! is recognised by its request id and renews once.

use super::{Belief, Cx, Effect, LeaseParams, NodeLogic, Out, Rules, Strategy, TimerId};
use crate::clock::ClockKind;
use crate::msg::{Message, NodeId, Token};
use crate::scenario::{GrantorRestart, LeaseStart, Role, Validity};
use crate::time::{Dur, LocalTime};

const RETRY: TimerId = 0;
const RENEW: TimerId = 1;
const DEADLINE: TimerId = 2;
const EXPIRY: TimerId = 3;
const RESTART_WAIT: TimerId = 4;

/// Every strategy of the SPEC 2.7 table: the base protocol with one set of rules.
pub struct BaseProtocol {
    rules: Rules,
    description: String,
}

impl BaseProtocol {
    pub fn new(rules: Rules, description: String) -> BaseProtocol {
        BaseProtocol { rules, description }
    }
}

impl Strategy for BaseProtocol {
    fn describe(&self) -> String {
        self.description.clone()
    }

    fn node_logic(&self, role: Role, params: &LeaseParams) -> Box<dyn NodeLogic> {
        match role {
            Role::Grantor => Box::new(Grantor::new(self.rules, *params)),
            Role::Contender => Box::new(Contender::new(self.rules, *params)),
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Pending {
    node: NodeId,
    req: u64,
    sent: LocalTime,
}

/// The lease authority.
struct Grantor {
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
    /// Local (monotonic) time at which the current lease is free.
    expiry: LocalTime,
    last_token: Token,
    /// After a restart, nothing is granted before this timer fires.
    waiting_out: bool,
}

impl Grantor {
    fn new(rules: Rules, p: LeaseParams) -> Grantor {
        Grantor {
            rules,
            p,
            pending: Vec::new(),
            granted_req: Vec::new(),
            holder: None,
            renewed_req: 0,
            expiry: LocalTime(i64::MIN),
            last_token: 0,
            waiting_out: false,
        }
    }

    fn term_end(&self, cx: &Cx) -> LocalTime {
        cx.mono + self.p.lease + self.rules.grantor_margin
    }

    fn granted_req(&self, node: NodeId) -> u64 {
        self.granted_req.get(node).copied().unwrap_or(0)
    }

    fn try_grant(&mut self, cx: &Cx, out: &mut Out) {
        if self.holder.is_some() || self.waiting_out || self.pending.is_empty() {
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
        out.set_timer(EXPIRY, ClockKind::Monotonic, self.expiry);
        out.send(
            next.node,
            Message::Grant {
                req: next.req,
                sent: next.sent,
                token,
                version: cx.register_version,
            },
        );
        out.push(Effect::Issued {
            token,
            to: next.node,
            until: self.expiry,
        });
    }
}

impl NodeLogic for Grantor {
    fn on_start(&mut self, cx: &Cx, out: &mut Out) {
        self.last_token = cx.last_token;
        if cx.restarted && self.p.grantor_restart == GrantorRestart::Wait {
            // It cannot know what it granted before the crash: wait out the longest term.
            self.waiting_out = true;
            out.set_timer(RESTART_WAIT, ClockKind::Monotonic, self.term_end(cx));
        }
    }

    fn on_message(&mut self, cx: &Cx, from: NodeId, msg: Message, out: &mut Out) {
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
                    out.set_timer(EXPIRY, ClockKind::Monotonic, self.expiry);
                    // A holder that renews has its grant: drop a retry it sent before that.
                    self.pending.retain(|p| p.node != from);
                    out.send(from, Message::RenewAck { token, req, sent });
                    out.push(Effect::Renewed {
                        token,
                        until: self.expiry,
                    });
                } else {
                    out.send(from, Message::Reject { token });
                }
            }
            _ => {}
        }
    }

    fn on_timer(&mut self, cx: &Cx, timer: TimerId, out: &mut Out) {
        match timer {
            EXPIRY if self.holder.is_some() && cx.mono >= self.expiry => {
                self.holder = None;
                self.try_grant(cx, out);
            }
            RESTART_WAIT => {
                self.waiting_out = false;
                self.try_grant(cx, out);
            }
            _ => {}
        }
    }

    fn check(&self, _cx: &Cx) -> Option<Token> {
        None
    }

    fn belief(&self) -> Belief {
        Belief::None
    }
}

/// A node that wants the lease and serves clients while it believes it holds it.
struct Contender {
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
}

impl Contender {
    fn new(rules: Rules, p: LeaseParams) -> Contender {
        Contender {
            rules,
            p,
            next_req: 0,
            token: None,
            deadline: LocalTime(i64::MIN),
            last_token: 0,
            renew_at: LocalTime(i64::MIN),
        }
    }

    fn clock(&self) -> ClockKind {
        self.rules.holder_clock
    }

    fn uses_clock(&self) -> bool {
        self.rules.validity == Validity::Clock
    }

    /// The end of a term that starts at `start` on the holder's clock.
    fn term_end(&self, start: LocalTime) -> LocalTime {
        match self.rules.validity {
            Validity::Clock => start + self.p.lease - self.rules.holder_margin,
            Validity::CachedBool => start + self.p.lease,
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

    fn acquire(&mut self, cx: &Cx, out: &mut Out) {
        let req = self.new_req(cx);
        out.send(
            cx.grantor,
            Message::Acquire {
                req,
                sent: cx.read(self.clock()),
            },
        );
        out.set_timer(RETRY, ClockKind::Monotonic, cx.mono + self.p.retry_every);
    }

    fn arm_renew(&mut self, at: LocalTime, out: &mut Out) {
        self.renew_at = at;
        out.set_timer(RENEW, ClockKind::Monotonic, at);
    }

    /// Makes sure the next renewal runs before the deadline: after renew_every, or halfway
    /// through what is left of the term when that is shorter (a grant answering an old retry,
    /// or a late ack that moved the deadline only a little past now).
    fn renew_before_deadline(&mut self, cx: &Cx, out: &mut Out) {
        let left = self.deadline - cx.read(self.clock());
        let first = if left < self.p.renew_every {
            Dur(left.0.max(0) / 2)
        } else {
            self.p.renew_every
        };
        let at = cx.mono + first;
        if at < self.renew_at {
            self.arm_renew(at, out);
        }
    }

    fn let_go(&mut self, cx: &Cx, out: &mut Out) {
        self.token = None;
        out.cancel_timer(RENEW);
        out.cancel_timer(DEADLINE);
        self.acquire(cx, out);
    }
}

impl NodeLogic for Contender {
    fn on_start(&mut self, cx: &Cx, out: &mut Out) {
        self.acquire(cx, out);
    }

    fn on_message(&mut self, cx: &Cx, _from: NodeId, msg: Message, out: &mut Out) {
        match msg {
            Message::Grant {
                sent,
                token,
                version,
                ..
            } => {
                if self.token.is_some() || token <= self.last_token {
                    return; // already holding, or a late or duplicated grant
                }
                self.last_token = token;
                let deadline = self.term_end(self.start_of(cx, sent));
                if cx.read(self.clock()) >= deadline {
                    return; // arrived after its own end: nothing to hold
                }
                self.token = Some(token);
                self.deadline = deadline;
                out.cancel_timer(RETRY);
                if self.uses_clock() {
                    out.set_timer(DEADLINE, self.clock(), deadline);
                }
                self.renew_at = LocalTime(i64::MAX); // no renewal pending yet
                self.renew_before_deadline(cx, out);
                out.push(Effect::Holding { token, version });
            }
            Message::RenewAck { token, sent, .. } if self.token == Some(token) => {
                let deadline = self.term_end(self.start_of(cx, sent));
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
            Message::Reject { token } if self.token == Some(token) => self.let_go(cx, out),
            _ => {}
        }
    }

    fn on_timer(&mut self, cx: &Cx, timer: TimerId, out: &mut Out) {
        match timer {
            RETRY if self.token.is_none() => self.acquire(cx, out),
            RENEW => {
                let Some(token) = self.token else { return };
                let now = cx.read(self.clock());
                if now >= self.deadline {
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
                    cx.grantor,
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
    use crate::scenario::StrategySpec;

    const MS: i64 = 1_000_000;

    fn holder() -> Contender {
        let spec = StrategySpec::TwoSided {
            holder_margin: Dur::from_ms(50),
            grantor_margin: Dur::ZERO,
        };
        let p = LeaseParams {
            lease: Dur::from_secs(10),
            renew_every: Dur::from_secs(3),
            retry_every: Dur::from_secs(1),
            grantor_restart: GrantorRestart::Wait,
        };
        Contender::new(Rules::of(&spec), p)
    }

    fn cx(mono_ms: i64) -> Cx {
        Cx {
            node: 1,
            grantor: 0,
            mono: LocalTime(mono_ms * MS),
            wall: LocalTime(mono_ms * MS),
            restarted: false,
            incarnation: 0,
            last_token: 0,
            register_version: 0,
        }
    }

    fn renewals_armed(out: &mut Out) -> Vec<i64> {
        out.drain()
            .filter_map(|e| match e {
                Effect::SetTimer {
                    timer: RENEW, at, ..
                } => Some(at.0 / MS),
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
        // Granted at 2 ms for the Acquire sent at 0: deadline 0 + 10 s - 50 ms = 9.95 s, first
        // renewal after renew_every, at 3.002 s.
        let grant = Message::Grant {
            req: 1,
            sent: LocalTime(0),
            token: 1,
            version: 0,
        };
        h.on_message(&cx(2), 0, grant, &mut out);
        assert_eq!(renewals_armed(&mut out), vec![3_002]);
        // The renewal sent at 3.002 s is answered late; meanwhile a pause holds everything and
        // the renewal timer of 6.002 s runs at 11 s, past the 9.95 s deadline: nothing is sent,
        // and the next renewal is armed at 11 + 3 = 14 s.
        h.on_timer(&cx(11_000), RENEW, &mut out);
        assert!(!out
            .as_slice()
            .iter()
            .any(|e| matches!(e, Effect::Send { .. })));
        assert_eq!(renewals_armed(&mut out), vec![14_000]);
        // The ack for the renewal sent at 3.002 s arrives at 11 s: deadline 3.002 + 9.95 =
        // 12.952 s, 1.952 s ahead, less than renew_every: renew halfway, at 11 + 0.976 s.
        let ack = Message::RenewAck {
            token: 1,
            req: 2,
            sent: LocalTime(3_002 * MS),
        };
        h.on_message(&cx(11_000), 0, ack, &mut out);
        assert_eq!(renewals_armed(&mut out), vec![11_976]);
        assert_eq!(
            h.belief(),
            Belief::Until {
                token: 1,
                clock: ClockKind::Monotonic,
                deadline: LocalTime(12_952 * MS)
            }
        );
    }
}
