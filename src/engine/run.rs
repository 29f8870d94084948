//! The run loop: events come out of the queue in (time, sequence) order, `dispatch` sends each
//! where it belongs, `route` hands node-bound ones to their node (now, into its deferred list
//! while it is paused, or nowhere while it is down: a message on a stream is then refused back
//! to its sender), and `handle` calls into node logic. Most of a busy run's events are its
//! requests' arrivals and effects: `run_requests` takes stretches of them in a lane that looks
//! up once what else could come first (the queue's head, the fault schedule, the end).

use super::effects::kind_name;
use super::queue::{order_of, time_of};
use super::service::Effect;
use super::{Ev, RunResult, Sim};
use crate::clock::ClockKind;
use crate::msg::{NodeId, Token};
use crate::net::Transport;
use crate::scenario::Thread;
use crate::strategy::{
    Cx, MsgOf, NodeLogic, Out, Protocol, ProtocolMessage, Request, Stamp, TtNow,
};
use crate::time::SimTime;
use crate::trace::tally::Countable;
use crate::trace::{DropReason, TraceKind};

/// Where the next event comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    /// The fault schedule (`engine::feed`).
    Fault,
    /// The event queue.
    Queue,
    /// A Poisson stream's next arrival (`engine::arrivals`).
    Arrival,
    /// An admitted request's effect (`engine::service`).
    Effect,
}

/// Whether the run takes its arrivals and effects in [`Sim::run_requests`]: always, but in a
/// test that turns it off ([`ONE_LOOP`]) to hold the lane to the order of the loop alone.
#[cfg(not(test))]
#[inline(always)]
const fn lane_open() -> bool {
    true
}

#[cfg(test)]
fn lane_open() -> bool {
    !ONE_LOOP.with(std::cell::Cell::get)
}

