//! The clock-error lanes: one per node whose clocks erred, one line for all the others. The
//! series come from [`crate::trace::clock_error`]; this file only scales and draws them.

use super::layout::*;
use super::palette::*;
use crate::report::chart::scene::{rgb, rgba, text_width, Anchor, Scene};
use crate::report::chart::{time_ticks, Ticks, TimeUnit, TIME_UNITS};
use crate::trace::clock_error::{clip, clock_series, wall_differs};

pub(crate) const LANE_H: i32 = 58;
/// The one line that stands for every clock without error: only its zero line.
pub(crate) const FLAT_LANE_H: i32 = 30;
pub(crate) const LANE_GAP: i32 = 8;
pub(crate) const LANES_HEADING_H: i32 = 26;

/// The nodes whose clocks erred, each with a lane of its own.
pub(crate) fn erring<'r>(rv: &'r RunView<'_>) -> impl Iterator<Item = usize> + 'r {
    (0..rv.n()).filter(|&n| !rv.flat_clock[n])
}

/// The height of the clock-error lanes of `rv`, with their heading: a lane per node whose
/// clocks erred, and one line for all the others.
pub(crate) fn lanes_height(rv: &RunView) -> i32 {
    let flat = rv.flat_clock.iter().any(|&f| f);
    LANES_HEADING_H
        + erring(rv).count() as i32 * (LANE_H + LANE_GAP)
        + if flat { FLAT_LANE_H + LANE_GAP } else { 0 }
}

