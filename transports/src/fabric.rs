//! What a fabric is, as the registry ([`crate::registry`]) lists it: its name, kind, whether
//! it can run here, its tunables and their defaults, how its ranks are started and cleaned up
//! after, and how its transport is built. Each fabric module defines one [`FabricDef`]; this
//! module knows none of them, so fabric modules depend on it and never the other way round.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bench_core::bootstrap::Bootstrap;
use bench_core::tunables::{Def, Key, Settings};

use crate::engine::{EngineConfig, Schedule, SingleCopy};
use crate::error::Result;
use crate::order::{ByteOrders, BYTE_ORDER, BYTE_ORDER_RANK};
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

/// What a launcher hook is asked to start: `ranks` copies of `program args`, each with `env`.
pub struct LaunchRequest<'a> {
    pub ranks: usize,
    pub settings: &'a Settings,
    pub program: &'a Path,
    pub args: &'a [String],
    pub env: &'a [(String, String)],
    /// The launcher program the user named (`--mpirun`).
    pub launcher: &'a str,
}

/// The one command that starts every rank (mpirun with its arguments).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchCommand {
    pub program: PathBuf,
    pub args: Vec<String>,
    /// Environment for the launcher (and through it, the ranks).
    pub env: Vec<(String, String)>,
}

/// How a fabric's ranks are started when fabbench starts them.
#[derive(Clone, Copy)]
pub enum Launch {
    /// One process per rank, started and supervised by fabbench's local launcher.
    Processes,
    /// Threads of the calling process (emulated fabrics, in virtual time).
    Threads,
    /// One launcher process starts every rank; the hook builds its command line, or says in
    /// one line why it cannot.
    Launcher(fn(&LaunchRequest) -> std::result::Result<LaunchCommand, crate::Refusal>),
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
    /// Shared tunables that mean nothing on this fabric (left out of its settings line).
    pub ignores: &'static [&'static str],
    /// Whether the fabric can have `n` ranks under the settings in force (a topology's size
    /// may be a setting: bxi's fat tree); the refusal in one line.
    pub check_ranks: fn(&Settings, n: usize) -> std::result::Result<(), crate::Refusal>,
    /// Whether the settings in force can carry a message at all (an emulated card whose values
    /// contradict each other or the engine's); the refusal in one line naming the parameters
    /// and what is valid; or settings this host cannot use (tcp.if). Checked when a plan is built,
    /// before anything runs; every rank under mpirun or srun checks on its own host.
    pub check_settings: fn(&Settings) -> std::result::Result<(), crate::Refusal>,
    /// The message sizes at which an on/off tunable's mechanism acts under these settings
    /// (single copy only above the eager limit; hyperlink's drain thread only beyond its
    /// window): what a switch may be judged on.
    pub switch_reach: fn(name: &str, settings: &Settings) -> Reach,
    pub launch: Launch,
    /// Removes whatever a job with this id may have left behind (shared-memory segments),
    /// called after every job, however it ended.
    pub cleanup: fn(job_id: &str),
    /// The library underneath, named first in the settings line (an MPI's version line).
    pub library: fn() -> Option<String>,
    pub connect: fn(&FabricContext) -> Result<Box<dyn Transport>>,
}

impl FabricDef {
    /// The settings that matter on this fabric, as output names them: the engine's tunables
    /// (less those that mean nothing here) and the fabric's own; on an MPI fabric the library
    /// first, then only the MPI variables that are set.
    pub fn settings_line(&self, settings: &Settings) -> String {
        let prefix = format!("{}.", self.name);
        let mpi = self.kind == FabricKind::Mpi;
        let library = (self.library)()
            .and_then(|l| l.split([',', '\n']).next().map(|s| s.trim().to_string()))
            .unwrap_or_default();
        let line = settings
            .iter()
            .filter(|(name, v, _)| {
                // A fault injection shows only when it is on.
                // So does a byte order a test gives a rank.
                let off = (*name == INJECT_DELAY_NS.name() && v.to_string() == "0")
                    || (*name == BYTE_ORDER.name() && v.to_string() == "native")
                    || (*name == BYTE_ORDER_RANK.name() && v.to_string().is_empty());
                let irrelevant = *name == TIMEOUT.name() || off || self.ignores.contains(name);
                // MPI runs its own protocols: only the MPI variables that are set matter.
                let engine = ENGINE_TUNABLES.iter().any(|d| d.name == *name)
                    && !irrelevant
                    && !mpi
                    && !self.replaces.iter().any(|(e, _)| e == name);
                engine || (name.starts_with(&prefix) && !(mpi && v.to_string().is_empty()))
            })
            .map(|(name, v, _)| format!("{name}={v}"))
            .collect::<Vec<_>>()
            .join(" ");
        match (library.is_empty(), line.is_empty()) {
            (false, false) => format!("{library}; {line}"),
            (false, true) => library,
            _ => line,
        }
    }
}

/// What an emulated fabric ignores: its ranks are tasks of one thread in virtual time (no placement) and
/// its wires have no single copy.
/// Nor does it take `inject_delay_ns`: its models have their own per-message overheads.
pub const EMULATED_IGNORES: &[&str] = &[
    "bind",
    "single_copy",
    "single_copy_share",
    "inject_delay_ns",
];

