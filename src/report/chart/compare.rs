//! The comparison chart: several runs of one fault schedule (typically one per strategy) as
//! groups of rows on a shared true-time axis, so their beliefs and overlaps line up.
//!
//! Each group is headed by its label, verdict and figures, and has the same rows as a timeline
//! chart's main panel (beliefs by token, grants, faults, harm marks, hatched overlap bands).
//! Under the groups, the clock-error lanes: once for all runs when their clocks are the same
//! (the usual case: one fault schedule, one seed), else in each group. When an overlap is too
//! short to see at the scale of the run, a zoom section shows every group in one window (the
//! first run's zoom window, else the next run's), on an axis read as an offset. Layout only;
//! [`super::scene`] renders it.

use super::scene::{rgb, Anchor, Scene};
use super::timeline::{
    axis_ticks, draw_axis, draw_axis_titled, draw_clock_lanes, draw_grid, draw_legend, draw_panel,
    draw_title_line, draw_zoom_heading, lanes_height, left_margin, legend_height, legend_items,
    offset_axis_title, offset_ticks, panel_height, run_figures, verdict_style, zoom_heading,
    zoom_map, RunView, XMap, AXIS_H, MUTED, OVERLAP_RGB, RIGHT_MARGIN, TEXT, WIDTH, ZOOM_HEADING_H,
    ZOOM_OVERLAP_RGB,
};
use super::{ChartFiles, Ticks};
use crate::outcome::Summary;
use crate::trace::timeline::Timeline;
use crate::trace::zoom::{shared_zoom_window, ZoomWindow};

const TITLE_H: i32 = 78;
const GROUP_HEADING_H: i32 = 30;
const GROUP_GAP: i32 = 14;
/// The note above clock lanes drawn once for all runs.
const CLOCK_NOTE_H: i32 = 24;
/// The note above the shared clock lanes.
pub const SHARED_CLOCKS_NOTE: &str =
    "The clocks are the same in every run (one fault schedule): one set of lanes for all.";

/// The comparison chart of `runs` (label, timeline, summary), in the order given, under `title`.
pub fn compare_chart(title: &str, runs: &[(String, Timeline, Summary)]) -> ChartFiles {
    compare_scene(title, runs).render()
}

/// Whether every run's clocks read the same: same error breakpoints and drift per node, so one
/// set of lanes stands for all.
fn clocks_shared(runs: &[(String, Timeline, Summary)]) -> bool {
    runs.windows(2).all(|w| {
        let (a, b) = (&w[0], &w[1]);
        a.1.node_names == b.1.node_names
            && a.1.clock_error == b.1.clock_error
            && a.1.end == b.1.end
            && a.2.drift_ppm == b.2.drift_ppm
            && stalls(&a.1) == stalls(&b.1)
    })
}

/// The stalled VM freezes of a run (they bend the clock-error line past its last breakpoint).
fn stalls(tl: &Timeline) -> Vec<(usize, i64, i64)> {
    tl.pauses
        .iter()
        .filter(|p| p.stall)
        .map(|p| (p.span.node, p.span.start.ns(), p.span.end.ns()))
        .collect()
}

/// How the chart is laid out: the shared pixel maps and which sections it has.
struct Plan {
    xm: XMap,
    shared_clocks: bool,
    zoom: Option<(usize, ZoomWindow)>,
}

impl Plan {
    /// The height of one group's rows (and lanes, when they are per group) in the window `xm`.
    fn group_h(&self, rv: &RunView, xm: &XMap) -> i32 {
        GROUP_HEADING_H + panel_height(rv, xm, !self.shared_clocks) + GROUP_GAP
    }

    /// The height of the shared clock lanes with their note, if they are shared.
    fn shared_lanes_h(&self, views: &[RunView]) -> i32 {
        match views.first() {
            Some(rv) if self.shared_clocks => CLOCK_NOTE_H + lanes_height(rv) + 6,
            _ => 0,
        }
    }

    /// The height of one section (the whole run, or the zoom) in the window `xm`, with its axis.
    fn section_h(&self, views: &[RunView], xm: &XMap) -> i32 {
        let groups: i32 = views.iter().map(|rv| self.group_h(rv, xm)).sum();
        groups + self.shared_lanes_h(views) + AXIS_H
    }
}

