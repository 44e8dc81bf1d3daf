//! `fabbench report`, run by the `fabbench-report` binary: stored runs read through the
//! results reader, tabulated by the report crate, and printed to stdout or written whole to
//! `-o FILE` (Markdown's figures into a `STEM-plots/` directory beside it). Every error is one
//! line: exit status 3 when the output could not be written, 2 for anything else.

use std::io::Write;

use report::{By, CrossRunReport, Figure, Format, Inputs, ReportError};

use crate::args::{ReportArgs, ReportBy, ReportFormat};
use crate::exit;

pub fn run(args: ReportArgs) -> i32 {
    match report(&args) {
        Ok(()) => exit::OK,
        Err(e) => {
            eprintln!("error: {}", results::printable::error_line(&e.to_string()));
            match e {
                ReportError::Write { .. } => exit::UNWRITTEN,
                _ => exit::USAGE,
            }
        }
    }
}

fn by(b: ReportBy) -> By {
    match b {
        ReportBy::Fabric => By::Fabric,
        ReportBy::Run => By::Run,
        ReportBy::Tunable => By::Tunable,
    }
}

fn format(f: ReportFormat) -> Format {
    match f {
        ReportFormat::Table => Format::Table,
        ReportFormat::Csv => Format::Csv,
        ReportFormat::Markdown => Format::Markdown,
        ReportFormat::Html => Format::Html,
    }
}

/// What `dir` is when it is one of fabbench's outputs other than a run: the file each command
/// writes into its directory, and no manifest.json.
fn other_output(dir: &std::path::Path) -> Option<&'static str> {
    if dir.join("manifest.json").exists() {
        return None;
    }
    [
        ("autotune.json", "an autotune directory"),
        ("fit.json", "a characterisation"),
        ("calibration.json", "a calibration"),
    ]
    .into_iter()
    .find(|(file, _)| dir.join(file).is_file())
    .map(|(_, kind)| kind)
}

fn report(args: &ReportArgs) -> Result<(), ReportError> {
    let mut runs: Vec<std::path::PathBuf> = Vec::new();
    for dir in &args.runs {
        // `fabbench report fabbench-results/*` meets fabbench's other directories too: they
        // hold no run to tabulate, so they are passed over by name rather than refused.
        if let Some(kind) = other_output(dir) {
            eprintln!("note: {} is {kind}, not a run: left out", dir.display());
            continue;
        }
        runs.extend(results::read::runs_in(dir));
    }
    let inputs = Inputs::read(&runs)?;
    let report = CrossRunReport::build(&inputs, by(args.by), args.reference.as_deref())?;
    let format = format(args.format);
    // Only Markdown and HTML show figures; the others need none drawn.
    let figures: Vec<Figure> = if matches!(format, Format::Markdown | Format::Html) {
        plots::report_figures(inputs.runs())
            .into_iter()
            .map(|(title, stem, svg)| Figure {
                title,
                file_name: format!("{stem}.svg"),
                svg,
            })
            .collect()
    } else {
        Vec::new()
    };
    match &args.output {
        None => {
            let bytes = report::exporter(format, None).export(&report, &figures)?;
            // Text and Markdown for a terminal: labels from the runs' files (a host name, a
            // run id) cannot drive it. CSV is data, and HTML escapes its own text.
            let bytes = match format {
                Format::Table | Format::Markdown => {
                    let text = String::from_utf8_lossy(&bytes);
                    results::printable::terminal_text(&text)
                        .into_owned()
                        .into_bytes()
                }
                _ => bytes,
            };
            let mut out = std::io::stdout().lock();
            match out.write_all(&bytes).and_then(|()| out.flush()) {
                // A reader that stopped early (`| head`) wanted no more.
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(ReportError::Write {
                    path: "stdout".into(),
                    reason: e.to_string(),
                }),
                _ => Ok(()),
            }
        }
        Some(path) => {
            // Markdown links its figures in a directory beside the report; HTML inlines them.
            let plots = (format == Format::Markdown).then(|| report::output::plots_dir_for(path));
            let link_dir = plots
                .as_ref()
                .and_then(|d| d.file_name())
                .map(|n| n.to_string_lossy().into_owned());
            let bytes = report::exporter(format, link_dir.as_deref()).export(&report, &figures)?;
            report::output::write(path, &bytes, &figures, plots.as_deref())
        }
    }
}
