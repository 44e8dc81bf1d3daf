//! `fabbench plot`: stored runs read through the results reader, drawn by the plots crate.

use crate::cli::PlotArgs;
use crate::exit;

pub fn run(_args: PlotArgs) -> i32 {
    eprintln!("error: fabbench plot is not built yet");
    exit::USAGE
}
