//! `fabbench compare`: two runs read, compared by the compare crate, printed, and the verdict
//! mapped to the exit status; with --references, handed to [`crate::compare_refs`].

use compare::render::render;
use compare::{CompareError, Comparison, Format, Settings};

use crate::compare_args::{CompareArgs, FailOn};
use crate::exit;

pub fn run(args: CompareArgs) -> i32 {
    if args.references.is_some() {
        return crate::compare_refs::run(args);
    }
    match compared(&args) {
        Ok(c) => {
            let failed = match args.fail_on {
                FailOn::Regression => c.regressed(),
                FailOn::Change => c.changed(),
            };
            if failed {
                exit::FAILED
            } else {
                exit::OK
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            exit::USAGE
        }
    }
}

/// Everything up to the exit status: the comparison, its exports written and its text printed.
fn compared(args: &CompareArgs) -> Result<Comparison, String> {
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
    let comparison =
        compare::compare(&baseline, &candidate, &settings).map_err(|e| e.to_string())?;

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
    let files: Vec<_> = exports.iter().map(|(p, t)| (*p, t.as_bytes())).collect();
    compare::write::make_parents(&files).map_err(|e| e.to_string())?;
    compare::write::write_all(&files).map_err(|e| e.to_string())?;
    print!("{stdout}");
    Ok(comparison)
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
    };
    s.check().map_err(option)?;
    Ok(s)
}
