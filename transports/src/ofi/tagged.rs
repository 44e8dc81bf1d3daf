//! `ofi.matching=provider`: the Transport straight over the provider's tagged messages, which
//! match in the provider (in the NIC, where it can), as Open MPI's mtl/ofi does. fabbench's
//! engine, its protocols and its tunables step aside; the provider's own eager and rendezvous
//! protocols move every message. Collectives are `Comm`'s own, over these sends and receives.
//!
//! A message's 64-bit tag holds its context (8 bits), the sender's rank (24 bits) and the user
//! tag (32 bits); a receive from any rank or with any tag ignores those bits. Receives name no
//! source address, so providers without directed receive serve too. Each request owns a context
//! block at a stable address (the provider may write into it, FI_CONTEXT2) and is completed by
//! the completion queue entry that names it.

use std::ffi::c_void;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bench_core::clock::RealClock;

use super::endpoint::{CqError, Endpoint};
use super::ffi::*;
use super::mr::{Cache, Rules};
use crate::error::{Result, TransportError};
use crate::spin::SpinLock;
use crate::transport::{Context, Counters, ReqId, Status, Tag, Transport};

const TAG_BITS: u64 = 0xffff_ffff;
const SRC_SHIFT: u32 = 32;
const SRC_BITS: u64 = 0xff_ffff << SRC_SHIFT;
const CTX_SHIFT: u32 = 56;
/// The most ranks a tag can name.
const MAX_RANKS: usize = 1 << 24;

fn tag_of(ctx: Context, src: usize, tag: Tag) -> u64 {
    ((ctx.0 as u64) << CTX_SHIFT) | ((src as u64) << SRC_SHIFT) | (tag as u32 as u64)
}

/// A request's context block: room the provider may write, then the request's slot.
#[repr(C)]
struct Ctx {
    provider: [usize; 8],
    slot: u32,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum State {
    Free,
    Pending,
    Done(Status),
    Failed,
}

struct Req {
    ctx: Box<Ctx>,
    state: State,
    gen: u32,
    /// The peer a send goes to or a receive names (None: any).
    peer: Option<usize>,
    is_send: bool,
    cap: usize,
    tag: Option<Tag>,
    region: Option<u64>,
    error: Option<TransportError>,
}

struct Inner {
    ep: Endpoint,
    reqs: Vec<Req>,
    free: Vec<u32>,
    batch: Vec<FiCqTaggedEntry>,
    cache: Cache,
    counters: Counters,
    stage: String,
    inject_size: usize,
    injects: u64,
}

// SAFETY: the endpoint and the requests' buffers are used under the lock only.
unsafe impl Send for Inner {}

pub struct TaggedTransport {
    inner: SpinLock<Inner>,
    rank: usize,
    size: usize,
    clock: RealClock,
    timeout: Duration,
    reporter: Option<Arc<dyn bench_core::bootstrap::Bootstrap>>,
}

impl TaggedTransport {
    pub fn new(
        ep: Endpoint,
        inject_cap: usize,
        cq_batch: usize,
        timeout: Duration,
        reporter: Option<Arc<dyn bench_core::bootstrap::Bootstrap>>,
    ) -> Result<TaggedTransport> {
        if ep.calls.tsend.is_none() || ep.calls.trecv.is_none() {
            return Err(TransportError::Config(format!(
                "ofi: provider {} has no tagged send and receive; use ofi.matching=engine",
                ep.entry.provider
            )));
        }
        if ep.size > MAX_RANKS {
            return Err(TransportError::Config(format!(
                "ofi.matching=provider names ranks in 24 tag bits: at most {MAX_RANKS} ranks"
            )));
        }
        let inject_size = if ep.calls.tinject.is_some() {
            ep.entry.inject_size.min(inject_cap)
        } else {
            0
        };
        let (rank, size) = (ep.rank, ep.size);
        let rules = Rules {
            mode: ep.entry.mr_mode,
        };
        Ok(TaggedTransport {
            inner: SpinLock::new(Inner {
                ep,
                reqs: Vec::new(),
                free: Vec::new(),
                batch: vec![FiCqTaggedEntry::default(); cq_batch.max(1)],
                cache: Cache::new(rules, 256),
                counters: Counters::default(),
                stage: String::new(),
                inject_size,
                injects: 0,
            }),
            rank,
            size,
            clock: RealClock::new(),
            timeout,
            reporter,
        })
    }
}

impl Inner {
    fn alloc(&mut self, peer: Option<usize>, is_send: bool, cap: usize, tag: Option<Tag>) -> u32 {
        let i = match self.free.pop() {
            Some(i) => i,
            None => {
                let i = self.reqs.len() as u32;
                self.reqs.push(Req {
                    ctx: Box::new(Ctx {
                        provider: [0; 8],
                        slot: i,
                    }),
                    state: State::Free,
                    gen: 0,
                    peer: None,
                    is_send: false,
                    cap: 0,
                    tag: None,
                    region: None,
                    error: None,
                });
                i
            }
        };
        let r = &mut self.reqs[i as usize];
        r.state = State::Pending;
        r.gen = r.gen.wrapping_add(1);
        r.peer = peer;
        r.is_send = is_send;
        r.cap = cap;
        r.tag = tag;
        r.region = None;
        r.error = None;
        i
    }