#[cfg(test)]
thread_local! {
    /// Set: this thread's runs take every event through the run's one loop.
    pub(super) static ONE_LOOP: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// The events this thread's runs took in the lane.
    pub(super) static LANE_EVENTS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

impl<P: Protocol> Sim<'_, P> {
    /// Runs to the end of the scenario (or the event bound) and returns what happened.
    pub fn run(mut self) -> RunResult {
        loop {
            if lane_open() {
                self.run_requests();
            }
            let Some((at, source)) = self.next_due() else {
                break;
            };
            if at >= self.end {
                break;
            }
            if self.stats.events >= self.max_events {
                self.stats.truncated = true;
                break;
            }
            self.advance_to(at);
            // In flight: what waits in the queue and the streams once this event is out.
            match source {
                Source::Fault => {
                    let (_, n, fault) = self.feed.pop_node().expect("a fault is due");
                    self.count_in_flight(self.queue.len());
                    self.apply_fault(n, fault);
                }
                Source::Arrival => self.next_arrival(self.queue.len()),
                Source::Queue => {
                    let (_, ev) = self.queue.pop().expect("an event is due");
                    self.count_in_flight(self.queue.len());
                    self.dispatch(ev);
                }
                Source::Effect => self.next_effect(self.queue.len()),
            }
        }
        let end = if self.stats.truncated {
            self.now
        } else {
            self.end
        };
        self.stats.faults_never_placed = self.anchors.never_placed();
        let drifts = self.clocks.iter().map(|c| c.drift()).collect();
        self.oracle.finish(end, &self.clocks);
        self.report_to_observer();
        if let Some(o) = self.observer.as_mut() {
            if let Some(tally) = self.refusal_tally.take() {
                o.counted(Countable::Refusals, tally);
            }
            if let Some((tally, _)) = self.read_tally.take() {
                o.counted(Countable::PlainReads, tally);
            }
            o.finish(end);
        }
        RunResult {
            oracle: self.oracle.into_reports(),
            harm: self.harm.counts().clone(),
            failovers: self.failovers.failovers(),
            stats: self.stats,
            duration: end.since(SimTime::ZERO),
            drifts,
            kinds: <MsgOf<P> as ProtocolMessage>::KINDS,
            outside_interval_ns: self.syncs.as_ref().map(|_| {
                self.clocks
                    .iter()
                    .map(|c| c.max_outside_interval_ns(end))
                    .collect()
            }),
        }
    }

    /// Adds the events in flight (`queued`, the streams' pending arrivals and the effects
    /// waiting) to the sum.
    #[inline]
    fn count_in_flight(&mut self, queued: usize) {
        let waiting = queued + self.arrivals.len() + self.service.len();
        self.stats.in_flight_sum += waiting as u64;
    }

    /// Counts an event due at `at` and moves the run's time to it.
    #[inline]
    fn advance_to(&mut self, at: SimTime) {
        self.stats.events += 1;
        assert!(
            at >= self.now,
            "time went backward: {at:?} < {:?}",
            self.now
        );
        self.now = at;
    }

    /// Takes out the streams' next arrival, due now, and lets it arrive.
    #[inline]
    fn next_arrival(&mut self, queued: usize) {
        let a = self.arrivals.take();
        self.count_in_flight(queued);
        let kind = if a.write {
            Request::Write {
                key: a.key,
                value: 0,
            }
        } else {
            Request::Read { key: a.key }
        };
        self.arrive(a.node as NodeId, kind, false);
    }

    /// Takes out the next admitted request's effect, due now.
    #[inline]
    fn next_effect(&mut self, queued: usize) {
        let e = self.service.take();
        self.count_in_flight(queued);
        self.effect_due(e);
    }

    /// Runs the streams' arrivals and the admitted requests' effects (most of a busy run's
    /// events) for as long as one of them comes before anything else: the queue's next event,
    /// the next node fault, the next drawn network fault's start and the run's end, looked up
    /// once for them all. Each is taken out and handled as [`Sim::run`] would, in the same
    /// order; it stops at the event bound, and after an event that queued something or placed
    /// a fault (either may now come first), leaving the rest to the run's own loop.
    #[inline]
    fn run_requests(&mut self) {
        // Nothing's order is u128::MAX (times stay below i64::MAX): it stands for none. A fault
        // at an instant comes before every event of it: its bound is that instant's first order.
        const NONE: u128 = u128::MAX;
        let first_of = |t: Option<SimTime>| t.map_or(NONE, |t| order_of(t, 0));
        let bound = self
            .queue
            .next_order()
            .unwrap_or(NONE)
            .min(first_of(self.feed.next_node_at()))
            .min(first_of(self.feed.next_net_at()))
            .min(order_of(self.end, 0));
        let (queued, pushes, changes) =
            (self.queue.len(), self.queue.pushes(), self.feed.changes());
        // The events left before the bound on their number.
        let mut left = self.max_events.saturating_sub(self.stats.events);
        loop {
            let arriving = self.arrivals.next_order().unwrap_or(NONE);
            let serving = self.service.next_order().unwrap_or(NONE);
            let order = arriving.min(serving);
            if order >= bound || left == 0 {
                return;
            }
            left -= 1;
            self.advance_to(time_of(order));
            #[cfg(test)]
            LANE_EVENTS.set(LANE_EVENTS.get() + 1);
            if arriving < serving {
                self.next_arrival(queued);
            } else {
                self.next_effect(queued);
            }
            if self.queue.pushes() != pushes || self.feed.changes() != changes {
                return;
            }
        }
    }

    /// When the next event is due, and where it comes from: the schedule's next node fault (due
    /// no later than the others: a fault at an instant comes before anything the run scheduled
    /// for it, as if the whole schedule had been queued before the run), or of the queue's next
    /// event, the streams' next arrival and the next effect the one first in (time, seq) order.
    /// Drawn network faults that start by then join the network first, so that every send and
    /// delivery at that instant sees them.
    #[inline]
    fn next_due(&mut self) -> Option<(SimTime, Source)> {
        // No key is u128::MAX (times stay below i64::MAX): it stands for none.
        const NONE: u128 = u128::MAX;
        let fault_at = self.feed.next_node_at();
        let queued = self.queue.next_order().unwrap_or(NONE);
        let arriving = self.arrivals.next_order().unwrap_or(NONE);
        let serving = self.service.next_order().unwrap_or(NONE);
        let (mut order, mut source) = (queued, Source::Queue);
        if arriving < order {
            (order, source) = (arriving, Source::Arrival);
        }
        if serving < order {
            (order, source) = (serving, Source::Effect);
        }
        let next_at = (order != NONE).then(|| time_of(order));
        let (at, source) = match fault_at {
            Some(f) if next_at.is_none_or(|t| f <= t) => (f, Source::Fault),
            _ => (next_at?, source),
        };
        while let Some((f, order)) = self.feed.pop_net_by(at) {
            self.oracle.faults_until(f.window().end);
            self.net.add(f, order);
        }
        Some((at, source))
    }

    /// Carries out event `ev`, due now.
    pub(super) fn dispatch(&mut self, ev: Ev<MsgOf<P>>) {
        match ev {
            Ev::PauseEnd { node, life, stall } => self.end_pause(node as NodeId, life, stall),
            Ev::ThreadStallEnd { node, life, thread } => {
                self.end_thread_stall(node as NodeId, life, thread)
            }
            Ev::Sync { node } => self.sync_clock(node as NodeId),
            Ev::FsyncStart { node, life, gen } => self.fsync_start(node as NodeId, life, gen),
            Ev::FsyncDone { node, life, gen } => self.fsync_done(node as NodeId, life, gen),
            Ev::DiskStallEnd { node } => self.end_disk_stall(node as NodeId),
            Ev::Arrival {
                node,
                kind,
                periodic,
                ..
            } => self.arrive(node as NodeId, kind, periodic),
            Ev::Generate { node } => self.generate(node as NodeId),
            Ev::Deliver {
                to,
                from,
                ref msg,
                id,
                twin,
                ..
            } => {
                if self.net.is_cut(self.now, from as NodeId, to as NodeId) {
                    self.stats.messages_dropped += 1;
                    self.twin_consumed(twin, id, false);
                    self.emit_drop(from, to, msg, id, DropReason::Cut);
                    return;
                }
                self.route(to as NodeId, ev);
            }
            Ev::Refused { to, from, .. } => {
                if self.net.is_cut(self.now, from as NodeId, to as NodeId) {
                    return; // the refusal is lost: the sender's own timeout decides
                }
                self.route(to as NodeId, ev)
            }
            Ev::Timer { node, .. }
            | Ev::Effect { node, .. }
            | Ev::Command { node, .. }
            | Ev::Durable { node } => self.route(node as NodeId, ev),
        }
    }

    /// Hands a node-bound event to its node: now, later (paused), or never (down).
    pub(super) fn route(&mut self, n: NodeId, ev: Ev<MsgOf<P>>) {
        let node = &mut self.nodes[n];
        if !node.up() {
            if let Ev::Deliver { .. } = ev {
                self.refuse(ev);
            }
            return;
        }
        if let Ev::Timer {
            timer, gen, seq, ..
        } = ev
        {
            if !self.timer_came_out(n, timer, gen, seq) {
                return; // stale, disarmed, or carried forward
            }
        }
        let node = &self.nodes[n];
        if node.pause_depth > 0 {
            self.set_aside(n, ev, false);
        } else if node.held_by_stall(&ev) {
            self.set_aside(n, ev, true);
        } else {
            self.handle(n, ev);
        }
    }

    /// Hands client request `op` (`kind`, `periodic` if from the fixed-rate stream) to node `n`
    /// as [`Sim::route`] would its [`Ev::Arrival`], making the event only if it must wait: a
    /// request is handled by the node's worker loop.
    ///
    /// The history hears of its invocation here: with its failure in one call if the node
    /// refuses it at once (most refused requests), else before anything else happens to it.
    // Inlined always, as `admit` and `with_cx` are: once per arrival, where the calls cost more
    // than the bodies (with the rest of a request's path inlined, about 110 million of the
    // 600 s cut's 1,500 million instructions).
    #[inline(always)]
    pub(super) fn route_request(&mut self, n: NodeId, kind: Request, periodic: bool, op: u64) {
        let node = &self.nodes[n];
        let (up, paused) = (node.up(), node.pause_depth > 0);
        let waits = paused || node.blocked(Thread::Worker);
        let disk = node.disk_model.is_some();
        if !up || waits {
            self.tell_invoked(n, kind, op);
        }
        if !up {
            return;
        }
        if waits {
            let ev = Ev::Arrival {
                node: n as u32,
                kind,
                periodic,
                op,
            };
            self.set_aside(n, ev, !paused);
            return;
        }
        if disk {
            self.call_thread = Thread::Worker;
        }
        self.admit(n, kind, op, true);
    }

    /// Sets node-bound event `ev` aside until node `n` can handle it: in its deferred list
    /// while it is paused, or (`held`) in its held list while the loop that handles it is
    /// stalled. Past the cap of either list a request is shed and a message dropped (a full
    /// socket backlog).
    fn set_aside(&mut self, n: NodeId, ev: Ev<MsgOf<P>>, held: bool) {
        let node = &self.nodes[n];
        let waiting = if held { &node.held } else { &node.deferred };
        if waiting.len() >= self.max_deferred {
            match ev {
                Ev::Arrival { .. } => {
                    self.stats.requests_shed += 1;
                    return;
                }
                Ev::Deliver {
                    from,
                    to,
                    ref msg,
                    id,
                    twin,
                    ..
                } => {
                    self.stats.messages_dropped += 1;
                    self.twin_consumed(twin, id, false);
                    self.emit_drop(from, to, msg, id, DropReason::Backlog);
                    return;
                }
                _ => {}
            }
        }
        if let Ev::Arrival {
            kind: Request::Read { key },
            op,
            ..
        } = ev
        {
            // Invoked now, answered (if ever) once it is handled.
            self.harm.open_read(n, op, key);
        }
        let node = &mut self.nodes[n];
        if let Ev::Timer { timer, .. } = ev {
            node.timers[timer as usize].fell_due = true;
        }
        if held {
            node.held.push(ev);
        } else {
            node.deferred.push(ev);
        }
    }

    /// A message (`ev`, an [`Ev::Deliver`]) reached a node whose process is down. On datagrams
    /// it is lost. On a stream the node's host refuses it: a reset goes back to the sender, one
    /// network delay later (a draw of the reverse link from the refusing node's own stream, so
    /// that runs with no refusal draw as before), and is lost if a cut is active when it arrives.
    fn refuse(&mut self, ev: Ev<MsgOf<P>>) {
        let Ev::Deliver {
            from,
            to,
            msg,
            id,
            twin,
            life,
        } = ev
        else {
            unreachable!("only messages are refused")
        };
        self.stats.messages_dropped += 1;
        self.twin_consumed(twin, id, false);
        if P::TRANSPORT == Transport::Datagram {
            self.emit_drop(from, to, &msg, id, DropReason::Down);
            return;
        }
        self.stats.messages_refused += 1;
        self.emit_drop(from, to, &msg, id, DropReason::Refused);
        let delay = self.net.refusal_delay(to as NodeId, from as NodeId);
        let back = Ev::Refused {
            to: from,
            from: to,
            msg,
            id,
            life,
        };
        self.queue.push(self.now + delay, back);
    }

    /// Node `n` (running) handles node-bound event `ev`.
    pub(super) fn handle(&mut self, n: NodeId, ev: Ev<MsgOf<P>>) {
        if self.nodes[n].disk_model.is_some() {
            // Which loop a write of this call holds (nodes without a disk never ask).
            self.call_thread = self.nodes[n].thread_of(&ev);
        }
        match ev {
            Ev::Deliver {
                from,
                msg,
                id,
                twin,
                ..
            } => {
                if self.observer.is_some() {
                    let kind = TraceKind::Deliver {
                        from: from as NodeId,
                        kind: kind_name(&msg),
                        id,
                        token: msg.token(),
                    };
                    self.emit(n, kind);
                }
                let duplicate = self.twin_consumed(twin, id, true);
                self.call(n, false, duplicate, |logic, cx, out| {
                    logic.on_message(cx, from as NodeId, msg, out)
                });
            }
            Ev::Timer { timer, gen, .. } => {
                let slot = &mut self.nodes[n].timers[timer as usize];
                if !slot.armed || slot.gen != gen {
                    return; // cancelled, re-armed or re-mapped since
                }
                slot.armed = false;
                slot.fell_due = false;
                self.call(n, false, false, |logic, cx, out| {
                    logic.on_timer(cx, timer, out)
                });
            }
            Ev::Arrival { kind, op, .. } => self.admit(n, kind, op, false),
            Ev::Effect {
                kind,
                token,
                life,
                op,
                ..
            } => {
                if life == self.nodes[n].life {
                    self.take_effect(n, kind, token, op);
                } else if !kind.is_write() {
                    self.harm.read_ended(n, op);
                }
            }
            Ev::Command { command, .. } => {
                self.call(n, false, false, |logic, cx, out| {
                    logic.on_command(cx, command, out)
                });
            }
            Ev::Refused {
                from,
                msg,
                id,
                life,
                ..
            } => {
                if life != self.nodes[n].life {
                    return; // the connection died with the life that sent it
                }
                if self.observer.is_some() {
                    let kind = kind_name(&msg);
                    let to = from as NodeId;
                    self.emit(n, TraceKind::Refused { to, kind, id });
                }
                self.call(n, false, false, |logic, cx, out| {
                    logic.on_refused(cx, from as NodeId, msg, out)
                });
            }
            Ev::Durable { .. } => self.durable(n),
            Ev::PauseEnd { .. }
            | Ev::ThreadStallEnd { .. }
            | Ev::FsyncStart { .. }
            | Ev::FsyncDone { .. }
            | Ev::DiskStallEnd { .. }
            | Ev::Generate { .. }
            | Ev::Sync { .. } => {
                unreachable!("not node-bound")
            }
        }
    }

    /// Client request `op` (`kind`) arrives at node `n` (running): the node checks it, and
    /// it takes effect now or after the service time, or fails. `fresh`: it arrived just now,
    /// and the history has not heard of its invocation yet (else it waited, set aside).
    #[inline(always)]
    fn admit(&mut self, n: NodeId, kind: Request, op: u64, fresh: bool) {
        // A node that says it refuses whatever the time is not checked (no clock is read); debug
        // builds check it anyway and hold its logic to its word.
        let logic = self.nodes[n].logic.as_ref().expect("node is up");
        let sure = logic.refuses_whatever_the_time(kind);
        let checked = if sure && !cfg!(debug_assertions) {
            None
        } else {
            self.with_cx(n, false, false, None, |logic, cx, _| logic.check(cx, kind))
        };
        if sure {
            assert!(
                checked.is_none(),
                "node {n}'s logic said it refuses {kind:?} whatever the time, and its check \
                 admitted it under token {checked:?}"
            );
        }
        let Some(token) = checked else {
            // A read opens when it must wait (set aside, or in service): one refused as it
            // arrives never did.
            debug_assert!(
                !fresh || self.harm.kept_key(n, op).is_none(),
                "a request refused as it arrives was never open"
            );
            if !kind.is_write() && !fresh {
                self.harm.read_ended(n, op);
            }
            self.tell_refused(n, kind, op, fresh);
            return;
        };
        if fresh {
            self.tell_invoked(n, kind, op);
        }
        if kind.is_write() {
            self.stats.writes_admitted += 1;
        } else {
            self.stats.reads_admitted += 1;
        }
        if self.service_time.ns() == 0 {
            self.take_effect(n, kind, token, op);
        } else {
            if let Request::Read { key } = kind {
                self.harm.open_read(n, op, key);
            }
            // Its sequence number is taken now, as a queued event's would be (`engine::service`).
            let seq = self.queue.reserve_seq();
            let at = self.now + self.service_time;
            let life = self.nodes[n].life;
            let e = Effect::new((at, seq), (n as u32, life), kind, token, op);
            self.service.push(e);
        }
    }

    /// Admitted request `e` is due to take effect now: at its node as [`Sim::route`] and
    /// [`Sim::handle`] would take its [`Ev::Effect`], making the event only if it must wait
    /// (its node paused, or its worker loop stalled).
    fn effect_due(&mut self, e: Effect) {
        let n = e.node as NodeId;
        let node = &self.nodes[n];
        if !node.up() {
            return;
        }
        let paused = node.pause_depth > 0;
        if paused || node.blocked(Thread::Worker) {
            debug_assert!(
                paused || node.held_by_stall(&e.event()),
                "the event's loop is the worker"
            );
            self.set_aside(n, e.event(), !paused);
            return;
        }
        if node.disk_model.is_some() {
            self.call_thread = Thread::Worker;
        }
        if e.life == node.life {
            self.take_effect(n, e.kind, e.token, e.op);
        } else if !e.kind.is_write() {
            self.harm.read_ended(n, e.op);
        }
    }

    /// Request `op`, admitted under `token`, takes effect: node logic serves the read or sends
    /// the write.
    pub(super) fn take_effect(&mut self, n: NodeId, kind: Request, token: Token, op: u64) {
        if cfg!(debug_assertions) {
            self.audit.handing(n, Stamp::new(self.now, op), kind);
        }
        let read = (!kind.is_write()).then_some(op);
        self.harm.taking_up(read);
        self.with_cx(n, false, false, Some((op, kind)), |logic, cx, out| {
            logic.on_request(cx, kind, token, out)
        });
        self.after_call(n);
        self.harm.taking_up(None);
        self.call_request = None;
    }

    /// Runs `f` on node `n`'s logic with its context (the node must be up). `request`: the
    /// request the call takes up, with its history name, if any.
    #[inline(always)]
    pub(super) fn with_cx<R>(
        &mut self,
        n: NodeId,
        restarted: bool,
        duplicate: bool,
        request: Option<(u64, Request)>,
        f: impl FnOnce(&mut P::Logic, &mut Cx, &mut Out<MsgOf<P>>) -> R,
    ) -> R {
        let stamp = Stamp::new(self.now, request.map_or(0, |r| r.0));
        self.call_request = request;
        let clock = &self.clocks[n];
        let mono = clock.mono(self.now);
        let wall = clock.wall_of(mono);
        let tt = if clock.has_bound() {
            TtNow {
                earliest: clock.read(ClockKind::TtEarliest, self.now),
                latest: clock.read(ClockKind::TtLatest, self.now),
            }
        } else {
            TtNow::exact(wall)
        };
        let node = &mut self.nodes[n];
        let mut cx = Cx {
            node: n,
            roles: &self.roles,
            mono,
            wall,
            tt,
            restarted,
            incarnation: node.life,
            duplicate,
            rng: &mut node.rng,
            run_token: &mut self.run_token,
            stamp,
        };
        let logic = node.logic.as_mut().expect("node is up");
        f(logic, &mut cx, &mut self.out)
    }

    /// Calls into node `n`'s logic with `f`, then carries out what it asked for.
    pub(super) fn call(
        &mut self,
        n: NodeId,
        restarted: bool,
        duplicate: bool,
        f: impl FnOnce(&mut P::Logic, &mut Cx, &mut Out<MsgOf<P>>),
    ) {
        self.with_cx(n, restarted, duplicate, None, f);
        self.after_call(n);
    }
}

