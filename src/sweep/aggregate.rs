//! Per-run rows and per-cell statistics.
//!
//! A run is reduced at once to a [`RunRow`] (a few integers and one float), so a sweep never
//! holds whole summaries. Cell statistics are folded from rows in run-index order; integer sums
//! are exact and the one float sum (availability) is always added in the same order, so the
//! figures do not depend on thread count or on how the runs were split into shards.

use crate::outcome::Summary;

/// What a sweep keeps of one run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RunRow {
    /// The global run index: `cell * seeds + i`.
    pub index: u64,
    pub overlap_count: u64,
    pub overlap_total_ns: i64,
    pub overlap_max_ns: i64,
    pub availability: f64,
    pub max_unavailable_ns: i64,
    pub zombie_actions: u64,
    pub stale_reads: u64,
    pub unsafe_writes: u64,
    pub fenced_writes: u64,
    pub events: u64,
    /// The run's safety slack (`None`: no handover).
    pub min_slack_ns: Option<i64>,
    /// When the run's last fault ended (0: it had none).
    pub faults_end_ns: i64,
    /// How long after that a running node believed again (`None`: none did).
    pub recovery_ns: Option<i64>,
    /// The split of the run's last failover with an outage ([`Summary::last_outage`]):
    /// detection, election or acquisition, and the first operation served (`None` where the
    /// run has none).
    pub detection_ns: Option<i64>,
    pub election_ns: Option<i64>,
    pub first_op_ns: Option<i64>,
    /// The longest stretch with no read served, and with no write taking effect, as the run's
    /// summary gives them (one that never ended runs to the run's end; `None`: no read, or no
    /// write, was ever served): the outage as clients saw it.
    pub read_gap_ns: Option<i64>,
    pub write_gap_ns: Option<i64>,
}

impl RunRow {
    pub fn of(index: u64, s: &Summary) -> RunRow {
        RunRow {
            index,
            overlap_count: s.overlap.count,
            overlap_total_ns: s.overlap.total_ns,
            overlap_max_ns: s.overlap.max_ns,
            availability: s.availability,
            max_unavailable_ns: s.max_unavailable_ns,
            zombie_actions: s.zombie_actions,
            stale_reads: s.stale_reads,
            unsafe_writes: s.unsafe_writes,
            fenced_writes: s.fenced_writes,
            events: s.events,
            min_slack_ns: s.min_slack_ns,
            faults_end_ns: s.faults_end_ns,
            recovery_ns: s.recovery_ns,
            detection_ns: s.last_outage().and_then(|f| f.detection_ns),
            election_ns: s.last_outage().and_then(|f| f.election_ns),
            first_op_ns: s.last_outage().and_then(|f| f.first_op_ns),
            read_gap_ns: s.requests.longest_read_gap.map(|g| g.length_ns()),
            write_gap_ns: s.requests.longest_write_gap.map(|g| g.length_ns()),
        }
    }
}

/// Statistics of a set of runs (a cell, or several cells pooled).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CellStats {
    pub runs: u64,
    pub overlap_runs: u64,
    /// Runs with a handover of the lease (a safety slack): the runs that could show an overlap.
    pub handover_runs: u64,
    /// Runs with an overlap or harm (a stale read or an unsafe write; a zombie action alone is
    /// late, not harm).
    pub unsafe_runs: u64,
    pub sum_overlap_ns: i128,
    pub max_overlap_ns: i64,
    pub sum_availability: f64,
    pub sum_max_unavailable_ns: i128,
    pub max_unavailable_ns: i64,
    pub zombie_actions: u64,
    pub stale_reads: u64,
    pub unsafe_writes: u64,
    pub fenced_writes: u64,
    pub events: u64,
    /// The smallest safety slack of the runs (`None`: no run had a handover).
    pub min_slack_ns: Option<i64>,
    /// The safety slack of every run with a handover, in no particular order.
    pub slacks_ns: Vec<i64>,
    /// The recovery of every run that recovered, in no particular order (sorted when read).
    pub recoveries_ns: Vec<i64>,
    /// The failover split of every run that has one ([`RunRow::detection_ns`] and after), in
    /// no particular order.
    pub detections_ns: Vec<i64>,
    pub elections_ns: Vec<i64>,
    pub first_ops_ns: Vec<i64>,
    /// The outage of each such failover, detection and election together: from the outage's
    /// start to the new holder serving.
    pub outages_ns: Vec<i64>,
    /// Every run's longest read gap and longest write gap ([`RunRow::read_gap_ns`]), in no
    /// particular order.
    pub read_gaps_ns: Vec<i64>,
    pub write_gaps_ns: Vec<i64>,
}

/// z for a two-sided 95% interval.
const Z95: f64 = 1.959_963_984_540_054;

