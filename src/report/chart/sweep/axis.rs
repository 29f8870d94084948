//! Axes: where a value lies in pixels and how the axis is drawn.
//!
//! One x-scale rule for every sweep line chart ([`Scale::for_values`]): log when the positive
//! values span a factor of 10 or more and none is negative, with a 0 (epsilon = 0) set apart to
//! the left of an axis break; linear otherwise. The axis title says which ("(log scale)",
//! "(log scale, 0 set apart)", "(linear)"). Grid values are ticked where they are, labelled in
//! one time unit for T and epsilon, else as given to `--vary`. Y axes are linear with ticks at a 1-2-5 step. [`draw_frame`] draws any
//! plot's axes, ticks, grid and titles; the heatmap's cells use the same with one tick per row
//! and column. Nothing here decides what is plotted.

use super::{MUTED, TEXT};
use crate::report::chart::scene::{rgb, text_width, Anchor, Scene};

/// A plot area in pixels: `[x0, x1] x [y0, y1]`, y growing downwards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plot {
    pub x0: i32,
    pub y0: i32,
    pub x1: i32,
    pub y1: i32,
}

/// How an x axis maps values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    Linear,
    /// log10 positions; `zero_apart`: a 0 among the values sits left of an axis break.
    Log {
        zero_apart: bool,
    },
}

impl Scale {
    /// The rule: log when no value is negative and the positive values span a factor of 10 or
    /// more (a 0 is then set apart), linear otherwise. Grid values chosen a decade or more apart
    /// (1 ms .. 50 ms, 2 s .. 20 s) crowd into one corner on a linear axis; values closer than
    /// that read best linear.
    pub fn for_values(values: &[f64]) -> Scale {
        if values.iter().any(|&v| v < 0.0 || !v.is_finite()) {
            return Scale::Linear;
        }
        let pos = values.iter().copied().filter(|&v| v > 0.0);
        let (lo, hi) = pos.fold((f64::INFINITY, 0.0f64), |(l, h), v| (l.min(v), h.max(v)));
        if lo.is_finite() && hi / lo >= 10.0 {
            Scale::Log {
                zero_apart: values.contains(&0.0),
            }
        } else {
            Scale::Linear
        }
    }

    /// What the axis title adds.
    pub fn note(self) -> &'static str {
        match self {
            Scale::Linear => " (linear)",
            Scale::Log { zero_apart: false } => " (log scale)",
            Scale::Log { zero_apart: true } => " (log scale, 0 set apart)",
        }
    }
}

/// Where a value falls on an axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    At(i32),
    /// Left of what the axis shows.
    Below,
    /// Right of what the axis shows.
    Above,
}

/// A numeric x axis over some grid values.
#[derive(Clone, Debug)]
pub struct NumAxis {
    pub scale: Scale,
    /// The shown range in axis coordinates (values, or their log10).
    lo: f64,
    hi: f64,
    /// Log with a zero set apart: where 0 sits, and the break right of it.
    zero_at: f64,
    break_at: f64,
}

impl NumAxis {
    pub fn new(values: &[f64]) -> NumAxis {
        let scale = Scale::for_values(values);
        let nan = f64::NAN;
        match scale {
            Scale::Linear => {
                let (lo, hi) = values
                    .iter()
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &v| {
                        (l.min(v), h.max(v))
                    });
                let (lo, hi) = if lo.is_finite() { (lo, hi) } else { (0.0, 1.0) };
                let pad = if hi > lo {
                    (hi - lo) * 0.07
                } else {
                    lo.abs().max(1.0) * 0.5
                };
                NumAxis {
                    scale,
                    lo: lo - pad,
                    hi: hi + pad,
                    zero_at: nan,
                    break_at: nan,
                }
            }
            Scale::Log { zero_apart } => {
                let pos = values.iter().copied().filter(|&v| v > 0.0);
                let (lo, hi) = pos.fold((f64::INFINITY, 0.0f64), |(l, h), v| (l.min(v), h.max(v)));
                let (lo, hi) = (lo.log10(), hi.log10());
                let span = hi - lo;
                let gap = span * 0.14;
                let left = if zero_apart { lo - gap } else { lo };
                NumAxis {
                    scale,
                    lo: left - span * 0.05,
                    hi: hi + span * 0.06,
                    zero_at: if zero_apart { lo - gap } else { nan },
                    break_at: if zero_apart { lo - gap / 2.0 } else { nan },
                }
            }
        }
    }

    /// The axis coordinate of `v`, or on which side of the axis it lies.
    fn coord(&self, v: f64) -> Result<f64, Place> {
        let c = match self.scale {
            Scale::Linear => v,
            Scale::Log { zero_apart } => {
                if v == 0.0 && zero_apart {
                    self.zero_at
                } else if v <= 0.0 {
                    return Err(Place::Below);
                } else if zero_apart && v.log10() < self.break_at {
                    // Between 0 and the least positive value: inside the break.
                    return Err(Place::Below);
                } else {
                    v.log10()
                }
            }
        };
        if c < self.lo {
            Err(Place::Below)
        } else if c > self.hi {
            Err(Place::Above)
        } else {
            Ok(c)
        }
    }

    fn to_px(&self, c: f64, plot: Plot) -> i32 {
        let f = (c - self.lo) / (self.hi - self.lo);
        plot.x0 + (f * (plot.x1 - plot.x0) as f64).round() as i32
    }

    /// Where `v` lies in `plot`.
    pub fn place(&self, v: f64, plot: Plot) -> Place {
        match self.coord(v) {
            Ok(c) => Place::At(self.to_px(c, plot)),
            Err(p) => p,
        }
    }

    /// The pixel columns of the ticks `ticks` (value, label) that the axis shows in `plot`.
    pub fn ticks_px(&self, ticks: &[(f64, String)], plot: Plot) -> Vec<(i32, String)> {
        ticks
            .iter()
            .filter_map(|(v, l)| match self.place(*v, plot) {
                Place::At(px) => Some((px, l.clone())),
                _ => None,
            })
            .collect()
    }

    /// The pixel of the axis break, when a zero is set apart.
    pub fn break_px(&self, plot: Plot) -> Option<i32> {
        self.break_at
            .is_finite()
            .then(|| self.to_px(self.break_at, plot))
    }
}

