//! The protocol engine (Open MPI's ob1 PML): one implementation of tagged messaging shared by
//! every native wire.
//!
//! It matches incoming messages against posted receives in MPI order (per source, in the
//! order sent; the earliest posted receive wins; unmatched messages wait in an unexpected
//! queue), sends messages up to `eager_limit` inline, and larger ones by rendezvous: an RTS,
//! then either the receiver reads the sender's buffer in place (single copy, when the wire
//! offers it and the policy agrees; a refusal by the kernel falls back to copying and is
//! counted) or the receiver answers CTS and the sender pipelines DATA fragments of
//! `frag_size`. An optional receive thread progresses the engine while the application
//! computes. Every wait is bounded by `timeout` and its error names the peer and stage.
//!
//! This module is the engine's public face, [`Engine`] and its [`Transport`] implementation; the
//! work is split by job: `config` (the settings), `state` and `ops` (what the engine knows, and
//! the table of sends and receives in flight), `matching` (MPI's matching order), `protocol`
//! (frames and the eager and rendezvous state machines) and `waiting` (blocking waits, liveness
//! checks, timeouts and the receive thread).

mod config;
mod inject;
mod matching;
mod ops;
mod protocol;
mod state;
mod waiting;

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bench_core::bootstrap::Bootstrap;
use bench_core::clock::Clock;

use crate::error::{Result, TransportError};
use crate::header::{FrameType, Header};
use crate::spin::{SpinGuard, SpinLock};
use crate::transport::{Context, Counters, ReqId, Status, Tag, Transport};
use crate::wire::{FragKind, Wire};

use crate::order::HostOrder;
pub use config::{EngineConfig, Schedule, SingleCopy, SHARE_MIN};
use protocol::encode;
use state::{Core, Op, Ptr, SendOp, SendPhase, State};
use waiting::{describe_pending, Pending, RxThread, Waiter};

/// The engine: a [`Transport`] over any [`Wire`].
pub struct Engine {
    core: Arc<SpinLock<Core>>,
    clock: Clock,
    rank: usize,
    size: usize,
    timeout: Duration,
    /// The byte order this rank encodes as (`wire.byte_order`); the state has its own copy.
    order: HostOrder,
    /// Steps of busy work before each send, on a real clock only: `inject_delay_ns`
    /// converted at start-up (see [`inject`]).
    inject_delay_steps: u64,
    reporter: Option<Arc<dyn Bootstrap>>,
    rx: Mutex<Option<RxThread>>,
}

impl Engine {
    /// Builds an engine over `wire`. `reporter`, when given, hears every stage change so the
    /// launcher can name the stage a rank died in.
    pub fn new(
        wire: Box<dyn Wire>,
        cfg: EngineConfig,
        reporter: Option<Arc<dyn Bootstrap>>,
    ) -> Result<Engine> {
        let caps = wire.caps();
        let rank = wire.rank();
        let size = wire.size();
        if cfg.eager_limit + FrameType::Eager.header_len() > caps.max_frame {
            return Err(TransportError::Config(format!(
                "eager_limit={} does not fit the {} wire's largest frame of {} bytes; use eager_limit <= {}",
                cfg.eager_limit,
                wire.name(),
                caps.max_frame,
                caps.max_frame - FrameType::Eager.header_len()
            )));
        }
        if cfg.frag_size == 0 {
            return Err(TransportError::Config(
                "frag_size must be at least 1".into(),
            ));
        }
        let clock = wire.clock();
        let st = State {
            rank,
            size,
            order: cfg.byte_orders.of(rank),
            cfg,
            max_frame: caps.max_frame,
            wire_single_copy: caps.single_copy,
            wire_reads_into_place: wire.reads_into_place(),
            wire_places_data: caps.places_data,
            slots: Vec::new(),
            free: Vec::new(),
            posted: VecDeque::new(),
            unexpected: VecDeque::new(),
            pending_first: vec![VecDeque::new(); size],
            first_count: 0,
            ctrl: vec![VecDeque::new(); size],
            ctrl_count: 0,
            streams: VecDeque::new(),
            flushing: Vec::new(),
            matched: VecDeque::new(),
            puts: VecDeque::new(),
            send_seq: vec![0; size],
            recv_seq: vec![0; size],
            reorder: vec![BTreeMap::new(); size],
            pool: Vec::new(),
            blocked_scratch: vec![false; size],
            counters: Counters::default(),
            single_copy_refused: false,
            single_copy_proven: false,
            stage: "setup".into(),
            fatal: None,
        };
        let inject_delay_steps = if clock.is_virtual() || cfg.inject_delay_ns == 0 {
            0
        } else {
            inject::steps_for(cfg.inject_delay_ns, &clock)
        };
        let engine = Engine {
            core: Arc::new(SpinLock::new(Core { wire, st })),
            clock,
            rank,
            size,
            timeout: cfg.timeout,
            order: cfg.byte_orders.of(rank),
            inject_delay_steps,
            reporter,
            rx: Mutex::new(None),
        };
        if cfg.rx_thread && !caps.models_rx_thread {
            engine.start_rx_thread();
        }
        Ok(engine)
    }