impl CellStats {
    pub fn push(&mut self, r: &RunRow) {
        self.runs += 1;
        self.overlap_runs += u64::from(r.overlap_count > 0);
        self.handover_runs += u64::from(r.min_slack_ns.is_some());
        self.unsafe_runs += u64::from(r.overlap_count + r.stale_reads + r.unsafe_writes > 0);
        self.sum_overlap_ns += r.overlap_total_ns as i128;
        self.max_overlap_ns = self.max_overlap_ns.max(r.overlap_max_ns);
        self.sum_availability += r.availability;
        self.sum_max_unavailable_ns += r.max_unavailable_ns as i128;
        self.max_unavailable_ns = self.max_unavailable_ns.max(r.max_unavailable_ns);
        self.zombie_actions += r.zombie_actions;
        self.stale_reads += r.stale_reads;
        self.unsafe_writes += r.unsafe_writes;
        self.fenced_writes += r.fenced_writes;
        self.events += r.events;
        self.min_slack_ns = min_some(self.min_slack_ns, r.min_slack_ns);
        self.slacks_ns.extend(r.min_slack_ns);
        self.recoveries_ns.extend(r.recovery_ns);
        self.detections_ns.extend(r.detection_ns);
        self.elections_ns.extend(r.election_ns);
        self.first_ops_ns.extend(r.first_op_ns);
        if let (Some(d), Some(e)) = (r.detection_ns, r.election_ns) {
            self.outages_ns.push(d + e);
        }
        self.read_gaps_ns.extend(r.read_gap_ns);
        self.write_gaps_ns.extend(r.write_gap_ns);
    }

    /// Adds `o`'s runs to these (pooling cells; call in a fixed order).
    pub fn merge(&mut self, o: &CellStats) {
        self.runs += o.runs;
        self.overlap_runs += o.overlap_runs;
        self.handover_runs += o.handover_runs;
        self.unsafe_runs += o.unsafe_runs;
        self.sum_overlap_ns += o.sum_overlap_ns;
        self.max_overlap_ns = self.max_overlap_ns.max(o.max_overlap_ns);
        self.sum_availability += o.sum_availability;
        self.sum_max_unavailable_ns += o.sum_max_unavailable_ns;
        self.max_unavailable_ns = self.max_unavailable_ns.max(o.max_unavailable_ns);
        self.zombie_actions += o.zombie_actions;
        self.stale_reads += o.stale_reads;
        self.unsafe_writes += o.unsafe_writes;
        self.fenced_writes += o.fenced_writes;
        self.events += o.events;
        self.min_slack_ns = min_some(self.min_slack_ns, o.min_slack_ns);
        self.slacks_ns.extend_from_slice(&o.slacks_ns);
        self.recoveries_ns.extend_from_slice(&o.recoveries_ns);
        self.detections_ns.extend_from_slice(&o.detections_ns);
        self.elections_ns.extend_from_slice(&o.elections_ns);
        self.first_ops_ns.extend_from_slice(&o.first_ops_ns);
        self.outages_ns.extend_from_slice(&o.outages_ns);
        self.read_gaps_ns.extend_from_slice(&o.read_gaps_ns);
        self.write_gaps_ns.extend_from_slice(&o.write_gaps_ns);
    }

    /// The recovery times of the runs that recovered at percentiles `ps` (nearest rank: the
    /// smallest value with at least p % of them at or below it); `None` when no run did.
    pub fn recovery_percentiles<const N: usize>(&self, ps: [u32; N]) -> Option<[i64; N]> {
        percentiles(&self.recoveries_ns, ps)
    }

    /// Nearest-rank percentiles `ps` of the runs' safety slack (of the runs with a handover).
    pub fn slack_percentiles<const N: usize>(&self, ps: [u32; N]) -> Option<[i64; N]> {
        percentiles(&self.slacks_ns, ps)
    }

    /// Fraction of runs with at least one overlap.
    pub fn p_overlap(&self) -> f64 {
        ratio(self.overlap_runs, self.runs)
    }

    /// The 95% Wilson score interval of [`Self::p_overlap`].
    pub fn wilson(&self) -> (f64, f64) {
        wilson(self.overlap_runs, self.runs)
    }

    /// Fraction of runs with an overlap or harm.
    pub fn p_unsafe(&self) -> f64 {
        ratio(self.unsafe_runs, self.runs)
    }

    /// Mean total overlap per run, in ns, rounded to the nearest ns.
    pub fn mean_overlap_ns(&self) -> i64 {
        mean_round(self.sum_overlap_ns, self.runs)
    }

    pub fn mean_availability(&self) -> f64 {
        if self.runs == 0 {
            0.0
        } else {
            self.sum_availability / self.runs as f64
        }
    }

