//! A profile file (`--profile FILE`, what autotune writes) and `--set NAME=VALUE` assignments:
//! applied to the registry's defaults, then, when accepted, checked on every fabric as the
//! plan checks the settings in force before a run.
#![no_main]

use std::sync::OnceLock;

use bench_core::tunables::Registry;
use libfuzzer_sys::fuzz_target;
use transports::registry;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    static REG: OnceLock<Registry> = OnceLock::new();
    let reg = REG.get_or_init(|| registry::registry(&[]));
    let mut settings = reg.defaults();
    let mut accepted = settings.apply_profile(reg, text).is_ok();
    let mut assigned = reg.defaults();
    for line in text.lines() {
        accepted &= assigned
            .set_assignment(reg, line, bench_core::tunables::Source::Cli)
            .is_ok();
    }
    if accepted {
        for def in registry::FABRICS {
            let _ = (def.check_settings)(&settings);
            let _ = (def.check_settings)(&assigned);
        }
    }
});
