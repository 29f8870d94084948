//! [`Throughput`]: an observer that counts, per bin of true time, the reads served and the writes
//! that took effect, summed over all nodes, to show when a run's requests stop and resume.
//!
//! Bin `i` covers `[i * bin, (i + 1) * bin)`. Memory is one pair of counters per bin up to the
//! latest event (and, once the run finishes, up to its end); nothing is kept per event.

use super::{Observer, TraceEvent, TraceKind};
use crate::time::{Dur, SimTime};

/// Reads served and writes applied per bin of true time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Throughput {
    bin_ns: i64,
    /// `(reads, writes)` per bin, from time 0.
    counts: Vec<(u32, u32)>,
    /// Of those writes, the unsafe ones (applied out of token order: a stale holder's), per bin.
    unsafe_counts: Vec<u32>,
}

impl Throughput {
    /// Counts in bins of `bin`.
    ///
    /// # Panics
    /// If `bin` is not positive.
    pub fn new(bin: Dur) -> Throughput {
        assert!(bin.ns() > 0, "a throughput bin must be positive, not {bin}");
        Throughput {
            bin_ns: bin.ns(),
            counts: Vec::new(),
            unsafe_counts: Vec::new(),
        }
    }

    /// The width of a bin.
    pub fn bin(&self) -> Dur {
        Dur::from_ns(self.bin_ns)
    }

    /// The number of bins so far: up to the latest event, or the run's end once it finished.
    pub fn len(&self) -> usize {
        self.counts.len()
    }

    /// Whether there are no bins yet (no read or write, and the run not finished).
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// `(reads served, writes applied)` per bin, from time 0.
    pub fn counts(&self) -> &[(u32, u32)] {
        &self.counts
    }

    /// Reads served per bin: every [`TraceKind::Read`].
    pub fn reads(&self) -> impl ExactSizeIterator<Item = u32> + '_ {
        self.counts.iter().map(|c| c.0)
    }

    /// Writes that took effect per bin: every [`TraceKind::WriteArrived`] applied and not a
    /// duplicate.
    pub fn writes(&self) -> impl ExactSizeIterator<Item = u32> + '_ {
        self.counts.iter().map(|c| c.1)
    }

    /// Of the writes per bin, those applied unsafely ([`TraceKind::WriteArrived`] with
    /// `unsafe_write`): a stale holder's write that took effect.
    pub fn unsafe_writes(&self) -> &[u32] {
        &self.unsafe_counts
    }

    /// The index of the bin of `t`, grown into.
    fn index(&mut self, t: SimTime) -> usize {
        let i = (t.ns().max(0) / self.bin_ns) as usize;
        if i >= self.counts.len() {
            self.counts.resize(i + 1, (0, 0));
            self.unsafe_counts.resize(i + 1, 0);
        }
        i
    }

    /// The bin of `t`, grown into.
    fn at(&mut self, t: SimTime) -> &mut (u32, u32) {
        let i = self.index(t);
        &mut self.counts[i]
    }
}

impl Observer for Throughput {
    fn event(&mut self, e: &TraceEvent) {
        match e.kind {
            TraceKind::Read { .. } => {
                let c = self.at(e.t);
                c.0 = c.0.saturating_add(1);
            }
            TraceKind::WriteArrived {
                applied: true,
                duplicate: false,
                unsafe_write,
                ..
            } => {
                let i = self.index(e.t);
                self.counts[i].1 = self.counts[i].1.saturating_add(1);
                if unsafe_write {
                    self.unsafe_counts[i] = self.unsafe_counts[i].saturating_add(1);
                }
            }
            _ => {}
        }
    }

    /// Grows the bins to cover `[0, end)`, so that quiet time at the end of the run counts as
    /// empty bins.
    fn finish(&mut self, end: SimTime) {
        let n = (end.ns().max(0) as u64).div_ceil(self.bin_ns as u64) as usize;
        if n > self.counts.len() {
            self.counts.resize(n, (0, 0));
            self.unsafe_counts.resize(n, 0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::LocalTime;

    fn event(t_ns: i64, node: usize, kind: TraceKind) -> TraceEvent<'static> {
        TraceEvent {
            t: SimTime::from_ns(t_ns),
            node,
            clock: crate::trace::Readings::Given {
                mono: LocalTime::from_ns(t_ns),
                wall: LocalTime::from_ns(t_ns),
            },
            kind,
        }
    }

    fn read(t_ns: i64, node: usize) -> TraceEvent<'static> {
        let kind = TraceKind::Read {
            token: 1,
            zombie: false,
            stale: false,
        };
        event(t_ns, node, kind)
    }

    fn write(t_ns: i64, applied: bool, duplicate: bool) -> TraceEvent<'static> {
        let kind = TraceKind::WriteArrived {
            writer: 1,
            token: 1,
            applied,
            unsafe_write: false,
            duplicate,
        };
        event(t_ns, 0, kind)
    }

