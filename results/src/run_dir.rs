//! A run's result directory, written so that nothing measured is lost and nothing
//! half-written passes for a complete result.
//!
//! A run works in `OUT/.RUN_ID.partial/`, which holds an owner file (pid and host of the
//! process writing it). While it runs, the runner journals every completed point into it
//! ([`RunDir::append`], [`RunDir::write_quick`]): samples.csv grows and manifest.json, marked
//! partial, is replaced, so the directory can be read at any moment. [`RunDir::commit`] renames
//! it to `OUT/RUN_ID` once everything is written; [`RunDir::keep`] renames a run that failed
//! or was stopped to the visible `OUT/RUN_ID.partial`, which every reader reads and marks;
//! [`RunDir::discard`] removes a run that measured nothing. A run whose process died outright
//! (kill -9, a lost node) leaves its working directory behind: the next run into the same
//! `OUT` finds it by its owner file and keeps it as `RUN_ID.partial` ([`recover_leftovers`]).

use std::fs;
use std::io::Write;
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

/// The file every point's samples are in (appended as each is measured).
pub const SAMPLES: &str = "samples.csv";
/// The file that says what the run is and which points it holds (the reader's entry).
pub const MANIFEST: &str = "manifest.json";

/// The suffix of a kept, incomplete run's directory: `OUT/RUN_ID.partial`.
pub const PARTIAL_SUFFIX: &str = ".partial";
/// The file in a working directory naming the process that writes it.
const OWNER: &str = ".owner";

pub struct RunDir {
    out: PathBuf,
    id: String,
    work: PathBuf,
    ended: bool,
}

fn unwritable(out: &Path) -> impl Fn(std::io::Error) -> ResultsError + '_ {
    move |source| ResultsError::Unwritable {
        path: out.to_path_buf(),
        source,
    }
}

fn io_error(path: &Path) -> impl Fn(std::io::Error) -> ResultsError + '_ {
    move |source| ResultsError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn this_host() -> String {
    fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default()
}

fn owner_line() -> String {
    format!("{} {}\n", std::process::id(), this_host())
}

/// Whether the process an owner file names is gone: it ran on this host and no process has
/// its pid any more. A directory owned on another host (a shared file system) is never
/// judged from here.
fn owner_is_gone(owner: &str) -> Option<u32> {
    let mut words = owner.split_whitespace();
    let pid: u32 = words.next()?.parse().ok()?;
    let host = words.next().unwrap_or("");
    (host == this_host() && !Path::new("/proc").join(pid.to_string()).exists()).then_some(pid)
}

