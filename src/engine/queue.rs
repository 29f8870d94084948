//! The event queue: a binary heap keyed by (true time, sequence number).
//!
//! Every push takes the next sequence number, so events at the same nanosecond come out in the
//! order they were scheduled: the order is total and repeatable. Push and pop cost O(log n). The
//! heap holds only the 24-byte keys; the events themselves sit in a slab whose slots are reused,
//! so sifting moves little memory and a steady run allocates nothing.
//!
//! Invariant (asserted): nothing is scheduled before the last event taken out, so the times that
//! come out never go backward.

use super::Ev;
use crate::time::SimTime;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Pending events (carrying messages of type `M`) in (time, seq) order.
pub struct EventQueue<M> {
    /// (time, seq, slot), smallest first.
    heap: BinaryHeap<Reverse<(SimTime, u64, u32)>>,
    slots: Vec<Ev<M>>,
    free: Vec<u32>,
    next_seq: u64,
    /// The time of the last event taken out.
    popped_to: SimTime,
}

impl<M> Default for EventQueue<M> {
    fn default() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            slots: Vec::new(),
            free: Vec::new(),
            next_seq: 0,
            popped_to: SimTime::ZERO,
        }
    }
}

impl<M: Copy> EventQueue<M> {
    /// Schedules `ev` at `at` (never before the last event taken out).
    pub fn push(&mut self, at: SimTime, ev: Ev<M>) {
        assert!(
            at >= self.popped_to,
            "event scheduled in the past: {at:?} < {:?}",
            self.popped_to
        );
        let seq = self.next_seq;
        self.next_seq += 1;
        let slot = match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = ev;
                i
            }
            None => {
                self.slots.push(ev);
                (self.slots.len() - 1) as u32
            }
        };
        self.heap.push(Reverse((at, seq, slot)));
    }

    /// Takes out the next event: the earliest, and of those the first scheduled.
    pub fn pop(&mut self) -> Option<(SimTime, Ev<M>)> {
        let Reverse((at, _, slot)) = self.heap.pop()?;
        debug_assert!(at >= self.popped_to, "the heap gave an event out of order");
        self.popped_to = at;
        self.free.push(slot);
        Some((at, self.slots[slot as usize]))
    }
}
