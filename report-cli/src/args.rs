//! The arguments of `fabbench report`, defined here only: `fabbench report` hands its whole
//! command line over to this binary, so help, checks and one-line errors are this binary's.

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
    // -o/--out as every fabbench command spells its output; --output as it shipped.
    #[arg(
        short = 'o',
        long = "out",
        visible_alias = "output",
        value_name = "FILE"
    )]
    pub output: Option<PathBuf>,
}
