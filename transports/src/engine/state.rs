//! The engine's data: the state every job's module works on (the operation table, matching's
//! queues, the protocol's queues) and the types it holds. Each job's module adds its own
//! methods to it; keeping the data here, apart from the behaviour, means those modules depend
//! on this one and never on each other for a type.

use std::collections::{BTreeMap, VecDeque};

use crate::error::TransportError;
use crate::order::HostOrder;
use crate::transport::{Counters, Status, Tag};
use crate::wire::Wire;

use super::config::EngineConfig;

/// Everything the engine knows, apart from the wire (split so the wire can be polled while the
/// state is updated from inside the poll callback).
pub(super) struct State {
    pub(super) rank: usize,
    pub(super) size: usize,
    pub(super) cfg: EngineConfig,
    /// The byte order this rank encodes headers as (`wire.byte_order`).
    pub(super) order: HostOrder,
    pub(super) max_frame: usize,
    pub(super) wire_single_copy: bool,
    /// The wire reads payloads into place (`Wire::reads_into_place`).
    pub(super) wire_reads_into_place: bool,
    /// The wire places DATA payloads itself (see [`crate::wire::WireCaps::places_data`]).
    pub(super) wire_places_data: bool,
    pub(super) slots: Vec<Slot>,
    pub(super) free: Vec<u32>,
    pub(super) posted: VecDeque<u32>,
    pub(super) unexpected: VecDeque<Unexpected>,
    pub(super) pending_first: Vec<VecDeque<u32>>,
    /// Frames waiting in `pending_first` (all peers), so progress skips empty queues cheaply.
    pub(super) first_count: usize,
    pub(super) ctrl: Vec<VecDeque<Ctrl>>,
    pub(super) ctrl_count: usize,
    pub(super) streams: VecDeque<u32>,
    /// Sends whose last fragment the wire still reads (see `Wire::holds`), completed once it
    /// lets go.
    pub(super) flushing: Vec<u32>,
    pub(super) matched: VecDeque<u32>,
    pub(super) puts: VecDeque<PutJob>,
    pub(super) send_seq: Vec<u32>,
    pub(super) recv_seq: Vec<u32>,
    pub(super) reorder: Vec<BTreeMap<u32, Vec<u8>>>,
    pub(super) pool: Vec<Vec<u8>>,
    pub(super) blocked_scratch: Vec<bool>,
    pub(super) counters: Counters,
    pub(super) single_copy_refused: bool,
    /// A single copy has worked with this wire: from then on the sender may take a share.
    pub(super) single_copy_proven: bool,
    pub(super) stage: String,
    pub(super) fatal: Option<TransportError>,
}

pub(super) struct Core {
    pub(super) wire: Box<dyn Wire>,
    pub(super) st: State,
}

/// A buffer pointer that may cross to the receive thread. The engine never touches it outside
/// the lifetime the caller promised in `isend`/`irecv`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Ptr(pub(super) *mut u8);
// SAFETY: see the type's doc; access is serialised by the engine lock.
unsafe impl Send for Ptr {}

#[derive(Debug)]
pub(super) enum SendPhase {
    /// The first frame (EAGER or RTS) is waiting for room on the wire.
    Queued,
    /// RTS sent; the receiver answers CTS (copy), FIN (it read the buffer in place) or PUT
    /// (a shared single copy).
    WaitCts,
    Streaming {
        rreq: u64,
        raddr: u64,
        offset: usize,
        /// The receiver is still reading the head of a shared single copy whose tail is
        /// streamed (the put was refused): the send ends at the later of its FIN and the
        /// last fragment.
        head_pending: bool,
    },
    /// A shared single copy: the receiver reads the head in place while this side writes the
    /// tail. The send completes when both halves are done (`halves_left` reaches 0): until the
    /// receiver's FIN it may still be reading this buffer, which the caller is free to change
    /// once the send completes.
    Sharing { halves_left: u8 },
    /// Every fragment was handed to the wire, which still reads the last one from this buffer.
    Flushing,
}

#[derive(Debug)]
pub(super) struct SendOp {
    pub(super) buf: Ptr,
    pub(super) len: usize,
    pub(super) dst: usize,
    pub(super) tag: Tag,
    pub(super) ctx: u8,
    pub(super) seq: u32,
    pub(super) phase: SendPhase,
}

impl SendOp {
    /// What the send's request reports when it completes.
    pub(super) fn status(&self) -> Status {
        Status {
            source: self.dst,
            tag: self.tag,
            len: self.len,
        }
    }
}

#[derive(Debug)]
pub(super) enum RecvPhase {
    Posted,
    /// Matched an RTS; the protocol is chosen after the wire's poll returns.
    Matched {
        from: usize,
        tag: Tag,
        len: usize,
        sreq: u64,
        saddr: u64,
        single_ok: bool,
    },
    Receiving {
        from: usize,
        tag: Tag,
        len: usize,
        got: usize,
    },
}

#[derive(Debug)]
pub(super) struct RecvOp {
    pub(super) buf: Ptr,
    pub(super) cap: usize,
    pub(super) src: Option<usize>,
    pub(super) tag: Option<Tag>,
    pub(super) ctx: u8,
    pub(super) phase: RecvPhase,
}

#[derive(Debug)]
pub(super) enum Op {
    Free,
    Send(SendOp),
    Recv(RecvOp),
    Done(Status),
}

#[derive(Debug)]
pub(super) struct Slot {
    pub(super) gen: u32,
    pub(super) op: Op,
}

#[derive(Debug)]
pub(super) enum UnexpectedKind {
    Eager(Vec<u8>),
    Rts {
        len: usize,
        sreq: u64,
        saddr: u64,
        single_ok: bool,
    },
}

#[derive(Debug)]
pub(super) struct Unexpected {
    pub(super) src: usize,
    pub(super) tag: Tag,
    pub(super) ctx: u8,
    pub(super) kind: UnexpectedKind,
}

#[derive(Debug, Clone, Copy)]
pub(super) enum Ctrl {
    Cts {
        sreq: u64,
        rreq: u64,
        len: u64,
        raddr: u64,
    },
    Fin {
        sreq: u64,
    },
    /// Write the message's last `n` bytes at `dst` (the sender's share of a single copy).
    Put {
        sreq: u64,
        rreq: u64,
        dst: u64,
        n: u64,
    },
    PutFin {
        rreq: u64,
        n: u64,
    },
}

/// A PUT the sender has received and will carry out after the poll (the wire is busy then).
#[derive(Debug, Clone, Copy)]
pub(super) struct PutJob {
    pub(super) idx: u32,
    pub(super) rreq: u64,
    pub(super) dst: u64,
    pub(super) n: usize,
}
