//! The safety/availability trade-off: one point per parameter set at (P(unsafe), mean
//! availability), coloured by what went wrong, with the frontier (the best availability at or
//! below each level of risk) drawn as a staircase across the whole x range whenever there are
//! two distinct points, and the best safe setting ringed.
//!
//! Every unsafe point is labelled with its parameter set when that stays legible
//! ([`MAX_LABELS`]); past that the frontier's points are, and the subtitle counts the rest.
//! Labels are laid out around their points ([`place_labels`]) so that no two touch and none
//! hides a point; a label with no room is left out and counted, never drawn over another.

use super::axis::{draw_frame, Plot, YAxis};
use super::legend::{Legend, Mark};
use super::page::Page;
use super::{Data, MUTED, TEXT};
use crate::report::chart::scene::{rgb, rgba, text_width, Anchor, Scene};
use plotters::style::RGBAColor;

/// The most unsafe points labelled one by one.
pub const MAX_LABELS: usize = 12;
pub const LABEL_SIZE: f64 = 13.0;
const LABEL_H: i32 = 16;
const SAFE: RGBAColor = rgb(44, 160, 44);
const HARM: RGBAColor = rgb(255, 127, 14);
const OVER: RGBAColor = rgb(214, 39, 40);
const FRONTIER: RGBAColor = rgb(60, 60, 60);
const WIDTH: i32 = 1100;
const BODY_H: i32 = 620;
/// The x range shown: P(unsafe) from 0 to 1, padded.
const X_LO: f64 = -0.04;
const X_HI: f64 = 1.04;

/// A point: (P(unsafe), availability %, class: 0 safe, 1 harm only, 2 overlap).
type Point = (f64, f64, u8);

pub struct Tradeoff {
    page: Page,
    points: Vec<Point>,
    /// The frontier's points, by P(unsafe).
    frontier: Vec<(f64, f64)>,
    /// Whether the staircase is drawn: two distinct points or more.
    draw_frontier: bool,
    /// The points to label (index into `points`) with their words.
    labels: Vec<(usize, String)>,
    /// The points of the best safe setting (one per environment tried), ringed.
    best: Vec<(f64, f64)>,
    y: YAxis,
}

/// A label laid out: its box `[x0, x1) x [y0, y1)` (text and a 3 px pad), its words and the
/// point it names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelBox {
    pub x0: i32,
    pub y0: i32,
    pub x1: i32,
    pub y1: i32,
    pub text: String,
    pub at: (i32, i32),
}

fn overlaps(a: (i32, i32, i32, i32), b: (i32, i32, i32, i32)) -> bool {
    a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3
}

/// Lays out one label per `(point, text)` inside `plot`: at the first of a few spots around its
/// point (right or left, level or a few rows up or down, near or farther out) that touches no
/// label placed before it, covers no point of `points` and no segment of the polyline `line`
/// (the frontier). `None` where no spot is free.
pub fn place_labels(
    wanted: &[((i32, i32), String)],
    points: &[(i32, i32)],
    line: &[(i32, i32)],
    plot: Plot,
) -> Vec<Option<LabelBox>> {
    let r = 8;
    let mut obstacles: Vec<(i32, i32, i32, i32)> = points
        .iter()
        .map(|&(x, y)| (x - r, y - r, x + r + 1, y + r + 1))
        .collect();
    // The staircase's segments are horizontal or vertical: each is a thin box.
    for w in line.windows(2) {
        let (a, b) = (w[0], w[1]);
        obstacles.push((
            a.0.min(b.0) - 2,
            a.1.min(b.1) - 2,
            a.0.max(b.0) + 3,
            a.1.max(b.1) + 3,
        ));
    }
    let mut placed: Vec<(i32, i32, i32, i32)> = Vec::new();
    let mut out = vec![None; wanted.len()];
    let mid = (plot.x0 + plot.x1) / 2;
    // Top to bottom, so that the labels of a column of points stack in its order.
    let mut order: Vec<usize> = (0..wanted.len()).collect();
    order.sort_by_key(|&i| (wanted[i].0 .1, wanted[i].0 .0, i));
    for i in order {
        let ((px, py), text) = &wanted[i];
        let w = text_width(text, LABEL_SIZE, false) + 6;
        let sides: [bool; 2] = if *px < mid {
            [true, false]
        } else {
            [false, true]
        };
        let mut found = None;
        'search: for out_px in [12, 44, 96, 160] {
            for k in 0..=16 {
                for dy in [k * 19, -k * 19] {
                    for right in sides {
                        let x0 = if right { px + out_px } else { px - out_px - w };
                        let y0 = py + dy - LABEL_H / 2;
                        let b = (x0, y0, x0 + w, y0 + LABEL_H);
                        let inside = b.0 >= plot.x0 + 2
                            && b.2 <= plot.x1 - 2
                            && b.1 >= plot.y0 + 2
                            && b.3 <= plot.y1 - 2;
                        let margin =
                            |o: &(i32, i32, i32, i32)| (o.0 - 2, o.1 - 1, o.2 + 2, o.3 + 1);
                        if inside
                            && !placed.iter().any(|o| overlaps(b, margin(o)))
                            && !obstacles.iter().any(|o| overlaps(b, *o))
                        {
                            found = Some(b);
                            break 'search;
                        }
                        if k == 0 {
                            break; // dy = 0 once
                        }
                    }
                }
            }
        }
        out[i] = found.map(|b| {
            placed.push(b);
            LabelBox {
                x0: b.0,
                y0: b.1,
                x1: b.2,
                y1: b.3,
                text: text.clone(),
                at: (*px, *py),
            }
        });
    }
    out
}

