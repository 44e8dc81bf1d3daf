//! `fabbench export`: its arguments; a run directory in the formats CI tools read
//! (github-action-benchmark's custom JSON, the Bencher Metric Format) or as a reference file for
//! `fabbench compare --references`. Every run is read and every file built before anything is
//! written; each file is then written whole (a temporary name, renamed) and its path printed.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use results::format::ci::{Export, ExportFile};
use results::Run;

use crate::exit::Failure;
use crate::fraction::{self, Fraction};

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
    #[arg(long, value_name = "PERCENT", value_parser = fraction::parse)]
    pub tolerance: Option<Fraction>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    Gab,
    Bmf,
    Refs,
}

/// The tolerance of `--format refs` when none is given.
const DEFAULT_TOLERANCE: f64 = 0.05;

pub fn run(args: ExportArgs) -> Result<(), Failure> {
    let tolerance = tolerance(args.format, args.tolerance.as_ref()).map_err(Failure::Usage)?;
    if !args.run.is_dir() {
        return Err(Failure::Usage(format!(
            "{} is not a directory: give a run directory (OUT/RUN_ID, as fabbench run \
             printed it)",
            args.run.display()
        )));
    }
    let dirs = results::read::runs_in(&args.run);
    let mut jobs = Vec::new();
    for dir in &dirs {
        let run = results::read_run(dir).map_err(|e| Failure::Usage(e.to_string()))?;
        let out = out_dir(&args, dir, dirs.len() > 1);
        let export = build(&run, dir, args.format, tolerance).map_err(Failure::Failed)?;
        jobs.push((out, export));
    }
    for (out, export) in &jobs {
        for name in &export.skipped {
            eprintln!("warning: {name} left out: its value is not a finite number");
        }
        for file in &export.files {
            let path = write(out, file).map_err(Failure::Unwritten)?;
            println!("{}", path.display());
        }
    }
    Ok(())
}

/// The tolerance of the reference values: `--tolerance` (0 to 1) or 5% with `--format refs`;
/// the option given with another format is refused. Err is the line to print.
fn tolerance(format: ExportFormat, given: Option<&Fraction>) -> Result<f64, String> {
    match (format, given) {
        (ExportFormat::Refs, None) => Ok(DEFAULT_TOLERANCE),
        (ExportFormat::Refs, Some(t)) if (0.0..=1.0).contains(&t.value) => Ok(t.value),
        (ExportFormat::Refs, Some(t)) => Err(format!(
            "--tolerance {t}: give a percentage (5%) or a fraction (0.05) from 0 to 1"
        )),
        (_, Some(_)) => Err("--tolerance applies to --format refs only".into()),
        (_, None) => Ok(0.0),
    }
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
        ExportFormat::Gab => results::format::ci::gab::export(run).map_err(|e| e.to_string()),
        ExportFormat::Bmf => results::format::ci::bmf::export(run).map_err(|e| e.to_string()),
        ExportFormat::Refs => {
            let refs = compare::references::from_run(run, tolerance);
            let header = format!(
                "fabbench reference values from run {} ({})\n\
                 value: the headline summary.csv reports; lower and upper: -{pct} and +{pct} of it\n\
                 check a run against them: fabbench compare --references refs.toml RUN_DIR",
                run.manifest.run_id,
                dir.display(),
                pct = format!("{}%", results::format::ci::significant(tolerance * 100.0, 4)),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(text: &str) -> Result<f64, String> {
        tolerance(ExportFormat::Refs, Some(&fraction::parse(text)?))
    }

    #[test]
    fn tolerances_are_percentages_or_fractions_from_0_to_1() {
        assert_eq!(refs("5%"), Ok(0.05));
        assert_eq!(refs("0.05"), Ok(0.05));
        assert_eq!(refs(" 0 % "), Ok(0.0));
        assert_eq!(refs("100%"), Ok(1.0));
        assert!(refs("150%").unwrap_err().contains("from 0 to 1"));
        assert!(refs("-5%").is_err());
        assert!(refs("five").is_err());
        assert!(refs("NaN").is_err());
        assert_eq!(tolerance(ExportFormat::Refs, None), Ok(0.05));
        assert!(tolerance(ExportFormat::Gab, Some(&fraction::parse("5%").unwrap())).is_err());
    }
}
