//! The Poisson streams' next arrivals, kept beside the event queue instead of in it.
//!
//! Each node's Poisson stream of reads and each of writes holds exactly one pending arrival,
//! drawn when the one before it arrives. Most of a busy run's events are these arrivals: they
//! are kept here, one small entry per stream (its next arrival's place in the event order, its
//! node, whether it writes, its key), not as events in the queue's slab. The run merges the
//! earliest of them with the queue's next event by the same 128-bit (time, sequence) key: an
//! arrival's sequence number is reserved from the queue
//! ([`EventQueue::reserve_seq`](super::queue::EventQueue::reserve_seq)) at the moment it would
//! have been pushed there, so the order of every event is the one of a single queue holding
//! them all, and the events in flight that `run --stats` reports count them as before.
//!
//! The entries sit in a vector sorted latest first: the next arrival is taken off its end, and
//! a new one is put in its place by one step of an insertion sort from that end (each entry
//! earlier than it moves up one place as it is passed: as a rule one or two), or beyond
//! [`SCAN_UP_TO`] entries by a binary search and an insertion (a few hundred bytes moved at
//! most: a run has at most two streams a node). For the canonical hour's six streams this
//! costs fewer instructions per arrival than the binary heap it replaced (its sift down), and
//! less time than finding the place first and moving the entries after it with `Vec::insert`
//! (a call to `memmove`): as many instructions, about 5% less time on the 600 s cut of the
//! canonical hour. A winner tree over the streams, tried before, took more than the heap.

use super::queue::{order_of, time_of};
use crate::strategy::Key;
use crate::time::SimTime;

/// A stream's next arrival.
#[derive(Clone, Copy, Debug)]
struct Entry {
    /// The time in the upper 64 bits, the sequence number in the lower.
    order: u128,
    node: u32,
    write: bool,
    key: Key,
}

/// An arrival taken out: due at `at` at node `node`, a write or a read of `key`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Arrival {
    pub(super) at: SimTime,
    pub(super) node: u32,
    pub(super) write: bool,
    pub(super) key: Key,
}

/// The streams' pending arrivals in (time, seq) order.
#[derive(Default)]
pub(super) struct Arrivals {
    /// Latest first: the next arrival is the last, taken off the end.
    sorted: Vec<Entry>,
}

/// Up to this many pending arrivals, a new one finds its place by a step of an insertion sort
/// from the earliest; beyond, by a binary search.
const SCAN_UP_TO: usize = 16;

impl Arrivals {
    /// The next arrival of a stream of `node` (of writes if `write`) is due at `at` under
    /// sequence number `seq`, reserved from the queue now, and names `key`.
    #[inline(always)]
    pub(super) fn push(&mut self, at: SimTime, seq: u64, node: u32, write: bool, key: Key) {
        debug_assert!(at >= SimTime::ZERO, "times are never negative");
        let entry = Entry {
            order: order_of(at, seq),
            node,
            write,
            key,
        };
        let v = &mut self.sorted;
        if v.len() > SCAN_UP_TO {
            // The first place from which every entry is earlier than this one.
            let place = v.partition_point(|e| e.order > entry.order);
            v.insert(place, entry);
            return;
        }
        // One step of an insertion sort from the earliest end: each earlier entry moves up one
        // place as it is passed (as a rule one or two), and the new one takes the last freed.
        v.push(entry);
        let mut i = v.len() - 1;
        while i > 0 && v[i - 1].order < entry.order {
            v[i] = v[i - 1];
            i -= 1;
        }
        v[i] = entry;
        debug_assert!(
            v.windows(2).all(|w| w[0].order > w[1].order),
            "arrivals kept latest first"
        );
    }

