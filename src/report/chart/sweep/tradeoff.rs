//! The safety/availability trade-off: one point per parameter set at (P(unsafe), mean
//! availability), coloured by what went wrong, with the frontier (the best availability at or
//! below each level of risk) drawn as a staircase across the whole x range whenever there are
//! two distinct points, and the best safe setting ringed. A set without a run that had a
//! handover somewhere (untested: no run could overlap there) is grey, apart from the safe, and
//! off the frontier.
//!
//! Every unsafe point is labelled with its parameter set when that stays legible
//! ([`MAX_LABELS`]); past that the frontier's points are, and the subtitle counts the rest.
//! Labels are laid out around their points ([`place_labels`]) so that no two touch and none
//! hides a point; a label with no room is left out and counted, never drawn over another.

use super::axis::{draw_frame, Plot, YAxis};
use super::legend::{Legend, Mark};
use super::page::Page;
use super::{Data, MUTED, TEXT, UNTESTED_HATCH};
use crate::report::chart::scene::{rgb, rgba, text_width, Anchor, Scene};
use crate::sweep::Judgement;
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

/// A point: (P(unsafe), availability %, class: [`SAFE_CLASS`], [`HARM_CLASS`],
/// [`OVERLAP_CLASS`] or [`UNTESTED_CLASS`]).
type Point = (f64, f64, u8);

/// Safe with runs that had a handover; harm without an overlap; an overlap; no overlap or harm,
/// but no run with a handover to judge somewhere.
const SAFE_CLASS: u8 = 0;
const HARM_CLASS: u8 = 1;
const OVERLAP_CLASS: u8 = 2;
const UNTESTED_CLASS: u8 = 3;

/// Whether a point's class is an overlap or harm.
fn is_unsafe(class: u8) -> bool {
    class == HARM_CLASS || class == OVERLAP_CLASS
}

pub struct Tradeoff {
    page: Page,
    points: Vec<Point>,
    /// The frontier's points, by P(unsafe).
    frontier: Vec<(f64, f64)>,
    /// Whether the staircase is drawn: two distinct points or more.
    draw_frontier: bool,
    /// The points to label (index into `points`) with their words.
    labels: Vec<(usize, String)>,
    /// The points of the best safe setting, ringed (one, or one per environment when only
    /// the environment was varied).
    best: Vec<(f64, f64)>,
    /// The x range shown and its tick step ([`x_range`]).
    x: (f64, f64, f64),
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
/// than every safer one. Its first point is the safest of the most available. Untested points
/// are left out: their P(unsafe) of 0 was never put to the test.
pub fn frontier_of(points: &[Point]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..points.len())
        .filter(|&c| points[c].2 != UNTESTED_CLASS)
        .collect();
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

/// The x range shown, fitted to the points' P(unsafe) `xs`: `(lo, hi, step)`, the ends on a
/// tick of the least 1-2-5 step (0.01 .. 0.2) that needs at most 10 ticks, a step apart at
/// least, within [0, 1]. Points at 0.8 .. 1 read across the plot, not squeezed into its right
/// fifth; a safe point (x = 0) keeps 0 in view.
pub fn x_range(xs: &[f64]) -> (f64, f64, f64) {
    let lo = xs
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min)
        .clamp(0.0, 1.0);
    let hi = xs
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max)
        .clamp(lo, 1.0);
    // With a little slack, so that 0.8 / 0.02 = 40.000000001 stays 40.
    let ends = |step: f64| {
        let a = (lo / step + 1e-9).floor() * step;
        let b = (hi / step - 1e-9).ceil() * step;
        (a, b)
    };
    let step = [0.01, 0.02, 0.05, 0.1, 0.2]
        .into_iter()
        .find(|&st| {
            let (a, b) = ends(st);
            ((b - a) / st).round() <= 10.0
        })
        .unwrap_or(0.2);
    let (mut a, mut b) = ends(step);
    if b - a < step / 2.0 {
        if b + step <= 1.0 + 1e-9 {
            b += step;
        } else {
            a -= step;
        }
    }
    (a.max(0.0), b.min(1.0), step)
}

/// Class of a point, from what its runs show and whether one overlapped.
fn class_of(judgement: Judgement, overlapped: bool) -> u8 {
    match (judgement, overlapped) {
        (Judgement::Safe, _) => SAFE_CLASS,
        (Judgement::Untested, _) => UNTESTED_CLASS,
        (Judgement::Unsafe, false) => HARM_CLASS,
        (Judgement::Unsafe, true) => OVERLAP_CLASS,
    }
}

