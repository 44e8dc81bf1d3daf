//! The characterisation directory: the card, the fit's numbers and report, and its chart (SVG
//! and PNG), made under a temporary name and renamed whole, as a run directory is.

use std::path::{Path, PathBuf};

use results::run_dir::RunDir;

use crate::error::CharacteriseError;
use crate::report::{Outcome, EXPORTERS};

/// Writes every file of `o` into a new directory under `out`; returns its path.
pub fn write(o: &Outcome, out: &Path) -> Result<PathBuf, CharacteriseError> {
    let id = format!(
        "{}-characterise-{}",
        results::run_dir::stamp(std::time::SystemTime::now()),
        o.fabric.replace(['@', '/'], "-")
    );
    // Everything is rendered before the directory exists: a failure leaves nothing behind.
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    for e in EXPORTERS {
        let text = e.render(o).map_err(|source| CharacteriseError::Render {
            file: e.file_name(),
            source,
        })?;
        files.push((e.file_name().to_string(), text.into_bytes()));
    }
    let subtitle = format!(
        "{} ranks on {}{} · markers measured, lines the fitted model",
        o.ranks,
        o.host,
        if o.emulated {
            " · emulated (virtual time)"
        } else {
            ""
        }
    );
    let chart = crate::chart::chart(&o.fabric, &subtitle, &o.observations, &o.fit);
    files.push((format!("{}.svg", chart.name), chart.svg()?.into_bytes()));
    files.push((format!("{}.png", chart.name), chart.png()?));
    let dir = RunDir::create(out, &id).map_err(CharacteriseError::Unwritable)?;
    for (name, bytes) in &files {
        dir.write(Path::new(name), bytes)
            .map_err(|source| CharacteriseError::Write {
                path: dir.final_path().join(name),
                source,
            })?;
    }
    dir.commit().map_err(|source| CharacteriseError::Write {
        path: out.to_path_buf(),
        source,
    })
}
