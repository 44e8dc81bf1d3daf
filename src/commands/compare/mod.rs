//! `fabbench compare`: its arguments; two runs read, compared by the compare crate, printed,
//! and the verdict handed to `main` for the exit status; with --references, handed to
//! [`references`].

mod floors;
mod references;

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use compare::render::render;
use compare::{CompareError, Comparison, Format, Settings};

use crate::exit::Failure;

#[derive(Debug, Args)]
#[command(
    after_help = "Exit status: 0 when nothing regressed, 1 when something did (or, with \
                  --references, a check failed), 2 on bad input, 3 when an export cannot be written. Runs on emulated fabrics are \
                  compared exactly. On a measured fabric one run a side cannot separate a change \
                  from run-to-run variation: such rows are inconclusive (exit 0) unless the \
                  change passes --bound or a floor learned with --history; directories of \
                  several runs a side are the way to gate. Example: fabbench compare \
                  base/RUN_ID new/RUN_ID --format markdown"
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

    /// With one run a side on a measured fabric: a change counts (regressed or improved) only
    /// when its whole interval lies beyond +-this (percent, 10% or 0.1); without it (or a floor
    /// from --history or replicates) such a change is "inconclusive" and fails nothing
    #[arg(long, value_name = "PERCENT")]
    pub bound: Option<String>,

    /// A history store (fabbench history add) to learn each point's noise floor from: the
    /// largest ratio between its runs there; with one run a side a change must pass it
    #[arg(long, value_name = "STORE")]
    pub history: Option<PathBuf>,

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

pub fn run(args: CompareArgs) -> Result<(), Failure> {
    if let Some(file) = &args.references {
        return references::run(&args, file);
    }
    let c = compared(&args)?;
    let failed = match args.fail_on {
        FailOn::Regression => c.regressed(),
        FailOn::Change => c.changed(),
    };
    if failed {
        Err(Failure::Verdict)
    } else {
        Ok(())
    }
}

/// Everything up to the exit status: the comparison, its exports written and its text printed.
/// A write that fails is [`Failure::Unwritten`]; everything before it is the user's input.
fn compared(args: &CompareArgs) -> Result<Comparison, Failure> {
    let (comparison, stdout, exports) = rendered(args).map_err(Failure::Usage)?;
    let files: Vec<_> = exports.iter().map(|(p, t)| (*p, t.as_bytes())).collect();
    compare::write::make_parents(&files)
        .and_then(|()| compare::write::write_all(&files))
        .map_err(|e| Failure::Unwritten(e.to_string()))?;
    print!("{}", for_terminal(&stdout, args.format.into()));
    Ok(comparison)
}

/// Text and Markdown as a terminal should get them (control characters from the runs'
/// labels escaped, a huge line cut); JSON, which is data and escapes its own strings, as it is.
pub(crate) fn for_terminal(text: &str, format: Format) -> std::borrow::Cow<'_, str> {
    match format {
        Format::Json => std::borrow::Cow::Borrowed(text),
        Format::Table | Format::Markdown => results::printable::terminal_text(text),
    }
}

/// A rendered export: where it goes and its text.
type Export<'a> = (&'a Path, String);

/// The comparison, its text for stdout and its exports, nothing written yet.
fn rendered(args: &CompareArgs) -> Result<(Comparison, String, Vec<Export<'_>>), String> {
    let [baseline, candidate] = args.runs.as_slice() else {
        return Err(format!(
            "compare needs two run directories, BASELINE and CANDIDATE (or one RUN with \
             --references FILE); got {}",
            args.runs.len()
        ));
    };
    let settings = settings(args)?;
    // A directory of several runs is a side of replicates (a CI job's --runs K).
    let read = |dir| compare::input::read_runs(dir).map_err(|e| e.to_string());
    let (baseline, candidate) = (read(baseline)?, read(candidate)?);
    let floors = match (&args.history, candidate.first()) {
        (Some(store), Some(run)) => floors::learn(store, &run.manifest.host.hostname)?,
        _ => compare::Floors::default(),
    };
    let comparison = compare::compare_with(&baseline, &candidate, &settings, &floors)
        .map_err(|e| e.to_string())?;

    // Everything is rendered before anything is written, and the exports go into place
    // together, so a failure leaves no file half-done and prints nothing.
    let text = |f| render(&comparison, f).map_err(|e| e.to_string());
    let stdout = text(args.format.into())?;
    let mut exports = Vec::new();
    if let Some(path) = &args.export_markdown {
        exports.push((path.as_path(), text(Format::Markdown)?));
    }
    if let Some(path) = &args.export_json {
        exports.push((path.as_path(), text(Format::Json)?));
    }
    Ok((comparison, stdout, exports))
}

/// The options of the decision, each checked against its range; an error names the option.
fn settings(args: &CompareArgs) -> Result<Settings, String> {
    let option = |e: CompareError| match e {
        CompareError::Setting { name, reason } => format!("--{}: {reason}", name.replace('_', "-")),
        other => other.to_string(),
    };
    let s = Settings {
        noise: compare::settings::parse_noise(&args.noise).map_err(option)?,
        confidence: args.confidence,
        resamples: args.resamples,
        min_samples: args.min_samples,
        bound: args
            .bound
            .as_deref()
            .map(compare::settings::parse_bound)
            .transpose()
            .map_err(option)?,
    };
    s.check().map_err(option)?;
    Ok(s)
}
