//! plots draws fabbench's charts from stored runs: latency against size on log-log axes and
//! bandwidth against size on a log-x axis with a line per run and fabric, latency percentiles
//! per size as bands, HdrHistogram's percentile distribution at one size, mpptest curves with
//! their breakpoints and fitted segments, application kernels' rates and compute/communication
//! split as bars, speedup, efficiency and split of kernels run at several rank counts, and
//! each autotune decision's sweep. Each chart kind ([`kinds`]) turns runs
//! into a [`figure::Figure`], plain data a test can inspect; [`render`] alone draws figures
//! with plotters, as SVG or PNG, in a bundled font ([`font`]) so text renders on machines
//! without system fonts; [`output`] writes them, each file complete or not at all.

pub mod axis;
pub mod error;
pub mod figure;
pub mod font;
pub mod input;
pub mod kinds;
pub mod label;
pub mod layout;
pub mod output;
pub mod render;
pub mod rules;
pub mod text;

pub use error::PlotError;
pub use figure::Figure;
pub use input::{Input, Source};
pub use output::{write_all, Format};

/// A chart to draw: a file name and what it shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// The file name without extension: `latency-osu_latency`, `mpptest-shm`.
    pub name: String,
    pub figure: Figure,
}

impl Chart {
    pub fn svg(&self) -> Result<String, PlotError> {
        render::svg(&self.figure)
    }

    pub fn png(&self) -> Result<Vec<u8>, PlotError> {
        render::png(&self.figure)
    }
}

/// Choices the command line makes.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The size of the percentile-distribution charts; None: each series' smallest.
    pub hist_size: Option<u64>,
}

/// Every chart the inputs support, in a stable order, with unique names.
pub fn charts(inputs: &[Input], opts: &Options) -> Result<Vec<Chart>, PlotError> {
    let runs: Vec<&results::Run> = inputs.iter().filter_map(Input::run).collect();
    let outcomes: Vec<&autotune::Outcome> = inputs.iter().filter_map(Input::autotune).collect();
    charts_of(&runs, &outcomes, opts)
}

/// The charts of runs and autotune outcomes already in memory, borrowed.
pub fn charts_of(
    runs: &[&results::Run],
    outcomes: &[&autotune::Outcome],
    opts: &Options,
) -> Result<Vec<Chart>, PlotError> {
    let mut out = kinds::all(runs, outcomes, opts)?;
    let mut seen = std::collections::BTreeMap::<String, usize>::new();
    for c in &mut out {
        let n = seen.entry(c.name.clone()).or_insert(0);
        *n += 1;
        if *n > 1 {
            c.name = format!("{}-{}", c.name, n);
        }
    }
    Ok(out)
}

/// The charts of runs as (title, file stem, SVG) for a report to embed; a chart that fails
/// to draw is left out rather than failing the report.
pub fn report_figures(runs: &[results::Run]) -> Vec<(String, String, String)> {
    let runs: Vec<&results::Run> = runs.iter().collect();
    let Ok(charts) = charts_of(&runs, &[], &Options::default()) else {
        return Vec::new();
    };
    charts
        .into_iter()
        .filter_map(|c| {
            let svg = c.svg().ok()?;
            Some((c.figure.title.clone(), c.name, svg))
        })
        .collect()
}
