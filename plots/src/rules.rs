//! The rules every chart kind gets from the one renderer, applied to a panel before it is laid
//! out: a value axis whose values span more than a decade is drawn logarithmic (within one
//! line too: a noisy series' tail three decades over its body would otherwise leave the body
//! flat on zero), and palette entries past the palette's end are told apart by a dashed
//! stroke rather than a repeated colour.

use crate::figure::{Panel, Scale, Stroke, Ticks, INK};

/// How many distinct colours the palette holds; lines past it are drawn dashed.
pub const PALETTE_SIZE: usize = 10;

/// The panel as it is drawn: its y axis logarithmic where the rule asks for it.
pub fn resolve(p: &Panel) -> Panel {
    let mut out = p.clone();
    if spans_a_decade(p) {
        out.y.scale = Scale::Log10;
        out.y.from_zero = false;
    }
    for l in &mut out.lines {
        if l.colour >= PALETTE_SIZE && l.colour != INK {
            l.stroke = match l.stroke {
                Stroke::Solid => Stroke::Dashed,
                Stroke::SolidMarked => Stroke::DashedMarked,
                s => s,
            };
        }
    }
    out
}

/// True when a linear number axis's values are all above zero and the largest is more than
/// ten times the smallest. Values at or below zero (bars from zero, an error that changes
/// sign) keep the axis linear, where they have a place.
pub fn spans_a_decade(p: &Panel) -> bool {
    if p.y.scale != Scale::Linear || p.y.ticks != Ticks::Number {
        return false;
    }
    let ys: Vec<f64> = p
        .extent_points()
        .into_iter()
        .map(|(_, y)| y)
        .chain(p.levels.iter().map(|l| l.y))
        .filter(|y| y.is_finite())
        .collect();
    if ys.is_empty() || ys.iter().any(|&y| y <= 0.0) {
        return false;
    }
    let lo = ys.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = ys.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    hi > 10.0 * lo
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figure::{Axis, Line};

    fn panel(ys: &[f64]) -> Panel {
        let mut p = Panel::new(
            Axis::sizes(),
            Axis::new("t (us)", Scale::Linear, Ticks::Number).starting_at_zero(),
        );
        p.lines.push(Line {
            name: "a".into(),
            points: ys
                .iter()
                .enumerate()
                .map(|(i, &y)| (i as f64 + 1.0, y))
                .collect(),
            stroke: Stroke::Solid,
            colour: 0,
        });
        p
    }

    #[test]
    fn one_line_over_a_decade_goes_log() {
        assert_eq!(resolve(&panel(&[0.07, 0.08, 1800.0])).y.scale, Scale::Log10);
        assert_eq!(resolve(&panel(&[5.0, 40.0])).y.scale, Scale::Linear);
        // Zero has no place on a log axis: the axis stays linear.
        assert_eq!(resolve(&panel(&[0.0, 1800.0])).y.scale, Scale::Linear);
    }

    #[test]
    fn colours_past_the_palette_are_dashed() {
        let mut p = panel(&[1.0, 2.0]);
        p.lines[0].colour = PALETTE_SIZE + 1;
        assert_eq!(resolve(&p).lines[0].stroke, Stroke::Dashed);
        p.lines[0].stroke = Stroke::SolidMarked;
        assert_eq!(resolve(&p).lines[0].stroke, Stroke::DashedMarked);
        // Near-black is no palette entry: it stays as given.
        p.lines[0].colour = INK;
        p.lines[0].stroke = Stroke::Solid;
        assert_eq!(resolve(&p).lines[0].stroke, Stroke::Solid);
    }
}
