//! A history store's `store.json` (the marker `fabbench history add/show/check` read first
//! to know a directory is a store, and of which format and version), as `Store::open` reads
//! it through `history::store::parse_marker`. Must hold: no panic; a marker is accepted only
//! when it names this format and version (checked against the JSON itself); the bytes a new
//! store is given are accepted.
//!
//! Seed corpus (fuzz/corpus/history_store/): `store.json`, written by
//! `fabbench history add --store STORE RUN_DIR` (a run of `fabbench run osu_latency --fabric
//! shm -m 8:64`).
#![no_main]

use std::path::Path;

use history::store::{marker_bytes, parse_marker, FORMAT, VERSION};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = Path::new("store.json");
    let new = String::from_utf8(marker_bytes()).expect("the marker is text");
    parse_marker(&new, path).expect("a new store's marker is accepted");
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match parse_marker(text, path) {
        Ok(()) => {
            let v: serde_json::Value = serde_json::from_str(text).expect("accepted JSON");
            assert_eq!(v["format"], FORMAT, "{text}");
            assert_eq!(v["version"], VERSION, "{text}");
        }
        Err(e) => {
            // One line naming the file, as every error a user reads.
            let line = e.to_string();
            assert!(line.contains("store.json"), "{line}");
        }
    }
});
