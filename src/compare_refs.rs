//! `fabbench compare --references FILE RUN`: one run checked against reference values by the
//! compare crate, printed in the chosen format (and written as Markdown or JSON on request),
//! and the outcome mapped to the exit status: 0 when every reference passed, 1 when one failed
//! or was not measured, 2 when the input cannot be judged (a unit mismatch, an unknown metric,
//! a malformed file). The baseline comparison's --noise, --confidence and --fail-on do not
//! apply here.

use std::path::Path;

use compare::references::{self, Outcome};
use compare::Format;

use crate::compare_args::CompareArgs;
use crate::exit;

pub fn run(args: CompareArgs) -> i32 {
    let Some(file) = args.references.as_deref() else {
        return exit::USAGE;
    };
    let outcome = match judge(&args.runs, file) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::USAGE;
        }
    };
    let exports = [
        (args.export_markdown.as_deref(), Format::Markdown),
        (args.export_json.as_deref(), Format::Json),
    ];
    for (path, format) in exports {
        let Some(path) = path else { continue };
        if let Err(e) = write(path, &references::render(&outcome, format)) {
            eprintln!("error: {e}");
            return exit::FAILED;
        }
    }
    print!("{}", references::render(&outcome, args.format.into()));
    if outcome.passed() {
        exit::OK
    } else {
        exit::FAILED
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
    if !dir.is_dir() {
        return Err(format!(
            "{} is not a directory: give a run directory (OUT/RUN_ID, as fabbench run printed it)",
            dir.display()
        ));
    }
    let inside = results::read::runs_in(dir);
    if let [first, _, ..] = inside.as_slice() {
        return Err(format!(
            "{} holds {} runs (a scaling run); --references checks one: give one of them, e.g. {}",
            dir.display(),
            inside.len(),
            first.display()
        ));
    }
    let run = results::read_run(dir).map_err(|e| e.to_string())?;
    let refs = references::load(file).map_err(|e| e.to_string())?;
    references::check(&run, &refs, &file.display().to_string()).map_err(|e| e.to_string())
}

/// Writes `text` to `path` whole (a temporary name, renamed), creating its directory.
fn write(path: &Path, text: &str) -> Result<(), String> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    results::run_dir::write_atomically(path, text.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}
