//! The options of `fabbench export`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

#[derive(Debug, Args)]
#[command(
    after_help = "Writes, into --out (default RUN_DIR/ci): gab-smaller-is-better.json and \
                  gab-bigger-is-better.json (github-action-benchmark's customSmallerIsBetter and \
                  customBiggerIsBetter tools, one action step each), bmf.json (Bencher: bencher \
                  run --adapter json --file bmf.json), or refs.toml (fabbench compare \
                  --references refs.toml RUN). A scaling run's directory exports each of its runs \
                  into its own directory. Example: fabbench export results/RUN_ID --format gab"
)]
pub struct ExportArgs {
    /// The run directory to export
    #[arg(value_name = "RUN_DIR")]
    pub run: PathBuf,

    /// What to write: gab (github-action-benchmark), bmf (Bencher Metric Format), refs (a
    /// reference file for `fabbench compare --references`)
    #[arg(long, value_enum)]
    pub format: ExportFormat,

    /// Directory to write into (default: RUN_DIR/ci)
    #[arg(short = 'o', long = "out", value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// With --format refs: how far each reference allows the value either way (percent, 5% or
    /// 0.05; 0 for an exact gate) [default: 5%]
    #[arg(long, value_name = "PERCENT")]
    pub tolerance: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    Gab,
    Bmf,
    Refs,
}
