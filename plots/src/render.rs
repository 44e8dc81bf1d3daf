//! Draws a [`Figure`] with plotters, as an SVG document or a PNG image. This is the only
//! module that knows plotters: fonts, palette, margins, legend and tick rules are decided
//! here once for every chart kind. Log axes are drawn linear over the logarithm with the
//! ticks [`crate::axis`] chooses, so sizes read 1, 4K, 1M and percentiles 99.9 %.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::axis;
use crate::error::PlotError;
use crate::figure::{Corner, Figure, Panel, Stroke};
use crate::font::{self, FAMILY};

/// Tableau's ten colours: distinguishable, print well, and stay readable for the common
/// colour-vision deficiencies in the first few entries.
const PALETTE: [RGBColor; 10] = [
    RGBColor(0x4e, 0x79, 0xa7),
    RGBColor(0xf2, 0x8e, 0x2b),
    RGBColor(0xe1, 0x57, 0x59),
    RGBColor(0x59, 0xa1, 0x4f),
    RGBColor(0xb0, 0x7a, 0xa1),
    RGBColor(0x76, 0xb7, 0xb2),
    RGBColor(0xed, 0xc9, 0x48),
    RGBColor(0x9c, 0x75, 0x5f),
    RGBColor(0xff, 0x9d, 0xa7),
    RGBColor(0xba, 0xb0, 0xac),
];

/// The colour of palette entry `i` (entries repeat after ten).
pub fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

const PANEL_WIDTH: u32 = 880;
const HEIGHT: u32 = 560;

/// The image size a figure is drawn at: one panel 880 wide, each further panel beside it.
pub fn size_of(f: &Figure) -> (u32, u32) {
    (PANEL_WIDTH * f.panels.len().max(1) as u32, HEIGHT)
}

/// The figure as an SVG document.
pub fn svg(f: &Figure) -> Result<String, PlotError> {
    font::register()?;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size_of(f)).into_drawing_area();
        draw(f, &root)?;
        root.present().map_err(draw_error)?;
    }
    Ok(out)
}

/// The figure as a PNG file's bytes.
pub fn png(f: &Figure) -> Result<Vec<u8>, PlotError> {
    font::register()?;
    let (w, h) = size_of(f);
    let mut rgb = vec![0u8; (w * h * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
        draw(f, &root)?;
        root.present().map_err(draw_error)?;
    }
    let mut bytes = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut bytes, w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        // Charts are flat colour: the best compression costs milliseconds and halves files
        // people attach to reports and commit beside READMEs.
        enc.set_compression(png::Compression::Best);
        enc.set_adaptive_filter(png::AdaptiveFilterType::Adaptive);
        let mut writer = enc
            .write_header()
            .map_err(|e| PlotError::Draw(e.to_string()))?;
        writer
            .write_image_data(&rgb)
            .map_err(|e| PlotError::Draw(e.to_string()))?;
    }
    Ok(bytes)
}

fn draw_error<E: std::error::Error + Send + Sync>(e: DrawingAreaErrorKind<E>) -> PlotError {
    PlotError::Draw(e.to_string())
}

fn draw<DB: DrawingBackend>(
    f: &Figure,
    root: &DrawingArea<DB, plotters::coord::Shift>,
) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(draw_error)?;
    let titled = root
        .titled(&f.title, (FAMILY, 22).into_font().color(&BLACK))
        .map_err(draw_error)?;
    let body = if f.subtitle.is_empty() {
        titled
    } else {
        titled
            .titled(
                &f.subtitle,
                (FAMILY, 14).into_font().color(&RGBColor(80, 80, 80)),
            )
            .map_err(draw_error)?
    };
    let areas = body.split_evenly((1, f.panels.len().max(1)));
    for (panel, area) in f.panels.iter().zip(areas.iter()) {
        draw_panel(panel, area)?;
    }
    Ok(())
}