    fn check_source(&self, src: Option<usize>) -> Result<()> {
        match src {
            Some(s) if s >= self.size => Err(TransportError::Config(format!(
                "receive from rank {s}, but the job has ranks 0..{}",
                self.size - 1
            ))),
            _ => Ok(()),
        }
    }

    /// Progresses until `req` completes; its status.
    #[inline]
    fn until_done(&self, core: &mut Core, req: ReqId) -> Result<Status> {
        let mut status = None;
        self.block_on(
            core,
            |st| {
                status = st.take_done(req)?;
                Ok(status.is_some())
            },
            |st| describe_pending(st, &[req]),
        )?;
        Ok(status.expect("block_on returned on completion"))
    }

    #[inline]
    fn lock(&self) -> Result<SpinGuard<'_, Core>> {
        let core = self.core.lock();
        if let Some(e) = &core.st.fatal {
            return Err(e.clone());
        }
        Ok(core)
    }
}

impl Transport for Engine {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    #[inline]
    fn now(&self) -> u64 {
        self.clock.now()
    }

    fn host_order(&self) -> HostOrder {
        self.order
    }

    fn virtual_time(&self) -> bool {
        self.clock.is_virtual()
    }

    fn charge_compute(&self, host_ns: u64) -> Result<()> {
        self.lock()?.wire.charge_compute(host_ns)
    }

    fn compute_scale(&self) -> Option<(f64, String)> {
        self.core.lock().wire.compute_scale()
    }

    fn delay(&self, ns: u64) -> Result<()> {
        if self.clock.is_virtual() {
            return self.lock()?.wire.delay(ns);
        }
        let end = self.now().saturating_add(ns);
        while self.now() < end {
            std::hint::spin_loop();
        }
        Ok(())
    }

    unsafe fn isend(
        &self,
        buf: *const u8,
        len: usize,
        dst: usize,
        tag: Tag,
        ctx: Context,
    ) -> Result<ReqId> {
        if self.inject_delay_steps != 0 {
            // Outside the lock, so a receive thread still progresses meanwhile.
            inject::busy_steps(self.inject_delay_steps);
        }
        let mut guard = self.lock()?;
        let core = &mut *guard;
        if dst >= self.size {
            return Err(TransportError::Config(format!(
                "send to rank {dst}, but the job has ranks 0..{}",
                self.size - 1
            )));
        }
        let seq = core.st.send_seq[dst];
        core.st.send_seq[dst] = seq.wrapping_add(1);
        let mut h = Header::new(FrameType::Eager);
        h.ctx = ctx.0;
        h.tag = tag;
        h.seq = seq;
        h.src = self.rank as u32;
        h.len = len as u64;
        if dst == self.rank {
            // To self: deliver as one eager frame whatever the size; no wire involved.
            let (hb, hn) = encode(&h, core.st.order);
            let mut frame = hb[..hn].to_vec();
            frame.extend_from_slice(std::slice::from_raw_parts(buf, len));
            core.st.on_frame(self.rank, &frame)?;
            return Ok(ReqId::DONE);
        }
        let eager = len <= core.st.cfg.eager_limit;
        if eager {
            core.st.counters.eager_sends += 1;
            if core.st.pending_first[dst].is_empty() {
                // Fast path: nothing queued ahead, so the frame goes straight to the wire and
                // the send completes here, with no request to track.
                let (hb, hn) = encode(&h, core.st.order);
                let payload = std::slice::from_raw_parts(buf, len);
                let kind = FragKind::Eager { len: len as u64 };
                let sent = core
                    .wire
                    .try_send(dst, kind, &hb[..hn], payload)
                    .map_err(|e| e.with_stage(&core.st.stage))?;
                if sent {
                    core.st.counters.frames_sent += 1;
                    core.st.counters.bytes_sent += len as u64;
                    return Ok(ReqId::DONE);
                }
            }
        }
        let id = core.st.alloc(Op::Send(SendOp {
            buf: Ptr(buf as *mut u8),
            len,
            dst,
            tag,
            ctx: ctx.0,
            seq,
            phase: SendPhase::Queued,
        }));
        let idx = (id.0 & 0xffff_ffff) as usize;
        if !eager
            && core.st.pending_first[dst].is_empty()
            && core
                .emit_first(idx)
                .map_err(|e| e.with_stage(&core.st.stage))?
        {
            return Ok(id);
        }
        core.st.pending_first[dst].push_back(idx as u32);
        core.st.first_count += 1;
        Ok(id)
    }

    unsafe fn irecv(
        &self,
        buf: *mut u8,
        cap: usize,
        src: Option<usize>,
        tag: Option<Tag>,
        ctx: Context,
    ) -> Result<ReqId> {
        let mut core = self.lock()?;
        self.check_source(src)?;
        core.post_recv(buf, cap, src, tag, ctx.0)
    }