#[cfg(test)]
mod tests {
    use crate::strategy::from_spec;
    use crate::Scenario;

    /// A paused node's backlog beyond the cap sheds client requests and drops messages (a full
    /// socket backlog), and counts both. With the cap lowered to 10: a's Acquire leaves at 0 and
    /// the grant is sent back at 1 ms; a pauses over [1 ms, 50 ms) while reads arrive at
    /// 100,000/s, so about 100 arrive before the grant does at 2 ms and the 10 places are long
    /// taken: the grant is dropped (the run's only lost message), and every read past the tenth
    /// is shed.
    #[test]
    fn a_full_backlog_sheds_requests_and_drops_messages() {
        let s = Scenario::from_ron(
            r#"Scenario(
                seed: 3,
                duration: "100ms",
                lease: (duration: "10s"),
                strategy: TwoSided(holder_margin: "10ms"),
                nodes: [(name: "lock", role: Grantor), (name: "a", role: Contender)],
                network: (delay: Fixed("1ms")),
                workload: (reads_per_second: 100000.0),
                faults: [Pause(node: "a", at: "1ms", duration: "49ms", kind: Gc)],
            )"#,
        )
        .unwrap();
        let strategy = from_spec(&s.strategy).unwrap();
        assert!(strategy.check(&s).is_empty());
        let protocol =
            crate::strategy::Settings::build(&crate::strategy::base::settings::TwoSided {
                holder_margin: crate::time::LocalDur::from_ms(10),
                grantor_margin: crate::time::LocalDur::ZERO,
            });
        let mut sim = crate::engine::build(&s, &protocol, None);
        sim.max_deferred = 10;
        let r = sim.run();
        assert_eq!(r.stats.messages_dropped, 1);
        assert_eq!(r.stats.grants, 1);
        assert!(r.stats.requests_shed >= 50, "{}", r.stats.requests_shed);
        // Every read that arrived was shed, or handled (and rejected: a never holds).
        assert_eq!(r.stats.reads_admitted, 0);
        assert!(r.stats.requests_shed < r.stats.reads_arrived);
    }
}
