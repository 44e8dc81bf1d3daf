//! The store on disk: `DIR/store.json` says what the directory is, and `DIR/entries/` holds one
//! JSON file per added run, `DATE-REV-RUNID.json`. The store is append-only: an entry is
//! written under a hidden temporary name, synced, and then linked to its final name, which
//! fails rather than replace a file that exists, so adding never rewrites an earlier entry
//! (CI jobs that add at the same time each write only their own file). Everything to add is
//! read and checked before the first file is written, so a refused add leaves the store as it
//! was.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::entry::{Entry, Overrides};
use crate::error::HistoryError;

/// store.json's `format`.
pub const FORMAT: &str = "fabbench-history";
/// The store layout this crate writes and reads.
pub const VERSION: u32 = 1;

const MARKER: &str = "store.json";
const ENTRIES: &str = "entries";

#[derive(Debug, Serialize, Deserialize)]
struct Marker {
    format: String,
    version: u32,
}

/// A store that exists.
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
}

/// One entry added, and where.
#[derive(Debug, Clone)]
pub struct Added {
    pub path: PathBuf,
    pub entry: Entry,
}

impl Store {
    /// The store in `dir`; refused when there is none or it is not one.
    pub fn open(dir: &Path) -> Result<Store, HistoryError> {
        match state(dir)? {
            State::Store => Ok(Store {
                dir: dir.to_path_buf(),
            }),
            State::Absent | State::Empty => Err(HistoryError::NoStore {
                path: dir.to_path_buf(),
            }),
            State::Other => Err(HistoryError::NotAStore {
                path: dir.to_path_buf(),
            }),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Every entry, oldest first: by date, then in the order added.
    pub fn entries(&self) -> Result<Vec<Entry>, HistoryError> {
        let dir = self.dir.join(ENTRIES);
        let mut names: Vec<PathBuf> = match fs::read_dir(&dir) {
            Ok(rd) => rd
                .flatten()
                .map(|e| e.path())
                .filter(|p| is_entry_file(p))
                .collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(HistoryError::io(&dir, e)),
        };
        names.sort();
        let mut out = Vec::with_capacity(names.len());
        for path in names {
            let text =
                results::read::read_regular(&path).map_err(|e| HistoryError::io(&path, e))?;
            out.push(parse_entry(&text, &path)?);
        }
        out.sort_by(|a, b| (&a.date, a.seq).cmp(&(&b.date, b.seq)));
        Ok(out)
    }
}

/// An entry file's text (what [`Store::entries`] reads each file with; public for the fuzz
/// targets). `path` only names the file in errors.
pub fn parse_entry(text: &str, path: &Path) -> Result<Entry, HistoryError> {
    serde_json::from_str(text).map_err(|e| HistoryError::BadEntry {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })
}

/// Adds the runs in `runs` (each a run directory, a scaling run's directory, or a directory
/// holding run directories) to the store in `dir`, creating it if `dir` is absent or empty.
/// Nothing is written unless every run reads and none is in the store already.
pub fn add(
    dir: &Path,
    runs: &[PathBuf],
    overrides: &Overrides,
) -> Result<Vec<Added>, HistoryError> {
    let existing = match state(dir)? {
        State::Store => Store::open(dir)?.entries()?,
        State::Absent | State::Empty => Vec::new(),
        State::Other => {
            return Err(HistoryError::NotAStore {
                path: dir.to_path_buf(),
            })
        }
    };
    let mut seq = existing.iter().map(|e| e.seq).max().unwrap_or(0);
    let mut ids: BTreeSet<(String, String, Vec<String>)> = existing.iter().map(identity).collect();
    let mut entries = Vec::new();
    for run_dir in runs.iter().flat_map(|d| run_dirs_in(d)) {
        let run = results::read_run(&run_dir).map_err(|source| HistoryError::Run {
            path: run_dir.clone(),
            source,
        })?;
        seq += 1;
        let entry = Entry::of(&run, overrides, seq)?;
        if !ids.insert(identity(&entry)) {
            return Err(HistoryError::Duplicate {
                run_id: entry.run_id,
                path: dir.to_path_buf(),
            });
        }
        entries.push(entry);
    }
    create(dir)?;
    let entries_dir = dir.join(ENTRIES);
    let mut added = Vec::new();
    for entry in entries {
        let mut bytes = serde_json::to_vec_pretty(&entry).expect("entries serialise");
        bytes.push(b'\n');
        let name = entry.file_name();
        let stem = name.trim_end_matches(".json");
        // Runs made in the same second into different output directories share a run id;
        // the second of them at the same revision takes the next free name.
        let mut n = 1;
        let path = loop {
            let path = if n == 1 {
                entries_dir.join(&name)
            } else {
                entries_dir.join(format!("{stem}-{n}.json"))
            };
            match write_new(&path, &bytes) {
                Ok(()) => break path,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => n += 1,
                Err(e) => return Err(HistoryError::write(&path, e)),
            }
        };
        added.push(Added { path, entry });
    }
    Ok(added)
}

fn identity(e: &Entry) -> (String, String, Vec<String>) {
    let (id, host, command) = e.identity();
    (id.to_string(), host.to_string(), command.to_vec())
}

/// The run directories `dir` stands for: a run directory itself, a scaling run's runs, or,
/// for a directory of runs (an `--out` directory), every run directory in it by name (which
/// is by start time).
pub fn run_dirs_in(dir: &Path) -> Vec<PathBuf> {
    if dir.join("manifest.json").is_file() || dir.join("scaling.csv").is_file() {
        return results::read::runs_in(dir);
    }
    let mut runs: Vec<PathBuf> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let hidden = p
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'));
            !hidden && (p.join("manifest.json").is_file() || p.join("scaling.csv").is_file())
        })
        .collect();
    runs.sort();
    if runs.is_empty() {
        // Let the reader say what is missing.
        return vec![dir.to_path_buf()];
    }
    runs.iter()
        .flat_map(|r| results::read::runs_in(r))
        .collect()
}