/// The chart's display list (what [`compare_chart`] renders).
pub fn compare_scene(title: &str, runs: &[(String, Timeline, Summary)]) -> Scene {
    super::font::ensure_registered();
    let views: Vec<RunView> = runs.iter().map(|(_, tl, s)| RunView::new(tl, s)).collect();
    let refs: Vec<&RunView> = views.iter().collect();
    let width = WIDTH as i32;
    let x0 = left_margin(&refs);
    let end = runs.iter().map(|r| r.1.end.ns()).max().unwrap_or(0).max(1);
    let plan = Plan {
        xm: XMap {
            x0,
            x1: width - RIGHT_MARGIN,
            t0: 0,
            t1: end,
        },
        shared_clocks: clocks_shared(runs),
        zoom: shared_zoom_window(runs.iter().map(|r| &r.1)),
    };
    let zm = plan.zoom.map(|(_, z)| zoom_map(&plan.xm, &z));
    let items = legend_items(&refs, true);
    let mut height = TITLE_H + plan.section_h(&views, &plan.xm);
    if let Some(zm) = &zm {
        height += 10 + ZOOM_HEADING_H + plan.section_h(&views, zm);
    }
    height += 8 + legend_height(&items, width);
    let mut sc = Scene::new(WIDTH, height as u32);

    draw_title_line(
        &mut sc,
        26,
        24.0,
        &[(title.to_string(), TEXT, true)],
        width - 14,
    );
    let sub = format!(
        "{} runs of the same fault schedule, one group of rows each. Red hatched bands: overlaps (two nodes believe at once).",
        runs.len()
    );
    draw_title_line(&mut sc, 56, 16.0, &[(sub, MUTED, false)], width - 14);

    let ticks = axis_ticks(&plan.xm);
    let y = draw_section(
        &mut sc,
        &plan,
        runs,
        &views,
        &plan.xm,
        &ticks,
        TITLE_H,
        OVERLAP_RGB,
    );
    let mut y = draw_axis(&mut sc, &plan.xm, &ticks, y);
    if let (Some((k, z)), Some(zm)) = (plan.zoom, zm) {
        let heading = format!("{} (in {})", zoom_heading(&runs[k].1, &z), runs[k].0);
        y = draw_zoom_heading(&mut sc, &heading, y + 10, width);
        let (zticks, origin_ns) = offset_ticks(&zm);
        y = draw_section(
            &mut sc,
            &plan,
            runs,
            &views,
            &zm,
            &zticks,
            y,
            ZOOM_OVERLAP_RGB,
        );
        let title = offset_axis_title(&zticks, origin_ns);
        y = draw_axis_titled(&mut sc, &zm, &zticks, y, &title);
    }
    draw_legend(&mut sc, &items, width, y + 8);
    sc
}

/// Draws every group in the window of `xm` from `top`, then the shared clock lanes if the
/// clocks are shared; returns the y where the axis goes.
#[allow(clippy::too_many_arguments)]
fn draw_section(
    sc: &mut Scene,
    plan: &Plan,
    runs: &[(String, Timeline, Summary)],
    views: &[RunView],
    xm: &XMap,
    ticks: &Ticks,
    top: i32,
    band_fill: (u8, u8, u8),
) -> i32 {
    let width = WIDTH as i32;
    let mut y = top;
    for ((label, _, s), rv) in runs.iter().zip(views) {
        sc.rect(14, y, width - 14, y + 2, rgb(150, 150, 150));
        let (word, vc) = verdict_style(s);
        draw_title_line(
            sc,
            y + 17,
            18.0,
            &[
                (label.clone(), TEXT, true),
                ("   ".to_string(), TEXT, false),
                (word.to_string(), vc, true),
                (format!("   {}", run_figures(s)), MUTED, false),
            ],
            width - 14,
        );
        y += GROUP_HEADING_H;
        let clock = !plan.shared_clocks;
        y = draw_panel(sc, rv, xm, ticks, y, clock, band_fill, None) + GROUP_GAP;
    }
    y -= GROUP_GAP - 2;
    if let Some(rv) = views.first().filter(|_| plan.shared_clocks) {
        sc.rect(14, y, width - 14, y + 2, rgb(150, 150, 150));
        sc.text(
            14,
            y + 14,
            SHARED_CLOCKS_NOTE,
            14.0,
            false,
            MUTED,
            Anchor::Left,
        );
        y += CLOCK_NOTE_H;
        let bottom = y + lanes_height(rv);
        draw_grid(sc, xm, ticks, y, bottom);
        draw_clock_lanes(sc, rv, xm, y);
        y = bottom + 6;
    }
    y
}
