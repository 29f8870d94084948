//! A sweep's charts, as PNG and SVG: P(overlap) heatmaps over T x rho (one panel per epsilon)
//! with the analytic boundary epsilon = T*rho; overlap versus epsilon with the bound marked;
//! availability and the longest unavailable window versus T; and the safety/availability
//! trade-off of every parameter set with its frontier.
//!
//! Only the charts that the varied parameters allow are drawn; the others come back with the
//! reason they were skipped. Parameters a chart does not show are pooled (their runs summed),
//! and the chart says so. Drawing is deterministic (embedded font, no clock, no randomness), so
//! the same results give the same bytes. Nothing here runs simulations or writes reports.

use super::font::{ensure_registered, FAMILY};
use crate::sweep::aggregate::CellStats;
use crate::sweep::grid::{CellFacts, Grid};
use crate::sweep::path::Role;
use crate::sweep::report::human_ns;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::FontStyle;
use std::collections::BTreeMap;

/// One chart, drawn.
pub struct Chart {
    /// File stem: the chart is `<file>.png` and `<file>.svg`.
    pub file: &'static str,
    pub caption: String,
    pub png: Vec<u8>,
    pub svg: Vec<u8>,
}

/// The charts of a sweep, and those skipped with the reason.
pub struct Charts {
    pub drawn: Vec<Chart>,
    pub skipped: Vec<String>,
}

pub(super) type Drawn = Result<(), String>;

pub(super) fn err<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

/// Something drawable on any backend.
pub(super) trait Figure {
    fn size(&self) -> (u32, u32);
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn;
}

/// A region of a figure.
type Area<DB> = DrawingArea<DB, Shift>;

/// The height of a figure's title block with `lines` subtitle lines.
pub(super) fn head_height(lines: usize) -> u32 {
    70 + 22 * lines as u32
}

/// The size of a figure of `panels` panels in `cols` columns of `panel` pixels each, under a
/// title with `lines` subtitle lines and above a legend `legend_h` high.
fn panel_grid_size(
    panels: usize,
    cols: usize,
    panel: (u32, u32),
    lines: usize,
    legend_h: u32,
) -> (u32, u32) {
    let rows = panels.div_ceil(cols) as u32;
    (
        panel.0 * cols as u32 + 40,
        head_height(lines) + 20 + panel.1 * rows + legend_h,
    )
}

/// Draws the title block and splits the rest into the body and, `legend_h` high at the bottom,
/// the legend's area.
fn frame<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    height: u32,
    title_text: &str,
    lines: &[String],
    legend_h: u32,
) -> Result<(Area<DB>, Area<DB>), String> {
    let head = head_height(lines.len());
    let (top, rest) = root.split_vertically(head);
    title(&top, title_text, lines)?;
    Ok(rest.split_vertically(height - head - legend_h))
}

/// Draws `f` as PNG and SVG bytes, both in memory.
pub(super) fn render<F: Figure>(f: &F) -> Result<(Vec<u8>, Vec<u8>), String> {
    ensure_registered();
    let (w, h) = f.size();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        f.draw(&root)?;
        root.present().map_err(err)?;
    }
    let mut buf = vec![0u8; w as usize * h as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        f.draw(&root)?;
        root.present().map_err(err)?;
    }
    let mut png = Vec::new();
    {
        use image::ImageEncoder;
        image::codecs::png::PngEncoder::new(&mut png)
            .write_image(&buf, w, h, image::ColorType::Rgb8)
            .map_err(err)?;
    }
    Ok((png, svg.into_bytes()))
}

fn push<F: Figure>(out: &mut Charts, file: &'static str, caption: &str, fig: Result<F, String>) {
    match fig.and_then(|f| render(&f)) {
        Ok((png, svg)) => out.drawn.push(Chart {
            file,
            caption: caption.to_string(),
            png,
            svg,
        }),
        Err(why) => out.skipped.push(format!("{caption}: {why}")),
    }
}

/// Draws every chart the grid allows.
pub fn draw(grid: &Grid, stats: &[CellStats]) -> Charts {
    let mut out = Charts {
        drawn: Vec::new(),
        skipped: Vec::new(),
    };
    let d = Data::new(grid, stats);
    push(
        &mut out,
        "p_overlap_heatmap",
        "P(overlap) over T x rho, one panel per epsilon",
        heatmap(&d),
    );
    push(
        &mut out,
        "overlap_vs_epsilon",
        "Overlap (max and mean) versus epsilon, the bound T*rho marked",
        overlap_vs_epsilon(&d),
    );
    push(
        &mut out,
        "availability_vs_t",
        "Availability and the longest unavailable window versus T",
        availability_vs_t(&d),
    );
    push(
        &mut out,
        "tradeoff",
        "Safety versus availability, one point per parameter set",
        tradeoff(&d),
    );
    out
}

// ---------------------------------------------------------------------------------------------
// The data the charts read.

struct Data<'a> {
    grid: &'a Grid,
    stats: &'a [CellStats],
    t: Option<usize>,
    rho: Option<usize>,
    eps: Option<usize>,
}

/// Cells pooled by the value indices of some parameters.
struct Group {
    key: Vec<usize>,
    stats: CellStats,
    facts: CellFacts,
}

