//! Comm: what a suite talks to (rsmpi's communicator).
//!
//! It wraps a [`Transport`] with safe blocking and nonblocking point-to-point calls whose
//! [`Request`]s borrow their buffers until completion, the collectives of [`collectives`]
//! (built on point-to-point in their own context, or the transport's own where it has them, as
//! MPI does), sub-communicators from [`Comm::split`], and `now()`, the only clock a suite may
//! read.
//!
//! A communicator made by `split` over a transport without communicators of its own shares the
//! transport: it numbers its members 0..n, translates to the transport's ranks on every call,
//! and keeps its traffic apart with a context pair of its own.

mod collectives;
mod compute;
mod element;
mod split;
mod typed;

use std::cell::RefCell;
use std::marker::PhantomData;
use std::sync::atomic::AtomicU8;
use std::sync::{Arc, Mutex};

pub use compute::Replay;
pub use element::{decode_into, encode, Complex64, Element};
pub use split::MAX_SUBCOMMS;
pub use typed::Exchange;

use crate::error::{Result, TransportError};
use crate::order::HostOrder;
pub use crate::transport::ReduceOp;
use crate::transport::{Context, Counters, NativeCollectives, ReqId, Status, Tag, Transport};

/// A pending operation. Its buffer stays borrowed until it completes; dropping an incomplete
/// request waits for it (bounded by the transport's timeout) so the buffer is never freed
/// while the transport may still touch it.
#[must_use = "a request must be waited on"]
pub struct Request<'a> {
    comm: &'a Comm,
    id: ReqId,
    done: bool,
    /// What a `test` that found it complete returned, for a `wait` after it.
    finished: Option<Status>,
    _buf: PhantomData<&'a mut [u8]>,
}

impl Request<'_> {
    pub fn wait(mut self) -> Result<Status> {
        if let Some(st) = self.finished {
            return Ok(st);
        }
        self.done = true;
        self.comm.received(self.comm.t.wait(self.id))
    }

    pub fn test(&mut self) -> Result<Option<Status>> {
        if let Some(st) = self.finished {
            return Ok(Some(st));
        }
        if self.done {
            return Ok(Some(Status::default()));
        }
        let r = self.comm.t.test(self.id)?;
        self.done = r.is_some();
        self.finished = r.map(|st| self.comm.status_in(st));
        Ok(self.finished)
    }
}

impl Drop for Request<'_> {
    fn drop(&mut self) {
        if !self.done {
            if let Err(e) = self.comm.t.wait(self.id) {
                tracing::error!("a dropped request failed: {e}");
            }
        }
    }
}

/// A window of operations on one buffer, completed together: the ids sit in one array, with
/// no per-message handle, so a window costs its transport calls and nothing more. Dropping an
/// incomplete window waits for it.
#[must_use = "a window must be waited on"]
pub struct Window<'a> {
    comm: &'a Comm,
    ids: Vec<ReqId>,
    done: bool,
    _buf: PhantomData<&'a mut [u8]>,
}

