//! How long reads waited for a node to confirm its authority (Raft's ReadIndex): from the call
//! that took the read up to the one that served it, in true time.
//!
//! Count, sum, minimum and maximum are exact. Quantiles come from an HDR histogram with two
//! significant digits: the top of the bucket the quantile falls in (at most 1% above the true
//! value), clamped to the exact minimum and maximum, so that reads that all waited one round
//! trip report that round trip exactly. The histogram is
//! made at the first confirmed read (runs with none pay nothing) and its size depends on the
//! largest wait, not on how many reads there were.

use crate::time::Dur;
use hdrhistogram::Histogram;

/// The waits of one run's confirmed reads.
#[derive(Clone, Debug, Default)]
pub struct ReadWaits {
    count: u64,
    sum_ns: u128,
    min_ns: u64,
    max_ns: u64,
    histogram: Option<Histogram<u64>>,
}

/// What a run's confirmed reads waited, in true nanoseconds (`confirmed_read_wait` in
/// `summary.json`; how many reads there were is `reads_served_confirmed`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct WaitSummary {
    /// The exact mean, rounded down.
    pub mean_ns: u64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
}

impl ReadWaits {
    /// One read waited `wait`.
    pub fn record(&mut self, wait: Dur) {
        let ns = u64::try_from(wait.ns()).expect("a read is served after it is taken up");
        let histogram = self
            .histogram
            .get_or_insert_with(|| Histogram::new(2).expect("two significant digits are valid"));
        histogram
            .record(ns)
            .expect("an auto-resizing histogram takes any wait");
        self.min_ns = if self.count == 0 {
            ns
        } else {
            self.min_ns.min(ns)
        };
        self.max_ns = self.max_ns.max(ns);
        self.sum_ns += u128::from(ns);
        self.count += 1;
    }

    /// The summary, or `None` when no read was recorded.
    pub fn summary(&self) -> Option<WaitSummary> {
        let h = self.histogram.as_ref().filter(|_| self.count > 0)?;
        let quantile = |q: f64| h.value_at_quantile(q).clamp(self.min_ns, self.max_ns);
        Some(WaitSummary {
            mean_ns: u64::try_from(self.sum_ns / u128::from(self.count))
                .expect("a mean is at most the maximum"),
            p50_ns: quantile(0.5),
            p99_ns: quantile(0.99),
            max_ns: self.max_ns,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waits(ns: &[i64]) -> Option<WaitSummary> {
        let mut w = ReadWaits::default();
        for &n in ns {
            w.record(Dur::from_ns(n));
        }
        w.summary()
    }

    #[test]
    fn no_read_no_summary() {
        assert_eq!(waits(&[]), None);
    }

    #[test]
    fn equal_waits_report_that_wait_exactly() {
        // Three reads of one round trip, 2 ms: every figure is 2,000,000 ns, though the
        // histogram's bucket for it is wider.
        let s = waits(&[2_000_000; 3]).unwrap();
        assert_eq!(
            s,
            WaitSummary {
                mean_ns: 2_000_000,
                p50_ns: 2_000_000,
                p99_ns: 2_000_000,
                max_ns: 2_000_000
            }
        );
    }

    #[test]
    fn the_mean_and_maximum_are_exact_and_quantiles_within_one_percent() {
        // 99 reads of 1 ms and one of 10 ms: mean (99 + 10) / 100 ms = 1.09 ms exactly; the
        // median and the 99th percentile (the 99th smallest value) are 1 ms, reported as the
        // top of the histogram's bucket for it (at most 1% above); the maximum 10 ms.
        let mut ns = vec![1_000_000; 99];
        ns.push(10_000_000);
        let s = waits(&ns).unwrap();
        assert_eq!(s.mean_ns, 1_090_000);
        assert!((1_000_000..=1_010_000).contains(&s.p50_ns), "{s:?}");
        assert!((1_000_000..=1_010_000).contains(&s.p99_ns), "{s:?}");
        assert_eq!(s.max_ns, 10_000_000);
        // 1, 2, ..., 100 ms: the median is 50 ms within 1%.
        let ns: Vec<i64> = (1..=100).map(|k| k * 1_000_000).collect();
        let s = waits(&ns).unwrap();
        assert_eq!(s.mean_ns, 50_500_000);
        assert!((50_000_000..=50_500_000).contains(&s.p50_ns), "{s:?}");
        assert!((99_000_000..=99_990_000).contains(&s.p99_ns), "{s:?}");
    }
}
