//! A node's state in the engine (its logic, its pause and stall depths, its deferred events and
//! its timer slots), and its timers: mapped from a local deadline to true time, queued, and
//! re-mapped when the mapping of its clocks changes.

use super::workload::Periodic;
use super::{Ev, Sim};
use crate::clock::ClockKind;
use crate::dist::Sampler;
use crate::msg::NodeId;
use crate::rng::Rng;
use crate::scenario::Role;
use crate::strategy::{NodeLogic, Protocol, TimerId, MAX_TIMERS};
use crate::time::{LocalTime, SimTime};

#[derive(Clone, Copy, Debug, Default)]
pub(super) struct TimerSlot {
    pub(super) gen: u32,
    pub(super) armed: bool,
    /// The timer fell due while its node was paused and waits in the deferred list: it has fired
    /// as far as the clock is concerned, so a later change of the mapping must not move it.
    pub(super) fell_due: bool,
    pub(super) clock: Option<ClockKind>,
    pub(super) at: crate::time::LocalTime,
    /// The true instant its queue entry is due ([`SimTime::NEVER`]: a stalled clock).
    pub(super) due: SimTime,
}

pub(super) struct Node<L: NodeLogic> {
    pub(super) role: Role,
    pub(super) logic: Option<L>,
    /// What the logic kept when the node last crashed, for its restart.
    pub(super) disk: Option<L::Disk>,
    /// The node logic's own random stream.
    pub(super) rng: Rng,
    /// Incremented at every crash: a pause end from an earlier life is ignored.
    pub(super) life: u32,
    pub(super) pause_depth: u32,
    pub(super) stall_depth: u32,
    pub(super) deferred: Vec<Ev<L::Msg>>,
    pub(super) timers: [TimerSlot; MAX_TIMERS],
    pub(super) started: bool,
    pub(super) reads: Option<(Sampler, Rng)>,
    pub(super) writes: Option<(Sampler, Rng)>,
    pub(super) ops: Option<Periodic>,
}

impl<L: NodeLogic> Node<L> {
    /// The node has started and not crashed since.
    pub(super) fn up(&self) -> bool {
        self.logic.is_some()
    }
    /// Up and not paused.
    pub(super) fn running(&self) -> bool {
        self.up() && self.pause_depth == 0
    }
}

impl<P: Protocol> Sim<'_, P> {
    /// Node `n`'s logic set timer `timer` on `clock` at local deadline `at` (re-arming it if it
    /// was armed): a new generation, queued where the clock reaches `at`.
    pub(super) fn set_timer(&mut self, n: NodeId, timer: TimerId, clock: ClockKind, at: LocalTime) {
        let slot = &mut self.nodes[n].timers[timer as usize];
        slot.gen = slot.gen.wrapping_add(1);
        slot.armed = true;
        slot.fell_due = false;
        slot.clock = Some(clock);
        slot.at = at;
        self.schedule_timer(n, timer);
    }

    /// Node `n`'s logic cancelled timer `timer`: its queue entry, if any, is now stale.
    pub(super) fn cancel_timer(&mut self, n: NodeId, timer: TimerId) {
        let slot = &mut self.nodes[n].timers[timer as usize];
        slot.gen = slot.gen.wrapping_add(1);
        slot.armed = false;
        slot.fell_due = false;
    }

    /// Maps timer `timer` of node `n` to true time and queues it (if its clock can reach it).
    pub(super) fn schedule_timer(&mut self, n: NodeId, timer: TimerId) {
        let due = self.timer_due(n, timer);
        self.queue_timer(n, timer, due);
    }

    /// When timer `timer` of node `n` falls due under the current clock mapping.
    pub(super) fn timer_due(&self, n: NodeId, timer: TimerId) -> SimTime {
        let slot = &self.nodes[n].timers[timer as usize];
        let clock = slot.clock.expect("an armed timer has a clock");
        self.clocks[n].reaches(clock, slot.at, self.now)
    }

    /// Queues timer `timer` of node `n` at `due` under its current generation (never, if a
    /// stalled clock cannot reach it).
    pub(super) fn queue_timer(&mut self, n: NodeId, timer: TimerId, due: SimTime) {
        let slot = &mut self.nodes[n].timers[timer as usize];
        slot.due = due;
        if due != SimTime::NEVER {
            let ev = Ev::Timer {
                node: n as u32,
                timer,
                gen: slot.gen,
            };
            self.queue.push(due, ev);
        }
    }

    /// The mapping of node `n`'s clocks changed: re-map its pending timers (`wall_only`: those
    /// on the clocks a wall step moves). A timer that already fell due during a pause keeps its place in the
    /// deferred list: its clock reached the deadline before the change. A timer whose due
    /// instant did not move keeps its queue entry, and so its place among events of that
    /// instant: a change that moves nothing changes nothing.
    pub(super) fn remap_timers(&mut self, n: NodeId, wall_only: bool) {
        for timer in 0..MAX_TIMERS {
            let slot = self.nodes[n].timers[timer];
            let moved = !wall_only || slot.clock.is_some_and(ClockKind::follows_wall);
            if !slot.armed || slot.fell_due || !moved {
                continue;
            }
            let due = self.timer_due(n, timer as TimerId);
            if due == slot.due {
                continue;
            }
            let slot = &mut self.nodes[n].timers[timer];
            slot.gen = slot.gen.wrapping_add(1);
            self.queue_timer(n, timer as TimerId, due);
        }
    }
}
