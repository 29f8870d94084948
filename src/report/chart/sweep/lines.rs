//! The line charts: overlap versus epsilon (the longest overlap and the mean per run, with the
//! bound T*rho marked) and availability versus T (mean availability and the longest window
//! without a holder).
//!
//! Every series stays visible when series coincide: each has its own colour and marker shape,
//! the markers of different series are dodged a few pixels sideways at each grid value, and a
//! panel in which some series are equal at every point says so above its plot. Two neighbouring
//! points are joined by a solid line only when both are 0 or both are above 0; between a point
//! above 0 and a point at 0 the value reaches 0 somewhere the grid did not measure, so the two
//! are joined by a faint dotted line and the legend says so. A point of the overlap chart whose
//! runs had no handover (none could overlap) is untested: ringed in grey, joined to no other,
//! and named so. The x axis follows the one scale rule of [`super::axis::Scale`].

use super::axis::{draw_break, draw_frame, NumAxis, Place, Plot, YAxis};
use super::legend::{Legend, Mark};
use super::marks::{self, Marker, MARKERS};
use super::page::{wrap, Page};
use super::{
    axis_name, fmt_num, sorted_order, time_unit, Data, Group, MUTED, PALETTE, TEXT, UNTESTED_HATCH,
};
use crate::report::chart::scene::{rgba, text_width, Anchor, Scene};
use crate::sweep::path::Role;
use crate::sweep::report::human_ns;
use plotters::style::RGBAColor;

/// The most lines a line chart draws (one colour and marker each) before it pools them.
const MAX_LINES: usize = 8;
/// The most rows of panels of the overlap chart.
const MAX_PANEL_ROWS: usize = 6;
/// How far apart, in pixels, the markers of neighbouring series sit at one grid value.
pub const DODGE_PX: i32 = 7;
const NOTE_H: i32 = 20;
const NOTE_SIZE: f64 = 13.0;

/// The colours and markers of a group of series.
type Styles = Vec<(RGBAColor, Marker)>;

/// One line: its points `(x, y)` with x the raw grid value (ns for T and epsilon).
#[derive(Clone, Debug)]
pub struct Series {
    pub label: String,
    pub color: RGBAColor,
    pub marker: Marker,
    pub points: Vec<(f64, f64)>,
    /// The x values of the points whose runs had no handover: their 0 is untested.
    pub untested: Vec<f64>,
}

impl Series {
    /// Whether the point at `x` is untested.
    fn untested_at(&self, x: f64) -> bool {
        self.untested.contains(&x)
    }

    /// The segments between neighbouring points that are drawn: both ends tested.
    fn joined(&self) -> impl Iterator<Item = &[(f64, f64)]> {
        self.points
            .windows(2)
            .filter(|w| !self.untested_at(w[0].0) && !self.untested_at(w[1].0))
    }
}

/// A vertical dashed line at a raw x value, labelled at the top of the plot.
#[derive(Clone, Debug)]
pub struct Bound {
    pub x: f64,
    pub color: RGBAColor,
    pub label: String,
}

pub struct LinePanel {
    pub title: String,
    pub y_title: String,
    pub series: Vec<Series>,
    pub bounds: Vec<Bound>,
    pub y: YAxis,
    /// What all-zero series show: "no overlap".
    pub zero_words: String,
}

pub struct LineChart {
    pub page: Page,
    pub x_title: String,
    pub x: NumAxis,
    /// Grid values and their labels as given.
    pub x_ticks: Vec<(f64, String)>,
    /// "ε" or "T": what the notes say the series are equal at.
    pub x_symbol: String,
    pub panels: Vec<LinePanel>,
    pub cols: usize,
    pub panel_size: (i32, i32),
}

/// The horizontal offset of series `k` of `n`: centred on the grid value, `DODGE_PX` apart.
pub fn dodge(k: usize, n: usize) -> i32 {
    ((2 * k as i32 + 1 - n as i32) * DODGE_PX) / 2
}

/// Whether the segment from `a` to `b` is solid: both values 0 or both above 0.
pub fn solid(a: f64, b: f64) -> bool {
    (a > 0.0) == (b > 0.0)
}

/// Groups (two series or more, in order) of series equal at every point.
pub fn coinciding(series: &[Series]) -> Vec<Vec<usize>> {
    let mut seen = vec![false; series.len()];
    let mut out = Vec::new();
    for i in 0..series.len() {
        if seen[i] || series[i].points.is_empty() {
            continue;
        }
        let group: Vec<usize> = (i..series.len())
            .filter(|&j| {
                series[j].points == series[i].points && series[j].untested == series[i].untested
            })
            .collect();
        if group.len() >= 2 {
            for &j in &group {
                seen[j] = true;
            }
            out.push(group);
        }
    }
    out
}

