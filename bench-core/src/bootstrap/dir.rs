//! The bootstrap through a directory every rank can see (a shared file system): keys are
//! files written to a temporary name and renamed, fences are per-rank marker files, events
//! and stage reports are files the frontend (rank 0) reads. Waits poll the directory and are
//! bounded like every other wait.

use std::collections::HashMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::{Bootstrap, BootstrapError};

const POLL: Duration = Duration::from_millis(10);

/// The largest file of the directory read: an event carries one point with its samples, far
/// below this; a bigger file is not a rank's.
const FILE_MAX: u64 = 256 << 20;

/// A file of the job's directory, if it is a regular file of at most [`FILE_MAX`] bytes. The
/// directory is shared: a FIFO or a device put there under a rank's file name would block
/// `read`, and a huge file would be read whole, so neither is opened as one.
fn read_file(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.file_type().is_file() || meta.len() > FILE_MAX {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "not a regular file within the size a rank writes",
        ));
    }
    let mut text = String::new();
    file.take(FILE_MAX).read_to_string(&mut text)?;
    Ok(text)
}

pub struct Dir {
    root: PathBuf,
    rank: usize,
    size: usize,
    token: String,
    job: String,
    fences: Mutex<HashMap<String, u64>>,
    events: Mutex<u64>,
}

/// The file a key's value is kept in, under `kv/` (public for the fuzz target
/// `dir_bootstrap`, which writes a rank's keys where ranks write them).
pub fn file_name(key: &str) -> String {
    key.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '%'
            }
        })
        .collect::<String>()
        + &format!("-{:x}", fnv(key))
}

/// A stable short hash so keys that map to the same sanitised name stay distinct.
fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

/// The name of the `seq`-th event file `rank` writes under `events/`.
pub fn event_file_name(rank: usize, seq: u64) -> String {
    format!("{rank}.{seq:012}.json")
}

/// The rank an event file under `events/` comes from, by its name: `RANK.SEQ.json` as
/// [`event_file_name`] makes it, with a rank of the job (below `size`). Anything else in the
/// directory (a temporary file being written, a stray file, a rank the job does not have) is
/// no rank's event.
pub fn event_rank(name: &str, size: usize) -> Option<usize> {
    let stem = name.strip_suffix(".json")?;
    let rank: usize = stem.split('.').next()?.parse().ok()?;
    (rank < size).then_some(rank)
}

fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let mut f = fs::File::create(&tmp)?;
    f.write_all(bytes)?;
    f.sync_data()?;
    fs::rename(&tmp, path)
}

