//! A node's state in the engine (its logic, its pause and stall depths, its deferred events and
//! its timer slots), and its timers: mapped from a local deadline to true time, queued, and
//! re-mapped when the mapping of its clocks changes.

use super::draws::Stream;
use super::workload::Periodic;
use super::{Ev, Sim};
use crate::clock::ClockKind;
use crate::msg::NodeId;
use crate::rng::Rng;
use crate::scenario::{Role, Thread};
use crate::strategy::{NodeLogic, Protocol, TimerId, MAX_TIMERS};
use crate::time::{LocalTime, SimTime};

/// One timer of a node. The slot has at most one live entry in the queue (its carrier, of
/// generation `gen`, due at `carrier`): a timer re-armed to a later deadline keeps its carrier,
/// which, when it comes out, puts the timer back in the queue at the deadline now wanted, under
/// the sequence number reserved when it was re-armed (so it takes the place a fresh entry
/// would have taken). A timer re-armed every microsecond to a deadline seconds ahead holds one
/// queue entry, not millions. A timer moved earlier than its carrier gets a new carrier, and the
/// old entry goes stale (skipped by generation).
#[derive(Clone, Copy, Debug)]
pub(super) struct TimerSlot {
    /// The generation of the carrier; an entry of another generation is stale.
    pub(super) gen: u32,
    /// When the carrier is due ([`SimTime::NEVER`]: the slot has no entry in the queue).
    pub(super) carrier: SimTime,
    pub(super) armed: bool,
    /// The timer fell due while its node was paused and waits in the deferred list: it has fired
    /// as far as the clock is concerned, so a later change of the mapping must not move it.
    pub(super) fell_due: bool,
    pub(super) clock: Option<ClockKind>,
    pub(super) at: crate::time::LocalTime,
    /// The true instant the timer is wanted due ([`SimTime::NEVER`]: a stalled clock).
    pub(super) due: SimTime,
    /// The sequence number reserved for it at `due`.
    pub(super) seq: u64,
}

impl Default for TimerSlot {
    fn default() -> Self {
        TimerSlot {
            gen: 0,
            carrier: SimTime::NEVER,
            armed: false,
            fell_due: false,
            clock: None,
            at: LocalTime::default(),
            due: SimTime::NEVER,
            seq: 0,
        }
    }
}

impl TimerSlot {
    /// Makes the slot's entries stale (its carrier and any entry in the deferred list).
    pub(super) fn forget_entries(&mut self) {
        self.gen = self.gen.wrapping_add(1);
        self.carrier = SimTime::NEVER;
        self.fell_due = false;
    }
}

pub(super) struct Node<L: NodeLogic> {
    pub(super) role: Role,
    pub(super) logic: Option<L>,
    /// What the logic kept when the node last crashed, for its restart.
    pub(super) disk: Option<L::Disk>,
    /// Its disk (`nodes[i].disk`), if the scenario gives it one.
    pub(super) disk_model: Option<super::disk::Disk<L>>,
    /// The node logic's own random stream.
    pub(super) rng: Rng,
    /// Incremented at every crash: a pause end from an earlier life is ignored.
    pub(super) life: u32,
    pub(super) pause_depth: u32,
    pub(super) stall_depth: u32,
    pub(super) deferred: Vec<Ev<L::Msg>>,
    /// How many stalls of each loop (in [`Thread::ALL`] order) are under way.
    pub(super) thread_stalls: [u32; 2],
    /// How many calls of each loop wait for a write to its disk (the loop handles nothing new
    /// until none does).
    pub(super) disk_waits: [u32; 2],
    /// What fell due for a stalled loop while the node ran, in the order it fell due.
    pub(super) held: Vec<Ev<L::Msg>>,
    pub(super) timers: [TimerSlot; MAX_TIMERS],
    pub(super) started: bool,
    pub(super) reads: Option<Stream>,
    pub(super) writes: Option<Stream>,
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
    /// Whether loop `thread` is stalled (a `ThreadStall`).
    pub(super) fn stalled(&self, thread: Thread) -> bool {
        self.thread_stalls[thread as usize] > 0
    }
    /// Whether loop `thread` is stalled or waits for its disk: what it handles waits.
    pub(super) fn blocked(&self, thread: Thread) -> bool {
        self.stalled(thread) || self.disk_waits[thread as usize] > 0
    }
    /// Whether node-bound event `ev` must wait because the loop that handles it is stalled or
    /// waits for its disk (an fsync's end is the disk's, which no loop handles).
    pub(super) fn held_by_stall(&self, ev: &Ev<L::Msg>) -> bool {
        (self.thread_stalls != [0; 2] || self.disk_waits != [0; 2])
            && !matches!(ev, Ev::Durable { .. })
            && self.blocked(self.thread_of(ev))
    }
    /// Which loop handles node-bound event `ev` (the node must be up).
    pub(super) fn thread_of(&self, ev: &Ev<L::Msg>) -> Thread {
        let logic = self.logic.as_ref().expect("an up node has logic");
        match ev {
            Ev::Timer { timer, .. } => logic.thread_of_timer(*timer),
            Ev::Deliver { msg, .. } | Ev::Refused { msg, .. } => logic.thread_of_message(msg),
            _ => Thread::Worker,
        }
    }
}

