//! A chart's page: the title block on top (a bold title and subtitle lines, wrapped to the
//! width), the body the chart lays out, and the legend below it. Every sweep chart is framed
//! here, one way; the page decides no content.

use super::legend::Legend;
use super::{MUTED, TEXT};
use crate::report::chart::scene::{text_width, Anchor, Scene};

const TITLE_SIZE: f64 = 24.0;
const LINE_SIZE: f64 = 16.0;
const LINE_H: i32 = 22;

/// A title, subtitle lines and a legend around a body.
pub struct Page {
    pub width: i32,
    pub title: String,
    pub lines: Vec<String>,
    pub legend: Legend,
}

/// `text` cut into lines no wider than `width` at `size`, at spaces.
pub fn wrap(text: &str, size: f64, width: i32) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    for word in text.split(' ') {
        let next = if cur.is_empty() {
            word.to_string()
        } else {
            format!("{cur} {word}")
        };
        if !cur.is_empty() && text_width(&next, size, false) > width {
            out.push(std::mem::take(&mut cur));
            cur = word.to_string();
        } else {
            cur = next;
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

impl Page {
    fn wrapped(&self) -> Vec<String> {
        self.lines
            .iter()
            .flat_map(|l| wrap(l, LINE_SIZE, self.width - 40))
            .collect()
    }

    /// The height of the title block.
    pub fn head_height(&self) -> i32 {
        64 + LINE_H * self.wrapped().len() as i32
    }

    /// A scene for a body `body_h` high: the title block drawn, the body to be drawn from
    /// `head_height()` down, the legend drawn under it.
    pub fn scene(&self, body_h: i32) -> Scene {
        let head = self.head_height();
        let legend_h = self.legend.height(self.width);
        let mut s = Scene::new(self.width as u32, (head + body_h + legend_h) as u32);
        let cx = self.width / 2;
        s.text(
            cx,
            26,
            self.title.clone(),
            TITLE_SIZE,
            true,
            TEXT,
            Anchor::Center,
        );
        for (k, l) in self.wrapped().into_iter().enumerate() {
            s.text(
                cx,
                58 + LINE_H * k as i32,
                l,
                LINE_SIZE,
                false,
                MUTED,
                Anchor::Center,
            );
        }
        self.legend.draw(&mut s, head + body_h, self.width);
        s
    }
}
