//! A display list in pixels ([`Scene`]) and its rendering to SVG and PNG with plotters.
//!
//! Charts lay themselves out once into a scene and render it twice, so the SVG and the PNG hold
//! the same shapes in the same order. Everything is integer pixels except text sizes; nothing
//! here reads the clock, the environment or a hash map, so the output is byte-identical run to
//! run. Text is measured and drawn with the embedded font ([`super::font`]); this module does not
//! decide what a chart shows.

use super::font::{ensure_registered, FAMILY};
use super::ChartFiles;
use plotters::backend::{BitMapBackend, DrawingBackend, SVGBackend};
use plotters::drawing::{DrawingArea, IntoDrawingArea};
use plotters::element::{Circle, DashedPathElement, PathElement, Polygon, Rectangle, Text};
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{Color, FontDesc, FontStyle, IntoFont, RGBAColor, ShapeStyle, TextStyle};

/// An opaque colour.
pub const fn rgb(r: u8, g: u8, b: u8) -> RGBAColor {
    RGBAColor(r, g, b, 1.0)
}

/// A colour with opacity `a` (0..1).
pub const fn rgba(r: u8, g: u8, b: u8, a: f64) -> RGBAColor {
    RGBAColor(r, g, b, a)
}

/// How a text is placed relative to its point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Anchor {
    Left,
    Center,
    Right,
}

/// One shape, in pixels. Rectangles span `[x0, x1) x [y0, y1)`.
#[derive(Clone, Debug)]
pub enum Shape {
    Rect {
        x0: i32,
        y0: i32,
        x1: i32,
        y1: i32,
        color: RGBAColor,
    },
    Frame {
        x0: i32,
        y0: i32,
        x1: i32,
        y1: i32,
        color: RGBAColor,
        width: u32,
    },
    Line {
        pts: Vec<(i32, i32)>,
        color: RGBAColor,
        width: u32,
    },
    Dashed {
        pts: Vec<(i32, i32)>,
        color: RGBAColor,
        width: u32,
        dash: i32,
        gap: i32,
    },
    Polygon {
        pts: Vec<(i32, i32)>,
        color: RGBAColor,
    },
    Circle {
        x: i32,
        y: i32,
        r: i32,
        color: RGBAColor,
        filled: bool,
    },
    /// Text centred vertically on `y`.
    Text {
        x: i32,
        y: i32,
        text: String,
        size: f64,
        bold: bool,
        color: RGBAColor,
        anchor: Anchor,
    },
}

/// A chart's shapes, drawn in order over a white background.
#[derive(Clone, Debug)]
pub struct Scene {
    pub width: u32,
    pub height: u32,
    pub shapes: Vec<Shape>,
}

/// Text sizes are whole even pixels: plotters' ab_glyph renderer places each glyph at
/// `size / 2 + its top`, truncated, so at odd sizes short glyphs (a period) sit a pixel above the
/// baseline of tall ones and `3.996` reads `3·996`.
fn even(size: f64) -> f64 {
    ((size / 2.0).round() * 2.0).max(2.0)
}

fn font(size: f64, bold: bool) -> FontDesc<'static> {
    let size = even(size);
    let style = if bold {
        FontStyle::Bold
    } else {
        FontStyle::Normal
    };
    (FAMILY, size, style).into_font()
}

/// The width in pixels of `text` at `size` in the embedded font.
pub fn text_width(text: &str, size: f64, bold: bool) -> i32 {
    ensure_registered();
    if text.is_empty() {
        return 0;
    }
    font(size, bold)
        .box_size(text)
        .map(|(w, _)| w as i32)
        .unwrap_or_else(|e| panic!("the embedded font measures text: {e:?}"))
}

/// `text` with every character that XML 1.0 forbids in a document (the control characters
/// other than tab, line feed and carriage return, and U+FFFE, U+FFFF) replaced by U+FFFD, so
/// that the SVG is well-formed whatever a name holds. Validation refuses such names; this is the
/// renderer's own guarantee.
pub fn xml_safe(text: String) -> String {
    let forbidden = |c: char| {
        (c < ' ' && !matches!(c, '\t' | '\n' | '\r')) || matches!(c, '\u{FFFE}' | '\u{FFFF}')
    };
    if text.chars().any(forbidden) {
        text.chars()
            .map(|c| if forbidden(c) { '\u{FFFD}' } else { c })
            .collect()
    } else {
        text
    }
}

impl Scene {
    pub fn new(width: u32, height: u32) -> Scene {
        Scene {
            width,
            height,
            shapes: Vec::new(),
        }
    }

    /// A filled rectangle; empty ones are skipped.
    pub fn rect(&mut self, x0: i32, y0: i32, x1: i32, y1: i32, color: RGBAColor) {
        if x1 > x0 && y1 > y0 {
            self.shapes.push(Shape::Rect {
                x0,
                y0,
                x1,
                y1,
                color,
            });
        }
    }

    pub fn frame(&mut self, x0: i32, y0: i32, x1: i32, y1: i32, color: RGBAColor, width: u32) {
        self.shapes.push(Shape::Frame {
            x0,
            y0,
            x1,
            y1,
            color,
            width,
        });
    }

