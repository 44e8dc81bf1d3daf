//! `fabbench report` hands over to the `fabbench-report` binary beside this one. The report
//! links polars, which would make this binary, the one every rank runs, 14 times larger
//! (86 MB against 6 MB) and every rank's start slower; so the arguments are checked here, by
//! the same definitions, and the process is replaced by the report binary with them.

use std::os::unix::process::CommandExt;

use crate::exit;

/// The report binary's file name.
pub const REPORT_BIN: &str = "fabbench-report";

pub fn run() -> i32 {
    let sibling = match std::env::current_exe() {
        Ok(me) => me.with_file_name(REPORT_BIN),
        Err(e) => {
            eprintln!("error: fabbench report: cannot find this program's own path: {e}");
            return exit::FAILED;
        }
    };
    if !sibling.is_file() {
        eprintln!(
            "error: fabbench report needs {} beside fabbench (cargo build --release builds it, \
             cargo install --path . installs it)",
            sibling.display()
        );
        return exit::FAILED;
    }
    let e = std::process::Command::new(&sibling)
        .args(after_report())
        .exec();
    eprintln!("error: could not start {}: {e}", sibling.display());
    exit::FAILED
}

/// The command line after the `report` word (clap has checked it already).
fn after_report() -> Vec<std::ffi::OsString> {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    match args.iter().position(|a| a == "report") {
        Some(i) => args[i + 1..].to_vec(),
        None => Vec::new(),
    }
}