impl RunDir {
    /// Creates `out` if needed and claims a run id in it: `run_id`, or `run_id-2`, `-3` ...
    /// when another run (finished, kept partial, or still working, possibly started at the
    /// same instant by another process) has it. The claim is the atomic creation of the
    /// working directory, so two runs never share one. Fails with a one-line reason if `out`
    /// cannot be written, before any measurement starts.
    pub fn create(out: &Path, run_id: &str) -> Result<RunDir, ResultsError> {
        fs::create_dir_all(out).map_err(unwritable(out))?;
        recover_leftovers(out);
        for n in 1.. {
            let id = if n == 1 {
                run_id.to_string()
            } else {
                format!("{run_id}-{n}")
            };
            let work = out.join(format!(".{id}{PARTIAL_SUFFIX}"));
            match fs::create_dir(&work) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(unwritable(out)(e)),
            }
            // Checked after the claim: a run that committed `id` renamed its working
            // directory away before we could create ours, so its result is visible by now.
            if out.join(&id).exists() || out.join(format!("{id}{PARTIAL_SUFFIX}")).exists() {
                let _ = fs::remove_dir(&work);
                continue;
            }
            let dir = RunDir {
                out: out.to_path_buf(),
                id,
                work,
                ended: false,
            };
            crate::atomic::write_synced(&dir.work.join(OWNER), owner_line().as_bytes())
                .map_err(unwritable(out))?;
            return Ok(dir);
        }
        unreachable!("the suffixes never run out")
    }

    /// Takes up a kept partial run (`OUT/RUN_ID.partial`) to continue it: its directory
    /// becomes this process's working directory again. Fails if it is not a kept partial run
    /// or another process took it first.
    pub fn resume(partial: &Path) -> Result<RunDir, ResultsError> {
        let refuse = |why: &'static str| ResultsError::NotResumable {
            path: partial.to_path_buf(),
            why,
        };
        let name = partial
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let Some(id) = name
            .strip_suffix(PARTIAL_SUFFIX)
            .filter(|id| !id.is_empty())
        else {
            return Err(refuse(
                "a run to resume is a directory named RUN_ID.partial, as a failed or stopped run is kept",
            ));
        };
        if id.starts_with('.') {
            return Err(refuse("it is the working directory of a run still going"));
        }
        let out = partial
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let work = out.join(format!(".{id}{PARTIAL_SUFFIX}"));
        fs::rename(partial, &work).map_err(|source| ResultsError::Unreadable {
            path: partial.to_path_buf(),
            source,
        })?;
        crate::atomic::write_synced(&work.join(OWNER), owner_line().as_bytes())
            .map_err(io_error(&work))?;
        Ok(RunDir {
            out,
            id: id.to_string(),
            work,
            ended: false,
        })
    }

    /// The run id this directory holds.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Where the run will be once committed.
    pub fn final_path(&self) -> PathBuf {
        self.out.join(&self.id)
    }

    /// Where the run is kept if it ends incomplete.
    pub fn partial_path(&self) -> PathBuf {
        self.out.join(format!("{}{PARTIAL_SUFFIX}", self.id))
    }

    /// The working directory, readable while the run goes.
    pub fn working_path(&self) -> &Path {
        &self.work
    }

    /// Writes `bytes` to `rel` (may contain subdirectories) inside the run, synced.
    pub fn write(&self, rel: &Path, bytes: &[u8]) -> Result<(), ResultsError> {
        let target = self.target(rel)?;
        write_atomically(&target, bytes).map_err(io_error(&target))
    }

    /// Replaces `rel` whole, unsynced: a journal file rewritten after every point, which must
    /// never be seen half-written but need not survive a power cut (the final write syncs).
    pub fn write_quick(&self, rel: &Path, bytes: &[u8]) -> Result<(), ResultsError> {
        let target = self.target(rel)?;
        let tmp = crate::atomic::temporary(&target);
        fs::write(&tmp, bytes)
            .and_then(|()| fs::rename(&tmp, &target))
            .map_err(|e| {
                let _ = fs::remove_file(&tmp);
                io_error(&target)(e)
            })
    }

    /// Appends `bytes` to `rel`, creating it: a journal that only grows (samples.csv). An
    /// append that fails (a full disk) is cut back off, so the file ends where it did, with
    /// no torn line, and the space the part written took is free for the manifest that says
    /// why the run stopped.
    pub fn append(&self, rel: &Path, bytes: &[u8]) -> Result<(), ResultsError> {
        let target = self.target(rel)?;
        let mut f = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&target)
            .map_err(io_error(&target))?;
        let before = f.metadata().map_err(io_error(&target))?.len();
        f.write_all(bytes).map_err(|e| {
            let _ = f.set_len(before);
            io_error(&target)(e)
        })
    }

    /// As [`RunDir::write`], except that a file already holding exactly `bytes` (the journal's
    /// samples.csv, which the final export repeats) is only synced: rewriting it would need
    /// its size again in free space.
    pub fn write_unless_same(&self, rel: &Path, bytes: &[u8]) -> Result<(), ResultsError> {
        let target = self.target(rel)?;
        let same = fs::metadata(&target).is_ok_and(|m| m.len() == bytes.len() as u64)
            && fs::read(&target).is_ok_and(|had| had == bytes);
        if !same {
            return self.write(rel, bytes);
        }
        fs::File::open(&target)
            .and_then(|f| f.sync_all())
            .map_err(io_error(&target))
    }

    fn target(&self, rel: &Path) -> Result<PathBuf, ResultsError> {
        let target = self.work.join(rel);
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent).map_err(io_error(&target))?;
        }
        Ok(target)
    }

    /// Removes every file and directory of the run but `keep` (names in the run's top level)
    /// and the owner file: the exports an earlier part of a resumed run left, once the files
    /// that replace them are written. Never called before they are, so a disk that refuses a
    /// write cannot cost what was already there.
    pub fn remove_except(&self, keep: &[&str]) -> Result<(), ResultsError> {
        for entry in fs::read_dir(&self.work).map_err(io_error(&self.work))? {
            let entry = entry.map_err(io_error(&self.work))?;
            let name = entry.file_name();
            if name == OWNER || keep.iter().any(|k| name == *k) {
                continue;
            }
            let p = entry.path();
            let gone = if p.is_dir() {
                fs::remove_dir_all(&p)
            } else {
                fs::remove_file(&p)
            };
            gone.map_err(io_error(&p))?;
        }
        Ok(())
    }

    /// Renames the complete run into place and returns its path.
    pub fn commit(mut self) -> Result<PathBuf, ResultsError> {
        self.finish(self.final_path())
    }

    /// Keeps an incomplete run as `OUT/RUN_ID.partial` and returns its path.
    pub fn keep(mut self) -> Result<PathBuf, ResultsError> {
        self.finish(self.partial_path())
    }

    /// Removes a run that measured nothing.
    pub fn discard(mut self) {
        self.ended = true;
        let _ = fs::remove_dir_all(&self.work);
    }

    fn finish(&mut self, to: PathBuf) -> Result<PathBuf, ResultsError> {
        let _ = fs::remove_file(self.work.join(OWNER));
        fs::rename(&self.work, &to).map_err(io_error(&to))?;
        self.ended = true;
        Ok(to)
    }
}

