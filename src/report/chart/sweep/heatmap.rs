//! The P(overlap) heatmap over T x rho, one panel per epsilon: each cell coloured and numbered
//! by its P(overlap), the analytic bound epsilon = T*rho drawn as a step between the cells on
//! either side of it, cells with harm but no overlap framed so they do not pass for clean, and
//! cells in which no run had a handover grey and hatched, so that they do not pass for safe.

use super::axis::{draw_frame, Plot};
use super::legend::{Legend, Mark};
use super::page::Page;
use super::{axis_name, sorted_order, Data, TEXT, UNTESTED_FILL, UNTESTED_HATCH};
use crate::report::chart::scene::{rgb, text_width, Anchor, Scene};
use crate::sweep::path::Role;
use crate::sweep::report::human_ns;
use plotters::style::RGBAColor;

/// The most heatmap panels (epsilon values).
const MAX_HEAT_PANELS: usize = 12;
/// The frame for harm without overlap: a purple no heat colour comes near.
const HARM_FRAME: RGBAColor = rgb(84, 39, 143);
const BOUNDARY: RGBAColor = rgb(20, 20, 20);

pub struct Heatmap {
    page: Page,
    t_desc: String,
    rho_desc: String,
    /// Labels and numeric values of T (ns) and rho (ppm), in ascending order.
    t_labels: Vec<String>,
    t_vals: Vec<f64>,
    rho_labels: Vec<String>,
    rho_vals: Vec<f64>,
    panels: Vec<HeatPanel>,
    cols: usize,
    panel_size: (i32, i32),
}

struct HeatPanel {
    title: String,
    eps_ns: Option<f64>,
    cells: Vec<HeatCell>,
}

/// One cell of a panel: where it sits and what its runs showed.
#[derive(Clone, Copy, Debug, PartialEq)]
struct HeatCell {
    /// Its positions along T and rho (ascending).
    t: usize,
    rho: usize,
    p_overlap: f64,
    /// Harm without an overlap in some run.
    harm_only: bool,
    /// No overlap or harm, but no run had a handover: nothing tested.
    untested: bool,
}

