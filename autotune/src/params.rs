//! Which tunables autotune knows how to search, and how: a threshold between two protocols, a
//! fragment size, or a switch between two values. The registry says what a tunable is (its
//! type and range); this table says what it does to the protocol, which is what decides the
//! search. Everything here is data, so a new MPI variable or card parameter that is a
//! threshold is one line.

use bench_core::tunables::{Kind, Settings};
use transports::fabric::{FabricDef, FabricKind, ENGINE_TUNABLES};

/// How a parameter is searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Messages up to the value go one way (eager), larger ones the other (rendezvous).
    Threshold,
    /// The size of the pieces a large message is cut into.
    Fragment,
    /// One of two values; an A/B decides.
    Switch,
}

impl Role {
    pub fn word(self) -> &'static str {
        match self {
            Role::Threshold => "threshold",
            Role::Fragment => "fragment",
            Role::Switch => "switch",
        }
    }
}

/// Eager/rendezvous switch points: the engine's, the emulated cards' own, the MPI libraries'.
const THRESHOLDS: &[&str] = &[
    "eager_limit",
    "bxi.rendezvous",
    "mpi.btl_vader_eager_limit",
    "mpi.btl_tcp_eager_limit",
    "mpi.MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE",
    "mpi.MPIR_CVAR_NEMESIS_SHM_EAGER_MAX_SZ",
    "mpi.PSP_PORTALS_RENDEZVOUS",
];

const FRAGMENTS: &[&str] = &[
    "frag_size",
    "bxi.rndv_fragment_size",
    "mpi.btl_vader_max_send_size",
    "mpi.btl_tcp_max_send_size",
];

/// (name, the value that turns it off, the one that turns it on). `single_copy`'s third
/// value, auto, is the engine deciding per peer: an A/B of the two fixed choices says whether
/// a fixed one beats it.
const SWITCHES: &[(&str, &str, &str)] = &[
    ("rx_thread", "off", "on"),
    ("single_copy", "off", "on"),
    ("mpi.btl_hlink_rx_thread", "0", "1"),
    ("mpi.MPIR_CVAR_ASYNC_PROGRESS", "0", "1"),
    ("mpi.btl_vader_single_copy_mechanism", "none", "cma"),
    // ofi: who matches messages, how the engine's rendezvous moves data over RMA, and whether
    // small messages go by fi_inject (up to the provider's inject size, the default) or not.
    ("ofi.matching", "engine", "provider"),
    ("ofi.rndv", "read", "write"),
    ("ofi.inject_size", "0", "64KiB"),
];

/// What autotune searches on a native fabric when not told, where the generic choice (every
/// engine threshold, fragment size and switch it uses) is not what matters there. On ofi: the
/// matching first (it decides whether the engine runs at all), then the engine's rendezvous
/// over RMA, fi_inject, and the eager limit.
const NATIVE_DEFAULTS: &[(&str, &[&str])] = &[(
    "ofi",
    &["ofi.matching", "ofi.rndv", "ofi.inject_size", "eager_limit"],
)];

/// Parameters that act only while another setting has one value: (fabric, parameter, setting,
/// the value under which it acts, why not otherwise). Under ofi.matching=provider the
/// provider's tagged messages carry everything with the provider's own protocols: fabbench's
/// engine, its eager limit, fragments, single copy and rendezvous over RMA, does not run.
const ONLY_UNDER: &[(&str, &str, &str, &str, &str)] = &[
    (
        "ofi",
        "eager_limit",
        "ofi.matching",
        "engine",
        PROVIDER_MATCHING,
    ),
    (
        "ofi",
        "frag_size",
        "ofi.matching",
        "engine",
        PROVIDER_MATCHING,
    ),
    (
        "ofi",
        "single_copy",
        "ofi.matching",
        "engine",
        PROVIDER_MATCHING,
    ),
    (
        "ofi",
        "ofi.rndv",
        "ofi.matching",
        "engine",
        PROVIDER_MATCHING,
    ),
];

const PROVIDER_MATCHING: &str =
    "the provider's own eager and rendezvous protocols move every message, not fabbench's engine";

/// Why `name` does nothing on `def` under `settings` (another setting turns its mechanism
/// off), or None when it acts: such a parameter is not searched, and keeps its default.
pub fn inert(def: &FabricDef, name: &str, settings: &Settings) -> Option<String> {
    ONLY_UNDER
        .iter()
        .filter(|(f, n, _, _, _)| *f == def.name && *n == name)
        .find_map(|(_, _, other, wanted, why)| {
            let now = settings
                .get_by_runtime_name::<bench_core::tunables::Value>(other)
                .to_string();
            (now != *wanted).then(|| format!("under {other}={now} {why}"))
        })
}