impl<'a> Data<'a> {
    fn new(grid: &'a Grid, stats: &'a [CellStats]) -> Data<'a> {
        let varied = |r: Role| {
            grid.param_with(r)
                .filter(|&p| grid.params[p].values.len() >= 2)
        };
        Data {
            grid,
            stats,
            t: varied(Role::T),
            rho: varied(Role::Rho),
            eps: varied(Role::Epsilon).filter(|_| grid.facts.iter().all(|f| f.eps_ns.is_some())),
        }
    }

    /// Pools the cells by the values of `params` (in grid order of first appearance).
    fn pool(&self, params: &[usize]) -> Vec<Group> {
        let mut groups: Vec<Group> = Vec::new();
        let mut at: BTreeMap<Vec<usize>, usize> = BTreeMap::new();
        for cell in 0..self.grid.cell_count() {
            let idx = self.grid.value_indices(cell);
            let key: Vec<usize> = params.iter().map(|&p| idx[p]).collect();
            match at.get(&key) {
                Some(&g) => groups[g].stats.merge(&self.stats[cell]),
                None => {
                    at.insert(key.clone(), groups.len());
                    groups.push(Group {
                        key,
                        stats: self.stats[cell].clone(),
                        facts: self.grid.facts[cell],
                    });
                }
            }
        }
        groups
    }

    /// How many values parameter `p` has.
    fn count(&self, p: usize) -> usize {
        self.grid.params[p].values.len()
    }

    /// "pooled over a, b" for the varied parameters not in `shown`, or "".
    fn pooled_note(&self, shown: &[usize]) -> String {
        let others: Vec<&str> = self
            .grid
            .params
            .iter()
            .enumerate()
            .filter(|(k, p)| !shown.contains(k) && p.values.len() > 1)
            .map(|(_, p)| p.name.as_str())
            .collect();
        if others.is_empty() {
            String::new()
        } else {
            format!("; runs pooled over {}", others.join(", "))
        }
    }

    /// The numeric value (T in ns, rho in ppm, epsilon in ns) of each value of parameter `p`.
    fn numeric(&self, p: usize) -> Vec<f64> {
        let role = self.grid.params[p].role;
        let n = self.grid.params[p].values.len();
        let mut out = vec![f64::NAN; n];
        for cell in 0..self.grid.cell_count() {
            let k = self.grid.value_indices(cell)[p];
            if out[k].is_nan() {
                let f = &self.grid.facts[cell];
                out[k] = match role {
                    Role::T => f.t_ns as f64,
                    Role::Rho => f.rho_ppm,
                    Role::Epsilon => f.eps_ns.unwrap_or(0) as f64,
                    Role::Other => k as f64,
                };
            }
        }
        out
    }

    fn name(&self, p: usize) -> &str {
        &self.grid.params[p].name
    }

    fn value(&self, p: usize, k: usize) -> &str {
        &self.grid.params[p].values[k]
    }

    /// `rho = 200 ppm`, `T = 10s`: a parameter's value for a legend.
    fn value_label(&self, p: usize, k: usize) -> String {
        let unit = if self.grid.params[p].role == Role::Rho {
            " ppm"
        } else {
            ""
        };
        format!("{} = {}{unit}", self.name(p), self.value(p, k))
    }

    fn subtitle_base(&self) -> String {
        format!(
            "{}: {} seeds per cell, strategy {}",
            self.grid.spec.name,
            self.grid.spec.seeds,
            self.grid.spec.scenario.strategy.name()
        )
    }
}

/// How a parameter's name reads on an axis.
fn axis_name(name: &str, role: Role) -> String {
    let what = match role {
        Role::T => "T, lease duration",
        Role::Rho => "ρ, clock drift spread (ppm)",
        Role::Epsilon => "ε, holder margin",
        Role::Other => return name.to_string(),
    };
    let short = match role {
        Role::T => "T",
        Role::Rho => "rho",
        _ => "epsilon",
    };
    if name == short {
        what.to_string()
    } else {
        format!("{what} [{name}]")
    }
}

/// Value positions sorted by numeric value: `order[i]` is the value index at position `i`.
fn sorted_order(vals: &[f64]) -> Vec<usize> {
    let mut o: Vec<usize> = (0..vals.len()).collect();
    o.sort_by(|&a, &b| vals[a].total_cmp(&vals[b]).then(a.cmp(&b)));
    o
}

/// The analytic boundary on a T x rho grid of cells (sorted values; cell (i, j) centred at
/// (i, j)): every edge between two neighbouring cells of which one has T * rho <= eps (the
/// bound predicts no overlap) and the other not, as a segment in cell coordinates.
fn boundary_edges(t_vals: &[f64], rho_vals: &[f64], eps_ns: f64) -> Vec<[(f64, f64); 2]> {
    let safe = |ti: usize, ri: usize| t_vals[ti] * rho_vals[ri] / 1e6 <= eps_ns;
    let (nt, nr) = (t_vals.len(), rho_vals.len());
    let mut edges = Vec::new();
    for ti in 0..nt {
        for ri in 0..nr {
            let (x, y) = (ti as f64, ri as f64);
            if ti + 1 < nt && safe(ti, ri) != safe(ti + 1, ri) {
                edges.push([(x + 0.5, y - 0.5), (x + 0.5, y + 0.5)]);
            }
            if ri + 1 < nr && safe(ti, ri) != safe(ti, ri + 1) {
                edges.push([(x - 0.5, y + 0.5), (x + 0.5, y + 0.5)]);
            }
        }
    }
    edges
}

/// A numeric axis for line charts: log10 positions when the values are positive and span a
/// decade or more, linear otherwise; ticks at the data values, labelled as given.
struct XAxis {
    log: bool,
    /// Divide raw values by this for linear positions (ns to ms, ...).
    unit: f64,
    ticks: Vec<(f64, String)>,
    range: (f64, f64),
}

impl XAxis {
    fn new(raw: &[f64], labels: &[String], unit: f64) -> XAxis {
        let pos_ok = raw.iter().all(|&v| v > 0.0);
        let (lo, hi) = raw
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &v| {
                (l.min(v), h.max(v))
            });
        let log = pos_ok && hi / lo >= 10.0;
        let mut ax = XAxis {
            log,
            unit,
            ticks: Vec::new(),
            range: (0.0, 1.0),
        };
        ax.ticks = raw
            .iter()
            .zip(labels)
            .map(|(&v, l)| (ax.pos(v), l.clone()))
            .collect();
        ax.ticks.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (a, b) = (ax.pos(lo), ax.pos(hi));
        let pad = if b > a { (b - a) * 0.08 } else { 0.5 };
        ax.range = (a - pad, b + pad);
        ax
    }

    fn pos(&self, raw: f64) -> f64 {
        if self.log {
            (raw / self.unit).log10()
        } else {
            raw / self.unit
        }
    }

    fn contains(&self, p: f64) -> bool {
        p.is_finite() && p >= self.range.0 && p <= self.range.1
    }
}

/// The most lines a line chart draws (one colour each) before it pools them.
const MAX_LINES: usize = 8;
/// The most rows of panels of the overlap chart.
const MAX_PANEL_ROWS: usize = 6;
/// The most heatmap panels (epsilon values).
const MAX_HEAT_PANELS: usize = 12;

const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

pub(super) fn text_style(size: u32) -> TextStyle<'static> {
    TextStyle::from((FAMILY, size).into_font())
}

fn bold(size: u32) -> TextStyle<'static> {
    TextStyle::from((FAMILY, size, FontStyle::Bold).into_font())
}

fn anchored(t: TextStyle<'static>, h: HPos, v: VPos) -> TextStyle<'static> {
    t.pos(Pos::new(h, v))
}

/// Draws the figure's title and subtitle lines in `area`.
pub(super) fn title<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    lines: &[String],
) -> Drawn {
    let (w, _) = area.dim_in_pixel();
    let cx = w as i32 / 2;
    area.draw(&Text::new(
        title.to_string(),
        (cx, 12),
        anchored(bold(24), HPos::Center, VPos::Top),
    ))
    .map_err(err)?;
    for (k, l) in lines.iter().enumerate() {
        area.draw(&Text::new(
            l.clone(),
            (cx, 44 + 22 * k as i32),
            anchored(text_style(16), HPos::Center, VPos::Top),
        ))
        .map_err(err)?;
    }
    Ok(())
}

