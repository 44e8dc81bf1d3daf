//! The options of `fabbench characterise`.

use std::path::PathBuf;

use clap::Args;

#[derive(Debug, Args)]
#[command(
    after_help = "Writes card.toml (run it with `fabbench run SUITE --fabric loggp --model \
                  card.toml`), fit.json, fit.csv, report.md and plots of the fitted curves over \
                  the measured ones into a new directory under --out, beside the runs measured. \
                  Example: fabbench characterise --fabric bxi --sizes 1:4M"
)]
pub struct CharacteriseArgs {
    /// Fabric to characterise (see `fabbench list fabrics`)
    #[arg(short = 'f', long, default_value = "shm", value_name = "FABRIC")]
    pub fabric: String,

    /// Ranks (the patterns run between ranks 0 and 1; the others wait)
    #[arg(short = 'n', long, default_value_t = 2, value_name = "N")]
    pub ranks: usize,

    /// Message sizes, MIN:MAX (powers of two between, then sizes between the two around each
    /// protocol switch)
    #[arg(long, default_value = "1:4M", value_name = "MIN:MAX")]
    pub sizes: String,

    /// Timed iterations per size and pattern (default: OSU's, fewer on emulated fabrics)
    #[arg(short = 'i', long, value_name = "N")]
    pub iterations: Option<u64>,

    /// Sizes measured between the two around a switch, to pin it down (0: no refinement)
    #[arg(long, default_value_t = 7, value_name = "N")]
    pub refine: u64,

    /// Tunable settings for the fabric measured (repeatable)
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub sets: Vec<String>,

    /// A model card for the fabric measured (emulated fabrics)
    #[arg(long, value_name = "FILE")]
    pub model: Option<PathBuf>,

    /// Where the characterisation directory is made
    #[arg(
        short = 'o',
        long,
        default_value = "fabbench-results",
        value_name = "DIR"
    )]
    pub out: PathBuf,

    /// Print nothing but errors
    #[arg(short = 'q', long)]
    pub quiet: bool,
}
