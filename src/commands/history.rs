//! `fabbench history`: its arguments (`add` and `show`, and the checks of their values that clap
//! cannot make: a p-value in (0, 1), a magnitude not negative); runs added to a store, and trends
//! with change points shown from it. `add` hands the run directories to the history crate, which
//! reads them all and writes one entry per run (nothing when any is refused); `show` prints the
//! view in the format asked, draws its charts with --plot, and maps a regression to exit 1 with
//! --fail-on-regression.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};
use history::format::Format;
use history::{Filter, HistoryError, Overrides, Store};

use crate::exit::Failure;
use crate::fraction::{self, Fraction};

#[derive(Debug, Args)]
pub struct HistoryArgs {
    #[command(subcommand)]
    pub action: HistoryAction,
}

#[derive(Debug, Subcommand)]
pub enum HistoryAction {
    /// Add runs to a history store (append-only; created on the first add)
    #[command(
        after_help = "Each run becomes one entry file, STORE/entries/DATE-REV-RUNID.json, never \
                      rewritten; adding a run twice is refused. Example: fabbench history add \
                      fabbench-results/20261123T150735Z-osu_latency-rapidio --store perf-history \
                      --revision $GITHUB_SHA"
    )]
    Add(AddArgs),
    /// Trend per series, with the change points found in each
    #[command(
        after_help = "Change points: E-divisive means over sliding windows proposes them and a \
                      two-sample Student's t-test (leaving out the one entry on each side that \
                      most favours the change) confirms them, as Apache Otava does; on exact \
                      (emulated) series every change of value is one, and a value that returns \
                      after one entry is a spike. Exit status: 0, or 1 with --fail-on-regression \
                      when a series sits on a regressed level; 2 on bad input; 3 when the store cannot be \
                      written. Example: fabbench \
                      history show --store perf-history --metric latency --plot perf-plots"
    )]
    Show(ShowArgs),
}

#[derive(Debug, Args)]
pub struct AddArgs {
    /// Run directories, scaling-run directories, or directories holding run directories
    #[arg(value_name = "RUN_DIR", required = true)]
    pub runs: Vec<PathBuf>,

    /// The store's directory (created if absent or empty)
    #[arg(long, value_name = "DIR")]
    pub store: PathBuf,

    /// The git revision the runs measured, instead of the one fabbench was built from
    /// (e.g. $GITHUB_SHA)
    #[arg(long, value_name = "REV")]
    pub revision: Option<String>,

    /// The date to file the runs under, RFC 3339 (e.g. the commit's date), instead of when
    /// they started
    #[arg(long, value_name = "DATE")]
    pub date: Option<String>,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The store's directory
    #[arg(long, value_name = "DIR")]
    pub store: PathBuf,

    /// Only these metrics (latency, bandwidth, ...), comma-separated
    #[arg(long, value_name = "NAME", value_delimiter = ',')]
    pub metric: Vec<String>,

    /// Only these suites, comma-separated
    #[arg(long, value_name = "SUITE", value_delimiter = ',')]
    pub suite: Vec<String>,

    /// Only these fabrics (as runs label them), comma-separated
    #[arg(long, value_name = "FABRIC", value_delimiter = ',')]
    pub fabric: Vec<String>,

    /// Only the last N entries
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub last: Option<u64>,

    /// What is printed on stdout
    #[arg(long, value_enum, default_value = "table")]
    pub format: ShowFormat,

    /// Entries per E-divisive window (at least 4)
    #[arg(long, default_value_t = 50, value_name = "N")]
    pub window: usize,

    /// A change point's t-test must give p below this, in (0, 1)
    #[arg(long, default_value_t = 0.001, value_name = "P")]
    pub max_pvalue: f64,

    /// A change point must move the level by more than this (5% or 0.05)
    #[arg(long, default_value = "0", value_name = "PERCENT", value_parser = fraction::parse)]
    pub min_magnitude: Fraction,

    /// Also draw one chart per suite, fabric and metric into DIR
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,

    /// Image format of --plot
    #[arg(long, value_enum, default_value = "both")]
    pub plot_format: ImageFormat,

