//! The effects of admitted requests, waiting out their service time beside the event queue.
//!
//! Every admitted request takes effect `workload.service_time` after its admission: one
//! constant delay, added to a true time that never goes back, under a sequence number that only
//! grows. So the effects fall due in the order they were admitted, and they wait here in a
//! first-in first-out list instead of the queue's heap and slab: each under the (time, seq) key
//! it would have had there (its sequence number reserved from the queue at admission,
//! [`EventQueue::reserve_seq`](super::queue::EventQueue::reserve_seq)), and the run merges the
//! list's head with the queue's next event and the streams' next arrival by that key, so the
//! order of every event is the one of a single queue holding them all. A push and a take cost
//! O(1) and move one small entry; the events in flight that `run --stats` reports count them
//! as before.
//!
//! Memory is bounded by the requests admitted within one service time, not by the run's length.

use super::queue::order_of;
#[cfg(test)]
use super::queue::time_of;
use super::Ev;
use crate::msg::Token;
use crate::strategy::Request;
use crate::time::SimTime;

/// An admitted request waiting for its service time: due at `at` at node `node` (admitted in
/// its life `life` under `token`), named `op` in the history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Effect {
    /// The time in the upper 64 bits, the sequence number in the lower.
    order: u128,
    pub(super) node: u32,
    pub(super) life: u32,
    pub(super) kind: Request,
    pub(super) token: Token,
    pub(super) op: u64,
}

impl Effect {
    /// The effect of request `kind` (`op` in the history), admitted at node `node` in its life
    /// `life` under `token`, due at `at` under sequence number `seq`.
    pub(super) fn new(
        (at, seq): (SimTime, u64),
        (node, life): (u32, u32),
        kind: Request,
        token: Token,
        op: u64,
    ) -> Effect {
        Effect {
            order: order_of(at, seq),
            node,
            life,
            kind,
            token,
            op,
        }
    }

    /// Its event, for a node that cannot take it now (it waits in the node's deferred or held
    /// list as an event).
    pub(super) fn event<M>(self) -> Ev<M> {
        Ev::Effect {
            node: self.node,
            life: self.life,
            kind: self.kind,
            token: self.token,
            op: self.op,
        }
    }

    /// When it is due.
    #[cfg(test)]
    pub(super) fn at(&self) -> SimTime {
        time_of(self.order)
    }
}

/// The admitted requests' effects in (time, seq) order, which is the order of admission: a
/// vector whose front is dropped by an index (a busy run has one or two waiting, and the list
/// empties often; it is compacted when it does, or once half of it is behind the index). A
/// `VecDeque` took its entries through memory in calls that stalled on store forwarding. (The
/// oracle's reads under way are kept the same way; one generic list for both, tried, made the
/// 600 s cut of the canonical hour 3% to 4% slower, so each keeps its own few lines.)
#[derive(Default)]
pub(super) struct Service {
    waiting: Vec<Effect>,
    /// The next effect's place in `waiting`.
    from: usize,
}

impl Service {
    /// Effect `e` waits for its time (keyed after every effect waiting: see the module doc).
    #[inline]
    pub(super) fn push(&mut self, e: Effect) {
        debug_assert!(
            self.waiting[self.from..]
                .last()
                .is_none_or(|b| b.order < e.order),
            "effects fall due in the order they were admitted"
        );
        self.waiting.push(e);
    }

    /// Effects waiting.
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.waiting.len() - self.from
    }

    /// The order key ((time, seq) in 128 bits) of the next effect, if there is one.
    #[inline]
    pub(super) fn next_order(&self) -> Option<u128> {
        self.waiting.get(self.from).map(|e| e.order)
    }

    /// Takes out the next effect (there must be one: [`Service::next_order`] said so).
    #[inline]
    pub(super) fn take(&mut self) -> Effect {
        let e = self.waiting[self.from];
        self.from += 1;
        if self.from == self.waiting.len() {
            self.waiting.clear();
            self.from = 0;
        } else if self.from >= 64 && 2 * self.from >= self.waiting.len() {
            self.compact();
        }
        e
    }

    /// Drops the effects taken, half or more of the list.
    #[inline(never)]
    fn compact(&mut self) {
        self.waiting.drain(..self.from);
        self.from = 0;
    }

    /// The time of the next effect, if there is one.
    #[cfg(test)]
    fn next_at(&self) -> Option<SimTime> {
        self.next_order().map(time_of)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Taken while others are pushed, past the point where the list drops what was taken (the
    /// 64th take of 100 waiting, with 36 left), effects still come out in order, and the count
    /// waiting follows: 100 pushed, 70 taken, 10 pushed, 40 left.
    #[test]
    fn effects_keep_their_order_across_a_compaction() {
        let mut s = Service::default();
        let read = Request::Read { key: 0 };
        let push = |s: &mut Service, i: u64| {
            s.push(Effect::new(
                (SimTime::from_ns(i as i64), i),
                (0, 0),
                read,
                1,
                i,
            ));
        };
        (0..100).for_each(|i| push(&mut s, i));
        let first: Vec<u64> = (0..70).map(|_| s.take().op).collect();
        assert_eq!(first, (0..70).collect::<Vec<_>>());
        assert_eq!((s.len(), s.waiting.len()), (30, 36));
        (100..110).for_each(|i| push(&mut s, i));
        assert_eq!(s.len(), 40);
        let rest: Vec<u64> = (0..40).map(|_| s.take().op).collect();
        assert_eq!(rest, (70..110).collect::<Vec<_>>());
        assert_eq!((s.len(), s.next_order(), s.waiting.len()), (0, None, 0));
    }

    #[test]
    fn effects_come_out_in_the_order_they_were_admitted() {
        let mut s = Service::default();
        let read = Request::Read { key: 0 };
        s.push(Effect::new((SimTime::from_ns(5), 1), (0, 0), read, 1, 10));
        s.push(Effect::new((SimTime::from_ns(5), 3), (1, 0), read, 1, 11));
        s.push(Effect::new((SimTime::from_ns(9), 4), (2, 1), read, 2, 12));
        assert_eq!(s.len(), 3);
        assert_eq!(s.next_order(), Some(order_of(SimTime::from_ns(5), 1)));
        let ops: Vec<(i64, u64)> = std::iter::from_fn(|| {
            s.next_at()?;
            let e = s.take();
            Some((e.at().ns(), e.op))
        })
        .collect();
        assert_eq!(ops, [(5, 10), (5, 11), (9, 12)]);
        assert_eq!(s.len(), 0);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "in the order they were admitted")]
    fn an_effect_keyed_before_the_last_is_refused() {
        let mut s = Service::default();
        let read = Request::Read { key: 0 };
        s.push(Effect::new((SimTime::from_ns(5), 2), (0, 0), read, 1, 10));
        s.push(Effect::new((SimTime::from_ns(5), 1), (0, 0), read, 1, 11));
    }
}
