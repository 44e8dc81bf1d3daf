//! Bars and stacked bars built from the figure's bands, for the kinds that compare a few
//! named things (kernels, rank counts): a bar is a [`Band`] of two points at x ± a half
//! width, from its low to its high value, on a named x axis whose positions are 0, 1, 2 ...
//! A stacked bar is bands one on top of the other. Drawing bars this way keeps the renderer
//! unaware of them; the legend names a colour once, on its first band.

use crate::figure::{Band, Panel};

/// Half a bar's width in x units: the bars of neighbouring positions keep a gap of 0.3.
pub const HALF_WIDTH: f64 = 0.35;

/// Bars are drawn nearly solid: they are areas to compare, not spreads to see through.
const OPACITY: f64 = 0.85;

/// One part of a stacked bar: its legend name, its height and its palette colour.
#[derive(Debug, Clone)]
pub struct Part<'a> {
    pub name: &'a str,
    pub value: f64,
    pub colour: usize,
}

/// A bar at position `x` from `low` to `high` in `colour`, named in the legend only if no
/// earlier band of the panel has that colour.
pub fn bar(panel: &mut Panel, x: f64, low: f64, high: f64, name: &str, colour: usize) {
    let named = !panel
        .bands
        .iter()
        .any(|b| b.colour == colour && b.opacity > 0.0);
    panel.bands.push(Band {
        name: if named {
            name.to_string()
        } else {
            String::new()
        },
        points: vec![(x - HALF_WIDTH, low, high), (x + HALF_WIDTH, low, high)],
        colour,
        opacity: OPACITY,
    });
}

/// `parts` stacked from zero at position `x`, each from the previous one's top; parts that
/// are not finite and positive are left out (a share of nothing draws nothing).
pub fn stack(panel: &mut Panel, x: f64, parts: &[Part<'_>]) {
    let mut top = 0.0;
    for p in parts
        .iter()
        .filter(|p| p.value.is_finite() && p.value > 0.0)
    {
        bar(panel, x, top, top + p.value, p.name, p.colour);
        top += p.value;
    }
}

/// An invisible band at zero across positions 0..n, half a position beyond each end and at
/// least three positions wide: it fixes the x range, so one or two bars are as wide as three
/// would be rather than filling the panel.
pub fn frame(panel: &mut Panel, n: usize) {
    let (mid, half) = ((n.max(1) - 1) as f64 / 2.0, n.max(3) as f64 / 2.0);
    let (from, to) = (mid - half, mid + half);
    panel.bands.push(Band {
        name: String::new(),
        points: vec![(from, 0.0, 0.0), (to, 0.0, 0.0)],
        colour: 0,
        opacity: 0.0,
    });
}

/// The bars of a panel, without its [`frame`].
pub fn drawn(panel: &Panel) -> impl Iterator<Item = &Band> {
    panel.bands.iter().filter(|b| b.opacity > 0.0)
}

/// The height of a band drawn by [`bar`]: (low, high) at its first point.
pub fn extent(b: &Band) -> Option<(f64, f64)> {
    b.points.first().map(|&(_, lo, hi)| (lo, hi))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figure::{Axis, Scale, Ticks};

    fn panel() -> Panel {
        Panel::new(
            Axis::named("kernel", vec!["a".into(), "b".into()]),
            Axis::new("s", Scale::Linear, Ticks::Number),
        )
    }

    #[test]
    fn a_stack_starts_each_part_on_the_last_ones_top_and_names_each_colour_once() {
        let mut p = panel();
        let parts = |c: f64, m: f64| {
            [
                Part {
                    name: "compute",
                    value: c,
                    colour: 0,
                },
                Part {
                    name: "comm",
                    value: m,
                    colour: 1,
                },
            ]
        };
        stack(&mut p, 0.0, &parts(3.0, 1.0));
        stack(&mut p, 1.0, &parts(2.0, 0.0));
        let heights: Vec<(f64, f64)> = p.bands.iter().filter_map(extent).collect();
        assert_eq!(heights, [(0.0, 3.0), (3.0, 4.0), (0.0, 2.0)]);
        let names: Vec<&str> = p.bands.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, ["compute", "comm", ""]);
        assert_eq!(p.bands[2].points, [(0.65, 0.0, 2.0), (1.35, 0.0, 2.0)]);
    }
}