impl Drop for RunDir {
    /// A run dropped without an ending (an error or a panic on the way out) is kept if it
    /// journalled anything, since that is what was measured, and removed if it is empty.
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        let _ = fs::remove_file(self.work.join(OWNER));
        let empty = fs::read_dir(&self.work).map_or(true, |mut d| d.next().is_none());
        if empty {
            let _ = fs::remove_dir(&self.work);
        } else {
            let _ = fs::rename(&self.work, self.partial_path());
        }
    }
}

/// Claims a fresh directory `OUT/STAMP-SUFFIX` for a group of runs (a scaling run's counts,
/// say) by creating it: `STAMP-SUFFIX-2`, `-3` ... when another process took the name in the
/// same second. Creating it is the claim, so two callers never share one; `out` is created
/// if needed, and a failure is [`ResultsError::Unwritable`] naming `out`.
pub fn claim(out: &Path, stamp: &str, suffix: &str) -> Result<PathBuf, ResultsError> {
    fs::create_dir_all(out).map_err(unwritable(out))?;
    let base = format!("{stamp}-{suffix}");
    for n in 1.. {
        let dir = match n {
            1 => out.join(&base),
            _ => out.join(format!("{base}-{n}")),
        };
        match fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(unwritable(out)(e)),
        }
    }
    unreachable!("the suffixes never run out")
}

/// Finds working directories in `out` whose owner on this host is gone (killed outright) and
/// keeps each as `RUN_ID.partial`, its manifest saying so; one that never journalled a point
/// is removed, as are temporaries such a process left. Returns the kept directories.
pub fn recover_leftovers(out: &Path) -> Vec<PathBuf> {
    let mut kept = Vec::new();
    let Ok(entries) = fs::read_dir(out) else {
        return kept;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(pid) = stale_temporary(&name) {
            if owner_is_gone(&format!("{pid} {}", this_host())).is_some() {
                let _ = fs::remove_file(entry.path());
            }
            continue;
        }
        let Some(id) = name
            .strip_prefix('.')
            .and_then(|n| n.strip_suffix(PARTIAL_SUFFIX))
        else {
            continue;
        };
        let work = entry.path();
        let owner = fs::read_to_string(work.join(OWNER)).unwrap_or_default();
        let Some(pid) = owner_is_gone(&owner) else {
            continue;
        };
        let manifest = work.join("manifest.json");
        if !manifest.is_file() {
            let _ = fs::remove_dir_all(&work);
            continue;
        }
        let reason = format!(
            "the process writing it (pid {pid}) ended without finishing the run (killed, or its host failed)"
        );
        if let Ok(text) = fs::read_to_string(&manifest) {
            if let Ok(mut v) = serde_json::from_str::<serde_json::Value>(&text) {
                if let Some(p) = v.get_mut("partial").and_then(|p| p.as_object_mut()) {
                    p.insert("reason".into(), serde_json::Value::String(reason));
                }
                if let Ok(mut bytes) = serde_json::to_vec_pretty(&v) {
                    bytes.push(b'\n');
                    let _ = write_atomically(&manifest, &bytes);
                }
            }
        }
        let _ = fs::remove_file(work.join(OWNER));
        let to = out.join(format!("{id}{PARTIAL_SUFFIX}"));
        if fs::rename(&work, &to).is_ok() {
            kept.push(to);
        }
    }
    kept
}