/// What autotune searches on an MPI preset (`FABRIC@mpi`) when not told: the variable its
/// library documents for the job.
const MPI_DEFAULTS: &[(&str, &[&str])] = &[
    ("shm", &["mpi.btl_vader_eager_limit"]),
    ("tcp", &["mpi.btl_tcp_eager_limit"]),
    ("hyperlink", &["mpi.btl_hlink_rx_thread"]),
    ("bxi", &["mpi.PSP_PORTALS_RENDEZVOUS"]),
    ("rapidio", &["mpi.MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE"]),
];

/// What a library does with a threshold beyond what the registry says (the registry holds
/// its floor): (name, the largest value it starts with, the header counted in it). Open MPI
/// 4.1's vader fails MPI_Init when 8 eager and 8 max-size fragments no longer fit its 4 MiB
/// segment (489768 bytes with the defaults; 448 KiB keeps a margin); vader and tcp count
/// their 56-byte match header in the limit, so a message goes eager when it is at most the
/// limit less 56. The tcp BTL has no such ceiling (4 MiB runs). All measured here with Open
/// MPI 4.1.4.
const LIMITS: &[(&str, u64, u64)] = &[
    ("mpi.btl_vader_eager_limit", 448 << 10, 56),
    ("mpi.btl_tcp_eager_limit", 64 << 20, 56),
];

/// The values a threshold can take here, and the header its library counts in it:
/// (min, max, header).
pub fn threshold_limits(name: &str, kind: &Kind) -> (u64, u64, u64) {
    let min = size_min(kind).unwrap_or(0);
    match LIMITS.iter().find(|(n, _, _)| *n == name) {
        Some((_, max, header)) => (min, *max, *header),
        None => (min, size_max(kind).unwrap_or(u64::MAX), 0),
    }
}

/// The role of a tunable autotune can search; None for the rest.
pub fn role_of(name: &str) -> Option<Role> {
    if THRESHOLDS.contains(&name) {
        Some(Role::Threshold)
    } else if FRAGMENTS.contains(&name) {
        Some(Role::Fragment)
    } else if SWITCHES.iter().any(|(n, _, _)| *n == name) {
        Some(Role::Switch)
    } else {
        None
    }
}

/// A switch's two values, off first.
pub fn switch_values(name: &str) -> Option<[&'static str; 2]> {
    SWITCHES
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, off, on)| [*off, *on])
}

/// Every searchable name, grouped, for error messages.
pub fn describe_searchable() -> String {
    let names = |v: Vec<&str>| v.join(", ");
    format!(
        "thresholds ({}), fragment sizes ({}), switches ({})",
        names(THRESHOLDS.to_vec()),
        names(FRAGMENTS.to_vec()),
        names(SWITCHES.iter().map(|s| s.0).collect())
    )
}

/// Why `name` cannot be searched on `def` (reached as `label`), or None when it can.
pub fn refusal(name: &str, label: &str, def: &FabricDef) -> Option<String> {
    let engine = ENGINE_TUNABLES.iter().any(|d| d.name == name);
    if def.kind == FabricKind::Mpi {
        if !name.starts_with("mpi.") {
            return Some(format!(
                "{name} is fabbench's own engine setting, which {label} does not use (MPI runs its own protocols); tune its MPI variables, e.g. --params mpi.btl_vader_eager_limit"
            ));
        }
        return None;
    }
    if name.starts_with("mpi.") {
        return Some(format!(
            "{name} is an MPI variable; tune it on an MPI fabric (shm@mpi, tcp@mpi), not {label}"
        ));
    }
    if let Some((_, own)) = def.replaces.iter().find(|(e, _)| *e == name) {
        return Some(format!(
            "on {label}, {name} is set through {own}; use --params {own}"
        ));
    }
    if def.ignores.contains(&name) {
        return Some(format!("{label} ignores {name}: it has no effect there"));
    }
    if !engine && !name.starts_with(&format!("{}.", def.name)) {
        let owner = name.split('.').next().unwrap_or(name);
        return Some(format!("{name} is a parameter of {owner}, not of {label}"));
    }
    None
}

