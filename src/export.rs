//! `fabbench export`: a run directory in the formats CI tools read (github-action-benchmark's
//! custom JSON, the Bencher Metric Format) or as a reference file for `fabbench compare
//! --references`. Every run is read and every file built before anything is written; each
//! file is then written whole (a temporary name, renamed) and its path printed.

use std::path::{Path, PathBuf};

use results::ci::{Export, ExportFile};
use results::Run;

use crate::exit;
use crate::export_args::{ExportArgs, ExportFormat};

/// The tolerance of `--format refs` when none is given.
const DEFAULT_TOLERANCE: &str = "5%";

pub fn run(args: ExportArgs) -> i32 {
    let tolerance = match (args.format, args.tolerance.as_deref()) {
        (ExportFormat::Refs, t) => match fraction(t.unwrap_or(DEFAULT_TOLERANCE)) {
            Some(t) => t,
            None => {
                eprintln!(
                    "error: --tolerance {}: give a percentage (5%) or a fraction (0.05) from 0 \
                     to 1",
                    t.unwrap_or_default()
                );
                return exit::USAGE;
            }
        },
        (_, Some(_)) => {
            eprintln!("error: --tolerance applies to --format refs only");
            return exit::USAGE;
        }
        (_, None) => 0.0,
    };
    if !args.run.is_dir() {
        eprintln!(
            "error: {} is not a directory: give a run directory (OUT/RUN_ID, as fabbench run \
             printed it)",
            args.run.display()
        );
        return exit::USAGE;
    }
    let dirs = results::read::runs_in(&args.run);
    let mut jobs = Vec::new();
    for dir in &dirs {
        let run = match results::read_run(dir) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("error: {e}");
                return exit::USAGE;
            }
        };
        let out = out_dir(&args, dir, dirs.len() > 1);
        let export = match build(&run, dir, args.format, tolerance) {
            Ok(x) => x,
            Err(e) => {
                eprintln!("error: {e}");
                return exit::FAILED;
            }
        };
        jobs.push((out, export));
    }
    for (out, export) in &jobs {
        for name in &export.skipped {
            eprintln!("warning: {name} left out: its value is not a finite number");
        }
        for file in &export.files {
            match write(out, file) {
                Ok(path) => println!("{}", path.display()),
                Err(e) => {
                    eprintln!("error: {e}");
                    return exit::FAILED;
                }
            }
        }
    }
    exit::OK
}

/// Where a run's files go: `--out`, or its own `ci/`; with several runs (a scaling run's
/// directory), `--out` gets a directory per run at the run's place under RUN_DIR (`n2/RUN_ID`).
fn out_dir(args: &ExportArgs, dir: &Path, several: bool) -> PathBuf {
    match &args.out {
        None => dir.join("ci"),
        Some(out) if several => out.join(dir.strip_prefix(&args.run).unwrap_or(dir)),
        Some(out) => out.clone(),
    }
}

fn build(run: &Run, dir: &Path, format: ExportFormat, tolerance: f64) -> Result<Export, String> {
    match format {
        ExportFormat::Gab => results::ci::gab::export(run).map_err(|e| e.to_string()),
        ExportFormat::Bmf => results::ci::bmf::export(run).map_err(|e| e.to_string()),
        ExportFormat::Refs => {
            let refs = compare::references::from_run(run, tolerance);
            let header = format!(
                "fabbench reference values from run {} ({})\n\
                 value: the headline summary.csv reports; lower and upper: -{pct} and +{pct} of it\n\
                 check a run against them: fabbench compare --references refs.toml RUN_DIR",
                run.manifest.run_id,
                dir.display(),
                pct = format!("{}%", results::ci::significant(tolerance * 100.0, 4)),
            );
            Ok(Export {
                files: vec![ExportFile {
                    name: "refs.toml".into(),
                    contents: compare::references::to_toml(&refs, &header).into_bytes(),
                }],
                skipped: Vec::new(),
            })
        }
    }
}

fn write(out: &Path, file: &ExportFile) -> Result<PathBuf, String> {
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let path = out.join(&file.name);
    results::run_dir::write_atomically(&path, &file.contents)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

/// "5%" -> 0.05, "0.05" -> 0.05; None unless the result lies in [0, 1].
fn fraction(text: &str) -> Option<f64> {
    let t = text.trim();
    let x = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().ok()? / 100.0,
        None => t.parse::<f64>().ok()?,
    };
    (0.0..=1.0).contains(&x).then_some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerances_are_percentages_or_fractions_from_0_to_1() {
        assert_eq!(fraction("5%"), Some(0.05));
        assert_eq!(fraction("0.05"), Some(0.05));
        assert_eq!(fraction(" 0 % "), Some(0.0));
        assert_eq!(fraction("100%"), Some(1.0));
        assert_eq!(fraction("150%"), None);
        assert_eq!(fraction("-5%"), None);
        assert_eq!(fraction("five"), None);
        assert_eq!(fraction("NaN"), None);
    }
}
