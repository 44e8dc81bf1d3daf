//! The fabric registry: every fabric fabbench can run, found by name (with the `FABRIC@mpi`
//! presets that reach a fabric through its MPI), the registry of every tunable, and the model
//! cards that override an emulated fabric's parameters. Adding a fabric is one module plus one
//! line in [`FABRICS`]; the shared conformance suite (`tests/conformance.rs`) then runs it.

use crate::Refusal;
use bench_core::tunables::{Def, Registry};

use crate::error::{Result, TransportError};
use crate::fabric::{Availability, FabricDef, ENGINE_TUNABLES};

/// Every fabric, in the order `fabbench list` shows them.
pub static FABRICS: &[FabricDef] = &[
    crate::shm::FABRIC,
    crate::tcp::FABRIC,
    crate::ofi::FABRIC,
    crate::emulated::hyperlink::FABRIC,
    crate::emulated::rapidio::FABRIC,
    crate::emulated::bxi::FABRIC,
    crate::emulated::loggp::FABRIC,
    crate::mpi::FABRIC,
];

pub fn find(name: &str) -> Option<&'static FabricDef> {
    FABRICS.iter().find(|f| f.name == name)
}

/// The names of every fabric, for error messages.
pub fn names() -> Vec<&'static str> {
    FABRICS.iter().map(|f| f.name).collect()
}

/// The registry of every tunable: the engine's and each fabric's.
pub fn registry(extra: &[&'static [Def]]) -> Registry {
    let mut groups: Vec<&[Def]> = vec![ENGINE_TUNABLES];
    groups.extend(FABRICS.iter().map(|f| (f.tunables)()));
    groups.extend_from_slice(extra);
    Registry::new(&groups)
}

/// Fails with a one-line reason if `def` cannot run here.
pub fn check_usable(def: &FabricDef) -> Result<()> {
    match (def.availability)() {
        Availability::Usable => Ok(()),
        Availability::Unusable(why) => Err(TransportError::Config(format!(
            "fabric {} cannot run here: {why}",
            def.name
        ))),
    }
}

/// A fabric as a run names it: a registry entry, and for `FABRIC@mpi` the settings of the
/// preset that selects that fabric inside the MPI.
pub struct Resolved {
    pub def: &'static FabricDef,
    pub preset: &'static [(&'static str, &'static str)],
}

/// Finds `label` ("shm", "tcp@mpi"), checks it can run here, and for a preset that its MPI is
/// installed. Errors are one line saying what is valid.
pub fn resolve(label: &str) -> std::result::Result<Resolved, Refusal> {
    let (name, preset) = match label.strip_suffix("@mpi") {
        Some(base) => {
            let p = crate::mpi::preset(base).ok_or_else(|| Refusal::NoPreset {
                base: base.to_string(),
                presets: crate::mpi::PRESETS
                    .iter()
                    .map(|p| format!("{}@mpi", p.fabric))
                    .collect(),
            })?;
            ("mpi", Some(p))
        }
        None => (label, None),
    };
    let def = find(name).ok_or_else(|| Refusal::UnknownFabric {
        name: name.to_string(),
        valid: names(),
    })?;
    check_usable(def).map_err(Refusal::Unusable)?;
    if let Some(p) = preset {
        crate::mpi::check_preset(p)?;
    }
    Ok(Resolved {
        def,
        preset: preset.map(|p| p.settings).unwrap_or(&[]),
    })
}

/// A model card's overrides: the fabric it names, if it does, and its `(parameter, value)`
/// pairs.
pub struct ModelCard {
    pub fabric: Option<String>,
    pub values: Vec<(String, String)>,
}

/// Reads a model card, checked against the card format.
pub fn read_model_card(text: &str) -> std::result::Result<ModelCard, Refusal> {
    let (fabric, values) = crate::emulated::card::overrides(text)?;
    Ok(ModelCard { fabric, values })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::EngineConfig;
    use crate::fabric::engine_config;

    #[test]
    fn every_default_is_valid_and_names_are_unique() {
        let r = registry(&[]);
        let s = r.defaults();
        let cfg: EngineConfig = engine_config(&s);
        assert_eq!(cfg.eager_limit, 4096);
        for f in FABRICS {
            let mut s = r.defaults();
            for (k, v) in f.defaults {
                s.set(&r, k, v, bench_core::tunables::Source::Fabric)
                    .unwrap_or_else(|e| panic!("fabric {} default {k}={v}: {e}", f.name));
            }
        }
        let mut names = names();
        names.dedup();
        assert_eq!(names.len(), FABRICS.len());
    }

    #[test]
    fn labels_resolve_or_say_what_is_valid() {
        assert_eq!(resolve("rapidio").unwrap().def.name, "rapidio");
        let e = resolve("infiniband").err().unwrap();
        assert!(matches!(&e, Refusal::UnknownFabric { name, .. } if name == "infiniband"));
        assert!(e.to_string().contains("valid fabrics: shm, tcp"), "{e}");
        let e = resolve("ib@mpi").err().unwrap();
        assert!(matches!(&e, Refusal::NoPreset { base, .. } if base == "ib"));
        assert!(
            e.to_string().contains("presets: shm@mpi, tcp@mpi, ofi@mpi"),
            "{e}"
        );
    }
}