/// The points and their words: one per setting the user chooses, at its worst over the
/// environments tried, when the sweep varied such a setting; else one per cell (the
/// environments alone, nothing to choose). Also whether they are choices.
fn points_of(d: &Data) -> (Vec<Point>, Vec<String>, bool) {
    let by_choice = crate::sweep::report::varies_a_choice(d.grid);
    if by_choice {
        let ch = crate::sweep::report::choices(d.grid, d.stats);
        let pts = ch
            .iter()
            .map(|c| {
                let class = class_of(c.judgement(d.stats), c.overlapped);
                (c.worst_p_unsafe, c.worst_availability * 100.0, class)
            })
            .collect();
        let names = ch.into_iter().map(|c| c.label).collect();
        return (pts, names, true);
    }
    let n = d.grid.cell_count();
    let pts = d.stats[..n]
        .iter()
        .map(|s| {
            (
                s.p_unsafe(),
                s.mean_availability() * 100.0,
                class_of(s.judgement(), s.overlap_runs > 0),
            )
        })
        .collect();
    (pts, (0..n).map(|c| d.grid.label(c)).collect(), false)
}

/// Which points carry a label: every safe and every untested one; every unsafe one when there
/// are at most [`MAX_LABELS`], else the frontier's. Returns them, in point order, and how many
/// unsafe points go unlabelled.
fn labelled(points: &[Point], frontier: &[usize]) -> (Vec<usize>, usize) {
    let unsafe_count = points.iter().filter(|p| is_unsafe(p.2)).count();
    let all_unsafe = unsafe_count <= MAX_LABELS;
    let chosen: Vec<usize> = (0..points.len())
        .filter(|&c| !is_unsafe(points[c].2) || all_unsafe || frontier.contains(&c))
        .collect();
    let rest = (0..points.len())
        .filter(|c| is_unsafe(points[*c].2) && !chosen.contains(c))
        .count();
    (chosen, rest)
}

pub fn tradeoff(d: &Data) -> Result<Tradeoff, String> {
    if d.grid.cell_count() < 2 {
        return Err("needs two parameter sets or more".into());
    }
    let (points, names, by_choice) = points_of(d);
    let frontier_idx = frontier_of(&points);
    let env = crate::sweep::report::environment(d.grid);
    let best = crate::sweep::report::best_safe(d.grid, d.stats, 1);
    let best_pts: Vec<usize> = match best.first() {
        Some(b) if by_choice => names
            .iter()
            .position(|n| *n == b.label)
            .into_iter()
            .collect(),
        Some(b) => b.cells.clone(),
        None => Vec::new(),
    };
    let (chosen, rest) = labelled(&points, &frontier_idx);
    let labels: Vec<(usize, String)> = chosen
        .into_iter()
        .map(|c| {
            let best_one = by_choice && best_pts.first() == Some(&c);
            let name = if best_one {
                format!("best safe: {}", names[c])
            } else {
                names[c].clone()
            };
            (c, name)
        })
        .collect();
    let label_note = if rest > 0 {
        format!("; labelled: the safe and the frontier's points ({rest} other unsafe are not: see results.csv)")
    } else {
        String::new()
    };
    let mut distinct: Vec<(f64, f64)> = points.iter().map(|p| (p.0, p.1)).collect();
    distinct.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    distinct.dedup();
    let frontier_pts: Vec<(f64, f64)> = frontier_idx
        .iter()
        .map(|&c| (points[c].0, points[c].1))
        .collect();
    let x_max = points.iter().map(|p| p.0).fold(0.0, f64::max);
    // Drawn when it is a line: two distinct points, and a staircase of two corners or more.
    let draw_frontier =
        by_choice && distinct.len() >= 2 && frontier_stair(&frontier_pts, x_max).len() >= 2;
    let untested = points.iter().any(|p| p.2 == UNTESTED_CLASS);
    let legend = legend_of(
        draw_frontier,
        untested,
        best.first().map(|b| b.label.as_str()),
    );
    let at_zero = if untested {
        "a green point at x = 0 is safe in every run, a grey one untested"
    } else {
        "a point at x = 0 is safe in every run"
    };
    let (what, note) = match (&env, by_choice) {
        (Some(e), true) => (
            "one point per setting you choose",
            format!("; each setting at its worst over the environment ({e}): the highest P(unsafe), the lowest availability; the frontier is over your settings only"),
        ),
        (None, _) => ("one point per parameter set", "; the frontier is the best availability for each level of risk".to_string()),
        (Some(e), false) => (
            "one point per environment",
            format!("; only the environment was varied ({e}): nothing to choose, so no frontier"),
        ),
    };
    let y = YAxis::new(points.iter().map(|p| p.1), false);
    Ok(Tradeoff {
        page: Page {
            width: WIDTH,
            title: format!("Safety versus availability: {what}"),
            lines: vec![format!(
                "{}; {at_zero}{note}{label_note}",
                d.subtitle_base()
            )],
            legend,
        },
        frontier: frontier_pts,
        x: x_range(&points.iter().map(|p| p.0).collect::<Vec<_>>()),
        best: best_pts
            .iter()
            .map(|&c| (points[c].0, points[c].1))
            .collect(),
        points,
        draw_frontier,
        labels,
        y,
    })
}