    fn id(&self, i: u32) -> ReqId {
        ReqId(((self.reqs[i as usize].gen as u64) << 32) | i as u64)
    }

    fn slot(&self, id: ReqId) -> Result<usize> {
        let i = (id.0 & 0xffff_ffff) as usize;
        match self.reqs.get(i) {
            Some(r) if r.gen as u64 == id.0 >> 32 && r.state != State::Free => Ok(i),
            _ => Err(TransportError::Usage(format!(
                "request {:#x} is not pending",
                id.0
            ))),
        }
    }

    fn release(&mut self, i: usize) {
        if let Some(region) = self.reqs[i].region.take() {
            let mut reg = self.ep.registrar();
            self.cache.done(&mut reg, region);
        }
        self.reqs[i].state = State::Free;
        self.free.push(i as u32);
    }

    /// A descriptor for a user buffer where the provider asks for one (FI_MR_LOCAL).
    fn desc(&mut self, i: u32, buf: usize, len: usize, access: u64) -> Result<*mut c_void> {
        if !self.cache.rules.local() || len == 0 {
            return Ok(std::ptr::null_mut());
        }
        let mut reg = self.ep.registrar();
        let r = self
            .cache
            .acquire(&mut reg, buf, len, access)
            .map_err(|e| TransportError::Config(format!("ofi: {e}")))?;
        self.reqs[i as usize].region = Some(r.id);
        Ok(r.desc as *mut c_void)
    }

    /// Reads a batch of completions and completes their requests.
    fn progress(&mut self) -> Result<()> {
        match self.ep.read_completions(&mut self.batch) {
            Ok(n) => {
                for k in 0..n {
                    let c = self.batch[k];
                    let Some(i) = self.slot_of(c.op_context as usize) else {
                        continue;
                    };
                    let r = &mut self.reqs[i];
                    r.state = State::Done(if r.is_send {
                        Status::default()
                    } else {
                        Status {
                            source: ((c.tag & SRC_BITS) >> SRC_SHIFT) as usize,
                            tag: (c.tag & TAG_BITS) as u32 as i32,
                            len: c.len,
                        }
                    });
                }
                Ok(())
            }
            Err(e) => self.failed(e),
        }
    }

    fn slot_of(&self, context: usize) -> Option<usize> {
        if context == 0 {
            return None;
        }
        // SAFETY: every context the provider hands back is one of our request blocks.
        let i = unsafe { (*(context as *const Ctx)).slot } as usize;
        (i < self.reqs.len() && &*self.reqs[i].ctx as *const Ctx as usize == context).then_some(i)
    }

