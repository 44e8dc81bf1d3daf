//! The command line: `Cli` and its subcommands, assembled by [`command`] with the suites' own
//! options added to `run` ([`suite_options`]); the option groups several commands flatten in
//! (`--set`, `--model`, `-o/--out`) are in [`groups`]. Each subcommand's arguments live with
//! its `run` in [`crate::commands`], which imports only these two leaf modules of `cli`, never
//! this one, so the modules import in one direction. Everything here is parsing; validation
//! happens in the libraries (the runner's plan), so every error is one line.

use clap::{CommandFactory, Parser, Subcommand};

use crate::commands::autotune::AutotuneArgs;
use crate::commands::calibrate::CalibrateArgs;
use crate::commands::characterise::CharacteriseArgs;
use crate::commands::compare::CompareArgs;
use crate::commands::export::ExportArgs;
use crate::commands::history::HistoryArgs;
use crate::commands::limits::LimitsArgs;
use crate::commands::list::ListArgs;
use crate::commands::plot::PlotArgs;
use crate::commands::report::ReportArgs;
use crate::commands::run::RunArgs;

pub mod groups;
pub mod suite_options;

#[derive(Debug, Parser)]
#[command(
    name = "fabbench",
    version,
    about = "Benchmark and characterise HPC interconnects",
    long_about = "fabbench measures HPC interconnects. `run` runs benchmark suites: OSU latency, \
                  bw and bibw (OSU's text layout), mpptest, the NPB kernels EP, IS, CG, MG and \
                  FT, and nbody; on shared memory, TCP, emulated fabrics in virtual time \
                  (Hyperlink, RapidIO, BXI/Portals 4, a fitted LogGP model) and MPI, writing every \
                  raw sample, HdrHistograms, a CSV summary and a manifest to a results directory. \
                  `autotune` searches a fabric's protocol settings, `characterise` fits a LogGP \
                  model card to a fabric, `calibrate` fits an emulated card to a published table; \
                  `plot` draws charts, `report` tabulates runs side by side, `compare` gives \
                  regression verdicts, `history` tracks runs over time, `export` writes CI \
                  dashboards' formats, `limits` measures this machine's hardware limits, and \
                  `list` shows fabrics, suites and tunables."
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
    /// Run suites (OSU latency/bw/bibw, mpptest, NPB EP/IS/CG/MG/FT, nbody) on one or more
    /// fabrics
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
    /// Draw charts of run directories (and autotune directories) as SVG (PNG or both with
    /// --format)
    Plot(PlotArgs),
    /// One table across run directories: per suite and size a column per fabric, run or
    /// setting, with ratios against a reference run
    Report(ReportArgs),
    /// Compare a candidate run with a baseline point by point on the raw samples (exit 1 when
    /// something regressed), or check a run against reference values (--references)
    Compare(CompareArgs),
    /// Keep runs over time in a store and show each metric's trend and change points
    History(HistoryArgs),
    /// Write a run in the formats CI tools read (github-action-benchmark, Bencher) or as
    /// reference values for `compare --references`
    Export(ExportArgs),
    /// Measure this machine's limits (a cache line between two pinned processes, memcpy, a
    /// CMA call, loopback TCP) and state runs' shm and tcp figures as multiples of them
    Limits(LimitsArgs),
    /// List fabrics (and whether each can run here), suites and tunables
    List(ListArgs),
    /// Internal: run as one rank of a job started by fabbench's launcher
    #[command(name = "__rank", hide = true)]
    Rank,
}

/// The whole command line: the derived one, with every suite's options added to `run`.
pub fn command() -> clap::Command {
    Cli::command().mut_subcommand("run", suite_options::add_to)
}

#[cfg(test)]
mod tests {
    use super::suite_options::suite_args;
    use super::*;
    use crate::single_dash::Given;

    #[test]
    fn the_command_line_is_consistent() {
        command().debug_assert();
    }

    #[test]
    fn suite_options_reach_the_suites_that_take_them() {
        let m = command()
            .try_get_matches_from([
                "fabbench", "run", "osu_bw", "-m", "4K:1M", "-i", "20", "-c", "-o", "x",
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
