//! A history store's entry file (`entries/DATE-REV-RUNID.json`), as `Store::entries` reads it,
//! with the date it is keyed by; and the RFC 3339 dates `--date` and manifests give.
#![no_main]

use std::path::Path;

use history::date::Date;
use history::store::parse_entry;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(d) = Date::parse(text) {
        let _ = (d.rfc3339(), d.compact(), d.day());
    }
    if let Ok(entry) = parse_entry(text, Path::new("entry.json")) {
        let _ = entry.file_name();
        let _ = entry.short_revision();
        for r in &entry.records {
            let _ = r.key();
        }
    }
});
