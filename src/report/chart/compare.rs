//! The comparison chart: several runs of one fault schedule (typically one per strategy) as
//! groups of rows on a shared true-time axis, so their beliefs and overlaps line up.
//!
//! A compact page: each group is headed by a one-line strip (its label, cut to what differs
//! between the strategies compared ([`super::labels`]), its verdict, overlap, availability and
//! harm) and has the same rows as a timeline chart's main panel (beliefs by token, grants,
//! faults, harm marks, hatched overlap bands). Runs whose rows and figures are identical are
//! drawn once and named together (`mode: LogLease, DeferCommit: identical`). The time axis is
//! drawn above the first group and under the last.
//! Under the groups, the clock-error lanes: once for all runs when their clocks are the same
//! (the usual case: one fault schedule, one seed), else in each group. When an overlap is too
//! short to see at the scale of the run, a zoom section shows every group in one window (the
//! first run's zoom window, else the next run's), on an axis read as an offset, drawn above and
//! below it too. Layout only;
//! [`super::scene`] renders it.

use super::labels::{group_name, short_labels};
use super::scene::{rgb, Anchor, Scene};
use super::timeline::{
    axis_ticks, draw_axis, draw_axis_titled, draw_clock_lanes, draw_grid, draw_legend, draw_panel,
    draw_title_line, draw_zoom_heading, lanes_height, left_margin, legend_height, legend_items,
    offset_axis_title, offset_ticks, panel_height, run_figures, verdict_style, zoom_heading,
    zoom_map, RunView, XMap, AXIS_H, MUTED, OVERLAP_RGB, RIGHT_MARGIN, TEXT, WIDTH, ZOOM_HEADING_H,
    ZOOM_OVERLAP_RGB,
};
use super::{ChartFiles, Ticks};
use crate::compare::OWN;
use crate::outcome::Summary;
use crate::time::format_ns;
use crate::trace::timeline::Timeline;
use crate::trace::zoom::{shared_zoom_window, ZoomWindow};

const TITLE_H: i32 = 78;
/// The time axis drawn above the first group.
const TOP_AXIS_H: i32 = 26;
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
    /// The runs drawn, as groups of identical ones (indices into the runs), with the name of
    /// each group.
    groups: Vec<(Vec<usize>, String)>,
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
        let groups: i32 = self
            .groups
            .iter()
            .map(|(g, _)| self.group_h(&views[g[0]], xm))
            .sum();
        groups + self.shared_lanes_h(views) + AXIS_H
    }
}

/// A run's figures in one line: overlap, availability, harm (`overlap: none   availability:
/// 74.96%   harm: none`).
pub fn strip_figures(s: &Summary) -> String {
    let o = &s.overlap;
    let overlap = match o.count {
        0 => "none".to_string(),
        1 => format!("1, {} long", format_ns(o.max_ns)),
        n => format!(
            "{n}, total {}, longest {}",
            format_ns(o.total_ns),
            format_ns(o.max_ns)
        ),
    };
    let mut harm: Vec<String> = Vec::new();
    for (n, what) in [
        (s.zombie_actions, "zombie actions"),
        (s.stale_reads, "stale reads"),
        (s.unsafe_writes, "unsafe writes"),
    ] {
        if n > 0 {
            harm.push(format!("{n} {what}"));
        }
    }
    let harm = if harm.is_empty() {
        "none".to_string()
    } else {
        harm.join(", ")
    };
    format!(
        "overlap: {overlap}   availability: {:.2}%   harm: {harm}",
        s.availability * 100.0
    )
}

/// The runs grouped where their rows, verdict and figures are identical (drawn the same in
/// the window of `xm` and, if there is one, of `zm`), in the order of their first run, each
/// named by its members' short labels ([`group_name`]).
fn identical_groups(
    runs: &[(String, Timeline, Summary)],
    views: &[RunView],
    short: &[String],
    plan: &Plan,
    zm: Option<&XMap>,
) -> Vec<(Vec<usize>, String)> {
    let look = |k: usize| {
        let mut sc = Scene::new(WIDTH, 1);
        for xm in std::iter::once(&plan.xm).chain(zm) {
            let ticks = axis_ticks(xm);
            draw_panel(
                &mut sc,
                &views[k],
                xm,
                &ticks,
                0,
                !plan.shared_clocks,
                OVERLAP_RGB,
                None,
            );
        }
        let s = &runs[k].2;
        format!("{:?} {} {}", sc.shapes, verdict_style(s).0, run_figures(s))
    };
    let looks: Vec<String> = (0..runs.len()).map(look).collect();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for k in 0..runs.len() {
        match groups.iter_mut().find(|g| looks[g[0]] == looks[k]) {
            Some(g) => g.push(k),
            None => groups.push(vec![k]),
        }
    }
    groups
        .into_iter()
        .map(|g| {
            let names: Vec<&str> = g.iter().map(|&k| short[k].as_str()).collect();
            let name = group_name(&names);
            (g, name)
        })
        .collect()
}