/// Whether some series has a point above 0 next to a point at 0.
fn has_crossing(panels: &[LinePanel]) -> bool {
    panels
        .iter()
        .flat_map(|p| &p.series)
        .any(|s| s.joined().any(|w| !solid(w[0].1, w[1].1)))
}

/// Whether some series has an untested point.
fn has_untested(panels: &[LinePanel]) -> bool {
    panels
        .iter()
        .flat_map(|p| &p.series)
        .any(|s| !s.untested.is_empty())
}

impl LinePanel {
    /// The notes above the plot: one per group of coinciding series.
    fn notes(&self, x_symbol: &str) -> Vec<(Styles, String)> {
        coinciding(&self.series)
            .into_iter()
            .map(|g| {
                let names: Vec<&str> = g.iter().map(|&k| self.series[k].label.as_str()).collect();
                let names = join_labels(&names);
                let first = &self.series[g[0]];
                let all_zero = first.points.iter().all(|p| p.1 == 0.0);
                let what = if all_zero && first.untested.len() == first.points.len() {
                    format!("no run with a handover at any {x_symbol}: untested")
                } else if all_zero && !first.untested.is_empty() {
                    format!(
                        "{} at any {x_symbol} tested (ringed: untested)",
                        self.zero_words
                    )
                } else if all_zero {
                    format!("{} at any {x_symbol}", self.zero_words)
                } else {
                    format!("the same at every {x_symbol}")
                };
                (
                    g.iter()
                        .map(|&k| (self.series[k].color, self.series[k].marker))
                        .collect(),
                    format!("{names}: {what} (lines coincide)"),
                )
            })
            .collect()
    }
}

/// Labels joined for a note: `rho = 200, 500 ppm` when they share a name and unit, else in full.
pub fn join_labels(labels: &[&str]) -> String {
    let split: Vec<Option<(&str, &str)>> = labels.iter().map(|l| l.split_once(" = ")).collect();
    let first = split.first().copied().flatten();
    let unit = |v: &str| v.split_once(' ').map(|(_, u)| u.to_string());
    match first {
        Some((name, v0))
            if split
                .iter()
                .all(|s| s.is_some_and(|(n, v)| n == name && unit(v) == unit(v0))) =>
        {
            let values: Vec<&str> = split
                .iter()
                .flatten()
                .map(|(_, v)| v.split(' ').next().unwrap_or(v))
                .collect();
            match unit(v0) {
                Some(u) => format!("{name} = {} {u}", values.join(", ")),
                None => format!("{name} = {}", values.join(", ")),
            }
        }
        _ => labels.join("; "),
    }
}

impl LineChart {
    pub fn scene(&self) -> Scene {
        let notes = self
            .panels
            .iter()
            .map(|p| self.note_lines(p).len())
            .max()
            .unwrap_or(0) as i32;
        let (pw, ph) = (self.panel_size.0, self.panel_size.1 + NOTE_H * notes);
        let rows = self.panels.len().div_ceil(self.cols) as i32;
        let mut s = self.page.scene(rows * ph + 20);
        let top = self.page.head_height() + 10;
        for (k, panel) in self.panels.iter().enumerate() {
            let (c, r) = ((k % self.cols) as i32, (k / self.cols) as i32);
            self.panel(&mut s, panel, 20 + c * pw, top + r * ph, ph, notes);
        }
        s
    }

    /// A panel's notes as lines wrapped to its width: (indent, the group's markers on a
    /// note's first line, words).
    fn note_lines(&self, panel: &LinePanel) -> Vec<(i32, Option<Styles>, String)> {
        let mut out = Vec::new();
        for (group, text) in panel.notes(&self.x_symbol) {
            let indent = 16 * group.len() as i32 + 6;
            let width = self.panel_size.0 - 90 - indent;
            let mut group = Some(group);
            for line in wrap(&text, NOTE_SIZE, width) {
                out.push((indent, group.take(), line));
            }
        }
        out
    }

