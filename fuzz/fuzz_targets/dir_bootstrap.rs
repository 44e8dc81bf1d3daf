//! The files of the `dir:PATH` bootstrap, which ranks write into a shared directory and the
//! frontend (rank 0) and the other ranks read: an event file under `events/` (its name says
//! which rank sent it; its text is a rank event), a key's value under `kv/` and a rank's
//! stage report under `stage/`. The input is split at lines holding only `@@@` into an event
//! file's name and text, a key, its value and a stage report, written into a scratch job
//! directory as a rank would (a value and a report as raw bytes, as a peer may leave them),
//! then read through `Dir` as the launcher and the ranks do. Must hold: no panic; an event
//! is taken only from a file named for a rank of the job, with the file's text, and only
//! once; a value or a stage report reads back as written when it is text, and not at all
//! otherwise; a key put through `Dir` reads back; `event_rank` finds the rank in every name
//! `event_file_name` makes.
//!
//! Seed corpus (fuzz/corpus/dir_bootstrap/): made from the files of a real job directory,
//! copied while `fabbench run osu_latency --fabric shm --bootstrap dir:PATH -m 8:64` ran as
//! two Slurm tasks (SLURM_PROCID, SLURM_NTASKS and SLURM_JOB_ID set by hand): events of
//! rank 0 and 1 (suite start, points, done) with the name each had, the `shm/segment`,
//! `shm/probe/result` and `shm/0/pid` keys with their values, a stage report, and a
//! temporary event file caught mid-write (`1.000000000001.tmpPID`).
#![no_main]

use std::path::PathBuf;
use std::time::Duration;

use bench_core::bootstrap::dir::{event_file_name, event_rank, file_name, Dir};
use bench_core::bootstrap::Bootstrap;
use libfuzzer_sys::fuzz_target;

const SEPARATOR: &[u8] = b"\n@@@\n";
const SIZE: usize = 4;

/// The input's parts, missing ones empty.
fn parts(data: &[u8]) -> [&[u8]; 5] {
    let mut out: [&[u8]; 5] = [&[]; 5];
    let mut rest = data;
    for slot in out.iter_mut() {
        match rest.windows(SEPARATOR.len()).position(|w| w == SEPARATOR) {
            Some(i) => {
                *slot = &rest[..i];
                rest = &rest[i + SEPARATOR.len()..];
            }
            None => {
                *slot = rest;
                rest = &[];
            }
        }
    }
    out
}

/// A scratch job directory for one input, removed after it (`Dir::remove`, as rank 0 does).
fn job() -> (PathBuf, Dir) {
    // In memory where there is /dev/shm: a put syncs its file, which a disk makes slow.
    let shm = std::path::Path::new("/dev/shm");
    let base = if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    let job = format!("fuzz-dir-{}", std::process::id());
    let dir = Dir::new(&base, &job, 0, SIZE).expect("a scratch job directory");
    (dir.root().to_path_buf(), dir)
}

/// A name a file can have in one directory.
fn plain_name(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\0'])
}

fuzz_target!(|data: &[u8]| {
    let [name, event, key, value, stage] = parts(data);
    let name = String::from_utf8_lossy(name);
    if let Some(r) = event_rank(&name, SIZE) {
        assert!(r < SIZE && name.ends_with(".json"), "{name}");
    }
    let (r, seq) = (name.len() % SIZE, event.len() as u64);
    assert_eq!(event_rank(&event_file_name(r, seq), SIZE), Some(r));
    let (root, dir) = job();
    let events = root.join("events");
    if plain_name(&name) && name.len() < 200 {
        std::fs::write(events.join(&*name), event).expect("an event file");
        let taken = dir.take_events();
        match (event_rank(&name, SIZE), std::str::from_utf8(event)) {
            (Some(r), Ok(text)) => {
                assert_eq!(taken, vec![(r, text.to_string())]);
                assert!(dir.take_events().is_empty(), "an event is taken once");
            }
            _ => assert!(taken.is_empty(), "{taken:?}"),
        }
    }
    let key = String::from_utf8_lossy(key);
    if key.len() < 100 {
        std::fs::write(root.join("kv").join(file_name(&key)), value).expect("a value");
        let got = dir.get(&key, Duration::ZERO).ok();
        assert_eq!(got.as_deref(), std::str::from_utf8(value).ok());
        let text = String::from_utf8_lossy(value);
        dir.put(&key, &text).expect("a key put");
        assert_eq!(dir.get(&key, Duration::ZERO).ok().as_deref(), Some(&*text));
    }
    std::fs::write(root.join("stage").join("1"), stage).expect("a stage report");
    assert_eq!(dir.stage_of(1).as_deref(), std::str::from_utf8(stage).ok());
    dir.remove();
});
