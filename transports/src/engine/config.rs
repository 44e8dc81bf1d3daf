//! The engine's settings: the choices a user (or a wire's model) makes about which protocol
//! carries a message, kept apart from the machinery that carries it out, so that the wires and
//! benchmarks that build an engine depend on nothing else.

use std::time::Duration;

use crate::order::ByteOrders;

/// The single-copy policy (`single_copy` tunable).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SingleCopy {
    /// Ask the wire per peer and size.
    Auto,
    On,
    Off,
}

impl SingleCopy {
    pub fn parse(text: &str) -> Option<SingleCopy> {
        match text {
            "auto" => Some(SingleCopy::Auto),
            "on" => Some(SingleCopy::On),
            "off" => Some(SingleCopy::Off),
            _ => None,
        }
    }
}

/// How fragments of concurrent rendezvous transfers are ordered (`rndv_schedule` tunable).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schedule {
    /// One fragment of each active transfer in turn.
    RoundRobin,
    /// Each transfer to the end before the next.
    Fifo,
}

impl Schedule {
    pub fn parse(text: &str) -> Option<Schedule> {
        match text {
            "round_robin" => Some(Schedule::RoundRobin),
            "fifo" => Some(Schedule::Fifo),
            _ => None,
        }
    }
}

/// The engine's protocol settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineConfig {
    pub eager_limit: usize,
    pub frag_size: usize,
    pub single_copy: SingleCopy,
    /// Percent of a single-copy transfer the sender writes into the receiver's buffer while
    /// the receiver reads the rest (`single_copy_share`); 0: the receiver reads it all.
    pub single_copy_share: u8,
    pub rx_thread: bool,
    pub schedule: Schedule,
    pub timeout: Duration,
    /// Nanoseconds to busy-wait before each send (`inject_delay_ns`): a known slowdown for
    /// checking a regression gate; 0 is off.
    pub inject_delay_ns: u64,
    /// The byte order headers are encoded as, per rank (`wire.byte_order`): native, except
    /// where a test makes a rank take a big-endian host's path.
    pub byte_orders: ByteOrders,
}

/// Single-copy transfers below this are read by the receiver alone: the sender's share would
/// cost a control hop (about a microsecond here) for a copy that takes less.
pub const SHARE_MIN: usize = 64 << 10;
