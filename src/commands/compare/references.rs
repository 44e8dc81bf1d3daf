//! `fabbench compare --references FILE RUN`: one run checked against reference values by the
//! compare crate, printed in the chosen format (and written as Markdown or JSON on request),
//! and the outcome mapped to the exit status: 0 when every reference passed, 1 when one failed
//! or was not measured, 2 when the input cannot be judged (a unit mismatch, an unknown metric,
//! a malformed file). The baseline comparison's --noise, --confidence and --fail-on do not
//! apply here.

use std::path::Path;

use compare::references::{self, Outcome};
use compare::Format;

use super::CompareArgs;
use crate::exit::Failure;

/// Checks the one run of `args` against the reference file `file` (its `--references`).
pub fn run(args: &CompareArgs, file: &Path) -> Result<(), Failure> {
    let outcome = judge(&args.runs, file).map_err(Failure::Usage)?;
    // Both exports go into place together, as a baseline comparison's do.
    let exports: Vec<(&Path, String)> = [
        (args.export_markdown.as_deref(), Format::Markdown),
        (args.export_json.as_deref(), Format::Json),
    ]
    .into_iter()
    .filter_map(|(path, format)| Some((path?, references::render(&outcome, format))))
    .collect();
    let files: Vec<(&Path, &[u8])> = exports.iter().map(|(p, t)| (*p, t.as_bytes())).collect();
    let written =
        compare::write::make_parents(&files).and_then(|()| compare::write::write_all(&files));
    written.map_err(|e| Failure::Unwritten(e.to_string()))?;
    let text = references::render(&outcome, args.format.into());
    print!("{}", super::for_terminal(&text, args.format.into()));
    if outcome.passed() {
        Ok(())
    } else {
        Err(Failure::Verdict)
    }
}

/// Reads the one run and the reference file, and checks one against the other; every error
/// is one line.
fn judge(runs: &[std::path::PathBuf], file: &Path) -> Result<Outcome, String> {
    let [dir] = runs else {
        return Err(format!(
            "--references checks one run; {} run directories were given: give one RUN_DIR",
            runs.len()
        ));
    };
    // A run directory, or a directory holding one (a CI job's --out), as compare reads a side.
    let run = compare::input::read_side(dir).map_err(|e| e.to_string())?;
    let refs = references::load(file).map_err(|e| e.to_string())?;
    references::check(&run, &refs, &file.display().to_string()).map_err(|e| e.to_string())
}
