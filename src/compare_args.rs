//! The options of `fabbench compare`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

#[derive(Debug, Args)]
#[command(
    after_help = "Exit status: 0 when nothing regressed, 1 when something did (or, with \
                  --references, a check failed), 2 on bad input. Runs on emulated fabrics are \
                  compared exactly. Example: fabbench compare base/RUN_ID new/RUN_ID --format markdown"
)]
pub struct CompareArgs {
    /// Run directories: BASELINE CANDIDATE, or one RUN with --references
    #[arg(value_name = "RUN_DIR", required = true, num_args = 1..=2)]
    pub runs: Vec<PathBuf>,

    /// Check one run against the reference values in FILE (TOML) instead of a baseline run
    #[arg(long, value_name = "FILE")]
    pub references: Option<PathBuf>,

    /// The noise band: a change counts only if its whole confidence interval lies outside
    /// +-this (percent, 2% or 0.02)
    #[arg(long, default_value = "2%", value_name = "PERCENT")]
    pub noise: String,

    /// Confidence of the test and of the interval, in (0, 1)
    #[arg(long, default_value_t = 0.95, value_name = "LEVEL")]
    pub confidence: f64,

    /// Bootstrap resamples of the ratio of medians (at least 100)
    #[arg(long, default_value_t = 2000, value_name = "N")]
    pub resamples: usize,

    /// Fewest samples a side needs for a statistical verdict; fewer is "invalid" (not on
    /// emulated fabrics, which are compared exactly)
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub min_samples: usize,

    /// What is printed on stdout
    #[arg(long, value_enum, default_value = "table")]
    pub format: CompareFormat,

    /// Also write the Markdown summary to FILE (for a CI job's summary page)
    #[arg(long, value_name = "FILE")]
    pub export_markdown: Option<PathBuf>,

    /// Also write the JSON verdicts to FILE
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,

    /// What fails the comparison (exit 1): a regression, or any change at all (an exact gate
    /// on emulated fabrics, whose baseline is updated deliberately)
    #[arg(long, value_enum, default_value = "regression")]
    pub fail_on: FailOn,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompareFormat {
    Table,
    Markdown,
    Json,
}

impl From<CompareFormat> for compare::Format {
    fn from(f: CompareFormat) -> compare::Format {
        match f {
            CompareFormat::Table => compare::Format::Table,
            CompareFormat::Markdown => compare::Format::Markdown,
            CompareFormat::Json => compare::Format::Json,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    Regression,
    Change,
}
