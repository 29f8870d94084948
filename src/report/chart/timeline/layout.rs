//! Geometry shared by every panel: the time-to-pixel map ([`XMap`]), each row's lanes
//! ([`RowLayout`]), the run as drawn ([`RunView`]), label placement, and the time axis.

use super::palette::*;
use crate::outcome::Summary;
use crate::report::chart::scene::{rgb, text_width, Anchor, Scene};
use crate::report::chart::{time_ticks, Ticks};
use crate::scenario::Role;
use crate::trace::timeline::{MarkKind, Timeline};
use plotters::style::RGBAColor;

/// Maps true time in `[t0, t1]` to pixels in `[x0, x1]`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct XMap {
    pub x0: i32,
    pub x1: i32,
    pub t0: i64,
    pub t1: i64,
}

impl XMap {
    /// The pixel of instant `t`, unrounded and unclipped.
    pub(crate) fn xf(&self, t: i64) -> f64 {
        let w = (self.t1 - self.t0).max(1) as f64;
        self.x0 as f64 + (t - self.t0) as f64 * (self.x1 - self.x0) as f64 / w
    }

    /// The pixel of instant `t` if it is in the window.
    pub(crate) fn x(&self, t: i64) -> Option<i32> {
        (self.t0..=self.t1)
            .contains(&t)
            .then(|| self.xf(t).round() as i32)
    }

    /// The pixels of `[a, b)` clipped to the window, widened to at least `min_w` pixels around
    /// its centre; `None` when it misses the window.
    pub(crate) fn span(&self, a: i64, b: i64, min_w: i32) -> Option<(i32, i32)> {
        if b < self.t0 || a > self.t1 || b < a || (b == self.t0 && a < b) {
            return None;
        }
        let mut xa = self.xf(a.max(self.t0)).round() as i32;
        let mut xb = self.xf(b.min(self.t1)).round() as i32;
        if xb - xa < min_w {
            let c2 = xa + xb;
            xa = (c2 - min_w).div_euclid(2);
            xb = xa + min_w;
            if xa < self.x0 {
                xa = self.x0;
                xb = self.x0 + min_w;
            }
            if xb > self.x1 {
                xb = self.x1;
                xa = self.x1 - min_w;
            }
        }
        Some((xa, xb))
    }
}

/// Where each lane sits inside a node's row (offsets from the row's top). A row has a lane only
/// for what its node has, and the same layout in every panel of a chart.
#[derive(Clone, Debug)]
pub(crate) struct RowLayout {
    pub height: i32,
    pub(crate) events: Option<i32>,
    pub(crate) belief: i32,
    /// The thin lane of read-authority beliefs, for a protocol that tracks read apart.
    pub(crate) read: Option<i32>,
    pub(crate) marks: Vec<(MarkKind, i32)>,
    pub(crate) faults: Option<i32>,
    pub(crate) cuts: Option<i32>,
}

pub(crate) const EVENTS_H: i32 = 16;
pub(crate) const BELIEF_H: i32 = 24;
pub(crate) const READ_H: i32 = 10;
pub(crate) const MARK_H: i32 = 10;
pub(crate) const FAULT_H: i32 = 15;

/// Whether `node` did something of kind `k` in the run.
pub(crate) fn has_kind(tl: &Timeline, node: usize, k: MarkKind) -> bool {
    tl.bins
        .get(node)
        .and_then(|per_kind| per_kind.get(k as usize))
        .is_some_and(|b| b.iter().any(|&c| c > 0))
        || tl.marks.iter().any(|m| m.node == node && m.kind == k)
}

impl RowLayout {
    /// The layout of `node`'s row.
    pub fn for_node(tl: &Timeline, node: usize) -> RowLayout {
        let mut y = 5;
        let mut lane = |present: bool, h: i32| {
            present.then(|| {
                let at = y;
                y += h;
                at
            })
        };
        let events = lane(
            tl.clock_steps.iter().any(|e| e.1 == node)
                || tl.drift_changes.iter().any(|e| e.1 == node)
                || tl.restarts.iter().any(|e| e.1 == node),
            EVENTS_H,
        );
        let belief = y;
        y += BELIEF_H + 3;
        let read = tl
            .read_beliefs
            .get(node)
            .is_some_and(|v| !v.is_empty())
            .then(|| {
                let at = y;
                y += READ_H + 3;
                at
            });
        let mut marks = Vec::new();
        for k in HARM_KINDS {
            if has_kind(tl, node, k) {
                marks.push((k, y));
                y += MARK_H;
            }
        }
        if !marks.is_empty() {
            y += 2;
        }
        let mut lane = |present: bool, h: i32| {
            present.then(|| {
                let at = y;
                y += h;
                at
            })
        };
        let faults = lane(
            tl.pauses.iter().any(|p| p.span.node == node)
                || tl.down.iter().any(|d| d.node == node)
                || tl.thread_stalls.iter().any(|s| s.span.node == node)
                || tl.disk_stalls.iter().any(|s| s.node == node),
            FAULT_H + 2,
        );
        let cuts = lane(
            tl.cuts
                .iter()
                .any(|c| c.cut_off.contains(&node) || c.others.contains(&node)),
            FAULT_H + 2,
        );
        RowLayout {
            height: (y + 4).max(44),
            events,
            belief,
            read,
            marks,
            faults,
            cuts,
        }
    }