/// A legend entry: a coloured mark and its text.
#[derive(Clone)]
enum Mark {
    Line(RGBColor),
    Dashed(RGBColor),
    Dot(RGBColor),
    Box(RGBColor),
}

/// Draws legend entries left to right, wrapping, in `area`.
fn legend<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, entries: &[(Mark, String)]) -> Drawn {
    let (w, _) = area.dim_in_pixel();
    let style = anchored(text_style(15), HPos::Left, VPos::Center);
    let (mut x, mut y) = (20i32, 14i32);
    for (mark, label) in entries {
        let tw = area
            .estimate_text_size(label, &style)
            .map(|(tw, _)| tw as i32)
            .unwrap_or(8 * label.len() as i32);
        if x + 36 + tw > w as i32 - 10 && x > 20 {
            x = 20;
            y += 24;
        }
        match mark {
            Mark::Line(c) => area
                .draw(&PathElement::new(
                    vec![(x, y), (x + 28, y)],
                    c.stroke_width(3),
                ))
                .map_err(err)?,
            Mark::Dashed(c) => {
                for k in 0..3 {
                    area.draw(&PathElement::new(
                        vec![(x + 10 * k, y), (x + 10 * k + 6, y)],
                        c.stroke_width(2),
                    ))
                    .map_err(err)?;
                }
            }
            Mark::Dot(c) => area
                .draw(&Circle::new((x + 14, y), 6, c.filled()))
                .map_err(err)?,
            Mark::Box(c) => {
                area.draw(&Rectangle::new(
                    [(x + 4, y - 8), (x + 24, y + 8)],
                    c.filled(),
                ))
                .map_err(err)?;
                area.draw(&Rectangle::new(
                    [(x + 4, y - 8), (x + 24, y + 8)],
                    BLACK.stroke_width(1),
                ))
                .map_err(err)?
            }
        }
        area.draw(&Text::new(label.clone(), (x + 34, y), style.clone()))
            .map_err(err)?;
        x += 34 + tw + 28;
    }
    Ok(())
}

/// Rows of legend needed for `entries` at width `w` (an estimate: 8 px per character).
fn legend_rows(entries: &[(Mark, String)], w: u32) -> u32 {
    let mut rows = 1;
    let mut x = 20u32;
    for (_, l) in entries {
        let tw = 8 * l.chars().count() as u32;
        if x + 36 + tw > w - 10 && x > 20 {
            rows += 1;
            x = 20;
        }
        x += 34 + tw + 28;
    }
    rows
}