    /// Mean over runs of the longest window with no running believer, in ns.
    pub fn mean_max_unavailable_ns(&self) -> i64 {
        mean_round(self.sum_max_unavailable_ns, self.runs)
    }

    /// What the runs show: an overlap or harm, safety judged on runs with a handover, or
    /// nothing judged (no overlap or harm, but no run had a handover that could show one).
    pub fn judgement(&self) -> Judgement {
        if self.unsafe_runs > 0 {
            Judgement::Unsafe
        } else if self.handover_runs == 0 {
            Judgement::Untested
        } else {
            Judgement::Safe
        }
    }

    /// No run overlapped, no harm was counted (stale reads, unsafe writes), and some run had a
    /// handover to judge.
    pub fn safe(&self) -> bool {
        self.judgement() == Judgement::Safe
    }

    /// No run overlapped or harmed, but no run had a handover: there was nothing to judge.
    pub fn untested(&self) -> bool {
        self.judgement() == Judgement::Untested
    }

    /// The cell's verdict in a word or three: `safe`, `overlap`, `harm` (no overlap, but a
    /// stale read or an unsafe write) or `untested: no handover`.
    pub fn verdict_words(&self) -> &'static str {
        match self.judgement() {
            Judgement::Safe => "safe",
            Judgement::Untested => "untested: no handover",
            Judgement::Unsafe if self.overlap_runs > 0 => "overlap",
            Judgement::Unsafe => "harm",
        }
    }
}

/// What a set of runs says of safety.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Judgement {
    /// Some run had a handover, and no run overlapped or did harm.
    Safe,
    /// No run overlapped or did harm, but no run had a handover: nothing could have overlapped,
    /// so nothing was tested.
    Untested,
    /// Some run overlapped or did harm.
    Unsafe,
}