enum State {
    Absent,
    Empty,
    Store,
    Other,
}

fn state(dir: &Path) -> Result<State, HistoryError> {
    let marker = dir.join(MARKER);
    if marker.is_file() {
        let text =
            results::read::read_regular(&marker).map_err(|e| HistoryError::io(&marker, e))?;
        parse_marker(&text, &marker)?;
        return Ok(State::Store);
    }
    match fs::read_dir(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(State::Absent),
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => Ok(State::Other),
        Err(e) => Err(HistoryError::io(dir, e)),
        Ok(rd) => {
            // What another add leaves while it makes the store (entries/ first, then the
            // marker through a hidden temporary) is a store being made, not someone else's
            // directory: ten adds started at once into a new store all succeed.
            let being_made =
                |name: &str| name == ENTRIES || name.starts_with(&format!(".{MARKER}.tmp-"));
            let mut names = rd.flatten().map(|e| e.file_name());
            Ok(if names.all(|n| being_made(&n.to_string_lossy())) {
                State::Empty
            } else {
                State::Other
            })
        }
    }
}

/// store.json's text (what opening a store checks first; public for the fuzz target
/// `history_store`): Ok when it names a store of this format and version. `path` only names
/// the file in errors.
pub fn parse_marker(text: &str, path: &Path) -> Result<(), HistoryError> {
    let bad = |reason: String| HistoryError::BadStore {
        path: path.to_path_buf(),
        reason,
    };
    let m: Marker =
        serde_json::from_str(text).map_err(|e| bad(format!("not a store marker ({e})")))?;
    if m.format != FORMAT {
        return Err(bad(format!("format is '{}', not '{FORMAT}'", m.format)));
    }
    if m.version != VERSION {
        return Err(bad(format!(
            "store version {} is not supported; this fabbench reads version {VERSION}",
            m.version
        )));
    }
    Ok(())
}