/// A cell's colour: pale green at 0, then yellow through orange to dark red at 1.
pub fn heat_color(p: f64) -> RGBAColor {
    if p <= 0.0 {
        return rgb(214, 239, 208);
    }
    let lerp = |a: (u8, u8, u8), b: (u8, u8, u8), t: f64| {
        let f = |x: u8, y: u8| (x as f64 + (y as f64 - x as f64) * t).round() as u8;
        rgb(f(a.0, b.0), f(a.1, b.1), f(a.2, b.2))
    };
    let (lo, mid, hi) = ((255, 237, 160), (253, 141, 60), (165, 0, 38));
    if p < 0.5 {
        lerp(lo, mid, p / 0.5)
    } else {
        lerp(mid, hi, (p - 0.5) / 0.5)
    }
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

/// The legend: the heat scale, the boundary, the harm frame, and the untested cells' grey when
/// some cell is untested.
fn legend_of(untested: bool) -> Legend {
    let mut legend = Legend::default();
    legend.push(Mark::Box(heat_color(0.0)), "0: no run overlapped");
    for p in [0.25, 0.5, 0.75] {
        legend.push(Mark::Box(heat_color(p)), p.to_string());
    }
    legend.push(Mark::Box(heat_color(1.0)), "1: every run overlapped");
    legend.push(
        Mark::Dashed(BOUNDARY),
        "analytic boundary ε = T·ρ between cells: below and left of it T·ρ ≤ ε, where the bound predicts no overlap",
    );
    legend.push(
        Mark::Framed(HARM_FRAME),
        "framed \"harm\": some run had a zombie action, stale read or unsafe write without an overlap",
    );
    if untested {
        legend.push(
            Mark::Hatched(UNTESTED_FILL, UNTESTED_HATCH),
            "grey, hatched \"untested\": no run had a handover of the lease, so none could overlap; not a safe 0",
        );
    }
    legend
}

pub fn heatmap(d: &Data) -> Result<Heatmap, String> {
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
            sorted_order(&d.numeric(ep)).into_iter().map(Some).collect()
        }
        None => vec![None],
    };
    let mut keys = vec![tp, rp];
    keys.extend(d.eps);
    let groups = d.pool(&keys);
    let mut panels = Vec::new();
    for e in &eps_vals {
        let mut cells = Vec::new();
        let mut eps_ns = None;
        for g in groups.iter().filter(|g| e.is_none_or(|k| g.key[2] == k)) {
            cells.push(HeatCell {
                t: t_pos[g.key[0]],
                rho: r_pos[g.key[1]],
                p_overlap: g.stats.p_overlap(),
                harm_only: g.stats.unsafe_runs > g.stats.overlap_runs,
                untested: g.stats.untested(),
            });
            eps_ns = g.facts.eps_ns.map(|x| x as f64);
        }
        let title = match (e, d.eps) {
            (Some(k), Some(ep)) if d.name(ep) == "epsilon" => {
                format!("ε = {}", d.tick_labels(ep)[*k])
            }
            (Some(k), Some(ep)) => format!("ε = {} ({})", d.tick_labels(ep)[*k], d.name(ep)),
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
    let nt = t_raw.len() as i32;
    let nr = r_raw.len() as i32;
    let panel_size = (
        (150 + 95 * nt).clamp(420, 760),
        (130 + 62 * nr).clamp(340, 620),
    );
    let untested = panels.iter().flat_map(|p| &p.cells).any(|c| c.untested);
    let legend = legend_of(untested);
    let pooled = d.pooled_note(&shown);
    Ok(Heatmap {
        page: Page {
            width: panel_size.0 * cols as i32 + 40,
            title: "P(overlap): the fraction of runs in which two nodes held the lease at once"
                .into(),
            lines: vec![format!(
                "{}; one panel per ε; each cell's number is P(overlap){pooled}",
                d.subtitle_base()
            )],
            legend,
        },
        t_desc: axis_name(d.name(tp), Role::T),
        rho_desc: axis_name(d.name(rp), Role::Rho),
        t_labels: {
            let labels = d.tick_labels(tp);
            t_order.iter().map(|&k| labels[k].clone()).collect()
        },
        t_vals: t_order.iter().map(|&k| t_raw[k]).collect(),
        rho_labels: r_order
            .iter()
            .map(|&k| d.value(rp, k).to_string())
            .collect(),
        rho_vals: r_order.iter().map(|&k| r_raw[k]).collect(),
        panels,
        cols,
        panel_size,
    })
}

/// Where a panel's cells lie: column i spans [x(i - 0.5), x(i + 0.5)], row j likewise upwards.
#[derive(Clone, Copy)]
struct Grid {
    plot: Plot,
    nt: i32,
    nr: i32,
}

impl Grid {
    fn x(&self, c: f64) -> i32 {
        let w = self.plot.x1 - self.plot.x0;
        self.plot.x0 + ((c + 0.5) * w as f64 / self.nt as f64).round() as i32
    }

    fn y(&self, c: f64) -> i32 {
        let h = self.plot.y1 - self.plot.y0;
        self.plot.y1 - ((c + 0.5) * h as f64 / self.nr as f64).round() as i32
    }

    /// The box of cell `c`: (x0, y0, x1, y1), top-left to bottom-right.
    fn cell(&self, c: &HeatCell) -> (i32, i32, i32, i32) {
        let (a, b) = (c.t as f64, c.rho as f64);
        (
            self.x(a - 0.5),
            self.y(b + 0.5),
            self.x(a + 0.5),
            self.y(b - 0.5),
        )
    }
}

const WHITE: RGBAColor = rgb(255, 255, 255);

impl Heatmap {
    pub fn scene(&self) -> Scene {
        let rows = self.panels.len().div_ceil(self.cols) as i32;
        let (pw, ph) = self.panel_size;
        let mut s = self.page.scene(rows * ph + 20);
        let top = self.page.head_height() + 10;
        for (k, panel) in self.panels.iter().enumerate() {
            let (c, r) = ((k % self.cols) as i32, (k / self.cols) as i32);
            self.panel(&mut s, panel, 20 + c * pw, top + r * ph);
        }
        s
    }

    fn panel(&self, s: &mut Scene, panel: &HeatPanel, x: i32, y: i32) {
        let (pw, ph) = self.panel_size;
        let plot = Plot {
            x0: x + 100,
            y0: y + 56,
            x1: x + pw - 24,
            y1: y + ph - 70,
        };
        s.text(
            (plot.x0 + plot.x1) / 2,
            y + 14,
            panel.title.clone(),
            18.0,
            true,
            TEXT,
            Anchor::Center,
        );
        let g = Grid {
            plot,
            nt: self.t_vals.len() as i32,
            nr: self.rho_vals.len() as i32,
        };
        for c in &panel.cells {
            let (x0, y0, x1, y1) = g.cell(c);
            if c.untested {
                s.rect(x0, y0, x1, y1, UNTESTED_FILL);
                s.hatch(x0, y0, x1, y1, 9, UNTESTED_HATCH, 1);
            } else {
                s.rect(x0, y0, x1, y1, heat_color(c.p_overlap));
            }
            s.frame(x0, y0, x1, y1, WHITE, 2);
        }
        let x_ticks: Vec<(i32, String)> = (0..g.nt as usize)
            .map(|i| (g.x(i as f64), self.t_labels[i].clone()))
            .collect();
        let y_ticks: Vec<(i32, String)> = (0..g.nr as usize)
            .map(|j| (g.y(j as f64), self.rho_labels[j].clone()))
            .collect();
        draw_frame(
            s,
            plot,
            &x_ticks,
            &y_ticks,
            (&self.t_desc, &self.rho_desc),
            false,
        );
        if let Some(eps) = panel.eps_ns.filter(|&e| e > 0.0) {
            self.boundary(s, g, eps);
        }
        for c in panel.cells.iter().filter(|c| c.harm_only) {
            harm_mark(s, g.cell(c));
        }
        for c in &panel.cells {
            cell_label(s, g.cell(c), c);
        }
    }

    /// The analytic boundary, as the cells have it: an edge between two neighbouring cells of
    /// which one has T·ρ <= ε (the bound predicts no overlap) and the other not.
    fn boundary(&self, s: &mut Scene, g: Grid, eps: f64) {
        let edges = boundary_edges(&self.t_vals, &self.rho_vals, eps);
        if edges.is_empty() {
            let safe = self.t_vals[0] * self.rho_vals[0] / 1e6 <= eps;
            let where_ = if safe {
                "every cell has T·ρ ≤ ε"
            } else {
                "every cell has T·ρ > ε"
            };
            s.text(
                g.plot.x0 + 4,
                g.plot.y0 + 10,
                format!("ε = T·ρ is off the grid: {where_}"),
                13.0,
                false,
                TEXT,
                Anchor::Left,
            );
        }
        for [(ax, ay), (bx, by)] in edges {
            s.dashed(
                vec![(g.x(ax), g.y(ay)), (g.x(bx), g.y(by))],
                BOUNDARY,
                4,
                10,
                6,
            );
        }
    }
}

/// A frame and "harm" over a cell where harm was done without an overlap, so that it does not
/// pass for clean.
fn harm_mark(s: &mut Scene, (x0, y0, x1, y1): (i32, i32, i32, i32)) {
    let (ix, iy) = ((x1 - x0) * 8 / 100, (y1 - y0) * 8 / 100);
    s.frame(x0 + ix, y0 + iy, x1 - ix, y1 - iy, HARM_FRAME, 4);
    s.text(
        (x0 + x1) / 2,
        y1 - (y1 - y0) / 4,
        "harm",
        13.0,
        false,
        TEXT,
        Anchor::Center,
    );
}

/// A cell's P(overlap), or "untested", on a patch of its colour, so the boundary never hides it.
fn cell_label(s: &mut Scene, (x0, y0, x1, y1): (i32, i32, i32, i32), c: &HeatCell) {
    let p = c.p_overlap;
    let (txt, size, patch) = if c.untested {
        ("untested".to_string(), 14.0, UNTESTED_FILL)
    } else if p == 0.0 || p == 1.0 {
        (format!("{p:.0}"), 16.0, heat_color(p))
    } else {
        (format!("{p:.2}"), 16.0, heat_color(p))
    };
    let (cx, cy) = ((x0 + x1) / 2, (y0 + y1) / 2);
    let tw = text_width(&txt, size, false);
    if tw + 8 > x1 - x0 || 20 > y1 - y0 {
        return; // too small to read: the colour says it
    }
    s.rect(cx - tw / 2 - 4, cy - 10, cx + tw / 2 + 4, cy + 10, patch);
    let color = if p > 0.6 { WHITE } else { rgb(0, 0, 0) };
    s.text(cx, cy, txt, size, false, color, Anchor::Center);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::chart::scene::Shape;

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
    fn an_untested_cell_is_grey_and_says_so_and_the_legend_too() {
        let cell = |untested| HeatCell {
            t: 0,
            rho: 0,
            p_overlap: 0.0,
            harm_only: false,
            untested,
        };
        let label = |c: HeatCell| {
            let mut s = Scene::new(200, 200);
            cell_label(&mut s, (0, 0, 120, 80), &c);
            s.shapes
        };
        let texts = |shapes: &[Shape]| -> Vec<String> {
            shapes
                .iter()
                .filter_map(|sh| match sh {
                    Shape::Text { text, .. } => Some(text.clone()),
                    _ => None,
                })
                .collect()
        };
        let patch = |shapes: &[Shape]| match &shapes[0] {
            Shape::Rect { color, .. } => *color,
            other => panic!("{other:?}"),
        };
        let (tested, untested) = (label(cell(false)), label(cell(true)));
        assert_eq!(texts(&tested), ["0"]);
        assert_eq!(patch(&tested), heat_color(0.0));
        assert_eq!(texts(&untested), ["untested"]);
        assert_eq!(patch(&untested), UNTESTED_FILL);
        assert_ne!(UNTESTED_FILL, heat_color(0.0));
        let last = |l: Legend| l.entries.last().map(|e| e.1.clone()).unwrap();
        assert!(last(legend_of(true)).starts_with("grey, hatched \"untested\""));
        assert!(last(legend_of(false)).starts_with("framed \"harm\""));
    }

    #[test]
    fn heat_colours_run_from_green_to_dark_red() {
        assert_eq!(heat_color(0.0), rgb(214, 239, 208));
        assert_eq!(heat_color(1.0), rgb(165, 0, 38));
        assert_ne!(heat_color(0.01), heat_color(0.0));
    }
}
