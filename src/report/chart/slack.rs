//! An exploration's slack histogram: how close each run came to an overlap. One bar per bin of
//! the runs' safety slack (`min_slack_ns`), with the nearest miss marked; runs without
//! a handover have no slack and are counted in the subtitle. Zero (an overlap) and the
//! protocol's margin epsilon, when it has one, are marked too: the bins always reach them. Bins are on a 1-2-5 scale of
//! exact integer nanoseconds (slack spans microseconds to seconds in one exploration); floats
//! are used only to place pixels.

use super::scene::{rgb, Anchor, Scene};
use super::sweep::axis::{draw_frame, Plot, YAxis};
use super::sweep::legend::{Legend, Mark};
use super::sweep::page::Page;
use super::ChartFiles;
use crate::explore::{nearest_miss, RunRecord};
use crate::time::format_ns;
use plotters::style::RGBAColor;

const WIDTH: i32 = 1000;
const PLOT_H: i32 = 460;
const BAR: RGBAColor = rgb(66, 133, 190);
const MISS: RGBAColor = rgb(200, 40, 40);
const ZERO: RGBAColor = rgb(20, 20, 20);
const EPSILON: RGBAColor = rgb(40, 150, 60);
/// Above this many bins, only every third edge (each power of ten) is labelled.
const LABEL_ALL_BINS: usize = 15;

/// The histogram of the runs' slack, with zero and the protocol's margin `epsilon_ns` marked;
/// `None` when no run had a handover.
pub fn slack_histogram(
    name: &str,
    records: &[RunRecord],
    epsilon_ns: Option<i64>,
) -> Option<ChartFiles> {
    Some(Histogram::of(name, records, epsilon_ns)?.scene().render())
}

/// The bins, their counts and the words around them.
struct Histogram {
    title: String,
    lines: Vec<String>,
    /// Each bin's lower edge in ns; the last bin ends at `end_ns`.
    edges_ns: Vec<i64>,
    end_ns: i64,
    counts: Vec<u64>,
    miss_ns: i64,
    /// The protocol's margin, if it has one (>= 0).
    epsilon_ns: Option<i64>,
}

/// Bin edges on a 1-2-5 scale: 0, 1 ns, 2 ns, 5 ns, 10 ns, ... Slack runs from microseconds to
/// seconds in one exploration, so equal-width bins would put nearly every run in one bar.
fn edge(k: usize) -> i64 {
    if k == 0 {
        return 0;
    }
    let k = k - 1;
    [1i64, 2, 5][k % 3].saturating_mul(10i64.saturating_pow((k / 3) as u32))
}

/// The bin of a slack (>= 0): the largest k with edge(k) <= slack.
fn bin_of(slack_ns: i64) -> usize {
    let mut k = 0;
    while edge(k + 1) <= slack_ns && edge(k + 1) < i64::MAX {
        k += 1;
    }
    k
}

impl Histogram {
    fn of(name: &str, records: &[RunRecord], epsilon_ns: Option<i64>) -> Option<Histogram> {
        let epsilon_ns = epsilon_ns.map(|e| e.max(0));
        let slacks: Vec<i64> = records
            .iter()
            .filter_map(|r| r.min_slack_ns)
            .map(|s| s.max(0))
            .collect();
        let miss = nearest_miss(records)?;
        let miss_ns = miss.min_slack_ns?;
        let bins: Vec<usize> = slacks.iter().map(|&s| bin_of(s)).collect();
        // The bins start at zero's, and reach epsilon's.
        let first = 0;
        let last = (*bins.iter().max()?).max(epsilon_ns.map_or(0, bin_of));
        let mut counts = vec![0u64; last - first + 1];
        for b in bins {
            counts[b - first] += 1;
        }
        let without = records.len() - slacks.len();
        Some(Histogram {
            title: format!("Safety slack over {} runs of {name}", records.len()),
            lines: vec![
                format!(
                    "Nearest miss: run {} (seed {}), {} of slack.",
                    miss.run,
                    miss.seed,
                    format_ns(miss_ns)
                ),
                format!(
                    "{} runs had a handover of the lease{}. Bins on a 1-2-5 scale.",
                    slacks.len(),
                    match without {
                        0 => String::new(),
                        1 => "; 1 had none (not shown)".to_string(),
                        n => format!("; {n} had none (not shown)"),
                    }
                ),
            ],
            edges_ns: (first..=last).map(edge).collect(),
            end_ns: edge(last + 1),
            counts,
            miss_ns,
            epsilon_ns,
        })
    }

    /// Where slack `ns` lies on the chart's x axis, in bins (linear within a bin).
    fn x_of(&self, ns: i64) -> f64 {
        let k = self.edges_ns.iter().rposition(|&e| e <= ns).unwrap_or(0);
        let lo = self.edges_ns[k];
        let hi = self.edges_ns.get(k + 1).copied().unwrap_or(self.end_ns);
        k as f64 + (ns - lo) as f64 / (hi - lo).max(1) as f64
    }

    fn label(&self, x: f64) -> String {
        let k = x.round() as usize;
        let ns = if k < self.edges_ns.len() {
            self.edges_ns[k]
        } else {
            self.end_ns
        };
        format_ns(ns)
    }
}