/// The legend: the three classes (and the untested, when some point is), the frontier when
/// drawn, the ring of the best safe setting.
fn legend_of(frontier: bool, untested: bool, best: Option<&str>) -> Legend {
    let mut legend = Legend::default();
    legend.push(Mark::Dot(SAFE), "safe: no overlap and no harm in any run");
    legend.push(
        Mark::Dot(HARM),
        "no overlap, but harm (zombie action, stale read, unsafe write)",
    );
    legend.push(Mark::Dot(OVER), "overlap in some run");
    if untested {
        legend.push(
            Mark::Dot(UNTESTED_HATCH),
            "untested: no overlap or harm, but no run with a handover to judge (in some environment): not safe",
        );
    }
    if frontier {
        legend.push(
            Mark::Line(FRONTIER),
            "frontier: the best availability at or below each P(unsafe)",
        );
    }
    if let Some(b) = best {
        legend.push(
            Mark::Ring(rgb(0, 0, 0)),
            format!("ringed: the best safe setting, {b}"),
        );
    }
    legend
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
        let (lo, hi, _) = self.x;
        let pad = (hi - lo) * 0.04;
        let f = (x - (lo - pad)) / (hi - lo + 2.0 * pad);
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
        let (lo, hi, step) = self.x;
        let n = ((hi - lo) / step).round() as i32;
        let x_ticks: Vec<(i32, String)> = (0..=n)
            .map(|k| {
                let v = lo + k as f64 * step;
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
        for class in [SAFE_CLASS, HARM_CLASS, OVERLAP_CLASS, UNTESTED_CLASS] {
            let c = [SAFE, HARM, OVER, UNTESTED_HATCH][class as usize];
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
    fn the_x_range_fits_the_points() {
        let r = |xs: &[f64]| {
            let (a, b, st) = x_range(xs);
            (
                (a * 100.0).round(),
                (b * 100.0).round(),
                (st * 100.0).round(),
            )
        };
        // 0.8 .. 1: in steps of 0.01 that is 20 ticks, of 0.02 ten: 0.8 to 1, not 0 to 1.
        assert_eq!(r(&[0.85, 0.8, 1.0]), (80.0, 100.0, 2.0));
        // A safe point keeps 0 in view: 0 .. 1 in tenths (0.05 would be 20 steps).
        assert_eq!(r(&[0.0, 1.0, 0.5]), (0.0, 100.0, 10.0));
        // 0 .. 0.3: 0.02 gives 15 steps, 0.05 six.
        assert_eq!(r(&[0.0, 0.3]), (0.0, 30.0, 5.0));
        // 0.13 .. 0.37 on 0.05: from 0.1 up to 0.4 (ends on ticks around the points).
        assert_eq!(r(&[0.13, 0.37]), (10.0, 40.0, 5.0));
        // Every point at 1: one step wide, ending at 1.
        assert_eq!(r(&[1.0, 1.0]), (99.0, 100.0, 1.0));
    }

    #[test]
    fn every_safe_point_is_labelled_and_unsafe_ones_while_few() {
        // Two safe, one harm, one overlap: all four labelled.
        let pts = [
            (0.0, 99.0, 0),
            (0.0, 98.0, 0),
            (0.5, 99.5, 1),
            (1.0, 99.9, 2),
        ];
        assert_eq!(labelled(&pts, &[0, 2, 3]), (vec![0, 1, 2, 3], 0));
        // Past MAX_LABELS unsafe points, only the frontier's unsafe ones (here 14 and 15,
        // beside safe 0): the other 13 unsafe go unlabelled.
        let mut pts = vec![(0.0, 99.0, 0)];
        for k in 1..=(MAX_LABELS + 3) {
            pts.push((k as f64 / 20.0, 99.0 + k as f64 / 100.0, 2));
        }
        let (chosen, rest) = labelled(&pts, &[0, 14, 15]);
        assert_eq!(chosen, [0, 14, 15]);
        assert_eq!(rest, MAX_LABELS + 3 - 2);
    }

    #[test]
    fn untested_points_are_labelled_but_never_on_the_frontier() {
        // An untested point at x = 0 more available than the safe one: the frontier starts at
        // the safe point, as if the untested one were not there.
        let pts = [
            (0.0, 99.99, UNTESTED_CLASS),
            (0.0, 99.9, SAFE_CLASS),
            (0.5, 99.95, OVERLAP_CLASS),
        ];
        assert_eq!(frontier_of(&pts), [1, 2]);
        // Labelled like a safe point, whatever the number of unsafe ones.
        assert_eq!(labelled(&pts, &[1, 2]), (vec![0, 1, 2], 0));
        assert_eq!(class_of(Judgement::Untested, false), UNTESTED_CLASS);
        assert_eq!(class_of(Judgement::Unsafe, false), HARM_CLASS);
        let words = |l: &Legend| l.entries.iter().map(|e| e.1.clone()).collect::<Vec<_>>();
        assert!(words(&legend_of(true, true, None))
            .iter()
            .any(|w| w.starts_with("untested: no overlap or harm")));
        assert!(!words(&legend_of(true, false, None))
            .iter()
            .any(|w| w.starts_with("untested")));
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
