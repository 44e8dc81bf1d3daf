//! A ReFrame-style reference file (`fabbench compare --references FILE`): parsed strictly;
//! what it accepts renders back to a file that parses to the same references.
#![no_main]

use compare::references::file;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(refs) = file::parse(text, "references.toml") {
        let again = file::to_toml(&refs, "# fuzz");
        let back = file::parse(&again, "written").expect("a written file parses");
        assert_eq!(back.len(), refs.len());
    }
});