    fn panel(&self, s: &mut Scene, panel: &LinePanel, x: i32, y: i32, ph: i32, notes: i32) {
        let pw = self.panel_size.0;
        let plot = Plot {
            x0: x + 90,
            y0: y + 64 + NOTE_H * notes,
            x1: x + pw - 24,
            y1: y + ph - 66,
        };
        s.text(
            (plot.x0 + plot.x1) / 2,
            y + 14,
            panel.title.clone(),
            17.0,
            true,
            TEXT,
            Anchor::Center,
        );
        for (k, (tx, group, text)) in self.note_lines(panel).into_iter().enumerate() {
            let ny = y + 40 + NOTE_H * k as i32;
            if let Some(group) = group {
                Mark::Markers(group).draw(s, plot.x0 - 50, ny);
            }
            s.text(
                plot.x0 - 50 + tx,
                ny,
                text,
                NOTE_SIZE,
                false,
                TEXT,
                Anchor::Left,
            );
        }
        let x_ticks = self.x.ticks_px(&self.x_ticks, plot);
        draw_frame(
            s,
            plot,
            &x_ticks,
            &panel.y.ticks_px(plot),
            (&self.x_title, &panel.y_title),
            true,
        );
        if let Some(b) = self.x.break_px(plot) {
            draw_break(s, b, plot);
        }
        self.bounds(s, panel, plot);
        let n = panel.series.len();
        let px = |p: (f64, f64), k: usize| match self.x.place(p.0, plot) {
            Place::At(x) => Some((x + dodge(k, n), panel.y.px(p.1, plot))),
            _ => None,
        };
        // Lines first, then every marker over them.
        for (k, sr) in panel.series.iter().enumerate() {
            let mut run: Vec<(i32, i32)> = Vec::new();
            for w in sr.joined() {
                let (Some(a), Some(b)) = (px(w[0], k), px(w[1], k)) else {
                    continue;
                };
                if solid(w[0].1, w[1].1) {
                    if run.last() != Some(&a) {
                        s.line(std::mem::take(&mut run), sr.color, 3);
                        run.push(a);
                    }
                    run.push(b);
                } else {
                    s.line(std::mem::take(&mut run), sr.color, 3);
                    let c = sr.color;
                    s.dashed(vec![a, b], rgba(c.0, c.1, c.2, 0.55), 2, 2, 5);
                }
            }
            s.line(run, sr.color, 3);
        }
        for (k, sr) in panel.series.iter().enumerate() {
            for &p in &sr.points {
                if let Some((mx, my)) = px(p, k) {
                    marks::draw(s, sr.marker, mx, my, sr.color);
                    if sr.untested_at(p.0) {
                        s.circle(mx, my, 11, UNTESTED_HATCH, false);
                    }
                }
            }
        }
    }

    /// Bounds inside the axis are dashed verticals; one outside it is a label at the edge it
    /// lies beyond, with an arrow. Labels take the first row at the top of the plot where they
    /// touch no other.
    fn bounds(&self, s: &mut Scene, panel: &LinePanel, plot: Plot) {
        let mut rows: Vec<Vec<(i32, i32)>> = Vec::new();
        for b in &panel.bounds {
            let (text, x0) = match self.x.place(b.x, plot) {
                Place::At(px) => {
                    s.dashed(vec![(px, plot.y0), (px, plot.y1)], b.color, 2, 8, 6);
                    (b.label.clone(), px + 4)
                }
                Place::Above => {
                    let t = format!("{} →", b.label);
                    let w = text_width(&t, NOTE_SIZE, false);
                    (t, plot.x1 - 4 - w)
                }
                Place::Below => {
                    let left = self.x.break_px(plot).unwrap_or(plot.x0);
                    (format!("← {}", b.label), left + 4)
                }
            };
            let w = text_width(&text, NOTE_SIZE, false);
            let x0 = x0.min(plot.x1 - 2 - w);
            let span = (x0 - 4, x0 + w + 4);
            let row = rows
                .iter()
                .position(|r| r.iter().all(|&(a, b)| span.1 <= a || b <= span.0))
                .unwrap_or(rows.len());
            if row == rows.len() {
                rows.push(Vec::new());
            }
            rows[row].push(span);
            let ty = plot.y0 + 10 + 17 * row as i32;
            s.rect(span.0, ty - 8, span.1, ty + 8, rgba(255, 255, 255, 0.85));
            s.text(x0, ty, text, NOTE_SIZE, false, b.color, Anchor::Left);
        }
    }
}

/// The legend entry for the untested points, when some series has one.
fn untested_entry(legend: &mut Legend, panels: &[LinePanel]) {
    if has_untested(panels) {
        legend.push(
            Mark::Ring(UNTESTED_HATCH),
            "ringed grey, no line to it: no run there had a handover of the lease, so none could overlap: its 0 is untested, not safe",
        );
    }
}

/// The legend entry for the dotted segments, when some series has one.
fn crossing_entry(legend: &mut Legend, panels: &[LinePanel], what: &str, x_symbol: &str) {
    if has_crossing(panels) {
        legend.push(
            Mark::Dotted(MUTED),
            format!(
                "dotted: {what} reaches 0 somewhere between these two values of {x_symbol}; the grid does not say where"
            ),
        );
    }
}

fn series_style(li: usize) -> (RGBAColor, Marker) {
    (PALETTE[li % PALETTE.len()], MARKERS[li % MARKERS.len()])
}

/// The varied parameter a line chart puts across: its values as numbers (ns for T and
/// epsilon), their order, the axis the x-scale rule gives them and a tick at each, labelled in one
/// time unit for T and epsilon, else as given to `--vary`.
struct XParam {
    raw: Vec<f64>,
    order: Vec<usize>,
    axis: NumAxis,
    ticks: Vec<(f64, String)>,
}