    /// A failed operation fails its request (a truncated receive as such); one that names no
    /// request fails the call.
    fn failed(&mut self, e: CqError) -> Result<()> {
        let Some(i) = self.slot_of(e.context) else {
            return Err(TransportError::Config(format!("ofi: {}", e.text)));
        };
        let stage = self.stage.clone();
        let r = &mut self.reqs[i];
        r.state = State::Failed;
        let peer = r
            .peer
            .map_or("any rank".to_string(), |p| format!("rank {p}"));
        // Providers differ in the sign they give the number (shm: negative), and in whether
        // they say how much did not fit (shm 1.17 reports nothing): without that, the error
        // says the message was longer, not a length no one measured.
        let provider = self.ep.entry.provider.clone();
        r.error = Some(if e.err.abs() == FI_ETRUNC && e.olen > 0 {
            TransportError::Truncated {
                peer,
                tag: r.tag.unwrap_or(-1),
                len: (r.cap + e.olen) as u64,
                cap: r.cap,
                stage,
            }
        } else if e.err.abs() == FI_ETRUNC {
            TransportError::Protocol {
                peer,
                what: format!(
                    "sent a message longer than the {}-byte receive buffer (provider {provider} does not say how long; stage: {stage})",
                    r.cap
                ),
            }
        } else {
            TransportError::Protocol {
                peer,
                what: format!(
                    "{} failed: {}",
                    if r.is_send { "a send" } else { "a receive" },
                    e.text
                ),
            }
        });
        Ok(())
    }

    /// The status of a finished request, releasing it; None while it is pending.
    fn finish(&mut self, i: usize) -> Result<Option<Status>> {
        match self.reqs[i].state {
            State::Done(st) => {
                self.release(i);
                Ok(Some(st))
            }
            State::Failed => {
                let e = self.reqs[i]
                    .error
                    .take()
                    .expect("a failed request keeps its error");
                self.release(i);
                Err(e)
            }
            _ => Ok(None),
        }
    }

    fn retry(&mut self, start: Instant, timeout: Duration, peer: usize, what: &str) -> Result<()> {
        self.progress()?;
        if start.elapsed() > timeout {
            return Err(TransportError::Timeout {
                peer: format!("rank {peer}"),
                what: format!("the provider to take {what}"),
                stage: self.stage.clone(),
                after: timeout,
            });
        }
        Ok(())
    }
}

impl Transport for TaggedTransport {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn now(&self) -> u64 {
        self.clock.now()
    }

    fn virtual_time(&self) -> bool {
        false
    }

    unsafe fn isend(
        &self,
        buf: *const u8,
        len: usize,
        dst: usize,
        tag: Tag,
        ctx: Context,
    ) -> Result<ReqId> {
        if dst >= self.size {
            return Err(TransportError::Usage(format!(
                "rank {dst} is not in a job of {}",
                self.size
            )));
        }
        let mut g = self.inner.lock();
        let t = tag_of(ctx, self.rank, tag);
        let addr = g.ep.addrs[dst];
        g.counters.frames_sent += 1;
        g.counters.bytes_sent += len as u64;
        g.counters.eager_sends += 1;
        let start = Instant::now();
        if len <= g.inject_size {
            let inject =
                g.ep.calls
                    .tinject
                    .expect("inject_size is 0 without fi_tinject");
            loop {
                let rc = inject(g.ep.ep, buf as *const c_void, len, addr, t);
                if rc == 0 {
                    g.injects += 1;
                    return Ok(ReqId::DONE);
                }
                if rc != -FI_EAGAIN {
                    return Err(TransportError::Protocol {
                        peer: format!("rank {dst}"),
                        what: format!("a send failed: {}", g.ep.lib.strerror(rc)),
                    });
                }
                g.retry(start, self.timeout, dst, "a send")?;
            }
        }
        let i = g.alloc(Some(dst), true, len, Some(tag));
        let desc = g.desc(i, buf as usize, len, FI_SEND)?;
        let send = g.ep.calls.tsend.expect("checked at set-up");
        let ctxp = &mut *g.reqs[i as usize].ctx as *mut Ctx as *mut c_void;
        loop {
            let rc = send(g.ep.ep, buf as *const c_void, len, desc, addr, t, ctxp);
            if rc == 0 {
                return Ok(g.id(i));
            }
            if rc != -FI_EAGAIN {
                g.release(i as usize);
                return Err(TransportError::Protocol {
                    peer: format!("rank {dst}"),
                    what: format!("a send failed: {}", g.ep.lib.strerror(rc)),
                });
            }
            g.retry(start, self.timeout, dst, "a send")?;
        }
    }

