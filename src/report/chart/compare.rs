//! The comparison chart: several runs of one fault schedule (typically one per strategy) as
//! groups of rows on a shared true-time axis, so their beliefs and overlaps line up.
//!
//! Each group is headed by its label, verdict and figures, and has the same rows as a timeline
//! chart's main panel (beliefs by token, grants, faults, harm marks, red overlap bands) without
//! the clock lanes. Layout only; [`super::scene`] renders it.

use super::scene::{rgb, Scene};
use super::timeline::{
    axis_ticks, draw_axis, draw_legend, draw_panel, draw_title_line, left_margin, legend_height,
    legend_items, panel_height, run_figures, verdict_style, RunView, XMap, AXIS_H, MUTED,
    OVERLAP_RGB, RIGHT_MARGIN, TEXT, WIDTH,
};
use super::ChartFiles;
use crate::outcome::Summary;
use crate::trace::timeline::Timeline;

const TITLE_H: i32 = 78;
const GROUP_HEADING_H: i32 = 30;
const GROUP_GAP: i32 = 14;

/// The comparison chart of `runs` (label, timeline, summary), in the order given, under `title`.
pub fn compare_chart(title: &str, runs: &[(String, Timeline, Summary)]) -> ChartFiles {
    compare_scene(title, runs).render()
}

/// The chart's display list (what [`compare_chart`] renders).
pub fn compare_scene(title: &str, runs: &[(String, Timeline, Summary)]) -> Scene {
    super::font::ensure_registered();
    let views: Vec<RunView> = runs.iter().map(|(_, tl, s)| RunView::new(tl, s)).collect();
    let refs: Vec<&RunView> = views.iter().collect();
    let width = WIDTH as i32;
    let x0 = left_margin(&refs);
    let x1 = width - RIGHT_MARGIN;
    let end = runs.iter().map(|r| r.1.end.ns()).max().unwrap_or(0).max(1);
    let xm = XMap {
        x0,
        x1,
        t0: 0,
        t1: end,
    };
    let items = legend_items(&refs, false);
    let groups: i32 = views
        .iter()
        .map(|rv| GROUP_HEADING_H + panel_height(rv, &xm, false) + GROUP_GAP)
        .sum();
    let height = TITLE_H + groups + AXIS_H + 8 + legend_height(&items, width);
    let mut sc = Scene::new(WIDTH, height as u32);

    draw_title_line(
        &mut sc,
        26,
        24.0,
        &[(title.to_string(), TEXT, true)],
        width - 14,
    );
    let sub = format!(
        "{} runs of the same fault schedule, one group of rows each. Red bands: overlaps (two nodes believe at once).",
        runs.len()
    );
    draw_title_line(&mut sc, 56, 16.0, &[(sub, MUTED, false)], width - 14);

    let ticks = axis_ticks(&xm);
    let mut y = TITLE_H;
    for ((label, _, s), rv) in runs.iter().zip(&views) {
        sc.rect(14, y, width - 14, y + 2, rgb(150, 150, 150));
        let (word, vc) = verdict_style(s);
        draw_title_line(
            &mut sc,
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
        y = draw_panel(&mut sc, rv, &xm, &ticks, y, false, OVERLAP_RGB, None) + GROUP_GAP;
    }
    y = draw_axis(&mut sc, &xm, &ticks, y - GROUP_GAP + 2);
    draw_legend(&mut sc, &items, width, y + 8);
    sc
}
