//! The arguments of `fabbench report`, shared by the `fabbench` binary (which parses them for
//! its help and its one-line errors) and the `fabbench-report` binary (which runs the report).
//! The report links polars, 80 MB of the binary; ranks are `fabbench` processes, so keeping
//! polars in a binary of its own keeps every rank's executable at 6 MB.

use std::path::PathBuf;

use clap::Args;

/// How `fabbench report` spreads runs into columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportBy {
    /// A column per fabric (fabric@run when a fabric is in several runs)
    Fabric,
    /// A column per run, named by its time stamp (fabric@run when a run has several fabrics)
    Run,
    /// A column per setting of the tunables that differ among one fabric's runs
    Tunable,
}

/// Output formats of `fabbench report`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    Table,
    Csv,
    Markdown,
    Html,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Rows are suite, metric and size; cells the headline value (mean latency, \
                  total bandwidth); a missing cell means that column did not measure the size. \
                  Markdown and HTML include the runs' charts (HTML as one self-contained file). \
                  Example: fabbench report fabbench-results/A fabbench-results/B --reference \
                  fabbench-results/A --format html -o report.html"
)]
pub struct ReportArgs {
    /// Run directories (as `fabbench run` writes them)
    #[arg(required = true, value_name = "RUN_DIR")]
    pub runs: Vec<PathBuf>,

    /// What each column is
    #[arg(long, value_enum, default_value = "fabric")]
    pub by: ReportBy,

    /// A run among RUN_DIR (its path or run id): ratio columns against its values
    #[arg(long, value_name = "RUN")]
    pub reference: Option<String>,

    /// Output format
    #[arg(long, value_enum, default_value = "table")]
    pub format: ReportFormat,

    /// Write to FILE instead of stdout (written complete or not at all)
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}