/// The frontier: the most available point at each P(unsafe), keeping only those more available
/// than every safer one. Its first point is the safest of the most available.
pub fn frontier_of(points: &[Point]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..points.len()).collect();
    order.sort_by(|&a, &b| {
        points[a]
            .0
            .total_cmp(&points[b].0)
            .then(points[b].1.total_cmp(&points[a].1))
            .then(a.cmp(&b))
    });
    let mut out = Vec::new();
    let mut best_y = f64::NEG_INFINITY;
    for c in order {
        if points[c].1 > best_y {
            best_y = points[c].1;
            out.push(c);
        }
    }
    out
}

/// The frontier as a staircase from its first point to `x_max`: the best availability at or
/// below each P(unsafe), flat after its last point.
pub fn frontier_stair(frontier: &[(f64, f64)], x_max: f64) -> Vec<(f64, f64)> {
    let mut stair = Vec::new();
    for (k, f) in frontier.iter().enumerate() {
        if k > 0 {
            stair.push((f.0, frontier[k - 1].1));
        }
        stair.push(*f);
    }
    if let Some(&(x, y)) = frontier.last() {
        if x_max > x {
            stair.push((x_max, y));
        }
    }
    stair
}

pub fn tradeoff(d: &Data) -> Result<Tradeoff, String> {
    let n = d.grid.cell_count();
    if n < 2 {
        return Err("needs two parameter sets or more".into());
    }
    let points: Vec<Point> = d
        .stats
        .iter()
        .take(n)
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
    let frontier_idx = frontier_of(&points);
    let best = crate::sweep::report::best_safe(d.grid, d.stats, 1);
    let best_one = best
        .first()
        .filter(|b| b.cells.len() == 1)
        .map(|b| b.cells[0]);
    let name = |c: usize| {
        if Some(c) == best_one {
            format!("best safe: {}", d.grid.label(c))
        } else {
            d.grid.label(c)
        }
    };
    let unsafe_count = points.iter().filter(|p| p.2 > 0).count();
    let mut labels: Vec<(usize, String)> = Vec::new();
    let mut label_note = String::new();
    if unsafe_count <= MAX_LABELS {
        for (c, p) in points.iter().enumerate() {
            if p.2 > 0 || (frontier_idx.first() == Some(&c)) {
                labels.push((c, name(c)));
            }
        }
    } else {
        for &c in &frontier_idx {
            labels.push((c, name(c)));
        }
        let rest = (0..n)
            .filter(|c| points[*c].2 > 0 && !frontier_idx.contains(c))
            .count();
        label_note = format!(
            "; labelled: the frontier's points ({rest} other unsafe sets are not: see results.csv)"
        );
    }
    let mut distinct: Vec<(f64, f64)> = points.iter().map(|p| (p.0, p.1)).collect();
    distinct.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    distinct.dedup();
    let mut legend = Legend::default();
    legend.push(Mark::Dot(SAFE), "safe: no overlap and no harm in any run");
    legend.push(
        Mark::Dot(HARM),
        "no overlap, but harm (zombie action, stale read, unsafe write)",
    );
    legend.push(Mark::Dot(OVER), "overlap in some run");
    let draw_frontier = distinct.len() >= 2;
    if draw_frontier {
        legend.push(
            Mark::Line(FRONTIER),
            "frontier: the best availability at or below each P(unsafe)",
        );
    }
    let best_pts: Vec<(f64, f64)> = best
        .first()
        .map(|b| {
            b.cells
                .iter()
                .map(|&c| (points[c].0, points[c].1))
                .collect()
        })
        .unwrap_or_default();
    if let Some(b) = best.first() {
        let env: Vec<&str> = d
            .grid
            .params
            .iter()
            .filter(|p| p.values.len() > 1 && !crate::sweep::report::chosen(p))
            .map(|p| p.name.as_str())
            .collect();
        let per = if b.cells.len() > 1 && !env.is_empty() {
            format!(", at each {} ({} points)", env.join(" and "), b.cells.len())
        } else {
            String::new()
        };
        legend.push(
            Mark::Ring(rgb(0, 0, 0)),
            format!("ringed: the best safe setting, {}{per}", b.label),
        );
    }
    let y = YAxis::new(points.iter().map(|p| p.1), false);
    Ok(Tradeoff {
        page: Page {
            width: WIDTH,
            title: "Safety versus availability: one point per parameter set".into(),
            lines: vec![format!(
                "{}; a point at x = 0 is safe in every run; the frontier is the best availability for each level of risk{label_note}",
                d.subtitle_base()
            )],
            legend,
        },
        frontier: frontier_idx
            .iter()
            .map(|&c| (points[c].0, points[c].1))
            .collect(),
        points,
        draw_frontier,
        labels,
        best: best_pts,
        y,
    })
}

