//! Exports written whole or not at all: every file goes to a hidden temporary name beside its
//! destination first, and only when all are written are they renamed into place, so a failed
//! export leaves neither a truncated file nor one of several exports updated alone.

use std::path::Path;

use crate::CompareError;

/// Writes each `(path, contents)`: all temporaries first, then the renames (see
/// [`results::atomic::write_all`]); the error names the file.
pub fn write_all(files: &[(&Path, &[u8])]) -> Result<(), CompareError> {
    results::atomic::write_all(files).map_err(|(path, source)| CompareError::Write { path, source })
}

/// Creates the directories `files` go into, as a user naming `summary/check.md` expects.
pub fn make_parents(files: &[(&Path, &[u8])]) -> Result<(), CompareError> {
    for (path, _) in files {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|source| CompareError::MakeDir {
                path: path.to_path_buf(),
                source,
            })?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

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
        assert!(e.to_string().contains("named for two outputs"), "{e}");
        assert_eq!(fs::read_to_string(&md).unwrap(), "# new");
        fs::remove_dir_all(&d).unwrap();
    }
}