/// store.json's bytes, as a new store gets them.
pub fn marker_bytes() -> Vec<u8> {
    let m = Marker {
        format: FORMAT.into(),
        version: VERSION,
    };
    let mut bytes = serde_json::to_vec_pretty(&m).expect("the marker serialises");
    bytes.push(b'\n');
    bytes
}

/// Makes `dir` a store if it is not one yet.
fn create(dir: &Path) -> Result<(), HistoryError> {
    let entries = dir.join(ENTRIES);
    fs::create_dir_all(&entries).map_err(|e| HistoryError::write(&entries, e))?;
    let marker = dir.join(MARKER);
    if !marker.is_file() {
        match write_new(&marker, &marker_bytes()) {
            // Another add made it first: the same content.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            other => other.map_err(|e| HistoryError::write(&marker, e))?,
        }
    }
    Ok(())
}

/// Writes `bytes` as `target`, which must not exist: into a hidden temporary sibling, synced,
/// then hard-linked to `target` (which fails with `AlreadyExists` instead of replacing it).
/// The temporary is removed either way.
fn write_new(target: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = results::atomic::temporary(target);
    let written = (|| {
        results::atomic::write_synced(&tmp, bytes)?;
        match fs::hard_link(&tmp, target) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists && !target.exists() => {
                // A file system without hard links: a rename after the check above, which
                // only a concurrent add of the very same run could race.
                fs::rename(&tmp, target)
            }
            other => other,
        }
    })();
    let _ = fs::remove_file(&tmp);
    written
}