/// The smaller of two optional values; `None` only when both are.
fn min_some(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

fn mean_round(sum: i128, n: u64) -> i64 {
    if n == 0 {
        return 0;
    }
    let n = n as i128;
    let q = (2 * sum + n).div_euclid(2 * n);
    q.clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

/// The 95% Wilson score interval for `k` successes in `n` trials; (0, 1) when `n` is 0.
pub fn wilson(k: u64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let nf = n as f64;
    let p = k as f64 / nf;
    let z2 = Z95 * Z95;
    let denom = 1.0 + z2 / nf;
    let center = (p + z2 / (2.0 * nf)) / denom;
    let half = Z95 / denom * (p * (1.0 - p) / nf + z2 / (4.0 * nf * nf)).sqrt();
    let lo = if k == 0 {
        0.0
    } else {
        (center - half).max(0.0)
    };
    let hi = if k == n {
        1.0
    } else {
        (center + half).min(1.0)
    };
    (lo, hi)
}

/// Percentiles `ps` of `values` (nearest rank: the smallest value with at least p % of them at
/// or below it); `None` when there are none.
pub fn percentiles<const N: usize>(values: &[i64], ps: [u32; N]) -> Option<[i64; N]> {
    let mut v = values.to_vec();
    if v.is_empty() {
        return None;
    }
    v.sort_unstable();
    let n = v.len();
    Some(ps.map(|p| {
        debug_assert!((1..=100).contains(&p));
        let rank = (p as usize * n).div_ceil(100);
        v[rank.max(1) - 1]
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_matches_known_values() {
        // 0 of 10: upper bound 0.2775 (the "rule of three"-like Wilson figure).
        let (lo, hi) = wilson(0, 10);
        assert_eq!(lo, 0.0);
        assert!((hi - 0.277_532).abs() < 1e-5, "{hi}");
        // 5 of 10: 0.2366 .. 0.7634.
        let (lo, hi) = wilson(5, 10);
        assert!((lo - 0.236_593).abs() < 1e-5 && (hi - 0.763_407).abs() < 1e-5);
        assert_eq!(wilson(10, 10).1, 1.0);
    }

    #[test]
    fn the_smallest_slack_ignores_runs_without_a_handover() {
        assert_eq!(min_some(None, None), None);
        assert_eq!(min_some(Some(5), None), Some(5));
        assert_eq!(min_some(None, Some(-3)), Some(-3));
        assert_eq!(min_some(Some(5), Some(-3)), Some(-3));
        assert_eq!(min_some(Some(-3), Some(5)), Some(-3));
    }

    /// A run with `overlap_count` overlaps, `stale_reads` (harm) and `min_slack_ns`.
    fn row(overlap_count: u64, stale_reads: u64, min_slack_ns: Option<i64>) -> RunRow {
        RunRow {
            index: 0,
            overlap_count,
            overlap_total_ns: 0,
            overlap_max_ns: 0,
            availability: 1.0,
            max_unavailable_ns: 0,
            zombie_actions: 0,
            stale_reads,
            unsafe_writes: 0,
            fenced_writes: 0,
            events: 0,
            min_slack_ns,
            faults_end_ns: 0,
            recovery_ns: None,
            detection_ns: None,
            election_ns: None,
            first_op_ns: None,
            read_gap_ns: None,
            write_gap_ns: None,
        }
    }

    #[test]
    fn slack_percentiles_are_of_the_runs_with_a_handover() {
        // Slacks 30, 10, 20 ns and a run without a handover: the median is the 2nd of the
        // three sorted (ceil(50 x 3 / 100) = 2: 20), the least 10; pooled with a cell of
        // slack 5, the median of four is the 2nd (10).
        let mut st = CellStats::default();
        for s in [Some(30), None, Some(10), Some(20)] {
            st.push(&row(0, 0, s));
        }
        assert_eq!(st.slack_percentiles([50]), Some([20]));
        assert_eq!(st.min_slack_ns, Some(10));
        let mut other = CellStats::default();
        other.push(&row(0, 0, Some(5)));
        st.merge(&other);
        assert_eq!(st.slack_percentiles([50, 100]), Some([10, 30]));
        assert_eq!(CellStats::default().slack_percentiles([50]), None);
    }

    #[test]
    fn recovery_percentiles_are_nearest_ranks_of_the_runs_that_recovered() {
        // Recoveries 10, 20, ..., 100 ns over ten runs, in shuffled order, and one run that
        // never recovered (left out). Nearest rank: p50 is the 5th value (50), p90 the 9th (90),
        // p99 the 10th (ceil(9.9) = 10: 100), the maximum 100. Merged cells pool their runs.
        let mut st = CellStats::default();
        for v in [70, 10, 100, 40, 20, 90, 30, 60, 80, 50] {
            st.push(&RunRow {
                recovery_ns: Some(v),
                ..row(0, 0, None)
            });
        }
        st.push(&row(0, 0, None));
        assert_eq!(
            st.recovery_percentiles([50, 90, 99, 100]),
            Some([50, 90, 100, 100])
        );
        let mut pooled = CellStats::default();
        pooled.merge(&st);
        pooled.push(&RunRow {
            recovery_ns: Some(5),
            ..row(0, 0, None)
        });
        // Eleven values now: p50 is the 6th (50), p1 the 1st (5).
        assert_eq!(pooled.recovery_percentiles([1, 50]), Some([5, 50]));
        assert_eq!(CellStats::default().recovery_percentiles([50]), None);
    }

    #[test]
    fn a_cell_is_safe_only_with_a_handover_to_judge() {
        let cell = |rows: &[RunRow]| {
            let mut st = CellStats::default();
            rows.iter().for_each(|r| st.push(r));
            st
        };
        // Three clean runs without a handover: nothing judged, whatever P(overlap) = 0 says.
        let none = cell(&[row(0, 0, None), row(0, 0, None), row(0, 0, None)]);
        assert_eq!(
            (none.handover_runs, none.judgement()),
            (0, Judgement::Untested)
        );
        assert_eq!(none.verdict_words(), "untested: no handover");
        assert!(!none.safe() && none.untested());
        // One of the three had a handover (slack 0 counts: a handover with nothing to spare).
        let one = cell(&[row(0, 0, None), row(0, 0, Some(0)), row(0, 0, None)]);
        assert_eq!((one.handover_runs, one.judgement()), (1, Judgement::Safe));
        // Harm without a handover is harm; an overlap is an overlap; zombie actions alone are
        // late, not harm.
        let harm = cell(&[row(0, 2, None)]);
        assert_eq!(
            (harm.judgement(), harm.verdict_words()),
            (Judgement::Unsafe, "harm")
        );
        let late = cell(&[RunRow {
            zombie_actions: 5,
            ..row(0, 0, Some(1))
        }]);
        assert!(late.safe());
        let over = cell(&[row(1, 0, Some(-5)), row(0, 0, Some(3))]);
        assert_eq!(over.verdict_words(), "overlap");
        // Pooling adds the handovers: untested with safe is safe (2 of the 5 runs had one).
        let mut pooled = none.clone();
        pooled.merge(&cell(&[row(0, 0, Some(4)), row(0, 0, Some(9))]));
        assert_eq!((pooled.runs, pooled.handover_runs), (5, 2));
        assert!(pooled.safe());
        // No run at all judges nothing.
        assert!(CellStats::default().untested());
    }

    #[test]
    fn means_round_to_nearest() {
        assert_eq!(mean_round(5, 2), 3);
        assert_eq!(mean_round(4, 3), 1);
        assert_eq!(mean_round(-5, 2), -2);
        assert_eq!(mean_round(0, 0), 0);
    }
}
