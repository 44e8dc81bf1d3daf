//! autotune.json, as `fabbench plot` reads an autotune directory: an `Outcome` that decodes
//! must serialise again.
#![no_main]

use autotune::outcome::Outcome;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(o) = serde_json::from_slice::<Outcome>(data) {
        serde_json::to_vec(&o).expect("a decoded outcome serialises");
    }
});