/// The pid in a temporary's name, `.NAME.tmp-PID`.
fn stale_temporary(name: &str) -> Option<u32> {
    let (_, pid) = name.strip_prefix('.')?.rsplit_once(".tmp-")?;
    pid.parse().ok()
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

    fn names(out: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(out)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
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
        assert!(!p.join(OWNER).exists());
        assert_eq!(names(&out), vec!["run1"]);
        // a second run with the same id gets a suffix
        let rd2 = RunDir::create(&out, "run1").unwrap();
        assert!(rd2.final_path().ends_with("run1-2"));
        rd2.discard();
        fs::remove_dir_all(out).unwrap();
    }

    #[test]
    fn runs_started_at_once_get_distinct_ids() {
        let out = tmp();
        let ids: Vec<String> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|_| s.spawn(|| RunDir::create(&out, "same").unwrap()))
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    let d = h.join().unwrap();
                    let id = d.id().to_string();
                    d.commit().unwrap();
                    id
                })
                .collect()
        });
        let mut unique = ids.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), 8, "{ids:?}");
        assert_eq!(names(&out).len(), 8);
        fs::remove_dir_all(out).unwrap();
    }

    #[test]
    fn a_kept_run_is_visible_and_can_be_resumed() {
        let out = tmp();
        let rd = RunDir::create(&out, "r").unwrap();
        rd.append(Path::new("samples.csv"), b"a\n").unwrap();
        rd.append(Path::new("samples.csv"), b"b\n").unwrap();
        let kept = rd.keep().unwrap();
        assert_eq!(names(&out), vec!["r.partial"]);
        // a new run does not take the kept run's id
        let other = RunDir::create(&out, "r").unwrap();
        assert_eq!(other.id(), "r-2");
        other.discard();
        let again = RunDir::resume(&kept).unwrap();
        assert_eq!(again.id(), "r");
        assert_eq!(
            fs::read_to_string(again.working_path().join("samples.csv")).unwrap(),
            "a\nb\n"
        );
        assert!(RunDir::resume(&kept).is_err(), "taken already");
        again.commit().unwrap();
        assert_eq!(names(&out), vec!["r"]);
        assert!(RunDir::resume(&out.join("r")).is_err(), "not a partial run");
        fs::remove_dir_all(out).unwrap();
    }

    #[test]
    fn a_discarded_run_leaves_nothing_and_a_dropped_one_is_kept() {
        let out = tmp();
        RunDir::create(&out, "run").unwrap().discard();
        assert!(names(&out).is_empty());
        drop(RunDir::create(&out, "run").unwrap());
        assert!(
            names(&out).is_empty(),
            "an empty run dropped leaves nothing"
        );
        {
            let rd = RunDir::create(&out, "run").unwrap();
            rd.write(Path::new("a.txt"), b"partial").unwrap();
        }
        assert_eq!(names(&out), vec!["run.partial"]);
        fs::remove_dir_all(out).unwrap();
    }

    #[test]
    fn leftovers_of_a_dead_process_are_kept_or_removed() {
        let out = tmp();
        // pid 0 is never a process's: the owner is gone
        let dead = format!("0 {}\n", this_host());
        let with_points = out.join(".a.partial");
        fs::create_dir(&with_points).unwrap();
        fs::write(with_points.join(OWNER), &dead).unwrap();
        fs::write(
            with_points.join("manifest.json"),
            r#"{"partial": {"reason": "in progress"}}"#,
        )
        .unwrap();
        let empty = out.join(".b.partial");
        fs::create_dir(&empty).unwrap();
        fs::write(empty.join(OWNER), &dead).unwrap();
        let alive = out.join(".c.partial");
        fs::create_dir(&alive).unwrap();
        fs::write(alive.join(OWNER), owner_line()).unwrap();
        let elsewhere = out.join(".d.partial");
        fs::create_dir(&elsewhere).unwrap();
        fs::write(elsewhere.join(OWNER), "0 some-other-host\n").unwrap();
        fs::write(out.join(".x.csv.tmp-0"), b"half").unwrap();
        let kept = recover_leftovers(&out);
        assert_eq!(kept, vec![out.join("a.partial")]);
        assert_eq!(
            names(&out),
            vec![".c.partial", ".d.partial", "a.partial"],
            "the dead run with points kept, the empty one and the temporary removed, the live and the foreign left"
        );
        let m = fs::read_to_string(out.join("a.partial/manifest.json")).unwrap();
        assert!(m.contains("ended without finishing"), "{m}");
        fs::remove_dir_all(out).unwrap();
    }

    #[test]
    fn claims_take_the_next_free_suffix() {
        let out = tmp().join("nested");
        let a = claim(&out, "20261122T101530Z", "scaling").unwrap();
        let b = claim(&out, "20261122T101530Z", "scaling").unwrap();
        assert_eq!(a, out.join("20261122T101530Z-scaling"));
        assert_eq!(b, out.join("20261122T101530Z-scaling-2"));
        assert!(a.is_dir() && b.is_dir());
        let file = out.join("a-file");
        fs::write(&file, b"x").unwrap();
        let e = claim(&file, "s", "scaling").unwrap_err();
        assert!(
            matches!(e, ResultsError::Unwritable { ref path, .. } if path == &file),
            "{e}"
        );
    }

    #[test]
    fn an_unwritable_out_is_reported_before_anything_is_written() {
        let err = RunDir::create(Path::new("/proc/fabbench-cannot-be-here"), "r")
            .err()
            .unwrap();
        assert!(matches!(err, ResultsError::Unwritable { .. }), "{err}");
    }
}