    /// The layouts of all rows of `tl`.
    pub fn for_rows(tl: &Timeline) -> Vec<RowLayout> {
        (0..tl.node_names.len())
            .map(|n| RowLayout::for_node(tl, n))
            .collect()
    }
}

/// Places labels on a few lines without overlapping: each line remembers the spans it holds.
pub(crate) struct Slots {
    pub(crate) lines: Vec<Vec<(i32, i32)>>,
}

impl Slots {
    pub(crate) fn new(lines: usize) -> Slots {
        Slots {
            lines: vec![Vec::new(); lines],
        }
    }

    /// The first line on which `[a, b)` (padded) is free, taken; `None` if none is.
    pub(crate) fn take(&mut self, a: i32, b: i32) -> Option<usize> {
        let (a, b) = (a - 6, b + 6);
        for (i, line) in self.lines.iter_mut().enumerate() {
            if line.iter().all(|&(p, q)| b <= p || a >= q) {
                line.push((a, b));
                return Some(i);
            }
        }
        None
    }
}

/// Adds filled spans to a scene, skipping those already covered at pixel resolution and merging
/// touching spans of the same colour, so that a row never has more rectangles than pixels.
pub(crate) struct SpanPainter {
    pub(crate) pending: Option<(i32, i32, RGBAColor)>,
    pub(crate) covered_to: i32,
    pub(crate) y0: i32,
    pub(crate) y1: i32,
}

pub(crate) fn same_color(a: RGBAColor, b: RGBAColor) -> bool {
    a.0 == b.0 && a.1 == b.1 && a.2 == b.2 && a.3 == b.3
}

impl SpanPainter {
    pub(crate) fn new(y0: i32, y1: i32) -> SpanPainter {
        SpanPainter {
            pending: None,
            covered_to: i32::MIN,
            y0,
            y1,
        }
    }

    /// Adds `[xa, xb)`; returns whether it is drawn (not hidden in an already drawn pixel).
    pub(crate) fn add(&mut self, sc: &mut Scene, xa: i32, xb: i32, color: RGBAColor) -> bool {
        if xb <= self.covered_to {
            return false;
        }
        let xa = xa.max(self.covered_to.min(xb - 1));
        match &mut self.pending {
            Some((_, pb, pc)) if same_color(*pc, color) && xa <= *pb => *pb = (*pb).max(xb),
            _ => {
                self.flush(sc);
                self.pending = Some((xa, xb, color));
            }
        }
        self.covered_to = self.covered_to.max(xb);
        true
    }

    pub(crate) fn flush(&mut self, sc: &mut Scene) {
        if let Some((a, b, c)) = self.pending.take() {
            sc.rect(a, self.y0, b, self.y1, c);
        }
    }
}

/// One run as a chart draws it.
pub(crate) struct RunView<'a> {
    pub tl: &'a Timeline,
    pub s: &'a Summary,
    /// Per mark kind: the time of the last exact mark, if the bins hold more than the marks.
    pub(crate) exact_until: [Option<i64>; 7],
    /// Per mark kind: the largest bin count (for density strips).
    pub(crate) bin_max: [u32; 7],
    /// Each row's layout.
    pub lays: Vec<RowLayout>,
    /// Per node: its clocks had no error at all in the run.
    pub(crate) flat_clock: Vec<bool>,
}