fn draw_panel<DB: DrawingBackend>(
    p: &Panel,
    area: &DrawingArea<DB, plotters::coord::Shift>,
) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    let (xs, ys) = (p.x.scale, p.y.scale);
    let placed: Vec<(f64, f64)> = p
        .extent_points()
        .into_iter()
        .filter_map(|(x, y)| Some((axis::place(xs, x)?, axis::place(ys, y)?)))
        .collect();
    let mut xts: Vec<f64> = placed.iter().map(|&(x, _)| x).collect();
    let mut yts: Vec<f64> = placed.iter().map(|&(_, y)| y).collect();
    xts.extend(p.marks.iter().filter_map(|m| axis::place(xs, m.x)));
    xts.extend(
        p.spans
            .iter()
            .flat_map(|s| [s.from, s.to])
            .filter_map(|v| axis::place(xs, v)),
    );
    yts.extend(p.levels.iter().filter_map(|l| axis::place(ys, l.y)));
    let (x0, x1) = axis::range(&p.x, &xts);
    let (y0, mut y1) = axis::range(&p.y, &yts);
    // Room above the data for a legend in an upper corner, so it never hides a line.
    let entries = p.lines.iter().filter(|l| !l.name.is_empty()).count()
        + p.bands.iter().filter(|b| !b.name.is_empty()).count();
    if entries > 0 && matches!(p.legend, Corner::UpperLeft | Corner::UpperRight) {
        let plot_px = f64::from(area.dim_in_pixel().1).max(200.0) - 60.0;
        let legend_px = 20.0 * entries as f64 + 24.0;
        let share = (legend_px / plot_px).min(0.6);
        y1 += (y1 - y0) * share / (1.0 - share);
    }
    let x_ticks = axis::ticks_for(&p.x, x0, x1);
    let y_ticks = axis::ticks_for(&p.y, y0, y1);

    let mut chart = ChartBuilder::on(area)
        .margin(12)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(Ticked::new(x0, x1, x_ticks), Ticked::new(y0, y1, y_ticks))
        .map_err(draw_error)?;
    let x_label = |t: &f64| axis::label(&p.x, *t);
    let y_label = |t: &f64| axis::label(&p.y, *t);
    chart
        .configure_mesh()
        .x_desc(p.x.label.as_str())
        .y_desc(p.y.label.as_str())
        .x_label_formatter(&x_label)
        .y_label_formatter(&y_label)
        .label_style((FAMILY, 14))
        .axis_desc_style((FAMILY, 16))
        .bold_line_style(RGBColor(220, 220, 220))
        .light_line_style(WHITE)
        .draw()
        .map_err(draw_error)?;

    let at = |x: f64, y: f64| Some((axis::place(xs, x)?, axis::place(ys, y)?));

    // Labels of marks and spans go one row lower each, so neighbours do not overprint.
    let mut row = 0;
    for s in &p.spans {
        let (Some(a), Some(b)) = (axis::place(xs, s.from), axis::place(xs, s.to)) else {
            continue;
        };
        let c = colour(s.colour);
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(a, y0), (b, y1)],
                c.mix(0.14).filled(),
            )))
            .map_err(draw_error)?;
        top_label(
            &mut chart,
            &s.label,
            (a + b) / 2.0,
            y1,
            c,
            HPos::Center,
            row,
        )?;
        row += 1;
    }

    for b in &p.bands {
        let upper: Vec<(f64, f64)> = b
            .points
            .iter()
            .filter_map(|&(x, _, hi)| at(x, hi))
            .collect();
        let mut lower: Vec<(f64, f64)> = b
            .points
            .iter()
            .filter_map(|&(x, lo, _)| at(x, lo))
            .collect();
        if upper.len() < 2 || lower.len() != upper.len() {
            continue;
        }
        lower.reverse();
        let c = colour(b.colour);
        let fill = c.mix(b.opacity).filled();
        let outline: Vec<(f64, f64)> = upper.into_iter().chain(lower).collect();
        let series = chart
            .draw_series(std::iter::once(Polygon::new(outline, fill)))
            .map_err(draw_error)?;
        if !b.name.is_empty() {
            series
                .label(b.name.clone())
                .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 20, y + 6)], fill));
        }
    }

    for l in &p.levels {
        let Some(y) = axis::place(ys, l.y) else {
            continue;
        };
        let grey = RGBColor(90, 90, 90);
        chart
            .draw_series(DashedLineSeries::new(
                vec![(x0, y), (x1, y)],
                6,
                4,
                grey.stroke_width(1),
            ))
            .map_err(draw_error)?;
        if !l.label.is_empty() {
            // At the left end, above the line: the right end is where curves most often
            // end near a reference level.
            let style = TextStyle::from((FAMILY, 13).into_font())
                .color(&grey)
                .pos(Pos::new(HPos::Left, VPos::Bottom));
            chart
                .draw_series(std::iter::once(
                    EmptyElement::at((x0, y)) + Text::new(l.label.clone(), (6, -3), style),
                ))
                .map_err(draw_error)?;
        }
    }

    for l in &p.lines {
        let pts: Vec<(f64, f64)> = l.points.iter().filter_map(|&(x, y)| at(x, y)).collect();
        if pts.is_empty() {
            continue;
        }
        let c = colour(l.colour);
        let style = c.stroke_width(2);
        let anno = match l.stroke {
            Stroke::Solid => chart
                .draw_series(LineSeries::new(pts, style))
                .map_err(draw_error)?,
            Stroke::SolidMarked => chart
                .draw_series(LineSeries::new(pts, style).point_size(3))
                .map_err(draw_error)?,
            Stroke::Dashed => chart
                .draw_series(DashedLineSeries::new(pts, 8, 5, style))
                .map_err(draw_error)?,
            Stroke::Markers => chart
                .draw_series(pts.into_iter().map(|xy| Circle::new(xy, 4, c.filled())))
                .map_err(draw_error)?,
        };
        if !l.name.is_empty() {
            let anno = anno.label(l.name.clone());
            if l.stroke == Stroke::Markers {
                anno.legend(move |(x, y)| Circle::new((x + 10, y), 4, c.filled()));
            } else {
                anno.legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
            }
        }
    }

    for m in &p.marks {
        let Some(x) = axis::place(xs, m.x) else {
            continue;
        };
        let c = colour(m.colour);
        let style = c.stroke_width(2);
        match m.stroke {
            Stroke::Dashed => chart
                .draw_series(DashedLineSeries::new(vec![(x, y0), (x, y1)], 6, 4, style))
                .map_err(draw_error)?,
            _ => chart
                .draw_series(LineSeries::new(vec![(x, y0), (x, y1)], style))
                .map_err(draw_error)?,
        };
        top_label(&mut chart, &m.label, x, y1, c, HPos::Left, row)?;
        row += 1;
    }

    if p.lines.iter().any(|l| !l.name.is_empty()) || p.bands.iter().any(|b| !b.name.is_empty()) {
        chart
            .configure_series_labels()
            .position(match p.legend {
                Corner::UpperLeft => SeriesLabelPosition::UpperLeft,
                Corner::UpperRight => SeriesLabelPosition::UpperRight,
                Corner::LowerLeft => SeriesLabelPosition::LowerLeft,
                Corner::LowerRight => SeriesLabelPosition::LowerRight,
            })
            .label_font((FAMILY, 14))
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(160, 160, 160))
            .draw()
            .map_err(draw_error)?;
    }
    Ok(())
}