    pub fn line(&mut self, pts: Vec<(i32, i32)>, color: RGBAColor, width: u32) {
        if pts.len() >= 2 {
            self.shapes.push(Shape::Line { pts, color, width });
        }
    }

    pub fn dashed(
        &mut self,
        pts: Vec<(i32, i32)>,
        color: RGBAColor,
        width: u32,
        dash: i32,
        gap: i32,
    ) {
        if pts.len() >= 2 {
            self.shapes.push(Shape::Dashed {
                pts,
                color,
                width,
                dash,
                gap,
            });
        }
    }

    pub fn polygon(&mut self, pts: Vec<(i32, i32)>, color: RGBAColor) {
        self.shapes.push(Shape::Polygon { pts, color });
    }

    pub fn circle(&mut self, x: i32, y: i32, r: i32, color: RGBAColor, filled: bool) {
        self.shapes.push(Shape::Circle {
            x,
            y,
            r,
            color,
            filled,
        });
    }

    /// Text with its vertical centre at `y`. A character XML cannot hold (see [`xml_safe`]) is
    /// drawn as U+FFFD in both files; plotters' SVG backend escapes `& < > " '` itself.
    #[allow(clippy::too_many_arguments)]
    pub fn text(
        &mut self,
        x: i32,
        y: i32,
        text: impl Into<String>,
        size: f64,
        bold: bool,
        color: RGBAColor,
        anchor: Anchor,
    ) {
        let text = xml_safe(text.into());
        if !text.is_empty() {
            self.shapes.push(Shape::Text {
                x,
                y,
                text,
                size,
                bold,
                color,
                anchor,
            });
        }
    }

    /// Diagonal hatching over `[x0, x1) x [y0, y1)`, lines `spacing` px apart.
    #[allow(clippy::too_many_arguments)]
    pub fn hatch(
        &mut self,
        x0: i32,
        y0: i32,
        x1: i32,
        y1: i32,
        spacing: i32,
        color: RGBAColor,
        width: u32,
    ) {
        let (x1, y1) = (x1 - 1, y1 - 1);
        if x1 <= x0 || y1 <= y0 {
            return;
        }
        // Lines x + y = c, rising to the right; phase fixed to the canvas so neighbours line up.
        let mut c = (x0 + y0).div_euclid(spacing) * spacing;
        while c <= x1 + y1 {
            let xa = x0.max(c - y1);
            let xb = x1.min(c - y0);
            if xb > xa {
                self.line(vec![(xa, c - xa), (xb, c - xb)], color, width);
            }
            c += spacing;
        }
    }

    /// Renders the scene to SVG text and PNG bytes.
    pub fn render(&self) -> ChartFiles {
        ChartFiles {
            svg: self.svg(),
            png: self.png(),
        }
    }

    /// The scene as SVG text.
    pub fn svg(&self) -> String {
        ensure_registered();
        let mut svg = String::new();
        {
            let root =
                SVGBackend::with_string(&mut svg, (self.width, self.height)).into_drawing_area();
            self.draw_on(&root);
        }
        svg
    }

    /// The scene as PNG bytes.
    pub fn png(&self) -> Vec<u8> {
        self.png_on(Vec::new())
    }

    /// The scene as PNG bytes, its bitmap drawn in `canvas` (its memory, whatever it holds:
    /// cut or grown to the scene's size, and painted white first). A canvas made earlier on
    /// another thread spares the drawing the first touch of its memory, the kernel's page
    /// faults: see [`canvas`].
    pub fn png_on(&self, mut canvas: Vec<u8>) -> Vec<u8> {
        ensure_registered();
        let (w, h) = (self.width as usize, self.height as usize);
        canvas.resize(w * h * 3, 255);
        let mut buf = canvas;
        {
            let root =
                BitMapBackend::with_buffer(&mut buf, (self.width, self.height)).into_drawing_area();
            self.draw_on(&root);
        }
        let mut png = Vec::new();
        {
            use image::codecs::png::{CompressionType, FilterType, PngEncoder};
            use image::ImageEncoder;
            // One filter for every row, Paeth's: the adaptive choice (each row tried with all
            // five) took twice the encoding time for a file about 5% smaller.
            PngEncoder::new_with_quality(&mut png, CompressionType::Fast, FilterType::Paeth)
                .write_image(&buf, self.width, self.height, image::ColorType::Rgb8)
                .unwrap_or_else(|e| panic!("encoding a PNG into memory: {e}"));
        }
        png
    }

