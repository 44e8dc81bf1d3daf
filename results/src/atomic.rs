//! Files written whole or not at all, for every writer fabbench has (run directories, reports,
//! comparisons, history entries, CI exports): a file goes to a hidden temporary sibling,
//! `.NAME.tmp-PID`, is synced, and only then takes its name, so a crash or a full disk never
//! leaves a truncated file where a reader would take it for a complete one.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The hidden sibling of `path` this process writes first: `.NAME.tmp-PID`.
pub fn temporary(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}

/// Creates (or truncates) `path` with `bytes`, synced to the disk.
pub fn write_synced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = fs::File::create(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

/// Writes `bytes` to `target` whole or not at all: into [`temporary`], synced, then renamed
/// over `target`. The temporary is removed if any step fails.
pub fn write_atomically(target: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = temporary(target);
    let written = write_synced(&tmp, bytes).and_then(|()| fs::rename(&tmp, target));
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

/// Writes each `(path, contents)`: every temporary first, then the renames, so several files
/// that belong together (a comparison's Markdown and JSON) change together. On an error the
/// temporaries are removed and no destination has changed (unless a rename fails after others
/// succeeded, which within one directory means the disk went away); the error names the path.
/// Two contents for one path are refused before anything is written.
pub fn write_all(files: &[(&Path, &[u8])]) -> Result<(), (PathBuf, std::io::Error)> {
    for (i, (path, _)) in files.iter().enumerate() {
        if files[..i].iter().any(|(p, _)| p == path) {
            let e = std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "it is named for two outputs",
            );
            return Err((path.to_path_buf(), e));
        }
    }
    let mut written: Vec<PathBuf> = Vec::new();
    let result = (|| {
        for (path, bytes) in files {
            let tmp = temporary(path);
            written.push(tmp.clone());
            write_synced(&tmp, bytes).map_err(|e| (path.to_path_buf(), e))?;
        }
        for (path, _) in files {
            fs::rename(temporary(path), path).map_err(|e| (path.to_path_buf(), e))?;
        }
        Ok(())
    })();
    if result.is_err() {
        for tmp in &written {
            let _ = fs::remove_file(tmp);
        }
    }
    result
}
