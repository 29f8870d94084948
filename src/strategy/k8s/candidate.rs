//! A candidate (a `Contender`): client-go's `LeaderElector`, from `acquire` through `renew` to
//! losing the lease. One try is `tryAcquireOrRenew`: Get, compare, maybe Update; its answer
//! comes back as messages, so a try is a small state machine here. Every decision is timed on
//! the candidate's own monotonic clock; the wall clock only fills in renewTime.

use super::msg::{Identity, Lease, Message};
use super::K8sConfig;
use crate::clock::ClockKind;
use crate::msg::{NodeId, Token};
use crate::scenario::Role;
use crate::strategy::{Belief, Cx, Fact, LeaseParams, Out, Request, TimerId};
use crate::time::{LocalDur, LocalTime};

/// Not leading: the next try of the acquire loop falls due (and gives up one still unanswered).
const RETRY: TimerId = 0;
/// Leading, a renew cycle open: the poll ticker (every retry_period from the cycle's opening).
const TICK: TimerId = 1;
/// Leading, a renew cycle open: the cycle's end, open + renew_deadline.
const DEADLINE: TimerId = 2;
/// Leading, between cycles: the retry_period sleep after a success.
const SLEEP: TimerId = 3;

/// Where a try stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// Get sent, waiting for the record.
    Get,
    /// Update sent with this record, waiting for the answer.
    Update(Lease),
}

/// One `tryAcquireOrRenew` in flight.
#[derive(Clone, Copy, Debug)]
struct Try {
    req: u64,
    /// client-go's `now`: the monotonic and wall readings when the try began.
    /// When the try began, on the clock candidates time the record by.
    began_observing: LocalTime,
    began_wall: LocalTime,
    stage: Stage,
}

/// An open renew cycle.
#[derive(Clone, Copy, Debug)]
struct Cycle {
    /// When it opened (monotonic): ticks fall at open + k * retry_period, the end at open +
    /// renew_deadline.
    open: LocalTime,
    /// A tick fell due while a try was outstanding (Go's ticker keeps one): the next try starts
    /// as soon as that one fails.
    tick_missed: bool,
}

/// A candidate, leading or not.
pub struct Candidate {
    c: K8sConfig,
    p: LeaseParams,
    me: Identity,
    next_req: u64,
    current: Option<Try>,
    /// The record as last seen by a Get (or as written by this node's own successful Update),
    /// and when it was seen to change (on `observed_clock`, the monotonic clock unless the
    /// scenario says otherwise): client-go's observedRecord and observedTime.
    observed: Option<Lease>,
    observed_at: LocalTime,
    /// The token it leads under, while leading (until its renew loop gives up).
    leading: Option<Token>,
    /// The token its copy of the resource was last taken under, in this life: taking its own
    /// record back under the same token keeps the copy (nobody else held in between).
    copy_token: Option<Token>,
    cycle: Option<Cycle>,
    /// The acquire loop's current period, drawn when its try began.
    period: LocalDur,
}

impl Candidate {
    pub fn new(c: K8sConfig, p: LeaseParams, node: NodeId) -> Candidate {
        Candidate {
            c,
            p,
            me: Identity {
                node,
                incarnation: 0,
            },
            next_req: 0,
            current: None,
            observed: None,
            observed_at: LocalTime::from_ns(i64::MIN),
            leading: None,
            copy_token: None,
            cycle: None,
            period: LocalDur::ZERO,
        }
    }

    /// The node starts (again after a crash: then as a new identity, as client-go's
    /// `hostname_uuid` is new in every process).
    pub fn on_start(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        self.me = Identity {
            node: cx.node,
            incarnation: cx.incarnation,
        };
        self.acquire_try(cx, out);
    }

    fn server(cx: &Cx) -> NodeId {
        cx.peers(Role::Grantor)
            .next()
            .expect("checked: one API server")
    }

    /// retry_period * (1 + U[0, jitter_factor)), in whole nanoseconds from the node's stream.
    pub(super) fn jittered(&self, cx: &mut Cx) -> LocalDur {
        use rand::RngExt;
        let rp = self.c.retry_period.ns();
        let bound = (rp as i128 * self.c.jitter_ppm as i128 / 1_000_000) as i64;
        let jitter = if bound > 0 {
            cx.rng.random_range(0..bound)
        } else {
            0
        };
        LocalDur::from_ns(rp + jitter)
    }

    /// Begins a try: sends Get.
    fn begin_try(&mut self, cx: &Cx, out: &mut Out<Message>) {
        self.next_req += 1;
        let req = self.next_req;
        self.current = Some(Try {
            req,
            began_observing: cx.read(self.c.observed_clock),
            began_wall: cx.wall,
            stage: Stage::Get,
        });
        out.send(Self::server(cx), Message::Get { req });
    }

    /// A try of the acquire loop: the next one falls due a fresh jittered period later, and
    /// gives this one up if it is still unanswered then.
    fn acquire_try(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        self.period = self.jittered(cx);
        out.set_timer(RETRY, ClockKind::Monotonic, cx.mono + self.period);
        self.begin_try(cx, out);
    }

