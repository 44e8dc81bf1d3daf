//! The command line: the subcommands, the option groups several of them flatten in (`--set`,
//! `--model`, `-o/--out`), and the suites' own options added to `run`. Each subcommand's
//! arguments live with its `run` in [`crate::commands`]. The options of `run` that set a
//! suite's parameters are not listed anywhere: every registered suite declares its own, and
//! [`command`] adds them, so a new suite brings its options without a change here. Everything
//! here is parsing; validation happens in the runner's plan, so every error is one line.

use std::path::PathBuf;

use clap::{Arg, ArgAction, ArgMatches, Args, CommandFactory, Parser, Subcommand};
use suites::{Dash, OptionKind, SuiteArgs};

use crate::commands::autotune::AutotuneArgs;
use crate::commands::calibrate::CalibrateArgs;
use crate::commands::characterise::CharacteriseArgs;
use crate::commands::compare::CompareArgs;
use crate::commands::export::ExportArgs;
use crate::commands::history::HistoryArgs;
use crate::commands::list::ListArgs;
use crate::commands::plot::PlotArgs;
use crate::commands::report::ReportArgs;
use crate::commands::run::RunArgs;
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

/// `--set NAME=VALUE`: tunables, as `run`, `autotune`, `characterise` and `calibrate` take
/// them. Each command words the help for what the settings do there (`mut_arg("set", ..)`).
#[derive(Debug, Args)]
pub struct TunableArgs {
    /// Set a tunable, e.g. --set eager_limit=8K (repeatable; see `fabbench list tunables`)
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
}

/// `--model FILE`: a model card for an emulated fabric (`run`, `characterise`).
#[derive(Debug, Args)]
pub struct ModelArgs {
    /// A model card (TOML) overriding an emulated fabric's parameters; --set wins over it
    #[arg(long, value_name = "FILE")]
    pub model: Option<PathBuf>,
}

/// `-o/--out DIR`: where a command's new directory is made (`run`, which takes no `-o`,
/// `autotune`, `characterise`, `calibrate`).
#[derive(Debug, Args)]
pub struct OutArgs {
    /// Directory the command's results directory is created in
    #[arg(
        short = 'o',
        long,
        default_value = "fabbench-results",
        value_name = "DIR"
    )]
    pub out: PathBuf,
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
