//! The tables `fabbench calibrate --from FILE` fits a card to: OSU text output or a CSV of
//! suite,size,value.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(targets) = calibrate::table::parse(text, Path::new("table")) {
        assert!(!targets.is_empty(), "an empty table is refused");
        for t in &targets {
            assert!(t.value.is_finite() && t.value >= 0.0, "{t:?}");
        }
    }
});