/// A linear y axis with ticks at a 1-2-5 step, from the values it must show.
#[derive(Clone, Debug, PartialEq)]
pub struct YAxis {
    pub lo: f64,
    pub hi: f64,
    pub ticks: Vec<f64>,
    pub decimals: usize,
}

impl YAxis {
    /// An axis showing `ys` (from 0 when `from_zero`) with at most 8 ticks, ends on ticks.
    pub fn new(ys: impl Iterator<Item = f64>, from_zero: bool) -> YAxis {
        let (mut lo, mut hi) = ys.fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), y| {
            (l.min(y), h.max(y))
        });
        if !lo.is_finite() {
            (lo, hi) = (0.0, 1.0);
        }
        if from_zero {
            lo = lo.min(0.0);
        }
        if hi - lo <= 0.0 {
            let pad = if hi == 0.0 { 1.0 } else { hi.abs() * 0.01 };
            hi += pad;
            if !from_zero {
                lo -= pad;
            }
        }
        let span = hi - lo;
        let mut step = 1.0;
        'find: for e in -12..=15 {
            for m in [1.0, 2.0, 5.0] {
                step = m * 10f64.powi(e);
                if span / step <= 7.0 {
                    break 'find;
                }
            }
        }
        let a = (lo / step).floor();
        let b = (hi / step).ceil();
        let ticks: Vec<f64> = (0..=((b - a) as i64))
            .map(|k| (a + k as f64) * step)
            .collect();
        let decimals = (-(step.log10().floor())).clamp(0.0, 9.0) as usize;
        YAxis {
            lo: a * step,
            hi: b * step,
            ticks,
            decimals,
        }
    }

    /// An axis from 0 for counts up to `max`: whole-number ticks at a 1-2-5 step.
    pub fn counts(max: f64) -> YAxis {
        let mut y = YAxis::new([0.0, max.max(1.0)].into_iter(), true);
        if y.decimals > 0 {
            let top = y.hi.ceil().max(1.0);
            y = YAxis {
                lo: 0.0,
                hi: top,
                ticks: (0..=top as i64).map(|k| k as f64).collect(),
                decimals: 0,
            };
        }
        y
    }

    pub fn px(&self, v: f64, plot: Plot) -> i32 {
        let f = (v - self.lo) / (self.hi - self.lo);
        plot.y1 - (f * (plot.y1 - plot.y0) as f64).round() as i32
    }

    pub fn label(&self, v: f64) -> String {
        let s = format!("{v:.*}", self.decimals);
        if s.trim_start_matches('-')
            .chars()
            .all(|c| c == '0' || c == '.')
        {
            "0".to_string()
        } else {
            s
        }
    }

    /// The ticks as pixels and labels.
    pub fn ticks_px(&self, plot: Plot) -> Vec<(i32, String)> {
        self.ticks
            .iter()
            .map(|&t| (self.px(t, plot), self.label(t)))
            .collect()
    }
}

pub const TICK_SIZE: f64 = 14.0;
pub const TITLE_SIZE: f64 = 15.0;
const GRID: (u8, u8, u8) = (226, 226, 226);