/// What autotune searches on `def` when `--params` is not given: every engine threshold,
/// fragment size and switch the fabric uses (rx_thread only where the fabric makes its own
/// choice about it, as hyperlink's TI defaults do), the fabric's own such parameters, or on
/// an MPI preset what its library documents. Empty: nothing to tune.
pub fn defaults_for(def: &FabricDef, preset_base: Option<&str>) -> Vec<&'static str> {
    if def.kind == FabricKind::Mpi {
        return preset_base
            .and_then(|b| MPI_DEFAULTS.iter().find(|(f, _)| *f == b))
            .map(|(_, p)| p.to_vec())
            .unwrap_or_default();
    }
    if let Some((_, list)) = NATIVE_DEFAULTS.iter().find(|(f, _)| *f == def.name) {
        return list.to_vec();
    }
    let own = (def.tunables)();
    let candidates = ENGINE_TUNABLES
        .iter()
        .map(|d| d.name)
        .chain(own.iter().map(|d| d.name));
    candidates
        .filter(|n| role_of(n).is_some())
        .filter(|n| refusal(n, def.name, def).is_none())
        .filter(|n| *n != "rx_thread" || def.defaults.iter().any(|(k, _)| *k == "rx_thread"))
        .collect()
}

/// The largest value a size parameter takes, for forcing every message eager.
pub fn size_max(kind: &Kind) -> Option<u64> {
    match kind {
        Kind::Size { max, .. } => Some(*max),
        Kind::Optional(inner) => size_max(inner),
        _ => None,
    }
}

/// The smallest value a size parameter takes, for forcing every message to rendezvous.
pub fn size_min(kind: &Kind) -> Option<u64> {
    match kind {
        Kind::Size { min, .. } => Some(*min),
        Kind::Optional(inner) => size_min(inner),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use transports::registry::find;

    #[test]
    fn each_fabric_gets_the_parameters_that_matter_there() {
        let d = |n: &str| defaults_for(find(n).unwrap(), None);
        assert_eq!(d("shm"), vec!["eager_limit", "frag_size", "single_copy"]);
        assert_eq!(d("tcp"), vec!["eager_limit", "frag_size"]);
        assert_eq!(
            d("hyperlink"),
            vec!["eager_limit", "frag_size", "rx_thread"]
        );
        assert_eq!(d("rapidio"), vec!["eager_limit", "frag_size"]);
        assert_eq!(d("bxi"), vec!["bxi.rendezvous", "bxi.rndv_fragment_size"]);
        assert_eq!(
            d("ofi"),
            vec!["ofi.matching", "ofi.rndv", "ofi.inject_size", "eager_limit"]
        );
        for p in d("ofi") {
            assert!(role_of(p).is_some(), "{p} searchable");
            assert_eq!(refusal(p, "ofi", find("ofi").unwrap()), None, "{p}");
        }
        let mpi = find("mpi").unwrap();
        assert_eq!(
            defaults_for(mpi, Some("shm")),
            vec!["mpi.btl_vader_eager_limit"]
        );
        assert!(defaults_for(mpi, None).is_empty());
    }

    #[test]
    fn a_switch_default_is_one_of_its_two_values() {
        // The A/B compares the default with the other value by their text: the registry's
        // default must read as one of the two (else it would be run as a third value).
        let reg = transports::registry::registry(&[]);
        let s = reg.defaults();
        for name in ["ofi.matching", "ofi.rndv", "ofi.inject_size"] {
            let v = s
                .get_by_runtime_name::<bench_core::tunables::Value>(name)
                .to_string();
            assert!(
                switch_values(name).unwrap().contains(&v.as_str()),
                "{name} default {v}"
            );
        }
    }

    #[test]
    fn the_engines_parameters_do_nothing_under_provider_matching() {
        let reg = transports::registry::registry(&[]);
        let ofi = find("ofi").unwrap();
        let mut s = reg.defaults();
        assert_eq!(inert(ofi, "eager_limit", &s), None);
        s.set(
            &reg,
            "ofi.matching",
            "provider",
            bench_core::tunables::Source::Cli,
        )
        .unwrap();
        for name in ["eager_limit", "ofi.rndv"] {
            let why = inert(ofi, name, &s).unwrap_or_default();
            assert!(why.contains("under ofi.matching=provider"), "{name}: {why}");
        }
        assert_eq!(inert(ofi, "ofi.inject_size", &s), None);
        assert_eq!(inert(find("shm").unwrap(), "eager_limit", &s), None);
    }

    #[test]
    fn refusals_name_what_to_use_instead() {
        let r = |n: &str, f: &str| refusal(n, f, find(f).unwrap()).unwrap_or_default();
        assert!(r("eager_limit", "bxi").contains("use --params bxi.rendezvous"));
        assert!(r("single_copy", "rapidio").contains("rapidio ignores single_copy"));
        assert!(r("bxi.rendezvous", "rapidio").contains("a parameter of bxi, not of rapidio"));
        assert!(r("mpi.btl_vader_eager_limit", "shm").contains("MPI variable"));
        assert!(r("eager_limit", "mpi").contains("MPI runs its own protocols"));
        assert_eq!(
            refusal("eager_limit", "rapidio", find("rapidio").unwrap()),
            None
        );
    }
}
