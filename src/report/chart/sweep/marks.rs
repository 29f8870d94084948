//! How one series looks apart from its colour: a marker shape, so that series of similar
//! colours, or drawn over one another, still tell apart; and how a marker is drawn (a white
//! halo, then the shape), in the chart and in the legend alike. Layout-free: it draws one marker
//! where it is told.

use crate::report::chart::scene::{rgb, Scene};
use plotters::style::RGBAColor;

/// A marker shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker {
    Circle,
    Square,
    Triangle,
    Diamond,
    TriangleDown,
    Cross,
    Plus,
    Ring,
}

/// One shape per series, in order (as many as the palette has colours).
pub const MARKERS: [Marker; 8] = [
    Marker::Circle,
    Marker::Square,
    Marker::Triangle,
    Marker::Diamond,
    Marker::TriangleDown,
    Marker::Cross,
    Marker::Plus,
    Marker::Ring,
];

/// A marker's half size in pixels.
pub const R: i32 = 5;

const WHITE: RGBAColor = rgb(255, 255, 255);

/// Draws marker `m` centred at `(x, y)` in `color`, over a white halo so that a marker drawn
/// beside another stays whole.
pub fn draw(scene: &mut Scene, m: Marker, x: i32, y: i32, color: RGBAColor) {
    shape(scene, m, x, y, R + 2, WHITE, 5);
    shape(scene, m, x, y, R, color, 3);
}

fn shape(scene: &mut Scene, m: Marker, x: i32, y: i32, r: i32, color: RGBAColor, stroke: u32) {
    match m {
        Marker::Circle => scene.circle(x, y, r, color, true),
        Marker::Ring => {
            scene.circle(x, y, r, color, true);
            if color != WHITE {
                scene.circle(x, y, r - 3, WHITE, true);
            }
        }
        Marker::Square => scene.rect(x - r + 1, y - r + 1, x + r, y + r, color),
        Marker::Triangle => scene.polygon(
            vec![(x, y - r - 1), (x + r + 1, y + r), (x - r - 1, y + r)],
            color,
        ),
        Marker::TriangleDown => scene.polygon(
            vec![(x, y + r + 1), (x + r + 1, y - r), (x - r - 1, y - r)],
            color,
        ),
        Marker::Diamond => scene.polygon(
            vec![
                (x, y - r - 1),
                (x + r + 1, y),
                (x, y + r + 1),
                (x - r - 1, y),
            ],
            color,
        ),
        Marker::Cross => {
            scene.line(vec![(x - r, y - r), (x + r, y + r)], color, stroke);
            scene.line(vec![(x - r, y + r), (x + r, y - r)], color, stroke);
        }
        Marker::Plus => {
            scene.line(vec![(x - r - 1, y), (x + r + 1, y)], color, stroke);
            scene.line(vec![(x, y - r - 1), (x, y + r + 1)], color, stroke);
        }
    }
}