/// The line that stands for every node whose clocks never erred, from `y0`.
pub(crate) fn draw_flat_lane(sc: &mut Scene, rv: &RunView, xm: &XMap, y0: i32) {
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

/// One node's clock error in a window, clipped, with its range (error ns).
pub(crate) struct LaneSeries {
    pub node: usize,
    pub mono: Vec<(i64, f64)>,
    pub wall: Vec<(i64, f64)>,
    pub lo: f64,
    pub hi: f64,
}

/// The series of every node of `rv` whose clocks erred, in the window of `xm`; the wall
/// clock's counts only when `both`.
pub(crate) fn lane_series(rv: &RunView, xm: &XMap, both: bool) -> Vec<LaneSeries> {
    let tl = rv.tl;
    erring(rv)
        .map(|node| {
            let drift_ppm = rv.s.drift_ppm.get(&tl.node_names[node]).copied();
            let (mono, wall) = clock_series(tl, node, drift_ppm.unwrap_or(0.0));
            let mono = clip(&mono, xm.t0, xm.t1);
            let wall = clip(&wall, xm.t0, xm.t1);
            let shown = mono
                .iter()
                .chain(if both { wall.iter() } else { [].iter() });
            let (mut lo, mut hi) = (0f64, 0f64);
            for &(_, v) in shown {
                lo = lo.min(v);
                hi = hi.max(v);
            }
            LaneSeries {
                node,
                mono,
                wall,
                lo,
                hi,
            }
        })
        .collect()
}

/// The one unit of a section of clock lanes: the largest in which the largest error shown is
/// at least 1 (ns for none).
pub(crate) fn section_unit(series: &[LaneSeries]) -> TimeUnit {
    let max = series
        .iter()
        .map(|s| s.lo.abs().max(s.hi.abs()))
        .fold(0f64, f64::max);
    unit_of(max)
}

/// The largest unit in which `abs_ns` is at least 1 (ns below 1 us).
pub(crate) fn unit_of(abs_ns: f64) -> TimeUnit {
    TIME_UNITS
        .into_iter()
        .find(|u| abs_ns >= u.ns as f64)
        .unwrap_or(TIME_UNITS[3])
}

/// Ticks for errors in `[lo, hi]` ns, labelled in `unit` whatever unit would be shortest.
pub(crate) fn lane_ticks(lo: f64, hi: f64, unit: TimeUnit) -> Ticks {
    let t = time_ticks(lo.floor() as i64, hi.ceil() as i64, 2);
    let labels =
        t.at.iter()
            .map(|&v| unit.format_trimmed(v, t.step_ns))
            .collect();
    Ticks { unit, labels, ..t }
}

/// The clock-error lanes, one per node, from `top`, all in one unit.
pub(crate) fn draw_clock_lanes(sc: &mut Scene, rv: &RunView, xm: &XMap, top: i32) {
    let both = wall_differs(rv.tl);
    let heading = if both {
        "Clock error, local − true (solid: monotonic, dashed: wall)"
    } else {
        "Clock error, local − true (wall = monotonic)"
    };
    sc.text(14, top + 13, heading, 14.0, true, TEXT, Anchor::Left);
    let series = lane_series(rv, xm, both);
    let unit = section_unit(&series);
    let mut y0 = top + LANES_HEADING_H;
    for s in &series {
        draw_lane(sc, rv, xm, s, unit, y0, both);
        y0 += LANE_H + LANE_GAP;
    }
    draw_flat_lane(sc, rv, xm, y0);
}

/// One node's lane from `y0`: frame, crashes, name, ticks in `unit`, zero line, the error
/// lines and their values at the window's end.
fn draw_lane(
    sc: &mut Scene,
    rv: &RunView,
    xm: &XMap,
    s: &LaneSeries,
    unit: TimeUnit,
    y0: i32,
    both: bool,
) {
    let tl = rv.tl;
    let y1 = y0 + LANE_H;
    sc.frame(xm.x0, y0, xm.x1, y1, rgb(200, 200, 200), 1);
    // Crashes shaded on the lane too.
    for d in tl.down.iter().filter(|d| d.node == s.node) {
        if let Some((a, b)) = xm.span(d.start.ns(), d.end.ns(), 1) {
            sc.rect(a, y0, b, y1, DOWN_SHADE);
        }
    }
    let flat = s.hi - s.lo < 1.0;
    let name = fit_text(&tl.node_names[s.node], 14.0, true, xm.x0 - 70);
    let name_y = if flat { (y0 + y1) / 2 } else { y0 + 14 };
    sc.text(14, name_y, name, 14.0, true, TEXT, Anchor::Left);
    let pad = ((s.hi - s.lo) * 0.12).max(1.0);
    let (vlo, vhi) = if flat {
        (-1.0, 1.0)
    } else {
        (s.lo - pad, s.hi + pad)
    };
    let ty = |v: f64| -> i32 {
        (y1 - 4) - ((v - vlo) / (vhi - vlo) * (LANE_H - 8) as f64).round() as i32
    };
    if flat {
        sc.text(xm.x0 - 8, ty(0.0), "0", 12.0, false, MUTED, Anchor::Right);
        let w = text_width(&tl.node_names[s.node], 14.0, true).min(xm.x0 - 70);
        let mid = (y0 + y1) / 2;
        sc.text(22 + w, mid, "no error", 12.0, false, MUTED, Anchor::Left);
    } else {
        let ticks = lane_ticks(s.lo, s.hi, unit);
        for (&t, l) in ticks.at.iter().zip(&ticks.labels) {
            let y = ty(t as f64);
            sc.rect(xm.x0 - 4, y, xm.x0, y + 1, MUTED);
            sc.text(xm.x0 - 8, y, l.clone(), 12.0, false, MUTED, Anchor::Right);
        }
        let title = format!("error ({})", unit.name);
        sc.text(14, y0 + 32, title, 12.0, false, MUTED, Anchor::Left);
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
        sc.dashed(to_px(&s.wall), solid(WALL_RGB), 2, 7, 4);
    }
    sc.line(to_px(&s.mono), solid(MONO_RGB), 2);
    if !flat {
        let mut ends: Vec<(i32, String, Rgb)> = Vec::new();
        if let Some(&(_, v)) = s.mono.last() {
            ends.push((ty(v), value_in(v, unit), MONO_RGB));
        }
        if let Some(&(_, v)) = s.wall.last().filter(|_| both) {
            let label = value_in(v, unit);
            if ends.first().is_none_or(|m| m.1 != label) {
                ends.push((ty(v), label, WALL_RGB));
            }
        }
        draw_end_labels(sc, xm, &ends, y0);
    }
}

/// The errors at the window's end, `(line y, label, colour)`, written beside their lines:
/// right-aligned at the lane's end, above a line in the lane's lower half and below one in its
/// upper half; a label that would cover one already placed moves to its left.
fn draw_end_labels(sc: &mut Scene, xm: &XMap, ends: &[(i32, String, Rgb)], y0: i32) {
    let mut placed: Vec<(i32, i32, i32)> = Vec::new();
    for (y, label, c) in ends {
        let ly = if y - y0 > LANE_H / 2 { y - 9 } else { y + 9 };
        let w = text_width(label, 12.0, true);
        let mut right = xm.x1 - 5;
        while let Some(&(left, _, _)) = placed
            .iter()
            .find(|&&(l, r, py)| (py - ly).abs() < 15 && right - w - 3 < r && right + 3 > l)
        {
            right = left - 8;
        }
        if right - w - 3 < xm.x0 {
            continue;
        }
        placed.push((right - w - 3, right + 3, ly));
        let white = rgba(255, 255, 255, 0.85);
        sc.rect(right - w - 3, ly - 7, right + 3, ly + 7, white);
        sc.text(
            right,
            ly,
            label.clone(),
            12.0,
            true,
            solid(*c),
            Anchor::Right,
        );
    }
}

/// A clock error in a few significant digits with its own unit (`-19.01ms`, `-8s`).
pub(crate) fn short_ns(v: f64) -> String {
    if v.abs() < 0.5 {
        return "0".to_string();
    }
    value_in(v, unit_of(v.abs()))
}

/// A clock error in `unit`, to three significant digits at most, signed (`+0.95ms`, `-857ms`).
pub(crate) fn value_in(v: f64, unit: TimeUnit) -> String {
    if v.abs() < 0.5 {
        return "0".to_string();
    }
    let x = v / unit.ns as f64;
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
    format!("{sign}{text}{}", unit.name)
}

/// A polyline with at most a few points per pixel column: the first, lowest, highest and last.
pub(crate) fn thin(pts: Vec<(i32, i32)>) -> Vec<(i32, i32)> {
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