impl<'a> Window<'a> {
    fn new(comm: &'a Comm, count: usize) -> Window<'a> {
        Window {
            comm,
            ids: Vec::with_capacity(count),
            done: false,
            _buf: PhantomData,
        }
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Waits for every operation of the window.
    pub fn wait(mut self) -> Result<()> {
        self.done = true;
        self.comm.t.waitall(&mut self.ids, None)
    }

    /// Waits for every operation; their statuses in order.
    pub fn wait_statuses(mut self) -> Result<Vec<Status>> {
        self.done = true;
        let mut st = vec![Status::default(); self.ids.len()];
        self.comm.t.waitall(&mut self.ids, Some(&mut st))?;
        self.comm.statuses_in(&mut st);
        Ok(st)
    }
}

impl Drop for Window<'_> {
    fn drop(&mut self) {
        if !self.done {
            if let Err(e) = self.comm.t.waitall(&mut self.ids, None) {
                tracing::error!("a dropped window failed: {e}");
            }
        }
    }
}

/// The members of a communicator built over a transport of more ranks.
struct Group {
    /// The transport's rank of each member, in the communicator's rank order.
    members: Vec<usize>,
    /// The member number of each transport rank, where it is a member.
    index: Vec<Option<usize>>,
}

/// A communicator: the job's ranks (the world), or a subset from [`Comm::split`]. It belongs
/// to one thread.
pub struct Comm {
    t: Arc<dyn Transport>,
    /// None: the transport's own ranks, numbered as it numbers them.
    group: Option<Arc<Group>>,
    rank: usize,
    size: usize,
    p2p: Context,
    coll: Context,
    /// The next context pair a split may take, shared by every communicator over this
    /// transport on this rank.
    next_pair: Arc<AtomicU8>,
    /// The byte order this rank holds typed elements in (`wire.byte_order`, through the
    /// transport): what converting them to and from their little-endian wire form starts from.
    order: HostOrder,
    /// Whether finishing this communicator ends the transport (the world, or a sub-communicator
    /// the transport made itself).
    owns_transport: bool,
    ids: RefCell<Vec<ReqId>>,
    /// The compute stretches this rank charged (and replays), shared by its communicators.
    compute: Arc<Mutex<compute::ComputeLog>>,
}

impl Comm {
    /// The world communicator over `t`.
    pub fn new(t: Box<dyn Transport>) -> Comm {
        let t: Arc<dyn Transport> = Arc::from(t);
        Comm {
            rank: t.rank(),
            size: t.size(),
            order: t.host_order(),
            t,
            group: None,
            p2p: Context::POINT_TO_POINT,
            coll: Context::COLLECTIVE,
            next_pair: Arc::new(AtomicU8::new(1)),
            owns_transport: true,
            ids: RefCell::new(Vec::new()),
            compute: Default::default(),
        }
    }

    pub fn rank(&self) -> usize {
        self.rank
    }

    pub fn size(&self) -> usize {
        self.size
    }

    /// Nanoseconds on this rank's clock (virtual on emulated fabrics): the only clock a suite
    /// may read.
    #[inline]
    pub fn now(&self) -> u64 {
        self.t.now()
    }

    pub fn virtual_time(&self) -> bool {
        self.t.virtual_time()
    }

    /// Runs `f`, a stretch of computing between communication calls. On a real clock this is
    /// just `f()`. In virtual time computing would otherwise cost nothing, so the stretch is
    /// timed and the fabric's clock moved on by what the emulated node would take (the host's
    /// time times the fabric's `compute_scale`): an application kernel on an emulated fabric
    /// then sees a slow SoC's compute beside the fabric's communication.
    ///
    /// The stretch is timed on the thread's CPU clock while no other rank runs (an emulated
    /// job's ranks are tasks of one thread, one at a time): other ranks and other programs
    /// on the host take cores, not this rank's time, so the charge is the node's own.
    #[inline]
    pub fn compute<R>(&self, f: impl FnOnce() -> R) -> Result<R> {
        if !self.t.virtual_time() {
            return Ok(f());
        }
        let start = bench_core::clock::thread_cpu_ns();
        let r = f();
        let timed = bench_core::clock::thread_cpu_ns().saturating_sub(start);
        let charged = self.compute_log().next(timed)?;
        self.t.charge_compute(charged)?;
        Ok(r)
    }

    fn compute_log(&self) -> std::sync::MutexGuard<'_, compute::ComputeLog> {
        // A rank's log is only touched by the rank itself; a panic mid-charge leaves a
        // complete vector behind, so a poisoned lock's contents are still good.
        self.compute.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// From now on [`Comm::compute`] charges `replay`'s host times, in order, instead of
    /// timing each stretch (the work still runs): an earlier run's compute, so two runs of one
    /// command see the same compute whatever else the host did meanwhile.
    pub fn replay_compute(&self, replay: Replay) {
        self.compute_log().set_replay(replay);
    }

    /// The host nanoseconds of every compute stretch this rank charged so far, in order (none
    /// off virtual time, where nothing is charged).
    pub fn compute_charged(&self) -> Vec<u64> {
        self.compute_log().charged().to_vec()
    }

    /// Whether a replay was used up exactly: the error says how many stretches this rank
    /// computed and how many the recording held.
    pub fn check_compute_replay(&self) -> Result<()> {
        self.compute_log().check_used_up()
    }

    /// Lets `ns` pass on this rank's clock without a communication call: spun on a real
    /// clock, exact in virtual time (unlike [`Comm::compute`], which charges measured host
    /// time). Patterns that separate overhead from latency put it between a call and its wait.
    pub fn delay(&self, ns: u64) -> Result<()> {
        self.t.delay(ns)
    }

