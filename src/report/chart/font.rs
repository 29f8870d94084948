//! The embedded font: DejaVu Sans, registered once as "sans-serif" so that charts have readable
//! text on a machine with no system fonts. (DejaVu's licence allows embedding; see the crate.)

use plotters::style::FontStyle;
use std::sync::Once;

/// The family name charts ask for.
pub const FAMILY: &str = "sans-serif";

static REGISTER: Once = Once::new();

/// Registers the embedded regular and bold faces; cheap after the first call.
pub fn ensure_registered() {
    REGISTER.call_once(|| {
        plotters::style::register_font(FAMILY, FontStyle::Normal, dejavu::sans::regular())
            .unwrap_or_else(|_| panic!("the embedded DejaVu Sans regular face is a valid font"));
        plotters::style::register_font(FAMILY, FontStyle::Bold, dejavu::sans::bold())
            .unwrap_or_else(|_| panic!("the embedded DejaVu Sans bold face is a valid font"));
    });
}
