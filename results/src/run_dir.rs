//! A run's result directory, written so that a crash never leaves a half-written result.
//!
//! Files go into `OUT/.RUN_ID.partial/` (each written to a temporary name and renamed), and
//! [`RunDir::commit`] renames the whole directory to `OUT/RUN_ID`. A `RunDir` dropped without
//! a commit removes its partial directory.

use std::fs;
use std::path::{Path, PathBuf};

use crate::ResultsError;

/// A directory name's time stamp, `20261122T101530Z`: RFC 3339 without its separators, so
/// names sort by time and hold no characters a shell or file system minds.
pub fn stamp(t: std::time::SystemTime) -> String {
    humantime::format_rfc3339_seconds(t)
        .to_string()
        .chars()
        .filter(|c| *c != '-' && *c != ':')
        .collect()
}

/// The time stamp a run id starts with (`20261123T150735Z` of
/// `20261123T150735Z-osu_latency-shm`), or the whole id if it has none.
pub fn stamp_of(run_id: &str) -> &str {
    run_id.split('-').next().unwrap_or(run_id)
}

pub use crate::atomic::write_atomically;

pub struct RunDir {
    partial: PathBuf,
    final_path: PathBuf,
    committed: bool,
}

impl RunDir {
    /// Creates `out` if needed and the partial directory inside it. Fails with a one-line
    /// reason if `out` cannot be written, before any measurement starts.
    pub fn create(out: &Path, run_id: &str) -> Result<RunDir, ResultsError> {
        let unwritable = |e: std::io::Error| ResultsError::Unwritable {
            path: out.display().to_string(),
            reason: e.to_string(),
        };
        fs::create_dir_all(out).map_err(unwritable)?;
        let mut id = run_id.to_string();
        let mut n = 1;
        while out.join(&id).exists() || out.join(format!(".{id}.partial")).exists() {
            n += 1;
            id = format!("{run_id}-{n}");
        }
        let partial = out.join(format!(".{id}.partial"));
        fs::create_dir(&partial).map_err(unwritable)?;
        Ok(RunDir {
            partial,
            final_path: out.join(id),
            committed: false,
        })
    }

    /// Where the run will be once committed.
    pub fn final_path(&self) -> &Path {
        &self.final_path
    }

    /// Writes `bytes` to `rel` (may contain subdirectories) inside the run.
    pub fn write(&self, rel: &Path, bytes: &[u8]) -> Result<(), ResultsError> {
        let target = self.partial.join(rel);
        let io = |e: std::io::Error| ResultsError::Io {
            path: target.display().to_string(),
            reason: e.to_string(),
        };
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent).map_err(io)?;
        }
        write_atomically(&target, bytes).map_err(io)
    }

    /// Renames the run into place and returns its path.
    pub fn commit(mut self) -> Result<PathBuf, ResultsError> {
        fs::rename(&self.partial, &self.final_path).map_err(|e| ResultsError::Io {
            path: self.final_path.display().to_string(),
            reason: e.to_string(),
        })?;
        self.committed = true;
        Ok(self.final_path.clone())
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_dir_all(&self.partial);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp() -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "fabbench-rundir-{}",
            bench_core::bootstrap::random_hex(6)
        ));
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn commit_moves_everything_into_place() {
        let out = tmp();
        let rd = RunDir::create(&out, "run1").unwrap();
        rd.write(Path::new("a.txt"), b"hello").unwrap();
        rd.write(Path::new("sub/b.txt"), b"x").unwrap();
        let p = rd.commit().unwrap();
        assert_eq!(fs::read_to_string(p.join("a.txt")).unwrap(), "hello");
        assert!(p.join("sub/b.txt").exists());
        let names: Vec<_> = fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("run1")]);
        // a second run with the same id gets a suffix
        let rd2 = RunDir::create(&out, "run1").unwrap();
        assert!(rd2.final_path().ends_with("run1-2"));
        fs::remove_dir_all(out).unwrap();
    }

    #[test]
    fn an_uncommitted_run_leaves_nothing() {
        let out = tmp();
        {
            let rd = RunDir::create(&out, "run").unwrap();
            rd.write(Path::new("a.txt"), b"partial").unwrap();
        }
        assert_eq!(fs::read_dir(&out).unwrap().count(), 0);
        fs::remove_dir_all(out).unwrap();
    }

    #[test]
    fn an_unwritable_out_is_reported_before_anything_is_written() {
        let err = RunDir::create(Path::new("/proc/fabbench-cannot-be-here"), "r")
            .err()
            .unwrap();
        assert!(matches!(err, ResultsError::Unwritable { .. }), "{err}");
    }
}