    unsafe fn irecv(
        &self,
        buf: *mut u8,
        cap: usize,
        src: Option<usize>,
        tag: Option<Tag>,
        ctx: Context,
    ) -> Result<ReqId> {
        let mut g = self.inner.lock();
        let want = tag_of(ctx, src.unwrap_or(0), tag.unwrap_or(0));
        let ignore =
            if src.is_none() { SRC_BITS } else { 0 } | if tag.is_none() { TAG_BITS } else { 0 };
        let i = g.alloc(src, false, cap, tag);
        let desc = g.desc(i, buf as usize, cap, FI_RECV)?;
        let recv = g.ep.calls.trecv.expect("checked at set-up");
        let ctxp = &mut *g.reqs[i as usize].ctx as *mut Ctx as *mut c_void;
        let start = Instant::now();
        loop {
            let rc = recv(
                g.ep.ep,
                buf as *mut c_void,
                cap,
                desc,
                FI_ADDR_UNSPEC,
                want,
                ignore,
                ctxp,
            );
            if rc == 0 {
                return Ok(g.id(i));
            }
            if rc != -FI_EAGAIN {
                g.release(i as usize);
                return Err(TransportError::Config(format!(
                    "ofi: posting a receive failed: {}",
                    g.ep.lib.strerror(rc)
                )));
            }
            g.retry(start, self.timeout, src.unwrap_or(0), "a receive")?;
        }
    }

    fn test(&self, req: ReqId) -> Result<Option<Status>> {
        if req == ReqId::DONE {
            return Ok(Some(Status::default()));
        }
        let mut g = self.inner.lock();
        let i = g.slot(req)?;
        if g.reqs[i].state == State::Pending {
            g.progress()?;
        }
        g.finish(i)
    }

    fn wait(&self, req: ReqId) -> Result<Status> {
        if req == ReqId::DONE {
            return Ok(Status::default());
        }
        let start = Instant::now();
        let mut rounds = 0u64;
        loop {
            {
                let mut g = self.inner.lock();
                let i = g.slot(req)?;
                if g.reqs[i].state == State::Pending {
                    g.progress()?;
                }
                if let Some(st) = g.finish(i)? {
                    return Ok(st);
                }
                if rounds & 1023 == 1023 && start.elapsed() > self.timeout {
                    let r = &g.reqs[i];
                    return Err(TransportError::Timeout {
                        peer: r.peer.map_or("any rank".into(), |p| format!("rank {p}")),
                        what: if r.is_send {
                            "a send to complete".into()
                        } else {
                            "a message".into()
                        },
                        stage: g.stage.clone(),
                        after: self.timeout,
                    });
                }
            }
            rounds += 1;
            if rounds > 4096 {
                std::thread::yield_now();
            }
        }
    }

    fn waitall(&self, reqs: &mut [ReqId], mut statuses: Option<&mut [Status]>) -> Result<()> {
        for (k, r) in reqs.iter_mut().enumerate() {
            let st = self.wait(*r)?;
            *r = ReqId::DONE;
            if let Some(s) = statuses.as_deref_mut() {
                s[k] = st;
            }
        }
        Ok(())
    }

    fn progress(&self) -> Result<()> {
        self.inner.lock().progress()
    }

    fn set_stage(&self, stage: &str) {
        {
            let mut g = self.inner.lock();
            g.stage.clear();
            g.stage.push_str(stage);
        }
        if let Some(r) = &self.reporter {
            r.report_stage(stage);
        }
    }

    fn stage(&self) -> String {
        self.inner.lock().stage.clone()
    }

    fn counters(&self) -> Counters {
        self.inner.lock().counters
    }

    fn describe(&self) -> Vec<(String, String)> {
        let g = self.inner.lock();
        let mut out = super::facts(&g.ep);
        out.push(("ofi_matching".into(), "provider".into()));
        out.push(("ofi_inject_size_used".into(), g.inject_size.to_string()));
        out.push((
            "ofi_registrations".into(),
            g.cache.registrations.to_string(),
        ));
        out.extend(super::provider_env());
        out
    }

    fn shutdown(&self) -> Result<()> {
        let mut g = self.inner.lock();
        let g = &mut *g;
        let mut reg = g.ep.registrar();
        g.cache.clear(&mut reg);
        g.ep.close();
        Ok(())
    }
}