fn fmt_num(v: f64) -> String {
    let a = v.abs();
    let s = if a == 0.0 {
        "0".to_string()
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A unit for durations up to `max_ns`: (divisor, name).
fn time_unit(max_ns: f64) -> (f64, &'static str) {
    if max_ns >= 2e9 {
        (1e9, "s")
    } else if max_ns >= 2e6 || max_ns == 0.0 {
        (1e6, "ms")
    } else if max_ns >= 2e3 {
        (1e3, "µs")
    } else {
        (1.0, "ns")
    }
}

// ---------------------------------------------------------------------------------------------
// P(overlap) heatmap over T x rho, one panel per epsilon.

struct Heatmap {
    title: String,
    lines: Vec<String>,
    t_desc: String,
    rho_desc: String,
    /// Labels and numeric values of T (ns) and rho (ppm), in ascending order.
    t_labels: Vec<String>,
    t_vals: Vec<f64>,
    rho_labels: Vec<String>,
    rho_vals: Vec<f64>,
    panels: Vec<HeatPanel>,
    cols: usize,
    panel_size: (u32, u32),
    legend: Vec<(Mark, String)>,
    legend_h: u32,
}

struct HeatPanel {
    title: String,
    eps_ns: Option<f64>,
    /// (T position, rho position, P(overlap), harm without overlap in some run)
    cells: Vec<(usize, usize, f64, bool)>,
}

fn heat_color(p: f64) -> RGBColor {
    if p <= 0.0 {
        return RGBColor(214, 239, 208);
    }
    let lerp = |a: (u8, u8, u8), b: (u8, u8, u8), t: f64| {
        let f = |x: u8, y: u8| (x as f64 + (y as f64 - x as f64) * t).round() as u8;
        RGBColor(f(a.0, b.0), f(a.1, b.1), f(a.2, b.2))
    };
    let (lo, mid, hi) = ((255, 237, 160), (253, 141, 60), (165, 0, 38));
    if p < 0.5 {
        lerp(lo, mid, p / 0.5)
    } else {
        lerp(mid, hi, (p - 0.5) / 0.5)
    }
}

fn heatmap(d: &Data) -> Result<Heatmap, String> {
    let (Some(tp), Some(rp)) = (d.t, d.rho) else {
        return Err("needs both T and rho varied, with two values or more each".into());
    };
    if let Some(ep) = d.eps.filter(|&p| d.count(p) > MAX_HEAT_PANELS) {
        return Err(format!(
            "one panel per epsilon value makes {} panels, more than {MAX_HEAT_PANELS}",
            d.count(ep)
        ));
    }
    let t_raw = d.numeric(tp);
    let r_raw = d.numeric(rp);
    let t_order = sorted_order(&t_raw);
    let r_order = sorted_order(&r_raw);
    let mut t_pos = vec![0; t_raw.len()];
    for (i, &k) in t_order.iter().enumerate() {
        t_pos[k] = i;
    }
    let mut r_pos = vec![0; r_raw.len()];
    for (i, &k) in r_order.iter().enumerate() {
        r_pos[k] = i;
    }
    let mut shown = vec![tp, rp];
    let eps_vals: Vec<Option<usize>> = match d.eps {
        Some(ep) => {
            shown.push(ep);
            let raw = d.numeric(ep);
            sorted_order(&raw).into_iter().map(Some).collect()
        }
        None => vec![None],
    };
    let mut panels = Vec::new();
    for e in &eps_vals {
        let mut keys = vec![tp, rp];
        if let Some(ep) = d.eps {
            keys.push(ep);
        }
        let groups = d.pool(&keys);
        let mut cells = Vec::new();
        let mut eps_ns = None;
        for g in groups.iter().filter(|g| e.is_none_or(|k| g.key[2] == k)) {
            let harm_only = g.stats.unsafe_runs > g.stats.overlap_runs;
            cells.push((
                t_pos[g.key[0]],
                r_pos[g.key[1]],
                g.stats.p_overlap(),
                harm_only,
            ));
            eps_ns = g.facts.eps_ns.map(|x| x as f64);
        }
        let title = match (e, d.eps) {
            (Some(k), Some(ep)) if d.name(ep) == "epsilon" => format!("ε = {}", d.value(ep, *k)),
            (Some(k), Some(ep)) => format!("ε = {} ({})", d.value(ep, *k), d.name(ep)),
            _ => match eps_ns {
                Some(x) => format!("ε = {} (not varied)", human_ns(x)),
                None => "no holder margin".to_string(),
            },
        };
        panels.push(HeatPanel {
            title,
            eps_ns,
            cells,
        });
    }
    let n = panels.len();
    let cols = match n {
        0..=3 => n.max(1),
        4 => 2,
        _ => 3,
    };
    let nt = t_raw.len() as u32;
    let nr = r_raw.len() as u32;
    let panel_size = (
        (150 + 95 * nt).clamp(420, 760),
        (130 + 62 * nr).clamp(340, 620),
    );
    let width = panel_size.0 * cols as u32 + 40;
    let legend = vec![
        (Mark::Box(heat_color(0.0)), "0: no run overlapped".to_string()),
        (Mark::Box(heat_color(0.25)), "0.25".to_string()),
        (Mark::Box(heat_color(0.5)), "0.5".to_string()),
        (Mark::Box(heat_color(0.75)), "0.75".to_string()),
        (Mark::Box(heat_color(1.0)), "1: every run overlapped".to_string()),
        (
            Mark::Dashed(RGBColor(20, 20, 20)),
            "analytic boundary ε = T·ρ between cells: below and left of it T·ρ ≤ ε, where the bound predicts no overlap".to_string(),
        ),
        (
            Mark::Box(HARM_FRAME),
            "framed \"harm\": some run had a zombie action, stale read or unsafe write without an overlap".to_string(),
        ),
    ];
    let legend_h = 24 * legend_rows(&legend, width) + 20;
    let pooled = d.pooled_note(&shown);
    Ok(Heatmap {
        title: "P(overlap): the fraction of runs in which two nodes held the lease at once".into(),
        lines: vec![format!(
            "{}; one panel per ε; each cell's number is P(overlap){pooled}",
            d.subtitle_base()
        )],
        t_desc: axis_name(d.name(tp), Role::T),
        rho_desc: axis_name(d.name(rp), Role::Rho),
        t_labels: t_order
            .iter()
            .map(|&k| d.value(tp, k).to_string())
            .collect(),
        t_vals: t_order.iter().map(|&k| t_raw[k]).collect(),
        rho_labels: r_order
            .iter()
            .map(|&k| d.value(rp, k).to_string())
            .collect(),
        rho_vals: r_order.iter().map(|&k| r_raw[k]).collect(),
        panels,
        cols,
        panel_size,
        legend,
        legend_h,
    })
}

impl Figure for Heatmap {
    fn size(&self) -> (u32, u32) {
        panel_grid_size(
            self.panels.len(),
            self.cols,
            self.panel_size,
            self.lines.len(),
            self.legend_h,
        )
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn {
        let (_, h) = self.size();
        let (body, foot) = frame(root, h, &self.title, &self.lines, self.legend_h)?;
        let body = body.margin(0, 0, 20, 20);
        let rows = self.panels.len().div_ceil(self.cols);
        let areas = body.split_evenly((rows, self.cols));
        let nt = self.t_vals.len();
        let nr = self.rho_vals.len();
        for (panel, area) in self.panels.iter().zip(&areas) {
            let mut chart = ChartBuilder::on(area)
                .caption(&panel.title, bold(18))
                .margin(12)
                .x_label_area_size(56)
                .y_label_area_size(80)
                .build_cartesian_2d(-0.5f64..nt as f64 - 0.5, -0.5f64..nr as f64 - 0.5)
                .map_err(err)?;
            chart
                .configure_mesh()
                .disable_mesh()
                .x_labels(0)
                .y_labels(0)
                .x_desc(&self.t_desc)
                .y_desc(&self.rho_desc)
                .axis_desc_style(text_style(16))
                .draw()
                .map_err(err)?;
            let tl: Vec<(f64, String)> = self
                .t_labels
                .iter()
                .enumerate()
                .map(|(i, l)| (i as f64, l.clone()))
                .collect();
            let rl: Vec<(f64, String)> = self
                .rho_labels
                .iter()
                .enumerate()
                .map(|(i, l)| (i as f64, l.clone()))
                .collect();
            x_ticks(root, &chart, &tl, false)?;
            y_ticks(root, &chart, &rl)?;
            for &(ti, ri, p, _) in &panel.cells {
                let (x, y) = (ti as f64, ri as f64);
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(x - 0.5, y - 0.5), (x + 0.5, y + 0.5)],
                        heat_color(p).filled(),
                    )))
                    .map_err(err)?;
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(x - 0.5, y - 0.5), (x + 0.5, y + 0.5)],
                        WHITE.stroke_width(2),
                    )))
                    .map_err(err)?;
            }
            // The analytic boundary, as the cells have it: an edge between two neighbouring
            // cells of which one has T·ρ <= ε (the bound predicts no overlap) and the other not.
            if let Some(eps) = panel.eps_ns.filter(|&e| e > 0.0) {
                let safe = |ti: usize, ri: usize| self.t_vals[ti] * self.rho_vals[ri] / 1e6 <= eps;
                let edges = boundary_edges(&self.t_vals, &self.rho_vals, eps);
                if edges.is_empty() {
                    let where_ = if safe(0, 0) {
                        "every cell has T·ρ ≤ ε"
                    } else {
                        "every cell has T·ρ > ε"
                    };
                    chart
                        .draw_series(std::iter::once(Text::new(
                            format!("ε = T·ρ is off the grid: {where_}"),
                            (-0.45, nr as f64 - 0.55),
                            anchored(text_style(13), HPos::Left, VPos::Top),
                        )))
                        .map_err(err)?;
                }
                for e in edges {
                    chart
                        .draw_series(DashedLineSeries::new(
                            e,
                            10,
                            6,
                            RGBColor(20, 20, 20).stroke_width(4),
                        ))
                        .map_err(err)?;
                }
            }
            // Cells where harm was done without an overlap: framed, so they do not pass for clean.
            for &(ti, ri, _, harm) in &panel.cells {
                if harm {
                    let (x, y) = (ti as f64, ri as f64);
                    chart
                        .draw_series(std::iter::once(Rectangle::new(
                            [(x - 0.42, y - 0.42), (x + 0.42, y + 0.42)],
                            HARM_FRAME.stroke_width(4),
                        )))
                        .map_err(err)?;
                    chart
                        .draw_series(std::iter::once(Text::new(
                            "harm",
                            (x, y - 0.25),
                            anchored(text_style(13), HPos::Center, VPos::Center),
                        )))
                        .map_err(err)?;
                }
            }
            // Each cell's P(overlap) on a patch of its colour, so the boundary never hides it.
            let (c0x, c0y) = chart.backend_coord(&(0.0, 0.0));
            let (c1x, c1y) = chart.backend_coord(&(1.0, 1.0));
            let (cell_w, cell_h) = ((c1x - c0x).abs(), (c1y - c0y).abs());
            for &(ti, ri, p, _) in &panel.cells {
                let (px, py) = chart.backend_coord(&(ti as f64, ri as f64));
                let color = if p > 0.6 { WHITE } else { BLACK };
                let txt = if p == 0.0 || p == 1.0 {
                    format!("{p:.0}")
                } else {
                    format!("{p:.2}")
                };
                let style = anchored(text_style(16), HPos::Center, VPos::Center);
                let (tw, th) = root
                    .estimate_text_size(&txt, &style)
                    .map(|(w, h)| (w as i32, h as i32))
                    .unwrap_or((30, 16));
                if tw + 8 > cell_w || th + 4 > cell_h {
                    continue; // too small to read: the colour says it
                }
                root.draw(&Rectangle::new(
                    [
                        (px - tw / 2 - 4, py - th / 2 - 2),
                        (px + tw / 2 + 4, py + th / 2 + 2),
                    ],
                    heat_color(p).filled(),
                ))
                .map_err(err)?;
                root.draw(&Text::new(txt, (px, py), style.color(&color)))
                    .map_err(err)?;
            }
        }
        legend(&foot, &self.legend)
    }
}