/// The chart's display list (what [`compare_chart`] renders).
pub fn compare_scene(title: &str, runs: &[(String, Timeline, Summary)]) -> Scene {
    super::font::ensure_registered();
    let views: Vec<RunView> = runs.iter().map(|(_, tl, s)| RunView::new(tl, s)).collect();
    let refs: Vec<&RunView> = views.iter().collect();
    let width = WIDTH as i32;
    let x0 = left_margin(&refs);
    let end = runs.iter().map(|r| r.1.end.ns()).max().unwrap_or(0).max(1);
    let mut plan = Plan {
        xm: XMap {
            x0,
            x1: width - RIGHT_MARGIN,
            t0: 0,
            t1: end,
        },
        shared_clocks: clocks_shared(runs),
        zoom: shared_zoom_window(runs.iter().map(|r| &r.1)),
        groups: Vec::new(),
    };
    let zm = plan.zoom.map(|(_, z)| zoom_map(&plan.xm, &z));
    let labels: Vec<String> = runs.iter().map(|r| r.0.clone()).collect();
    let short = short_labels(&labels, OWN);
    plan.groups = identical_groups(runs, &views, &short, &plan, zm.as_ref());
    let items = legend_items(&refs, true);
    let mut height = TITLE_H + TOP_AXIS_H + plan.section_h(&views, &plan.xm);
    if let Some(zm) = &zm {
        height += 10 + ZOOM_HEADING_H + TOP_AXIS_H + plan.section_h(&views, zm);
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
    let cut = if short != labels {
        " Labels show what differs between the strategies; compare.md has each in full."
    } else {
        ""
    };
    let sub = format!(
        "{} runs of the same fault schedule, one group of rows each. Red hatched bands: overlaps (two nodes believe at once).{cut}",
        runs.len()
    );
    draw_title_line(&mut sc, 56, 16.0, &[(sub, MUTED, false)], width - 14);

    let ticks = axis_ticks(&plan.xm);
    let whole_title = format!("true time ({})", ticks.unit.name);
    let top = draw_top_axis(&mut sc, &plan.xm, &ticks, TITLE_H, &whole_title);
    let y = draw_section(
        &mut sc,
        &plan,
        runs,
        &views,
        &plan.xm,
        &ticks,
        top,
        OVERLAP_RGB,
    );
    let mut y = draw_axis(&mut sc, &plan.xm, &ticks, y);
    if let (Some((k, z)), Some(zm)) = (plan.zoom, zm) {
        let heading = format!("{} (in {})", zoom_heading(&runs[k].1, &z), short[k]);
        y = draw_zoom_heading(&mut sc, &heading, y + 10, width);
        let (zticks, origin_ns) = offset_ticks(&zm);
        let title = offset_axis_title(&zticks, origin_ns);
        y = draw_top_axis(&mut sc, &zm, &zticks, y, &title);
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
        y = draw_axis_titled(&mut sc, &zm, &zticks, y, &title);
    }
    draw_legend(&mut sc, &items, width, y + 8);
    sc
}

/// Draws the time axis above the plots at `y`: `title` at the left, the tick labels, and
/// the ticks down to the axis line; returns the y under it.
fn draw_top_axis(sc: &mut Scene, xm: &XMap, ticks: &Ticks, y: i32, title: &str) -> i32 {
    let line_y = y + TOP_AXIS_H - 4;
    sc.text(
        14,
        y + 10,
        title.to_string(),
        14.0,
        false,
        MUTED,
        Anchor::Left,
    );
    for (&t, label) in ticks.at.iter().zip(&ticks.labels) {
        if let Some(x) = xm.x(t) {
            sc.rect(x, line_y - 6, x + 1, line_y, rgb(60, 60, 60));
            sc.text(x, y + 10, label.clone(), 14.0, false, TEXT, Anchor::Center);
        }
    }
    sc.rect(xm.x0, line_y, xm.x1 + 1, line_y + 1, rgb(60, 60, 60));
    y + TOP_AXIS_H
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
    for (members, name) in &plan.groups {
        let (s, rv) = (&runs[members[0]].2, &views[members[0]]);
        sc.rect(14, y, width - 14, y + 2, rgb(150, 150, 150));
        let (word, vc) = verdict_style(s);
        draw_title_line(
            sc,
            y + 17,
            18.0,
            &[
                (name.clone(), TEXT, true),
                ("   ".to_string(), TEXT, false),
                (word.to_string(), vc, true),
                (format!("   {}", strip_figures(s)), MUTED, false),
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
