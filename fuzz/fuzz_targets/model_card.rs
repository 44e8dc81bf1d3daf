//! A model card (`--model FILE`, the built-in cards, characterise's card.toml): the card form
//! (`parse` and the declarations it makes), the values `--model` reads, and those values in
//! force on every emulated fabric, checked as the plan checks them before a run.
#![no_main]

use std::sync::OnceLock;

use bench_core::tunables::{Registry, Source};
use libfuzzer_sys::fuzz_target;
use transports::emulated::card;
use transports::fabric::FabricKind;
use transports::registry;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(c) = card::parse(text) {
        // Leaks its strings by design (a card is read once per process): the script runs this
        // target with -detect_leaks=0.
        let _ = c.defs();
    }
    let _ = card::overrides(text);
    let Ok(model) = registry::read_model_card(text) else {
        return;
    };
    static REG: OnceLock<Registry> = OnceLock::new();
    let reg = REG.get_or_init(|| registry::registry(&[]));
    for def in registry::FABRICS
        .iter()
        .filter(|d| d.kind == FabricKind::Emulated)
    {
        let mut settings = reg.defaults();
        for (k, v) in def.defaults {
            settings
                .set(reg, k, v, Source::Fabric)
                .expect("fabric defaults are valid");
        }
        let mut refused = false;
        let prefix = format!("{}.", def.name);
        for (name, value) in &model.values {
            // As the plan names them: a card's own values without the fabric's prefix, engine
            // tunables as they stand.
            let full = if name.starts_with(&prefix) || reg.get(name).is_some() {
                name.clone()
            } else {
                format!("{prefix}{name}")
            };
            refused |= settings.set(reg, &full, value, Source::Model).is_err();
        }
        if !refused {
            let _ = (def.check_settings)(&settings);
        }
    }
});
