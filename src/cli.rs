//! The command line: subcommands and options, parsed by clap. The options of `run` that set a
//! suite's parameters are not listed here: every registered suite declares its own, and
//! [`command`] adds them, so a new suite brings its options without a change here. Everything
//! here is parsing; validation happens in the runner's plan, so every error is one line.

use std::path::PathBuf;

use clap::{Arg, ArgAction, ArgMatches, Args, CommandFactory, Parser, Subcommand};
use suites::{Dash, OptionKind, SuiteArgs};

pub use crate::calibrate_args::CalibrateArgs;
pub use crate::characterise_args::CharacteriseArgs;
pub use crate::compare_args::CompareArgs;
pub use crate::export_args::ExportArgs;
pub use crate::history_args::HistoryArgs;
use crate::single_dash::Given;

#[derive(Debug, Parser)]
#[command(
    name = "fabbench",
    version,
    about = "Benchmark and characterise HPC interconnects",
    long_about = "fabbench runs the standard point-to-point benchmarks (OSU latency, bw, bibw) over \
                  each fabric backend: shared memory, TCP, emulated fabrics (Hyperlink, RapidIO, \
                  BXI/Portals 4) and MPI. It prints OSU's text layout and writes every raw sample, \
                  HdrHistograms, a CSV summary and a manifest to a results directory."
)]
pub struct Cli {
    /// More log output (-v info, -vv debug); RUST_LOG works too
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one or more suites on one or more fabrics
    Run(Box<RunArgs>),
    /// Find the best eager/rendezvous threshold, fragment size and on/off settings of a
    /// fabric by measurement, and write a profile to deploy with the evidence
    Autotune(Box<AutotuneArgs>),
    /// Measure a fabric's LogGP parameters per protocol segment and write a model card the
    /// loggp fabric runs, with a report of the fit
    Characterise(Box<CharacteriseArgs>),
    /// Fit an emulated fabric's assumed card parameters to a measured or published table and
    /// write the calibrated card
    Calibrate(Box<CalibrateArgs>),
    /// Draw charts of run directories (and autotune directories) as SVG and PNG
    Plot(PlotArgs),
    /// One table across run directories: per suite and size a column per fabric, run or
    /// setting, with ratios against a reference run
    Report(ReportArgs),
    /// Compare a candidate run with a baseline point by point on the raw samples (exit 1 when
    /// something regressed), or check a run against reference values (--references)
    Compare(CompareArgs),
    /// Keep runs over time in a store and show each metric's trend and change points
    History(HistoryArgs),
    /// Write a run in the formats CI tools read (github-action-benchmark, Bencher)
    Export(ExportArgs),
    /// List fabrics (and whether each can run here), suites and tunables
    List(ListArgs),
    /// Internal: run as one rank of a job started by fabbench's launcher
    #[command(name = "__rank", hide = true)]
    Rank,
}

/// `fabbench report`'s words, handed unread to the `fabbench-report` binary: its options, help
/// and checks are defined there only, so the two cannot drift apart.
#[derive(Debug, Args)]
#[command(disable_help_flag = true)]
pub struct ReportArgs {
    /// Run directories and options; `fabbench report --help` lists them
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub words: Vec<std::ffi::OsString>,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Writes profile.toml (load it with `fabbench run --profile FILE`), autotune.json, \
                  report.md and, on an MPI fabric, mca-params.conf, ompi-tune.conf and \
                  autotune.env into a new directory under --out. Example: fabbench autotune \
                  --fabric rapidio --budget 2m"
)]
pub struct AutotuneArgs {
    /// Fabric to tune (see `fabbench list fabrics`); FABRIC@mpi tunes its MPI library's variables
    #[arg(short = 'f', long, default_value = "shm", value_name = "FABRIC")]
    pub fabric: String,

    /// Parameters to search, comma separated (default: the thresholds, fragment sizes and
    /// switches that matter on the fabric)
    #[arg(long, value_delimiter = ',', value_name = "NAME[,NAME]")]
    pub params: Option<Vec<String>>,

    /// Suites that judge the settings, comma separated: osu_latency, osu_bw, osu_bibw
    /// (default: the objective's)
    #[arg(long, value_delimiter = ',', value_name = "SUITE[,SUITE]")]
    pub workload: Option<Vec<String>>,

    /// latency (osu_latency), bandwidth (osu_bw) or balanced (both)
    #[arg(long, default_value = "latency", value_name = "OBJECTIVE")]
    pub objective: String,

    /// Wall time the search and verification may take (e.g. 90s, 10m); when it runs out,
    /// autotune decides with what it measured and says so
    #[arg(long, default_value = "10m", value_name = "DURATION")]
    pub budget: String,

    /// Message sizes measured, MIN:MAX (default 1:1M)
    #[arg(long, value_name = "MIN:MAX")]
    pub sizes: Option<String>,

    /// Values within this of the best are reported as near-equal winners (2% or 0.02)
    #[arg(long, default_value = "2%", value_name = "PERCENT")]
    pub tolerance: String,

    /// Hold a tunable fixed, e.g. --set rapidio.copy_mbps=300 (repeatable)
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,