    /// How this fabric scales host compute time (factor, and the parameter that sets it);
    /// None where computing runs at the host's speed.
    pub fn compute_scale(&self) -> Option<(f64, String)> {
        self.t.compute_scale()
    }

    /// Names what the rank is doing; it appears in every error and in the launcher's report.
    pub fn set_stage(&self, stage: &str) {
        self.t.set_stage(stage)
    }

    pub fn counters(&self) -> Counters {
        self.t.counters()
    }

    pub fn describe(&self) -> Vec<(String, String)> {
        self.t.describe()
    }

    pub fn transport(&self) -> &dyn Transport {
        self.t.as_ref()
    }

    /// The transport's own collectives, when this communicator is the transport's.
    fn native(&self) -> Option<&dyn NativeCollectives> {
        match self.group {
            None => self.t.native_collectives(),
            Some(_) => None,
        }
    }

    /// The transport's rank of member `r`. The world's ranks are the transport's: that case
    /// stays inline on the message path, the lookup does not.
    #[inline(always)]
    fn peer(&self, r: usize) -> Result<usize> {
        match &self.group {
            None => Ok(r),
            Some(g) => self.member(g, r),
        }
    }

    #[inline(never)]
    fn member(&self, g: &Group, r: usize) -> Result<usize> {
        g.members.get(r).copied().ok_or_else(|| {
            TransportError::Usage(format!(
                "rank {r} is not in this communicator of {} ranks (0..{})",
                self.size,
                self.size.saturating_sub(1)
            ))
        })
    }

    /// A status as this communicator numbers ranks.
    #[inline(always)]
    fn status_in(&self, mut st: Status) -> Status {
        if let Some(g) = &self.group {
            st.source = g
                .index
                .get(st.source)
                .copied()
                .flatten()
                .unwrap_or(st.source);
        }
        st
    }

    /// Statuses as this communicator numbers ranks, in place (nothing to do on the world).
    fn statuses_in(&self, st: &mut [Status]) {
        if self.group.is_some() {
            for s in st {
                *s = self.status_in(*s);
            }
        }
    }

    /// A receive's outcome as this communicator numbers ranks. The world's goes back as the
    /// transport returned it: rewriting the status would copy the whole result through
    /// memory on every message (about 10 ns of store-forwarding stalls per receive here).
    #[inline(always)]
    fn received(&self, r: Result<Status>) -> Result<Status> {
        match self.group {
            None => r,
            Some(_) => r.map(|st| self.status_in(st)),
        }
    }

    pub fn send(&self, buf: &[u8], dst: usize, tag: Tag) -> Result<()> {
        let dst = self.peer(dst)?;
        // SAFETY: `buf` is borrowed for the whole (blocking) call.
        unsafe { self.t.send(buf.as_ptr(), buf.len(), dst, tag, self.p2p) }
    }

    pub fn recv(&self, buf: &mut [u8], src: usize, tag: Tag) -> Result<Status> {
        let src = self.peer(src)?;
        // SAFETY: `buf` is exclusively borrowed for the whole (blocking) call.
        self.received(unsafe {
            self.t
                .recv(buf.as_mut_ptr(), buf.len(), Some(src), Some(tag), self.p2p)
        })
    }

    /// A receive from any source and/or with any tag (`None` = any).
    pub fn recv_any(&self, buf: &mut [u8], src: Option<usize>, tag: Option<Tag>) -> Result<Status> {
        let src = src.map(|s| self.peer(s)).transpose()?;
        // SAFETY: `buf` is exclusively borrowed for the whole (blocking) call.
        self.received(unsafe { self.t.recv(buf.as_mut_ptr(), buf.len(), src, tag, self.p2p) })
    }

    pub fn isend<'a>(&'a self, buf: &'a [u8], dst: usize, tag: Tag) -> Result<Request<'a>> {
        self.isend_ctx(buf, dst, tag, self.p2p)
    }

    pub fn irecv<'a>(&'a self, buf: &'a mut [u8], src: usize, tag: Tag) -> Result<Request<'a>> {
        self.irecv_ctx(buf, src, tag, self.p2p)
    }