type Chart2d<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// Tick marks and labels under the x axis at the given positions (plotters' own ticks cannot
/// be placed at arbitrary values with a custom label), with light grid lines if `grid`.
fn x_ticks<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart2d<'_, DB>,
    ticks: &[(f64, String)],
    grid: bool,
) -> Drawn {
    let (xr, yr) = (chart.x_range(), chart.y_range());
    let style = anchored(text_style(15), HPos::Center, VPos::Top);
    // Labels that would touch the previous one are left out (their tick stays).
    let mut last_right = i32::MIN;
    for (x, label) in ticks {
        if *x < xr.start || *x > xr.end {
            continue;
        }
        let (px, bottom) = chart.backend_coord(&(*x, yr.start));
        let (_, top) = chart.backend_coord(&(*x, yr.end));
        if grid {
            root.draw(&PathElement::new(
                vec![(px, top), (px, bottom)],
                RGBColor(225, 225, 225).stroke_width(1),
            ))
            .map_err(err)?;
        }
        root.draw(&PathElement::new(
            vec![(px, bottom), (px, bottom + 6)],
            BLACK.stroke_width(1),
        ))
        .map_err(err)?;
        let w = root
            .estimate_text_size(label, &style)
            .map(|(w, _)| w as i32)
            .unwrap_or(8 * label.len() as i32);
        if px - w / 2 < last_right + 8 {
            continue;
        }
        last_right = px + w / 2;
        root.draw(&Text::new(label.clone(), (px, bottom + 12), style.clone()))
            .map_err(err)?;
    }
    Ok(())
}

