//! The `ofi` fabric: fabbench over libfabric (OFI), the layer below MPI through which
//! Slingshot (cxi), EFA, Omni-Path (psm3), InfiniBand and RoCE (verbs), TCP and shared memory
//! are driven, one rank per process like shm and tcp.
//!
//! libfabric is found at run time ([`library`]), so a build needs no libfabric and one binary
//! serves every cluster; `fabbench list` says which providers it offers, or why it cannot run.
//! Two ways to match messages ([`MATCHING`]): `engine` runs fabbench's engine (its matching,
//! eager and rendezvous protocols) over the provider's untagged messages ([`wire`]), as Open
//! MPI's btl/ofi does under ob1; `provider` hands tagged sends and receives to the provider,
//! which matches them itself, as Open MPI's mtl/ofi does ([`tagged`]).
//!
//! The module is cut by role: `ffi` declares libfabric's C types, `library` loads it, `info`
//! asks it for providers and chooses one, `endpoint` opens a rank's endpoint and exchanges
//! addresses, `mr` registers memory as the provider's mr_mode asks, `order` keeps each peer's frames in
//! order, `wire` and `tagged` are the
//! two data paths; this file holds the fabric's definition and its tunables.

#[macro_use]
mod ffi;
mod endpoint;
mod info;
mod library;
mod mr;
mod order;
mod tagged;
mod wire;

use std::sync::OnceLock;

use bench_core::tunables::{Def, Key, Settings};

use crate::error::{Result, TransportError};
use crate::fabric::{Availability, FabricContext, FabricDef, FabricKind, Launch};
use crate::transport::Transport;

pub use info::Needs;

pub const PROVIDER: Key<str> = Key::text(
    "ofi.provider",
    "auto",
    "libfabric provider (tcp;ofi_rxm, shm, verbs;ofi_rxm, cxi, efa, psm3, net, ...) or auto: libfabric's first that fits",
);

pub const DOMAIN: Key<str> = Key::text(
    "ofi.domain",
    "auto",
    "libfabric domain (a NIC or interface: mlx5_0, cxi0, eth0) or auto: the one on the address that reaches the bootstrap",
);

pub const MATCHING: Key<str> = Key::choice(
    "ofi.matching",
    &["engine", "provider"],
    "engine",
    "who matches messages: fabbench's engine over untagged messages (its eager and rendezvous protocols), or the provider's tagged messages (as Open MPI's mtl/ofi)",
);

pub const RNDV: Key<str> = Key::choice(
    "ofi.rndv",
    &["read", "write"],
    "read",
    "how the engine moves a rendezvous message in place over RMA: the receiver reads it, or the sender writes it into the receive buffer",
);

pub const INJECT_SIZE: Key<u64> = Key::size(
    "ofi.inject_size",
    0,
    1 << 16,
    "64K",
    "largest message sent with fi_inject (no completion to reap), capped at the provider's inject size (the default leaves the provider's); 0 never injects",
);

pub const CQ_BATCH: Key<i64> = Key::int(
    "ofi.cq_batch",
    1,
    256,
    "16",
    "completions read from the completion queue in one call",
);

fn tunables() -> &'static [Def] {
    static DEFS: OnceLock<Vec<Def>> = OnceLock::new();
    DEFS.get_or_init(|| {
        vec![
            PROVIDER.def(),
            DOMAIN.def(),
            MATCHING.def(),
            RNDV.def(),
            INJECT_SIZE.def(),
            CQ_BATCH.def(),
        ]
    })
}

/// What libfabric offers here: its version and the providers with reliable datagram
/// endpoints, or why it cannot run.
pub fn offer() -> std::result::Result<(String, Vec<String>), String> {
    static OFFER: OnceLock<std::result::Result<(String, Vec<String>), String>> = OnceLock::new();
    OFFER
        .get_or_init(|| {
            let lib = library::library()?;
            let mut names: Vec<String> = Vec::new();
            for needs in [Needs::Messages, Needs::Tagged] {
                let list = info::query(lib, needs, false, None)?;
                for e in info::providers(lib, &list) {
                    if !names.contains(&e.provider) {
                        names.push(e.provider);
                    }
                }
            }
            if names.is_empty() {
                return Err(format!(
                    "{} offers no provider with reliable datagram endpoints here (FI_PROVIDER={})",
                    lib.version_text(),
                    std::env::var("FI_PROVIDER").unwrap_or_default()
                ));
            }
            Ok((lib.version_text(), names))
        })
        .clone()
}

