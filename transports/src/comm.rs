//! Comm: what a suite talks to (rsmpi's communicator).
//!
//! It wraps a [`Transport`] with safe blocking and nonblocking point-to-point calls whose
//! [`Request`]s borrow their buffers until completion, collectives built on point-to-point in
//! their own context (barrier by dissemination, binomial-tree broadcast and reduce, allreduce),
//! and `now()`, the only clock a suite may read. Reduction values travel little-endian,
//! encoded explicitly, so ranks of different byte order agree.

use std::marker::PhantomData;

use crate::error::Result;
pub use crate::transport::ReduceOp;
use crate::transport::{Context, Counters, ElemKind, ReqId, Status, Tag, Transport};

/// A pending operation. Its buffer stays borrowed until it completes; dropping an incomplete
/// request waits for it (bounded by the transport's timeout) so the buffer is never freed
/// while the transport may still touch it.
#[must_use = "a request must be waited on"]
pub struct Request<'a> {
    comm: &'a Comm,
    id: ReqId,
    done: bool,
    _buf: PhantomData<&'a mut [u8]>,
}

impl Request<'_> {
    pub fn wait(mut self) -> Result<Status> {
        self.done = true;
        self.comm.t.wait(self.id)
    }

    pub fn test(&mut self) -> Result<Option<Status>> {
        if self.done {
            return Ok(Some(Status::default()));
        }
        let r = self.comm.t.test(self.id)?;
        self.done = r.is_some();
        Ok(r)
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

/// A value collectives can reduce: fixed size, explicit little-endian encoding.
pub trait Element: Copy + Default {
    const SIZE: usize;
    const KIND: ElemKind;
    fn put(self, out: &mut [u8]);
    fn take(bytes: &[u8]) -> Self;
    fn combine(a: Self, b: Self, op: ReduceOp) -> Self;
}

macro_rules! element {
    ($t:ty, $k:ident) => {
        impl Element for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            const KIND: ElemKind = ElemKind::$k;
            fn put(self, out: &mut [u8]) {
                out.copy_from_slice(&self.to_le_bytes());
            }
            fn take(bytes: &[u8]) -> Self {
                <$t>::from_le_bytes(bytes.try_into().expect("element size"))
            }
            fn combine(a: Self, b: Self, op: ReduceOp) -> Self {
                match op {
                    ReduceOp::Sum => a + b,
                    ReduceOp::Max => {
                        if b > a {
                            b
                        } else {
                            a
                        }
                    }
                    ReduceOp::Min => {
                        if b < a {
                            b
                        } else {
                            a
                        }
                    }
                }
            }
        }
    };
}
element!(f64, F64);
element!(f32, F32);
element!(u64, U64);
element!(i64, I64);
element!(u32, U32);
element!(i32, I32);

/// The host representation of a slice of elements, for native collectives.
fn host_bytes<T: Element>(v: &[T]) -> &[u8] {
    // SAFETY: Element types are plain numbers with no padding.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
}

fn host_bytes_mut<T: Element>(v: &mut [T]) -> &mut [u8] {
    // SAFETY: as above; every byte pattern is a valid number.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut u8, std::mem::size_of_val(v)) }
}

const TAG_BARRIER: Tag = 1 << 20;
const TAG_BCAST: Tag = 2 << 20;
const TAG_REDUCE: Tag = 3 << 20;

fn encode<T: Element>(values: &[T]) -> Vec<u8> {
    let mut out = vec![0u8; values.len() * T::SIZE];
    for (v, chunk) in values.iter().zip(out.chunks_exact_mut(T::SIZE)) {
        v.put(chunk);
    }
    out
}

