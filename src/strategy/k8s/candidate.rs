//! A candidate (a `Contender`): client-go's `LeaderElector`, from `acquire` through `renew` to
//! losing the lease, releasing it and exiting. One try is `tryAcquireOrRenew`: the fast path's
//! Update, or Get, compare, maybe Update; its answers come back as messages, so a try is a small
//! state machine here, and so is `release()` (Get, then an Update with no holder). Every
//! decision is timed on the candidate's own monotonic clock; the wall clock only fills in
//! renewTime.

use super::msg::{Identity, Lease, Message};
use super::settings::ExpiryFrom;
use super::{K8sConfig, OnLost};
use crate::clock::ClockKind;
use crate::msg::{NodeId, Token};
use crate::scenario::Role;
use crate::strategy::{Belief, Cx, Fact, LeaseParams, Out, Request, Store, Thread, TimerId};
use crate::time::{LocalDur, LocalTime};

/// Not leading: the next try of the acquire loop falls due, a jittered period after the last
/// one ended.
const RETRY: TimerId = 0;
/// Leading, a renew cycle open: the poll ticker (every retry_period from the cycle's opening).
const TICK: TimerId = 1;
/// Leading, a renew cycle open: the cycle's end, open + renew_deadline.
const DEADLINE: TimerId = 2;
/// Leading, between cycles: the retry_period sleep after a success.
const SLEEP: TimerId = 3;
/// Exited: the process is started again.
const RESTART: TimerId = 4;
/// Releasing: `release()` gives up renew_deadline after it began.
const RELEASE_TIMEOUT: TimerId = 5;
/// A Get or Update is outstanding: its HTTP client gives up on it (sent + http_timeout).
const HTTP: TimerId = 6;

/// Which loop handles timer `timer` of a candidate: every timer of the elector (its tries, its
/// renew cycle, its release and its HTTP client) is its renewal goroutine's; only the process
/// restart is not.
pub(super) fn thread_of_timer(timer: TimerId) -> Thread {
    if timer == RESTART {
        Thread::Worker
    } else {
        Thread::Renewal
    }
}

/// ReleaseOnCancel's record: LeaseDurationSeconds 1, as client-go writes it.
const RELEASED_DURATION: LocalDur = LocalDur::from_secs(1);

/// Where a try stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// The fast path: Update sent with this record on the resourceVersion last seen, no Get.
    FastUpdate(Lease),
    /// Get sent, waiting for the record.
    Get,
    /// Update sent with this record, waiting for the answer.
    Update(Lease),
    /// `release()`: Get sent, for a fresh resourceVersion.
    ReleaseGet,
    /// `release()`: the Update with no holder sent, waiting for the answer.
    ReleaseUpdate(Lease),
}

/// What the process is doing apart from its tries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Life {
    /// Running the elector: acquiring, or leading while `leading` is set.
    Electing,
    /// Stopped leading, writing an empty holder before it goes on (ReleaseOnCancel).
    Releasing,
    /// Exited: nothing until it is started again.
    Exited,
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
    /// Its copy of the resource: the values the answer that made it leader under
    /// `copy_token` carried, and its own writes the API server answered since.
    copy: Store,
    cycle: Option<Cycle>,
    /// The acquire loop's current period, drawn when its try began.
    period: LocalDur,
    /// The resourceVersion of the record as last read or written (the lock object client-go
    /// keeps): what the fast path's Update carries.
    cached_rv: u64,
    life: Life,
}

impl Candidate {
    pub fn new(c: K8sConfig, p: LeaseParams, node: NodeId) -> Candidate {
        Candidate {
            c,
            p,
            me: Identity {
                node,
                incarnation: 0,
                process: 0,
            },
            next_req: 0,
            current: None,
            observed: None,
            observed_at: LocalTime::from_ns(i64::MIN),
            leading: None,
            copy_token: None,
            copy: Store::default(),
            cycle: None,
            period: LocalDur::ZERO,
            cached_rv: 0,
            life: Life::Electing,
        }
    }

