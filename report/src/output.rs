//! Writing a report to a file whole or not at all: the report goes to a temporary file in the
//! output's directory and the figures to a temporary directory beside it; only once both are
//! complete are they renamed into place (the figures first, so a report never links files that
//! are not there yet). On any error the temporary files are removed, so a failed report leaves
//! nothing, not even a truncated older report.

use std::fs;
use std::path::{Path, PathBuf};

use results::atomic::{temporary, write_synced as write_file};

use crate::{Figure, ReportError};

/// The directory Markdown's figures go to: beside `output`, named after its stem
/// (`out/report.md` → `out/report-plots`).
pub fn plots_dir_for(output: &Path) -> PathBuf {
    let stem = output
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "report".into());
    output.with_file_name(format!("{stem}-plots"))
}

fn write_error(path: &Path, e: impl std::fmt::Display) -> ReportError {
    ReportError::Write {
        path: path.display().to_string(),
        reason: e.to_string(),
    }
}

/// Removes what a failed write left; a removal that fails leaves a hidden temporary behind,
/// which is all that can be done.
struct Cleanup(Vec<PathBuf>);

impl Drop for Cleanup {
    fn drop(&mut self) {
        for p in &self.0 {
            if p.is_dir() {
                let _ = fs::remove_dir_all(p);
            } else {
                let _ = fs::remove_file(p);
            }
        }
    }
}

/// Writes `bytes` to `path` and, when `plots` is given and there are figures, each figure's
/// SVG into that directory (replacing one left by an earlier report). Either everything is in
/// place afterwards or, on error, nothing new is.
pub fn write(
    path: &Path,
    bytes: &[u8],
    figures: &[Figure],
    plots: Option<&Path>,
) -> Result<(), ReportError> {
    let tmp = temporary(path);
    let mut cleanup = Cleanup(vec![tmp.clone()]);
    write_file(&tmp, bytes).map_err(|e| write_error(path, e))?;
    let mut placed_plots = None;
    if let (Some(dir), false) = (plots, figures.is_empty()) {
        let tmp_dir = temporary(dir);
        cleanup.0.push(tmp_dir.clone());
        let _ = fs::remove_dir_all(&tmp_dir);
        fs::create_dir(&tmp_dir).map_err(|e| write_error(dir, e))?;
        for f in figures {
            let file = tmp_dir.join(&f.file_name);
            write_file(&file, f.svg.as_bytes())
                .map_err(|e| write_error(&dir.join(&f.file_name), e))?;
        }
        // A directory cannot be renamed over a non-empty one: the old one goes aside first,
        // and is removed once the new one is in place.
        let old = dir.with_file_name(format!(
            ".{}.old-{}",
            dir.file_name().unwrap_or_default().to_string_lossy(),
            std::process::id()
        ));
        let had_old = dir.exists();
        if had_old {
            fs::rename(dir, &old).map_err(|e| write_error(dir, e))?;
        }
        if let Err(e) = fs::rename(&tmp_dir, dir) {
            if had_old {
                let _ = fs::rename(&old, dir);
            }
            return Err(write_error(dir, e));
        }
        if had_old {
            let _ = fs::remove_dir_all(&old);
        }
        placed_plots = Some(dir.to_path_buf());
    }
    if let Err(e) = fs::rename(&tmp, path) {
        // The report is not there: neither should its figures be.
        if let Some(d) = placed_plots {
            cleanup.0.push(d);
        }
        return Err(write_error(path, e));
    }
    cleanup.0.clear();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "fabbench-report-{name}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    fn listing(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(d)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    fn figure(name: &str) -> Figure {
        Figure {
            title: name.into(),
            file_name: format!("{name}.svg"),
            svg: "<svg/>".into(),
        }
    }

    #[test]
    fn the_plots_dir_is_named_after_the_stem() {
        assert_eq!(
            plots_dir_for(Path::new("out/report.md")),
            Path::new("out/report-plots")
        );
        assert_eq!(plots_dir_for(Path::new("r")), Path::new("r-plots"));
    }

    #[test]
    fn the_report_and_its_figures_replace_older_ones_whole() {
        let d = scratch("whole");
        let out = d.join("report.md");
        let plots = plots_dir_for(&out);
        write(&out, b"one", &[figure("a"), figure("b")], Some(&plots)).unwrap();
        assert_eq!(listing(&d), ["report-plots", "report.md"]);
        assert_eq!(listing(&plots), ["a.svg", "b.svg"]);
        write(&out, b"two", &[figure("c")], Some(&plots)).unwrap();
        assert_eq!(fs::read_to_string(&out).unwrap(), "two");
        assert_eq!(listing(&plots), ["c.svg"]);
        assert_eq!(listing(&d), ["report-plots", "report.md"]);
        // Without figures no directory is made.
        let csv = d.join("t.csv");
        write(&csv, b"x", &[], Some(&plots_dir_for(&csv))).unwrap();
        assert_eq!(listing(&d), ["report-plots", "report.md", "t.csv"]);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_failed_write_leaves_nothing() {
        let d = scratch("failed");
        let out = d.join("report.md");
        // A figure whose file cannot be made (its name is a path into a missing directory).
        let bad = Figure {
            file_name: "missing/x.svg".into(),
            ..figure("x")
        };
        let e = write(&out, b"one", &[bad], Some(&plots_dir_for(&out))).unwrap_err();
        assert!(e.to_string().contains("report-plots/missing/x.svg"), "{e}");
        assert!(listing(&d).is_empty(), "{:?}", listing(&d));
        // A report into a missing directory names it.
        let e = write(&d.join("no/r.csv"), b"x", &[], None).unwrap_err();
        assert!(e.to_string().contains("no/r.csv"), "{e}");
        assert!(listing(&d).is_empty());
        fs::remove_dir_all(&d).unwrap();
    }
}
