//! A run directory as `read_run` reads it (fabbench plot, report, compare, history, export and
//! run --resume all start here): the input is split at lines holding only `@@@` into
//! manifest.json, samples.csv and osu.txt (where a schema-0 directory's settings lines come
//! from), written into a temporary directory. A run that reads back must also export, as
//! `fabbench export` and the re-export of an old run do with it.
#![no_main]

use std::path::PathBuf;

use libfuzzer_sys::fuzz_target;

const SEPARATOR: &[u8] = b"\n@@@\n";

fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fabbench-fuzz-run-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

/// manifest, samples, osu text: the input's parts, missing ones empty.
fn parts(data: &[u8]) -> [&[u8]; 3] {
    let mut out: [&[u8]; 3] = [&[], &[], &[]];
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

fuzz_target!(|data: &[u8]| {
    thread_local!(static DIR: PathBuf = scratch());
    let dir = DIR.with(|d| d.clone());
    for (name, bytes) in ["manifest.json", "samples.csv", "osu.txt"]
        .iter()
        .zip(parts(data))
    {
        std::fs::write(dir.join(name), bytes).expect("scratch file written");
    }
    if let Ok(run) = results::read_run(&dir) {
        let _ = results::read_manifest(&dir);
        let _ = results::format::export_all(&run);
    }
});
