//! Node faults as the run meets them: starts and restarts, crashes, pauses and their ends (with
//! what fell due meanwhile), clock steps, drift changes, operator commands, and the clock syncs
//! of `clocks.uncertainty`.

use super::{Ev, NodeFault, Sim};
use crate::msg::NodeId;
use crate::scenario::{FreezeClock, GrantorRestart, PauseKind, Role, Thread};
use crate::strategy::{Beliefs, NodeLogic, Protocol};
use crate::time::{Dur, LocalDur};
use crate::trace::TraceKind;

/// How many events' room a node's deferred list keeps once a pause is over.
const DEFERRED_ROOM_KEPT: usize = 64;

impl<P: Protocol> Sim<'_, P> {
    /// Tells the oracle whether node `n` runs from now on (up and not paused).
    pub(super) fn set_running(&mut self, n: NodeId) {
        self.oracle.settle(n, self.now, &self.clocks[n]);
        self.oracle.set_running(n, self.nodes[n].running());
    }

    /// Node fault `fault` of the schedule reaches node `n` now.
    pub(super) fn apply_fault(&mut self, n: NodeId, fault: NodeFault) {
        let lasts = match fault {
            NodeFault::Start => None,
            NodeFault::Pause { duration, .. }
            | NodeFault::ThreadStall { duration, .. }
            | NodeFault::DiskStall { duration } => Some(duration),
            _ => Some(Dur::ZERO),
        };
        if let Some(duration) = lasts {
            self.oracle.faults_until(self.now + duration);
        }
        match fault {
            NodeFault::Start => self.start(n, false),
            NodeFault::Restart => self.start(n, true),
            NodeFault::Crash => self.crash(n),
            NodeFault::Pause {
                duration,
                kind,
                clock,
            } => self.pause(n, duration, kind, clock),
            NodeFault::ClockStep { by } => {
                self.oracle.settle(n, self.now, &self.clocks[n]);
                self.clocks[n].step_wall(self.now, by);
                self.remap_timers(n, true);
                if self.observer.is_some() {
                    self.emit(n, TraceKind::ClockStep { by });
                }
            }
            NodeFault::DriftChange { drift } => {
                self.oracle.settle(n, self.now, &self.clocks[n]);
                self.clocks[n].set_drift(self.now, drift);
                self.remap_timers(n, false);
                if self.observer.is_some() {
                    self.emit(n, TraceKind::DriftChange { drift });
                }
            }
            NodeFault::ThreadStall { thread, duration } => self.stall_thread(n, thread, duration),
            NodeFault::DiskStall { duration } => self.stall_disk(n, duration),
            NodeFault::Command(command) => self.route(
                n,
                Ev::Command {
                    node: n as u32,
                    command,
                },
            ),
        }
    }

    /// Node `n` starts (`restart`: a `Restart` fault; one before the node's own start, or of a
    /// node that is up, does nothing). Its logic is made from what its disk kept; at its first
    /// start its workload streams begin. A grantor that forgets what it granted
    /// (`lease.grantor_restart: Forget`) opens a new epoch of tokens at its restart.
    fn start(&mut self, n: NodeId, restart: bool) {
        let before_start = restart && !self.nodes[n].started;
        if self.nodes[n].up() || before_start {
            return; // running already, or a restart before the node's own start
        }
        let restarted = self.nodes[n].started;
        let first_start = !self.nodes[n].started;
        if restarted
            && self.nodes[n].role == Role::Grantor
            && self.params.grantor_restart == GrantorRestart::Forget
        {
            // It may issue its tokens again: whatever it issues now is newer.
            self.harm.new_epoch();
        }
        self.nodes[n].started = true;
        let node = &mut self.nodes[n];
        let disk = node.disk.take().unwrap_or_default();
        let logic = self.protocol.node_logic(n, node.role, &self.params, disk);
        if let Some(d) = node.disk_model.as_mut() {
            d.durable = logic.disk_image(); // what it started from is on its disk
        }
        node.logic = Some(logic);
        self.call_thread = Thread::Worker;
        self.set_running(n);
        if self.observer.is_some() {
            self.emit(n, TraceKind::Start { restarted });
        }
        self.call(n, restarted, false, |logic, cx, out| {
            logic.on_start(cx, out)
        });
        if first_start {
            self.schedule_arrival(n, false);
            self.schedule_arrival(n, true);
            if let Some(ops) = self.nodes[n].ops.as_mut() {
                ops.start = self.now;
                self.queue.push(self.now, Ev::Generate { node: n as u32 });
            }
        }
    }

    /// Node `n` crashes (if it is up): its logic keeps only its disk, its deferred events and
    /// timers are lost, and its copy of the register with them.
    fn crash(&mut self, n: NodeId) {
        if !self.nodes[n].up() {
            return;
        }
        self.stats.crashes += 1;
        self.oracle.settle(n, self.now, &self.clocks[n]);
        self.oracle.set_beliefs(n, Beliefs::NONE);
        let node = &mut self.nodes[n];
        let logic = node.logic.take().expect("an up node has logic");
        // With a disk, what it keeps is what its disk made durable.
        let durable = node.disk_model.as_mut().and_then(|d| {
            d.crashed();
            d.durable.take()
        });
        node.disk = Some(match durable {
            Some(durable) => logic.into_disk_with(durable),
            None => logic.into_disk(),
        });
        node.life += 1;
        node.pause_depth = 0;
        node.thread_stalls = [0; 2];
        node.disk_waits = [0; 2];
        let mut lost = std::mem::take(&mut node.deferred);
        lost.append(&mut node.held);
        for ev in lost {
            if let Ev::Deliver { twin, id, .. } = ev {
                self.twin_consumed(twin, id, false);
            }
        }
        let node = &mut self.nodes[n];
        for slot in node.timers.iter_mut() {
            slot.forget_entries();
            slot.armed = false;
        }
        self.harm.crashed(n);
        if cfg!(debug_assertions) {
            self.audit.crashed(n);
        }
        self.set_running(n);
        if self.observer.is_some() {
            self.emit(n, TraceKind::Crash);
        }
    }

    /// Node `n` pauses (if it is up) for `duration`; a stalled VM freeze stops its clocks too,
    /// and re-maps its timers.
    fn pause(&mut self, n: NodeId, duration: Dur, kind: PauseKind, clock: FreezeClock) {
        if !self.nodes[n].up() {
            return;
        }
        self.stats.pauses += 1;
        let depth = &mut self.nodes[n].pause_depth;
        *depth = depth.checked_add(1).expect("pause depth never wraps");
        self.set_running(n);
        let stall = kind == PauseKind::VmFreeze && clock == FreezeClock::Stall;
        if stall {
            let depth = &mut self.nodes[n].stall_depth;
            *depth = depth.checked_add(1).expect("stall depth never wraps");
            if self.nodes[n].stall_depth == 1 {
                self.oracle.settle(n, self.now, &self.clocks[n]);
                self.clocks[n].stall(self.now);
                self.remap_timers(n, false);
            }
        }
        if self.observer.is_some() {
            let until = self.now + duration;
            self.emit(n, TraceKind::PauseBegin { kind, stall, until });
        }
        let life = self.nodes[n].life;
        let ev = Ev::PauseEnd {
            node: n as u32,
            life,
            stall,
        };
        self.queue.push(self.now + duration, ev);
    }

    /// Loop `thread` of node `n` stalls (if the node is up) for `duration`: what it handles
    /// waits from now on, while the rest of the node and its clocks run on (the oracle still
    /// counts what it believes: the process is alive).
    fn stall_thread(&mut self, n: NodeId, thread: Thread, duration: Dur) {
        if !self.nodes[n].up() {
            return;
        }
        self.stats.thread_stalls += 1;
        let depth = &mut self.nodes[n].thread_stalls[thread as usize];
        *depth = depth.checked_add(1).expect("stall depth never wraps");
        if self.observer.is_some() {
            let until = self.now + duration;
            self.emit(n, TraceKind::ThreadStallBegin { thread, until });
        }
        let ev = Ev::ThreadStallEnd {
            node: n as u32,
            life: self.nodes[n].life,
            thread,
        };
        self.queue.push(self.now + duration, ev);
    }

    /// A stall of loop `thread` of node `n` ends (one from an earlier life is ignored). When
    /// its last stall ends, what it held is handled in the order it fell due: now, or, if the
    /// node is paused, first when the pause ends (it all fell due before the pause began).
    pub(super) fn end_thread_stall(&mut self, n: NodeId, life: u32, thread: Thread) {
        if self.nodes[n].life != life {
            return;
        }
        if self.observer.is_some() {
            self.emit(n, TraceKind::ThreadStallEnd { thread });
        }
        self.release_thread(n, thread);
    }

    /// One stall of loop `thread` of node `n` is over: when none is left, what the loop held
    /// is handled ([`Sim::drain_held`]).
    pub(super) fn release_thread(&mut self, n: NodeId, thread: Thread) {
        let depth = &mut self.nodes[n].thread_stalls[thread as usize];
        *depth = depth
            .checked_sub(1)
            .expect("a thread stall ends only after it began");
        self.drain_held(n, thread);
    }

    /// Loop `thread` of node `n` may go on (no stall, no wait for its disk): it handles what
    /// it held, in the order it fell due, all of it (as a loop that persists one batch of
    /// work before it sends: raft-rs's `Ready`, Redis's `beforeSleep`); the writes of those
    /// calls share the disk's next fsync. If the node is paused, all of it waits for the
    /// pause's end (it fell due before the pause began).
    pub(super) fn drain_held(&mut self, n: NodeId, thread: Thread) {
        let node = &mut self.nodes[n];
        if node.blocked(thread) {
            return;
        }
        let held = std::mem::take(&mut node.held);
        let (mine, others): (Vec<_>, Vec<_>) = held
            .into_iter()
            .partition(|ev| node.thread_of(ev) == thread);
        node.held = others;
        if node.pause_depth > 0 {
            node.deferred.splice(0..0, mine);
            return;
        }
        for ev in mine {
            if !self.nodes[n].up() {
                break;
            }
            self.handle(n, ev);
        }
    }

    /// A clock sync of node `n` (`clocks.uncertainty`): its wall clock is set to true time plus
    /// a residual within the base error, unless a stalled freeze holds the clock (the sync
    /// daemon is frozen with it); the residual is drawn either way, so that the stream does not
    /// depend on the freeze. The next sync is one period later.
    pub(super) fn sync_clock(&mut self, n: NodeId) {
        use rand::RngExt;
        let syncs = self
            .syncs
            .as_mut()
            .expect("syncs are queued only with uncertainty");
        let base = syncs.base.ns();
        let residual = LocalDur::from_ns(syncs.rngs[n].random_range(-base..=base));
        let next = self.now + syncs.every;
        if self.nodes[n].stall_depth == 0 {
            self.oracle.settle(n, self.now, &self.clocks[n]);
            let before = self.clocks[n].wall(self.now);
            self.clocks[n].sync(self.now, residual);
            self.remap_timers(n, true);
            if self.observer.is_some() {
                let by = self.clocks[n].wall(self.now) - before;
                self.emit(n, TraceKind::ClockStep { by });
            }
        }
        if next < self.end {
            self.queue.push(next, Ev::Sync { node: n as u32 });
        }
    }

    /// A pause of node `n` ends (`stall`: its clocks resume too, whatever became of the
    /// process). A pause from an earlier life is ignored; when the last pause ends, the node
    /// handles what fell due meanwhile, in the order it fell due.
    pub(super) fn end_pause(&mut self, n: NodeId, life: u32, stall: bool) {
        if stall {
            // The VM's clock resumes whatever became of the process.
            let depth = &mut self.nodes[n].stall_depth;
            *depth = depth
                .checked_sub(1)
                .expect("a stall ends only after it began");
            if self.nodes[n].stall_depth == 0 {
                self.oracle.settle(n, self.now, &self.clocks[n]);
                self.clocks[n].resume(self.now);
                self.remap_timers(n, false);
            }
        }
        let node = &mut self.nodes[n];
        if node.life != life || node.pause_depth == 0 {
            return;
        }
        node.pause_depth -= 1;
        if self.observer.is_some() {
            self.emit(n, TraceKind::PauseEnd);
        }
        if self.nodes[n].pause_depth > 0 {
            return;
        }
        self.set_running(n);
        // Handle what fell due meanwhile, in the order it fell due; what a stalled loop, or one
        // that waited for its disk before the pause ended, handles waits on for it. A wait
        // that a call of this batch begins holds nothing of the batch (`drain_held`).
        let mut deferred = std::mem::take(&mut self.nodes[n].deferred);
        let mut waited = self.nodes[n].disk_waits.map(|w| w > 0);
        for ev in deferred.drain(..) {
            let node = &mut self.nodes[n];
            if !node.up() {
                break;
            }
            let durable = matches!(ev, Ev::Durable { .. });
            let thread = node.thread_of(&ev);
            if !durable && (node.stalled(thread) || waited[thread as usize]) {
                node.held.push(ev);
                continue;
            }
            self.handle(n, ev);
            if durable {
                let node = &self.nodes[n];
                waited = Thread::ALL.map(|t| waited[t as usize] && node.disk_waits[t as usize] > 0);
            }
        }
        // The list is kept for the next pause, but not the room a long one made: what a node
        // holds between pauses must not grow with the longest pause of the run.
        deferred.shrink_to(DEFERRED_ROOM_KEPT);
        self.nodes[n].deferred = deferred;
    }
}