/// A linear f64 axis whose ticks are exactly the ones [`axis::ticks`] chose (plotters' own
/// rule picks decimal steps, which on a log2 axis would land between powers of two).
struct Ticked {
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
}

impl Ticked {
    fn new(lo: f64, hi: f64, ticks: Vec<f64>) -> Ticked {
        Ticked { lo, hi, ticks }
    }
}

impl plotters::coord::ranged1d::Ranged for Ticked {
    type FormatOption = plotters::coord::ranged1d::DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let f = (v - self.lo) / (self.hi - self.lo);
        limit.0 + (f * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<Hint: plotters::coord::ranged1d::KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        // Bold lines and labels at the chosen ticks; plotters asks again with a hint that
        // allows light points for the fine grid, which these charts leave out.
        if hint.weight().allow_light_points() || hint.max_num_points() == 0 {
            return Vec::new();
        }
        self.ticks.clone()
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

/// A label just inside the top of the panel at drawn x `x`, `row` lines down.
fn top_label<DB: DrawingBackend, X, Y>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
    text: &str,
    x: f64,
    y_top: f64,
    c: RGBColor,
    h: HPos,
    row: i32,
) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
    X: plotters::coord::ranged1d::Ranged<ValueType = f64>,
    Y: plotters::coord::ranged1d::Ranged<ValueType = f64>,
{
    if text.is_empty() {
        return Ok(());
    }
    let style = TextStyle::from((FAMILY, 13).into_font())
        .color(&c)
        .pos(Pos::new(h, VPos::Top));
    let dx = if matches!(h, HPos::Left) { 4 } else { 0 };
    chart
        .draw_series(std::iter::once(
            EmptyElement::at((x, y_top)) + Text::new(text.to_string(), (dx, 4 + 16 * row), style),
        ))
        .map_err(draw_error)?;
    Ok(())
}