fn is_entry_file(p: &Path) -> bool {
    let Some(name) = p.file_name().map(|n| n.to_string_lossy()) else {
        return false;
    };
    !name.starts_with('.') && name.ends_with(".json") && p.is_file()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{latency_run, temp_dir, write_run};

    fn runs(parent: &Path) -> Vec<PathBuf> {
        [
            (
                "20260101T000000Z-osu_latency-rapidio",
                "2026-01-01T00:00:00Z",
                30.0,
            ),
            (
                "20260102T000000Z-osu_latency-rapidio",
                "2026-01-02T00:00:00Z",
                30.0,
            ),
            (
                "20260103T000000Z-osu_latency-rapidio",
                "2026-01-03T00:00:00Z",
                35.0,
            ),
        ]
        .iter()
        .map(|(id, start, us)| write_run(parent, &latency_run(id, start, *us)))
        .collect()
    }

    fn entry_files(store: &Path) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = fs::read_dir(store.join(ENTRIES))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn adding_creates_the_store_and_never_touches_an_earlier_entry() {
        let tmp = temp_dir("append");
        let r = runs(&tmp.join("runs"));
        let store = tmp.join("store");
        let first = add(&store, &r[..1], &Overrides::default()).unwrap();
        let marker = fs::read_to_string(store.join(MARKER)).unwrap();
        assert!(marker.contains("\"fabbench-history\"") && marker.contains("\"version\": 1"));
        let path = &first[0].path;
        assert_eq!(
            path.file_name().unwrap().to_string_lossy(),
            "20260101T000000Z-0123456789ab-20260101T000000Z-osu_latency-rapidio.json"
        );
        let (bytes, meta) = (fs::read(path).unwrap(), fs::metadata(path).unwrap());
        add(&store, &r[1..], &Overrides::default()).unwrap();
        assert_eq!(fs::read(path).unwrap(), bytes);
        let after = fs::metadata(path).unwrap();
        assert_eq!(after.modified().unwrap(), meta.modified().unwrap());
        use std::os::unix::fs::MetadataExt;
        assert_eq!(after.ino(), meta.ino(), "the entry file was replaced");
        assert_eq!(entry_files(&store).len(), 3);
        let entries = Store::open(&store).unwrap().entries().unwrap();
        let seqs: Vec<u64> = entries.iter().map(|e| e.seq).collect();
        assert_eq!(seqs, [1, 2, 3]);
        let r1 = &entries[0].records[0];
        assert_eq!(
            (r1.metric.as_str(), r1.value, r1.exact),
            ("latency", 30.0, true)
        );
        assert_eq!(r1.better, bench_core::measure::Better::Lower);
    }

    #[test]
    fn a_run_added_twice_is_refused_and_nothing_of_that_add_is_written() {
        let tmp = temp_dir("duplicate");
        let r = runs(&tmp.join("runs"));
        let store = tmp.join("store");
        add(&store, &r[..1], &Overrides::default()).unwrap();
        // The new run first, then the old one: the new one must not be written either.
        let e = add(&store, &[r[1].clone(), r[0].clone()], &Overrides::default()).unwrap_err();
        assert!(matches!(e, HistoryError::Duplicate { .. }), "{e}");
        assert!(e.to_string().contains("append-only"), "{e}");
        assert_eq!(entry_files(&store).len(), 1);
        // Another revision does not make it another run.
        let again = Overrides {
            revision: Some("other".into()),
            date: None,
        };
        assert!(add(&store, &r[..1], &again).is_err());
    }

    #[test]
    fn a_directory_that_is_not_a_store_is_refused() {
        let tmp = temp_dir("not-a-store");
        let r = runs(&tmp.join("runs"));
        let other = tmp.join("other");
        fs::create_dir_all(&other).unwrap();
        fs::write(other.join("notes.txt"), "mine").unwrap();
        let e = add(&other, &r[..1], &Overrides::default()).unwrap_err();
        assert!(matches!(e, HistoryError::NotAStore { .. }), "{e}");
        assert!(!other.join(ENTRIES).exists());
        assert!(matches!(
            Store::open(&other),
            Err(HistoryError::NotAStore { .. })
        ));
        assert!(matches!(
            Store::open(&tmp.join("absent")),
            Err(HistoryError::NoStore { .. })
        ));
        fs::write(
            other.join(MARKER),
            r#"{"format": "something-else", "version": 1}"#,
        )
        .unwrap();
        let e = Store::open(&other).unwrap_err().to_string();
        assert!(e.contains("something-else"), "{e}");
        fs::write(
            other.join(MARKER),
            r#"{"format": "fabbench-history", "version": 9}"#,
        )
        .unwrap();
        let e = Store::open(&other).unwrap_err().to_string();
        assert!(e.contains("version 9"), "{e}");
    }

    #[test]
    fn a_directory_of_runs_adds_each_and_overrides_apply() {
        let tmp = temp_dir("dir-of-runs");
        let parent = tmp.join("runs");
        runs(&parent);
        let store = tmp.join("store");
        let o = Overrides {
            revision: Some("feedface".into()),
            date: Some("2026-05-01T12:00:00+02:00".into()),
        };
        let added = add(&store, &[parent], &o).unwrap();
        assert_eq!(added.len(), 3);
        let entries = Store::open(&store).unwrap().entries().unwrap();
        assert!(entries.iter().all(|e| e.revision == "feedface"));
        assert!(entries.iter().all(|e| e.date == "2026-05-01T10:00:00Z"));
        // Same date: shown in the order added, which is the runs' name order.
        let ids: Vec<&str> = entries.iter().map(|e| &e.run_id[..8]).collect();
        assert_eq!(ids, ["20260101", "20260102", "20260103"]);
    }

    #[test]
    fn a_bad_date_or_run_writes_nothing() {
        let tmp = temp_dir("bad-input");
        let r = runs(&tmp.join("runs"));
        let store = tmp.join("store");
        let o = Overrides {
            revision: None,
            date: Some("last tuesday".into()),
        };
        assert!(matches!(add(&store, &r, &o), Err(HistoryError::Date(_))));
        assert!(!store.exists());
        let e = add(&store, &[tmp.join("nothing-here")], &Overrides::default()).unwrap_err();
        assert!(matches!(e, HistoryError::Run { .. }), "{e}");
        assert!(!store.exists());
    }
}
