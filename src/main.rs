//! fabbench: benchmark and characterise HPC interconnects.
//!
//! This binary only parses the command line and maps what the library crates return to output
//! and exit codes. [`cli`] holds the command line (the subcommands, the option groups several
//! share, the suites' own options of `run`); [`commands`] has one module per subcommand with
//! its arguments and its `run`: `run` hands a plan to the runner, `autotune`, `characterise`
//! and `calibrate` a request to their crates, `plot` and `report` draw and tabulate stored
//! runs, `compare`, `history` and `export` serve CI performance tracking, `limits` measures
//! this machine's hardware limits, `list` prints the registries; `__rank` is one rank of a job
//! the runner started. Each `run` returns its failure, and [`exit`] alone prints its line and
//! picks the exit status.

mod cli;
mod commands;
mod exit;
mod fraction;
mod signals;
mod single_dash;

use std::io::IsTerminal;

use clap::error::ErrorKind;
use clap::FromArgMatches;

use cli::{Cli, Command};
use exit::Failure;

fn main() {
    std::process::exit(real_main());
}

fn real_main() -> i32 {
    let command = cli::command();
    let shorts = single_dash::run_shorts(&command);
    let (args, single) = match single_dash::split(std::env::args_os().collect(), &shorts) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::USAGE;
        }
    };
    let matches = match command.try_get_matches_from(args) {
        Ok(m) => m,
        Err(e) => return clap_error(e),
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => return clap_error(e),
    };
    init_logging(cli.verbose);
    let outcome = match cli.command {
        Command::Run(args) => {
            let run = matches
                .subcommand_matches("run")
                .expect("the run subcommand was parsed");
            commands::run::run(*args, run, &single, cli::command())
        }
        Command::Autotune(args) => commands::autotune::run(*args).map_err(Failure::from),
        Command::Characterise(args) => commands::characterise::run(*args).map_err(Failure::from),
        Command::Calibrate(args) => commands::calibrate::run(*args).map_err(Failure::from),
        Command::Plot(args) => commands::plot::run(args),
        Command::Report(args) => commands::report::run(args),
        Command::Compare(args) => commands::compare::run(args),
        Command::History(args) => commands::history::run(args),
        Command::Export(args) => commands::export::run(args),
        Command::Limits(args) => commands::limits::run(args).map_err(Failure::from),
        Command::List(args) => commands::list::run(args),
        Command::Rank => runner::rank_process().map_err(Failure::from),
    };
    exit::code(outcome)
}

/// clap's own exit for help and version; one line and status 2 for anything else.
fn clap_error(e: clap::Error) -> i32 {
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            exit::OK
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            exit::USAGE
        }
        _ => {
            eprintln!("{}", one_line(&e.to_string()));
            exit::USAGE
        }
    }
}

/// clap's multi-line error as one line: its first paragraph, joined, and where to look.
fn one_line(rendered: &str) -> String {
    let first: Vec<&str> = rendered
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .map(str::trim)
        .collect();
    format!("{}; see 'fabbench --help'", first.join(" "))
}

fn init_logging(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .try_init();
}
