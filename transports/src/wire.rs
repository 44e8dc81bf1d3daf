//! The Wire: what moves fragments between ranks (Open MPI's BTL).
//!
//! A wire knows nothing of tags, matching or protocols; it carries frames (an engine header
//! followed by payload) to a peer in order, polls for incoming ones, and, when it can, reads a
//! peer's memory in place (single copy). It tells the engine what it can do ([`WireCaps`]) and
//! which protocol it prefers for a peer and size. Emulated wires also receive a [`FragKind`] with
//! every frame, so their model can price each mechanism without decoding engine headers.

use crate::error::Result;

/// What a wire can do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WireCaps {
    /// Largest frame (header and payload) one `try_send` accepts.
    pub max_frame: usize,
    /// The wire implements [`Wire::get`] (e.g. CMA `process_vm_readv`).
    pub single_copy: bool,
    /// Time is virtual: `now()` is the rank's modelled clock.
    pub virtual_time: bool,
    /// The wire's model executes the receive-thread mechanics itself; the engine must not
    /// start a real progress thread (it would break virtual-time determinism).
    pub models_rx_thread: bool,
    /// The ranks share one address space (an emulated fabric's thread-ranks), so the wire can
    /// place a DATA frame: write its payload straight into the receive buffer at the frame's
    /// `recv_addr` when it accepts the frame, and carry the header alone. No copy of the data
    /// is held while the frame is in flight.
    pub places_data: bool,
}

/// The protocol a wire prefers for one rendezvous transfer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// Pipelined fragments copied through the wire's buffers.
    Copy,
    /// The receiver reads the sender's buffer in place.
    SingleCopy,
}

/// Which engine frame a `try_send` carries, with what an emulated wire needs to model it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FragKind {
    /// A whole small message, header and payload.
    Eager { len: u64 },
    /// Request to send a large message (control).
    Rts { len: u64 },
    /// Clear to send: the receiver is ready for `len` bytes at `recv_addr`.
    Cts { rndv: u64, len: u64, recv_addr: u64 },
    /// One fragment of a large message.
    Data {
        rndv: u64,
        offset: u64,
        len: u64,
        last: bool,
        send_addr: u64,
        recv_addr: u64,
        /// The wire is to place the payload (see [`WireCaps::places_data`]).
        placed: bool,
    },
    /// The receiver finished reading the sender's buffer in place.
    Fin,
    /// The receiver asks the sender to write the message's last `len` bytes in place.
    Put { len: u64 },
    /// The sender wrote what a `Put` asked for.
    PutFin,
}

/// The outcome of a single-copy read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GetOutcome {
    Done,
    /// The kernel refused (no ptrace permission, no CMA): fall back to copying.
    Refused,
}

/// Where the payload of one incoming frame goes, when the engine has a place for it: a wire
/// that reads a stream (tcp) can then read those bytes from the kernel straight into the
/// receive buffer instead of through its own buffer and a second copy, as Open MPI's tcp BTL
/// receives a fragment into the user's buffer.
#[derive(Debug, Clone, Copy)]
pub struct Placement {
    /// Bytes of the frame before its payload (the engine header).
    pub header_len: usize,
    /// Where the payload's first byte goes; `len` bytes there are the wire's to write until it
    /// reports them with [`FrameSink::placed`].
    pub dst: *mut u8,
    pub len: usize,
    /// The engine's name for the transfer, handed back with `placed`.
    pub token: usize,
}

// SAFETY: `dst` points into a receive buffer that the engine keeps valid until the receive
// completes, which cannot happen before the wire reports the placement done; the engine lock
// serialises every use.
unsafe impl Send for Placement {}

/// What a wire hands incoming frames to (the engine).
pub trait FrameSink {
    /// A whole frame, valid only during the call.
    fn frame(&mut self, peer: usize, frame: &[u8]) -> Result<()>;
    /// Asks where the payload of a `frame_len`-byte frame from `peer` goes, given its first
    /// bytes `head` (at least its header). `None`: hand the whole frame to `frame` instead.
    fn place(&mut self, peer: usize, head: &[u8], frame_len: usize) -> Result<Option<Placement>>;
    /// The wire wrote every payload byte of `placement` into place.
    fn placed(&mut self, peer: usize, placement: &Placement) -> Result<()>;
}

