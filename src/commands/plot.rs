//! `fabbench plot`: its arguments; run and autotune directories read through their readers, every
//! chart they support drawn by the plots crate (a calibration directory's by calibrate) and written complete into one directory; and the
//! same for `fabbench run --plot`, from the run just written.

use std::path::{Path, PathBuf};

use clap::Args;
use plots::{Format, Input, Options, PlotError};

use crate::exit::Failure;

/// Image formats `fabbench plot` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PlotFormat {
    Svg,
    Png,
    Both,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Draws, per suite, latency against size (log-log) or bandwidth against size \
                  (log-x) with a line per run and fabric; per series the latency percentiles as \
                  bands and HdrHistogram's percentile distribution at --hist-size; mpptest \
                  curves with their breakpoints and fits; application kernels' rates and \
                  compute/communication split as bars; speedup, efficiency and the split when a \
                  kernel ran at several rank counts; for an autotune directory, each decision's \
                  sweep; and for a calibration directory, the table beside the calibrated card. \
                  Example: fabbench plot fabbench-results/*-osu_latency-* --format both"
)]
pub struct PlotArgs {
    /// Run directories (as `fabbench run` writes them), autotune or calibration directories
    #[arg(required = true, value_name = "RUN_DIR")]
    pub runs: Vec<PathBuf>,

    /// Directory the charts are written to (default: RUN_DIR/plots for one directory,
    /// ./fabbench-plots for several)
    #[arg(short = 'o', long = "out", value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Image format: SVG for pages and reports, PNG for slides and chat; both by default
    #[arg(long, value_enum, default_value = "both")]
    pub format: PlotFormat,

    /// Message size of the percentile-distribution chart (default: the smallest size every
    /// latency series measured)
    #[arg(long, value_name = "SIZE")]
    pub hist_size: Option<String>,
}

pub fn run(args: PlotArgs) -> Result<(), Failure> {
    let hist_size = args
        .hist_size
        .as_deref()
        .map(bench_core::size::parse_size)
        .transpose()
        .map_err(|e| Failure::Usage(format!("--hist-size: {e}")))?;
    let usage = |e: PlotError| Failure::Usage(e.to_string());
    let dirs: Vec<PathBuf> = args
        .runs
        .iter()
        .flat_map(|d| results::read::runs_in(d))
        .collect();
    // A calibration directory is drawn by the calibrate crate, which depends on plots.
    let mut calibrations = Vec::new();
    let mut inputs = Vec::new();
    for dir in &dirs {
        match calibrate::chart::read(dir).map_err(|e| Failure::Usage(e.to_string()))? {
            Some(chart) => calibrations.push(chart),
            None => inputs.push(Input::load(dir).map_err(usage)?),
        }
    }
    let out = args.out.clone().unwrap_or_else(|| default_dir(&args.runs));
    let mut charts = plots::charts(&inputs, &Options { hist_size }).map_err(usage)?;
    charts.extend(calibrations);
    if charts.is_empty() {
        return Err(Failure::Usage(format!(
            "nothing to plot in {}: {}",
            names(&args.runs),
            holdings(&inputs)
        )));
    }
    let format = match args.format {
        PlotFormat::Svg => Format::Svg,
        PlotFormat::Png => Format::Png,
        PlotFormat::Both => Format::Both,
    };
    let paths = plots::write_all(&charts, &out, format).map_err(crate::exit::plot_failure)?;
    for p in paths {
        println!("{}", p.display());
    }
    Ok(())
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

/// What the inputs hold, for a refusal to say why no chart kind fits: "npb on shm: 0
/// measured points; an autotune outcome with no decisions".
fn holdings(inputs: &[Input]) -> String {
    let mut parts = Vec::new();
    for i in inputs {
        match &i.source {
            plots::Source::Run(run) if run.series.is_empty() => {
                parts.push(format!("run {} has no series", run.manifest.run_id))
            }
            plots::Source::Run(run) => {
                for s in &run.series {
                    let measured = s.points.iter().filter(|p| !p.samples_ns.is_empty()).count();
                    parts.push(format!(
                        "{} on {}: {measured} measured point(s) of {}",
                        s.suite,
                        s.fabric,
                        s.points.len()
                    ));
                }
            }
            plots::Source::Autotune(o) => parts.push(format!(
                "an autotune outcome with {} decision(s)",
                o.decisions.len()
            )),
        }
    }
    if parts.is_empty() {
        "no run or autotune directories".into()
    } else {
        parts.join("; ")
    }
}

/// `fabbench run --plot`: the charts of the runs just written (one, or a scaling run's), as
/// SVG into `dir/plots/`.
pub fn after_run(dir: &Path, runs: &[&results::Run]) -> Result<Vec<PathBuf>, PlotError> {
    let charts = plots::charts_of(runs, &[], &Options::default())?;
    plots::write_all(&charts, &dir.join("plots"), Format::Svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// plots' stored emulated run: osu_latency and osu_bw on rapidio and hyperlink.
    fn emu() -> Input {
        Input::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("plots/tests/data/emu")).unwrap()
    }

    #[test]
    fn a_refusal_says_what_the_directories_hold() {
        let base = emu();
        let with = |run: results::Run| Input {
            dir: base.dir.clone(),
            source: plots::Source::Run(Box::new(run)),
        };
        let mut run = base.run().unwrap().clone();
        let first = &mut run.series[0];
        let (suite, fabric, n) = (
            first.suite.clone(),
            first.fabric.clone(),
            first.points.len(),
        );
        for p in &mut first.points[1..] {
            p.samples_ns.clear();
        }
        let said = holdings(&[with(run.clone())]);
        assert!(
            said.starts_with(&format!(
                "{suite} on {fabric}: 1 measured point(s) of {n}; "
            )),
            "{said}"
        );
        run.series.clear();
        let id = run.manifest.run_id.clone();
        assert_eq!(holdings(&[with(run)]), format!("run {id} has no series"));
    }
}
