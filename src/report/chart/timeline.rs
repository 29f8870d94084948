//! The timeline chart of one run (SPEC 6): true time across, one row per node, a clock-error lane
//! per node, and a zoom panel when an overlap is too short to see at the scale of the run.
//!
//! What a row shows: the node's belief intervals as bars coloured by fencing token (hatched and
//! lighter while the node is not running: "believes but is frozen"); on a grantor's row, what it
//! granted to whom and until when; pauses (GC, VM freeze, stalled VM freeze) and crashes shaded
//! over the row and named in its fault lane; network cuts in a cut lane; clock steps, drift
//! changes and restarts as labelled markers; zombie actions, stale reads, unsafe and fenced
//! writes as marks (exact where the timeline kept them, density strips from its bins beyond).
//! Every overlap is one red band across all rows, labelled with its length.
//!
//! The number of shapes is bounded by the plot's width, never by the run's length or event
//! count: spans and marks narrower than a pixel are merged. This module only lays the chart out;
//! [`super::scene`] renders it. The row drawing here is shared with [`super::compare`].

use super::scene::{rgb, rgba, text_width, Anchor, Scene};
use super::{time_ticks, ChartFiles, Ticks};
use crate::oracle::Piece;
use crate::outcome::Summary;
use crate::report::Verdict;
use crate::scenario::{PauseKind, Role};
use crate::time::format_ns;
use crate::trace::timeline::{MarkKind, Timeline, BINS};
use plotters::style::RGBAColor;

/// An opaque colour as red, green, blue.
type Rgb = (u8, u8, u8);
/// Clock error over true time: (true ns, error ns).
type ErrorLine = Vec<(i64, i64)>;

/// Width of every chart, in pixels.
pub const WIDTH: u32 = 1600;

/// The fill of the overlap bands of the main panel, and of nothing else in a chart, as the SVG
/// writes it (`fill="#E41A1C"`): one band per overlap interval.
pub const OVERLAP_FILL: &str = "#E41A1C";
pub(crate) const OVERLAP_RGB: Rgb = (0xE4, 0x1A, 0x1C);
/// The zoom panel's bands: the same red to the eye, a different fill so bands count once.
const ZOOM_OVERLAP_RGB: Rgb = (0xE3, 0x1A, 0x1C);
const BAND_ALPHA: f64 = 0.32;
/// Dark red for overlap labels.
const OVERLAP_TEXT: RGBAColor = rgb(170, 0, 0);

/// The heading of the zoom panel starts with this.
pub const ZOOM_HEADING: &str = "Zoom on overlap";

/// Above this many overlaps, bands that touch at the chart's resolution are merged into one.
const MAX_SEPARATE_BANDS: usize = 400;

pub(crate) const RIGHT_MARGIN: i32 = 36;
pub(crate) const TEXT: RGBAColor = rgb(25, 25, 25);
pub(crate) const MUTED: RGBAColor = rgb(100, 100, 100);
const GRID: RGBAColor = rgb(226, 226, 226);

/// Fencing-token colours (no red: red is for overlaps).
const TOKEN_COLORS: [Rgb; 8] = [
    (31, 119, 180),
    (255, 127, 14),
    (44, 160, 44),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (188, 189, 34),
    (23, 190, 207),
];

pub(crate) fn token_rgb(token: u64) -> Rgb {
    TOKEN_COLORS[((token.max(1) - 1) % TOKEN_COLORS.len() as u64) as usize]
}

fn is_dark((r, g, b): Rgb) -> bool {
    299 * r as u32 + 587 * g as u32 + 114 * b as u32 <= 150_000
}

fn ink_on(c: Rgb) -> RGBAColor {
    if is_dark(c) {
        rgb(255, 255, 255)
    } else {
        rgb(20, 20, 20)
    }
}

const fn solid((r, g, b): Rgb) -> RGBAColor {
    rgb(r, g, b)
}

// Fault colours: (strong, for the fault lane; light, shaded over the whole row).
const GC_RGB: Rgb = (245, 176, 20);
const GC_SHADE: RGBAColor = rgba(255, 190, 40, 0.22);
const VM_RGB: Rgb = (110, 140, 215);
const VM_SHADE: RGBAColor = rgba(110, 140, 230, 0.20);
const STALL_RGB: Rgb = (40, 60, 150);
const STALL_SHADE: RGBAColor = rgba(40, 60, 170, 0.22);
const DOWN_RGB: Rgb = (80, 80, 80);
const DOWN_SHADE: RGBAColor = rgba(0, 0, 0, 0.16);
const CUT_RGB: Rgb = (84, 110, 122);
const CUT_OTHER_RGB: Rgb = (176, 190, 197);
const STEP_RGB: Rgb = (0, 105, 92);
const DRIFT_RGB: Rgb = (123, 31, 162);
const RESTART_RGB: Rgb = (46, 125, 50);
const MONO_RGB: Rgb = (21, 67, 150);
const WALL_RGB: Rgb = (230, 110, 0);

/// The harm kinds drawn as marks, in lane order.
pub(crate) const HARM_KINDS: [MarkKind; 5] = [
    MarkKind::ZombieRead,
    MarkKind::StaleRead,
    MarkKind::ZombieWrite,
    MarkKind::UnsafeWrite,
    MarkKind::FencedWrite,
];

fn mark_rgb(k: MarkKind) -> Rgb {
    match k {
        MarkKind::ZombieRead => (217, 95, 2),
        MarkKind::StaleRead => (117, 112, 179),
        MarkKind::ZombieWrite => (120, 72, 0),
        MarkKind::UnsafeWrite => (200, 0, 120),
        MarkKind::FencedWrite => (27, 140, 110),
        MarkKind::Read => (150, 150, 150),
        MarkKind::Rejected => (120, 120, 120),
    }
}

fn mark_name(k: MarkKind) -> &'static str {
    match k {
        MarkKind::ZombieRead => "zombie read",
        MarkKind::StaleRead => "stale read",
        MarkKind::ZombieWrite => "zombie write",
        MarkKind::UnsafeWrite => "unsafe write",
        MarkKind::FencedWrite => "fenced write (rejected)",
        MarkKind::Read => "read",
        MarkKind::Rejected => "rejected request",
    }
}

/// Draws the mark of kind `k` centred on (x, y).
fn draw_mark(sc: &mut Scene, k: MarkKind, x: i32, y: i32) {
    let c = solid(mark_rgb(k));
    match k {
        MarkKind::ZombieRead | MarkKind::Read | MarkKind::Rejected => sc.circle(x, y, 3, c, true),
        MarkKind::StaleRead => sc.polygon(vec![(x - 4, y + 3), (x + 4, y + 3), (x, y - 4)], c),
        MarkKind::ZombieWrite => sc.rect(x - 3, y - 3, x + 4, y + 4, c),
        MarkKind::UnsafeWrite => {
            sc.line(vec![(x - 3, y - 3), (x + 3, y + 3)], c, 2);
            sc.line(vec![(x - 3, y + 3), (x + 3, y - 3)], c, 2);
        }
        MarkKind::FencedWrite => sc.line(
            vec![(x, y - 4), (x + 4, y), (x, y + 4), (x - 4, y), (x, y - 4)],
            c,
            2,
        ),
    }
}

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
    fn span(&self, a: i64, b: i64, min_w: i32) -> Option<(i32, i32)> {
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
    events: Option<i32>,
    belief: i32,
    /// The thin lane of read-authority beliefs, for a protocol that tracks read apart.
    read: Option<i32>,
    marks: Vec<(MarkKind, i32)>,
    faults: Option<i32>,
    cuts: Option<i32>,
}

