//! `fabbench report`: stored runs read through the results reader, tabulated by the report
//! crate.

use crate::cli::ReportArgs;
use crate::exit;

pub fn run(_args: ReportArgs) -> i32 {
    eprintln!("error: fabbench report is not built yet");
    exit::USAGE
}