impl XParam {
    fn of(d: &Data, p: usize) -> XParam {
        let raw = d.numeric(p);
        let order = sorted_order(&raw);
        let axis = NumAxis::new(&raw);
        let labels = d.tick_labels(p);
        let ticks = order.iter().map(|&k| (raw[k], labels[k].clone())).collect();
        XParam {
            raw,
            order,
            axis,
            ticks,
        }
    }
}

/// The layout of the overlap-vs-epsilon chart: epsilon across; lines per rho (or per T when
/// rho does not vary), panels per T when both vary; too many lines or panels to read are
/// pooled instead. It holds the sweep's cells pooled by these keys.
struct EpsPlan {
    ep: usize,
    line_p: Option<usize>,
    panel_p: Option<usize>,
    /// The pooled cells' key parameters: epsilon, then the panel's and the line's.
    keys: Vec<usize>,
    /// A line pooled over several T or rho has no single bound T * rho to mark.
    bound_pooled: bool,
    groups: Vec<Group>,
    /// The line parameter's value indices in order (`[None]`: one pooled line).
    line_vals: Vec<Option<usize>>,
}

impl EpsPlan {
    /// The layout for sweep `d` with epsilon the varied parameter `ep`.
    fn of(d: &Data, ep: usize) -> EpsPlan {
        let fits = |p: Option<usize>, most: usize| p.filter(|&p| d.count(p) <= most);
        let line_p = fits(d.rho, MAX_LINES).or(fits(d.t, MAX_LINES));
        let panel_p = fits(d.t, MAX_PANEL_ROWS).filter(|&t| Some(t) != line_p);
        let mut keys = vec![ep];
        keys.extend(panel_p);
        keys.extend(line_p);
        let bound_pooled = [d.t, d.rho].iter().flatten().any(|p| !keys.contains(p));
        let groups = d.pool(&keys);
        EpsPlan {
            ep,
            line_p,
            panel_p,
            keys,
            bound_pooled,
            groups,
            line_vals: values_in_order(d, line_p),
        }
    }

    /// The value index of parameter `p` (a key) in the pooled cell `g`.
    fn key_of(&self, g: &Group, p: Option<usize>) -> Option<usize> {
        p.map(|p| g.key[self.keys.iter().position(|&k| k == p).expect("a key")])
    }

    /// The varied parameters the chart shows (the rest are pooled).
    fn shown(&self) -> Vec<usize> {
        let mut shown = vec![self.ep];
        shown.extend(self.panel_p);
        shown.extend(self.line_p);
        shown
    }
}

/// The value indices of parameter `p` in numeric order, or `[None]` when there is none.
fn values_in_order(d: &Data, p: Option<usize>) -> Vec<Option<usize>> {
    match p {
        Some(p) => sorted_order(&d.numeric(p)).into_iter().map(Some).collect(),
        None => vec![None],
    }
}

/// The lines of one panel value of the overlap-vs-epsilon chart: the longest overlap and the
/// mean total overlap per run, one series per line value, and each line's bound T * rho.
struct EpsLines {
    max_series: Vec<Series>,
    mean_series: Vec<Series>,
    bounds: Vec<Bound>,
}

impl EpsLines {
    /// The lines for panel value `pv`, with y values divided by `div`; without panels, each
    /// line's legend entry goes onto `legend`.
    fn of(
        d: &Data,
        plan: &EpsPlan,
        eps: &XParam,
        pv: Option<usize>,
        div: f64,
        legend: &mut Legend,
    ) -> EpsLines {
        let mut lines = EpsLines {
            max_series: Vec::new(),
            mean_series: Vec::new(),
            bounds: Vec::new(),
        };
        for (li, lv) in plan.line_vals.iter().enumerate() {
            let (color, marker) = series_style(li);
            let mut pts_max = Vec::new();
            let mut pts_mean = Vec::new();
            let mut untested = Vec::new();
            let mut bound = None;
            let mut facts = None;
            for &ek in &eps.order {
                let g = plan.groups.iter().find(|g| {
                    g.key[0] == ek
                        && plan.key_of(g, plan.panel_p) == pv
                        && plan.key_of(g, plan.line_p) == *lv
                });
                if let Some(g) = g {
                    pts_max.push((eps.raw[ek], g.stats.max_overlap_ns as f64 / div));
                    pts_mean.push((eps.raw[ek], g.stats.mean_overlap_ns() as f64 / div));
                    if g.stats.untested() {
                        untested.push(eps.raw[ek]);
                    }
                    bound = Some(g.facts.drift_margin_ns());
                    facts = Some(g.facts);
                }
            }
            let label = match (plan.line_p, lv, facts) {
                (Some(p), Some(k), _) => d.value_label(p, *k),
                (_, _, Some(f)) if !plan.bound_pooled => format!(
                    "T = {}, ρ = {} ppm",
                    human_ns(f.t_ns as f64),
                    fmt_num(f.rho_eff_ppm)
                ),
                _ => "all cells, pooled".to_string(),
            };
            match bound.filter(|_| !plan.bound_pooled) {
                Some(b) => {
                    lines.bounds.push(Bound {
                        x: b,
                        color,
                        label: format!("T·ρ = {}", human_ns(b)),
                    });
                    if plan.panel_p.is_none() {
                        legend.push(
                            Mark::Series(color, marker),
                            format!("{label}: bound T·ρ = {}", human_ns(b)),
                        );
                    }
                }
                None if plan.panel_p.is_none() => legend.push(Mark::Series(color, marker), &label),
                None => {}
            }
            lines.max_series.push(Series {
                label: label.clone(),
                color,
                marker,
                points: pts_max,
                untested: untested.clone(),
            });
            lines.mean_series.push(Series {
                label,
                color,
                marker,
                points: pts_mean,
                untested,
            });
        }
        lines
    }