impl Tradeoff {
    fn plot(&self) -> Plot {
        let top = self.page.head_height();
        Plot {
            x0: 110,
            y0: top + 40,
            x1: WIDTH - 40,
            y1: top + BODY_H - 70,
        }
    }

    fn px(&self, (x, y): (f64, f64), plot: Plot) -> (i32, i32) {
        let f = (x - X_LO) / (X_HI - X_LO);
        (
            plot.x0 + (f * (plot.x1 - plot.x0) as f64).round() as i32,
            self.y.px(y, plot),
        )
    }

    /// The labels as laid out in the chart (those with no room are `None`).
    pub fn label_boxes(&self) -> Vec<Option<LabelBox>> {
        let plot = self.plot();
        let wanted: Vec<((i32, i32), String)> = self
            .labels
            .iter()
            .map(|(c, t)| {
                let p = self.points[*c];
                (self.px((p.0, p.1), plot), t.clone())
            })
            .collect();
        let pts: Vec<(i32, i32)> = self
            .points
            .iter()
            .map(|p| self.px((p.0, p.1), plot))
            .collect();
        place_labels(&wanted, &pts, &self.stair_px(plot), plot)
    }

    /// The frontier's staircase in pixels, empty when it is not drawn.
    fn stair_px(&self, plot: Plot) -> Vec<(i32, i32)> {
        if !self.draw_frontier {
            return Vec::new();
        }
        let x_max = self.points.iter().map(|p| p.0).fold(0.0, f64::max);
        frontier_stair(&self.frontier, x_max)
            .into_iter()
            .map(|p| self.px(p, plot))
            .collect()
    }