/// The largest message the engine sends eagerly.
pub const EAGER_LIMIT: Key<u64> = Key::size(
    "eager_limit",
    0,
    1 << 20,
    "4K",
    "largest message sent eagerly (inline); larger ones use rendezvous",
);

pub const FRAG_SIZE: Key<u64> = Key::size(
    "frag_size",
    1 << 10,
    16 << 20,
    "32K",
    "fragment size of pipelined rendezvous transfers",
);

pub const SINGLE_COPY: Key<str> = Key::choice(
    "single_copy",
    &["auto", "on", "off"],
    "auto",
    "read large messages in place (shm: CMA); auto: shm times both paths at connect and reads in place from the crossover",
);

pub const SINGLE_COPY_SHARE: Key<i64> = Key::int(
    "single_copy_share",
    0,
    90,
    "50",
    "percent of a single copy (64 KiB and up) the sender writes into the receiver's buffer while the receiver reads the rest, both at once; 0: the receiver reads it all, as Open MPI's vader does",
);

pub const RX_THREAD: Key<bool> = Key::flag(
    "rx_thread",
    "off",
    "a receive progress thread that advances transfers while the rank computes",
);

pub const RNDV_SCHEDULE: Key<str> = Key::choice(
    "rndv_schedule",
    &["round_robin", "fifo"],
    "round_robin",
    "order of fragments of concurrent rendezvous sends: one of each in turn, or each to the end",
);

pub const TIMEOUT: Key<Duration> = Key::duration(
    "timeout",
    100,
    3_600_000,
    "30s",
    "longest wait on a peer before the run fails naming the peer and stage",
);

pub const INJECT_DELAY_NS: Key<i64> = Key::int(
    "inject_delay_ns",
    0,
    1_000_000,
    "0",
    "busy-wait this long before each message a rank sends (native fabrics): a slowdown of known size, to check that a CI gate catches it; 0 is off",
);

pub const BIND: Key<str> = Key::choice(
    "bind",
    &["core", "none"],
    "core",
    "pin each local rank to its own CPU (as mpirun does) or let the kernel place it",
);

/// Tunables of the engine, shared by every native and emulated fabric.
pub const ENGINE_TUNABLES: &[Def] = &[
    EAGER_LIMIT.def(),
    FRAG_SIZE.def(),
    SINGLE_COPY.def(),
    SINGLE_COPY_SHARE.def(),
    RX_THREAD.def(),
    RNDV_SCHEDULE.def(),
    TIMEOUT.def(),
    INJECT_DELAY_NS.def(),
    BYTE_ORDER.def(),
    BYTE_ORDER_RANK.def(),
    BIND.def(),
];

pub(crate) fn always_usable() -> Availability {
    Availability::Usable
}

/// A fabric that takes any number of ranks.
pub(crate) fn any_ranks(_: &Settings, n: usize) -> std::result::Result<(), crate::Refusal> {
    if n >= 1 {
        Ok(())
    } else {
        Err(crate::Refusal::Ranks {
            ranks: n,
            why: "a job needs at least one rank".into(),
        })
    }
}

/// A fabric whose settings are each valid on their own whatever the others are.
pub(crate) fn settings_independent(_s: &Settings) -> std::result::Result<(), crate::Refusal> {
    Ok(())
}

/// A fabric that leaves nothing behind.
pub(crate) fn nothing_to_clean(_job_id: &str) {}

/// A fabric with no library underneath.
pub(crate) fn no_library() -> Option<String> {
    None
}

/// The engine settings in force.
pub fn engine_config(s: &Settings) -> EngineConfig {
    EngineConfig {
        eager_limit: s.get(EAGER_LIMIT) as usize,
        frag_size: s.get(FRAG_SIZE) as usize,
        single_copy: SingleCopy::parse(s.get(SINGLE_COPY)).expect("validated choice"),
        single_copy_share: s.get(SINGLE_COPY_SHARE) as u8,
        rx_thread: s.get(RX_THREAD),
        schedule: Schedule::parse(s.get(RNDV_SCHEDULE)).expect("validated choice"),
        timeout: s.get(TIMEOUT),
        inject_delay_ns: s.get(INJECT_DELAY_NS) as u64,
        byte_orders: ByteOrders::from_settings(s),
    }
}

/// How long setup steps (bootstrap exchanges) may take.
pub fn setup_timeout(s: &Settings) -> Duration {
    s.get(TIMEOUT)
}

/// The sizes a switch acts on: every message larger than `above` bytes (0: every message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reach {
    pub above: u64,
    /// Why, in one clause a report can show ("single copy moves rendezvous messages only, ...").
    pub why: String,
}

impl Reach {
    /// Every size: the fabric knows no narrower range.
    pub fn everywhere(why: impl Into<String>) -> Reach {
        Reach {
            above: 0,
            why: why.into(),
        }
    }

    pub fn acts_at(&self, size: u64) -> bool {
        size > self.above
    }
}