fn availability() -> Availability {
    match offer() {
        Ok(_) => Availability::Usable,
        Err(why) => Availability::Unusable(why),
    }
}

/// The library's version, then (on a line of its own, which `fabbench list` shows and a
/// settings line leaves out) the providers it offers.
fn library_line() -> Option<String> {
    offer()
        .ok()
        .map(|(v, names)| format!("{v}\nproviders {}", names.join(", ")))
}

/// A provider named that libfabric does not offer is bad input: one line naming those it does.
fn check_settings(s: &Settings) -> std::result::Result<(), crate::Refusal> {
    let p = s.get(PROVIDER);
    if p == "auto" {
        return Ok(());
    }
    let Ok((_, names)) = offer() else {
        return Ok(()); // availability says why, in one line, before anything runs
    };
    if names.iter().any(|n| n == p) {
        return Ok(());
    }
    Err(crate::Refusal::settings(format!(
        "ofi.provider={p}: libfabric offers no such provider with reliable datagram endpoints here; valid: auto, {}",
        names.join(", ")
    )))
}

/// The provider's own variables in this process's environment (libfabric reads `FI_*` at its
/// start), for the manifest.
pub(crate) fn provider_env() -> Vec<(String, String)> {
    let mut vars: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| k.starts_with("FI_"))
        .map(|(k, v)| (format!("ofi_env_{k}"), v))
        .collect();
    vars.sort();
    vars
}

/// The provider's facts as the manifest records them.
fn facts(ep: &endpoint::Endpoint) -> Vec<(String, String)> {
    let e = &ep.entry;
    vec![
        ("ofi_library".into(), ep.lib.version_text()),
        ("ofi_provider".into(), e.provider.clone()),
        (
            "ofi_provider_version".into(),
            format!("{}.{}", e.provider_version.0, e.provider_version.1),
        ),
        ("ofi_fabric".into(), e.fabric.clone()),
        ("ofi_domain".into(), e.domain.clone()),
        ("ofi_caps".into(), e.caps_text.clone()),
        (
            "ofi_mr_mode".into(),
            if e.mr_mode_text.is_empty() {
                "none".into()
            } else {
                e.mr_mode_text.clone()
            },
        ),
        ("ofi_mr_key_size".into(), e.mr_key_size.to_string()),
        ("ofi_inject_size".into(), e.inject_size.to_string()),
        ("ofi_max_msg_size".into(), e.max_msg_size.to_string()),
        ("ofi_tx_size".into(), e.tx_size.to_string()),
        ("ofi_rx_size".into(), e.rx_size.to_string()),
        (
            "ofi_mem_tag_format".into(),
            format!("{:#x}", e.mem_tag_format),
        ),
        (
            "ofi_data_progress".into(),
            wire::progress_name(e.data_progress).into(),
        ),
        (
            "ofi_local_address".into(),
            ep.names.get(ep.rank).cloned().unwrap_or_default(),
        ),
    ]
}

fn text_or_auto(v: &str) -> Option<&str> {
    (v != "auto" && !v.is_empty()).then_some(v)
}