pub trait Wire: Send {
    /// The fabric name, e.g. "shm".
    fn name(&self) -> &str;
    fn caps(&self) -> WireCaps;
    fn rank(&self) -> usize;
    fn size(&self) -> usize;
    /// The rank's clock (real or virtual); the engine reads it without taking its lock.
    fn clock(&self) -> bench_core::clock::Clock;
    /// How to name a peer in errors: "rank 1 (pid 4242)".
    fn peer_name(&self, peer: usize) -> String;
    /// Queues one frame (`header` then `payload`) to `peer`. `Ok(false)` means no room now:
    /// the engine keeps the frame and retries after polling.
    fn try_send(
        &mut self,
        peer: usize,
        kind: FragKind,
        header: &[u8],
        payload: &[u8],
    ) -> Result<bool>;
    /// Hands every frame that has arrived to `sink(peer, frame)`, in per-peer order, and returns
    /// how many. A frame's bytes are only valid during the call.
    fn poll(&mut self, sink: &mut dyn FnMut(usize, &[u8]) -> Result<()>) -> Result<usize>;
    /// The wire reads payloads into place (`poll_placing`); the engine then polls it that way.
    /// Wires whose frames are already in memory (shared memory, emulated) have nothing to gain
    /// and keep `poll`, whose one closure call a frame is all a small message can afford.
    fn reads_into_place(&self) -> bool {
        false
    }
    /// As `poll`, but the wire may ask `sink` where a large frame's payload goes and read it
    /// there itself. Called only on a wire that `reads_into_place`.
    fn poll_placing(&mut self, sink: &mut dyn FrameSink) -> Result<usize> {
        self.poll(&mut |peer, frame| sink.frame(peer, frame))
    }
    /// The wire still reads payload bytes that a `try_send` of DATA gave it for `peer` (it took
    /// a frame the kernel had no room for without copying it). The engine completes a send
    /// whose last fragment is still held only once this is false, since the caller may change
    /// the buffer from then on. Such a wire has no single copy.
    fn holds(&self, _peer: usize) -> bool {
        false
    }
    /// Reads `local.len()` bytes of `peer`'s memory at `remote_addr` (single copy).
    fn get(&mut self, peer: usize, remote_addr: u64, local: &mut [u8]) -> Result<GetOutcome>;
    /// Writes `local` into `peer`'s memory at `remote_addr` (the sender's share of a shared
    /// single copy). Wires without it refuse, and the engine streams that share instead.
    fn put(&mut self, _peer: usize, _remote_addr: u64, _local: &[u8]) -> Result<GetOutcome> {
        Ok(GetOutcome::Refused)
    }
    /// The protocol this wire advises for a rendezvous transfer of `len` bytes from `peer`
    /// when the user left `single_copy` on auto.
    fn preferred_protocol(&self, peer: usize, len: u64) -> Protocol;
    /// Called when a progress pass found nothing to do, `idle_rounds` times in a row. Real wires
    /// spin, then yield; emulated wires let virtual time move to the next arrival.
    fn idle(&mut self, idle_rounds: u64) -> Result<()>;
    /// Fails if a peer a wait depends on is known to be gone: `awaited` is that peer, or None
    /// when the wait could be satisfied by any peer.
    fn check_peers(&mut self, awaited: Option<usize>) -> Result<()>;
    /// The wire's own facts for the manifest (e.g. which single-copy mechanism worked).
    /// `host_ns` of computing just happened on this rank (see
    /// [`Transport::charge_compute`](crate::transport::Transport::charge_compute)).
    fn charge_compute(&mut self, _host_ns: u64) -> Result<()> {
        Ok(())
    }
    /// The factor host compute time is multiplied by, and the parameter that sets it.
    fn compute_scale(&self) -> Option<(f64, String)> {
        None
    }
    /// A wire in virtual time moves its clock on by exactly `ns` (see
    /// [`Transport::delay`](crate::transport::Transport::delay)); real-time wires are never
    /// asked, since the engine spins on the real clock itself.
    fn delay(&mut self, _ns: u64) -> Result<()> {
        Ok(())
    }
    fn describe(&self) -> Vec<(String, String)> {
        Vec::new()
    }
}