    /// Whether every line's mean total overlap per run equals its longest overlap (every run
    /// overlapped alike, once): then the mean panel would repeat the max panel.
    fn means_repeat_max(&self) -> bool {
        self.max_series
            .iter()
            .zip(&self.mean_series)
            .all(|(a, b)| a.points == b.points)
    }

    /// The pair of panels, longest then mean, titled with `suffix` (the panel's value) and
    /// with y in `unit`.
    fn panels(self, suffix: &str, unit: &str) -> [LinePanel; 2] {
        let y = YAxis::new(
            self.max_series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.1)),
            true,
        );
        let longest = LinePanel {
            title: format!("longest overlap{suffix}"),
            y_title: format!("max overlap of any run ({unit})"),
            series: self.max_series,
            bounds: self.bounds.clone(),
            y,
            zero_words: "no overlap".into(),
        };
        let y = YAxis::new(
            self.mean_series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.1)),
            true,
        );
        let mean = LinePanel {
            title: format!("mean overlap per run{suffix}"),
            y_title: format!("total overlap per run, mean ({unit})"),
            series: self.mean_series,
            bounds: self.bounds,
            y,
            zero_words: "no overlap".into(),
        };
        [longest, mean]
    }
}

/// The legend entries after the lines' own: with panels, one per line value (each panel
/// labels its own bounds); then what the dashed bounds are, or why none is marked.
fn eps_legend_tail(d: &Data, plan: &EpsPlan, legend: &mut Legend) {
    if plan.panel_p.is_some() {
        // Colours and markers stand for the line parameter's values; each panel labels its
        // own bounds.
        for (li, lv) in plan.line_vals.iter().enumerate() {
            if let (Some(p), Some(k)) = (plan.line_p, lv) {
                let (color, marker) = series_style(li);
                legend.push(Mark::Series(color, marker), d.value_label(p, *k));
            }
        }
    }
    if plan.bound_pooled {
        legend.push(
            Mark::Dashed(rgba(255, 255, 255, 1.0)),
            "no bound marked: the lines pool several values of T·ρ",
        );
    } else {
        legend.push(
            Mark::Dashed(rgba(80, 80, 80, 1.0)),
            "dashed vertical: the analytic bound ε = T·ρ of the line of the same colour",
        );
    }
}

/// The longest-overlap panels of `panels` (which come in pairs, longest then mean), each
/// titled as also the mean: for when the means repeat the longest.
fn longest_only(panels: Vec<LinePanel>) -> Vec<LinePanel> {
    panels
        .into_iter()
        .step_by(2)
        .map(|mut p| {
            p.title = p.title.replacen(
                "longest overlap",
                "longest overlap, also the mean total per run",
                1,
            );
            p
        })
        .collect()
}

