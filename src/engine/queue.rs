//! The event queue: events in (true time, sequence number) order.
//!
//! Every push takes the next sequence number, so events at the same nanosecond come out in the
//! order they were scheduled: the order is total and repeatable. The two make one 128-bit key
//! (time above, sequence below; times are never negative), compared in one go.
//!
//! Events scheduled before the run begins (the first clock syncs) wait in a list sorted once,
//! at the first look; the binary heap holds only what the run schedules as it goes (messages,
//! timers, the fixed-rate stream's operations, pause ends). Three kinds of events are not
//! queued: the fault schedule, which the engine merges in as the run reaches it
//! (`engine::feed`), a fault at an instant before any queued event; and the Poisson streams'
//! next arrivals and the admitted requests' effects, kept beside the queue (`engine::arrivals`,
//! `engine::service`) under sequence numbers taken from it ([`EventQueue::reserve_seq`]) and
//! merged by the same (time, seq) key
//! ([`order_of`], [`EventQueue::next_order`]). Push and pop cost O(log n) in the events the
//! queue holds, and one comparison with the head of the list. The heap holds only the keys and
//! a slot number; the events themselves sit in a slab whose slots are reused, so sifting moves
//! little memory and a steady run allocates nothing.
//!
//! Invariant (asserted): nothing is scheduled before the last event taken out, so the times that
//! come out never go backward.

use super::Ev;
use crate::time::SimTime;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// An event's place in the order, and its slot in the slab.
#[derive(Clone, Copy, Debug)]
struct Key {
    /// The time in the upper 64 bits, the sequence number in the lower.
    order: u128,
    slot: u32,
}

impl Key {
    fn time(self) -> SimTime {
        time_of(self.order)
    }
}

/// The 128-bit order key of an event at `at` (never negative) under sequence number `seq`.
#[inline]
pub(super) fn order_of(at: SimTime, seq: u64) -> u128 {
    (u128::from(at.ns() as u64) << 64) | u128::from(seq)
}

/// The time of order key `order`.
#[inline]
pub(super) fn time_of(order: u128) -> SimTime {
    SimTime::from_ns((order >> 64) as i64)
}

impl PartialEq for Key {
    fn eq(&self, other: &Key) -> bool {
        self.order == other.order
    }
}

impl Eq for Key {}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Key) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Reversed, so that the standard max-heap gives the earliest key first.
impl Ord for Key {
    fn cmp(&self, other: &Key) -> Ordering {
        other.order.cmp(&self.order)
    }
}

/// Pending events (carrying messages of type `M`) in (time, seq) order.
pub struct EventQueue<M> {
    /// Events scheduled as the run goes, earliest on top.
    heap: BinaryHeap<Key>,
    /// Events scheduled before the first pop; from then on sorted latest first, so that the
    /// earliest is popped off the end.
    scheduled: Vec<Key>,
    /// The first pop has happened: pushes go to the heap.
    running: bool,
    /// The heap's top was taken out but is still in place: the next push takes its place (one
    /// sift down instead of a removal and an insertion: most events schedule another), and
    /// the next pop removes it first.
    top_taken: bool,
    /// The events, each in a slot its key names (empty once taken out).
    slots: Vec<Option<Ev<M>>>,
    free: Vec<u32>,
    next_seq: u64,
    /// The time of the last event taken out.
    popped_to: SimTime,
    /// The key order of the last event taken out (for the order's assertion).
    popped_order: Option<u128>,
    /// How many events were pushed: a run that looks at the head once for many events
    /// (`Sim::run_requests`) knows by it that the head may have changed.
    pushes: u64,
}

impl<M> Default for EventQueue<M> {
    fn default() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            scheduled: Vec::new(),
            running: false,
            top_taken: false,
            slots: Vec::new(),
            free: Vec::new(),
            next_seq: 0,
            popped_to: SimTime::ZERO,
            popped_order: None,
            pushes: 0,
        }
    }
}

impl<M> EventQueue<M> {
    /// Schedules `ev` at `at` (never before the last event taken out).
    pub fn push(&mut self, at: SimTime, ev: Ev<M>) {
        let seq = self.reserve_seq();
        self.push_at_seq(at, seq, ev);
    }