impl Dir {
    /// Joins the job's directory `base/fabbench-JOB`.
    pub fn new(base: &Path, job: &str, rank: usize, size: usize) -> Result<Dir, BootstrapError> {
        let root = base.join(format!("fabbench-{job}"));
        for sub in ["kv", "fence", "events", "stage"] {
            fs::create_dir_all(root.join(sub)).map_err(|e| BootstrapError::Server {
                addr: root.display().to_string(),
                reason: format!("cannot use the bootstrap directory: {e}"),
            })?;
        }
        Ok(Dir {
            root,
            rank,
            size,
            token: format!("dir-{job}"),
            job: job.to_string(),
            fences: Mutex::new(HashMap::new()),
            events: Mutex::new(0),
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Events written since the last call: (rank, json), in file-name order per rank.
    pub fn take_events(&self) -> Vec<(usize, String)> {
        let mut names: Vec<PathBuf> = fs::read_dir(self.root.join("events"))
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        names.sort();
        let mut out = Vec::new();
        for p in names {
            let name = p.file_name().unwrap_or_default().to_string_lossy();
            let rank = event_rank(&name, self.size);
            if let (Some(rank), Ok(json)) = (rank, read_file(&p)) {
                out.push((rank, json));
                let _ = fs::remove_file(&p);
            }
        }
        out
    }

    /// The stage a rank last reported.
    pub fn stage_of(&self, rank: usize) -> Option<String> {
        read_file(&self.root.join("stage").join(rank.to_string())).ok()
    }

    /// Removes the job's directory (rank 0, at the end).
    pub fn remove(&self) {
        let _ = fs::remove_dir_all(&self.root);
    }

    fn err(&self, reason: String) -> BootstrapError {
        BootstrapError::Server {
            addr: self.root.display().to_string(),
            reason,
        }
    }
}

impl Bootstrap for Dir {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }
    fn token(&self) -> &str {
        &self.token
    }
    fn job_id(&self) -> &str {
        &self.job
    }

    fn put(&self, key: &str, value: &str) -> Result<(), BootstrapError> {
        write_atomic(&self.root.join("kv").join(file_name(key)), value.as_bytes())
            .map_err(|e| self.err(format!("PUT {key}: {e}")))
    }

    fn get(&self, key: &str, timeout: Duration) -> Result<String, BootstrapError> {
        let path = self.root.join("kv").join(file_name(key));
        let start = Instant::now();
        loop {
            if let Ok(v) = read_file(&path) {
                return Ok(v);
            }
            if start.elapsed() >= timeout {
                return Err(BootstrapError::Timeout {
                    what: format!("key '{key}' in {}", self.root.display()),
                    after: timeout,
                });
            }
            std::thread::sleep(POLL);
        }
    }

    fn fence(&self, name: &str, timeout: Duration) -> Result<(), BootstrapError> {
        let gen = {
            let mut f = self.fences.lock().unwrap();
            let g = f.entry(name.to_string()).or_insert(0);
            *g += 1;
            *g
        };
        let dir = self
            .root
            .join("fence")
            .join(format!("{}.{gen}", file_name(name)));
        fs::create_dir_all(&dir).map_err(|e| self.err(format!("fence {name}: {e}")))?;
        write_atomic(&dir.join(self.rank.to_string()), b"")
            .map_err(|e| self.err(format!("fence {name}: {e}")))?;
        let start = Instant::now();
        loop {
            let missing: Vec<usize> = (0..self.size)
                .filter(|r| !dir.join(r.to_string()).exists())
                .collect();
            if missing.is_empty() {
                return Ok(());
            }
            if start.elapsed() >= timeout {
                let m: Vec<String> = missing.iter().map(|r| r.to_string()).collect();
                return Err(BootstrapError::Timeout {
                    what: format!("fence '{name}' (rank {} never arrived)", m.join(",")),
                    after: timeout,
                });
            }
            std::thread::sleep(POLL);
        }
    }

    fn report_stage(&self, stage: &str) {
        let _ = write_atomic(
            &self.root.join("stage").join(self.rank.to_string()),
            stage.as_bytes(),
        );
    }

    fn send_event(&self, json: &str) -> Result<(), BootstrapError> {
        let seq = {
            let mut n = self.events.lock().unwrap();
            *n += 1;
            *n
        };
        write_atomic(
            &self
                .root
                .join("events")
                .join(event_file_name(self.rank, seq)),
            json.as_bytes(),
        )
        .map_err(|e| self.err(format!("event: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_meet_through_a_directory() {
        let base =
            std::env::temp_dir().join(format!("fabbench-dirboot-{}", super::super::random_hex(4)));
        let ranks: Vec<Dir> = (0..3)
            .map(|r| Dir::new(&base, "j1", r, 3).unwrap())
            .collect();
        std::thread::scope(|s| {
            for d in &ranks {
                s.spawn(move || {
                    d.put(&format!("addr/{}", d.rank()), &format!("host:{}", d.rank()))
                        .unwrap();
                    d.fence("up", Duration::from_secs(5)).unwrap();
                    for r in 0..3 {
                        assert_eq!(
                            d.get(&format!("addr/{r}"), Duration::from_secs(1)).unwrap(),
                            format!("host:{r}")
                        );
                    }
                    d.fence("up", Duration::from_secs(5)).unwrap();
                });
            }
        });
        ranks[2].send_event("{\"a\":1}").unwrap();
        ranks[1].report_stage("osu_bw size 8");
        assert_eq!(ranks[0].take_events(), vec![(2, "{\"a\":1}".to_string())]);
        assert!(ranks[0].take_events().is_empty());
        assert_eq!(ranks[0].stage_of(1).as_deref(), Some("osu_bw size 8"));
        let err = ranks[0]
            .fence("lonely", Duration::from_millis(50))
            .unwrap_err();
        assert!(err.to_string().contains("rank 1,2 never arrived"), "{err}");
        ranks[0].remove();
        assert!(!ranks[0].root().exists());
        let _ = std::fs::remove_dir_all(base);
    }

    #[test]
    fn event_files_name_a_rank_of_the_job() {
        assert_eq!(event_rank(&event_file_name(2, 7), 3), Some(2));
        assert_eq!(event_rank("1.000000000001.json", 2), Some(1));
        // A rank the job does not have is no rank's event, nor is a file being written.
        assert_eq!(event_rank("99.000000000001.json", 2), None);
        assert_eq!(event_rank("1.000000000001.tmp4242", 2), None);
        assert_eq!(event_rank(".json", 2), None);
    }

    #[test]
    fn a_fifo_under_a_rank_s_file_name_is_not_waited_on() {
        let base =
            std::env::temp_dir().join(format!("fabbench-dirfifo-{}", super::super::random_hex(4)));
        let d = Dir::new(&base, "j1", 0, 2).unwrap();
        let fifo = d.root().join("events").join(event_file_name(1, 1));
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let stage = d.root().join("stage").join("1");
        std::fs::create_dir_all(stage.parent().unwrap()).unwrap();
        let c = std::ffi::CString::new(stage.to_str().unwrap()).unwrap();
        // SAFETY: as above.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // Both return at once (a blocking open of a FIFO would wait for a writer for ever).
        let (tx, rx) = std::sync::mpsc::channel();
        let root = d.root().to_path_buf();
        std::thread::spawn(move || {
            let d = Dir::new(root.parent().unwrap(), "j1", 0, 2).unwrap();
            tx.send((d.take_events(), d.stage_of(1))).unwrap();
        });
        let (events, stage) = rx.recv_timeout(Duration::from_secs(5)).expect("no hang");
        assert!(events.is_empty() && stage.is_none());
        d.remove();
        let _ = std::fs::remove_dir_all(base);
    }

    #[test]
    fn odd_keys_do_not_collide() {
        assert_ne!(file_name("a/b"), file_name("a%b"));
        assert_eq!(file_name("tcp/0/addr"), file_name("tcp/0/addr"));
    }
}