const EVENTS_H: i32 = 16;
const BELIEF_H: i32 = 24;
const READ_H: i32 = 10;
const MARK_H: i32 = 10;
const FAULT_H: i32 = 15;

/// Whether `node` did something of kind `k` in the run.
fn has_kind(tl: &Timeline, node: usize, k: MarkKind) -> bool {
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
            tl.pauses.iter().any(|p| p.span.node == node) || tl.down.iter().any(|d| d.node == node),
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
struct Slots {
    lines: Vec<Vec<(i32, i32)>>,
}

impl Slots {
    fn new(lines: usize) -> Slots {
        Slots {
            lines: vec![Vec::new(); lines],
        }
    }

    /// The first line on which `[a, b)` (padded) is free, taken; `None` if none is.
    fn take(&mut self, a: i32, b: i32) -> Option<usize> {
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
struct SpanPainter {
    pending: Option<(i32, i32, RGBAColor)>,
    covered_to: i32,
    y0: i32,
    y1: i32,
}

fn same_color(a: RGBAColor, b: RGBAColor) -> bool {
    a.0 == b.0 && a.1 == b.1 && a.2 == b.2 && a.3 == b.3
}

impl SpanPainter {
    fn new(y0: i32, y1: i32) -> SpanPainter {
        SpanPainter {
            pending: None,
            covered_to: i32::MIN,
            y0,
            y1,
        }
    }

    /// Adds `[xa, xb)`; returns whether it is drawn (not hidden in an already drawn pixel).
    fn add(&mut self, sc: &mut Scene, xa: i32, xb: i32, color: RGBAColor) -> bool {
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

    fn flush(&mut self, sc: &mut Scene) {
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
    exact_until: [Option<i64>; 7],
    /// Per mark kind: the largest bin count (for density strips).
    bin_max: [u32; 7],
    /// Each row's layout.
    pub lays: Vec<RowLayout>,
    /// Per node: its clocks had no error at all in the run.
    flat_clock: Vec<bool>,
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

    fn n(&self) -> usize {
        self.tl.node_names.len()
    }

    /// A grantor's row shows what it granted; a client that counts its own acquisitions as
    /// grants (Redlock) keeps the row of a contender.
    fn is_grantor(&self, node: usize) -> bool {
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
    sc.rect(xm.x0, y, xm.x1 + 1, y + 1, rgb(60, 60, 60));
    for (&t, label) in ticks.at.iter().zip(&ticks.labels) {
        if let Some(x) = xm.x(t) {
            sc.rect(x, y, x + 1, y + 6, rgb(60, 60, 60));
            sc.text(x, y + 16, label.clone(), 14.0, false, TEXT, Anchor::Center);
        }
    }
    sc.text(
        (xm.x0 + xm.x1) / 2,
        y + 38,
        format!("true time ({})", ticks.unit.name),
        16.0,
        false,
        TEXT,
        Anchor::Center,
    );
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

/// The overlaps of `rv` in the window as pixel bands (merged when there are very many), each
/// with the overlap's index, if it is one overlap, and its length.
fn overlap_bands(rv: &RunView, xm: &XMap) -> Vec<(i32, i32, Option<usize>, i64)> {
    let mut bands: Vec<(i32, i32, Option<usize>, i64)> = Vec::new();
    let merge = rv.tl.overlaps.len() > MAX_SEPARATE_BANDS;
    for (i, o) in rv.tl.overlaps.iter().enumerate() {
        let Some((a, b)) = xm.span(o.start.ns(), o.end.ns(), 2) else {
            continue;
        };
        let len = o.end.ns() - o.start.ns();
        match bands.last_mut() {
            Some(last) if merge && a <= last.1 => {
                last.1 = last.1.max(b);
                last.2 = None;
                last.3 += len;
            }
            _ => bands.push((a, b, Some(i), len)),
        }
    }
    bands
}

/// Overlap labels on the strip `[y0, y0 + 2 * 15)` above the bands.
fn draw_overlap_labels(
    sc: &mut Scene,
    bands: &[(i32, i32, Option<usize>, i64)],
    y0: i32,
    xm: &XMap,
    zoomed: Option<usize>,
) {
    let mut slots = Slots::new(2);
    for &(a, b, idx, len) in bands {
        let mut label = match idx {
            Some(_) => format_ns(len),
            None => format!("{} (merged)", format_ns(len)),
        };
        if idx.is_some() && idx == zoomed {
            label.push_str(" (zoomed below)");
        }
        let w = text_width(&label, 14.0, true);
        let c = (a + b) / 2;
        let la = (c - w / 2).clamp(xm.x0 - 40, xm.x1 + 30 - w);
        if let Some(line) = slots.take(la, la + w) {
            let y = y0 + 8 + 15 * line as i32;
            sc.text(la, y, label, 14.0, true, OVERLAP_TEXT, Anchor::Left);
        }
    }
}

/// The red bands over `[y0, y1)`.
fn draw_bands(
    sc: &mut Scene,
    bands: &[(i32, i32, Option<usize>, i64)],
    y0: i32,
    y1: i32,
    fill: Rgb,
) {
    let (r, g, b) = fill;
    for &(xa, xb, _, _) in bands {
        sc.rect(xa, y0, xb, y1, rgba(r, g, b, BAND_ALPHA));
    }
}

/// Draws node `node`'s row of `rv` with its top at `top`, and its label in the left margin.
pub(crate) fn draw_row(
    sc: &mut Scene,
    rv: &RunView,
    node: usize,
    xm: &XMap,
    top: i32,
    stripe: bool,
) {
    let tl = rv.tl;
    let lay = &rv.lays[node];
    let bottom = top + lay.height;
    if stripe {
        sc.rect(xm.x0, top, xm.x1, bottom, rgb(248, 248, 250));
    }
    sc.rect(xm.x0, bottom - 1, xm.x1, bottom, rgb(205, 205, 205));
    // The label at the row's centre.
    let yc = top + lay.height / 2;
    let name = fit_text(&tl.node_names[node], 16.0, true, xm.x0 - 24);
    // Under the name: the grantor's role, and the node's drift as run (when it has one).
    let drift =
        rv.s.drift_ppm
            .get(&tl.node_names[node])
            .copied()
            .filter(|&d| d != 0.0);
    let under: Vec<String> = match (rv.is_grantor(node), drift) {
        (true, Some(d)) => vec![format!("grantor, {d:+} ppm")],
        (true, None) => vec!["grantor".to_string()],
        (false, Some(d)) => vec![format!("drift {d:+} ppm")],
        (false, None) => vec![],
    };
    if under.is_empty() {
        sc.text(14, yc, name, 16.0, true, TEXT, Anchor::Left);
    } else {
        sc.text(14, yc - 9, name, 16.0, true, TEXT, Anchor::Left);
        let under = fit_text(&under.join(", "), 12.0, false, xm.x0 - 24);
        sc.text(14, yc + 10, under, 12.0, false, MUTED, Anchor::Left);
    }

    // Pauses and crashes shaded over the whole row (drawn first, under everything).
    let mut pauses: Vec<_> = tl.pauses.iter().filter(|p| p.span.node == node).collect();
    pauses.sort_by_key(|p| (p.span.start, p.span.end));
    let pause_style = |p: &crate::trace::timeline::PauseSpan| match (p.kind, p.stall) {
        (PauseKind::Gc, _) => (GC_SHADE, GC_RGB),
        (PauseKind::VmFreeze, false) => (VM_SHADE, VM_RGB),
        (PauseKind::VmFreeze, true) => (STALL_SHADE, STALL_RGB),
    };
    let downs: Vec<_> = tl.down.iter().filter(|d| d.node == node).collect();
    let mut shade = SpanPainter::new(top, bottom - 1);
    for p in &pauses {
        if let Some((a, b)) = xm.span(p.span.start.ns(), p.span.end.ns(), 1) {
            shade.add(sc, a, b, pause_style(p).0);
        }
    }
    shade.flush(sc);
    let mut shade = SpanPainter::new(top, bottom - 1);
    for d in &downs {
        if let Some((a, b)) = xm.span(d.start.ns(), d.end.ns(), 1) {
            shade.add(sc, a, b, DOWN_SHADE);
        }
    }
    shade.flush(sc);

    // Beliefs (or, on a grantor's row, grants).
    let (by0, by1) = (top + lay.belief, top + lay.belief + BELIEF_H);
    fn pieces(v: &[Vec<Piece>], node: usize) -> &[Piece] {
        v.get(node).map_or(&[], Vec::as_slice)
    }
    draw_beliefs(sc, pieces(&rv.tl.beliefs, node), xm, by0, by1, true);
    if rv.is_grantor(node) {
        draw_grants(sc, rv, node, xm, by0, by1);
    }
    if let Some(off) = lay.read {
        let (ry0, ry1) = (top + off, top + off + READ_H);
        draw_beliefs(sc, pieces(&rv.tl.read_beliefs, node), xm, ry0, ry1, false);
    }

    // Harm marks.
    for &(k, off) in &lay.marks {
        draw_marks(sc, rv, node, k, xm, top + off + MARK_H / 2);
    }

    // The fault lane: pauses and crashes, named.
    if let Some(off) = lay.faults {
        let (fy0, fy1) = (top + off, top + off + FAULT_H);
        let mut painter = SpanPainter::new(fy0, fy1);
        let mut labels: Vec<(i32, i32, String, Rgb)> = Vec::new();
        for p in &pauses {
            let Some((a, b)) = xm.span(p.span.start.ns(), p.span.end.ns(), 2) else {
                continue;
            };
            let c = pause_style(p).1;
            if painter.add(sc, a, b, solid(c)) {
                let len = format_ns(p.span.end.ns() - p.span.start.ns());
                let names = match (p.kind, p.stall) {
                    (PauseKind::Gc, _) => {
                        vec![format!("GC pause {len}"), format!("GC {len}"), "GC".into()]
                    }
                    (PauseKind::VmFreeze, false) => {
                        vec![format!("VM freeze {len}"), format!("VM {len}"), "VM".into()]
                    }
                    (PauseKind::VmFreeze, true) => vec![
                        format!("VM freeze {len}, clock stalled"),
                        format!("VM freeze {len}, stalled"),
                        format!("VM {len} stall"),
                        "stall".into(),
                    ],
                };
                if let Some(l) = names
                    .into_iter()
                    .find(|l| text_width(l, 12.0, false) + 8 <= b - a)
                {
                    labels.push((a, b, l, c));
                }
            }
        }
        painter.flush(sc);
        let mut painter = SpanPainter::new(fy0, fy1);
        for d in &downs {
            let Some((a, b)) = xm.span(d.start.ns(), d.end.ns(), 2) else {
                continue;
            };
            if painter.add(sc, a, b, solid(DOWN_RGB)) {
                let len = format_ns(d.end.ns() - d.start.ns());
                if let Some(l) = [format!("crashed {len}"), "down".to_string()]
                    .into_iter()
                    .find(|l| text_width(l, 12.0, false) + 8 <= b - a)
                {
                    labels.push((a, b, l, DOWN_RGB));
                }
            }
        }
        painter.flush(sc);
        for (a, b, l, c) in labels {
            sc.text(
                (a + b) / 2,
                (fy0 + fy1) / 2,
                l,
                12.0,
                false,
                ink_on(c),
                Anchor::Center,
            );
        }
    }

    // The cut lane.
    if let Some(off) = lay.cuts {
        let (cy0, cy1) = (top + off, top + off + FAULT_H);
        let names = |ids: &[usize]| {
            ids.iter()
                .map(|&i| tl.node_names[i].as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        for c in &tl.cuts {
            let mine = c.cut_off.contains(&node);
            if !mine && !c.others.contains(&node) {
                continue;
            }
            let Some((a, b)) = xm.span(c.start.ns(), c.end.ns(), 2) else {
                continue;
            };
            let color = if mine { CUT_RGB } else { CUT_OTHER_RGB };
            sc.rect(a, cy0, b, cy1, solid(color));
            let label = match (c.one_way, mine) {
                (true, true) => format!(
                    "one-way cut: {} → {} lost",
                    tl.node_names[node],
                    names(&c.others)
                ),
                (true, false) => format!("one-way cut: nothing from {}", names(&c.cut_off)),
                (false, true) => format!("partition: cut off from {}", names(&c.others)),
                (false, false) => format!("partition: cut off from {}", names(&c.cut_off)),
            };
            let short = if c.one_way {
                "one-way cut"
            } else {
                "partition"
            };
            if let Some(l) = [label, short.to_string()]
                .into_iter()
                .find(|l| text_width(l, 12.0, false) + 8 <= b - a)
            {
                sc.text(
                    (a + b) / 2,
                    (cy0 + cy1) / 2,
                    l,
                    12.0,
                    false,
                    ink_on(color),
                    Anchor::Center,
                );
            }
        }
    }

    // Instant events: clock steps, drift changes, restarts.
    if let Some(off) = lay.events {
        let (ey0, ey1) = (top + off, top + off + EVENTS_H);
        let mut items: Vec<(i64, String, Rgb, bool)> = Vec::new();
        for &(t, n, by) in &tl.clock_steps {
            if n == node {
                items.push((
                    t.ns(),
                    format!("wall step {}", short_ns(by.ns() as f64)),
                    STEP_RGB,
                    true,
                ));
            }
        }
        for &(t, n, d) in &tl.drift_changes {
            if n == node {
                let ppm = d.as_ppm();
                let sign = if ppm > 0.0 { "+" } else { "" };
                items.push((t.ns(), format!("drift {sign}{ppm}ppm"), DRIFT_RGB, false));
            }
        }
        for &(t, n) in &tl.restarts {
            if n == node {
                items.push((t.ns(), "restart".to_string(), RESTART_RGB, false));
            }
        }
        items.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
        let mut last_x = i32::MIN;
        let mut label_end = i32::MIN;
        for (t, label, c, strong) in items {
            let Some(x) = xm.x(t) else { continue };
            if x == last_x {
                continue;
            }
            last_x = x;
            let line = solid(c);
            if strong {
                sc.rect(x - 1, ey1, x + 1, bottom - 1, line);
            } else {
                sc.dashed(vec![(x, ey1), (x, bottom - 1)], line, 1, 4, 3);
            }
            sc.polygon(vec![(x - 5, ey1 - 8), (x + 5, ey1 - 8), (x, ey1)], line);
            let w = text_width(&label, 12.0, true);
            let lx = x + 7;
            if lx > label_end && lx + w <= xm.x1 + RIGHT_MARGIN - 2 {
                sc.text(
                    lx,
                    (ey0 + ey1) / 2 - 1,
                    label,
                    12.0,
                    true,
                    line,
                    Anchor::Left,
                );
                label_end = lx + w + 6;
            } else if x - 7 - w > label_end.max(xm.x0) && lx + w > xm.x1 + RIGHT_MARGIN - 2 {
                sc.text(
                    x - 7,
                    (ey0 + ey1) / 2 - 1,
                    label,
                    12.0,
                    true,
                    line,
                    Anchor::Right,
                );
                label_end = x;
            }
        }
    }
}

/// Belief bars, coloured by token; hatched and lighter while the node is not running; with
/// `labels`, the token written in the bar where it fits.
fn draw_beliefs(sc: &mut Scene, pieces: &[Piece], xm: &XMap, y0: i32, y1: i32, labels: bool) {
    let mut covered_to = i32::MIN;
    let mut pending: Option<(i32, i32, u64, bool)> = None;
    let flush = |sc: &mut Scene, p: Option<(i32, i32, u64, bool)>| {
        if let Some((a, b, token, running)) = p {
            let c = token_rgb(token);
            if running {
                sc.rect(a, y0, b, y1, solid(c));
            } else {
                let (r, g, bl) = c;
                sc.rect(a, y0, b, y1, rgba(r, g, bl, 0.28));
                if b - a >= 4 {
                    sc.hatch(a, y0, b, y1, 7, solid(c), 2);
                    sc.frame(a, y0, b - 1, y1 - 1, solid(c), 1);
                }
            }
        }
    };
    for p in pieces {
        let Some((a, b)) = xm.span(p.start.ns(), p.end.ns(), 1) else {
            continue;
        };
        if b <= covered_to {
            continue;
        }
        let a = a.max(covered_to);
        match &mut pending {
            Some((_, pb, tok, run)) if *tok == p.token && *run == p.running && a <= *pb => *pb = b,
            _ => {
                flush(sc, pending.take());
                pending = Some((a, b, p.token, p.running));
            }
        }
        covered_to = b;
    }
    flush(sc, pending);
    if !labels {
        return;
    }
    // Token labels, one per run of pieces with the same token: in its first piece wide enough,
    // preferring one where the node runs; over hatching, dark text on a white box.
    let mut i = 0;
    while i < pieces.len() {
        let mut j = i;
        while j + 1 < pieces.len()
            && pieces[j + 1].token == pieces[i].token
            && pieces[j + 1].start == pieces[j].end
        {
            j += 1;
        }
        let token = pieces[i].token;
        let label = format!("tok {token}");
        let need = text_width(&label, 14.0, true) + 12;
        let fits = |p: &&Piece| {
            xm.span(p.start.ns(), p.end.ns(), 1)
                .filter(|(a, b)| b - a >= need)
                .map(|(a, _)| (a, p.running))
        };
        let run = &pieces[i..=j];
        let place = run
            .iter()
            .filter(|p| p.running)
            .find_map(|p| fits(&p))
            .or_else(|| run.iter().find_map(|p| fits(&p)));
        let yc = (y0 + y1) / 2;
        match place {
            Some((a, true)) => {
                let ink = ink_on(token_rgb(token));
                sc.text(a + 6, yc, label, 14.0, true, ink, Anchor::Left);
            }
            Some((a, false)) => {
                sc.rect(
                    a + 3,
                    yc - 8,
                    a + need - 3,
                    yc + 8,
                    rgba(255, 255, 255, 0.9),
                );
                sc.text(a + 6, yc, label, 14.0, true, rgb(20, 20, 20), Anchor::Left);
            }
            None => {}
        }
        i = j + 1;
    }
}

/// A grantor's row: each grant from its start until its (last) expiry, coloured by token.
fn draw_grants(sc: &mut Scene, rv: &RunView, node: usize, xm: &XMap, y0: i32, y1: i32) {
    let mut covered_to = i32::MIN;
    let mut labels = Vec::new();
    for g in rv.tl.grants.iter().filter(|g| g.grantor == node) {
        let Some((a, b)) = xm.span(g.start.ns(), g.until.ns(), 1) else {
            continue;
        };
        if b <= covered_to {
            continue;
        }
        let c = token_rgb(g.token);
        sc.rect(a, y0 + 2, b, y1 - 2, solid(c));
        covered_to = b;
        let to = rv.tl.node_names.get(g.to).map_or("?", String::as_str);
        let until = format_ns(g.until.ns());
        if let Some(l) = [
            format!("granted tok {} to {to}, until {until}", g.token),
            format!("tok {} → {to}", g.token),
            format!("{}", g.token),
        ]
        .into_iter()
        .find(|l| text_width(l, 14.0, true) + 10 <= b - a)
        {
            labels.push((a + 6, l, ink_on(c)));
        }
    }
    for (x, l, ink) in labels {
        sc.text(x, (y0 + y1) / 2, l, 14.0, true, ink, Anchor::Left);
    }
}

/// Marks of kind `k` on `node`'s row, centred on `y`. Exact marks where the timeline kept all of
/// the window's (dense runs of them become bars with a mark at each end); otherwise the bins, as a
/// density strip (darker where denser), over the whole window so that one kind reads one way.
fn draw_marks(sc: &mut Scene, rv: &RunView, node: usize, k: MarkKind, xm: &XMap, y: i32) {
    let c = mark_rgb(k);
    let (r, g, b) = c;
    let exact = rv.exact_until[k as usize].is_none_or(|until| xm.t1 <= until);
    if !exact {
        let max = rv.bin_max[k as usize].max(1);
        let Some(bins) = rv.tl.bins.get(node).and_then(|b| b.get(k as usize)) else {
            return;
        };
        let mut painter = SpanPainter::new(y - 3, y + 4);
        // Runs of touching non-empty bins, to mark each run's start with the kind's shape.
        let mut runs: Vec<(i32, i32)> = Vec::new();
        for (i, &count) in bins.iter().enumerate().take(BINS) {
            if count == 0 {
                continue;
            }
            let (s, e) = rv.tl.bin_span(i);
            let Some((xa, xb)) = xm.span(s.ns(), e.ns(), 3) else {
                continue;
            };
            // Four levels on a log scale: a single mark still shows.
            let f = (count as f64).ln_1p() / (max as f64).ln_1p();
            let level = (f * 4.0).ceil().clamp(1.0, 4.0);
            painter.add(sc, xa, xb, rgba(r, g, b, 0.25 + 0.1875 * level));
            match runs.last_mut() {
                Some(run) if xa <= run.1 + 1 => run.1 = run.1.max(xb),
                _ => runs.push((xa, xb)),
            }
        }
        painter.flush(sc);
        if runs.len() <= 200 {
            for (xa, _) in runs {
                draw_mark(sc, k, xa + 1, y);
            }
        }
        return;
    }
    const CELL: i32 = 3;
    let w = (xm.x1 - xm.x0).max(1);
    let mut cells = vec![false; (w / CELL + 2) as usize];
    let mut any = false;
    for m in rv.tl.marks.iter().filter(|m| m.node == node && m.kind == k) {
        if let Some(x) = xm.x(m.t.ns()) {
            cells[((x - xm.x0) / CELL) as usize] = true;
            any = true;
        }
    }
    if !any {
        return;
    }
    let mut i = 0;
    while i < cells.len() {
        if !cells[i] {
            i += 1;
            continue;
        }
        // A run: occupied cells with gaps of at most one cell.
        let mut j = i;
        while j + 1 < cells.len() && (cells[j + 1] || (j + 2 < cells.len() && cells[j + 2])) {
            j += 1;
        }
        let xa = xm.x0 + i as i32 * CELL + CELL / 2;
        let xb = xm.x0 + j as i32 * CELL + CELL / 2;
        if j - i >= 3 {
            sc.rect(xa, y - 2, xb + 1, y + 3, rgba(r, g, b, 0.8));
            draw_mark(sc, k, xa, y);
            draw_mark(sc, k, xb, y);
        } else {
            for (cell, _) in cells
                .iter()
                .enumerate()
                .take(j + 1)
                .skip(i)
                .filter(|c| *c.1)
            {
                draw_mark(sc, k, xm.x0 + cell as i32 * CELL + CELL / 2, y);
            }
        }
        i = j + 1;
    }
}

/// The error (local minus true, ns) of `node`'s monotonic and wall clocks as polylines of
/// (true ns, error ns), exact between breakpoints, extended to the end of the run.
fn clock_series(rv: &RunView, node: usize) -> (ErrorLine, ErrorLine) {
    let tl = rv.tl;
    let Some(pts) = tl.clock_error.get(node) else {
        return (Vec::new(), Vec::new());
    };
    let (mut mono, mut wall) = (Vec::new(), Vec::new());
    let Some(last) = pts.last() else {
        return (mono, wall);
    };
    for (k, p) in pts.iter().enumerate() {
        let off = p.wall_err_ns - p.mono_err_ns;
        mono.push((p.t.ns(), p.mono_err_ns));
        if k > 0 {
            let prev_off = pts[k - 1].wall_err_ns - pts[k - 1].mono_err_ns;
            if prev_off != off {
                wall.push((p.t.ns(), p.mono_err_ns + prev_off));
            }
        }
        wall.push((p.t.ns(), p.wall_err_ns));
    }
    let end = tl.end.ns();
    if end > last.t.ns() {
        let dt = end - last.t.ns();
        let stalled = tl.pauses.iter().any(|p| {
            p.span.node == node && p.stall && p.span.start <= last.t && p.span.end.ns() >= end
        });
        let delta = if stalled {
            -dt
        } else {
            let ppm =
                rv.s.drift_ppm
                    .get(&tl.node_names[node])
                    .copied()
                    .unwrap_or(0.0);
            (ppm * dt as f64 / 1e6).round() as i64
        };
        mono.push((end, last.mono_err_ns + delta));
        wall.push((end, last.wall_err_ns + delta));
    }
    (mono, wall)
}

/// `pts` clipped to `[t0, t1]`, interpolating at the edges.
fn clip(pts: &[(i64, i64)], t0: i64, t1: i64) -> Vec<(i64, f64)> {
    let mut out = Vec::new();
    let at = |a: (i64, i64), b: (i64, i64), t: i64| -> f64 {
        if b.0 == a.0 {
            b.1 as f64
        } else {
            a.1 as f64 + (b.1 - a.1) as f64 * (t - a.0) as f64 / (b.0 - a.0) as f64
        }
    };
    if pts.len() == 1 && (t0..=t1).contains(&pts[0].0) {
        out.push((pts[0].0, pts[0].1 as f64));
    }
    for w in pts.windows(2) {
        let (a, b) = (w[0], w[1]);
        if b.0 < t0 || a.0 > t1 {
            continue;
        }
        let (sa, sb) = (a.0.max(t0), b.0.min(t1));
        let pa = (sa, if sa == a.0 { a.1 as f64 } else { at(a, b, sa) });
        let pb = (sb, if sb == b.0 { b.1 as f64 } else { at(a, b, sb) });
        if out.last() != Some(&pa) {
            out.push(pa);
        }
        out.push(pb);
    }
    out
}

const LANE_H: i32 = 58;
/// The one line that stands for every clock without error: only its zero line.
const FLAT_LANE_H: i32 = 30;
const LANE_GAP: i32 = 8;
const LANES_HEADING_H: i32 = 26;

/// The nodes whose clocks erred, each with a lane of its own.
fn erring<'r>(rv: &'r RunView<'_>) -> impl Iterator<Item = usize> + 'r {
    (0..rv.n()).filter(|&n| !rv.flat_clock[n])
}

/// The height of the clock-error lanes of `rv`, with their heading: a lane per node whose
/// clocks erred, and one line for all the others.
fn lanes_height(rv: &RunView) -> i32 {
    let flat = rv.flat_clock.iter().any(|&f| f);
    LANES_HEADING_H
        + erring(rv).count() as i32 * (LANE_H + LANE_GAP)
        + if flat { FLAT_LANE_H + LANE_GAP } else { 0 }
}

/// The line that stands for every node whose clocks never erred, from `y0`.
fn draw_flat_lane(sc: &mut Scene, rv: &RunView, xm: &XMap, y0: i32) {
    let names: Vec<&str> = (0..rv.n())
        .filter(|&n| rv.flat_clock[n])
        .map(|n| rv.tl.node_names[n].as_str())
        .collect();
    if names.is_empty() {
        return;
    }
    let y1 = y0 + FLAT_LANE_H;
    sc.frame(xm.x0, y0, xm.x1, y1, rgb(200, 200, 200), 1);
    let mid = (y0 + y1) / 2;
    let label = fit_text(&names.join(", "), 14.0, true, xm.x0 - 40);
    sc.text(14, mid - 6, label, 14.0, true, TEXT, Anchor::Left);
    sc.text(
        14,
        mid + 8,
        "no clock error",
        11.0,
        false,
        MUTED,
        Anchor::Left,
    );
    sc.text(xm.x0 - 8, mid, "0", 12.0, false, MUTED, Anchor::Right);
    sc.rect(xm.x0, mid, xm.x1, mid + 1, rgb(150, 150, 150));
    sc.line(vec![(xm.x0, mid), (xm.x1, mid)], solid(MONO_RGB), 2);
}

/// Whether some node's wall clock differs from its monotonic clock.
fn wall_differs(tl: &Timeline) -> bool {
    tl.clock_error
        .iter()
        .flatten()
        .any(|p| p.wall_err_ns != p.mono_err_ns)
}

/// The clock-error lanes, one per node, from `top`.
fn draw_clock_lanes(sc: &mut Scene, rv: &RunView, xm: &XMap, top: i32) {
    let tl = rv.tl;
    let both = wall_differs(tl);
    let heading = if both {
        "Clock error, local − true (solid: monotonic, dashed: wall)"
    } else {
        "Clock error, local − true (wall = monotonic)"
    };
    sc.text(14, top + 13, heading, 14.0, true, TEXT, Anchor::Left);
    let mut y0 = top + LANES_HEADING_H - LANE_H - LANE_GAP;
    let lane_h = LANE_H;
    for node in erring(rv).collect::<Vec<_>>() {
        y0 += LANE_H + LANE_GAP;
        let y1 = y0 + lane_h;
        sc.frame(xm.x0, y0, xm.x1, y1, rgb(200, 200, 200), 1);
        // Crashes shaded on the lane too.
        for d in tl.down.iter().filter(|d| d.node == node) {
            if let Some((a, b)) = xm.span(d.start.ns(), d.end.ns(), 1) {
                sc.rect(a, y0, b, y1, DOWN_SHADE);
            }
        }
        let (mono, wall) = clock_series(rv, node);
        let mono = clip(&mono, xm.t0, xm.t1);
        let wall = clip(&wall, xm.t0, xm.t1);
        let values = mono
            .iter()
            .chain(if both { wall.iter() } else { [].iter() });
        let (mut lo, mut hi) = (0f64, 0f64);
        for &(_, v) in values {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        let flat = hi - lo < 1.0;
        let name = fit_text(&tl.node_names[node], 14.0, true, xm.x0 - 70);
        if flat {
            sc.text(14, (y0 + y1) / 2, name, 14.0, true, TEXT, Anchor::Left);
        } else {
            sc.text(14, y0 + 14, name, 14.0, true, TEXT, Anchor::Left);
        }
        let pad = ((hi - lo) * 0.12).max(1.0);
        let (vlo, vhi) = if flat {
            (-1.0, 1.0)
        } else {
            (lo - pad, hi + pad)
        };
        let ty = |v: f64| -> i32 {
            (y1 - 4) - ((v - vlo) / (vhi - vlo) * (lane_h - 8) as f64).round() as i32
        };
        // Ticks on the left, in the unit that fits.
        if flat {
            sc.text(xm.x0 - 8, ty(0.0), "0", 12.0, false, MUTED, Anchor::Right);
            let w = text_width(&tl.node_names[node], 14.0, true).min(xm.x0 - 70);
            sc.text(
                22 + w,
                (y0 + y1) / 2,
                "no error",
                12.0,
                false,
                MUTED,
                Anchor::Left,
            );
        } else {
            let ticks = time_ticks(lo.floor() as i64, hi.ceil() as i64, 2);
            for (&t, l) in ticks.at.iter().zip(&ticks.labels) {
                let y = ty(t as f64);
                sc.rect(xm.x0 - 4, y, xm.x0, y + 1, MUTED);
                sc.text(xm.x0 - 8, y, l.clone(), 12.0, false, MUTED, Anchor::Right);
            }
            sc.text(
                14,
                y0 + 32,
                format!("error ({})", ticks.unit.name),
                12.0,
                false,
                MUTED,
                Anchor::Left,
            );
        }
        // The zero line.
        let yz = ty(0.0);
        sc.rect(xm.x0, yz, xm.x1, yz + 1, rgb(150, 150, 150));
        let to_px = |pts: &[(i64, f64)]| -> Vec<(i32, i32)> {
            let mut out: Vec<(i32, i32)> = Vec::with_capacity(pts.len());
            for &(t, v) in pts {
                let p = (xm.xf(t).round() as i32, ty(v));
                if out.last() != Some(&p) {
                    out.push(p);
                }
            }
            thin(out)
        };
        if both {
            sc.dashed(to_px(&wall), solid(WALL_RGB), 2, 7, 4);
        }
        sc.line(to_px(&mono), solid(MONO_RGB), 2);
        // The error at the window's end, written next to the line.
        if !flat {
            let mut ends: Vec<(f64, Rgb)> = Vec::new();
            if let Some(&(_, v)) = mono.last() {
                ends.push((v, MONO_RGB));
            }
            if let Some(&(_, v)) = wall.last().filter(|_| both) {
                if ends.first().is_none_or(|m| (m.0 - v).abs() >= 0.5) {
                    ends.push((v, WALL_RGB));
                }
            }
            // Right-aligned at the lane's end; a second label that would touch the first goes
            // to its left.
            let mut right = xm.x1 - 5;
            let mut prev_y: Option<i32> = None;
            for (v, c) in ends {
                let y = ty(v);
                let above = y - y0 > lane_h / 2;
                let ly = if above { y - 9 } else { y + 9 };
                let label = short_ns(v);
                let w = text_width(&label, 12.0, true);
                if prev_y.is_some_and(|p| (p - ly).abs() < 15) {
                    right -= w + 12;
                } else {
                    right = xm.x1 - 5;
                }
                let white = rgba(255, 255, 255, 0.85);
                sc.rect(right - w - 3, ly - 7, right + 3, ly + 7, white);
                sc.text(right, ly, label, 12.0, true, solid(c), Anchor::Right);
                prev_y = Some(ly);
            }
        }
    }
    let first_free = if erring(rv).next().is_some() {
        y0 + LANE_H + LANE_GAP
    } else {
        top + LANES_HEADING_H
    };
    draw_flat_lane(sc, rv, xm, first_free);
}

/// A clock error in a few significant digits with its unit (`-19.01ms`, `-8s`).
fn short_ns(v: f64) -> String {
    let a = v.abs();
    if a < 0.5 {
        return "0".to_string();
    }
    let (per, unit) = if a >= 1e9 {
        (1e9, "s")
    } else if a >= 1e6 {
        (1e6, "ms")
    } else if a >= 1e3 {
        (1e3, "us")
    } else {
        (1.0, "ns")
    };
    let x = v / per;
    let decimals = if x.abs() >= 100.0 {
        0
    } else if x.abs() >= 10.0 {
        2
    } else {
        3
    };
    let text = format!("{x:.decimals$}");
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    };
    let sign = if v > 0.0 { "+" } else { "" };
    format!("{sign}{text}{unit}")
}

/// A polyline with at most a few points per pixel column: the first, lowest, highest and last.
fn thin(pts: Vec<(i32, i32)>) -> Vec<(i32, i32)> {
    if pts.len() < 4000 {
        return pts;
    }
    let mut out: Vec<(i32, i32)> = Vec::new();
    let mut i = 0;
    while i < pts.len() {
        let x = pts[i].0;
        let mut j = i;
        while j + 1 < pts.len() && pts[j + 1].0 == x {
            j += 1;
        }
        let col = &pts[i..=j];
        let lo = col.iter().min_by_key(|p| p.1).copied().unwrap_or(pts[i]);
        let hi = col.iter().max_by_key(|p| p.1).copied().unwrap_or(pts[i]);
        for p in [pts[i], lo, hi, pts[j]] {
            if out.last() != Some(&p) {
                out.push(p);
            }
        }
        i = j + 1;
    }
    out
}

/// The overlap to zoom onto and the window: the first overlap shorter than 1% of the run, seen
/// from just before the latest fault, grant or expiry that precedes it.
fn zoom_window(tl: &Timeline) -> Option<(usize, i64, i64)> {
    let run = tl.end.ns().max(1) as i128;
    let (i, o) = tl
        .overlaps
        .iter()
        .enumerate()
        .find(|(_, o)| ((o.end.ns() - o.start.ns()) as i128) * 100 < run)?;
    let (s, e) = (o.start.ns(), o.end.ns());
    let len = (e - s).max(1);
    let lookback = (20 * len).max(5_000_000);
    let mut events: Vec<i64> = Vec::new();
    for g in &tl.grants {
        events.extend([g.start.ns(), g.until.ns()]);
    }
    for p in &tl.pauses {
        events.extend([p.span.start.ns(), p.span.end.ns()]);
    }
    for d in &tl.down {
        events.extend([d.start.ns(), d.end.ns()]);
    }
    for c in &tl.cuts {
        events.extend([c.start.ns(), c.end.ns()]);
    }
    events.extend(tl.clock_steps.iter().map(|x| x.0.ns()));
    events.extend(tl.drift_changes.iter().map(|x| x.0.ns()));
    events.extend(tl.restarts.iter().map(|x| x.0.ns()));
    let cause = events
        .into_iter()
        .filter(|&t| t < s && t >= s - lookback)
        .max();
    let mut lo = s - 2 * len;
    if let Some(c) = cause {
        lo = lo.min(c - (len / 2).max((s - c) / 4));
    }
    let lo = lo.max(0);
    let hi = (e + len.max((e - lo) / 6)).min(tl.end.ns().max(e));
    Some((i, lo, hi))
}

/// A legend entry's swatch.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Swatch {
    Tokens,
    Hatched,
    Fill(RGBAColor),
    Band,
    Mark(MarkKind),
    Line(Rgb, bool),
    Marker(Rgb),
}

/// The legend entries that apply to `runs`.
pub(crate) fn legend_items(runs: &[&RunView], clock: bool) -> Vec<(Swatch, String)> {
    let any = |f: &dyn Fn(&Timeline) -> bool| runs.iter().any(|r| f(r.tl));
    let mut items = vec![(
        Swatch::Tokens,
        "belief / grant (colour = fencing token)".to_string(),
    )];
    if any(&|tl| tl.read_beliefs.iter().any(|v| !v.is_empty())) {
        items.push((
            Swatch::Tokens,
            "thin bar under it: read authority (lease reads)".to_string(),
        ));
    }
    if any(&|tl| {
        tl.beliefs
            .iter()
            .chain(&tl.read_beliefs)
            .flatten()
            .any(|p| !p.running)
    }) {
        items.push((
            Swatch::Hatched,
            "believes while not running (paused)".into(),
        ));
    }
    if any(&|tl| !tl.overlaps.is_empty()) {
        items.push((Swatch::Band, "overlap: two nodes believe at once".into()));
    }
    if any(&|tl| tl.pauses.iter().any(|p| p.kind == PauseKind::Gc)) {
        items.push((Swatch::Fill(solid(GC_RGB)), "GC pause".into()));
    }
    if any(&|tl| {
        tl.pauses
            .iter()
            .any(|p| p.kind == PauseKind::VmFreeze && !p.stall)
    }) {
        items.push((Swatch::Fill(solid(VM_RGB)), "VM freeze".into()));
    }
    if any(&|tl| tl.pauses.iter().any(|p| p.stall)) {
        items.push((
            Swatch::Fill(solid(STALL_RGB)),
            "VM freeze, clock stalled".into(),
        ));
    }
    if any(&|tl| !tl.down.is_empty()) {
        items.push((Swatch::Fill(solid(DOWN_RGB)), "crashed".into()));
    }
    if any(&|tl| !tl.restarts.is_empty()) {
        items.push((Swatch::Marker(RESTART_RGB), "restart".into()));
    }
    if any(&|tl| tl.cuts.iter().any(|c| c.one_way)) {
        items.push((
            Swatch::Fill(solid(CUT_RGB)),
            "one-way cut (sender's row)".into(),
        ));
    }
    if any(&|tl| tl.cuts.iter().any(|c| !c.one_way)) {
        items.push((
            Swatch::Fill(solid(CUT_RGB)),
            "partition (cut-off side)".into(),
        ));
    }
    if any(&|tl| !tl.cuts.is_empty()) {
        items.push((
            Swatch::Fill(solid(CUT_OTHER_RGB)),
            "cut (other side)".into(),
        ));
    }
    if any(&|tl| !tl.clock_steps.is_empty()) {
        items.push((Swatch::Marker(STEP_RGB), "wall clock step".into()));
    }
    if any(&|tl| !tl.drift_changes.is_empty()) {
        items.push((Swatch::Marker(DRIFT_RGB), "drift change".into()));
    }
    for k in HARM_KINDS {
        if runs
            .iter()
            .any(|r| r.lays.iter().any(|l| l.marks.iter().any(|m| m.0 == k)))
        {
            items.push((Swatch::Mark(k), mark_name(k).to_string()));
        }
    }
    if clock {
        items.push((
            Swatch::Line(MONO_RGB, false),
            "monotonic clock error".into(),
        ));
        if any(&wall_differs) {
            items.push((Swatch::Line(WALL_RGB, true), "wall clock error".into()));
        }
    }
    items
}

const LEGEND_LINE_H: i32 = 26;

/// Lays out the legend in lines across the chart: each item's (line, x).
fn legend_layout(items: &[(Swatch, String)], width: i32) -> Vec<(i32, i32)> {
    let mut out = Vec::new();
    let (mut line, mut x) = (0, 14);
    for (_, label) in items {
        let w = 34 + text_width(label, 14.0, false) + 24;
        if x + w > width - 14 && x > 14 {
            line += 1;
            x = 14;
        }
        out.push((line, x));
        x += w;
    }
    out
}

/// The legend's height.
pub(crate) fn legend_height(items: &[(Swatch, String)], width: i32) -> i32 {
    let lines = legend_layout(items, width)
        .last()
        .map_or(0, |&(l, _)| l + 1);
    lines * LEGEND_LINE_H + 16
}

/// Draws the legend from `top`.
pub(crate) fn draw_legend(sc: &mut Scene, items: &[(Swatch, String)], width: i32, top: i32) {
    sc.rect(14, top, width - 14, top + 1, rgb(200, 200, 200));
    for ((swatch, label), (line, x)) in items.iter().zip(legend_layout(items, width)) {
        let yc = top + 16 + line * LEGEND_LINE_H;
        let (sx0, sy0, sx1, sy1) = (x, yc - 7, x + 28, yc + 7);
        match *swatch {
            Swatch::Tokens => {
                for i in 0..4 {
                    sc.rect(
                        sx0 + i * 7,
                        sy0,
                        sx0 + i * 7 + 7,
                        sy1,
                        solid(TOKEN_COLORS[i as usize]),
                    );
                }
            }
            Swatch::Hatched => {
                let (r, g, b) = TOKEN_COLORS[0];
                sc.rect(sx0, sy0, sx1, sy1, rgba(r, g, b, 0.28));
                sc.hatch(sx0, sy0, sx1, sy1, 7, solid(TOKEN_COLORS[0]), 2);
                sc.frame(sx0, sy0, sx1 - 1, sy1 - 1, solid(TOKEN_COLORS[0]), 1);
            }
            Swatch::Fill(c) => sc.rect(sx0, sy0, sx1, sy1, c),
            Swatch::Band => {
                // The band's colour over white, opaque: the bands' own fill is theirs alone.
                let (r, g, b) = OVERLAP_RGB;
                let mix = |c: u8| (255.0 - BAND_ALPHA * (255.0 - c as f64)).round() as u8;
                sc.rect(sx0, sy0 - 3, sx1, sy1 + 3, rgb(mix(r), mix(g), mix(b)));
            }
            Swatch::Mark(k) => {
                draw_mark(sc, k, sx0 + 6, yc);
                draw_mark(sc, k, sx0 + 20, yc);
            }
            Swatch::Line(c, dashed) => {
                if dashed {
                    sc.dashed(vec![(sx0, yc), (sx1, yc)], solid(c), 2, 7, 4);
                } else {
                    sc.line(vec![(sx0, yc), (sx1, yc)], solid(c), 2);
                }
            }
            Swatch::Marker(c) => {
                sc.polygon(
                    vec![(sx0 + 9, sy0), (sx0 + 19, sy0), (sx0 + 14, sy0 + 8)],
                    solid(c),
                );
                sc.rect(sx0 + 13, sy0 + 8, sx0 + 15, sy1 + 2, solid(c));
            }
        }
        sc.text(x + 34, yc, label.clone(), 14.0, false, TEXT, Anchor::Left);
    }
}

/// The verdict's word and colour.
pub(crate) fn verdict_style(s: &Summary) -> (&'static str, RGBAColor) {
    let v = Verdict::of(s);
    let c = match v {
        Verdict::Overlap => rgb(200, 0, 0),
        Verdict::Harm => rgb(210, 100, 0),
        Verdict::Safe => rgb(30, 130, 50),
    };
    (v.word(), c)
}

/// The figures of a run in one line.
pub(crate) fn run_figures(s: &Summary) -> String {
    let mut parts = Vec::new();
    let o = &s.overlap;
    parts.push(match o.count {
        0 => "no overlap".to_string(),
        1 => format!("1 overlap of {}", format_ns(o.max_ns)),
        n => format!(
            "{n} overlaps, total {}, longest {}",
            format_ns(o.total_ns),
            format_ns(o.max_ns)
        ),
    });
    for (n, what) in [
        (s.zombie_actions, "zombie actions"),
        (s.stale_reads, "stale reads"),
        (s.unsafe_writes, "unsafe writes"),
        (s.fenced_writes, "fenced writes"),
    ] {
        if n > 0 {
            parts.push(format!("{n} {what}"));
        }
    }
    parts.push(format!("availability {:.2}%", s.availability * 100.0));
    parts.join(", ")
}

/// Draws a title line: `parts` side by side, each with its colour, bold or not, cut to fit.
pub(crate) fn draw_title_line(
    sc: &mut Scene,
    y: i32,
    size: f64,
    parts: &[(String, RGBAColor, bool)],
    max_x: i32,
) {
    let mut x = 14;
    for (text, color, bold) in parts {
        let room = max_x - x;
        if room < 40 {
            break;
        }
        let t = fit_text(text, size, *bold, room);
        let w = text_width(&t, size, *bold);
        sc.text(x, y, t, size, *bold, *color, Anchor::Left);
        x += w;
    }
}

/// The height of the overlap label strip above a panel: room for two lines of labels when there
/// are several overlaps in the window, one for one, a gap for none.
fn label_strip_h(rv: &RunView, xm: &XMap) -> i32 {
    let seen = rv
        .tl
        .overlaps
        .iter()
        .filter(|o| o.end.ns() >= xm.t0 && o.start.ns() <= xm.t1)
        .take(2)
        .count();
    [8, 20, 34][seen]
}

/// Draws one panel of rows (and clock lanes if `clock`) for the window of `xm` from `top`, with
/// its overlap labels above and bands over all of it; returns the y below the rows and lanes.
#[allow(clippy::too_many_arguments)]
pub(crate) fn draw_panel(
    sc: &mut Scene,
    rv: &RunView,
    xm: &XMap,
    ticks: &Ticks,
    top: i32,
    clock: bool,
    band_fill: Rgb,
    zoomed: Option<usize>,
) -> i32 {
    let rows_top = top + label_strip_h(rv, xm);
    let rows_bottom = rows_top + rv.lays.iter().map(|l| l.height).sum::<i32>();
    let bottom = rows_bottom + if clock { 6 + lanes_height(rv) } else { 0 };
    draw_grid(sc, xm, ticks, rows_top, bottom);
    sc.rect(xm.x0, rows_top - 1, xm.x1, rows_top, rgb(205, 205, 205));
    let mut y = rows_top;
    for node in 0..rv.n() {
        draw_row(sc, rv, node, xm, y, node % 2 == 1);
        y += rv.lays[node].height;
    }
    if clock {
        draw_clock_lanes(sc, rv, xm, rows_bottom + 6);
    }
    let bands = overlap_bands(rv, xm);
    draw_bands(sc, &bands, rows_top, bottom, band_fill);
    draw_overlap_labels(sc, &bands, top, xm, zoomed);
    bottom
}

/// The height of a panel drawn by [`draw_panel`], without its axis.
pub(crate) fn panel_height(rv: &RunView, xm: &XMap, clock: bool) -> i32 {
    label_strip_h(rv, xm)
        + rv.lays.iter().map(|l| l.height).sum::<i32>()
        + if clock { 6 + lanes_height(rv) } else { 0 }
}

pub(crate) const AXIS_H: i32 = 52;
const TITLE_H: i32 = 84;
const ZOOM_HEADING_H: i32 = 44;

/// The timeline chart of one run: `tl` as recorded by [`crate::run_recorded`], `s` its summary.
pub fn timeline_chart(tl: &Timeline, s: &Summary) -> ChartFiles {
    timeline_scene(tl, s).render()
}

/// The chart's display list (what [`timeline_chart`] renders).
pub fn timeline_scene(tl: &Timeline, s: &Summary) -> Scene {
    super::font::ensure_registered();
    let rv = RunView::new(tl, s);
    let width = WIDTH as i32;
    let x0 = left_margin(&[&rv]);
    let x1 = width - RIGHT_MARGIN;
    let end = tl.end.ns().max(1);
    let main = XMap {
        x0,
        x1,
        t0: 0,
        t1: end,
    };
    let zoom = zoom_window(tl);
    let zm = zoom.map(|(_, lo, hi)| XMap {
        x0,
        x1,
        t0: lo,
        t1: hi,
    });
    let items = legend_items(&[&rv], true);
    let n = rv.n();
    let mut height = TITLE_H + panel_height(&rv, &main, true) + AXIS_H;
    if let Some(zm) = &zm {
        height += 10 + ZOOM_HEADING_H + panel_height(&rv, zm, true) + AXIS_H;
    }
    height += 8 + legend_height(&items, width);
    let mut sc = Scene::new(WIDTH, height as u32);

    // Title: scenario, strategy, verdict; then the run's figures.
    let (word, vc) = verdict_style(s);
    draw_title_line(
        &mut sc,
        26,
        26.0,
        &[
            (format!("{}   ", s.scenario), TEXT, true),
            (word.to_string(), vc, true),
            (format!("   {}", s.strategy), TEXT, false),
        ],
        width - 14,
    );
    let mut sub = format!(
        "seed {}, {} run, {} nodes: {}",
        s.seed,
        format_ns(s.duration_ns),
        n,
        run_figures(s)
    );
    if s.truncated {
        sub.push_str(", TRUNCATED at max_events");
    }
    draw_title_line(&mut sc, 62, 16.0, &[(sub, MUTED, false)], width - 14);

    let ticks = axis_ticks(&main);
    let mut y = TITLE_H;
    let bottom = draw_panel(
        &mut sc,
        &rv,
        &main,
        &ticks,
        y,
        true,
        OVERLAP_RGB,
        zoom.map(|z| z.0),
    );
    y = draw_axis(&mut sc, &main, &ticks, bottom);

    if let (Some((i, lo, hi)), Some(zm)) = (zoom, zm) {
        y += 10;
        let o = &tl.overlaps[i];
        let nodes: Vec<&str> = o
            .nodes
            .iter()
            .map(|&k| tl.node_names.get(k).map_or("?", String::as_str))
            .collect();
        let heading = format!(
            "{ZOOM_HEADING} {} of {}: {} to {} ({}), nodes {}; window {} to {}",
            i + 1,
            tl.overlaps.len(),
            format_ns(o.start.ns()),
            format_ns(o.end.ns()),
            format_ns(o.end.ns() - o.start.ns()),
            nodes.join(", "),
            format_ns(lo),
            format_ns(hi),
        );
        sc.rect(14, y, width - 14, y + 1, rgb(170, 170, 170));
        draw_title_line(&mut sc, y + 24, 18.0, &[(heading, TEXT, true)], width - 14);
        y += ZOOM_HEADING_H;
        let zticks = axis_ticks(&zm);
        let bottom = draw_panel(&mut sc, &rv, &zm, &zticks, y, true, ZOOM_OVERLAP_RGB, None);
        y = draw_axis(&mut sc, &zm, &zticks, bottom);
    }
    draw_legend(&mut sc, &items, width, y + 8);
    sc
}
