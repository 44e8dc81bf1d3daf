//! `fabbench plot`: run and autotune directories read through their readers, every chart
//! they support drawn by the plots crate and written complete into one directory; and the
//! same for `fabbench run --plot`, from the run just written.

use std::path::{Path, PathBuf};

use plots::{Format, Input, Options, PlotError};

use crate::cli::{PlotArgs, PlotFormat};
use crate::exit;

pub fn run(args: PlotArgs) -> i32 {
    let hist_size = match args.hist_size.as_deref().map(bench_core::size::parse_size) {
        None => None,
        Some(Ok(s)) => Some(s),
        Some(Err(e)) => {
            eprintln!("error: --hist-size: {e}");
            return exit::USAGE;
        }
    };
    let mut inputs = Vec::new();
    for dir in args.runs.iter().flat_map(|d| results::read::runs_in(d)) {
        match Input::load(&dir) {
            Ok(i) => inputs.push(i),
            Err(e) => {
                eprintln!("error: {e}");
                return exit::USAGE;
            }
        }
    }
    let out = args.out.clone().unwrap_or_else(|| default_dir(&args.runs));
    let charts = match plots::charts(&inputs, &Options { hist_size }) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::USAGE;
        }
    };
    if charts.is_empty() {
        eprintln!(
            "error: nothing to plot in {}: no series with points, and no autotune decisions",
            names(&args.runs)
        );
        return exit::USAGE;
    }
    let format = match args.format {
        PlotFormat::Svg => Format::Svg,
        PlotFormat::Png => Format::Png,
        PlotFormat::Both => Format::Both,
    };
    match plots::write_all(&charts, &out, format) {
        Ok(paths) => {
            for p in paths {
                println!("{}", p.display());
            }
            exit::OK
        }
        Err(e) => {
            eprintln!("error: {e}");
            exit::FAILED
        }
    }
}

/// One directory: its plots/; several: ./fabbench-plots.
fn default_dir(runs: &[PathBuf]) -> PathBuf {
    match runs {
        [one] => one.join("plots"),
        _ => PathBuf::from("fabbench-plots"),
    }
}

fn names(runs: &[PathBuf]) -> String {
    runs.iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `fabbench run --plot`: the charts of the runs just written (one, or a scaling run's), as
/// SVG into `dir/plots/`.
pub fn after_run(dir: &Path, runs: &[&results::Run]) -> Result<Vec<PathBuf>, PlotError> {
    let charts = plots::charts_of(runs, &[], &Options::default())?;
    plots::write_all(&charts, &dir.join("plots"), Format::Svg)
}
