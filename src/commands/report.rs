//! `fabbench report`: its words, and the hand-over to the `fabbench-report` binary beside this one.
//! The report links polars, which would make this binary, the one every rank runs, many times
//! larger and its first build many minutes longer; so it lives in a package of its own
//! (`report-cli/`) and this process is replaced by it, with the words that followed `report`.

use std::os::unix::process::CommandExt;

use clap::Args;

use crate::exit::Failure;

/// `fabbench report`'s words, handed unread to the `fabbench-report` binary: its options, help
/// and checks are defined there only, so the two cannot drift apart.
#[derive(Debug, Args)]
#[command(disable_help_flag = true)]
pub struct ReportArgs {
    /// Run directories and options; `fabbench report --help` lists them
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub words: Vec<std::ffi::OsString>,
}

/// The report binary's file name.
pub const REPORT_BIN: &str = "fabbench-report";

pub fn run(args: ReportArgs) -> Result<(), Failure> {
    let me = std::env::current_exe().map_err(|e| {
        Failure::Failed(format!(
            "fabbench report: cannot find this program's own path: {e}"
        ))
    })?;
    let sibling = me.with_file_name(REPORT_BIN);
    if !sibling.is_file() {
        return Err(Failure::Failed(format!(
            "fabbench report needs {} beside fabbench: build it with `cargo build \
             --release -p fabbench-report`, or install it with `cargo install --path report-cli`",
            sibling.display()
        )));
    }
    // exec returns only when it failed: on success this process is the report binary.
    let e = std::process::Command::new(&sibling).args(args.words).exec();
    Err(Failure::Failed(format!(
        "could not start {}: {e}",
        sibling.display()
    )))
}
