//! The legend under a chart: entries (a mark and its words) laid out left to right, wrapping at
//! the chart's width, with the words measured in the embedded font so that entries never run
//! into each other. Every chart's legend is drawn here, one way.

use super::marks::{self, Marker};
use super::TEXT;
use crate::report::chart::scene::{rgb, text_width, Anchor, Scene};
use plotters::style::RGBAColor;

/// What stands left of a legend entry's words.
#[derive(Clone, Debug)]
pub enum Mark {
    /// A solid line.
    Line(RGBAColor),
    /// A dashed line.
    Dashed(RGBAColor),
    /// A faint dotted line.
    Dotted(RGBAColor),
    /// A series: a line through its marker.
    Series(RGBAColor, Marker),
    /// Several series' markers side by side (series drawn over one another).
    Markers(Vec<(RGBAColor, Marker)>),
    /// A point.
    Dot(RGBAColor),
    /// An open ring around a point.
    Ring(RGBAColor),
    /// A filled box with a thin dark frame.
    Box(RGBAColor),
    /// A thick open frame.
    Framed(RGBAColor),
    /// A filled box hatched with diagonal lines (fill, lines), with a thin dark frame.
    Hatched(RGBAColor, RGBAColor),
}

pub const TEXT_SIZE: f64 = 15.0;
const ROW_H: i32 = 24;
const LEFT: i32 = 20;
const GAP: i32 = 28;

impl Mark {
    /// The width the mark takes.
    fn width(&self) -> i32 {
        match self {
            Mark::Markers(ms) => (16 * ms.len() as i32).max(28),
            _ => 28,
        }
    }

    /// Draws the mark with its left edge at `x`, centred on `y`.
    pub fn draw(&self, s: &mut Scene, x: i32, y: i32) {
        match self {
            Mark::Line(c) => s.line(vec![(x, y), (x + 28, y)], *c, 3),
            Mark::Dashed(c) => s.dashed(vec![(x, y), (x + 28, y)], *c, 2, 6, 4),
            Mark::Dotted(c) => s.dashed(vec![(x, y), (x + 28, y)], *c, 2, 2, 4),
            Mark::Series(c, m) => {
                s.line(vec![(x, y), (x + 28, y)], *c, 3);
                marks::draw(s, *m, x + 14, y, *c);
            }
            Mark::Markers(ms) => {
                for (k, (c, m)) in ms.iter().enumerate() {
                    marks::draw(s, *m, x + 7 + 16 * k as i32, y, *c);
                }
            }
            Mark::Dot(c) => s.circle(x + 14, y, 6, *c, true),
            Mark::Ring(c) => s.circle(x + 14, y, 10, *c, false),
            Mark::Box(c) => {
                s.rect(x + 4, y - 8, x + 24, y + 8, *c);
                s.frame(x + 4, y - 8, x + 24, y + 8, rgb(0, 0, 0), 1);
            }
            Mark::Framed(c) => {
                s.frame(x + 4, y - 8, x + 24, y + 8, *c, 3);
            }
            Mark::Hatched(fill, lines) => {
                s.rect(x + 4, y - 8, x + 24, y + 8, *fill);
                s.hatch(x + 4, y - 8, x + 24, y + 8, 6, *lines, 1);
                s.frame(x + 4, y - 8, x + 24, y + 8, rgb(0, 0, 0), 1);
            }
        }
    }
}

/// A legend: its entries in order.
#[derive(Clone, Debug, Default)]
pub struct Legend {
    pub entries: Vec<(Mark, String)>,
}

impl Legend {
    pub fn push(&mut self, mark: Mark, text: impl Into<String>) {
        self.entries.push((mark, text.into()));
    }

    /// Each entry's top-left corner, relative to the legend's, at `width`.
    fn layout(&self, width: i32) -> Vec<(i32, i32)> {
        let (mut x, mut y) = (LEFT, 0);
        let mut out = Vec::with_capacity(self.entries.len());
        for (mark, text) in &self.entries {
            let w = mark.width() + 8 + text_width(text, TEXT_SIZE, false);
            if x + w > width - 10 && x > LEFT {
                x = LEFT;
                y += ROW_H;
            }
            out.push((x, y));
            x += w + GAP;
        }
        out
    }

    /// The height the legend takes at `width` (0 when empty).
    pub fn height(&self, width: i32) -> i32 {
        match self.layout(width).last() {
            Some(&(_, y)) => y + ROW_H + 20,
            None => 0,
        }
    }

    /// Draws the legend with its top at `top`.
    pub fn draw(&self, s: &mut Scene, top: i32, width: i32) {
        for ((mark, text), (x, y)) in self.entries.iter().zip(self.layout(width)) {
            let cy = top + 12 + y;
            mark.draw(s, x, cy);
            s.text(
                x + mark.width() + 8,
                cy,
                text.clone(),
                TEXT_SIZE,
                false,
                TEXT,
                Anchor::Left,
            );
        }
    }
}