fn decode_into<T: Element>(bytes: &[u8], out: &mut [T]) {
    for (o, chunk) in out.iter_mut().zip(bytes.chunks_exact(T::SIZE)) {
        *o = T::take(chunk);
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

/// A communicator over all ranks of a job. It belongs to one thread.
pub struct Comm {
    t: Box<dyn Transport>,
    ids: std::cell::RefCell<Vec<ReqId>>,
}

impl Comm {
    pub fn new(t: Box<dyn Transport>) -> Comm {
        Comm {
            t,
            ids: std::cell::RefCell::new(Vec::new()),
        }
    }

    pub fn rank(&self) -> usize {
        self.t.rank()
    }

    pub fn size(&self) -> usize {
        self.t.size()
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

    pub fn send(&self, buf: &[u8], dst: usize, tag: Tag) -> Result<()> {
        // SAFETY: `buf` is borrowed for the whole (blocking) call.
        unsafe {
            self.t
                .send(buf.as_ptr(), buf.len(), dst, tag, Context::PointToPoint)
        }
    }

    pub fn recv(&self, buf: &mut [u8], src: usize, tag: Tag) -> Result<Status> {
        // SAFETY: `buf` is exclusively borrowed for the whole (blocking) call.
        unsafe {
            self.t.recv(
                buf.as_mut_ptr(),
                buf.len(),
                Some(src),
                Some(tag),
                Context::PointToPoint,
            )
        }
    }

    /// A receive from any source and/or with any tag (`None` = any).
    pub fn recv_any(&self, buf: &mut [u8], src: Option<usize>, tag: Option<Tag>) -> Result<Status> {
        // SAFETY: `buf` is exclusively borrowed for the whole (blocking) call.
        unsafe {
            self.t
                .recv(buf.as_mut_ptr(), buf.len(), src, tag, Context::PointToPoint)
        }
    }

    pub fn isend<'a>(&'a self, buf: &'a [u8], dst: usize, tag: Tag) -> Result<Request<'a>> {
        self.isend_ctx(buf, dst, tag, Context::PointToPoint)
    }

    pub fn irecv<'a>(&'a self, buf: &'a mut [u8], src: usize, tag: Tag) -> Result<Request<'a>> {
        self.irecv_ctx(buf, src, tag, Context::PointToPoint)
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
        let mut w = Window::new(self, count);
        // SAFETY: `buf` stays exclusively borrowed by the window until it completes.
        unsafe {
            self.t
                .irecv_many(buf.as_mut_ptr(), buf.len(), count, src, tag, &mut w.ids)?
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
        let mut w = Window::new(self, count);
        // SAFETY: `buf` stays borrowed by the window until it completes.
        unsafe {
            self.t
                .isend_many(buf.as_ptr(), buf.len(), count, dst, tag, &mut w.ids)?
        };
        Ok(w)
    }

    fn request(&self, id: ReqId) -> Request<'_> {
        Request {
            comm: self,
            id,
            done: id == ReqId::DONE,
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

    /// Returns once every rank has entered the barrier (dissemination algorithm).
    pub fn barrier(&self) -> Result<()> {
        if let Some(n) = self.t.native_collectives() {
            return n.barrier();
        }
        let n = self.size();
        let r = self.rank();
        let mut dist = 1;
        let mut round = 0;
        while dist < n {
            let to = (r + dist) % n;
            let from = (r + n - dist) % n;
            let s = self.isend_ctx(&[], to, TAG_BARRIER + round, Context::Collective)?;
            self.irecv_ctx(&mut [], from, TAG_BARRIER + round, Context::Collective)?
                .wait()?;
            s.wait()?;
            dist *= 2;
            round += 1;
        }
        Ok(())
    }

    /// Broadcasts `buf` from `root` to every rank (binomial tree).
    pub fn bcast(&self, buf: &mut [u8], root: usize) -> Result<()> {
        if let Some(n) = self.t.native_collectives() {
            return n.bcast(buf, root);
        }
        let n = self.size();
        let vr = (self.rank() + n - root) % n;
        let mut mask = 1;
        while mask < n {
            if vr & mask != 0 {
                let from = (vr - mask + root) % n;
                self.irecv_ctx(buf, from, TAG_BCAST, Context::Collective)?
                    .wait()?;
                break;
            }
            mask <<= 1;
        }
        mask >>= 1;
        while mask > 0 {
            if vr + mask < n {
                let to = (vr + mask + root) % n;
                self.isend_ctx(buf, to, TAG_BCAST, Context::Collective)?
                    .wait()?;
            }
            mask >>= 1;
        }
        Ok(())
    }

    /// Reduces `send` element-wise into `recv` on `root` (binomial tree). `recv` is only
    /// written on the root.
    pub fn reduce<T: Element>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: ReduceOp,
        root: usize,
    ) -> Result<()> {
        if let Some(n) = self.t.native_collectives() {
            return n.reduce(host_bytes(send), host_bytes_mut(recv), T::KIND, op, root);
        }
        let n = self.size();
        let vr = (self.rank() + n - root) % n;
        let mut acc: Vec<T> = send.to_vec();
        let mut incoming = vec![0u8; send.len() * T::SIZE];
        let mut tmp = vec![T::default(); send.len()];
        let mut mask = 1;
        while mask < n {
            if vr & mask == 0 {
                let child = vr | mask;
                if child < n {
                    let from = (child + root) % n;
                    self.irecv_ctx(&mut incoming, from, TAG_REDUCE, Context::Collective)?
                        .wait()?;
                    decode_into(&incoming, &mut tmp);
                    for (a, b) in acc.iter_mut().zip(&tmp) {
                        *a = T::combine(*a, *b, op);
                    }
                }
            } else {
                let to = ((vr & !mask) + root) % n;
                let bytes = encode(&acc);
                self.isend_ctx(&bytes, to, TAG_REDUCE, Context::Collective)?
                    .wait()?;
                return Ok(());
            }
            mask <<= 1;
        }
        recv[..acc.len()].copy_from_slice(&acc);
        Ok(())
    }

    /// Reduces `send` element-wise and gives every rank the result in `recv`.
    pub fn allreduce<T: Element>(&self, send: &[T], recv: &mut [T], op: ReduceOp) -> Result<()> {
        assert_eq!(send.len(), recv.len(), "allreduce buffers differ in length");
        if let Some(n) = self.t.native_collectives() {
            return n.allreduce(host_bytes(send), host_bytes_mut(recv), T::KIND, op);
        }
        self.reduce(send, recv, op, 0)?;
        let mut bytes = if self.rank() == 0 {
            encode(recv)
        } else {
            vec![0u8; recv.len() * T::SIZE]
        };
        self.bcast(&mut bytes, 0)?;
        decode_into(&bytes, recv);
        Ok(())
    }

    /// Ends the job's communication: a barrier (no peer still reads this rank's memory), then
    /// the transport is shut down.
    pub fn finish(self) -> Result<()> {
        self.barrier()?;
        self.t.shutdown()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_encode_little_endian_and_combine() {
        let b = encode(&[1u32, 0x0102_0304]);
        assert_eq!(b, vec![1, 0, 0, 0, 4, 3, 2, 1]);
        let mut back = [0u32; 2];
        decode_into(&b, &mut back);
        assert_eq!(back, [1, 0x0102_0304]);
        assert_eq!(f64::combine(1.5, 2.0, ReduceOp::Sum), 3.5);
        assert_eq!(i64::combine(-3, 2, ReduceOp::Max), 2);
        assert_eq!(u64::combine(7, 2, ReduceOp::Min), 2);
    }
}
