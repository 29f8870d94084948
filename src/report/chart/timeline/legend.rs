//! The legend under a timeline or compare chart: the entries that apply and their swatches.

use super::layout::*;
use super::palette::*;
use crate::report::chart::scene::{rgb, rgba, text_width, Anchor, Scene};
use crate::scenario::{PauseKind, Thread};
use crate::trace::clock_error::wall_differs;
use crate::trace::timeline::{MarkKind, Timeline};
use plotters::style::RGBAColor;

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

/// The legend entries of stalled loops and disks that apply to `runs`.
fn stall_items(runs: &[&RunView], items: &mut Vec<(Swatch, String)>) {
    let any = |f: &dyn Fn(&Timeline) -> bool| runs.iter().any(|r| f(r.tl));
    for (thread, c) in [
        (Thread::Renewal, RENEWAL_STALL_RGB),
        (Thread::Worker, WORKER_STALL_RGB),
    ] {
        if any(&|tl| tl.thread_stalls.iter().any(|s| s.thread == thread)) {
            let what = format!("{} loop stalled", thread.name().to_lowercase());
            items.push((Swatch::Fill(solid(c)), what));
        }
    }
    if any(&|tl| !tl.disk_stalls.is_empty()) {
        items.push((Swatch::Fill(solid(DISK_STALL_RGB)), "disk stalled".into()));
    }
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
    stall_items(runs, &mut items);
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
        let beyond: u64 = runs.iter().map(|r| r.tl.clock_steps_beyond).sum();
        let label = if beyond == 0 {
            "wall clock step".into()
        } else {
            format!(
                "wall clock step (the first {} drawn, {beyond} more not)",
                crate::trace::timeline::EXACT_MARKS
            )
        };
        items.push((Swatch::Marker(STEP_RGB), label));
    }
    if let Some(cut) = runs.iter().filter_map(|r| r.tl.spans_cut_at).min() {
        items.push((
            Swatch::Marker(STEP_RGB),
            format!(
                "more than {} grants, beliefs or overlaps: those from {} on not drawn",
                crate::trace::timeline::MAX_SPANS,
                crate::time::Dur::from_ns(cut.ns())
            ),
        ));
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

pub(crate) const LEGEND_LINE_H: i32 = 26;

/// Lays out the legend in lines across the chart: each item's (line, x).
pub(crate) fn legend_layout(items: &[(Swatch, String)], width: i32) -> Vec<(i32, i32)> {
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
                // Drawn as a band is, in a fill of its own: the bands' fill is theirs alone.
                draw_band(sc, sx0, sx1, sy0 - 3, sy1 + 3, LEGEND_OVERLAP_RGB);
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
