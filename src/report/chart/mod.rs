//! Charts (PNG and SVG) drawn with plotters and the embedded font.

pub mod font;
