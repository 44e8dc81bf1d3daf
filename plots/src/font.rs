//! The font every chart's text is drawn in, bundled so text renders on a machine without
//! system fonts (a CI container, a compute node). DejaVu Sans (Bitstream Vera licence,
//! redistributable; fonts/LICENSE-DejaVu.txt) is registered with plotters' ab_glyph font
//! backend under the one family name the renderer uses.

use std::sync::OnceLock;

use crate::error::PlotError;

/// The family name every text style uses; the only one registered.
pub const FAMILY: &str = "sans-serif";

static DEJAVU_SANS: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");

/// Registers the bundled font once per process; later calls return the first outcome.
pub fn register() -> Result<(), PlotError> {
    static DONE: OnceLock<bool> = OnceLock::new();
    let ok = *DONE.get_or_init(|| {
        plotters::style::register_font(FAMILY, plotters::style::FontStyle::Normal, DEJAVU_SANS)
            .is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err(PlotError::Font)
    }
}