    /// The node starts (again after a crash: then as a new identity, as client-go's
    /// `hostname_uuid` is new in every process). When `lease.initial_leader` names another
    /// candidate, this one's first process begins its acquire loop a jittered retry period
    /// late, as if the named one's process had started that much earlier (a rollout that
    /// starts one replica first): the named one's Create lands first, and this one's first
    /// Get finds it held. After a crash or an exit it tries at once, as ever.
    pub fn on_start(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        self.me = Identity {
            node: cx.node,
            incarnation: cx.incarnation,
            process: 0,
        };
        if self.p.another_leads_first(cx) {
            let late = self.jittered(cx);
            out.set_timer(RETRY, ClockKind::Monotonic, cx.mono + late);
            return;
        }
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

    /// The record it last observed is its own and, by its clock at `now`, still valid:
    /// client-go's `IsLeader() && isLeaseValid(now)`.
    fn own_valid_record(&self, now: LocalTime) -> Option<Lease> {
        self.observed
            .filter(|l| l.holder == Some(self.me) && self.observed_at + l.duration > now)
    }

    /// Begins a try: with the fast path on and its own record valid, an Update on the
    /// resourceVersion it last saw; otherwise a Get.
    fn begin_try(&mut self, cx: &Cx, out: &mut Out<Message>) {
        self.next_req += 1;
        let req = self.next_req;
        let began_observing = cx.read(self.c.observed_clock);
        let fast = self
            .own_valid_record(began_observing)
            .filter(|_| self.c.fast_path);
        let stage = match fast {
            Some(own) => {
                let lease = Lease {
                    renew_wall: cx.wall,
                    duration: self.p.lease,
                    ..own
                };
                let rv = self.cached_rv;
                self.request(cx, Message::Update { req, rv, lease }, out);
                Stage::FastUpdate(lease)
            }
            None => {
                self.request(cx, Message::Get { req }, out);
                Stage::Get
            }
        };
        self.current = Some(Try {
            req,
            began_observing,
            began_wall: cx.wall,
            stage,
        });
    }

    /// Sends request `msg` (a Get or an Update) to the API server, to fail if no answer comes
    /// within the HTTP client's timeout.
    fn request(&self, cx: &Cx, msg: Message, out: &mut Out<Message>) {
        out.send(Self::server(cx), msg);
        out.set_timer(HTTP, ClockKind::Monotonic, cx.mono + self.c.http_timeout);
    }

    /// A try of the acquire loop: the next one falls due a fresh jittered period (drawn now)
    /// after this one ends (JitterUntil is sliding).
    fn acquire_try(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        out.report(Fact::Seeking);
        self.period = self.jittered(cx);
        self.begin_try(cx, out);
    }

    /// The outstanding request of the current try failed: its HTTP client gave up, or the API
    /// server's host refused it. The fast path's Update falls back to the slow path's Get (as on
    /// any error); a Get or Update of the slow path fails the try; `release()` gives up.
    fn request_failed(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        let Some(t) = self.current else { return };
        match t.stage {
            Stage::FastUpdate(_) => {
                self.current = Some(Try {
                    stage: Stage::Get,
                    ..t
                });
                self.request(cx, Message::Get { req: t.req }, out);
            }
            Stage::Get | Stage::Update(_) => self.try_failed(cx, out),
            Stage::ReleaseGet | Stage::ReleaseUpdate(_) => self.released(cx, out),
        }
    }

    /// The API server's host refused `msg` (its process was down): the request fails at once,
    /// if it is the current try's outstanding one.
    pub fn on_refused(&mut self, cx: &mut Cx, msg: Message, out: &mut Out<Message>) {
        let Some(t) = self.current else { return };
        let outstanding = match (msg, t.stage) {
            (Message::Get { req }, Stage::Get | Stage::ReleaseGet) => req == t.req,
            (
                Message::Update { req, .. },
                Stage::FastUpdate(_) | Stage::Update(_) | Stage::ReleaseUpdate(_),
            ) => req == t.req,
            _ => false,
        };
        if outstanding {
            self.request_failed(cx, out);
        }
    }

    pub fn on_message(&mut self, cx: &mut Cx, msg: Message, out: &mut Out<Message>) {
        if let Message::WriteAck(ack) = msg {
            // The protected resource's answer to a write: its copy takes it.
            self.copy.merge(ack);
            out.report(Fact::WriteAcked {
                key: ack.key,
                value: ack.value,
            });
            return;
        }
        let Some(t) = self.current else { return };
        match msg {
            // The record read refreshes the resourceVersion the fast path writes on (a copy of a
            // Record the network duplicated, arriving in a later stage, does not).
            Message::Record { req, rv, lease } if req == t.req => match t.stage {
                Stage::Get => {
                    self.cached_rv = rv;
                    self.on_record(cx, t, rv, lease, out);
                }
                Stage::ReleaseGet => {
                    self.cached_rv = rv;
                    self.release_update(cx, t, rv, lease, out);
                }
                _ => {}
            },
            Message::UpdateReply {
                req,
                ok,
                rv,
                values,
            } if req == t.req => match t.stage {
                Stage::FastUpdate(new) | Stage::Update(new) if ok => {
                    self.cached_rv = rv;
                    self.succeeded(cx, new, values, out);
                }
                Stage::FastUpdate(_) => {
                    // A Conflict: the record is not the one last seen; the slow path reads it.
                    self.current = Some(Try {
                        stage: Stage::Get,
                        ..t
                    });
                    self.request(cx, Message::Get { req }, out);
                }
                Stage::Update(_) => self.try_failed(cx, out),
                Stage::ReleaseUpdate(released) if ok => {
                    self.cached_rv = rv;
                    self.observed = Some(released);
                    self.observed_at = cx.read(self.c.observed_clock);
                    self.released(cx, out);
                }
                Stage::ReleaseUpdate(_) => {
                    // A Conflict: client-go's tryRelease tries again, from the Get.
                    self.current = Some(Try {
                        stage: Stage::ReleaseGet,
                        ..t
                    });
                    self.request(cx, Message::Get { req }, out);
                }
                Stage::Get | Stage::ReleaseGet => {}
            },
            _ => {}
        }
    }

    /// The slow path's record came: note a change, then give the try up, or Update.
    fn on_record(
        &mut self,
        cx: &mut Cx,
        t: Try,
        rv: u64,
        lease: Option<Lease>,
        out: &mut Out<Message>,
    ) {
        if lease != self.observed {
            self.observed = lease;
            self.observed_at = cx.read(self.c.observed_clock);
        }
        let mine = |transitions| Lease {
            holder: Some(self.me),
            acquire_wall: t.began_wall,
            renew_wall: t.began_wall,
            duration: self.p.lease,
            transitions,
        };
        let new = match lease {
            None => mine(0),
            Some(l) if l.holder == Some(self.me) => Lease {
                renew_wall: t.began_wall,
                duration: self.p.lease,
                ..l
            },
            Some(l) => {
                // Whose LeaseDuration it waits out: the record's, or (before client-go 1.27)
                // its own.
                let wait = match self.c.expiry_from {
                    ExpiryFrom::Record => l.duration,
                    ExpiryFrom::Own => self.p.lease,
                };
                if l.holder.is_some() && self.observed_at + wait > t.began_observing {
                    // Held by another, and not seen unchanged for its duration yet.
                    return self.try_failed(cx, out);
                }
                // Expired, or released (no holder): take it.
                mine(l.transitions + 1)
            }
        };
        self.send_update(cx, t, Stage::Update(new), rv, new, out);
    }

    /// An Update of this try was applied and answered: it leads (again), and sleeps
    /// retry_period before the next cycle.
    fn succeeded(&mut self, cx: &mut Cx, new: Lease, values: Store, out: &mut Out<Message>) {
        self.current = None;
        out.cancel_timer(HTTP);
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
                self.copy = values;
                out.report(Fact::Holding { token });
            }
        }
        // The cycle (if one was open) succeeded; sleep retry_period before the next.
        self.cycle = None;
        out.cancel_timer(TICK);
        out.cancel_timer(DEADLINE);
        out.set_timer(SLEEP, ClockKind::Monotonic, cx.mono + self.c.retry_period);
    }

    /// The current try failed (another holds the lease, or a Conflict).
    fn try_failed(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        self.current = None;
        out.cancel_timer(HTTP);
        if self.leading.is_none() {
            // JitterUntil is sliding: the period counts from the end of the try.
            out.set_timer(RETRY, ClockKind::Monotonic, cx.mono + self.period);
        } else if let Some(cycle) = &mut self.cycle {
            // No try at or after the deadline (the poll checks its context before each).
            let open = (cx.mono - cycle.open).ns() < self.c.renew_deadline.ns();
            if cycle.tick_missed && open {
                cycle.tick_missed = false;
                self.begin_try(cx, out);
            }
        }
    }

    /// An operator's `StepDown`: the leader's context is cancelled.
    pub fn step_down(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        if self.leading.is_some() {
            self.stop_leading(cx, out);
        }
    }

    /// It stops leading (client-go cancels the leader's context): a request still unanswered is
    /// abandoned (a late success is not one). With ReleaseOnCancel it releases first, then
    /// exits or runs the elector again.
    fn stop_leading(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        self.cycle = None;
        self.leading = None;
        self.current = None;
        for timer in [TICK, DEADLINE, SLEEP, HTTP] {
            out.cancel_timer(timer);
        }
        if self.c.release_on_cancel {
            self.life = Life::Releasing;
            let at = cx.mono + self.c.renew_deadline;
            out.set_timer(RELEASE_TIMEOUT, ClockKind::Monotonic, at);
            self.next_req += 1;
            self.current = Some(Try {
                req: self.next_req,
                began_observing: cx.read(self.c.observed_clock),
                began_wall: cx.wall,
                stage: Stage::ReleaseGet,
            });
            self.request(cx, Message::Get { req: self.next_req }, out);
        } else {
            self.after_stop(cx, out);
        }
    }

    /// `release()`'s Get came: if the record it last observed is its own (client-go's
    /// `IsLeader()`, which this Get does not update), write one with no holder on the fresh
    /// resourceVersion; otherwise there is nothing to release.
    fn release_update(
        &mut self,
        cx: &mut Cx,
        t: Try,
        rv: u64,
        lease: Option<Lease>,
        out: &mut Out<Message>,
    ) {
        let own = self.observed.is_some_and(|l| l.holder == Some(self.me));
        let Some(stored) = lease.filter(|_| own) else {
            return self.released(cx, out);
        };
        let released = Lease {
            holder: None,
            acquire_wall: t.began_wall,
            renew_wall: t.began_wall,
            duration: RELEASED_DURATION,
            transitions: stored.transitions,
        };
        self.send_update(cx, t, Stage::ReleaseUpdate(released), rv, released, out);
    }

    /// The Update step of try `t` after its Get: `lease` written on resourceVersion `rv`, the
    /// try now at `stage`.
    fn send_update(
        &mut self,
        cx: &Cx,
        t: Try,
        stage: Stage,
        rv: u64,
        lease: Lease,
        out: &mut Out<Message>,
    ) {
        self.current = Some(Try { stage, ..t });
        let req = t.req;
        self.request(cx, Message::Update { req, rv, lease }, out);
    }

    /// `release()` returned (done, nothing to do, or given up).
    fn released(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        self.current = None;
        out.cancel_timer(RELEASE_TIMEOUT);
        out.cancel_timer(HTTP);
        self.after_stop(cx, out);
    }

    /// `Run` returned: the process exits, or runs the elector again at once.
    fn after_stop(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        match self.c.on_lost {
            OnLost::Exit { restart } => {
                self.life = Life::Exited;
                out.set_timer(RESTART, ClockKind::Monotonic, cx.mono + restart);
            }
            OnLost::Rerun => {
                self.life = Life::Electing;
                self.acquire_try(cx, out);
            }
        }
    }

    /// The exited process is started again: a new identity that has observed nothing, with
    /// no copy of the resource.
    fn restart(&mut self, cx: &mut Cx, out: &mut Out<Message>) {
        debug_assert!(self.leading.is_none() && self.current.is_none());
        self.life = Life::Electing;
        self.me.process += 1;
        self.observed = None;
        self.observed_at = LocalTime::from_ns(i64::MIN);
        self.copy_token = None;
        self.cached_rv = 0;
        self.acquire_try(cx, out);
    }

    pub fn on_timer(&mut self, cx: &mut Cx, timer: TimerId, out: &mut Out<Message>) {
        match timer {
            RETRY if self.leading.is_none() && self.life == Life::Electing => {
                self.acquire_try(cx, out)
            }
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
            // The renew loop gives up.
            DEADLINE if self.cycle.is_some() => self.stop_leading(cx, out),
            RELEASE_TIMEOUT if self.life == Life::Releasing => self.released(cx, out),
            HTTP => self.request_failed(cx, out),
            RESTART if self.life == Life::Exited => self.restart(cx, out),
            _ => {}
        }
    }

    pub fn check(&self) -> Option<Token> {
        self.leading
    }

    pub fn on_request(&mut self, cx: &Cx, request: Request, token: Token, out: &mut Out<Message>) {
        match request {
            Request::Read { key } => out.report(Fact::Read {
                token,
                value: self.copy.get(key),
            }),
            Request::Write { key, value } => {
                out.report(Fact::WriteSent { token });
                out.send(Self::server(cx), Message::Write { token, key, value });
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
