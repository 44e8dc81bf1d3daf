//! The options of `fabbench compare`.

use std::path::PathBuf;

use clap::Args;

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Run directories: BASELINE CANDIDATE, or one RUN with --references
    #[arg(value_name = "RUN_DIR", required = true, num_args = 1..=2)]
    pub runs: Vec<PathBuf>,
}