    /// Exit 1 when a series shown sits on a regressed level: its last change point is a
    /// regression (combine with --last N so an old regression stops failing)
    #[arg(long)]
    pub fail_on_regression: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ShowFormat {
    Table,
    Markdown,
    Csv,
    Json,
    /// One row per entry and a column per series, as Apache Otava's csv tests read
    Otava,
}

impl From<ShowFormat> for history::format::Format {
    fn from(f: ShowFormat) -> history::format::Format {
        match f {
            ShowFormat::Table => history::format::Format::Table,
            ShowFormat::Markdown => history::format::Format::Markdown,
            ShowFormat::Csv => history::format::Format::Csv,
            ShowFormat::Json => history::format::Format::Json,
            ShowFormat::Otava => history::format::Format::Otava,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ImageFormat {
    Svg,
    Png,
    Both,
}

impl ShowArgs {
    /// The change-point options, checked; Err is the one line to print (clap has read
    /// --min-magnitude as a number; its range is checked here).
    pub fn options(&self) -> Result<history::Options, String> {
        if self.window < 4 {
            return Err(format!(
                "--window {}: give at least 4 (two entries on each side of a change)",
                self.window
            ));
        }
        if !(self.max_pvalue > 0.0 && self.max_pvalue < 1.0) {
            return Err(format!(
                "--max-pvalue {}: give a probability between 0 and 1, such as 0.001",
                self.max_pvalue
            ));
        }
        // A relative change is not negative.
        let m = &self.min_magnitude;
        if m.value < 0.0 {
            return Err(format!(
                "--min-magnitude '{m}': give a relative change such as 5% or 0.05 (0 for any)"
            ));
        }
        Ok(history::Options {
            window: self.window,
            max_pvalue: self.max_pvalue,
            min_magnitude: m.value,
        })
    }
}

pub fn run(args: HistoryArgs) -> Result<(), Failure> {
    match args.action {
        HistoryAction::Add(a) => Ok(add(a)?),
        HistoryAction::Show(s) => show(s),
    }
}

fn add(args: AddArgs) -> Result<(), HistoryError> {
    let overrides = Overrides {
        revision: args.revision,
        date: args.date,
    };
    for a in history::store::add(&args.store, &args.runs, &overrides)? {
        println!(
            "added {} ({} {}) as {}",
            results::printable::cell(&a.entry.run_id),
            a.entry.short_revision(),
            a.entry.date,
            a.path.display()
        );
    }
    Ok(())
}

fn show(args: ShowArgs) -> Result<(), Failure> {
    let options = args.options().map_err(Failure::Usage)?;
    let filter = Filter {
        metrics: args.metric.clone(),
        suites: args.suite.clone(),
        fabrics: args.fabric.clone(),
        last: args.last.map(|n| n as usize),
    };
    let view =
        Store::open(&args.store).and_then(|s| history::trend::view(&s, &filter, &options))?;
    // Charts first: a chart that cannot be written fails the command before anything is
    // printed, so stdout is never a table that claims success.
    if let Some(dir) = &args.plot {
        let charts = history::chart::charts(&view);
        let format = match args.plot_format {
            ImageFormat::Svg => plots::Format::Svg,
            ImageFormat::Png => plots::Format::Png,
            ImageFormat::Both => plots::Format::Both,
        };
        let paths = plots::write_all(&charts, dir, format).map_err(crate::exit::plot_failure)?;
        for p in paths {
            eprintln!("wrote {}", p.display());
        }
    }
    let format = Format::from(args.format);
    let text = history::format::render(&view, format);
    match format {
        // Data for other tools, as written.
        Format::Csv | Format::Json | Format::Otava => print!("{text}"),
        Format::Table | Format::Markdown => {
            print!("{}", results::printable::terminal_text(&text))
        }
    }
    if args.fail_on_regression && view.regressed() {
        eprintln!(
            "history: a series sits on a regressed level (its last change point is a regression)"
        );
        return Err(Failure::Verdict);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Show {
        #[command(flatten)]
        show: ShowArgs,
    }

    fn magnitude(text: &str) -> Result<f64, String> {
        let s = Show::try_parse_from(["show", "--store", "s", "--min-magnitude", text])
            .map_err(|e| e.to_string())?;
        s.show.options().map(|o| o.min_magnitude)
    }

    #[test]
    fn magnitudes_read_as_percent_or_fraction() {
        assert_eq!(magnitude("5%"), Ok(0.05));
        assert_eq!(magnitude("0.05"), Ok(0.05));
        assert_eq!(magnitude("0"), Ok(0.0));
        assert!(magnitude("-1%").is_err());
        assert!(magnitude("five").unwrap_err().contains("5%"));
    }
}
