//! The one trait behind every file format a run is written in (hyperfine's shape): an exporter
//! turns a [`Run`] into named files and knows nothing of where they go.

use std::path::PathBuf;

use crate::model::Run;
use crate::ResultsError;

pub trait Exporter: Sync {
    /// The files this exporter makes, as (path inside the run directory, bytes).
    fn export(&self, run: &Run) -> Result<Vec<(PathBuf, Vec<u8>)>, ResultsError>;
}