/// Tick marks and labels left of the y axis at the given positions.
fn y_ticks<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart2d<'_, DB>,
    ticks: &[(f64, String)],
) -> Drawn {
    let xr = chart.x_range();
    let mut last_top = i32::MAX;
    for (y, label) in ticks {
        let (left, py) = chart.backend_coord(&(xr.start, *y));
        if py + 9 > last_top {
            continue; // would touch the label below it
        }
        last_top = py - 9;
        root.draw(&PathElement::new(
            vec![(left - 6, py), (left, py)],
            BLACK.stroke_width(1),
        ))
        .map_err(err)?;
        root.draw(&Text::new(
            label.clone(),
            (left - 11, py),
            anchored(text_style(15), HPos::Right, VPos::Center),
        ))
        .map_err(err)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Line charts: overlap versus epsilon, availability versus T.

struct Series {
    color: RGBColor,
    points: Vec<(f64, f64)>,
}

struct LinePanel {
    title: String,
    y_desc: String,
    series: Vec<Series>,
    /// Vertical dashed markers: (x position, colour, label above the line).
    markers: Vec<(f64, RGBColor, String)>,
    y_range: (f64, f64),
    y_decimals: usize,
}

struct LineChart {
    title: String,
    lines: Vec<String>,
    x_desc: String,
    x: XAxis,
    panels: Vec<LinePanel>,
    cols: usize,
    panel_size: (u32, u32),
    legend: Vec<(Mark, String)>,
    legend_h: u32,
}

impl Figure for LineChart {
    fn size(&self) -> (u32, u32) {
        panel_grid_size(
            self.panels.len(),
            self.cols,
            self.panel_size,
            self.lines.len(),
            self.legend_h,
        )
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn {
        let (_, h) = self.size();
        let (body, foot) = frame(root, h, &self.title, &self.lines, self.legend_h)?;
        let body = body.margin(0, 0, 20, 20);
        let rows = self.panels.len().div_ceil(self.cols);
        let areas = body.split_evenly((rows, self.cols));
        let ticks = self.x.ticks.clone();
        for (panel, area) in self.panels.iter().zip(&areas) {
            let (y0, y1) = panel.y_range;
            let mut chart = ChartBuilder::on(area)
                .caption(&panel.title, bold(18))
                .margin(14)
                .x_label_area_size(56)
                .y_label_area_size(84)
                .build_cartesian_2d(self.x.range.0..self.x.range.1, y0..y1)
                .map_err(err)?;
            let dec = panel.y_decimals;
            chart
                .configure_mesh()
                .light_line_style(WHITE)
                .bold_line_style(RGBColor(225, 225, 225))
                .x_desc(&self.x_desc)
                .y_desc(&panel.y_desc)
                .axis_desc_style(text_style(16))
                .label_style(text_style(14))
                .x_labels(0)
                .y_labels(8)
                .y_label_formatter(&|y| format!("{y:.dec$}"))
                .draw()
                .map_err(err)?;
            x_ticks(root, &chart, &ticks, true)?;
            // A bound inside the axis is a dashed vertical line; one outside it is a label at
            // the edge it lies beyond, with an arrow.
            for (k, (x, color, label)) in panel.markers.iter().enumerate() {
                let y = y1 - (y1 - y0) * (0.03 + 0.07 * (k % 4) as f64);
                let (at, text, h) = if self.x.contains(*x) {
                    chart
                        .draw_series(DashedLineSeries::new(
                            vec![(*x, y0), (*x, y1)],
                            8,
                            6,
                            color.stroke_width(2),
                        ))
                        .map_err(err)?;
                    (*x, label.clone(), HPos::Left)
                } else if *x > self.x.range.1 {
                    (self.x.range.1, format!("{label} →"), HPos::Right)
                } else {
                    (self.x.range.0, format!("← {label}"), HPos::Left)
                };
                chart
                    .draw_series(std::iter::once(Text::new(
                        text,
                        (at, y),
                        anchored(text_style(13), h, VPos::Top).color(color),
                    )))
                    .map_err(err)?;
            }
            for s in &panel.series {
                chart
                    .draw_series(LineSeries::new(s.points.clone(), s.color.stroke_width(3)))
                    .map_err(err)?;
                chart
                    .draw_series(
                        s.points
                            .iter()
                            .map(|&p| Circle::new(p, 5, s.color.filled())),
                    )
                    .map_err(err)?;
            }
        }
        legend(&foot, &self.legend)
    }
}

/// The y range for values `ys`, starting at 0 when `from_zero`, padded.
fn y_range(ys: impl Iterator<Item = f64>, from_zero: bool) -> (f64, f64) {
    let (lo, hi) = ys.fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), y| {
        (l.min(y), h.max(y))
    });
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    let lo = if from_zero { 0.0f64.min(lo) } else { lo };
    if hi - lo <= 0.0 {
        let pad = if hi == 0.0 { 1.0 } else { hi.abs() * 0.01 };
        return (lo - if from_zero { 0.0 } else { pad }, hi + pad);
    }
    let pad = (hi - lo) * 0.1;
    (if from_zero { lo } else { lo - pad }, hi + pad)
}

/// Decimals that tell ticks apart over a span.
fn decimals(span: f64) -> usize {
    if span <= 0.0 {
        return 2;
    }
    let step = span / 8.0;
    (-(step.log10().floor()) as i64).clamp(0, 6) as usize
}

fn overlap_vs_epsilon(d: &Data) -> Result<LineChart, String> {
    let Some(ep) = d.eps else {
        return Err(
            "needs epsilon varied, with two values or more (and a strategy with a holder margin)"
                .into(),
        );
    };
    let eps_raw = d.numeric(ep);
    let eps_order = sorted_order(&eps_raw);
    let eps_labels: Vec<String> = (0..eps_raw.len())
        .map(|k| d.value(ep, k).to_string())
        .collect();
    let x = XAxis::new(&eps_raw, &eps_labels, 1e6);
    // Lines per rho (or per T when rho does not vary), panels per T when both vary; too many
    // lines or panels to read are pooled instead.
    let fits = |p: Option<usize>, most: usize| p.filter(|&p| d.count(p) <= most);
    let line_p = fits(d.rho, MAX_LINES).or(fits(d.t, MAX_LINES));
    let panel_p = fits(d.t, MAX_PANEL_ROWS).filter(|&t| Some(t) != line_p);
    let mut keys = vec![ep];
    keys.extend(panel_p);
    keys.extend(line_p);
    // A line pooled over several T or rho has no single bound T * rho to mark.
    let bound_pooled = [d.t, d.rho].iter().flatten().any(|p| !keys.contains(p));
    let groups = d.pool(&keys);
    let panel_vals: Vec<Option<usize>> = match panel_p {
        Some(p) => sorted_order(&d.numeric(p)).into_iter().map(Some).collect(),
        None => vec![None],
    };
    let line_vals: Vec<Option<usize>> = match line_p {
        Some(p) => sorted_order(&d.numeric(p)).into_iter().map(Some).collect(),
        None => vec![None],
    };
    let key_of = |g: &Group, p: Option<usize>| -> Option<usize> {
        p.map(|p| g.key[keys.iter().position(|&k| k == p).expect("a key")])
    };
    let max_ns = groups
        .iter()
        .map(|g| g.stats.max_overlap_ns as f64)
        .fold(0.0, f64::max);
    let (div, unit) = time_unit(max_ns);
    let mut panels = Vec::new();
    // Whether every cell's mean total overlap per run equals its longest overlap (every run
    // overlapped alike, once): then the mean panels would repeat the max panels.
    let mut all_same = true;
    // Without panels per T, each line has one bound, said in the legend.
    let mut entries: Vec<(Mark, String)> = Vec::new();
    for pv in &panel_vals {
        let suffix = match (panel_p, pv) {
            (Some(p), Some(k)) => format!(", {} = {}", d.name(p), d.value(p, *k)),
            _ => String::new(),
        };
        let mut max_series = Vec::new();
        let mut mean_series = Vec::new();
        let mut markers = Vec::new();
        for (li, lv) in line_vals.iter().enumerate() {
            let color = PALETTE[li % PALETTE.len()];
            let mut pts_max = Vec::new();
            let mut pts_mean = Vec::new();
            let mut bound = None;
            let mut facts = None;
            for &ek in &eps_order {
                let g = groups.iter().find(|g| {
                    g.key[0] == ek && key_of(g, panel_p) == *pv && key_of(g, line_p) == *lv
                });
                if let Some(g) = g {
                    let xp = x.pos(eps_raw[ek]);
                    pts_max.push((xp, g.stats.max_overlap_ns as f64 / div));
                    pts_mean.push((xp, g.stats.mean_overlap_ns() as f64 / div));
                    bound = Some(g.facts.drift_margin_ns());
                    facts = Some(g.facts);
                }
            }
            let label = match (line_p, lv, facts) {
                (Some(p), Some(k), _) => d.value_label(p, *k),
                (_, _, Some(f)) if !bound_pooled => format!(
                    "T = {}, ρ = {} ppm",
                    human_ns(f.t_ns as f64),
                    fmt_num(f.rho_eff_ppm)
                ),
                _ => "all cells, pooled".to_string(),
            };
            match bound.filter(|_| !bound_pooled) {
                Some(b) => {
                    let bx = if b > 0.0 || !x.log {
                        x.pos(b)
                    } else {
                        f64::NAN
                    };
                    markers.push((bx, color, format!("T·ρ = {}", human_ns(b))));
                    if panel_p.is_none() {
                        entries.push((
                            Mark::Line(color),
                            format!("{label}: bound T·ρ = {}", human_ns(b)),
                        ));
                    }
                }
                None if panel_p.is_none() => entries.push((Mark::Line(color), label.clone())),
                None => {}
            }
            max_series.push(Series {
                color,
                points: pts_max,
            });
            mean_series.push(Series {
                color,
                points: pts_mean,
            });
        }
        all_same &= max_series
            .iter()
            .zip(&mean_series)
            .all(|(a, b)| a.points == b.points);
        let yr = y_range(
            max_series.iter().flat_map(|s| s.points.iter().map(|p| p.1)),
            true,
        );
        panels.push(LinePanel {
            title: format!("longest overlap{suffix}"),
            y_desc: format!("max overlap of any run ({unit})"),
            series: max_series,
            markers: markers.clone(),
            y_range: yr,
            y_decimals: decimals(yr.1 - yr.0),
        });
        let yr = y_range(
            mean_series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.1)),
            true,
        );
        panels.push(LinePanel {
            title: format!("mean overlap per run{suffix}"),
            y_desc: format!("total overlap per run, mean ({unit})"),
            series: mean_series,
            markers,
            y_range: yr,
            y_decimals: decimals(yr.1 - yr.0),
        });
    }
    if panel_p.is_some() {
        // Colours stand for the line parameter's values; each panel labels its own bounds.
        for (li, lv) in line_vals.iter().enumerate() {
            if let (Some(p), Some(k)) = (line_p, lv) {
                entries.push((
                    Mark::Line(PALETTE[li % PALETTE.len()]),
                    d.value_label(p, *k),
                ));
            }
        }
    }
    entries.push(if bound_pooled {
        (
            Mark::Dashed(WHITE),
            "no bound marked: the lines pool several values of T·ρ".into(),
        )
    } else {
        (
            Mark::Dashed(RGBColor(80, 80, 80)),
            "dashed vertical: the analytic bound ε = T·ρ of the line of the same colour".into(),
        )
    });
    let mut shown = vec![ep];
    shown.extend(panel_p);
    shown.extend(line_p);
    // Panels come in pairs (longest, mean); drop the means when they repeat the longest.
    let mut cols = 2;
    if all_same {
        panels = panels
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
            .collect();
        cols = panels.len().min(2);
    }
    // One panel takes the width of two, so that the titles fit.
    let panel_size = if cols == 1 { (1280, 420) } else { (640, 400) };
    let width = cols as u32 * panel_size.0 + 40;
    let legend_h = 24 * legend_rows(&entries, width) + 20;
    Ok(LineChart {
        title: "How long the lease overlapped, as the holder margin ε grows".into(),
        lines: vec![format!(
            "{}; an overlap is an interval in which two nodes both held the lease{}",
            d.subtitle_base(),
            d.pooled_note(&shown)
        )],
        x_desc: axis_name(d.name(ep), Role::Epsilon) + if x.log { " (log scale)" } else { "" },
        x,
        panels,
        cols,
        panel_size,
        legend: entries,
        legend_h,
    })
}

