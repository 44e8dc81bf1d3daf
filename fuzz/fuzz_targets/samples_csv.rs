//! samples.csv's text, as `read_run` parses it: rows grouped by point, iterations in order.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = results::read::parse_samples(text, Path::new("samples.csv"));
});
