//! The options of `fabbench history add` and `fabbench history show`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

#[derive(Debug, Args)]
pub struct HistoryArgs {
    #[command(subcommand)]
    pub action: HistoryAction,
}

#[derive(Debug, Subcommand)]
pub enum HistoryAction {
    /// Add a run directory to a history store
    Add {
        /// The run directory to add
        #[arg(value_name = "RUN_DIR")]
        run: PathBuf,
        /// The store's directory (created if absent)
        #[arg(long, value_name = "DIR")]
        store: PathBuf,
    },
    /// Trend per metric, with the change points found in each series
    Show {
        /// The store's directory
        #[arg(long, value_name = "DIR")]
        store: PathBuf,
    },
}
