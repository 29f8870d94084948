//! Colours and marks of the timeline and compare charts: fencing tokens, faults, harm marks,
//! clocks and overlaps. Only what things look like; where they go is [`super::layout`]'s job.

use crate::report::chart::scene::{rgb, rgba, Scene};
use crate::trace::timeline::MarkKind;
use plotters::style::RGBAColor;

/// An opaque colour as red, green, blue.
pub(crate) type Rgb = (u8, u8, u8);

/// The fill of the overlap bands of the main panel, and of nothing else in a chart, as the SVG
/// writes it (`fill="#E41A1C"`): one band per overlap interval.
pub const OVERLAP_FILL: &str = "#E41A1C";
pub(crate) const OVERLAP_RGB: Rgb = (0xE4, 0x1A, 0x1C);
/// The zoom panel's bands: the same red to the eye, a different fill so bands count once.
pub(crate) const ZOOM_OVERLAP_RGB: Rgb = (0xE3, 0x1A, 0x1C);
/// The legend's band swatch: the same red again, a fill of its own.
pub(crate) const LEGEND_OVERLAP_RGB: Rgb = (0xE4, 0x1B, 0x1C);
/// An overlap band's wash (so each band has one fill of its own), its hatching and, for a
/// band too narrow to hatch, its fill.
pub(crate) const BAND_ALPHA: f64 = 0.10;
pub(crate) const HATCH_ALPHA: f64 = 0.45;
pub(crate) const NARROW_BAND_ALPHA: f64 = 0.6;
/// Bands narrower than this (px) are filled, not hatched.
pub(crate) const HATCH_MIN_PX: i32 = 6;
/// Pixels between hatch lines.
pub(crate) const HATCH_SPACING_PX: i32 = 8;
/// Dark red for overlap labels.
pub(crate) const OVERLAP_TEXT: RGBAColor = rgb(170, 0, 0);

pub(crate) const TEXT: RGBAColor = rgb(25, 25, 25);
pub(crate) const MUTED: RGBAColor = rgb(100, 100, 100);
pub(crate) const GRID: RGBAColor = rgb(226, 226, 226);

/// Fencing-token colours, cycling: a colour-blind-safe qualitative set (after Paul Tol's) of
/// blues, teals, greens, purples, olive and a grey-brown, with no red, orange or pink, so a
/// token never reads as an overlap. Neighbouring tokens differ in lightness as well as hue.
pub(crate) const TOKEN_COLORS: [Rgb; 8] = [
    (31, 119, 180),
    (68, 170, 153),
    (51, 34, 136),
    (153, 153, 51),
    (170, 68, 153),
    (136, 204, 238),
    (17, 119, 51),
    (140, 123, 107),
];

pub(crate) fn token_rgb(token: u64) -> Rgb {
    TOKEN_COLORS[((token.max(1) - 1) % TOKEN_COLORS.len() as u64) as usize]
}

pub(crate) fn is_dark((r, g, b): Rgb) -> bool {
    299 * r as u32 + 587 * g as u32 + 114 * b as u32 <= 150_000
}

pub(crate) fn ink_on(c: Rgb) -> RGBAColor {
    if is_dark(c) {
        rgb(255, 255, 255)
    } else {
        rgb(20, 20, 20)
    }
}

pub(crate) const fn solid((r, g, b): Rgb) -> RGBAColor {
    rgb(r, g, b)
}

// Fault colours: (strong, for the fault lane; light, shaded over the whole row).
pub(crate) const GC_RGB: Rgb = (245, 176, 20);
pub(crate) const GC_SHADE: RGBAColor = rgba(255, 190, 40, 0.22);
pub(crate) const VM_RGB: Rgb = (110, 140, 215);
pub(crate) const VM_SHADE: RGBAColor = rgba(110, 140, 230, 0.20);
pub(crate) const STALL_RGB: Rgb = (40, 60, 150);
pub(crate) const STALL_SHADE: RGBAColor = rgba(40, 60, 170, 0.22);
pub(crate) const DOWN_RGB: Rgb = (80, 80, 80);
/// A stalled loop of a live node: the renewal loop, the worker loop (the fault lane only: the
/// process runs).
pub(crate) const RENEWAL_STALL_RGB: Rgb = (216, 67, 21);
pub(crate) const WORKER_STALL_RGB: Rgb = (121, 85, 72);
/// A stalled disk (the fault lane only: the process runs, its writes wait).
pub(crate) const DISK_STALL_RGB: Rgb = (173, 20, 87);
pub(crate) const DOWN_SHADE: RGBAColor = rgba(0, 0, 0, 0.16);
pub(crate) const CUT_RGB: Rgb = (84, 110, 122);
pub(crate) const CUT_OTHER_RGB: Rgb = (176, 190, 197);
pub(crate) const STEP_RGB: Rgb = (0, 105, 92);
pub(crate) const DRIFT_RGB: Rgb = (123, 31, 162);
pub(crate) const RESTART_RGB: Rgb = (46, 125, 50);
pub(crate) const MONO_RGB: Rgb = (21, 67, 150);
pub(crate) const WALL_RGB: Rgb = (230, 110, 0);

