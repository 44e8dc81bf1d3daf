//! Reading a run directory's files, with errors that name the file.

use std::path::Path;

use crate::ResultsError;

pub(crate) fn read_text(path: &Path) -> Result<String, ResultsError> {
    std::fs::read_to_string(path).map_err(|source| ResultsError::Unreadable {
        path: path.to_path_buf(),
        source,
    })
}

pub(crate) fn malformed(path: &Path, e: impl std::fmt::Display) -> ResultsError {
    ResultsError::Malformed {
        path: path.to_path_buf(),
        reason: e.to_string(),
    }
}