    pub fn on_message(&mut self, cx: &mut Cx, msg: Message, out: &mut Out<Message>) {
        let Some(t) = self.current else { return };
        match msg {
            Message::Record { req, rv, lease } if req == t.req && t.stage == Stage::Get => {
                if lease != self.observed {
                    self.observed = lease;
                    self.observed_at = cx.read(self.c.observed_clock);
                }
                let new = match lease {
                    None => Lease {
                        holder: self.me,
                        acquire_wall: t.began_wall,
                        renew_wall: t.began_wall,
                        duration: self.p.lease,
                        transitions: 0,
                    },
                    Some(l) if l.holder == self.me => Lease {
                        renew_wall: t.began_wall,
                        duration: self.p.lease,
                        ..l
                    },
                    Some(l) => {
                        if self.observed_at + l.duration > t.began_observing {
                            // Held by another, and not seen unchanged for its duration yet.
                            return self.try_failed(cx, out);
                        }
                        Lease {
                            holder: self.me,
                            acquire_wall: t.began_wall,
                            renew_wall: t.began_wall,
                            duration: self.p.lease,
                            transitions: l.transitions + 1,
                        }
                    }
                };
                self.current = Some(Try {
                    stage: Stage::Update(new),
                    ..t
                });
                let update = Message::Update {
                    req,
                    rv,
                    lease: new,
                };
                out.send(Self::server(cx), update);
            }
            Message::UpdateReply { req, ok, version } if req == t.req => {
                let Stage::Update(new) = t.stage else { return };
                if !ok {
                    return self.try_failed(cx, out);
                }
                self.current = None;
                self.observed = Some(new);
                self.observed_at = cx.read(self.c.observed_clock);
                let token = new.token();
                if self.leading != Some(token) {
                    if self.leading.is_none() {
                        out.cancel_timer(RETRY);
                    }
                    self.leading = Some(token);
                    if self.copy_token != Some(token) {
                        self.copy_token = Some(token);
                        out.report(Fact::Holding { token, version });
                    }
                }
                // The cycle (if one was open) succeeded; sleep retry_period before the next.
                self.cycle = None;
                out.cancel_timer(TICK);
                out.cancel_timer(DEADLINE);
                out.set_timer(SLEEP, ClockKind::Monotonic, cx.mono + self.c.retry_period);
            }
            _ => {}
        }
    }

    /// The current try failed (another holds the lease, or a Conflict).
    fn try_failed(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        self.current = None;
        if self.leading.is_none() {
            // JitterUntil is sliding: the period counts from the end of the try.
            out.set_timer(RETRY, ClockKind::Monotonic, cx.mono + self.period);
        } else if let Some(cycle) = &mut self.cycle {
            if cycle.tick_missed {
                cycle.tick_missed = false;
                self.begin_try(cx, out);
            }
        }
    }

    pub fn on_timer(&mut self, cx: &mut Cx, timer: TimerId, out: &mut Out<Message>) {
        match timer {
            RETRY if self.leading.is_none() => self.acquire_try(cx, out),
            SLEEP if self.leading.is_some() && self.cycle.is_none() => {
                // renew(): a cycle opens when the process runs it (after a pause: at resume).
                self.cycle = Some(Cycle {
                    open: cx.mono,
                    tick_missed: false,
                });
                out.set_timer(
                    DEADLINE,
                    ClockKind::Monotonic,
                    cx.mono + self.c.renew_deadline,
                );
                out.set_timer(TICK, ClockKind::Monotonic, cx.mono + self.c.retry_period);
                self.begin_try(cx, out);
            }
            TICK => {
                let Some(cycle) = &mut self.cycle else { return };
                let since = (cx.mono - cycle.open).ns();
                if since >= self.c.renew_deadline.ns() {
                    return; // the deadline is due at this instant: no try at it
                }
                let rp = self.c.retry_period.ns();
                let next = cycle.open + LocalDur::from_ns((since / rp + 1) * rp);
                out.set_timer(TICK, ClockKind::Monotonic, next);
                if self.current.is_some() {
                    cycle.tick_missed = true;
                } else {
                    self.begin_try(cx, out);
                }
            }
            DEADLINE if self.cycle.is_some() => {
                // The renew loop gives up: client-go cancels the leader's context. An Update
                // still unanswered is abandoned (a late success is not one).
                self.cycle = None;
                self.leading = None;
                self.current = None;
                out.cancel_timer(TICK);
                // Back to the acquire loop, as an application that runs the elector again.
                self.acquire_try(cx, out);
            }
            _ => {}
        }
    }

    pub fn check(&self) -> Option<Token> {
        self.leading
    }

    pub fn on_request(&self, cx: &Cx, request: Request, token: Token, out: &mut Out<Message>) {
        match request {
            Request::Read { .. } => out.report(Fact::Read { token }),
            Request::Write { .. } => {
                out.report(Fact::WriteSent { token });
                out.send(Self::server(cx), Message::Write { token });
            }
        }
    }

    pub fn belief(&self) -> Belief {
        match self.leading {
            Some(token) => Belief::Bool { token },
            None => Belief::None,
        }
    }
}