fn availability_vs_t(d: &Data) -> Result<LineChart, String> {
    let Some(tp) = d.t else {
        return Err("needs T varied, with two values or more".into());
    };
    let t_raw = d.numeric(tp);
    let t_order = sorted_order(&t_raw);
    let t_labels: Vec<String> = (0..t_raw.len())
        .map(|k| d.value(tp, k).to_string())
        .collect();
    let x = XAxis::new(&t_raw, &t_labels, 1e9);
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
    let mut entries = Vec::new();
    for (li, lv) in line_vals.iter().enumerate() {
        let color = PALETTE[li % PALETTE.len()];
        let mut pa = Vec::new();
        let mut pu = Vec::new();
        for &tk in &t_order {
            if let Some(g) = groups
                .iter()
                .find(|g| g.key[0] == tk && (line_p.is_none() || Some(g.key[1]) == *lv))
            {
                let xp = x.pos(t_raw[tk]);
                pa.push((xp, g.stats.mean_availability() * 100.0));
                pu.push((xp, g.stats.mean_max_unavailable_ns() as f64 / div));
            }
        }
        let label = match (line_p, lv) {
            (Some(p), Some(k)) => d.value_label(p, *k),
            _ => "all cells".to_string(),
        };
        entries.push((Mark::Line(color), label));
        avail.push(Series { color, points: pa });
        unavail.push(Series { color, points: pu });
    }
    let ya = y_range(
        avail.iter().flat_map(|s| s.points.iter().map(|p| p.1)),
        false,
    );
    let ya = (ya.0, ya.1.min(100.0 + (ya.1 - ya.0) * 0.1));
    let yu = y_range(
        unavail.iter().flat_map(|s| s.points.iter().map(|p| p.1)),
        true,
    );
    let mut shown = vec![tp];
    shown.extend(line_p);
    let panels = vec![
        LinePanel {
            title: "mean availability".into(),
            y_desc: "time some running node held the lease (%)".into(),
            series: avail,
            markers: Vec::new(),
            y_range: ya,
            y_decimals: decimals(ya.1 - ya.0),
        },
        LinePanel {
            title: "longest window with no holder (mean over runs)".into(),
            y_desc: format!("longest unavailable window ({unit})"),
            series: unavail,
            markers: Vec::new(),
            y_range: yu,
            y_decimals: decimals(yu.1 - yu.0),
        },
    ];
    let width = 2 * 640 + 40;
    let legend_h = 24 * legend_rows(&entries, width) + 20;
    Ok(LineChart {
        title: "Availability as the lease term T grows".into(),
        lines: vec![format!("{}{}", d.subtitle_base(), d.pooled_note(&shown))],
        x_desc: axis_name(d.name(tp), Role::T) + if x.log { " (log scale)" } else { "" },
        x,
        panels,
        cols: 2,
        panel_size: (640, 420),
        legend: entries,
        legend_h,
    })
}

// ---------------------------------------------------------------------------------------------
// Safety versus availability.

struct Tradeoff {
    title: String,
    lines: Vec<String>,
    /// (P(overlap), availability %, class: 0 safe, 1 harm only, 2 overlap)
    points: Vec<(f64, f64, u8)>,
    frontier: Vec<(f64, f64, String)>,
    /// The points of the best safe setting (one per environment tried), circled.
    best: Vec<(f64, f64)>,
    y_range: (f64, f64),
    legend: Vec<(Mark, String)>,
}

const SAFE: RGBColor = RGBColor(44, 160, 44);
const HARM: RGBColor = RGBColor(255, 127, 14);
/// The heatmap's frame for harm without overlap: a purple no heat colour comes near.
const HARM_FRAME: RGBColor = RGBColor(84, 39, 143);
const OVER: RGBColor = RGBColor(214, 39, 40);

fn tradeoff(d: &Data) -> Result<Tradeoff, String> {
    let n = d.grid.cell_count();
    if n < 2 {
        return Err("needs two parameter sets or more".into());
    }
    let points: Vec<(f64, f64, u8)> = d
        .stats
        .iter()
        .map(|s| {
            let class = if s.safe() {
                0
            } else if s.overlap_runs == 0 {
                1
            } else {
                2
            };
            (s.p_unsafe(), s.mean_availability() * 100.0, class)
        })
        .collect();
    // The frontier: the most available parameter set at each P(unsafe), keeping only those
    // more available than every safer one. Its first point (at 0) is the best safe set.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| {
        points[a]
            .0
            .total_cmp(&points[b].0)
            .then(points[b].1.total_cmp(&points[a].1))
            .then(a.cmp(&b))
    });
    let mut frontier = Vec::new();
    let mut best_y = f64::NEG_INFINITY;
    for c in order {
        if points[c].1 > best_y {
            best_y = points[c].1;
            frontier.push((points[c].0, points[c].1, d.grid.label(c)));
        }
    }
    // The frontier's safe point is the best safe setting when no environment was varied
    // (with one, a setting spans several points; the report names it).
    let best = crate::sweep::report::best_safe(d.grid, d.stats, 1);
    if let (Some(first), Some(b)) = (frontier.first_mut(), best.first()) {
        if b.cells.len() == 1 && first.2 == d.grid.label(b.cells[0]) {
            first.2 = format!("best safe: {}", first.2);
        }
    }
    let best: Vec<(f64, f64)> = best
        .first()
        .map(|b| {
            b.cells
                .iter()
                .map(|&c| (points[c].0, points[c].1))
                .collect()
        })
        .unwrap_or_default();
    let y_range = y_range(points.iter().map(|p| p.1), false);
    Ok(Tradeoff {
        title: "Safety versus availability: one point per parameter set".into(),
        lines: vec![format!(
            "{}; a point at x = 0 is safe in every run; the frontier is the best availability for each level of risk",
            d.subtitle_base()
        )],
        points,
        frontier,
        best,
        y_range,
        legend: vec![
            (
                Mark::Dot(SAFE),
                "safe: no overlap and no harm in any run".into(),
            ),
            (
                Mark::Dot(HARM),
                "no overlap, but harm (zombie action, stale read, unsafe write)".into(),
            ),
            (Mark::Dot(OVER), "overlap in some run".into()),
            (
                Mark::Line(RGBColor(60, 60, 60)),
                "frontier: the most available set at each P(unsafe)".into(),
            ),
        ],
    })
}

