//! Reading a run directory's files, with errors that name the file.

use std::io::Read;
use std::path::Path;

use crate::ResultsError;

pub(crate) fn read_text(path: &Path) -> Result<String, ResultsError> {
    read_regular(path).map_err(|source| ResultsError::Unreadable {
        path: path.to_path_buf(),
        source,
    })
}

/// The text of `path` if it is a regular file. Anything else is refused at once rather than
/// read: a FIFO named manifest.json would block its reader for ever, a device would never end.
/// The file is opened without blocking and its type taken from the open handle, so nothing can
/// swap it between the check and the read. Every reader of a file a user names goes through
/// here (run directories, history stores, profiles, cards, reference and curve files).
pub fn read_regular(path: &Path) -> std::io::Result<String> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    if !file.metadata()?.file_type().is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    let mut text = String::new();
    file.read_to_string(&mut text)?;
    Ok(text)
}

pub(crate) fn malformed(path: &Path, e: impl std::fmt::Display) -> ResultsError {
    ResultsError::Malformed {
        path: path.to_path_buf(),
        reason: e.to_string(),
    }
}