impl Histogram {
    fn scene(&self) -> Scene {
        let mut legend = Legend::default();
        legend.push(Mark::Box(BAR), "runs per bin");
        legend.push(
            Mark::Line(MISS),
            format!("nearest miss: {}", format_ns(self.miss_ns)),
        );
        legend.push(Mark::Line(ZERO), "zero slack: an overlap below");
        if let Some(e) = self.epsilon_ns {
            legend.push(Mark::Dashed(EPSILON), format!("epsilon: {}", format_ns(e)));
        }
        let page = Page {
            width: WIDTH,
            title: self.title.clone(),
            lines: self.lines.clone(),
            legend,
        };
        let mut s = page.scene(PLOT_H);
        let top = page.head_height();
        let plot = Plot {
            x0: 100,
            y0: top + 40,
            x1: WIDTH - 40,
            y1: top + PLOT_H - 70,
        };
        let bins = self.counts.len();
        let ymax = self.counts.iter().copied().max().unwrap_or(1) as f64;
        let y = YAxis::counts(ymax * 1.1);
        let xpx = |x: f64| plot.x0 + (x / bins as f64 * (plot.x1 - plot.x0) as f64).round() as i32;
        // Edge k >= 1 is a power of ten when k % 3 == 1.
        let labelled = |k: usize| bins <= LABEL_ALL_BINS || k == 0 || k % 3 == 1;
        let x_ticks: Vec<(i32, String)> = (0..=bins)
            .filter(|&k| labelled(k))
            .map(|k| (xpx(k as f64), self.label(k as f64)))
            .collect();
        draw_frame(
            &mut s,
            plot,
            &x_ticks,
            &y.ticks_px(plot),
            ("closest handover's slack (bin edges)", "runs"),
            true,
        );
        // Each bar's count above it: a bar of a few runs next to one of thousands is a sliver.
        for (i, &c) in self.counts.iter().enumerate().filter(|(_, c)| **c > 0) {
            let (x0, x1) = (xpx(i as f64 + 0.05), xpx(i as f64 + 0.95));
            let top = y.px(c as f64, plot);
            s.rect(x0, top, x1, plot.y1, BAR);
            s.text(
                (x0 + x1) / 2,
                top - 9,
                c.to_string(),
                13.0,
                false,
                rgb(20, 20, 20),
                Anchor::Center,
            );
        }
        let m = xpx(self.x_of(self.miss_ns));
        s.line(vec![(m, plot.y0), (m, plot.y1)], MISS, 2);
        let z = xpx(self.x_of(0));
        s.line(vec![(z, plot.y0), (z, plot.y1)], ZERO, 2);
        if let Some(e) = self.epsilon_ns {
            let x = xpx(self.x_of(e));
            s.dashed(vec![(x, plot.y0), (x, plot.y1)], EPSILON, 2, 6, 4);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_follow_a_1_2_5_scale() {
        assert_eq!(
            (edge(0), edge(1), edge(2), edge(3), edge(4)),
            (0, 1, 2, 5, 10)
        );
        // 12.010001 ms lies in [10 ms, 20 ms): edge 22 is 10^7.
        assert_eq!(edge(22), 10_000_000);
        assert_eq!(bin_of(12_010_001), 22);
        assert_eq!((bin_of(0), bin_of(1), bin_of(4), bin_of(5)), (0, 1, 2, 3));
    }

    #[test]
    fn every_slack_is_counted_in_its_bin() {
        let rec = |run: u64, slack: Option<i64>| RunRecord {
            run,
            seed: run,
            kinds: vec![],
            violation: None,
            min_slack_ns: slack,
            closest_call_ns: None,
            recovery_margin_ns: None,
            events: 0,
            guide: None,
        };
        // Slacks 5, 12, 12, 39 ns: bins [5, 10), [10, 20), [20, 50), and the bins from zero's,
        // [0, 1), [1, 2), [2, 5), empty: edges 0 to 5, ending at 50.
        let recs = [
            rec(0, Some(12)),
            rec(1, None),
            rec(2, Some(5)),
            rec(3, Some(39)),
            rec(4, Some(12)),
        ];
        let h = Histogram::of("x", &recs, None).expect("handovers");
        assert_eq!(h.edges_ns, [0, 1, 2, 5, 10, 20]);
        assert_eq!(h.end_ns, 50);
        assert_eq!(h.counts, [0, 0, 0, 1, 2, 1]);
        assert_eq!(h.miss_ns, 5);
        assert!(h.lines[1].contains("1 had none"), "{:?}", h.lines);
        // 15 ns is halfway through the fifth bin, [10, 20); zero is the left edge.
        assert_eq!(h.x_of(15), 4.5);
        assert_eq!(h.x_of(0), 0.0);
        // An epsilon of 120 ns widens the bins to [100, 200) (edge 7), and sits a fifth into it.
        let h = Histogram::of("x", &recs, Some(120)).expect("handovers");
        assert_eq!(h.edges_ns.len(), 8);
        assert_eq!(h.end_ns, 200);
        assert_eq!(h.x_of(120), 7.2);
    }
}
