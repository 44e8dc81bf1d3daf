//! Exports written whole or not at all: every file goes to a hidden temporary name beside its
//! destination first, and only when all are written are they renamed into place, so a failed
//! export leaves neither a truncated file nor one of several exports updated alone.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::CompareError;

fn write_error(path: &Path, e: impl std::fmt::Display) -> CompareError {
    CompareError::Write {
        path: path.display().to_string(),
        reason: e.to_string(),
    }
}

/// A hidden sibling of `path` for this process: `.NAME.tmp-PID`.
fn temporary(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}

fn write_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = fs::File::create(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

/// Writes each `(path, contents)`: all temporaries first, then the renames. On an error the
/// temporaries are removed and no destination has changed (unless a rename itself fails after
/// others succeeded, which within one directory means the disk went away).
pub fn write_all(files: &[(&Path, &[u8])]) -> Result<(), CompareError> {
    // Two contents for one file would share a temporary: refuse before writing either.
    for (i, (path, _)) in files.iter().enumerate() {
        if files[..i].iter().any(|(p, _)| p == path) {
            return Err(write_error(path, "it is named for two exports"));
        }
    }
    let mut written: Vec<PathBuf> = Vec::new();
    let result = (|| {
        for (path, bytes) in files {
            let tmp = temporary(path);
            written.push(tmp.clone());
            write_file(&tmp, bytes).map_err(|e| write_error(path, e))?;
        }
        for (path, _) in files {
            fs::rename(temporary(path), path).map_err(|e| write_error(path, e))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_files_or_none() {
        let d = std::env::temp_dir().join(format!("fabbench-compare-write-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        let (md, json) = (d.join("summary.md"), d.join("compare.json"));
        write_all(&[(&md, b"old"), (&json, b"old")]).unwrap();
        write_all(&[(&md, b"# new"), (&json, b"{}")]).unwrap();
        assert_eq!(fs::read_to_string(&md).unwrap(), "# new");
        assert_eq!(fs::read_to_string(&json).unwrap(), "{}");
        // The second file cannot be made: the first keeps its old contents, no temporary stays.
        let bad = d.join("missing/x.json");
        let e = write_all(&[(&md, b"newer"), (&bad, b"{}")]).unwrap_err();
        assert!(e.to_string().contains("missing/x.json"), "{e}");
        assert_eq!(fs::read_to_string(&md).unwrap(), "# new");
        let mut names: Vec<String> = fs::read_dir(&d)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["compare.json", "summary.md"]);
        let e = write_all(&[(&md, b"a"), (&md, b"b")]).unwrap_err();
        assert!(e.to_string().contains("named for two exports"), "{e}");
        assert_eq!(fs::read_to_string(&md).unwrap(), "# new");
        fs::remove_dir_all(&d).unwrap();
    }
}
