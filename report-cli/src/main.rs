//! fabbench-report: `fabbench report` itself, in a package of its own because it links polars.
//! The `fabbench` binary, which every rank runs, builds without it: `fabbench report ARGS`
//! replaces itself with `fabbench-report ARGS` found beside it; run directly it works the same.

mod args;
mod report;

/// The exit statuses `fabbench` uses, for the three this binary returns.
mod exit {
    pub const OK: i32 = 0;
    pub const USAGE: i32 = 2;
    /// The table or its figures could not be written.
    pub const UNWRITTEN: i32 = 3;
}

use clap::error::ErrorKind;
use clap::Parser;

#[derive(Debug, Parser)]
#[command(
    name = "fabbench report",
    version,
    about = "One table across run directories: per suite and size a column per fabric, run or \
             setting, with ratios against a reference run"
)]
struct Cli {
    #[command(flatten)]
    args: args::ReportArgs,
}

fn main() {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = match e.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => exit::OK,
                _ => exit::USAGE,
            };
            if code == exit::OK {
                let _ = e.print();
            } else {
                // One line, as fabbench prints its errors: clap's first paragraph, joined.
                let text = e.to_string();
                let first: Vec<&str> = text
                    .lines()
                    .take_while(|l| !l.trim().is_empty())
                    .map(str::trim)
                    .collect();
                eprintln!("{}", first.join(" "));
            }
            std::process::exit(code);
        }
    };
    std::process::exit(report::run(cli.args));
}