impl<'a> RunView<'a> {
    pub fn new(tl: &'a Timeline, s: &'a Summary) -> RunView<'a> {
        let mut exact_until = [None; 7];
        let mut bin_max = [0u32; 7];
        for k in MarkKind::ALL {
            let i = k as usize;
            let total: u64 = tl
                .bins
                .iter()
                .filter_map(|per_kind| per_kind.get(i))
                .flat_map(|b| b.iter().map(|&c| c as u64))
                .sum();
            let exact = tl.marks.iter().filter(|m| m.kind == k).count() as u64;
            if total > exact {
                exact_until[i] = Some(
                    tl.marks
                        .iter()
                        .rev()
                        .find(|m| m.kind == k)
                        .map_or(i64::MIN, |m| m.t.ns()),
                );
            }
            bin_max[i] = tl
                .bins
                .iter()
                .filter_map(|per_kind| per_kind.get(i))
                .flat_map(|b| b.iter().copied())
                .max()
                .unwrap_or(0);
        }
        let flat_clock = (0..tl.node_names.len())
            .map(|n| {
                tl.clock_error
                    .get(n)
                    .into_iter()
                    .flatten()
                    .all(|p| p.mono_err_ns == 0 && p.wall_err_ns == 0)
                    && s.drift_ppm.get(&tl.node_names[n]).copied().unwrap_or(0.0) == 0.0
                    && !tl.pauses.iter().any(|p| p.span.node == n && p.stall)
            })
            .collect();
        RunView {
            tl,
            s,
            exact_until,
            bin_max,
            lays: RowLayout::for_rows(tl),
            flat_clock,
        }
    }

    pub(crate) fn n(&self) -> usize {
        self.tl.node_names.len()
    }

    /// A grantor's row shows what it granted; a client that counts its own acquisitions as
    /// grants (Redlock) keeps the row of a contender.
    pub(crate) fn is_grantor(&self, node: usize) -> bool {
        self.tl.roles.get(node) == Some(&Role::Grantor)
    }
}

/// The left margin that fits the row and lane labels of `runs`.
pub(crate) fn left_margin(runs: &[&RunView]) -> i32 {
    let widest = runs
        .iter()
        .flat_map(|r| r.tl.node_names.iter())
        .map(|n| text_width(n, 16.0, true))
        .max()
        .unwrap_or(0);
    (widest + 80).clamp(150, 330)
}

/// `text` cut to fit `max_w` pixels, with an ellipsis when cut.
pub(crate) fn fit_text(text: &str, size: f64, bold: bool, max_w: i32) -> String {
    if text_width(text, size, bold) <= max_w {
        return text.to_string();
    }
    let chars: Vec<char> = text.chars().collect();
    let (mut lo, mut hi) = (0usize, chars.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        let s: String = chars[..mid].iter().collect::<String>() + "…";
        if text_width(&s, size, bold) <= max_w {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    chars[..lo].iter().collect::<String>() + "…"
}

/// Vertical grid lines at the ticks, from `y0` to `y1`.
pub(crate) fn draw_grid(sc: &mut Scene, xm: &XMap, ticks: &Ticks, y0: i32, y1: i32) {
    for &t in &ticks.at {
        if let Some(x) = xm.x(t) {
            sc.rect(x, y0, x + 1, y1, GRID);
        }
    }
}

/// The time axis at `y`: a base line, ticks, labels and its title. Returns the y below it.
pub(crate) fn draw_axis(sc: &mut Scene, xm: &XMap, ticks: &Ticks, y: i32) -> i32 {
    let title = format!("true time ({})", ticks.unit.name);
    draw_axis_titled(sc, xm, ticks, y, &title)
}

/// [`draw_axis`] with its own `title`.
pub(crate) fn draw_axis_titled(
    sc: &mut Scene,
    xm: &XMap,
    ticks: &Ticks,
    y: i32,
    title: &str,
) -> i32 {
    sc.rect(xm.x0, y, xm.x1 + 1, y + 1, rgb(60, 60, 60));
    for (&t, label) in ticks.at.iter().zip(&ticks.labels) {
        if let Some(x) = xm.x(t) {
            sc.rect(x, y, x + 1, y + 6, rgb(60, 60, 60));
            sc.text(x, y + 16, label.clone(), 14.0, false, TEXT, Anchor::Center);
        }
    }
    let mid = (xm.x0 + xm.x1) / 2;
    sc.text(mid, y + 38, title, 16.0, false, TEXT, Anchor::Center);
    y + 52
}

/// Ticks for the window of `xm` that leave room for their labels.
pub(crate) fn axis_ticks(xm: &XMap) -> Ticks {
    let w = (xm.x1 - xm.x0).max(1);
    let mut max = 16usize;
    loop {
        let t = time_ticks(xm.t0, xm.t1, max);
        let widest = t
            .labels
            .iter()
            .map(|l| text_width(l, 14.0, false))
            .max()
            .unwrap_or(0);
        if max <= 2 || (widest + 24) * t.at.len() as i32 <= w {
            return t;
        }
        max -= 1;
    }
}