    unsafe fn send(
        &self,
        buf: *const u8,
        len: usize,
        dst: usize,
        tag: Tag,
        ctx: Context,
    ) -> Result<()> {
        let r = self.isend(buf, len, dst, tag, ctx)?;
        if r == ReqId::DONE {
            return Ok(());
        }
        self.wait(r).map(|_| ())
    }

    unsafe fn recv(
        &self,
        buf: *mut u8,
        cap: usize,
        src: Option<usize>,
        tag: Option<Tag>,
        ctx: Context,
    ) -> Result<Status> {
        let mut guard = self.lock()?;
        let core = &mut *guard;
        self.check_source(src)?;
        let ctx = ctx.0;
        let what = |_: &State| Pending {
            rank: src,
            peer: src
                .map(|s| format!("rank {s}"))
                .unwrap_or_else(|| "any rank".into()),
            what: format!(
                "a message with tag {} ({cap} bytes of room)",
                tag.map(|t| t.to_string()).unwrap_or_else(|| "any".into())
            ),
        };
        // Fast path: with nothing posted, unexpected or in flight, no earlier receive can
        // claim an arriving message, so an eager frame that matches is ours: copy it out of
        // the wire directly. Anything else takes the general path below.
        let mut w = Waiter::default();
        while core.st.quiet() {
            let mut got = None;
            let st = &mut core.st;
            let mut take = |st: &mut State, peer: usize, frame: &[u8]| {
                if got.is_none() {
                    if let Some(status) = st.fast_match(peer, frame, buf, cap, src, tag, ctx)? {
                        got = Some(status);
                        return Ok(());
                    }
                }
                st.on_frame(peer, frame)
            };
            // A rendezvous receive posted earlier may still be arriving (it is in none of
            // quiet's queues), so its payload may be placed here too.
            let polled = if st.wire_reads_into_place {
                core.wire.poll_placing(&mut protocol::FnPlacer(st, take))
            } else {
                core.wire.poll(&mut |peer, frame| take(st, peer, frame))
            };
            let n = polled.map_err(|e| e.with_stage(&core.st.stage))?;
            if let Some(status) = got {
                return Ok(status);
            }
            if n > 0 {
                w.active();
            } else {
                w.idle(core, self.timeout, &what)?;
            }
        }
        let id = core.post_recv(buf, cap, src, tag, ctx)?;
        self.until_done(core, id)
    }

    fn test(&self, req: ReqId) -> Result<Option<Status>> {
        let mut core = self.lock()?;
        if let Some(s) = core.st.take_done(req)? {
            return Ok(Some(s));
        }
        core.progress()?;
        core.st.take_done(req)
    }

    fn wait(&self, req: ReqId) -> Result<Status> {
        if req == ReqId::DONE {
            return Ok(Status::default());
        }
        let mut guard = self.lock()?;
        self.until_done(&mut guard, req)
    }

    fn waitall(&self, reqs: &mut [ReqId], mut statuses: Option<&mut [Status]>) -> Result<()> {
        let reqs: &[ReqId] = reqs;
        if let Some(st) = statuses.as_deref() {
            assert_eq!(reqs.len(), st.len());
        }
        let mut pending: VecDeque<usize> = VecDeque::with_capacity(reqs.len());
        for (i, r) in reqs.iter().enumerate() {
            if *r == ReqId::DONE {
                if let Some(st) = statuses.as_deref_mut() {
                    st[i] = Status::default();
                }
            } else {
                pending.push_back(i);
            }
        }
        if pending.is_empty() {
            return Ok(());
        }
        let mut guard = self.lock()?;
        let core = &mut *guard;
        self.block_on(
            core,
            |st| {
                // Requests of a window complete almost in order: release from the front and
                // stop at the first pending one, so a pass costs O(1), not O(window).
                while let Some(&i) = pending.front() {
                    match st.take_done(reqs[i])? {
                        Some(s) => {
                            if let Some(out) = statuses.as_deref_mut() {
                                out[i] = s;
                            }
                            pending.pop_front();
                        }
                        None => break,
                    }
                }
                Ok(pending.is_empty())
            },
            |st| describe_pending(st, reqs),
        )
    }

    fn progress(&self) -> Result<()> {
        let mut core = self.lock()?;
        core.progress().map(|_| ())
    }

    fn set_stage(&self, stage: &str) {
        {
            let mut core = self.core.lock();
            core.st.stage.clear();
            core.st.stage.push_str(stage);
        }
        if let Some(r) = &self.reporter {
            r.report_stage(stage);
        }
    }

    fn stage(&self) -> String {
        self.core.lock().st.stage.clone()
    }

    fn counters(&self) -> Counters {
        self.core.lock().st.counters
    }

    fn describe(&self) -> Vec<(String, String)> {
        let core = self.core.lock();
        let mut d = core.wire.describe();
        if core.st.single_copy_refused {
            d.push(("single_copy_refused".into(), "yes".into()));
        }
        if self.order == HostOrder::Big {
            // A test mode: say which rank took a big-endian host's path.
            d.push(("byte_order".into(), "big".into()));
        }
        d
    }
}

#[cfg(test)]
mod tests;