    #[test]
    fn counts_reads_and_applied_writes_per_bin_over_all_nodes() {
        // Bins of 1 ms: bin i is [i ms, (i + 1) ms).
        let mut tp = Throughput::new(Dur::from_ms(1));
        assert!(tp.is_empty());
        for e in [
            read(0, 0),                     // bin 0 (its first instant)
            read(999_999, 1),               // bin 0 (its last nanosecond), another node
            read(1_000_000, 2),             // bin 1: exactly on the boundary, so the later bin
            write(1_500_000, true, false),  // bin 1: applied
            write(1_600_000, false, false), // fenced: not counted
            write(1_700_000, true, true),   // a duplicate: not counted
            read(3_000_001, 0),             // bin 3; bin 2 stays empty
            write(3_999_999, true, false),  // bin 3
        ] {
            tp.event(&e);
        }
        assert_eq!(tp.counts(), [(2, 0), (1, 1), (0, 0), (1, 1)]);
        assert_eq!(tp.reads().collect::<Vec<_>>(), [2, 1, 0, 1]);
        assert_eq!(tp.writes().collect::<Vec<_>>(), [0, 1, 0, 1]);
        assert_eq!(tp.bin(), Dur::from_ms(1));
        assert_eq!(tp.len(), 4);
    }

    #[test]
    fn unsafe_writes_are_counted_apart_and_among_the_writes() {
        let mut tp = Throughput::new(Dur::from_ms(1));
        let unsafe_at = |t_ns: i64, applied: bool| {
            let kind = TraceKind::WriteArrived {
                writer: 2,
                token: 1,
                applied,
                unsafe_write: true,
                duplicate: false,
            };
            event(t_ns, 0, kind)
        };
        tp.event(&write(500_000, true, false)); // bin 0: a safe write
        tp.event(&unsafe_at(2_100_000, true)); // bin 2: an unsafe write, applied
        tp.event(&unsafe_at(2_200_000, false)); // not applied (fenced): not counted at all
        tp.finish(SimTime::from_ns(4_000_000));
        // Writes per bin count both applied ones; the unsafe one is also counted apart.
        assert_eq!(tp.writes().collect::<Vec<_>>(), [1, 0, 1, 0]);
        assert_eq!(tp.unsafe_writes(), [0, 0, 1, 0]);
    }

    #[test]
    fn other_events_count_nothing_and_grow_no_bin() {
        let mut tp = Throughput::new(Dur::from_ms(1));
        tp.event(&event(5_000_000, 0, TraceKind::Crash));
        tp.event(&event(6_000_000, 0, TraceKind::Rejected { write: false }));
        let sent = TraceKind::WriteSent {
            token: 1,
            zombie: false,
        };
        tp.event(&event(7_000_000, 0, sent));
        assert!(tp.is_empty());
    }

    #[test]
    fn finish_covers_the_run_and_never_drops_a_bin() {
        // Bins of 2.5 ms: a read at 4 ms is in bin 1 ([2.5, 5) ms).
        let mut tp = Throughput::new(Dur::from_us(2_500));
        tp.event(&read(4_000_000, 0));
        // A run ending at 10.1 ms has 5 bins: [0, 2.5), ..., [10, 12.5) ms, the last partly.
        tp.finish(SimTime::from_ns(10_100_000));
        assert_eq!(tp.counts(), [(0, 0), (1, 0), (0, 0), (0, 0), (0, 0)]);
        // One ending exactly on a boundary (7.5 ms) needs 3 bins; the 5 already there stay.
        let mut tp2 = Throughput::new(Dur::from_us(2_500));
        tp2.finish(SimTime::from_ns(7_500_000));
        assert_eq!(tp2.len(), 3);
        tp.finish(SimTime::from_ns(7_500_000));
        assert_eq!(tp.len(), 5);
    }

    #[test]
    #[should_panic(expected = "must be positive")]
    fn a_zero_bin_is_refused() {
        let _ = Throughput::new(Dur::ZERO);
    }
}
