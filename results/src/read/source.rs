//! Reading a run directory's files, with errors that name the file.

use std::path::Path;

use crate::ResultsError;

pub(crate) fn read_text(path: &Path) -> Result<String, ResultsError> {
    std::fs::read_to_string(path).map_err(|e| ResultsError::Unreadable {
        path: path.display().to_string(),
        reason: e.to_string(),
    })
}

pub(crate) fn malformed(path: &Path, e: impl std::fmt::Display) -> ResultsError {
    ResultsError::Malformed {
        path: path.display().to_string(),
        reason: e.to_string(),
    }
}
