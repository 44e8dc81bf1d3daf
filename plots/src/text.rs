//! How much room a text takes in the bundled font, so the layout can keep every label inside
//! the image and away from its neighbours before anything is drawn.

use plotters::style::{FontDesc, FontFamily, FontStyle};

use crate::font::FAMILY;

/// The width and height in pixels of `text` at font size `px`. A text the font cannot lay out
/// is estimated at 0.62 em per character (DejaVu Sans's average is under that), so a layout
/// errs on the side of room.
pub fn size(text: &str, px: f64) -> (f64, f64) {
    if text.is_empty() {
        return (0.0, px);
    }
    // Measured in the font the image is drawn in, whoever asks first.
    let _ = crate::font::register();
    let desc = FontDesc::new(FontFamily::Name(FAMILY), px, FontStyle::Normal);
    let w = match desc.box_size(text) {
        Ok((w, _)) => f64::from(w),
        Err(_) => 0.62 * px * text.chars().count() as f64,
    };
    (w, px)
}

/// `text` cut into lines no wider than `width`: at " · " between a subtitle's parts first,
/// then after commas, then between words; a word wider than `width` stays whole on its own
/// line.
pub fn wrap(text: &str, px: f64, width: f64) -> Vec<String> {
    wrap_at(text, px, width, &[" · ", ", ", " "])
}

fn wrap_at(text: &str, px: f64, width: f64, seps: &[&str]) -> Vec<String> {
    if size(text, px).0 <= width {
        return vec![text.to_string()];
    }
    let Some((sep, finer)) = seps.split_first() else {
        return vec![text.to_string()];
    };
    if !text.contains(sep) {
        return wrap_at(text, px, width, finer);
    }
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for part in text.split(sep) {
        let joined = if cur.is_empty() {
            part.to_string()
        } else {
            format!("{cur}{sep}{part}")
        };
        if cur.is_empty() || size(&joined, px).0 <= width {
            cur = joined;
        } else {
            // A comma stays at the end of its line; a dot or a space goes with the break.
            let end = if sep.trim() == "," { "," } else { "" };
            lines.push(format!("{cur}{end}"));
            cur = part.to_string();
        }
    }
    lines.push(cur);
    lines
        .into_iter()
        .flat_map(|l| wrap_at(&l, px, width, finer))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longer_text_is_wider_and_wraps_at_the_widest_separator_first() {
        crate::font::register().unwrap();
        let (a, _) = size("1K", 13.0);
        let (b, _) = size("1K 2K 4K 8K", 13.0);
        assert!(a > 5.0 && b > 3.0 * a, "{a} {b}");
        let lines = wrap(
            "host vm (AMD EPYC, 2 CPUs) · 2 ranks · rapidio emulated",
            14.0,
            260.0,
        );
        assert!(lines.len() >= 2, "{lines:?}");
        assert!(lines[0].starts_with("host vm"), "{lines:?}");
        assert!(lines.iter().all(|l| size(l, 14.0).0 <= 260.0), "{lines:?}");
    }
}