/// The overlap chart over epsilon: the longest overlap and the mean per run, against the
/// analytic bound T * rho of each line.
pub fn overlap_vs_epsilon(d: &Data) -> Result<LineChart, String> {
    let Some(ep) = d.eps else {
        return Err(
            "needs epsilon varied, with two values or more (and a strategy with a holder margin)"
                .into(),
        );
    };
    let eps = XParam::of(d, ep);
    let plan = EpsPlan::of(d, ep);
    let max_ns = plan
        .groups
        .iter()
        .map(|g| g.stats.max_overlap_ns as f64)
        .fold(0.0, f64::max);
    let (div, unit) = time_unit(max_ns);
    let mut panels = Vec::new();
    // Whether every cell's mean total overlap per run equals its longest overlap.
    let mut all_same = true;
    let mut legend = Legend::default();
    for pv in values_in_order(d, plan.panel_p) {
        let suffix = match (plan.panel_p, pv) {
            (Some(p), Some(k)) => format!(", {} = {}", d.name(p), d.value(p, k)),
            _ => String::new(),
        };
        let lines = EpsLines::of(d, &plan, &eps, pv, div, &mut legend);
        all_same &= lines.means_repeat_max();
        panels.extend(lines.panels(&suffix, unit));
    }
    eps_legend_tail(d, &plan, &mut legend);
    // Panels come in pairs (longest, mean); drop the means when they repeat the longest.
    let mut cols = 2;
    if all_same {
        panels = longest_only(panels);
        cols = panels.len().min(2);
    }
    crossing_entry(&mut legend, &panels, "the overlap", "ε");
    untested_entry(&mut legend, &panels);
    // One panel takes the width of two, so that the titles fit.
    let panel_size = if cols == 1 { (1280, 420) } else { (640, 400) };
    Ok(LineChart {
        page: Page {
            width: cols as i32 * panel_size.0 + 40,
            title: "How long the lease overlapped, as the holder margin ε grows".into(),
            lines: vec![format!(
                "{}; an overlap is an interval in which two nodes both held the lease{}",
                d.subtitle_base(),
                d.pooled_note(&plan.shown())
            )],
            legend,
        },
        x_title: axis_name(d.name(ep), Role::Epsilon) + eps.axis.scale.note(),
        x: eps.axis,
        x_ticks: eps.ticks,
        x_symbol: "ε".into(),
        panels,
        cols,
        panel_size,
    })
}

