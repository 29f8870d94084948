//! The event queue: a binary heap keyed by (true time, sequence number).
//!
//! Every push takes the next sequence number, so events at the same nanosecond come out in the
//! order they were scheduled: the order is total and repeatable. Push and pop cost O(log n).

use super::Ev;
use crate::time::SimTime;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Entry {
    at: SimTime,
    seq: u64,
    ev: Ev,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.at == o.at && self.seq == o.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    /// Reversed, so that the max-heap yields the earliest (time, seq) first.
    fn cmp(&self, o: &Self) -> Ordering {
        (o.at, o.seq).cmp(&(self.at, self.seq))
    }
}

/// Pending events in (time, seq) order.
#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    next_seq: u64,
}

impl EventQueue {
    pub fn push(&mut self, at: SimTime, ev: Ev) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { at, seq, ev });
    }

    pub fn pop(&mut self) -> Option<(SimTime, Ev)> {
        self.heap.pop().map(|e| (e.at, e.ev))
    }
}
