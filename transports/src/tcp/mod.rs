//! The tcp wire: one TCP connection per rank pair, across hosts (Ethernet, IPoIB) or loopback.
//!
//! Set-up: every rank listens on the chosen interface (`tcp.if`), publishes its address through
//! the bootstrap, connects to every lower rank and accepts every higher one. A connection opens
//! with a hello carrying a per-job random token that rank 0 hands out through the bootstrap; a
//! connection without the right token (or from an unexpected rank) is closed and logged, and
//! set-up carries on. Socket buffers (`tcp.sndbuf`, `tcp.rcvbuf`) are set before listen and
//! connect (see `Buffers`). Then the sockets become nonblocking with TCP_NODELAY and are driven
//! by the engine's progress: frames travel length-prefixed (u32, network order), written with
//! writev, with what the kernel does not take kept in a bounded backlog; reads are parsed in
//! place. A peer that closes its connection fails the next wait with its rank and address named.
//!
//! Large messages cross with one copy on each side, the kernel's, as with Open MPI's tcp BTL:
//! the rest of a rendezvous fragment the kernel had no room for is written later from the
//! sender's own buffer (the engine completes the send only once it is, see `Wire::holds`),
//! never copied aside; and the payload of an arriving fragment is read straight into the
//! receive buffer the engine names (`FrameSink::place`), not through the wire's buffer.
//!
//! The module is cut by role: `setup` makes the connections (listen, hello, accept),
//! `sockopt` sets the socket options that must precede them, `wire` is the data path
//! the engine drives and `frame` its length prefix; this file holds the fabric's definition
//! and its tunables.

pub mod frame;
mod setup;
mod sockopt;
mod wire;

pub use setup::{decode_hello, hello};
pub use wire::TcpWire;

use std::time::Duration;

use bench_core::tunables::{Def, Key, Settings};

use crate::error::Result;

/// The interface or address to listen on, or auto.
pub const IFACE: Key<str> = Key::text(
    "tcp.if",
    "auto",
    "interface name (eth0), IPv4 address, or auto: the address that reaches the bootstrap (loopback for local jobs)",
);

pub const SNDBUF: Key<u64> = Key::size(
    "tcp.sndbuf",
    0,
    1 << 30,
    "0",
    "SO_SNDBUF of each connection; 0 keeps the kernel's default and autotuning",
);

pub const RCVBUF: Key<u64> = Key::size(
    "tcp.rcvbuf",
    0,
    1 << 30,
    "0",
    "SO_RCVBUF of each connection; 0 keeps the kernel's default and autotuning",
);

pub const CONNECT_TIMEOUT: Key<Duration> = Key::duration(
    "tcp.connect_timeout",
    100,
    3_600_000,
    "10s",
    "longest wait for a peer's connection during set-up (each I/O wait is bounded by timeout)",
);

/// The tcp wire's tunables.
pub const TUNABLES: &[Def] = &[
    IFACE.def(),
    SNDBUF.def(),
    RCVBUF.def(),
    CONNECT_TIMEOUT.def(),
];

fn tcp_tunables() -> &'static [Def] {
    TUNABLES
}
/// Refuses a `tcp.if` this host does not have, before anything runs (bad input, not a failure).
fn check_settings(s: &Settings) -> std::result::Result<(), crate::Refusal> {
    match s.get(IFACE) {
        "auto" => Ok(()),
        spec => setup::named_ip(spec)
            .map(|_| ())
            .map_err(crate::Refusal::settings),
    }
}
fn connect(ctx: &crate::fabric::FabricContext) -> Result<Box<dyn crate::transport::Transport>> {
    let wire = TcpWire::connect(ctx.boot.as_ref(), ctx.settings)?;
    let cfg = crate::fabric::engine_config(ctx.settings);
    Ok(Box::new(crate::engine::Engine::new(
        Box::new(wire),
        cfg,
        Some(ctx.boot.clone()),
    )?))
}

/// The registry line's target.
pub const FABRIC: crate::fabric::FabricDef = crate::fabric::FabricDef {
    name: "tcp",
    kind: crate::fabric::FabricKind::Native,
    summary: "TCP sockets between processes on one or many hosts (Ethernet, IPoIB, loopback)",
    availability: crate::fabric::always_usable,
    tunables: tcp_tunables,
    // Eager below 64 KiB, as Open MPI's tcp BTL (whose 64 KiB limit counts its header): a round
    // trip costs far more than a copy here, but a 64 KiB eager frame (header and length
    // prefix past 64 KiB) took 58.6 us one way on loopback where rendezvous takes 26.9 us
    // (Open MPI: 34 us); osu_bw at 64 KiB drops from 4,456 to 3,320 MB/s, still well above
    // Open MPI's (same session). Large pieces, because each one costs system calls on both
    // sides: 512 KiB beat 128 KiB by about 20 % in osu_bw at 1 MiB on loopback (interleaved
    // runs).
    defaults: &[("eager_limit", "63K"), ("frag_size", "512K")],
    replaces: &[],
    ignores: &["single_copy", "single_copy_share"],
    check_ranks: crate::fabric::any_ranks,
    check_settings,
    switch_reach: crate::reach::engine_reach,
    launch: crate::fabric::Launch::Processes,
    cleanup: crate::fabric::nothing_to_clean,
    library: crate::fabric::no_library,
    connect,
};
#[cfg(test)]
mod tests {
    use super::setup::{check_hello, hello};
    use super::wire::{frame_len, frame_prefix};

    #[test]
    fn hellos_and_length_prefixes_have_their_golden_bytes() {
        let mut want = b"FABTCP01".to_vec();
        want.extend_from_slice(b"0123456789abcdef");
        want.extend_from_slice(&[0; 16]); // a short token is zero-padded to 32 bytes
        want.extend_from_slice(&[0, 0, 1, 2, 0, 0, 3, 4]);
        assert_eq!(&hello("0123456789abcdef", 0x0102, 0x0304)[..], &want[..]);
        assert_eq!(frame_prefix(0x0001_0203), [0, 1, 2, 3]);
        assert_eq!(frame_len(&[0, 1, 2, 3, 99]), 0x0001_0203);
    }

    #[test]
    fn hellos_carry_token_rank_and_size() {
        let t = "0123456789abcdef0123456789abcdef";
        let h = hello(t, 3, 4);
        assert_eq!(check_hello(&h, t, 1, 4), Ok(3));
        assert!(check_hello(&h, "ffffffffffffffffffffffffffffffff", 1, 4)
            .unwrap_err()
            .contains("token"));
        assert!(check_hello(&h, t, 1, 8)
            .unwrap_err()
            .contains("token or job size"));
        assert!(check_hello(&hello(t, 0, 4), t, 1, 4)
            .unwrap_err()
            .contains("should not connect"));
        let mut junk = h;
        junk[0] = b'X';
        assert!(check_hello(&junk, t, 1, 4)
            .unwrap_err()
            .contains("not a fabbench"));
    }
}