impl Figure for Tradeoff {
    fn size(&self) -> (u32, u32) {
        (1100, 820)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn {
        let (w, h) = self.size();
        let legend_h = 24 * legend_rows(&self.legend, w) + 20;
        let (body, foot) = frame(root, h, &self.title, &self.lines, legend_h)?;
        let body = body.margin(0, 0, 20, 30);
        let (y0, y1) = self.y_range;
        let mut chart = ChartBuilder::on(&body)
            .margin(16)
            .x_label_area_size(56)
            .y_label_area_size(96)
            .build_cartesian_2d(-0.04f64..1.04f64, y0..y1)
            .map_err(err)?;
        let dec = decimals(y1 - y0);
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .bold_line_style(RGBColor(225, 225, 225))
            .x_desc("P(unsafe): fraction of the set's runs with an overlap or harm (zombie action, stale read, unsafe write)")
            .y_desc("mean availability (%)")
            .axis_desc_style(text_style(16))
            .label_style(text_style(14))
            .x_labels(11)
            .y_labels(8)
            .x_label_formatter(&|x| fmt_num(*x))
            .y_label_formatter(&|y| format!("{y:.dec$}"))
            .draw()
            .map_err(err)?;
        // Frontier as a staircase.
        let mut stair = Vec::new();
        for (k, f) in self.frontier.iter().enumerate() {
            if k > 0 {
                stair.push((f.0, self.frontier[k - 1].1));
            }
            stair.push((f.0, f.1));
        }
        chart
            .draw_series(LineSeries::new(stair, RGBColor(60, 60, 60).stroke_width(2)))
            .map_err(err)?;
        for class in 0..3u8 {
            let color = [SAFE, HARM, OVER][class as usize];
            chart
                .draw_series(
                    self.points
                        .iter()
                        .filter(|p| p.2 == class)
                        .map(|p| Circle::new((p.0, p.1), 6, color.mix(0.75).filled())),
                )
                .map_err(err)?;
        }
        // Labels of the frontier points (at most 8), each at the first of a few spots around
        // its point that overlaps no label placed before it.
        let style = text_style(14);
        let mut placed: Vec<(i32, i32, i32, i32)> = Vec::new();
        // The frontier's points are obstacles too: no label may hide one.
        for f in &self.frontier {
            let (px, py) = chart.backend_coord(&(f.0, f.1));
            placed.push((px - 12, py - 12, px + 12, py + 12));
        }
        for f in self.frontier.iter().take(8) {
            let (px, py) = chart.backend_coord(&(f.0, f.1));
            let (tw, th) = root
                .estimate_text_size(&f.2, &style)
                .map(|(w, h)| (w as i32, h as i32))
                .unwrap_or((8 * f.2.len() as i32, 14));
            let right = f.0 < 0.6;
            let candidates = [-16, 16, -36, 36, -56, 56, -76, 76];
            let spot = candidates
                .iter()
                .map(|&dy| {
                    let x0 = if right { px + 10 } else { px - 10 - tw };
                    let y0 = py + dy - th / 2;
                    (x0, y0, x0 + tw, y0 + th)
                })
                .find(|r| {
                    !placed
                        .iter()
                        .any(|p| r.0 < p.2 && p.0 < r.2 && r.1 < p.3 && p.1 < r.3)
                });
            if let Some(r) = spot {
                placed.push(r);
                let mid = (r.1 + r.3) / 2;
                if (mid - py).abs() > 18 {
                    // Far from its point: a leader line says whose label it is.
                    let end = if right { r.0 - 3 } else { r.2 + 3 };
                    root.draw(&PathElement::new(
                        vec![(px, py), (end, mid)],
                        RGBColor(120, 120, 120).stroke_width(1),
                    ))
                    .map_err(err)?;
                }
                root.draw(&Rectangle::new(
                    [(r.0 - 3, r.1 - 2), (r.2 + 3, r.3 + 2)],
                    WHITE.mix(0.85).filled(),
                ))
                .map_err(err)?;
                root.draw(&Text::new(
                    f.2.clone(),
                    (r.0, r.1),
                    anchored(style.clone(), HPos::Left, VPos::Top),
                ))
                .map_err(err)?;
            }
        }
        chart
            .draw_series(
                self.best
                    .iter()
                    .map(|&(x, y)| Circle::new((x, y), 11, BLACK.stroke_width(2))),
            )
            .map_err(err)?;
        legend(&foot, &self.legend)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_boundary_runs_between_cells_on_either_side_of_the_bound() {
        // T = 2, 5, 10 s (ns), rho = 200, 1000 ppm, eps = 2 ms: T * rho is 0.4, 1, 2 ms at
        // rho 200 (all <= eps) and 2, 5, 10 ms at rho 1000 (only T = 2 s <= eps). So the
        // boundary is the top edge of the cells (5 s, 200) and (10 s, 200), and the right edge
        // of (2 s, 1000): three segments.
        let t = [2e9, 5e9, 10e9];
        let rho = [200.0, 1000.0];
        let edges = boundary_edges(&t, &rho, 2e6);
        assert_eq!(
            edges,
            vec![
                [(0.5, 0.5), (0.5, 1.5)],
                [(0.5, 0.5), (1.5, 0.5)],
                [(1.5, 0.5), (2.5, 0.5)],
            ]
        );
        // Every cell on one side: no edge.
        assert!(boundary_edges(&t, &rho, 1e9).is_empty());
    }

    #[test]
    fn heat_colours_run_from_green_to_dark_red() {
        assert_eq!(heat_color(0.0), RGBColor(214, 239, 208));
        assert_eq!(heat_color(1.0), RGBColor(165, 0, 38));
        assert_ne!(heat_color(0.01), heat_color(0.0));
    }
}