    pub fn scene(&self) -> Scene {
        let mut s = self.page.scene(BODY_H);
        let plot = self.plot();
        let x_ticks: Vec<(i32, String)> = (0..=10)
            .map(|k| {
                let v = k as f64 / 10.0;
                (self.px((v, 0.0), plot).0, super::fmt_num(v))
            })
            .collect();
        draw_frame(
            &mut s,
            plot,
            &x_ticks,
            &self.y.ticks_px(plot),
            (
                "P(unsafe): fraction of the set's runs with an overlap or harm (zombie action, stale read, unsafe write)",
                "mean availability (%)",
            ),
            true,
        );
        s.line(self.stair_px(plot), FRONTIER, 2);
        for class in 0..3u8 {
            let c = [SAFE, HARM, OVER][class as usize];
            for p in self.points.iter().filter(|p| p.2 == class) {
                let (x, y) = self.px((p.0, p.1), plot);
                s.circle(x, y, 6, rgba(c.0, c.1, c.2, 0.75), true);
            }
        }
        for &p in &self.best {
            let (x, y) = self.px(p, plot);
            s.circle(x, y, 10, rgb(0, 0, 0), false);
        }
        let boxes = self.label_boxes();
        let missing = boxes.iter().filter(|b| b.is_none()).count();
        for b in boxes.into_iter().flatten() {
            let mid = (b.y0 + b.y1) / 2;
            let near = (b.x0 - b.at.0).abs().min((b.x1 - b.at.0).abs());
            if (mid - b.at.1).abs() > 10 || near > 14 {
                // Away from its point: a leader line says whose label it is.
                let end = if b.x0 > b.at.0 { b.x0 } else { b.x1 };
                s.line(vec![b.at, (end, mid)], rgb(130, 130, 130), 1);
            }
            s.rect(b.x0, b.y0, b.x1, b.y1, rgba(255, 255, 255, 0.85));
            s.text(b.x0 + 3, mid, b.text, LABEL_SIZE, false, TEXT, Anchor::Left);
        }
        if missing > 0 {
            s.text(
                plot.x1,
                plot.y0 - 16,
                format!("{missing} labels left out: no room (see results.csv)"),
                LABEL_SIZE,
                false,
                MUTED,
                Anchor::Right,
            );
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_never_overlap_even_when_points_crowd() {
        let plot = Plot {
            x0: 110,
            y0: 100,
            x1: 1060,
            y1: 600,
        };
        // 30 points in two tight clusters, long labels.
        let mut wanted = Vec::new();
        let mut pts = Vec::new();
        for k in 0..30 {
            let p = if k % 2 == 0 {
                (200 + k, 300 + 2 * k)
            } else {
                (900 - k, 320 + k)
            };
            pts.push(p);
            wanted.push((p, format!("T=20s, rho={}, epsilon=5ms", 100 * k)));
        }
        let boxes = place_labels(&wanted, &pts, &[(150, 250), (800, 250)], plot);
        let placed: Vec<&LabelBox> = boxes.iter().flatten().collect();
        assert!(placed.len() >= 10, "{}", placed.len());
        for (i, a) in placed.iter().enumerate() {
            // Each box holds its text as the font measures it.
            assert_eq!(a.x1 - a.x0, text_width(&a.text, LABEL_SIZE, false) + 6);
            assert!(a.x0 >= plot.x0 && a.x1 <= plot.x1 && a.y0 >= plot.y0 && a.y1 <= plot.y1);
            for b in &placed[i + 1..] {
                assert!(
                    !overlaps((a.x0, a.y0, a.x1, a.y1), (b.x0, b.y0, b.x1, b.y1)),
                    "{a:?} and {b:?} overlap"
                );
            }
            // No label covers the frontier (here a level line at y = 250 from x = 150 to 800).
            assert!(
                !(a.y0 <= 250 && 250 < a.y1 && a.x0 < 800 && a.x1 > 150),
                "{a:?} covers the frontier"
            );
            // No label covers a point.
            for &(x, y) in &pts {
                assert!(
                    !(a.x0 <= x && x < a.x1 && a.y0 <= y && y < a.y1),
                    "{a:?} hides {x},{y}"
                );
            }
        }
    }

    #[test]
    fn the_frontier_spans_the_x_range_from_two_points() {
        // The safe point is also the most available: a one-point frontier, which the chart once
        // drew as nothing. Its staircase runs flat to the riskiest point.
        let pts = [(0.0, 99.9, 0), (0.5, 99.8, 2), (1.0, 99.7, 2)];
        let f = frontier_of(&pts);
        assert_eq!(f, [0]);
        let stair = frontier_stair(&[(0.0, 99.9)], 1.0);
        assert_eq!(stair, [(0.0, 99.9), (1.0, 99.9)]);
        // A real trade-off: a step up at each riskier, more available point.
        let pts = [(0.0, 99.0, 0), (0.5, 99.5, 2), (1.0, 99.2, 2)];
        assert_eq!(frontier_of(&pts), [0, 1]);
        assert_eq!(
            frontier_stair(&[(0.0, 99.0), (0.5, 99.5)], 1.0),
            [(0.0, 99.0), (0.5, 99.0), (0.5, 99.5), (1.0, 99.5)]
        );
    }
}
