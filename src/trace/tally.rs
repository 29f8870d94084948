//! A [`Tally`]: client requests of one kind ([`Countable`]) counted by node and chart bin, where
//! an observer no longer needs them one by one.
//!
//! Most of a busy run's requests are refused at once by a node that holds nothing, or served
//! without harm, and past the first few thousand a report keeps nothing of each but a count in
//! its bin of the chart. An observer that has reached that point can ask the engine to count
//! them in its stead ([`super::Observer::as_counts`]): the engine then adds each to a tally
//! binned as the observer bins its marks, with no call and no event made, and hands the tally
//! back at the run's end ([`super::Observer::counted`]).

use super::timeline::{BinSpan, BINS};
use crate::msg::NodeId;
use crate::time::SimTime;

/// The requests the engine can count for an observer instead of telling it of each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Countable {
    /// A request refused as it arrived (not one that waited first: its invocation was told).
    Refusals,
    /// A read served, invoked after the observer asked for counts, that was neither stale nor a
    /// zombie action and returned a value some client had seen before: its answer and its
    /// `Read` event (its invocation is told as ever).
    PlainReads,
}

/// Requests per node in each of [`BINS`] equal bins of a run, as the chart recorder bins its
/// marks.
#[derive(Clone, Debug, PartialEq)]
pub struct Tally {
    /// The run's length the bins divide (> 0).
    width_ns: i64,
    /// The last bin a request fell in (they come in time order: most need no division).
    last_bin: BinSpan,
    /// `[node * BINS + bin]`.
    bins: Vec<u32>,
    total: u64,
}

impl Tally {
    /// An empty tally for `nodes` nodes over a run `width_ns` long (at least 1 ns is used).
    pub fn new(nodes: usize, width_ns: i64) -> Tally {
        Tally {
            width_ns: width_ns.max(1),
            last_bin: BinSpan::EMPTY,
            bins: vec![0; nodes * BINS],
            total: 0,
        }
    }

    /// A request at `node` at `t`.
    #[inline]
    pub fn count(&mut self, t: SimTime, node: NodeId) {
        let t_ns = t.ns();
        if !(self.last_bin.from..self.last_bin.until).contains(&t_ns) {
            self.last_bin = BinSpan::of(t_ns, self.width_ns);
        }
        debug_assert_eq!(
            self.last_bin.bin,
            super::timeline::bin_of(t_ns, self.width_ns)
        );
        self.bins[node * BINS + self.last_bin.bin] += 1;
        self.total += 1;
    }

    /// Requests counted, in all.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Node `node`'s requests, bin by bin.
    pub fn node(&self, node: NodeId) -> &[u32] {
        &self.bins[node * BINS..][..BINS]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run 2,000 ns long: each bin is 2 ns, so instant t falls in bin floor(t / 2), and
    /// instants past the end in the last. Counted out of time order too (a later instant in an
    /// earlier bin is found again, not taken for the bin before it).
    #[test]
    fn counts_each_request_in_its_nodes_bin() {
        let mut t = Tally::new(2, 2_000);
        for (ns, node) in [(0, 0), (1, 0), (2, 0), (1_999, 1), (5_000, 1), (3, 0)] {
            t.count(SimTime::from_ns(ns), node);
        }
        assert_eq!(t.total(), 6);
        assert_eq!(&t.node(0)[..3], &[2, 2, 0]);
        assert_eq!(t.node(0).iter().sum::<u32>(), 4);
        assert_eq!(t.node(1)[BINS - 1], 2);
        assert_eq!(t.node(1).iter().sum::<u32>(), 2);
    }

    /// A run of 0 ns bins as one of 1 ns (every instant in the last bin but 0).
    #[test]
    fn a_run_of_no_length_bins_as_one_nanosecond() {
        let mut t = Tally::new(1, 0);
        t.count(SimTime::from_ns(0), 0);
        t.count(SimTime::from_ns(7), 0);
        assert_eq!((t.node(0)[0], t.node(0)[BINS - 1]), (1, 1));
    }
}
