//! The one struct every job's module works on. It is a module of its own rather than part of
//! the operation table because it is the hub they share: besides the table it holds matching's
//! queues and the protocol's, and each job's module adds its own methods to it.

use std::collections::{BTreeMap, VecDeque};

use crate::error::TransportError;
use crate::transport::Counters;
use crate::wire::Wire;

use super::config::EngineConfig;
use super::matching::Unexpected;
use super::ops::Slot;
use super::protocol::{Ctrl, PutJob};

/// Everything the engine knows, apart from the wire (split so the wire can be polled while the
/// state is updated from inside the poll callback).
pub(super) struct State {
    pub(super) rank: usize,
    pub(super) size: usize,
    pub(super) cfg: EngineConfig,
    pub(super) max_frame: usize,
    pub(super) wire_single_copy: bool,
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
