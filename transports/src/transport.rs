//! The Transport: nonblocking tagged point-to-point messaging (rsmpi's requests, MPI's
//! semantics), implemented by the engine over a wire or directly by an MPI library.

use serde::{Deserialize, Serialize};

use crate::error::Result;

/// A message tag. User tags are non-negative.
pub type Tag = i32;

/// Separates traffic of different communicators, and collective traffic from user
/// point-to-point traffic within one, as an MPI context id does. A communicator has a pair:
/// `2k` for its point-to-point messages and `2k + 1` for its collectives; the world's is pair 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Context(pub u8);

impl Context {
    /// The world communicator's point-to-point traffic.
    pub const POINT_TO_POINT: Context = Context(0);
    /// The world communicator's collective traffic.
    pub const COLLECTIVE: Context = Context(1);
    /// The most communicators (context pairs) a rank can have had over one transport.
    pub const PAIRS: u16 = 128;

    /// Pair `k`'s point-to-point and collective contexts.
    pub fn pair(k: u8) -> (Context, Context) {
        (Context(2 * k), Context(2 * k + 1))
    }
}

/// What a completed receive got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Status {
    pub source: usize,
    pub tag: Tag,
    pub len: usize,
}

/// A handle on a pending operation. `ReqId::DONE` is an operation that completed at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ReqId(pub u64);

impl ReqId {
    pub const DONE: ReqId = ReqId(u64::MAX);
}

/// How often each protocol path ran: what the manifest records as "what was used".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Counters {
    pub eager_sends: u64,
    pub rendezvous_copy_sends: u64,
    pub rendezvous_single_copy_sends: u64,
    /// Single-copy sends whose tail the sender wrote itself (`single_copy_share`).
    pub shared_single_copy_sends: u64,
    pub single_copy_fallbacks: u64,
    pub unexpected_messages: u64,
    pub frames_sent: u64,
    pub frames_received: u64,
    pub bytes_sent: u64,
}

/// Reduction operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReduceOp {
    Sum,
    Max,
    Min,
    Prod,
}

/// The element types collectives carry and reduce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElemKind {
    U8,
    F64,
    F32,
    U64,
    I64,
    U32,
    I32,
    /// A pair of f64, real then imaginary (C's `double complex`).
    C64,
}

/// Collectives a transport implements itself (an MPI library's own). Buffers hold elements in
/// the host's representation. Counts and displacements of the data-moving collectives are in
/// bytes (per rank, in rank order); those of reductions in elements.
pub trait NativeCollectives: Sync {
    fn barrier(&self) -> Result<()>;
    fn bcast(&self, buf: &mut [u8], root: usize) -> Result<()>;
    fn reduce(
        &self,
        send: &[u8],
        recv: &mut [u8],
        kind: ElemKind,
        op: ReduceOp,
        root: usize,
    ) -> Result<()>;
    fn allreduce(&self, send: &[u8], recv: &mut [u8], kind: ElemKind, op: ReduceOp) -> Result<()>;
    /// Every rank's `send` (equal lengths) into the root's `recv`, in rank order.
    fn gather(&self, send: &[u8], recv: &mut [u8], root: usize) -> Result<()>;
    fn gatherv(
        &self,
        send: &[u8],
        recv: &mut [u8],
        counts: &[usize],
        displs: &[usize],
        root: usize,
    ) -> Result<()>;
    /// The root's `send` cut into equal blocks, block `r` to rank `r`.
    fn scatter(&self, send: &[u8], recv: &mut [u8], root: usize) -> Result<()>;
    fn scatterv(
        &self,
        send: &[u8],
        counts: &[usize],
        displs: &[usize],
        recv: &mut [u8],
        root: usize,
    ) -> Result<()>;
    fn allgather(&self, send: &[u8], recv: &mut [u8]) -> Result<()>;
    fn allgatherv(
        &self,
        send: &[u8],
        recv: &mut [u8],
        counts: &[usize],
        displs: &[usize],
    ) -> Result<()>;
    /// Block `r` of `send` to rank `r`; block `r` of `recv` from rank `r` (equal blocks).
    fn alltoall(&self, send: &[u8], recv: &mut [u8]) -> Result<()>;
    #[allow(clippy::too_many_arguments)]
    fn alltoallv(
        &self,
        send: &[u8],
        send_counts: &[usize],
        send_displs: &[usize],
        recv: &mut [u8],
        recv_counts: &[usize],
        recv_displs: &[usize],
    ) -> Result<()>;
    /// Reduces `send` element-wise; rank `r` gets `counts[r]` elements of the result.
    fn reduce_scatter(
        &self,
        send: &[u8],
        recv: &mut [u8],
        counts: &[usize],
        kind: ElemKind,
        op: ReduceOp,
    ) -> Result<()>;
    /// Inclusive prefix reduction: rank `r` gets the reduction over ranks `0..=r`.
    fn scan(&self, send: &[u8], recv: &mut [u8], kind: ElemKind, op: ReduceOp) -> Result<()>;
    /// A sub-communicator of the ranks with the same `color` (None: not a member), ordered by
    /// `key` then rank, as a transport of its own.
    fn split(&self, color: Option<u32>, key: i32) -> Result<Option<Box<dyn Transport>>>;
}