    /// Also run the exhaustive sweep of the threshold (every candidate at every size) and
    /// report what the search saved
    #[arg(long)]
    pub exhaustive: bool,

    /// The mpirun that starts MPI ranks
    #[arg(long, default_value = "mpirun", value_name = "PATH")]
    pub mpirun: String,

    /// Directory the autotune's directory is created in
    #[arg(
        short = 'o',
        long,
        default_value = "fabbench-results",
        value_name = "DIR"
    )]
    pub out: PathBuf,
}

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
                  curves with their breakpoints and fits; speedup and efficiency when a kernel \
                  ran at several rank counts; and, for an autotune directory, each decision's \
                  sweep. Example: fabbench plot fabbench-results/*-osu_latency-* --format both"
)]
pub struct PlotArgs {
    /// Run directories (as `fabbench run` writes them) or autotune directories
    #[arg(required = true, value_name = "RUN_DIR")]
    pub runs: Vec<PathBuf>,

    /// Directory the charts are written to (default: RUN_DIR/plots for one directory,
    /// ./fabbench-plots for several)
    #[arg(short = 'o', long = "out", value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Image format
    #[arg(long, value_enum, default_value = "svg")]
    pub format: PlotFormat,

    /// Message size of the percentile-distribution chart (default: the smallest size every
    /// latency series measured)
    #[arg(long, value_name = "SIZE")]
    pub hist_size: Option<String>,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// What to list: fabrics, suites or tunables (default: all three)
    pub what: Option<String>,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Suites to run, e.g. osu_latency osu_bw (see `fabbench list suites`)
    #[arg(required_unless_present = "resume", value_name = "SUITE")]
    pub suites: Vec<String>,

    /// Continue a run that was kept incomplete (OUT/RUN_ID.partial) from its last measured
    /// point, with its own command line; give nothing else
    #[arg(long, value_name = "RUN_DIR")]
    pub resume: Option<PathBuf>,

    /// Fabric(s) to run on, comma separated; FABRIC@mpi runs a fabric through the MPI library
    /// (see `fabbench list fabrics`)
    #[arg(
        short = 'f',
        long,
        default_value = "shm",
        value_name = "FABRIC[,FABRIC]"
    )]
    pub fabric: String,

    /// Run every listed fabric through the MPI library (same as writing FABRIC@mpi)
    #[arg(long, value_name = "mpi")]
    pub via: Option<String>,

    /// The mpirun that starts MPI ranks
    #[arg(long, default_value = "mpirun", value_name = "PATH")]
    pub mpirun: String,

    /// Number of ranks (default 2; under mpirun or srun, the launcher's count). A list
    /// (`-n 1,2,4`) runs each count in turn and reports speedup and parallel efficiency
    #[arg(short = 'n', long = "ranks", value_name = "N[,N...]", value_parser = parse_rank_counts)]
    pub ranks: Option<RankCounts>,

    /// How ranks started by mpirun or srun meet: tcp://HOST:PORT (rank 0 serves it) or
    /// dir:PATH (a directory every rank can see)
    #[arg(long, value_name = "tcp://HOST:PORT|dir:PATH")]
    pub bootstrap: Option<String>,

    /// Set a tunable, e.g. --set eager_limit=8K (repeatable; see `fabbench list tunables`)
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,

    /// A TOML profile of tunables (as `fabbench autotune` writes); --set wins over it
    #[arg(long, value_name = "FILE")]
    pub profile: Option<PathBuf>,

    /// A model card (TOML) overriding an emulated fabric's parameters; --set wins over it
    #[arg(long, value_name = "FILE")]
    pub model: Option<PathBuf>,

    /// Directory the run's results directory is created in
    #[arg(long, default_value = "fabbench-results", value_name = "DIR")]
    pub out: PathBuf,

    /// Also draw the suites' charts (SVG) into the run directory's plots/
    #[arg(long)]
    pub plot: bool,
}

/// `-n`'s rank counts: one, or several for a scaling run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankCounts(pub Vec<usize>);

/// The largest rank count `-n` takes (threads or processes on one host, or a launcher's job).
const MAX_RANKS: usize = 4096;

fn parse_rank_counts(text: &str) -> Result<RankCounts, String> {
    let mut counts = Vec::new();
    for part in text.split(',') {
        let n: usize = part
            .trim()
            .parse()
            .map_err(|_| format!("'{part}' is not a rank count; give N or a list such as 1,2,4"))?;
        if n == 0 || n > MAX_RANKS {
            return Err(format!("{n} ranks: give 1 to {MAX_RANKS}"));
        }
        if counts.contains(&n) {
            return Err(format!("{n} is listed twice; list each rank count once"));
        }
        counts.push(n);
    }
    counts.sort_unstable();
    Ok(RankCounts(counts))
}

/// Where suites' options are listed in `fabbench run --help`.
const SUITE_HEADING: &str = "Suite options";

/// The suites that take an option, for its help line.
fn takers(long: &str) -> Vec<&'static str> {
    suites::SUITES
        .iter()
        .filter(|s| s.options().iter().any(|x| x.long == long))
        .map(|s| s.name())
        .collect()
}