impl<P: Protocol> Sim<'_, P> {
    /// Node `n`'s logic set timer `timer` on `clock` at local deadline `at` (re-arming it if it
    /// was armed), queued where the clock reaches `at`.
    pub(super) fn set_timer(&mut self, n: NodeId, timer: TimerId, clock: ClockKind, at: LocalTime) {
        let slot = &mut self.nodes[n].timers[timer as usize];
        if slot.fell_due {
            slot.forget_entries(); // the deferred firing is superseded
        }
        slot.armed = true;
        slot.clock = Some(clock);
        slot.at = at;
        self.schedule_timer(n, timer);
    }

    /// Node `n`'s logic cancelled timer `timer`: its carrier, if any, will find it disarmed.
    pub(super) fn cancel_timer(&mut self, n: NodeId, timer: TimerId) {
        let slot = &mut self.nodes[n].timers[timer as usize];
        if slot.fell_due {
            slot.forget_entries();
        }
        slot.armed = false;
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

    /// Wants timer `timer` of node `n` due at `due` (never, if a stalled clock cannot reach it)
    /// under a fresh sequence number: a carrier due no later takes it there when it comes out,
    /// else a new carrier is queued.
    pub(super) fn queue_timer(&mut self, n: NodeId, timer: TimerId, due: SimTime) {
        let slot = &mut self.nodes[n].timers[timer as usize];
        slot.due = due;
        if due == SimTime::NEVER {
            return;
        }
        slot.seq = self.queue.reserve_seq();
        if slot.carrier <= due {
            return;
        }
        slot.gen = slot.gen.wrapping_add(1);
        slot.carrier = due;
        let ev = Ev::Timer {
            node: n as u32,
            timer,
            gen: slot.gen,
            seq: slot.seq,
        };
        self.queue.push_at_seq(due, slot.seq, ev);
    }

    /// Timer `timer`'s queue entry of generation `gen` and sequence number `seq` came out now:
    /// whether it is the timer falling due. A carrier of a timer wanted later goes back into
    /// the queue at that instant; a stale entry, or the carrier of a disarmed or stalled timer,
    /// is dropped.
    pub(super) fn timer_came_out(&mut self, n: NodeId, timer: TimerId, gen: u32, seq: u64) -> bool {
        let now = self.now;
        let slot = &mut self.nodes[n].timers[timer as usize];
        if slot.gen != gen {
            return false;
        }
        slot.carrier = SimTime::NEVER;
        if !slot.armed || slot.due == SimTime::NEVER {
            return false;
        }
        if slot.due == now && slot.seq == seq {
            return true;
        }
        debug_assert!(
            slot.due >= now,
            "a timer is never wanted before its carrier"
        );
        slot.carrier = slot.due;
        let ev = Ev::Timer {
            node: n as u32,
            timer,
            gen,
            seq: slot.seq,
        };
        self.queue.push_at_seq(slot.due, slot.seq, ev);
        false
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
            self.queue_timer(n, timer as TimerId, due);
        }
    }
}
