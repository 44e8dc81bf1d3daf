//! `fabbench export`: a run directory in the formats CI tools read.

use crate::exit;
use crate::export_args::ExportArgs;

pub fn run(_args: ExportArgs) -> i32 {
    eprintln!("error: fabbench export is not built yet");
    exit::USAGE
}