/// The help for options spelled with a single dash, which clap does not parse (see
/// [`crate::single_dash`]): listed after `run`'s own options.
fn single_dash_help() -> String {
    let opts: Vec<suites::OptionDef> = suites::all_options()
        .into_iter()
        .filter(|o| o.dash == Dash::One)
        .collect();
    let mut out = String::from(
        "mpptest options (a single dash, as mpptest spells them; paste them as a guide gives them):\n",
    );
    for o in &opts {
        let left = format!("-{} {}", o.long, o.value_name);
        out.push_str(&format!("  {:<28}{}\n", left.trim_end(), o.help));
    }
    out.push_str(
        "\nmpptest's default C.It output is replaced by gnuplot's data layout (size, time in us, \
         rate), followed by the breakpoints fabbench finds in the curve. With mpptest named, \
         write fabbench's short options apart from their values (-f shm, not -fshm).",
    );
    out
}

/// The whole command line: the derived one, with every suite's options added to `run`.
pub fn command() -> clap::Command {
    Cli::command().mut_subcommand("run", |run| {
        let mut run = run.after_help(single_dash_help());
        for o in suites::all_options()
            .into_iter()
            .filter(|o| o.dash == Dash::Two)
        {
            let mut arg = Arg::new(o.long)
                .long(o.long)
                .help(format!("{} [{}]", o.help, takers(o.long).join(", ")))
                .help_heading(SUITE_HEADING);
            if let Some(c) = o.short {
                arg = arg.short(c);
            }
            arg = match o.kind {
                OptionKind::Flag => arg.action(ArgAction::SetTrue),
                OptionKind::Count => arg
                    .value_name(o.value_name)
                    .value_parser(clap::value_parser!(u64)),
                OptionKind::Text | OptionKind::Values(_) => arg.value_name(o.value_name),
                // Attached only, so a following suite name is never taken for its value.
                OptionKind::FlagOrValue => arg
                    .value_name(o.value_name)
                    .num_args(0..=1)
                    .require_equals(true)
                    .default_missing_value(""),
            };
            run = run.arg(arg);
        }
        run
    })
}

/// The suite options given on `run`'s command line (clap's, and the single-dash ones in
/// `single`), for the suite `name`; an option given that none of `names` takes is refused with
/// the suites that do take it.
pub fn suite_args(
    run: &ArgMatches,
    single: &Given,
    name: &str,
    names: &[String],
) -> Result<SuiteArgs, String> {
    let all = suites::all_options();
    let given: Vec<&suites::OptionDef> = all
        .iter()
        .filter(|o| o.dash == Dash::Two)
        .filter(|o| run.value_source(o.long) == Some(clap::parser::ValueSource::CommandLine))
        .chain(
            all.iter()
                .filter(|o| o.dash == Dash::One && single.iter().any(|(n, _)| n == o.long)),
        )
        .collect();
    for o in &given {
        let taken = names
            .iter()
            .any(|n| suites::find(n).is_some_and(|s| s.options().iter().any(|x| x.long == o.long)));
        if !taken {
            return Err(format!(
                "{} is not an option of {}; it is one of {}",
                o.spelled(),
                names.join(", "),
                takers(o.long).join(", ")
            ));
        }
    }
    let mut args = SuiteArgs::new();
    let Some(suite) = suites::find(name) else {
        return Ok(args);
    };
    for (n, v) in single {
        if suite
            .options()
            .iter()
            .any(|x| x.long == n && x.dash == Dash::One)
        {
            args.set(n, v.clone());
        }
    }
    for o in given
        .into_iter()
        .filter(|o| o.dash == Dash::Two && suite.options().iter().any(|x| x.long == o.long))
    {
        match o.kind {
            OptionKind::Flag => {
                if run.get_flag(o.long) {
                    args.flag_on(o.long);
                }
            }
            OptionKind::Count => {
                if let Some(v) = run.get_one::<u64>(o.long) {
                    args.set(o.long, v.to_string());
                }
            }
            OptionKind::Text | OptionKind::Values(_) | OptionKind::FlagOrValue => {
                if let Some(v) = run.get_one::<String>(o.long) {
                    args.set(o.long, v.clone());
                }
            }
        }
    }
    Ok(args)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_is_consistent() {
        command().debug_assert();
    }

    #[test]
    fn suite_options_reach_the_suites_that_take_them() {
        let m = command()
            .try_get_matches_from([
                "fabbench", "run", "osu_bw", "-m", "4K:1M", "-i", "20", "-c", "--out", "x",
            ])
            .unwrap();
        let run = m.subcommand_matches("run").unwrap();
        let names = vec!["osu_bw".to_string()];
        let a = suite_args(run, &Given::new(), "osu_bw", &names).unwrap();
        assert_eq!(a.get("message-size"), Some("4K:1M"));
        assert_eq!(a.get("iterations"), Some("20"));
        assert!(a.flag("validation") && !a.flag("tail-lat"));
        let e = command()
            .try_get_matches_from(["fabbench", "run", "osu_bw", "-i", "abc"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("invalid value 'abc'"), "{e}");
    }
}