    /// Sends `send` to `dst` and receives into `recv` from `src` at once, so a ring of ranks
    /// that all do it cannot deadlock.
    pub fn sendrecv(
        &self,
        send: &[u8],
        dst: usize,
        send_tag: Tag,
        recv: &mut [u8],
        src: usize,
        recv_tag: Tag,
    ) -> Result<Status> {
        let r = self.irecv(recv, src, recv_tag)?;
        let s = self.isend(send, dst, send_tag)?;
        let st = r.wait()?;
        s.wait()?;
        Ok(st)
    }

    /// Posts `count` receives that all land in `buf`, as OSU's bandwidth tests do (every
    /// message of a window carries the same bytes, so what `buf` holds afterwards is defined).
    /// The transport serialises the writes, so they never overlap in time.
    pub fn irecv_window<'a>(
        &'a self,
        buf: &'a mut [u8],
        count: usize,
        src: usize,
        tag: Tag,
    ) -> Result<Window<'a>> {
        let src = self.peer(src)?;
        let mut w = Window::new(self, count);
        // SAFETY: `buf` stays exclusively borrowed by the window until it completes.
        unsafe {
            self.t.irecv_many(
                buf.as_mut_ptr(),
                buf.len(),
                count,
                src,
                tag,
                self.p2p,
                &mut w.ids,
            )?
        };
        Ok(w)
    }

    /// Posts `count` sends of `buf` (a window, as OSU's bandwidth tests send).
    pub fn isend_window<'a>(
        &'a self,
        buf: &'a [u8],
        count: usize,
        dst: usize,
        tag: Tag,
    ) -> Result<Window<'a>> {
        let dst = self.peer(dst)?;
        let mut w = Window::new(self, count);
        // SAFETY: `buf` stays borrowed by the window until it completes.
        unsafe {
            self.t.isend_many(
                buf.as_ptr(),
                buf.len(),
                count,
                dst,
                tag,
                self.p2p,
                &mut w.ids,
            )?
        };
        Ok(w)
    }

    fn request(&self, id: ReqId) -> Request<'_> {
        Request {
            comm: self,
            id,
            done: id == ReqId::DONE,
            finished: None,
            _buf: PhantomData,
        }
    }

    fn isend_ctx<'a>(
        &'a self,
        buf: &'a [u8],
        dst: usize,
        tag: Tag,
        ctx: Context,
    ) -> Result<Request<'a>> {
        let dst = self.peer(dst)?;
        // SAFETY: `buf` is borrowed by the returned request until it completes.
        let id = unsafe { self.t.isend(buf.as_ptr(), buf.len(), dst, tag, ctx)? };
        Ok(self.request(id))
    }

    fn irecv_ctx<'a>(
        &'a self,
        buf: &'a mut [u8],
        src: usize,
        tag: Tag,
        ctx: Context,
    ) -> Result<Request<'a>> {
        let src = self.peer(src)?;
        // SAFETY: `buf` is exclusively borrowed by the returned request until it completes.
        let id = unsafe {
            self.t
                .irecv(buf.as_mut_ptr(), buf.len(), Some(src), Some(tag), ctx)?
        };
        Ok(self.request(id))
    }

    /// Waits for every request.
    pub fn waitall(&self, reqs: &mut Vec<Request<'_>>) -> Result<()> {
        self.waitall_inner(reqs, None)
    }

    /// Waits for every request; their statuses in order.
    pub fn waitall_statuses(&self, reqs: &mut Vec<Request<'_>>) -> Result<Vec<Status>> {
        let mut st = vec![Status::default(); reqs.len()];
        self.waitall_inner(reqs, Some(&mut st))?;
        self.statuses_in(&mut st);
        Ok(st)
    }

    fn waitall_inner(&self, reqs: &mut Vec<Request<'_>>, st: Option<&mut [Status]>) -> Result<()> {
        // A window's ids go through a buffer kept for the purpose: no allocation per window.
        let mut ids = self.ids.borrow_mut();
        ids.clear();
        ids.extend(reqs.iter().map(|r| r.id));
        // Mark them done first: on error the transport is failed anyway, and dropping them must
        // not wait a second time.
        reqs.iter_mut().for_each(|r| r.done = true);
        reqs.clear();
        self.t.waitall(&mut ids, st)
    }

    /// Ends this communicator: a barrier (no peer still reads this rank's memory), then, for
    /// the world (or a sub-communicator the transport made itself), the transport's shutdown.
    pub fn finish(self) -> Result<()> {
        self.barrier()?;
        if self.owns_transport {
            self.t.shutdown()?;
        }
        Ok(())
    }
}
