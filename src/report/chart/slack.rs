//! An exploration's slack histogram: how close each run came to an overlap. One bar per bin of
//! the runs' safety slack (`min_slack_ns`, SPEC 3), with the nearest miss marked; runs without
//! a handover have no slack and are counted in the subtitle. Bins are exact integer
//! nanoseconds; floats are used only to place pixels.

use super::sweep::{err, head_height, render, text_style, title, Drawn, Figure};
use super::{ChartFiles, TimeUnit, TIME_UNITS};
use crate::explore::{nearest_miss, RunRecord};
use crate::time::format_ns;
use plotters::coord::Shift;
use plotters::prelude::*;

const WIDTH: u32 = 1000;
const PLOT_H: u32 = 460;
const BAR: RGBColor = RGBColor(66, 133, 190);
const MISS: RGBColor = RGBColor(200, 40, 40);

/// The histogram of the runs' slack; `None` when no run had a handover.
pub fn slack_histogram(name: &str, records: &[RunRecord]) -> Option<ChartFiles> {
    let h = Histogram::of(name, records)?;
    let (png, svg) = render(&h).ok()?;
    Some(ChartFiles {
        svg: String::from_utf8(svg).expect("SVG is text"),
        png,
    })
}

/// The bins, their counts and the words around them.
struct Histogram {
    title: String,
    lines: Vec<String>,
    unit: TimeUnit,
    /// The first bin's lower edge and the width of a bin, in ns.
    lo_ns: i64,
    width_ns: i64,
    counts: Vec<u64>,
    miss_ns: i64,
}

impl Histogram {
    fn of(name: &str, records: &[RunRecord]) -> Option<Histogram> {
        let slacks: Vec<i64> = records.iter().filter_map(|r| r.min_slack_ns).collect();
        let miss = nearest_miss(records)?;
        let miss_ns = miss.min_slack_ns?;
        let (min, max) = (
            *slacks.iter().min().expect("some slack"),
            *slacks.iter().max().expect("some slack"),
        );
        let width_ns = bin_width(max.saturating_sub(min));
        let lo_ns = min.div_euclid(width_ns) * width_ns;
        let bins = ((max - lo_ns) / width_ns + 1) as usize;
        let mut counts = vec![0u64; bins];
        for s in &slacks {
            counts[((s - lo_ns) / width_ns) as usize] += 1;
        }
        let unit = TIME_UNITS
            .iter()
            .copied()
            .find(|u| max.unsigned_abs().max(min.unsigned_abs()) >= u.ns as u64)
            .unwrap_or(TIME_UNITS[3]);
        let without = records.len() - slacks.len();
        Some(Histogram {
            title: format!("Safety slack over {} runs of {name}", records.len()),
            lines: vec![
                format!(
                    "Nearest miss: run {} (seed {}), {} of slack. Bins of {}.",
                    miss.run,
                    miss.seed,
                    format_ns(miss_ns),
                    format_ns(width_ns)
                ),
                format!(
                    "{} runs had a handover of the lease; {without} had none and are not shown.",
                    slacks.len()
                ),
            ],
            unit,
            lo_ns,
            width_ns,
            counts,
            miss_ns,
        })
    }
}

/// A round bin width (1, 2 or 5 times a power of ten ns) giving at most 40 bins over `span`.
fn bin_width(span: i64) -> i64 {
    let mut w: i64 = 1;
    loop {
        for m in [1, 2, 5] {
            let c = w.saturating_mul(m);
            if span / c < 40 {
                return c;
            }
        }
        w = w.saturating_mul(10);
    }
}

impl Figure for Histogram {
    fn size(&self) -> (u32, u32) {
        (WIDTH, head_height(self.lines.len()) + PLOT_H)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn {
        let (top, body) = root.split_vertically(head_height(self.lines.len()));
        title(&top, &self.title, &self.lines)?;
        let per = self.unit.ns as f64;
        let x0 = self.lo_ns as f64 / per;
        let x1 = (self.lo_ns + self.width_ns * self.counts.len() as i64) as f64 / per;
        let ymax = self.counts.iter().copied().max().unwrap_or(1) as f64 * 1.1 + 1.0;
        let mut chart = ChartBuilder::on(&body)
            .margin(20)
            .x_label_area_size(56)
            .y_label_area_size(70)
            .build_cartesian_2d(x0..x1.max(x0 + 1e-9), 0f64..ymax)
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_desc(format!("closest handover's slack ({})", self.unit.name))
            .y_desc("runs")
            .axis_desc_style(text_style(18))
            .label_style(text_style(15))
            .y_label_formatter(&|v| format!("{v:.0}"))
            .x_label_formatter(&|v| format!("{v}"))
            .draw()
            .map_err(err)?;
        chart
            .draw_series(
                self.counts
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| **c > 0)
                    .map(|(i, c)| {
                        let a = (self.lo_ns + self.width_ns * i as i64) as f64 / per;
                        let b = (self.lo_ns + self.width_ns * (i as i64 + 1)) as f64 / per;
                        Rectangle::new([(a, 0.0), (b, *c as f64)], BAR.filled())
                    }),
            )
            .map_err(err)?
            .label("runs per bin")
            .legend(|(x, y)| Rectangle::new([(x, y - 6), (x + 16, y + 6)], BAR.filled()));
        let m = self.miss_ns as f64 / per;
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(m, 0.0), (m, ymax)],
                MISS.stroke_width(2),
            )))
            .map_err(err)?
            .label(format!("nearest miss: {}", format_ns(self.miss_ns)))
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], MISS.stroke_width(2)));
        chart
            .configure_series_labels()
            .label_font(text_style(15))
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(err)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_are_round_and_at_most_forty() {
        assert_eq!(bin_width(0), 1);
        assert_eq!(bin_width(39), 1);
        assert_eq!(bin_width(40), 2);
        assert_eq!(bin_width(3_999_999_999), 100_000_000);
        assert_eq!(bin_width(4_000_000_000), 200_000_000);
    }

    #[test]
    fn every_slack_is_counted_in_its_bin() {
        let rec = |run: u64, slack: Option<i64>| RunRecord {
            run,
            seed: run,
            kinds: vec![],
            violation: None,
            min_slack_ns: slack,
            events: 0,
        };
        // Slacks 5, 12, 12, 39 ns over a span of 34 ns: 1 ns bins from 5.
        let recs = [
            rec(0, Some(12)),
            rec(1, None),
            rec(2, Some(5)),
            rec(3, Some(39)),
            rec(4, Some(12)),
        ];
        let h = Histogram::of("x", &recs).expect("handovers");
        assert_eq!((h.lo_ns, h.width_ns, h.counts.len()), (5, 1, 35));
        assert_eq!((h.counts[0], h.counts[7], h.counts[34]), (1, 2, 1));
        assert_eq!(h.counts.iter().sum::<u64>(), 4);
        assert_eq!(h.miss_ns, 5);
        assert!(h.lines[1].contains("1 had none"), "{:?}", h.lines);
    }
}
