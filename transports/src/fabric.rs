//! The fabric registry: every fabric fabbench can run, whether it is usable here, its
//! tunables, and how to build its transport. Adding a fabric is one module plus one line in
//! [`FABRICS`]; the shared conformance suite (`tests/conformance.rs`) then runs it.

use std::sync::Arc;
use std::time::Duration;

use bench_core::bootstrap::Bootstrap;
use bench_core::tunables::{Def, Kind, Registry, Settings};

use crate::engine::{Engine, EngineConfig, Schedule, SingleCopy};
use crate::error::{Result, TransportError};
use crate::shm::{ShmConfig, ShmWire};
use crate::transport::Transport;

/// How a fabric's ranks run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FabricKind {
    /// Real processes (or threads, in tests) moving real bytes over a real medium.
    Native,
    /// Ranks as threads of one process under a virtual-time model of hardware not present.
    Emulated,
    /// Ranks started by mpirun/srun; the MPI library is the transport.
    Mpi,
}

/// Whether a fabric can run on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Availability {
    Usable,
    Unusable(String),
}

/// What a fabric's constructor gets.
pub struct FabricContext<'a> {
    pub boot: Arc<dyn Bootstrap>,
    pub settings: &'a Settings,
}

pub struct FabricDef {
    pub name: &'static str,
    pub kind: FabricKind,
    pub summary: &'static str,
    pub availability: fn() -> Availability,
    /// Tunables this fabric adds to the registry (an emulated fabric's model card).
    pub tunables: fn() -> &'static [Def],
    /// Defaults this fabric imposes on shared tunables (e.g. rx_thread on for hyperlink).
    pub defaults: &'static [(&'static str, &'static str)],
    /// Engine tunables whose role a fabric tunable takes: (engine name, fabric name).
    pub replaces: &'static [(&'static str, &'static str)],
    /// Shared tunables that mean nothing on this fabric (left out of its comment line).
    pub ignores: &'static [&'static str],
    pub connect: fn(&FabricContext) -> Result<Box<dyn Transport>>,
}

/// What an emulated fabric ignores: its ranks are threads in virtual time (no placement) and
/// its wires have no single copy.
pub const EMULATED_IGNORES: &[&str] = &["bind", "single_copy", "single_copy_share"];

/// Tunables of the engine, shared by every native and emulated fabric.
pub const ENGINE_TUNABLES: &[Def] = &[
    Def {
        name: "eager_limit",
        kind: Kind::Size {
            min: 0,
            max: 1 << 20,
        },
        default: "4K",
        help: "largest message sent eagerly (inline); larger ones use rendezvous",
    },
    Def {
        name: "frag_size",
        kind: Kind::Size {
            min: 1 << 10,
            max: 16 << 20,
        },
        default: "32K",
        help: "fragment size of pipelined rendezvous transfers",
    },
    Def {
        name: "single_copy",
        kind: Kind::Choice(&["auto", "on", "off"]),
        default: "auto",
        help: "read large messages in place (shm: CMA); auto: shm times both paths at connect and reads in place from the crossover",
    },
    Def {
        name: "single_copy_share",
        kind: Kind::Int { min: 0, max: 90 },
        default: "50",
        help: "percent of a single copy (64 KiB and up) the sender writes into the receiver's buffer while the receiver reads the rest, both at once; 0: the receiver reads it all, as Open MPI's vader does",
    },
    Def {
        name: "rx_thread",
        kind: Kind::Bool,
        default: "off",
        help: "a receive progress thread that advances transfers while the rank computes",
    },
    Def {
        name: "rndv_schedule",
        kind: Kind::Choice(&["round_robin", "fifo"]),
        default: "round_robin",
        help: "order of fragments of concurrent rendezvous sends: one of each in turn, or each to the end",
    },
    Def {
        name: "timeout",
        kind: Kind::Duration {
            min_ms: 100,
            max_ms: 3_600_000,
        },
        default: "30s",
        help: "longest wait on a peer before the run fails naming the peer and stage",
    },
    Def {
        name: "bind",
        kind: Kind::Choice(&["core", "none"]),
        default: "core",
        help: "pin each local rank to its own CPU (as mpirun does) or let the kernel place it",
    },
];

/// Every fabric, in the order `fabbench list` shows them.
pub static FABRICS: &[FabricDef] = &[
    crate::shm::FABRIC,
    crate::tcp::FABRIC,
    crate::emulated::hyperlink::FABRIC,
    crate::emulated::rapidio::FABRIC,
    crate::emulated::bxi::FABRIC,
    crate::mpi::FABRIC,
];

pub(crate) fn always_usable() -> Availability {
    Availability::Usable
}

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

/// The engine settings in force.
pub fn engine_config(s: &Settings) -> EngineConfig {
    EngineConfig {
        eager_limit: s.size("eager_limit") as usize,
        frag_size: s.size("frag_size") as usize,
        single_copy: SingleCopy::parse(s.text("single_copy")).expect("validated choice"),
        single_copy_share: s.int("single_copy_share") as u8,
        rx_thread: s.flag("rx_thread"),
        schedule: Schedule::parse(s.text("rndv_schedule")).expect("validated choice"),
        timeout: s.duration("timeout"),
    }
}

/// How long setup steps (bootstrap exchanges) may take.
pub fn setup_timeout(s: &Settings) -> Duration {
    s.duration("timeout")
}

pub(crate) fn connect_shm(ctx: &FabricContext) -> Result<Box<dyn Transport>> {
    let cfg = engine_config(ctx.settings);
    let scfg = ShmConfig::new(
        ctx.settings.size("shm.ring_bytes") as usize,
        cfg.eager_limit,
        cfg.frag_size,
        cfg.timeout,
    )
    .with_probe(cfg.single_copy == SingleCopy::Auto, cfg.single_copy_share);
    let wire = ShmWire::connect(ctx.boot.as_ref(), scfg)?;
    Ok(Box::new(Engine::new(
        Box::new(wire),
        cfg,
        Some(ctx.boot.clone()),
    )?))
}

pub(crate) fn shm_availability() -> Availability {
    let dir = crate::shm::segment::segment_path("probe", "probe");
    match dir.parent() {
        Some(p) if p.is_dir() => Availability::Usable,
        _ => Availability::Unusable("no /dev/shm or temporary directory".into()),
    }
}

/// Fails with a one-line reason if `name` cannot run here.
pub fn check_usable(def: &FabricDef) -> Result<()> {
    match (def.availability)() {
        Availability::Usable => Ok(()),
        Availability::Unusable(why) => Err(TransportError::Config(format!(
            "fabric {} cannot run here: {why}",
            def.name
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_default_is_valid_and_names_are_unique() {
        let r = registry(&[]);
        let s = r.defaults();
        let cfg = engine_config(&s);
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
}