    /// Takes the next sequence number without queueing anything: an event pushed later with
    /// [`EventQueue::push_at_seq`] and this number takes the place among events of its instant
    /// that it would have taken if pushed now (a timer re-armed while an earlier entry of its
    /// own is still queued: that entry carries it forward).
    pub fn reserve_seq(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    /// Schedules `ev` at `at` under sequence number `seq`, reserved earlier (never before the
    /// last event taken out; a key never taken out before).
    pub fn push_at_seq(&mut self, at: SimTime, seq: u64, ev: Ev<M>) {
        assert!(
            at >= self.popped_to,
            "event scheduled in the past: {at:?} < {:?}",
            self.popped_to
        );
        debug_assert!(at >= SimTime::ZERO, "times are never negative");
        debug_assert!(
            seq < self.next_seq,
            "a sequence number is reserved before use"
        );
        self.pushes += 1;
        let slot = match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = Some(ev);
                i
            }
            None => {
                self.slots.push(Some(ev));
                (self.slots.len() - 1) as u32
            }
        };
        let key = Key {
            order: order_of(at, seq),
            slot,
        };
        debug_assert!(
            self.popped_order.is_none_or(|o| key.order > o),
            "an event keyed before the last one taken out"
        );
        if !self.running {
            self.scheduled.push(key);
        } else if self.top_taken {
            self.top_taken = false;
            *self.heap.peek_mut().expect("the taken top is in place") = key;
        } else {
            self.heap.push(key);
        }
    }

    /// How many events were pushed so far (the head can have moved only if this changed).
    #[inline]
    pub fn pushes(&self) -> u64 {
        self.pushes
    }

    /// Events pending (scheduled and not yet taken out).
    pub fn len(&self) -> usize {
        self.heap.len() - usize::from(self.top_taken) + self.scheduled.len()
    }

    /// The order key ((time, seq) in 128 bits) of the next event, if there is one.
    #[inline]
    pub fn next_order(&mut self) -> Option<u128> {
        self.settle();
        match (self.heap.peek(), self.scheduled.last()) {
            (Some(h), Some(s)) => Some(h.order.min(s.order)),
            (h, s) => h.or(s).map(|k| k.order),
        }
    }

    /// Before a look at the next event: the list sorted (at the first), the taken top removed.
    fn settle(&mut self) {
        if !self.running {
            self.running = true;
            self.scheduled.sort_unstable();
        }
        if self.top_taken {
            self.top_taken = false;
            self.heap.pop();
        }
    }

    /// Takes out the next event: the earliest, and of those the first scheduled.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, Ev<M>)> {
        self.settle();
        // `Key`'s order is reversed: the greater key is the earlier event.
        let key = match (self.heap.peek(), self.scheduled.last()) {
            (Some(h), Some(s)) if s > h => self.scheduled.pop(),
            (Some(&h), _) => {
                self.top_taken = true;
                Some(h)
            }
            (None, _) => self.scheduled.pop(),
        }?;
        let at = key.time();
        debug_assert!(at >= self.popped_to, "the queue gave an event out of order");
        self.popped_to = at;
        self.popped_order = Some(key.order);
        self.free.push(key.slot);
        let ev = self.slots[key.slot as usize].take();
        Some((at, ev.expect("a queued key names a full slot")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(node: u32) -> Ev<()> {
        Ev::Generate { node }
    }

    fn node(e: Ev<()>) -> u32 {
        match e {
            Ev::Generate { node } => node,
            _ => unreachable!("only Generate events here"),
        }
    }

    /// Events come out by time, then in the order they were scheduled, whether they were
    /// scheduled before the run (the list) or during it (the heap).
    #[test]
    fn events_come_out_by_time_then_by_scheduling_order() {
        let mut q = EventQueue::default();
        // Before the run: 0 and 1 at 10 ns, 2 at 5 ns, 3 at 10 ns.
        q.push(SimTime::from_ns(10), ev(0));
        q.push(SimTime::from_ns(10), ev(1));
        q.push(SimTime::from_ns(5), ev(2));
        q.push(SimTime::from_ns(10), ev(3));
        assert_eq!(q.pop().map(|(t, e)| (t.ns(), node(e))), Some((5, 2)));
        // During it: 4 at 10 ns comes after 0, 1 and 3 (scheduled earlier); 5 at 7 ns first.
        q.push(SimTime::from_ns(10), ev(4));
        q.push(SimTime::from_ns(7), ev(5));
        let rest: Vec<(i64, u32)> = std::iter::from_fn(|| q.pop())
            .map(|(t, e)| (t.ns(), node(e)))
            .collect();
        assert_eq!(rest, [(7, 5), (10, 0), (10, 1), (10, 3), (10, 4)]);
    }

    #[test]
    #[should_panic(expected = "event scheduled in the past")]
    fn nothing_is_scheduled_in_the_past() {
        let mut q = EventQueue::default();
        q.push(SimTime::from_ns(10), ev(0));
        q.pop();
        q.push(SimTime::from_ns(9), ev(1));
    }

    proptest::proptest! {
        /// Any mix of pushes (before the run and during it, ties included) and pops gives the
        /// events in (time, scheduling order), as a sorted map of (time, seq) does.
        #[test]
        fn the_queue_is_a_sorted_map_of_time_and_seq(
            before in proptest::collection::vec(0i64..50, 0..40),
            ops in proptest::collection::vec(proptest::option::of(0i64..20), 0..400),
        ) {
            let mut q = EventQueue::default();
            let mut model = std::collections::BTreeMap::new();
            let mut seq = 0u32;
            for at in before {
                q.push(SimTime::from_ns(at), ev(seq));
                model.insert((at, seq), seq);
                seq += 1;
            }
            let mut now = 0i64;
            for op in ops {
                match op {
                    Some(ahead) => {
                        q.push(SimTime::from_ns(now + ahead), ev(seq));
                        model.insert((now + ahead, seq), seq);
                        seq += 1;
                    }
                    None => {
                        let want = model.pop_first().map(|((t, _), id)| (t, id));
                        let got = q.pop().map(|(t, e)| (t.ns(), node(e)));
                        proptest::prop_assert_eq!(got, want);
                        if let Some((t, _)) = got {
                            now = t;
                        }
                    }
                }
            }
            let rest: Vec<(i64, u32)> = std::iter::from_fn(|| q.pop())
                .map(|(t, e)| (t.ns(), node(e)))
                .collect();
            let want: Vec<(i64, u32)> = model.into_iter().map(|((t, _), id)| (t, id)).collect();
            proptest::prop_assert_eq!(rest, want);
        }
    }
}
