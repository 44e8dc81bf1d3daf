//! What a chart shows, as plain data: panels with their axes, lines, bands, markers and
//! marked positions. Every chart kind builds a [`Figure`] from runs and nothing else; the
//! renderer ([`crate::render`]) is the only code that knows plotters. Keeping the two apart
//! lets tests check what a chart holds without parsing pixels, and lets one renderer give
//! every chart the same fonts, colours and tick rules.

/// One image: a title over one or more panels side by side.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// The first line of the title: what is plotted, the suite, the fabrics.
    pub title: String,
    /// A smaller second line: host, sizes, what is emulated.
    pub subtitle: String,
    pub panels: Vec<Panel>,
}

/// One plotting area with its own axes.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    pub x: Axis,
    pub y: Axis,
    pub lines: Vec<Line>,
    pub bands: Vec<Band>,
    /// Vertical marks at an x value (a chosen setting, a default).
    pub marks: Vec<Mark>,
    /// Shaded x ranges (a breakpoint's interval, the near-equal set).
    pub spans: Vec<Span>,
    /// Horizontal reference lines (a ratio of 1).
    pub levels: Vec<Level>,
    /// Where the legend goes: the corner the data leave empty.
    pub legend: Corner,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Corner {
    UpperLeft,
    UpperRight,
    LowerLeft,
    LowerRight,
}

/// How values map onto an axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    Linear,
    /// Powers of ten apart.
    Log10,
    /// Powers of two apart: message sizes, whose sweeps double.
    Log2,
    /// HdrHistogram's percentile axis: a value `v` is the percentile `1 - 1/v` (1 = 0 %,
    /// 10 = 90 %, 100 = 99 %), spaced by powers of ten.
    Percentile,
}

/// How tick labels are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ticks {
    /// Plain numbers with as many decimals as the spacing needs.
    Number,
    /// Byte counts: 1, 512, 4K, 1M.
    Bytes,
    /// Percentiles: 0%, 90%, 99%, 99.9%.
    Percent,
    /// The axis's `names`, at whole positions 0, 1, 2 ... (a history's revisions).
    Names,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// The axis title with its unit: "latency (us)".
    pub label: String,
    pub scale: Scale,
    pub ticks: Ticks,
    /// Start the axis at zero even if the data do not reach it (linear axes only).
    pub from_zero: bool,
    /// With [`Ticks::Names`]: the label of each whole position, from 0.
    pub names: Vec<String>,
}

impl Axis {
    pub fn new(label: impl Into<String>, scale: Scale, ticks: Ticks) -> Axis {
        Axis {
            label: label.into(),
            scale,
            ticks,
            from_zero: false,
            names: Vec::new(),
        }
    }

    /// A linear axis of named positions 0, 1, 2 ...: `names[i]` labels position i (a
    /// history's entries by revision).
    pub fn named(label: impl Into<String>, names: Vec<String>) -> Axis {
        Axis {
            names,
            ..Axis::new(label, Scale::Linear, Ticks::Names)
        }
    }

    /// Message sizes in bytes, doubling.
    pub fn sizes() -> Axis {
        Axis::new("message size (bytes)", Scale::Log2, Ticks::Bytes)
    }

    pub fn starting_at_zero(mut self) -> Axis {
        self.from_zero = true;
        self
    }
}

/// How a line is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stroke {
    Solid,
    Dashed,
    /// Markers only, no line between them (measured points under a fitted line).
    Markers,
    /// A line with a marker at each point.
    SolidMarked,
    /// A dashed line with a marker at each point (a line past the palette's colours).
    DashedMarked,
}

/// The colour index of near-black, for data drawn over the palette (a percentile chart's
/// median over its bands).
pub const INK: usize = usize::MAX;

#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// The legend entry; empty for a line without one (a fit drawn in its data's colour).
    pub name: String,
    pub points: Vec<(f64, f64)>,
    pub stroke: Stroke,
    /// Index into the palette; lines that belong together share it.
    pub colour: usize,
}

/// A filled region between two curves over the same x values.
#[derive(Debug, Clone, PartialEq)]
pub struct Band {
    pub name: String,
    /// (x, low, high).
    pub points: Vec<(f64, f64, f64)>,
    pub colour: usize,
    /// 0.0 (invisible) to 1.0 (solid): inner bands darker than outer ones.
    pub opacity: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    pub x: f64,
    /// Written beside the line, at the top of the panel: "chosen 16KiB".
    pub label: String,
    pub stroke: Stroke,
    pub colour: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    pub from: f64,
    pub to: f64,
    pub label: String,
    pub colour: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Level {
    pub y: f64,
    pub label: String,
}

impl Panel {
    pub fn new(x: Axis, y: Axis) -> Panel {
        Panel {
            x,
            y,
            lines: Vec::new(),
            bands: Vec::new(),
            marks: Vec::new(),
            spans: Vec::new(),
            levels: Vec::new(),
            legend: Corner::UpperLeft,
        }
    }

    /// Every (x, y) the panel must show, for the axis ranges.
    pub(crate) fn extent_points(&self) -> Vec<(f64, f64)> {
        let mut v: Vec<(f64, f64)> = self
            .lines
            .iter()
            .flat_map(|l| l.points.iter().copied())
            .collect();
        for b in &self.bands {
            for &(x, lo, hi) in &b.points {
                v.push((x, lo));
                v.push((x, hi));
            }
        }
        v
    }

    /// True when there is nothing to draw.
    pub fn is_empty(&self) -> bool {
        self.lines.iter().all(|l| l.points.is_empty())
            && self.bands.iter().all(|b| b.points.is_empty())
    }
}

impl Figure {
    pub fn new(title: impl Into<String>, subtitle: impl Into<String>, panels: Vec<Panel>) -> Self {
        Figure {
            title: title.into(),
            subtitle: subtitle.into(),
            panels,
        }
    }
}
