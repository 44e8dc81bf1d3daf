//! Writing charts to a directory: every image is rendered in memory first, then each file is
//! written as the run directory's files are ([`results::run_dir::write_atomically`]), so a
//! failure leaves no half-written image and an earlier chart of the same name is replaced
//! whole.

use std::path::{Path, PathBuf};

use crate::error::PlotError;
use crate::Chart;

/// Which image files to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Svg,
    Png,
    Both,
}

impl Format {
    fn svg(self) -> bool {
        matches!(self, Format::Svg | Format::Both)
    }
    fn png(self) -> bool {
        matches!(self, Format::Png | Format::Both)
    }
}

/// Renders every chart, then writes them into `dir` (created if needed); the paths written.
pub fn write_all(charts: &[Chart], dir: &Path, format: Format) -> Result<Vec<PathBuf>, PlotError> {
    let mut files: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    for c in charts {
        if format.svg() {
            files.push((dir.join(format!("{}.svg", c.name)), c.svg()?.into_bytes()));
        }
        if format.png() {
            files.push((dir.join(format!("{}.png", c.name)), c.png()?));
        }
    }
    std::fs::create_dir_all(dir).map_err(|source| PlotError::Write {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut written = Vec::new();
    for (path, bytes) in files {
        results::run_dir::write_atomically(&path, &bytes).map_err(|source| PlotError::Write {
            path: path.clone(),
            source,
        })?;
        written.push(path);
    }
    Ok(written)
}
