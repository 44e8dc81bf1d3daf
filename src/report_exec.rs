//! `fabbench report` hands over to the `fabbench-report` binary beside this one. The report
//! links polars, which would make this binary, the one every rank runs, many times larger and
//! its first build many minutes longer; so it lives in a package of its own (`report-cli/`) and
//! this process is replaced by it, with the words that followed `report`.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;

use crate::exit;

/// The report binary's file name.
pub const REPORT_BIN: &str = "fabbench-report";

pub fn run(words: Vec<OsString>) -> i32 {
    let sibling = match std::env::current_exe() {
        Ok(me) => me.with_file_name(REPORT_BIN),
        Err(e) => {
            eprintln!("error: fabbench report: cannot find this program's own path: {e}");
            return exit::FAILED;
        }
    };
    if !sibling.is_file() {
        eprintln!(
            "error: fabbench report needs {} beside fabbench: build it with `cargo build \
             --release -p fabbench-report`, or install it with `cargo install --path report-cli`",
            sibling.display()
        );
        return exit::FAILED;
    }
    let e = std::process::Command::new(&sibling).args(words).exec();
    eprintln!("error: could not start {}: {e}", sibling.display());
    exit::FAILED
}