pub trait Transport: Send + Sync {
    fn rank(&self) -> usize;
    fn size(&self) -> usize;
    /// Nanoseconds on this rank's clock: the only clock suites read.
    fn now(&self) -> u64;
    fn virtual_time(&self) -> bool;
    /// The byte order this rank holds numbers in, which typed elements are converted from
    /// (`wire.byte_order`); an MPI library converts its own datatypes.
    fn host_order(&self) -> crate::order::HostOrder {
        crate::order::HostOrder::Native
    }
    /// Starts sending `len` bytes at `buf` to `dst`.
    ///
    /// # Safety
    /// `buf..buf+len` must stay valid and unchanged until the request completes.
    unsafe fn isend(
        &self,
        buf: *const u8,
        len: usize,
        dst: usize,
        tag: Tag,
        ctx: Context,
    ) -> Result<ReqId>;
    /// Starts receiving up to `cap` bytes into `buf` from `src` (any if `None`) with `tag`
    /// (any if `None`).
    ///
    /// # Safety
    /// `buf..buf+cap` must stay valid, and not be read or written by anyone else, until the
    /// request completes.
    unsafe fn irecv(
        &self,
        buf: *mut u8,
        cap: usize,
        src: Option<usize>,
        tag: Option<Tag>,
        ctx: Context,
    ) -> Result<ReqId>;
    /// `Some(status)` once `req` is complete (and then `req` is released).
    fn test(&self, req: ReqId) -> Result<Option<Status>>;
    /// Blocks until `req` completes, within the configured timeout.
    fn wait(&self, req: ReqId) -> Result<Status>;
    /// Blocks until every request completes; statuses in the same order when asked for (a
    /// transport may skip working them out otherwise). The ids may be overwritten.
    fn waitall(&self, reqs: &mut [ReqId], statuses: Option<&mut [Status]>) -> Result<()>;
    /// Posts `count` sends of one buffer, appending their ids to `out` (a bandwidth window).
    ///
    /// # Safety
    /// As for [`Transport::isend`], until every one completes.
    #[allow(clippy::too_many_arguments)]
    unsafe fn isend_many(
        &self,
        buf: *const u8,
        len: usize,
        count: usize,
        dst: usize,
        tag: Tag,
        ctx: Context,
        out: &mut Vec<ReqId>,
    ) -> Result<()> {
        for _ in 0..count {
            out.push(self.isend(buf, len, dst, tag, ctx)?);
        }
        Ok(())
    }
    /// Posts `count` receives into one buffer, appending their ids to `out`.
    ///
    /// # Safety
    /// As for [`Transport::irecv`], until every one completes.
    #[allow(clippy::too_many_arguments)]
    unsafe fn irecv_many(
        &self,
        buf: *mut u8,
        cap: usize,
        count: usize,
        src: usize,
        tag: Tag,
        ctx: Context,
        out: &mut Vec<ReqId>,
    ) -> Result<()> {
        for _ in 0..count {
            out.push(self.irecv(buf, cap, Some(src), Some(tag), ctx)?);
        }
        Ok(())
    }
    /// A blocking send; transports may take a faster path than isend + wait.
    ///
    /// # Safety
    /// As for [`Transport::isend`], for the duration of the call.
    unsafe fn send(
        &self,
        buf: *const u8,
        len: usize,
        dst: usize,
        tag: Tag,
        ctx: Context,
    ) -> Result<()> {
        let r = self.isend(buf, len, dst, tag, ctx)?;
        self.wait(r).map(|_| ())
    }
    /// A blocking receive; transports may take a faster path than irecv + wait.
    ///
    /// # Safety
    /// As for [`Transport::irecv`], for the duration of the call.
    unsafe fn recv(
        &self,
        buf: *mut u8,
        cap: usize,
        src: Option<usize>,
        tag: Option<Tag>,
        ctx: Context,
    ) -> Result<Status> {
        let r = self.irecv(buf, cap, src, tag, ctx)?;
        self.wait(r)
    }
    /// Moves pending operations forward without blocking.
    fn progress(&self) -> Result<()>;
    /// Names what this rank is doing, for error messages and the launcher's failure report.
    fn set_stage(&self, stage: &str);
    fn stage(&self) -> String;
    fn counters(&self) -> Counters;
    /// Facts about the fabric for the manifest ("single_copy_mechanism" = "cma", ...).
    fn describe(&self) -> Vec<(String, String)>;
    /// Releases the fabric's resources; further operations fail.
    fn shutdown(&self) -> Result<()> {
        Ok(())
    }
    /// Collectives this transport does itself; `Comm` builds its own over point-to-point
    /// otherwise.
    fn native_collectives(&self) -> Option<&dyn NativeCollectives> {
        None
    }
    /// `host_ns` of computing just happened on this rank, measured on the host's clock. A
    /// transport in virtual time moves its clock on by what that computing costs the emulated
    /// node; on a real clock the time has already passed, so there is nothing to do.
    fn charge_compute(&self, _host_ns: u64) -> Result<()> {
        Ok(())
    }
    /// How host compute time becomes this fabric's time, for the output ("host x 4.0
    /// (rapidio.compute_scale)"); None where compute runs at the host's own speed.
    fn compute_scale(&self) -> Option<(f64, String)> {
        None
    }
    /// Lets `ns` of this rank's time pass without a communication call (the delay Netgauge
    /// puts between a send and its wait to tell overhead from latency). A real clock is spun
    /// on, so nothing progresses meanwhile, as in an application computing; a virtual clock
    /// moves on by exactly `ns`.
    fn delay(&self, ns: u64) -> Result<()> {
        let end = self.now().saturating_add(ns);
        while self.now() < end {
            std::hint::spin_loop();
        }
        Ok(())
    }
}
