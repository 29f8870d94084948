//! The timeline chart of one run: true time across, one row per node, a clock-error lane
//! per node, and a zoom panel when an overlap is too short to see at the scale of the run.
//!
//! What a row shows: the node's belief intervals as bars coloured by fencing token (hatched and
//! lighter while the node is not running: "believes but is frozen"); on a grantor's row, what it
//! granted to whom and until when; pauses (GC, VM freeze, stalled VM freeze) and crashes shaded
//! over the row and named in its fault lane, a stalled loop of a live process (renewal or
//! worker) in that lane only; network cuts in a cut lane; clock steps, drift
//! changes and restarts as labelled markers; zombie actions, stale reads, unsafe and fenced
//! writes as marks (exact where the timeline kept them, density strips from its bins beyond),
//! with their count where a run of them holds more than it shows. Every overlap is one band
//! across all rows, hatched red with a red outline, labelled with its length.
//!
//! The number of shapes is bounded by the plot's width, never by the run's length or event
//! count: spans and marks narrower than a pixel are merged. This module only lays the chart out;
//! [`super::scene`] renders it. The parts, one job each: `palette` (colours, marks, the
//! overlap band), `layout` (the time-to-pixel map, row lanes, the run as drawn, axes),
//! `rows` (a node's row and the bands), `lanes` (clock-error lanes), `zoom` (the zoom
//! panel's heading and offset axis) and `legend`. What is analysis, not drawing, lives next
//! to the data: [`crate::trace::zoom`] chooses the zoom window, [`crate::trace::clock_error`]
//! derives the error series. [`super::compare`] draws its groups with the same parts.

use super::scene::{rgb, text_width, Anchor, Scene};
use super::{ChartFiles, Ticks};
use crate::outcome::Summary;
use crate::report::Verdict;
use crate::time::format_ns;
use crate::trace::timeline::Timeline;
use crate::trace::zoom::zoom_window;
use plotters::style::RGBAColor;

mod lanes;
mod layout;
mod legend;
mod palette;
mod rows;
mod zoom;

pub(crate) use lanes::{draw_clock_lanes, lanes_height};
pub(crate) use layout::{axis_ticks, draw_axis, draw_grid, left_margin, RunView, XMap};
pub(crate) use layout::{draw_axis_titled, fit_text};
pub(crate) use legend::{draw_legend, legend_height, legend_items, Swatch};
use palette::Rgb;
pub use palette::OVERLAP_FILL;
pub(crate) use palette::{MUTED, OVERLAP_RGB, TEXT, ZOOM_OVERLAP_RGB};
use rows::{draw_bands, draw_overlap_labels, draw_row, overlap_bands};
pub(crate) use zoom::{
    draw_zoom_heading, offset_axis_title, offset_ticks, zoom_heading, zoom_map, ZOOM_HEADING_H,
};

/// Width of every chart, in pixels.
pub const WIDTH: u32 = 1600;

/// The heading of the zoom panel starts with this.
pub const ZOOM_HEADING: &str = "Zoom on overlap";

pub(crate) const RIGHT_MARGIN: i32 = 36;
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
pub(crate) fn label_strip_h(rv: &RunView, xm: &XMap) -> i32 {
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
pub(crate) const TITLE_H: i32 = 84;

/// The timeline chart of one run: `tl` as recorded by [`crate::run_recorded`], `s` its summary.
pub fn timeline_chart(tl: &Timeline, s: &Summary) -> ChartFiles {
    timeline_scene(tl, s).render()
}

/// Rows of the canvas made for a run's chart before its size is known ([`timeline_canvas`]):
/// the canonical hour's chart has 665; a taller one grows it.
const CANVAS_ROWS: u32 = 720;

/// Memory for a run's timeline bitmap, touched now: made on another thread while the run is
/// simulated, and handed to [`Scene::png_on`].
pub fn timeline_canvas() -> Vec<u8> {
    super::scene::canvas(WIDTH, CANVAS_ROWS)
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
    let zm = zoom.map(|z| zoom_map(&main, &z));
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
        zoom.map(|z| z.overlap),
    );
    y = draw_axis(&mut sc, &main, &ticks, bottom);

    if let (Some(z), Some(zm)) = (zoom, zm) {
        y = draw_zoom_heading(&mut sc, &zoom_heading(tl, &z), y + 10, width);
        let (zticks, origin_ns) = offset_ticks(&zm);
        let bottom = draw_panel(&mut sc, &rv, &zm, &zticks, y, true, ZOOM_OVERLAP_RGB, None);
        let title = offset_axis_title(&zticks, origin_ns);
        y = draw_axis_titled(&mut sc, &zm, &zticks, bottom, &title);
    }
    draw_legend(&mut sc, &items, width, y + 8);
    sc
}

/// The colour (red, green, blue) of fencing token `token`'s bars.
pub fn token_color(token: u64) -> (u8, u8, u8) {
    palette::token_rgb(token)
}