pub fn availability_vs_t(d: &Data) -> Result<LineChart, String> {
    let Some(tp) = d.t else {
        return Err("needs T varied, with two values or more".into());
    };
    let XParam {
        raw: t_raw,
        order: t_order,
        axis: x,
        ticks: x_ticks,
    } = XParam::of(d, tp);
    let line_p = d
        .eps
        .filter(|&p| d.count(p) <= MAX_LINES)
        .or(d.rho.filter(|&p| d.count(p) <= MAX_LINES));
    let mut keys = vec![tp];
    keys.extend(line_p);
    let groups = d.pool(&keys);
    let line_vals: Vec<Option<usize>> = match line_p {
        Some(p) => sorted_order(&d.numeric(p)).into_iter().map(Some).collect(),
        None => vec![None],
    };
    let max_unavail = groups
        .iter()
        .map(|g| g.stats.mean_max_unavailable_ns() as f64)
        .fold(0.0, f64::max);
    let (div, unit) = time_unit(max_unavail);
    let mut avail = Vec::new();
    let mut unavail = Vec::new();
    let mut legend = Legend::default();
    for (li, lv) in line_vals.iter().enumerate() {
        let (color, marker) = series_style(li);
        let mut pa = Vec::new();
        let mut pu = Vec::new();
        for &tk in &t_order {
            if let Some(g) = groups
                .iter()
                .find(|g| g.key[0] == tk && (line_p.is_none() || Some(g.key[1]) == *lv))
            {
                pa.push((t_raw[tk], g.stats.mean_availability() * 100.0));
                pu.push((t_raw[tk], g.stats.mean_max_unavailable_ns() as f64 / div));
            }
        }
        let label = match (line_p, lv) {
            (Some(p), Some(k)) => d.value_label(p, *k),
            _ => "all cells".to_string(),
        };
        legend.push(Mark::Series(color, marker), &label);
        avail.push(Series {
            label: label.clone(),
            color,
            marker,
            points: pa,
            untested: Vec::new(),
        });
        unavail.push(Series {
            label,
            color,
            marker,
            points: pu,
            untested: Vec::new(),
        });
    }
    let mut ya = YAxis::new(
        avail.iter().flat_map(|s| s.points.iter().map(|p| p.1)),
        false,
    );
    // Availability never passes 100 %: no tick above it.
    if ya.hi > 100.0 {
        ya.ticks.retain(|&t| t <= 100.0 + 1e-9);
        ya.hi = 100.0f64.max(ya.ticks.last().copied().unwrap_or(100.0));
    }
    let yu = YAxis::new(
        unavail.iter().flat_map(|s| s.points.iter().map(|p| p.1)),
        true,
    );
    let mut shown = vec![tp];
    shown.extend(line_p);
    let panels = vec![
        LinePanel {
            title: "mean availability".into(),
            y_title: "time some running node held the lease (%)".into(),
            series: avail,
            bounds: Vec::new(),
            y: ya,
            zero_words: "0 %".into(),
        },
        LinePanel {
            title: "longest window with no holder (mean over runs)".into(),
            y_title: format!("longest unavailable window ({unit})"),
            series: unavail,
            bounds: Vec::new(),
            y: yu,
            zero_words: "no window without a holder".into(),
        },
    ];
    crossing_entry(&mut legend, &panels, "the value", "T");
    Ok(LineChart {
        page: Page {
            width: 2 * 640 + 40,
            title: "Availability as the lease term T grows".into(),
            lines: vec![format!("{}{}", d.subtitle_base(), d.pooled_note(&shown))],
            legend,
        },
        x_title: axis_name(d.name(tp), Role::T) + x.scale.note(),
        x,
        x_ticks,
        x_symbol: "T".into(),
        panels,
        cols: 2,
        panel_size: (640, 420),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::chart::scene::Shape;

    const XS: [f64; 4] = [0.0, 1e6, 5e6, 50e6];

    /// A one-panel chart of series over epsilon = 0, 1, 5, 50 ms, labelled rho = 200, 500, ...
    fn chart(ys: &[[f64; 4]]) -> LineChart {
        let labels = [
            "rho = 200 ppm",
            "rho = 500 ppm",
            "rho = 1000 ppm",
            "rho = 2000 ppm",
        ];
        let series: Vec<Series> = ys
            .iter()
            .enumerate()
            .map(|(k, ys)| {
                let (color, marker) = series_style(k);
                Series {
                    label: labels[k].into(),
                    color,
                    marker,
                    points: XS.iter().copied().zip(ys.iter().copied()).collect(),
                    untested: Vec::new(),
                }
            })
            .collect();
        let y = YAxis::new(
            series.iter().flat_map(|s| s.points.iter().map(|p| p.1)),
            true,
        );
        LineChart {
            page: Page {
                width: 680,
                title: "t".into(),
                lines: Vec::new(),
                legend: Legend::default(),
            },
            x_title: "ε".into(),
            x: NumAxis::new(&XS),
            x_ticks: XS.iter().map(|&v| (v, format!("{}ms", v / 1e6))).collect(),
            x_symbol: "ε".into(),
            panels: vec![LinePanel {
                title: "longest overlap".into(),
                y_title: "ms".into(),
                series,
                bounds: Vec::new(),
                y,
                zero_words: "no overlap".into(),
            }],
            cols: 1,
            panel_size: (640, 400),
        }
    }

    /// The centres of the filled circles of `color` at the marker size.
    fn circles(s: &Scene, color: RGBAColor) -> Vec<(i32, i32)> {
        let mut v: Vec<(i32, i32)> = s
            .shapes
            .iter()
            .filter_map(|sh| match sh {
                Shape::Circle {
                    x,
                    y,
                    r,
                    color: c,
                    filled: true,
                } if *c == color && *r == marks::R => Some((*x, *y)),
                _ => None,
            })
            .collect();
        v.sort();
        v
    }

    /// The centres of the filled squares of `color` (the second series' marker).
    fn squares(s: &Scene, color: RGBAColor) -> Vec<(i32, i32)> {
        s.shapes
            .iter()
            .filter_map(|sh| match sh {
                Shape::Rect {
                    x0,
                    y0,
                    x1,
                    y1,
                    color: c,
                } if *c == color && x1 - x0 == 2 * marks::R - 1 => {
                    Some(((x0 + x1) / 2, (y0 + y1) / 2))
                }
                _ => None,
            })
            .collect()
    }

    fn texts(s: &Scene) -> Vec<String> {
        s.shapes
            .iter()
            .filter_map(|sh| match sh {
                Shape::Text { text, .. } => Some(text.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn series_that_coincide_stay_visible_and_are_named() {
        // rho = 200 and 500 ppm: no overlap at any epsilon, the same points exactly.
        let c = chart(&[
            [0.0; 4],
            [0.0; 4],
            [3.0, 1.0, 0.0, 0.0],
            [5.0, 4.0, 2.0, 0.0],
        ]);
        let s = c.scene();
        // The plot's markers (the note above the plot shows the group's markers too).
        let in_plot = |v: Vec<(i32, i32)>| v.into_iter().filter(|p| p.1 > 150).collect::<Vec<_>>();
        let a = in_plot(circles(&s, PALETTE[0]));
        let b = in_plot(squares(&s, PALETTE[1]));
        assert_eq!((a.len(), b.len()), (4, 4), "{a:?} {b:?}");
        // Same values, different pixels: each marker is dodged sideways off the other.
        for (p, q) in a.iter().zip(&b) {
            assert_eq!(p.1, q.1);
            assert!(q.0 - p.0 >= DODGE_PX, "{p:?} {q:?}");
        }
        // Every series has its own colour and its own marker shape.
        for i in 0..MAX_LINES {
            for j in i + 1..MAX_LINES {
                let (ci, mi) = series_style(i);
                let (cj, mj) = series_style(j);
                assert!(ci != cj && mi != mj, "{i} {j}");
            }
        }
        let t = texts(&s);
        assert!(
            t.iter()
                .any(|t| t == "rho = 200, 500 ppm: no overlap at any ε (lines coincide)"),
            "{t:?}"
        );
        // Series that do not coincide get no note.
        assert_eq!(t.iter().filter(|t| t.contains("coincide")).count(), 1);
    }

    #[test]
    fn untested_points_are_ringed_joined_to_nothing_and_named() {
        // Two series at 0 everywhere: rho = 200 untested at every epsilon (no run had a
        // handover), rho = 500 tested. They do not coincide: one was measured, one not.
        let mut c = chart(&[[0.0; 4], [0.0; 4], [0.0; 4]]);
        c.panels[0].series[0].untested = XS.to_vec();
        c.panels[0].series[2].untested = vec![XS[3]];
        let s = c.scene();
        let t = texts(&s);
        assert!(
            !t.iter().any(|t| t.contains("coincide")),
            "three different series: {t:?}"
        );
        let rings: Vec<(i32, i32)> = s
            .shapes
            .iter()
            .filter_map(|sh| match sh {
                Shape::Circle {
                    x,
                    y,
                    filled: false,
                    color,
                    ..
                } if *color == UNTESTED_HATCH => Some((*x, *y)),
                _ => None,
            })
            .collect();
        assert_eq!(rings.len(), 4 + 1, "{rings:?}");
        // The untested series has no line at all; the third none into its last point.
        let lines_of = |color: RGBAColor| -> usize {
            s.shapes
                .iter()
                .filter_map(|sh| match sh {
                    Shape::Line { pts, color: c, .. } if *c == color => Some(pts.len()),
                    _ => None,
                })
                .filter(|&n| n >= 2)
                .sum()
        };
        assert_eq!(lines_of(PALETTE[0]), 0);
        assert_eq!(
            lines_of(PALETTE[1]),
            4,
            "a solid line through the 4 tested points"
        );
        assert_eq!(
            lines_of(PALETTE[2]),
            3,
            "a line through the first 3 points only"
        );
        // Two series untested everywhere coincide, and the note says untested, not "no overlap".
        let mut c = chart(&[[0.0; 4], [0.0; 4]]);
        for sr in &mut c.panels[0].series {
            sr.untested = XS.to_vec();
        }
        let t = texts(&c.scene());
        assert!(
            t.iter().any(|t| {
                t
                == "rho = 200, 500 ppm: no run with a handover at any ε: untested (lines coincide)"
            }),
            "{t:?}"
        );
    }

    #[test]
    fn a_drop_to_zero_between_grid_values_is_dotted_not_solid() {
        let c = chart(&[[5.0, 2.0, 0.0, 0.0]]);
        let s = c.scene();
        let m = circles(&s, PALETTE[0]);
        assert_eq!(m.len(), 4);
        let solid_segments: Vec<((i32, i32), (i32, i32))> = s
            .shapes
            .iter()
            .filter_map(|sh| match sh {
                Shape::Line { pts, color, .. } if *color == PALETTE[0] => Some(pts),
                _ => None,
            })
            .flat_map(|pts| pts.windows(2).map(|w| (w[0], w[1])).collect::<Vec<_>>())
            .collect();
        // Solid: 5 -> 2 (both above 0) and 0 -> 0; never 2 -> 0.
        assert!(solid_segments.contains(&(m[0], m[1])), "{solid_segments:?}");
        assert!(solid_segments.contains(&(m[2], m[3])), "{solid_segments:?}");
        assert!(
            !solid_segments
                .iter()
                .any(|&(a, b)| (a, b) == (m[1], m[2]) || (b, a) == (m[1], m[2])),
            "{solid_segments:?}"
        );
        let dotted: Vec<&Vec<(i32, i32)>> = s
            .shapes
            .iter()
            .filter_map(|sh| match sh {
                Shape::Dashed { pts, color, .. }
                    if (color.0, color.1, color.2)
                        == (PALETTE[0].0, PALETTE[0].1, PALETTE[0].2)
                        && color.3 < 1.0 =>
                {
                    Some(pts)
                }
                _ => None,
            })
            .collect();
        assert_eq!(dotted, [&vec![m[1], m[2]]]);
        assert!(has_crossing(&c.panels));
        assert!(!has_crossing(&chart(&[[5.0, 2.0, 1.0, 1.0]]).panels));
    }

    #[test]
    fn labels_of_coinciding_series_are_joined_compactly() {
        assert_eq!(
            join_labels(&["rho = 200 ppm", "rho = 500 ppm"]),
            "rho = 200, 500 ppm"
        );
        assert_eq!(
            join_labels(&["epsilon = 0ms", "epsilon = 1ms"]),
            "epsilon = 0ms, 1ms"
        );
        assert_eq!(
            join_labels(&["T = 5s", "rho = 200 ppm"]),
            "T = 5s; rho = 200 ppm"
        );
    }
}
