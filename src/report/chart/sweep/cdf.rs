//! The time-to-serve charts, one cumulative step line per cell (the Raft paper draws its
//! elections so, Figure 16): the recovery chart, the share of each cell's runs in which a
//! running node believed it held the lease again within x of the run's last fault, and the
//! outage chart, the share whose last failover with an outage ended within x of the outage's
//! start (detection and election together, whatever the faults did after). A run that never
//! recovered (or had no such failover) keeps its cell's line below 100 %, so a cell that often
//! fails to recover shows it at the right edge.
//! The x axis follows the one scale rule of [`super::axis::Scale`]: a log axis when the times
//! span a factor of ten or more. A published figure of a cell (`--reference`: a median, a
//! maximum, a pNN) is a ring in the cell's colour at (its time, its percentage); a published
//! mean has no place on a CDF and is left to the report.

use super::axis::{draw_break, draw_frame, NumAxis, Place, Plot, YAxis};
use super::legend::{Legend, Mark};
use super::page::Page;
use super::{fmt_num, time_unit, Data, PALETTE};
use crate::report::chart::scene::Scene;
use plotters::style::RGBAColor;

/// The most cells the chart draws, one line each.
const MAX_CELLS: usize = 8;
const PLOT_W: i32 = 900;
const PLOT_H: i32 = 460;

/// One cell's line: its colour and steps `(x in the chart's unit, % of its runs)`.
struct Line {
    color: RGBAColor,
    steps: Vec<(f64, f64)>,
    /// Its published figures `(x, %)`.
    published: Vec<(f64, f64)>,
}

/// What a time-to-serve chart measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    /// From the run's last fault to a holder serving (`recovery_ns`).
    Recovery,
    /// From the start of the run's last failover outage to the new holder serving (detection
    /// plus election).
    Outage,
}

impl Measure {
    fn values(self, st: &crate::sweep::CellStats) -> &[i64] {
        match self {
            Measure::Recovery => &st.recoveries_ns,
            Measure::Outage => &st.outages_ns,
        }
    }

    /// Why there is no chart when no run has a value.
    fn none(self) -> &'static str {
        match self {
            Measure::Recovery => "no run recovered after its last fault",
            Measure::Outage => "no run had a failover after an outage",
        }
    }

    /// What a cell's count of values is, in its legend entry.
    fn counted(self) -> &'static str {
        match self {
            Measure::Recovery => "recovered",
            Measure::Outage => "failed over",
        }
    }
}

pub struct RecoveryCdf {
    page: Page,
    lines: Vec<Line>,
    x: NumAxis,
    x_ticks: Vec<(f64, String)>,
    x_title: String,
    y: YAxis,
    y_title: &'static str,
}

/// The chart of `measure`, or why it is not drawn: no run has a value, or more cells than it
/// can tell apart.
pub fn recovery_cdf(d: &Data, measure: Measure) -> Result<RecoveryCdf, String> {
    let stats = d.stats;
    if stats.len() > MAX_CELLS {
        return Err(format!(
            "{} cells, more than the {MAX_CELLS} lines it draws",
            stats.len()
        ));
    }
    let max_ns = stats
        .iter()
        .flat_map(|c| measure.values(c).iter().copied())
        .max()
        .ok_or(measure.none())?;
    let (div, unit) = time_unit(max_ns as f64);
    let mut legend = Legend::default();
    let mut lines = Vec::new();
    let mut xs = Vec::new();
    for (cell, st) in stats.iter().enumerate() {
        let color = PALETTE[cell % PALETTE.len()];
        let mut v = measure.values(st).to_vec();
        v.sort_unstable();
        let runs = st.runs.max(1) as f64;
        let mut steps = Vec::with_capacity(2 * v.len());
        for (i, &ns) in v.iter().enumerate() {
            let x = ns as f64 / div;
            steps.push((x, 100.0 * i as f64 / runs));
            steps.push((x, 100.0 * (i + 1) as f64 / runs));
            xs.push(x);
        }
        let n = measure.values(st).len() as u64;
        let label = cell_label(d, cell, n, st.runs, measure.counted());
        legend.push(Mark::Line(color), &label);
        let published = match measure {
            Measure::Recovery => published(d, cell, div, st),
            Measure::Outage => Vec::new(),
        };
        xs.extend(published.iter().map(|p| p.0));
        lines.push(Line {
            color,
            steps,
            published,
        });
    }
    if lines.iter().any(|l| !l.published.is_empty()) {
        legend.push(
            Mark::Ring(RGBAColor(60, 60, 60, 1.0)),
            "published figure (ring, in its cell's colour): the time by which that share of the \
             runs that recovered had recovered",
        );
    }
    let x = NumAxis::new(&xs);
    let x_ticks = ticks(&x, &xs);
    let mut y = YAxis::new([0.0, 100.0].into_iter(), true);
    y.ticks.retain(|&t| t <= 100.0 + 1e-9);
    let one_line_per = match d.grid.params.as_slice() {
        [p] => format!(", one line per {}", p.name),
        _ => String::new(),
    };
    let (title, line, x_title, y_title) = match measure {
        Measure::Recovery => (
            "How soon a holder serves again after the last fault",
            format!(
                "{}: the share of each cell's runs recovered within x{one_line_per} (runs that \
                 never recovered keep a line below 100 %)",
                d.subtitle_base()
            ),
            format!("time from the last fault to a holder serving ({unit})"),
            "runs recovered (%)",
        ),
        Measure::Outage => (
            "How long a failover leaves the lease without a holder",
            format!(
                "{}: the share of each cell's runs whose last failover after an outage ended \
                 within x of the outage's start{one_line_per} (runs without one keep a line \
                 below 100 %)",
                d.subtitle_base()
            ),
            format!("time from the outage's start to the new holder holding ({unit})"),
            "runs failed over (%)",
        ),
    };
    Ok(RecoveryCdf {
        page: Page {
            width: PLOT_W + 140,
            title: title.into(),
            lines: vec![line],
            legend,
        },
        lines,
        x_title: x_title + x.scale.note(),
        x,
        x_ticks,
        y,
        y_title,
    })
}