    fn draw_on<DB: DrawingBackend>(&self, root: &DrawingArea<DB, plotters::coord::Shift>) {
        let fail = |e: plotters::drawing::DrawingAreaErrorKind<DB::ErrorType>| -> ! {
            panic!("drawing a chart into memory: {e:?}")
        };
        root.fill(&rgb(255, 255, 255)).unwrap_or_else(|e| fail(e));
        for s in &self.shapes {
            let r = match s {
                Shape::Rect {
                    x0,
                    y0,
                    x1,
                    y1,
                    color,
                } => root.draw(&Rectangle::new([(*x0, *y0), (*x1, *y1)], color.filled())),
                Shape::Frame {
                    x0,
                    y0,
                    x1,
                    y1,
                    color,
                    width,
                } => root.draw(&Rectangle::new(
                    [(*x0, *y0), (*x1, *y1)],
                    ShapeStyle {
                        color: *color,
                        filled: false,
                        stroke_width: *width,
                    },
                )),
                Shape::Line { pts, color, width } => root.draw(&PathElement::new(
                    pts.clone(),
                    ShapeStyle {
                        color: *color,
                        filled: false,
                        stroke_width: *width,
                    },
                )),
                Shape::Dashed {
                    pts,
                    color,
                    width,
                    dash,
                    gap,
                } => root.draw(&DashedPathElement::new(
                    pts.clone(),
                    *dash,
                    *gap,
                    ShapeStyle {
                        color: *color,
                        filled: false,
                        stroke_width: *width,
                    },
                )),
                Shape::Polygon { pts, color } => {
                    root.draw(&Polygon::new(pts.clone(), color.filled()))
                }
                Shape::Circle {
                    x,
                    y,
                    r,
                    color,
                    filled,
                } => root.draw(&Circle::new(
                    (*x, *y),
                    *r,
                    ShapeStyle {
                        color: *color,
                        filled: *filled,
                        stroke_width: if *filled { 0 } else { 2 },
                    },
                )),
                Shape::Text {
                    x,
                    y,
                    text,
                    size,
                    bold,
                    color,
                    anchor,
                } => {
                    let h = match anchor {
                        Anchor::Left => HPos::Left,
                        Anchor::Center => HPos::Center,
                        Anchor::Right => HPos::Right,
                    };
                    let style = TextStyle::from(font(*size, *bold))
                        .color(color)
                        .pos(Pos::new(h, VPos::Center));
                    root.draw(&Text::new(text.clone(), (*x, *y), style))
                }
            };
            r.unwrap_or_else(|e| fail(e));
        }
        root.present().unwrap_or_else(|e| fail(e));
    }
}

/// Memory for the bitmap of a scene `width` pixels wide and about `rows` high, touched (filled
/// white) so that the kernel maps it now: made on another thread while the work that precedes
/// the drawing runs, it takes the page faults of a chart's first touch off the drawing's path.
/// A scene of another size cuts or grows it ([`Scene::png_on`]).
pub fn canvas(width: u32, rows: u32) -> Vec<u8> {
    vec![255u8; width as usize * rows as usize * 3]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_what_xml_forbids_is_replaced() {
        let mut sc = Scene::new(200, 60);
        sc.text(10, 20, "a&<>\"'b", 12.0, false, rgb(0, 0, 0), Anchor::Left);
        sc.text(
            10,
            40,
            "x\u{0}y\u{1b}z\u{FFFF}",
            12.0,
            true,
            rgb(0, 0, 0),
            Anchor::Left,
        );
        let svg = sc.render().svg;
        assert!(svg.contains("a&amp;&lt;&gt;&quot;&apos;b"), "{svg}");
        assert!(svg.contains("x\u{FFFD}y\u{FFFD}z\u{FFFD}"), "{svg}");
        assert!(!svg.contains('\u{0}') && !svg.contains('\u{1b}'), "{svg}");
        // What XML allows is left as it is: tab, line feed, DEL.
        assert_eq!(xml_safe("a\tb\nc\u{7f}".into()), "a\tb\nc\u{7f}");
        // The parser refuses what was written raw before: this test can fail.
        assert!(roxmltree::Document::parse("<text>x\u{0}y</text>").is_err());
        let doc = roxmltree::Document::parse(&svg).expect("well-formed XML");
        let texts: Vec<&str> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text())
            .map(str::trim)
            .collect();
        assert_eq!(texts, ["a&<>\"'b", "x\u{FFFD}y\u{FFFD}z\u{FFFD}"]);
    }

    /// A canvas made ahead draws the same image whatever its size and whatever it holds: one
    /// shorter than the scene (grown), one taller (cut), one of dark bytes (painted white).
    #[test]
    fn a_canvas_made_ahead_draws_the_same_png() {
        let mut sc = Scene::new(120, 50);
        sc.rect(10, 10, 60, 30, rgb(200, 30, 30));
        sc.text(20, 40, "lease", 12.0, false, rgb(0, 0, 0), Anchor::Left);
        let png = sc.png();
        assert_eq!(sc.png_on(canvas(120, 20)), png);
        assert_eq!(sc.png_on(canvas(120, 90)), png);
        assert_eq!(sc.png_on(vec![7u8; 120 * 50 * 3]), png);
        // The white fill is what makes them equal: without it the dark bytes would show.
        let image = image::load_from_memory(&png).expect("a PNG").to_rgb8();
        assert_eq!(image.get_pixel(0, 0).0, [255, 255, 255]);
        assert_eq!(image.get_pixel(30, 20).0, [200, 30, 30]);
    }
}
