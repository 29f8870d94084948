//! The zoom panel: one overlap too short to see at the scale of the run, in a window chosen by
//! [`crate::trace::zoom::zoom_window`], with a time axis read as an offset from a round origin.

use super::layout::{axis_ticks, fit_text, XMap};
use super::palette::TEXT;
use super::ZOOM_HEADING;
use crate::report::chart::scene::{rgb, Anchor, Scene};
use crate::report::chart::{time_ticks, Ticks, TIME_UNITS};
use crate::time::format_ns;
use crate::trace::timeline::Timeline;
use crate::trace::zoom::ZoomWindow;

/// The height of the zoom heading.
pub(crate) const ZOOM_HEADING_H: i32 = 44;

/// The window of `z` on the pixels of `xm`.
pub(crate) fn zoom_map(xm: &XMap, z: &ZoomWindow) -> XMap {
    XMap {
        t0: z.start_ns,
        t1: z.end_ns,
        ..*xm
    }
}

/// The zoom heading: which overlap, when, how long, between which nodes, and the window.
pub(crate) fn zoom_heading(tl: &Timeline, z: &ZoomWindow) -> String {
    let o = &tl.overlaps[z.overlap];
    let nodes: Vec<&str> = o
        .nodes
        .iter()
        .map(|&k| tl.node_names.get(k).map_or("?", String::as_str))
        .collect();
    format!(
        "{ZOOM_HEADING} {} of {}: {} to {} ({}), nodes {}; window {} to {}",
        z.overlap + 1,
        tl.overlaps.len(),
        format_ns(o.start.ns()),
        format_ns(o.end.ns()),
        format_ns(o.end.ns() - o.start.ns()),
        nodes.join(", "),
        format_ns(z.start_ns),
        format_ns(z.end_ns),
    )
}

/// Draws a zoom heading (a rule and `heading`) from `y`; returns the y below it.
pub(crate) fn draw_zoom_heading(sc: &mut Scene, heading: &str, y: i32, width: i32) -> i32 {
    sc.rect(14, y, width - 14, y + 1, rgb(170, 170, 170));
    let t = fit_text(heading, 18.0, true, width - 28);
    sc.text(14, y + 24, t, 18.0, true, TEXT, Anchor::Left);
    y + ZOOM_HEADING_H
}

/// Ticks of a zoom window read as offsets from a round origin at or before its start: the
/// origin is the window's start rounded down to the tick step; tick positions stay in true time
/// (`at`), labels are the offsets (`+2`, `+4`, in `unit`). Returns the ticks and the origin.
pub(crate) fn offset_ticks(xm: &XMap) -> (Ticks, i64) {
    let plain = axis_ticks(xm);
    let origin_ns = xm.t0.div_euclid(plain.step_ns) * plain.step_ns;
    let off = time_ticks(xm.t0 - origin_ns, xm.t1 - origin_ns, plain.at.len().max(2));
    let at: Vec<i64> = off.at.iter().map(|&t| t + origin_ns).collect();
    let labels = off
        .at
        .iter()
        .zip(&off.labels)
        .map(|(&t, l)| if t > 0 { format!("+{l}") } else { l.clone() })
        .collect();
    let ticks = Ticks { at, labels, ..off };
    (ticks, origin_ns)
}

/// The axis title of a zoom: `true time: ms after 18.998 s`, the origin written exactly in s.
pub(crate) fn offset_axis_title(ticks: &Ticks, origin_ns: i64) -> String {
    let s = TIME_UNITS[0];
    let origin = s.format(origin_ns, s.decimals_for(origin_ns.max(1)));
    format!("true time: {} after {origin} s", ticks.unit.name)
}