fn connect(ctx: &FabricContext) -> Result<Box<dyn Transport>> {
    let s = ctx.settings;
    let cfg = crate::fabric::engine_config(s);
    let timeout = crate::fabric::setup_timeout(s);
    let matching = s.get(MATCHING);
    let needs = if matching == "provider" {
        Needs::Tagged
    } else {
        Needs::Messages
    };
    let want = endpoint::Wanted {
        provider: text_or_auto(s.get(PROVIDER)),
        domain: text_or_auto(s.get(DOMAIN)),
        needs,
        timeout,
    };
    let ep = endpoint::Endpoint::open(ctx.boot.as_ref(), &want)?;
    let inject_cap = s.get(INJECT_SIZE) as usize;
    if needs == Needs::Tagged {
        return tagged::TaggedTransport::new(
            ep,
            inject_cap,
            s.get(CQ_BATCH) as usize,
            cfg.timeout,
            Some(ctx.boot.clone()),
        )
        .map(|t| Box::new(t) as Box<dyn Transport>);
    }
    let inject_size = if ep.calls.inject.is_some() {
        ep.entry.inject_size.min(inject_cap)
    } else {
        0
    };
    let single_copy = ep.calls.read.is_some() && cfg.single_copy != crate::engine::SingleCopy::Off;
    let mut cfg = cfg;
    if s.get(RNDV) == "write" {
        if !single_copy || ep.calls.write.is_none() {
            return Err(TransportError::Config(format!(
                "ofi.rndv=write: provider {} has no RMA (or single_copy=off); use ofi.rndv=read",
                ep.entry.provider
            )));
        }
        // The sender writes the message (all but its last partial page, which the receiver
        // reads) from 64 KiB up, once a first read in place proved RMA works: the engine's
        // shared single copy with the sender's share whole.
        cfg.single_copy_share = 100;
    }
    let ws = wire::WireSettings {
        max_frame: cfg.eager_limit.max(cfg.frag_size) + crate::header::MAX_HEADER_LEN,
        inject_size,
        cq_batch: s.get(CQ_BATCH) as usize,
        rx_slots: 32.min(ep.entry.rx_size.max(4)),
        tx_slots: 32.min(ep.entry.tx_size.max(4)),
        timeout: cfg.timeout,
        order: cfg.byte_orders.of(ep.rank),
        single_copy,
    };
    let w = wire::OfiWire::new(ep, ws)?;
    Ok(Box::new(crate::engine::Engine::new(
        Box::new(w),
        cfg,
        Some(ctx.boot.clone()),
    )?))
}

/// Where a switch acts on ofi: `ofi.rndv` moves rendezvous messages only, as single copy does;
/// the engine's own switches as the engine says.
fn switch_reach(name: &str, s: &Settings) -> crate::reach::Reach {
    if name == RNDV.name() {
        let eager = s.get(crate::fabric::EAGER_LIMIT);
        return crate::reach::Reach {
            above: eager,
            why: format!(
                "ofi.rndv moves rendezvous messages only, those above eager_limit={}",
                bench_core::size::format_size(eager)
            ),
        };
    }
    crate::reach::engine_reach(name, s)
}

/// The registry line's target.
pub const FABRIC: FabricDef = FabricDef {
    name: "ofi",
    kind: FabricKind::Native,
    summary: "libfabric (OFI) providers: verbs, cxi, efa, psm3, tcp, shm; loaded at run time",
    availability,
    tunables,
    // Messages up to 16 KiB go eagerly through the provider's own buffers; larger ones are read
    // in place where the provider has RMA.
    defaults: &[
        ("eager_limit", "16K"),
        ("frag_size", "64K"),
        ("single_copy_share", "0"),
    ],
    replaces: &[],
    ignores: &["single_copy_share"],
    check_ranks: crate::fabric::any_ranks,
    check_settings,
    switch_reach,
    launch: Launch::Processes,
    cleanup: crate::fabric::nothing_to_clean,
    library: library_line,
    connect,
};

#[cfg(test)]
mod tests {
    use bench_core::tunables::Source;

    #[test]
    fn the_rendezvous_switch_acts_above_the_eager_limit_in_force() {
        let reg = crate::registry::registry(&[]);
        let mut s = reg.defaults();
        s.set(&reg, "eager_limit", "16K", Source::Cli).unwrap();
        let r = super::switch_reach("ofi.rndv", &s);
        assert_eq!(r.above, 16 << 10);
        assert!(r.why.contains("eager_limit=16KiB"), "{}", r.why);
        // The engine's switches as the engine says.
        assert_eq!(super::switch_reach("rx_thread", &s).above, 0);
        assert_eq!(super::switch_reach("single_copy", &s).above, 16 << 10);
    }
}
