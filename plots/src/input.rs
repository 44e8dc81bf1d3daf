//! What the charts are drawn from: run directories read through the results reader, and
//! autotune directories read from their autotune.json. A directory is recognised by the file
//! that makes it canonical, so an error names that file.

use std::path::{Path, PathBuf};

use autotune::Outcome;
use results::Run;

use crate::error::PlotError;

/// One directory's contents.
#[derive(Debug, Clone)]
pub enum Source {
    Run(Box<Run>),
    Autotune(Box<Outcome>),
}

/// A directory given on the command line, read.
#[derive(Debug, Clone)]
pub struct Input {
    pub dir: PathBuf,
    pub source: Source,
}

impl Input {
    /// Reads `dir` as a run directory (manifest.json) or an autotune directory
    /// (autotune.json).
    pub fn load(dir: &Path) -> Result<Input, PlotError> {
        let bad = |message: String| PlotError::Input {
            path: dir.to_path_buf(),
            message,
        };
        if !dir.is_dir() {
            return Err(bad("no such run directory".into()));
        }
        let source = if dir.join("manifest.json").exists() {
            Source::Run(Box::new(results::read_run(dir)?))
        } else if dir.join("autotune.json").exists() {
            let path = dir.join("autotune.json");
            let text = results::read::read_regular(&path).map_err(|e| PlotError::Input {
                path: path.clone(),
                message: e.to_string(),
            })?;
            let o: Outcome = serde_json::from_str(&text).map_err(|e| PlotError::Input {
                path: path.clone(),
                message: format!("not an autotune outcome: {e}"),
            })?;
            Source::Autotune(Box::new(o))
        } else {
            return Err(bad(
                "neither a run directory (no manifest.json) nor an autotune directory (no \
                 autotune.json) nor a calibration directory (no calibration.json)"
                    .into(),
            ));
        };
        Ok(Input {
            dir: dir.to_path_buf(),
            source,
        })
    }

    pub fn run(&self) -> Option<&Run> {
        match &self.source {
            Source::Run(r) => Some(r),
            Source::Autotune(_) => None,
        }
    }

    pub fn autotune(&self) -> Option<&Outcome> {
        match &self.source {
            Source::Autotune(o) => Some(o),
            Source::Run(_) => None,
        }
    }
}
