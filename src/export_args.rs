//! The options of `fabbench export`.

use std::path::PathBuf;

use clap::Args;

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The run directory to export
    #[arg(value_name = "RUN_DIR")]
    pub run: PathBuf,
}