/// The harm kinds drawn as marks, in lane order.
pub(crate) const HARM_KINDS: [MarkKind; 5] = [
    MarkKind::ZombieRead,
    MarkKind::StaleRead,
    MarkKind::ZombieWrite,
    MarkKind::UnsafeWrite,
    MarkKind::FencedWrite,
];

pub(crate) fn mark_rgb(k: MarkKind) -> Rgb {
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

/// Text in the colour of marks of kind `k`, darkened to read on white.
pub(crate) fn mark_ink(k: MarkKind) -> RGBAColor {
    let (r, g, b) = mark_rgb(k);
    let d = |c: u8| (c as u16 * 3 / 4) as u8;
    rgb(d(r), d(g), d(b))
}

pub(crate) fn mark_name(k: MarkKind) -> &'static str {
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
pub(crate) fn draw_mark(sc: &mut Scene, k: MarkKind, x: i32, y: i32) {
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

/// One polyline that hatches `[x0, x1] x [y0, y1]` with diagonals `x + y = c` (`c` a multiple of
/// `spacing`, so neighbouring hatches line up), walking up one diagonal and down the next along
/// the border: one shape per hatched area, whatever its size.
pub(crate) fn hatch_path(x0: i32, y0: i32, x1: i32, y1: i32, spacing: i32) -> Vec<(i32, i32)> {
    let mut pts: Vec<(i32, i32)> = Vec::new();
    if x1 <= x0 || y1 <= y0 {
        return pts;
    }
    let mut c = (x0 + y0).div_euclid(spacing) * spacing + spacing;
    let mut up = true;
    while c < x1 + y1 {
        // The diagonal's lower-left and upper-right ends on the border.
        let lo = (x0.max(c - y1), c - x0.max(c - y1));
        let hi = (x1.min(c - y0), c - x1.min(c - y0));
        let (from, to) = if up { (lo, hi) } else { (hi, lo) };
        if let Some(&last) = pts.last() {
            // Along the border to the next diagonal, round the corner between.
            if up && last.0 == x0 && last.1 != y1 && from.1 == y1 {
                pts.push((x0, y1));
            }
            if !up && last.1 == y0 && last.0 != x1 && from.0 == x1 {
                pts.push((x1, y0));
            }
        }
        pts.push(from);
        pts.push(to);
        up = !up;
        c += spacing;
    }
    pts
}

/// An overlap band over `[xa, xb) x [y0, y1)` in `fill`: a light wash, red diagonal hatching
/// and a solid outline; a band too narrow to hatch is filled instead.
pub(crate) fn draw_band(sc: &mut Scene, xa: i32, xb: i32, y0: i32, y1: i32, fill: Rgb) {
    let (r, g, b) = fill;
    if xb - xa < HATCH_MIN_PX {
        sc.rect(xa, y0, xb, y1, rgba(r, g, b, NARROW_BAND_ALPHA));
        return;
    }
    sc.rect(xa, y0, xb, y1, rgba(r, g, b, BAND_ALPHA));
    let pts = hatch_path(xa, y0, xb - 1, y1 - 1, HATCH_SPACING_PX);
    sc.line(pts, rgba(r, g, b, HATCH_ALPHA), 1);
    sc.frame(xa, y0, xb - 1, y1 - 1, solid(OVERLAP_OUTLINE), 1);
}

/// The outline of every overlap band (a hatch's lines and outline are strokes, not fills, so
/// they do not count as bands in the SVG).
pub(crate) const OVERLAP_OUTLINE: Rgb = (200, 16, 20);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_have_no_red_or_orange() {
        for (r, g, b) in TOKEN_COLORS {
            // Red-dominant hues (red, orange, pink) have red well above both others.
            assert!(!(r > g + 40 && r > b + 40), "({r}, {g}, {b})");
        }
    }

    #[test]
    fn a_hatch_stays_inside_its_box_and_is_one_line() {
        let pts = hatch_path(10, 20, 60, 120, 8);
        assert!(pts.len() > 20);
        for &(x, y) in &pts {
            assert!(
                (10..=60).contains(&x) && (20..=120).contains(&y),
                "({x}, {y})"
            );
        }
        // Every diagonal is on a line x + y = multiple of 8.
        for w in pts.chunks(2).filter(|w| w.len() == 2) {
            if w[0].0 + w[0].1 == w[1].0 + w[1].1 {
                assert_eq!((w[0].0 + w[0].1) % 8, 0);
            }
        }
    }
}
