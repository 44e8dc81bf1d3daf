//! The options of `fabbench calibrate`.

use std::path::PathBuf;

use clap::Args;

#[derive(Debug, Args)]
#[command(
    after_help = "Writes card.toml (run it with `fabbench run SUITE --fabric FABRIC --model \
                  card.toml`), calibration.json and report.md into a new directory under --out. \
                  Example: fabbench calibrate --fabric rapidio --from paper.csv"
)]
pub struct CalibrateArgs {
    /// Emulated fabric whose card is fitted: hyperlink, rapidio or bxi
    #[arg(short = 'f', long, value_name = "FABRIC")]
    pub fabric: String,

    /// The table to match: OSU text output (one or several tests), or a CSV with columns
    /// suite,size,value (repeatable)
    #[arg(long = "from", value_name = "TABLE", required = true)]
    pub from: Vec<PathBuf>,

    /// Card parameters to fit, comma separated (default: every parameter the card marks as an
    /// assumption [A] that the suites in the table can see)
    #[arg(long, value_delimiter = ',', value_name = "NAME[,NAME]")]
    pub params: Option<Vec<String>>,

    /// Tunable settings held fixed during the fit (repeatable)
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub sets: Vec<String>,

    /// Start the search for a fitted parameter at this value instead of the card's, e.g. from
    /// a reading of the table (repeatable)
    #[arg(long = "start", value_name = "NAME=VALUE")]
    pub starts: Vec<String>,

    /// Where the calibration directory is made
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