    /// Arrivals pending (not taken out).
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.sorted.len()
    }

    /// The order key ((time, seq) in 128 bits) of the next arrival, if there is one.
    #[inline]
    pub(super) fn next_order(&mut self) -> Option<u128> {
        self.sorted.last().map(|e| e.order)
    }

    /// Takes out the next arrival (there must be one: [`Arrivals::next_order`] said so).
    #[inline]
    pub(super) fn take(&mut self) -> Arrival {
        let e = self.sorted.pop().expect("an arrival is pending");
        Arrival {
            at: time_of(e.order),
            node: e.node,
            write: e.write,
            key: e.key,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::queue::EventQueue;
    use crate::engine::Ev;
    use std::collections::BTreeMap;

    /// What came out: a queued event (by its id) or an arrival (by its node, kind and key).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Out {
        Queued(u32),
        Arrived(u32, bool, Key),
    }

    /// Takes the next event of the two, as the run merges them: the smaller order key.
    fn next(q: &mut EventQueue<()>, a: &mut Arrivals) -> Option<(i64, Out)> {
        let queued = q.next_order();
        let arriving = a.next_order();
        match (queued, arriving) {
            (Some(qo), Some(ao)) if ao < qo => Some(arrival(a)),
            (Some(_), _) => q.pop().map(|(t, e)| (t.ns(), Out::Queued(id(e)))),
            (None, Some(_)) => Some(arrival(a)),
            (None, None) => None,
        }
    }

    fn arrival(a: &mut Arrivals) -> (i64, Out) {
        let x = a.take();
        (x.at.ns(), Out::Arrived(x.node, x.write, x.key))
    }

    fn id(e: Ev<()>) -> u32 {
        match e {
            Ev::Generate { node } => node,
            _ => unreachable!("only Generate events here"),
        }
    }

    #[test]
    fn arrivals_come_out_by_time_then_by_sequence() {
        let mut a = Arrivals::default();
        a.push(SimTime::from_ns(10), 0, 0, false, 7);
        a.push(SimTime::from_ns(5), 1, 1, true, 8);
        a.push(SimTime::from_ns(10), 2, 2, false, 9);
        assert_eq!(a.len(), 3);
        assert_eq!(a.next_order(), Some(order_of(SimTime::from_ns(5), 1)));
        let x = a.take();
        assert_eq!((x.at.ns(), x.node, x.write, x.key), (5, 1, true, 8));
        assert_eq!(a.len(), 2);
        // The stream's next takes the taken top's place.
        a.push(SimTime::from_ns(10), 3, 1, true, 1);
        assert_eq!(a.len(), 3);
        let rest: Vec<u32> = std::iter::from_fn(|| a.next_order().map(|_| a.take().node)).collect();
        assert_eq!(rest, [0, 2, 1]);
        assert_eq!(a.len(), 0);
    }

    proptest::proptest! {
        /// Streams (each with at most one arrival pending, its next drawn as it arrives or
        /// later) and queued events, every sequence number reserved from the queue, merged by
        /// their order key, come out as one sorted map of (time, seq) gives them.
        #[test]
        fn arrivals_merged_with_the_queue_are_a_sorted_map_of_time_and_seq(
            streams in 1usize..40,
            ops in proptest::collection::vec((0u8..4, 0usize..40, 0i64..20), 0..600),
        ) {
            let mut q = EventQueue::default();
            let mut a = Arrivals::default();
            let mut model = BTreeMap::new();
            let mut pending = vec![false; streams];
            let mut ids = 0u32;
            let mut now = 0i64;
            for (op, s, ahead) in ops {
                let s = s % streams;
                match op {
                    0 => {
                        let seq = q.reserve_seq();
                        q.push_at_seq(SimTime::from_ns(now + ahead), seq, Ev::Generate { node: ids });
                        model.insert((now + ahead, seq), Out::Queued(ids));
                        ids += 1;
                    }
                    1 | 2 if !pending[s] => {
                        let seq = q.reserve_seq();
                        let (node, write, key) = (s as u32 / 2, s % 2 == 1, ids);
                        a.push(SimTime::from_ns(now + ahead), seq, node, write, key);
                        model.insert((now + ahead, seq), Out::Arrived(node, write, key));
                        pending[s] = true;
                        ids += 1;
                    }
                    _ => {
                        let want = model.pop_first().map(|((t, _), o)| (t, o));
                        let got = next(&mut q, &mut a);
                        proptest::prop_assert_eq!(got, want);
                        if let Some((t, o)) = got {
                            now = t;
                            if let Out::Arrived(node, write, _) = o {
                                pending[node as usize * 2 + usize::from(write)] = false;
                            }
                        }
                    }
                }
                proptest::prop_assert_eq!(q.len() + a.len(), model.len());
            }
            let rest: Vec<(i64, Out)> = std::iter::from_fn(|| next(&mut q, &mut a)).collect();
            let want: Vec<(i64, Out)> = model.into_iter().map(|((t, _), o)| (t, o)).collect();
            proptest::prop_assert_eq!(rest, want);
        }
    }
}