/// The published figures of `cell` that a CDF can show (not a mean), as `(x in the chart's
/// unit, %)`. A percentile p of the runs that recovered sits at p % of those runs, which is
/// `p * recovered / runs` % of all the cell's runs, as the line counts them.
fn published(d: &Data, cell: usize, div: f64, st: &crate::sweep::CellStats) -> Vec<(f64, f64)> {
    use crate::sweep::reference::Figure;
    let share = st.recoveries_ns.len() as f64 / st.runs.max(1) as f64;
    d.grid
        .spec
        .references
        .iter()
        .filter(|r| d.grid.cell_named(&r.cell) == Some(cell))
        .filter_map(|r| match r.figure {
            Figure::Percentile(p) => Some((r.time.ns() as f64 / div, f64::from(p) * share)),
            Figure::Mean => None,
        })
        .collect()
}

/// "param = value, ... (n of runs recovered)" for a cell; the value alone when one parameter is
/// varied (the subtitle names it).
fn cell_label(d: &Data, cell: usize, n: u64, runs: u64, counted: &str) -> String {
    let values = d.grid.values(cell);
    if let [v] = values.as_slice() {
        return format!("{v} ({n} of {runs} {counted})");
    }
    let named: Vec<String> = d
        .grid
        .params
        .iter()
        .zip(values)
        .map(|(p, v)| format!("{} = {v}", p.name))
        .collect();
    let named = if named.is_empty() {
        "all runs".to_string()
    } else {
        named.join(", ")
    };
    format!("{named} ({n} of {runs} {counted})")
}

/// Ticks for the x values: on a log axis 1, 2 and 5 of each decade it spans (the decades alone
/// past two), and 0 when set apart; else a linear axis's round steps. Only those it shows.
fn ticks(x: &NumAxis, xs: &[f64]) -> Vec<(f64, String)> {
    let candidates: Vec<f64> = match x.scale {
        super::axis::Scale::Log { zero_apart } => {
            let pos = xs.iter().copied().filter(|&v| v > 0.0);
            let (lo, hi) = pos.fold((f64::INFINITY, 0.0f64), |(l, h), v| (l.min(v), h.max(v)));
            let (a, b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
            // Two decades or less: 1, 2 and 5 of each, else the decades alone.
            let steps: &[f64] = if b - a <= 2 { &[1.0, 2.0, 5.0] } else { &[1.0] };
            let mut t: Vec<f64> = (a..=b)
                .flat_map(|e| steps.iter().map(move |m| m * 10f64.powi(e)))
                .collect();
            if zero_apart {
                t.insert(0, 0.0);
            }
            t
        }
        super::axis::Scale::Linear => YAxis::new(xs.iter().copied(), true).ticks,
    };
    candidates
        .into_iter()
        .filter(|&v| {
            let probe = Plot {
                x0: 0,
                y0: 0,
                x1: 1000,
                y1: 100,
            };
            matches!(x.place(v, probe), Place::At(_))
        })
        .map(|v| (v, fmt_num(v)))
        .collect()
}

impl RecoveryCdf {
    pub fn scene(&self) -> Scene {
        let mut s = self.page.scene(PLOT_H + 110);
        let top = self.page.head_height() + 10;
        let plot = Plot {
            x0: 100,
            y0: top + 10,
            x1: 100 + PLOT_W,
            y1: top + 10 + PLOT_H,
        };
        let x_ticks = self.x.ticks_px(&self.x_ticks, plot);
        draw_frame(
            &mut s,
            plot,
            &x_ticks,
            &self.y.ticks_px(plot),
            (&self.x_title, self.y_title),
            true,
        );
        if let Some(b) = self.x.break_px(plot) {
            draw_break(&mut s, b, plot);
        }
        for line in &self.lines {
            let pts: Vec<(i32, i32)> = line
                .steps
                .iter()
                .filter_map(|&(x, y)| match self.x.place(x, plot) {
                    Place::At(px) => Some((px, self.y.px(y, plot))),
                    _ => None,
                })
                .collect();
            s.line(pts, line.color, 3);
        }
        for line in &self.lines {
            for &(x, y) in &line.published {
                if let Place::At(px) = self.x.place(x, plot) {
                    let py = self.y.px(y, plot);
                    s.circle(px, py, 8, RGBAColor(255, 255, 255, 1.0), true);
                    s.circle(px, py, 8, line.color, false);
                    s.circle(px, py, 7, line.color, false);
                }
            }
        }
        s
    }
}