/// Draws a plot's axes: light grid lines at the ticks when `grid`, the left and bottom axis
/// lines, tick marks and labels (an x label that would touch the one before it is left out, its
/// tick stays), the x title centred below and the y title above the plot's top-left corner.
pub fn draw_frame(
    s: &mut Scene,
    plot: Plot,
    x_ticks: &[(i32, String)],
    y_ticks: &[(i32, String)],
    titles: (&str, &str),
    grid: bool,
) {
    let grey = rgb(GRID.0, GRID.1, GRID.2);
    if grid {
        for (x, _) in x_ticks {
            s.line(vec![(*x, plot.y0), (*x, plot.y1)], grey, 1);
        }
        for (y, _) in y_ticks {
            s.line(vec![(plot.x0, *y), (plot.x1, *y)], grey, 1);
        }
    }
    let black = rgb(0, 0, 0);
    s.line(vec![(plot.x0, plot.y0), (plot.x0, plot.y1)], black, 1);
    s.line(vec![(plot.x0, plot.y1), (plot.x1, plot.y1)], black, 1);
    let mut last_right = i32::MIN;
    for (x, label) in x_ticks {
        s.line(vec![(*x, plot.y1), (*x, plot.y1 + 6)], black, 1);
        let w = text_width(label, TICK_SIZE, false);
        if x - w / 2 < last_right + 8 {
            continue;
        }
        last_right = x + w / 2;
        s.text(
            *x,
            plot.y1 + 18,
            label.clone(),
            TICK_SIZE,
            false,
            TEXT,
            Anchor::Center,
        );
    }
    let mut last_top = i32::MAX;
    for (y, label) in y_ticks {
        s.line(vec![(plot.x0 - 6, *y), (plot.x0, *y)], black, 1);
        if y + 9 > last_top {
            continue;
        }
        last_top = y - 9;
        s.text(
            plot.x0 - 10,
            *y,
            label.clone(),
            TICK_SIZE,
            false,
            TEXT,
            Anchor::Right,
        );
    }
    let (x_title, y_title) = titles;
    s.text(
        (plot.x0 + plot.x1) / 2,
        plot.y1 + 44,
        x_title,
        TITLE_SIZE,
        false,
        TEXT,
        Anchor::Center,
    );
    s.text(
        plot.x0 - 50,
        plot.y0 - 16,
        y_title,
        TITLE_SIZE,
        false,
        MUTED,
        Anchor::Left,
    );
}

/// Two short slanted strokes across the x axis at `x`: the axis is broken there.
pub fn draw_break(s: &mut Scene, x: i32, plot: Plot) {
    let white = rgb(255, 255, 255);
    s.rect(x - 4, plot.y1 - 7, x + 5, plot.y1 + 8, white);
    for dx in [-3, 3] {
        s.line(
            vec![(x + dx - 3, plot.y1 + 7), (x + dx + 3, plot.y1 - 7)],
            rgb(0, 0, 0),
            1,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_x_scale_rule_is_log_from_a_decade_with_zero_set_apart() {
        let ms = |v: &[f64]| v.iter().map(|x| x * 1e6).collect::<Vec<_>>();
        // epsilon = 0, 1, 5, 10, 20, 50 ms: positive values span 50x, 0 set apart.
        assert_eq!(
            Scale::for_values(&ms(&[0.0, 1.0, 5.0, 10.0, 20.0, 50.0])),
            Scale::Log { zero_apart: true }
        );
        // T = 2 s .. 20 s: exactly a decade.
        assert_eq!(
            Scale::for_values(&[2e9, 5e9, 10e9, 20e9]),
            Scale::Log { zero_apart: false }
        );
        // T = 5 s, 10 s: less than a decade.
        assert_eq!(Scale::for_values(&[5e9, 10e9]), Scale::Linear);
        // 0 and a single positive value: nothing to span.
        assert_eq!(Scale::for_values(&[0.0, 20e6]), Scale::Linear);
        assert_eq!(Scale::for_values(&[-1.0, 1.0, 100.0]), Scale::Linear);
        assert_eq!(Scale::Linear.note(), " (linear)");
        assert_eq!(
            Scale::Log { zero_apart: true }.note(),
            " (log scale, 0 set apart)"
        );
    }

    #[test]
    fn a_zero_set_apart_lies_left_of_the_break_and_values_in_order() {
        let plot = Plot {
            x0: 100,
            y0: 0,
            x1: 700,
            y1: 300,
        };
        let ax = NumAxis::new(&[0.0, 1e6, 5e6, 50e6]);
        let at = |v: f64| match ax.place(v, plot) {
            Place::At(x) => x,
            p => panic!("{v}: {p:?}"),
        };
        let brk = ax.break_px(plot).expect("a break");
        assert!(plot.x0 < at(0.0) && at(0.0) < brk && brk < at(1e6));
        assert!(at(1e6) < at(5e6) && at(5e6) < at(50e6) && at(50e6) < plot.x1);
        // A bound between 0 and the least value falls in the break: not placed on the axis.
        assert_eq!(ax.place(0.4e6, plot), Place::Below);
        assert_eq!(ax.place(1e9, plot), Place::Above);
    }

    #[test]
    fn y_ticks_land_on_a_1_2_5_step_and_cover_the_values() {
        let y = YAxis::new([99.86, 99.99].into_iter(), false);
        assert_eq!(y.decimals, 2);
        assert!(y.lo <= 99.86 && y.hi >= 99.99);
        assert!(y.ticks.len() <= 8);
        let z = YAxis::new([0.0, 0.0].into_iter(), true);
        assert_eq!((z.lo, z.hi), (0.0, 1.0));
        assert_eq!(z.label(0.0), "0");
    }
}
