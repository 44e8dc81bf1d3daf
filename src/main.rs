//! fabbench: benchmark and characterise HPC interconnects.
//!
//! This binary only parses the command line and wires the crates together: `run` plans and
//! launches jobs (frontend), `__rank` is one rank of a job, `list` prints the registries.

mod cli;
mod events;
mod frontend;
mod list;
mod plan;
mod rank;
mod signals;

use std::io::IsTerminal;

use clap::error::ErrorKind;
use clap::Parser;

use cli::{Cli, Command};

fn main() {
    std::process::exit(real_main());
}

fn real_main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            return match e.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
                    let _ = e.print();
                    frontend::EXIT_OK
                }
                ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                    let _ = e.print();
                    frontend::EXIT_USAGE
                }
                _ => {
                    eprintln!("{}", one_line(&e.to_string()));
                    frontend::EXIT_USAGE
                }
            };
        }
    };
    init_logging(cli.verbose);
    match cli.command {
        Command::Run(args) => frontend::run(*args),
        Command::List(args) => list::run(args),
        Command::Rank => rank::main(),
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
