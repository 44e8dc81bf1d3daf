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

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use bench_core::bootstrap::Bootstrap;
use bench_core::clock::Clock;

use crate::error::{Result, TransportError};
use crate::header::{FrameType, Header, COMMON_LEN, FLAG_SINGLE_COPY_OK, MAX_HEADER_LEN};
use crate::spin::{SpinGuard, SpinLock};
use crate::transport::{Context, Counters, ReqId, Status, Tag, Transport};
use crate::wire::{FragKind, GetOutcome, Protocol, Wire};

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
}

/// Single-copy transfers below this are read by the receiver alone: the sender's share would
/// cost a control hop (about a microsecond here) for a copy that takes less.
pub const SHARE_MIN: usize = 64 << 10;

/// How many idle progress passes go by between looks at the clock and at peers' liveness.
const CHECK_EVERY: u64 = 1024;
/// Frames one progress pass may emit before it polls again, so receiving never starves.
const SEND_BUDGET: usize = 64;

/// A buffer pointer that may cross to the receive thread. The engine never touches it outside
/// the lifetime the caller promised in `isend`/`irecv`.
#[derive(Debug, Clone, Copy)]
struct Ptr(*mut u8);
// SAFETY: see the type's doc; access is serialised by the engine lock.
unsafe impl Send for Ptr {}

#[derive(Debug)]
enum SendPhase {
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
}

#[derive(Debug)]
struct SendOp {
    buf: Ptr,
    len: usize,
    dst: usize,
    tag: Tag,
    ctx: u8,
    seq: u32,
    phase: SendPhase,
}

impl SendOp {
    /// What the send's request reports when it completes.
    fn status(&self) -> Status {
        Status {
            source: self.dst,
            tag: self.tag,
            len: self.len,
        }
    }
}

#[derive(Debug)]
enum RecvPhase {
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
struct RecvOp {
    buf: Ptr,
    cap: usize,
    src: Option<usize>,
    tag: Option<Tag>,
    ctx: u8,
    phase: RecvPhase,
}

#[derive(Debug)]
enum Op {
    Free,
    Send(SendOp),
    Recv(RecvOp),
    Done(Status),
}

#[derive(Debug)]
struct Slot {
    gen: u32,
    op: Op,
}

#[derive(Debug)]
enum UnexpectedKind {
    Eager(Vec<u8>),
    Rts {
        len: usize,
        sreq: u64,
        saddr: u64,
        single_ok: bool,
    },
}

#[derive(Debug)]
struct Unexpected {
    src: usize,
    tag: Tag,
    ctx: u8,
    kind: UnexpectedKind,
}

#[derive(Debug, Clone, Copy)]
enum Ctrl {
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
struct PutJob {
    idx: u32,
    rreq: u64,
    dst: u64,
    n: usize,
}

/// Everything the engine knows, apart from the wire (split so the wire can be polled while the
/// state is updated from inside the poll callback).
struct State {
    rank: usize,
    size: usize,
    cfg: EngineConfig,
    max_frame: usize,
    wire_single_copy: bool,
    slots: Vec<Slot>,
    free: Vec<u32>,
    posted: VecDeque<u32>,
    unexpected: VecDeque<Unexpected>,
    pending_first: Vec<VecDeque<u32>>,
    /// Frames waiting in `pending_first` (all peers), so progress skips empty queues cheaply.
    first_count: usize,
    ctrl: Vec<VecDeque<Ctrl>>,
    ctrl_count: usize,
    streams: VecDeque<u32>,
    matched: VecDeque<u32>,
    puts: VecDeque<PutJob>,
    send_seq: Vec<u32>,
    recv_seq: Vec<u32>,
    reorder: Vec<BTreeMap<u32, Vec<u8>>>,
    pool: Vec<Vec<u8>>,
    blocked_scratch: Vec<bool>,
    counters: Counters,
    single_copy_refused: bool,
    /// A single copy has worked with this wire: from then on the sender may take a share.
    single_copy_proven: bool,
    stage: String,
    fatal: Option<TransportError>,
}

struct Core {
    wire: Box<dyn Wire>,
    st: State,
}

/// The engine: a [`Transport`] over any [`Wire`].
pub struct Engine {
    core: Arc<SpinLock<Core>>,
    clock: Clock,
    rank: usize,
    size: usize,
    timeout: Duration,
    reporter: Option<Arc<dyn Bootstrap>>,
    rx: Mutex<Option<RxThread>>,
}

struct RxThread {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<()>,
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
            cfg,
            max_frame: caps.max_frame,
            wire_single_copy: caps.single_copy,
            slots: Vec::new(),
            free: Vec::new(),
            posted: VecDeque::new(),
            unexpected: VecDeque::new(),
            pending_first: vec![VecDeque::new(); size],
            first_count: 0,
            ctrl: vec![VecDeque::new(); size],
            ctrl_count: 0,
            streams: VecDeque::new(),
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
        let engine = Engine {
            core: Arc::new(SpinLock::new(Core { wire, st })),
            clock,
            rank,
            size,
            timeout: cfg.timeout,
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

    fn start_rx_thread(&self) {
        let stop = Arc::new(AtomicBool::new(false));
        let core = self.core.clone();
        let flag = stop.clone();
        let handle = thread::Builder::new()
            .name(format!("rx-rank{}", self.rank))
            .spawn(move || rx_loop(core, flag))
            .expect("spawn receive thread");
        *self.rx.lock().unwrap() = Some(RxThread { stop, handle });
    }

    #[inline]
    fn lock(&self) -> Result<SpinGuard<'_, Core>> {
        let core = self.core.lock();
        if let Some(e) = &core.st.fatal {
            return Err(e.clone());
        }
        Ok(core)
    }

    /// Waits until `done(core)` says so, progressing; errors name what was awaited.
    fn block_on(
        &self,
        core: &mut Core,
        mut done: impl FnMut(&mut State) -> Result<bool>,
        what: impl Fn(&State) -> Pending,
    ) -> Result<()> {
        let mut w = Waiter::default();
        loop {
            if done(&mut core.st)? {
                return Ok(());
            }
            if core.progress()? {
                w.active();
                continue;
            }
            w.idle(core, self.timeout, &what)?;
        }
    }
}

/// Idle bookkeeping shared by every blocking wait: spin/yield through the wire, and every
/// CHECK_EVERY idle rounds check peers' liveness and the timeout.
#[derive(Default)]
struct Waiter {
    idle: u64,
    since: Option<Instant>,
}

impl Waiter {
    #[inline]
    fn active(&mut self) {
        self.idle = 0;
        self.since = None;
    }

    #[inline]
    fn idle(
        &mut self,
        core: &mut Core,
        timeout: Duration,
        what: &dyn Fn(&State) -> Pending,
    ) -> Result<()> {
        self.idle += 1;
        core.wire.idle(self.idle)?;
        if !self.idle.is_multiple_of(CHECK_EVERY) {
            return Ok(());
        }
        let pending = what(&core.st);
        if let Err(e) = core.wire.check_peers(pending.rank) {
            // A peer may send its last frames and exit between our last poll and this check
            // (it leaves the final barrier first): take what it left before calling it gone.
            if core.progress()? {
                self.active();
                return Ok(());
            }
            return Err(with_stage(e, &core.st.stage));
        }
        // The clock starts at the first check, so the fast path never reads it.
        let start = *self.since.get_or_insert_with(Instant::now);
        if start.elapsed() >= timeout {
            let Pending { peer, what, .. } = pending;
            let e = TransportError::Timeout {
                peer,
                what,
                stage: core.st.stage.clone(),
                after: timeout,
            };
            core.st.fatal = Some(e.clone());
            return Err(e);
        }
        Ok(())
    }
}

fn with_stage(e: TransportError, stage: &str) -> TransportError {
    match e {
        TransportError::PeerGone { peer, why, .. } => TransportError::PeerGone {
            peer,
            why,
            stage: stage.to_string(),
        },
        other => other,
    }
}

fn rx_loop(core: Arc<SpinLock<Core>>, stop: Arc<AtomicBool>) {
    let mut idle = 0u32;
    while !stop.load(Ordering::Relaxed) {
        let active = match core.try_lock() {
            Some(mut c) if c.st.fatal.is_none() => match c.progress() {
                Ok(a) => a,
                Err(e) => {
                    c.st.fatal = Some(e);
                    false
                }
            },
            _ => false,
        };
        if active {
            idle = 0;
            continue;
        }
        idle = idle.saturating_add(1);
        // Spin briefly, then get out of the way: on a busy node the progress thread must not
        // steal the core the application runs on.
        if idle < 64 {
            std::hint::spin_loop();
        } else if idle < 256 {
            thread::yield_now();
        } else {
            thread::sleep(Duration::from_micros(50));
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        if let Some(rx) = self.rx.lock().unwrap().take() {
            rx.stop.store(true, Ordering::Relaxed);
            let _ = rx.handle.join();
        }
    }
}

fn encode(h: &Header) -> ([u8; MAX_HEADER_LEN], usize) {
    let mut buf = [0u8; MAX_HEADER_LEN];
    let n = h.encode(&mut buf);
    (buf, n)
}

fn req_index(id: u64) -> (usize, u32) {
    ((id & 0xffff_ffff) as usize, (id >> 32) as u32)
}

impl State {
    /// Nothing posted, unexpected, queued or in flight: the receive fast path may run.
    #[inline]
    fn quiet(&self) -> bool {
        self.posted.is_empty()
            && self.unexpected.is_empty()
            && self.ctrl_count == 0
            && self.first_count == 0
            && self.streams.is_empty()
            && self.matched.is_empty()
    }

    /// The receive fast path's match: an in-order EAGER frame for this receive is copied out
    /// and `Some(status)` returned; anything else is left to `on_frame`.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn fast_match(
        &mut self,
        peer: usize,
        frame: &[u8],
        buf: *mut u8,
        cap: usize,
        src: Option<usize>,
        tag: Option<Tag>,
        ctx: u8,
    ) -> Result<Option<Status>> {
        if frame.len() < COMMON_LEN
            || frame[0] != FrameType::Eager as u8
            || frame[1] != ctx
            || frame[2..4] != [0, 0]
            || src.is_some_and(|s| s != peer)
        {
            return Ok(None);
        }
        let ftag = i32::from_be_bytes(frame[4..8].try_into().expect("4 bytes"));
        let seq = u32::from_be_bytes(frame[8..12].try_into().expect("4 bytes"));
        let len = u64::from_be_bytes(frame[16..24].try_into().expect("8 bytes"));
        let payload = &frame[COMMON_LEN..];
        if tag.is_some_and(|t| t != ftag)
            || seq != self.recv_seq[peer]
            || len != payload.len() as u64
            || !self.reorder[peer].is_empty()
        {
            return Ok(None);
        }
        if payload.len() > cap {
            return Err(self.truncated(peer, ftag, payload.len(), cap));
        }
        // SAFETY: the caller of recv promised `cap` writable bytes for the call.
        unsafe { std::ptr::copy_nonoverlapping(payload.as_ptr(), buf, payload.len()) };
        self.recv_seq[peer] = seq.wrapping_add(1);
        self.counters.frames_received += 1;
        Ok(Some(Status {
            source: peer,
            tag: ftag,
            len: payload.len(),
        }))
    }

    fn alloc(&mut self, op: Op) -> ReqId {
        let idx = match self.free.pop() {
            Some(i) => i,
            None => {
                self.slots.push(Slot {
                    gen: 0,
                    op: Op::Free,
                });
                (self.slots.len() - 1) as u32
            }
        };
        let slot = &mut self.slots[idx as usize];
        slot.gen = slot.gen.wrapping_add(1) & 0x7fff_ffff;
        slot.op = op;
        ReqId(((slot.gen as u64) << 32) | idx as u64)
    }

    /// Receive `idx` now takes `len` bytes from `from` in pieces (fragments, a single copy's
    /// halves) and completes when all have come.
    fn start_receiving(&mut self, idx: usize, from: usize, tag: Tag, len: usize) {
        let Op::Recv(r) = &mut self.slots[idx].op else {
            unreachable!("only receives start receiving")
        };
        r.phase = RecvPhase::Receiving {
            from,
            tag,
            len,
            got: 0,
        };
    }

    /// The buffer and length of receive `idx`, which `frame` from `peer` says is receiving.
    fn receiving(&self, idx: usize, peer: usize, frame: &str) -> Result<(Ptr, usize)> {
        match &self.slots[idx].op {
            Op::Recv(RecvOp {
                buf,
                phase: RecvPhase::Receiving { from, len, .. },
                ..
            }) if *from == peer => Ok((*buf, *len)),
            _ => Err(TransportError::Protocol {
                peer: format!("rank {peer}"),
                what: format!("{frame} for a receive that is not expecting it"),
            }),
        }
    }

    /// Counts `n` more bytes of receive `idx` in place and completes it when all are.
    fn add_received(&mut self, idx: usize, peer: usize, n: usize, frame: &str) -> Result<()> {
        let Op::Recv(RecvOp {
            phase:
                RecvPhase::Receiving {
                    from,
                    tag,
                    len,
                    got,
                },
            ..
        }) = &mut self.slots[idx].op
        else {
            unreachable!("checked by receiving()")
        };
        if *got + n > *len {
            return Err(TransportError::Protocol {
                peer: format!("rank {peer}"),
                what: format!("{frame} brings {n} bytes past the end of a {len}-byte message"),
            });
        }
        *got += n;
        if *got == *len {
            let st = Status {
                source: *from,
                tag: *tag,
                len: *len,
            };
            self.complete(idx, st);
        }
        Ok(())
    }

    fn slot_of(&mut self, id: u64, peer: usize, frame: &str) -> Result<usize> {
        let (idx, gen) = req_index(id);
        match self.slots.get(idx) {
            Some(s) if s.gen == gen && !matches!(s.op, Op::Free) => Ok(idx),
            _ => Err(TransportError::Protocol {
                peer: format!("rank {peer}"),
                what: format!("{frame} names request {id:#x}, which does not exist"),
            }),
        }
    }

    /// Status of a finished request, releasing it; `None` while it is pending.
    fn take_done(&mut self, req: ReqId) -> Result<Option<Status>> {
        if req == ReqId::DONE {
            return Ok(Some(Status::default()));
        }
        let (idx, gen) = req_index(req.0);
        let slot = self
            .slots
            .get_mut(idx)
            .filter(|s| s.gen == gen)
            .ok_or_else(|| TransportError::Config(format!("request {:#x} is not live", req.0)))?;
        match slot.op {
            Op::Done(status) => {
                slot.op = Op::Free;
                self.free.push(idx as u32);
                Ok(Some(status))
            }
            Op::Free => Err(TransportError::Config(format!(
                "request {:#x} was already completed",
                req.0
            ))),
            _ => Ok(None),
        }
    }

    fn complete(&mut self, idx: usize, status: Status) {
        self.slots[idx].op = Op::Done(status);
    }

    /// One half of shared send `idx` is done; the second completes it.
    fn shared_half_done(&mut self, idx: usize) {
        let Op::Send(s) = &mut self.slots[idx].op else {
            unreachable!("only sends share")
        };
        let SendPhase::Sharing { halves_left } = &mut s.phase else {
            unreachable!("only sharing sends have halves")
        };
        *halves_left -= 1;
        if *halves_left == 0 {
            let st = s.status();
            self.complete(idx, st);
        }
    }

    fn stage_err_peer(&self, peer: usize) -> String {
        format!("rank {peer}")
    }

    /// Handles one frame from `peer`. Runs inside the wire's poll, so it only updates state
    /// and queues work that needs the wire.
    fn on_frame(&mut self, peer: usize, frame: &[u8]) -> Result<()> {
        let h = Header::decode(frame).map_err(|source| TransportError::Header {
            peer: self.stage_err_peer(peer),
            source,
        })?;
        self.counters.frames_received += 1;
        let payload = &frame[h.ty.header_len()..];
        match h.ty {
            FrameType::Eager | FrameType::Rts => {
                if h.ty == FrameType::Eager && h.len != payload.len() as u64 {
                    return Err(TransportError::Protocol {
                        peer: self.stage_err_peer(peer),
                        what: format!(
                            "eager frame says {} bytes but carries {}",
                            h.len,
                            payload.len()
                        ),
                    });
                }
                let expect = self.recv_seq[peer];
                if h.seq != expect {
                    // Wires deliver in order; a wire that models retries may not. Hold frames
                    // that arrive early until the gap is filled.
                    if h.seq.wrapping_sub(expect) < u32::MAX / 2 {
                        self.reorder[peer].insert(h.seq, frame.to_vec());
                        return Ok(());
                    }
                    return Err(TransportError::Protocol {
                        peer: self.stage_err_peer(peer),
                        what: format!("sequence {} repeated (expected {expect})", h.seq),
                    });
                }
                self.ordered(peer, &h, payload)?;
                self.recv_seq[peer] = expect.wrapping_add(1);
                while let Some(held) = self.reorder[peer].remove(&self.recv_seq[peer]) {
                    let hh = Header::decode(&held).expect("decoded before");
                    self.ordered(peer, &hh, &held[hh.ty.header_len()..])?;
                    self.recv_seq[peer] = self.recv_seq[peer].wrapping_add(1);
                }
                Ok(())
            }
            FrameType::Cts => {
                let idx = self.slot_of(h.a, peer, "CTS")?;
                match &mut self.slots[idx].op {
                    Op::Send(s) if matches!(s.phase, SendPhase::WaitCts) => {
                        s.phase = SendPhase::Streaming {
                            rreq: h.b,
                            raddr: h.c,
                            offset: 0,
                            head_pending: false,
                        };
                        self.streams.push_back(idx as u32);
                        self.counters.rendezvous_copy_sends += 1;
                        Ok(())
                    }
                    _ => Err(TransportError::Protocol {
                        peer: self.stage_err_peer(peer),
                        what: "CTS for a send that is not waiting for one".into(),
                    }),
                }
            }
            FrameType::Data => {
                let idx = self.slot_of(h.a, peer, "DATA")?;
                let (buf, len) = self.receiving(idx, peer, "DATA")?;
                let off = h.b as usize;
                if off.checked_add(payload.len()).is_none_or(|end| end > len) {
                    return Err(TransportError::Protocol {
                        peer: format!("rank {peer}"),
                        what: format!(
                            "DATA at offset {off} of {} bytes overruns a {len}-byte message",
                            payload.len()
                        ),
                    });
                }
                // SAFETY: the receive buffer holds `len` bytes (checked at match time) and
                // stays valid until this request completes.
                unsafe {
                    std::ptr::copy_nonoverlapping(payload.as_ptr(), buf.0.add(off), payload.len())
                };
                self.add_received(idx, peer, payload.len(), "DATA")
            }
            FrameType::Put => {
                let idx = self.slot_of(h.a, peer, "PUT")?;
                match &mut self.slots[idx].op {
                    Op::Send(s)
                        if matches!(s.phase, SendPhase::WaitCts)
                            && s.dst == peer
                            && h.len as usize <= s.len =>
                    {
                        s.phase = SendPhase::Sharing { halves_left: 2 };
                        self.puts.push_back(PutJob {
                            idx: idx as u32,
                            rreq: h.b,
                            dst: h.c,
                            n: h.len as usize,
                        });
                        Ok(())
                    }
                    _ => Err(TransportError::Protocol {
                        peer: format!("rank {peer}"),
                        what: "PUT for a send that is not waiting for one".into(),
                    }),
                }
            }
            FrameType::PutFin => {
                let idx = self.slot_of(h.a, peer, "PUTFIN")?;
                self.receiving(idx, peer, "PUTFIN")?;
                self.add_received(idx, peer, h.len as usize, "PUTFIN")
            }
            FrameType::Fin => {
                let idx = self.slot_of(h.a, peer, "FIN")?;
                let Op::Send(s) = &mut self.slots[idx].op else {
                    return Err(TransportError::Protocol {
                        peer: format!("rank {peer}"),
                        what: "FIN for a request that is not a send".into(),
                    });
                };
                match &mut s.phase {
                    SendPhase::WaitCts => {
                        let st = s.status();
                        self.complete(idx, st);
                        self.counters.rendezvous_single_copy_sends += 1;
                        Ok(())
                    }
                    // The receiver has read the head of a shared single copy.
                    SendPhase::Sharing { .. } => {
                        self.shared_half_done(idx);
                        Ok(())
                    }
                    SendPhase::Streaming { head_pending, .. } if *head_pending => {
                        *head_pending = false;
                        Ok(())
                    }
                    _ => Err(TransportError::Protocol {
                        peer: format!("rank {peer}"),
                        what: "FIN for a send that is not waiting for one".into(),
                    }),
                }
            }
        }
    }

    /// An EAGER or RTS frame in its turn: match it, or keep it as unexpected.
    fn ordered(&mut self, peer: usize, h: &Header, payload: &[u8]) -> Result<()> {
        let tag = h.tag;
        let ctx = h.ctx;
        let found = self
            .posted
            .iter()
            .position(|&i| match &self.slots[i as usize].op {
                Op::Recv(r) => {
                    r.ctx == ctx
                        && r.src.is_none_or(|s| s == peer)
                        && r.tag.is_none_or(|t| t == tag)
                }
                _ => false,
            });
        let single_ok = h.flags & FLAG_SINGLE_COPY_OK != 0;
        match found {
            Some(pos) => {
                let idx = self.posted.remove(pos).expect("position found") as usize;
                match h.ty {
                    FrameType::Eager => self.deliver_eager(idx, peer, tag, payload),
                    _ => self.match_rts(idx, peer, tag, h.len as usize, h.a, h.b, single_ok),
                }
            }
            None => {
                self.counters.unexpected_messages += 1;
                let kind = match h.ty {
                    FrameType::Eager => {
                        let mut v = self.pool.pop().unwrap_or_default();
                        v.clear();
                        v.extend_from_slice(payload);
                        UnexpectedKind::Eager(v)
                    }
                    _ => UnexpectedKind::Rts {
                        len: h.len as usize,
                        sreq: h.a,
                        saddr: h.b,
                        single_ok,
                    },
                };
                self.unexpected.push_back(Unexpected {
                    src: peer,
                    tag,
                    ctx,
                    kind,
                });
                Ok(())
            }
        }
    }

    fn truncated(&self, peer: usize, tag: Tag, len: usize, cap: usize) -> TransportError {
        TransportError::Truncated {
            peer: format!("rank {peer}"),
            tag,
            len: len as u64,
            cap,
            stage: self.stage.clone(),
        }
    }

    fn deliver_eager(&mut self, idx: usize, peer: usize, tag: Tag, payload: &[u8]) -> Result<()> {
        let Op::Recv(r) = &self.slots[idx].op else {
            unreachable!("posted queue holds receives")
        };
        if payload.len() > r.cap {
            return Err(self.truncated(peer, tag, payload.len(), r.cap));
        }
        // SAFETY: the caller of irecv promised `cap` writable bytes until completion.
        unsafe { std::ptr::copy_nonoverlapping(payload.as_ptr(), r.buf.0, payload.len()) };
        self.complete(
            idx,
            Status {
                source: peer,
                tag,
                len: payload.len(),
            },
        );
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn match_rts(
        &mut self,
        idx: usize,
        peer: usize,
        tag: Tag,
        len: usize,
        sreq: u64,
        saddr: u64,
        single_ok: bool,
    ) -> Result<()> {
        let Op::Recv(r) = &mut self.slots[idx].op else {
            unreachable!("posted queue holds receives")
        };
        if len > r.cap {
            let cap = r.cap;
            return Err(self.truncated(peer, tag, len, cap));
        }
        r.phase = RecvPhase::Matched {
            from: peer,
            tag,
            len,
            sreq,
            saddr,
            single_ok,
        };
        self.matched.push_back(idx as u32);
        Ok(())
    }
}

impl Core {
    /// Posts a receive: matched at once against the unexpected queue, else queued.
    fn post_recv(
        &mut self,
        buf: *mut u8,
        cap: usize,
        src: Option<usize>,
        tag: Option<Tag>,
        ctx: u8,
    ) -> Result<ReqId> {
        let st = &mut self.st;
        let id = st.alloc(Op::Recv(RecvOp {
            buf: Ptr(buf),
            cap,
            src,
            tag,
            ctx,
            phase: RecvPhase::Posted,
        }));
        let idx = (id.0 & 0xffff_ffff) as usize;
        let found = st.unexpected.iter().position(|u| {
            u.ctx == ctx && src.is_none_or(|s| s == u.src) && tag.is_none_or(|t| t == u.tag)
        });
        match found {
            None => st.posted.push_back(idx as u32),
            Some(pos) => {
                let u = st.unexpected.remove(pos).expect("position found");
                match u.kind {
                    UnexpectedKind::Eager(v) => {
                        let r = st.deliver_eager(idx, u.src, u.tag, &v);
                        st.pool.push(v);
                        r?;
                    }
                    UnexpectedKind::Rts {
                        len,
                        sreq,
                        saddr,
                        single_ok,
                    } => {
                        st.match_rts(idx, u.src, u.tag, len, sreq, saddr, single_ok)?;
                        self.start_matched()?;
                    }
                }
            }
        }
        Ok(id)
    }

    /// One pass: control frames, first frames, rendezvous data, then incoming frames.
    /// Returns whether anything happened.
    #[inline]
    fn progress(&mut self) -> Result<bool> {
        self.progress_inner()
            .map_err(|e| with_stage(e, &self.st.stage))
    }

    #[inline]
    fn progress_inner(&mut self) -> Result<bool> {
        let mut active = false;
        if self.st.ctrl_count > 0 {
            active |= self.flush_ctrl()?;
        }
        if self.st.first_count > 0 {
            active |= self.flush_first()?;
        }
        if !self.st.streams.is_empty() {
            active |= self.stream()?;
        }
        let st = &mut self.st;
        let n = self
            .wire
            .poll(&mut |peer, frame| st.on_frame(peer, frame))?;
        active |= n > 0;
        if !self.st.matched.is_empty() {
            self.start_matched()?;
            self.flush_ctrl()?;
            active = true;
        }
        if !self.st.puts.is_empty() {
            self.start_puts()?;
            self.flush_ctrl()?;
            active = true;
        }
        Ok(active)
    }

    fn flush_ctrl(&mut self) -> Result<bool> {
        let mut any = false;
        for peer in 0..self.st.size {
            while let Some(c) = self.st.ctrl[peer].front().copied() {
                let mut h;
                let kind = match c {
                    Ctrl::Cts {
                        sreq,
                        rreq,
                        len,
                        raddr,
                    } => {
                        h = Header::new(FrameType::Cts);
                        h.len = len;
                        h.a = sreq;
                        h.b = rreq;
                        h.c = raddr;
                        FragKind::Cts {
                            rndv: rreq,
                            len,
                            recv_addr: raddr,
                        }
                    }
                    Ctrl::Fin { sreq } => {
                        h = Header::new(FrameType::Fin);
                        h.a = sreq;
                        FragKind::Fin
                    }
                    Ctrl::Put { sreq, rreq, dst, n } => {
                        h = Header::new(FrameType::Put);
                        h.len = n;
                        h.a = sreq;
                        h.b = rreq;
                        h.c = dst;
                        FragKind::Put { len: n }
                    }
                    Ctrl::PutFin { rreq, n } => {
                        h = Header::new(FrameType::PutFin);
                        h.len = n;
                        h.a = rreq;
                        FragKind::PutFin
                    }
                };
                h.src = self.st.rank as u32;
                let (hb, hn) = encode(&h);
                if !self.wire.try_send(peer, kind, &hb[..hn], &[])? {
                    break;
                }
                self.st.counters.frames_sent += 1;
                self.st.ctrl[peer].pop_front();
                self.st.ctrl_count -= 1;
                any = true;
            }
        }
        Ok(any)
    }

    /// Emits the EAGER or RTS frame of `idx`; false if the wire had no room.
    fn emit_first(&mut self, idx: usize) -> Result<bool> {
        let Op::Send(s) = &self.st.slots[idx].op else {
            unreachable!("send queue holds sends")
        };
        let eager = s.len <= self.st.cfg.eager_limit;
        let mut h = Header::new(if eager {
            FrameType::Eager
        } else {
            FrameType::Rts
        });
        h.ctx = s.ctx;
        h.tag = s.tag;
        h.seq = s.seq;
        h.src = self.st.rank as u32;
        h.len = s.len as u64;
        let dst = s.dst;
        let (payload, kind): (&[u8], FragKind) = if eager {
            // SAFETY: the caller of isend promised `len` readable bytes until completion.
            let p = unsafe { std::slice::from_raw_parts(s.buf.0, s.len) };
            (p, FragKind::Eager { len: s.len as u64 })
        } else {
            h.a = ReqId(((self.st.slots[idx].gen as u64) << 32) | idx as u64).0;
            h.b = s.buf.0 as u64;
            if self.st.wire_single_copy && self.st.cfg.single_copy != SingleCopy::Off {
                h.flags |= FLAG_SINGLE_COPY_OK;
            }
            (&[], FragKind::Rts { len: s.len as u64 })
        };
        let (hb, hn) = encode(&h);
        if !self.wire.try_send(dst, kind, &hb[..hn], payload)? {
            return Ok(false);
        }
        self.st.counters.frames_sent += 1;
        self.st.counters.bytes_sent += payload.len() as u64;
        let Op::Send(s) = &mut self.st.slots[idx].op else {
            unreachable!()
        };
        if eager {
            let st = s.status();
            self.st.complete(idx, st);
        } else {
            s.phase = SendPhase::WaitCts;
        }
        Ok(true)
    }

    fn flush_first(&mut self) -> Result<bool> {
        let mut any = false;
        for peer in 0..self.st.size {
            while let Some(&idx) = self.st.pending_first[peer].front() {
                if !self.emit_first(idx as usize)? {
                    break;
                }
                self.st.pending_first[peer].pop_front();
                self.st.first_count -= 1;
                any = true;
            }
        }
        Ok(any)
    }

    /// Sends DATA fragments of active rendezvous transfers. Round robin gives each transfer one
    /// fragment per turn (as MPI libraries interleave pending sends; with OSU's single window
    /// buffer it keeps the same buffer region hot in cache for the whole window); FIFO finishes
    /// one transfer before starting the next. A peer whose wire is full is skipped until the
    /// next pass.
    fn stream(&mut self) -> Result<bool> {
        if self.st.streams.is_empty() {
            return Ok(false);
        }
        let round_robin = self.st.cfg.schedule == Schedule::RoundRobin;
        let mut sent = 0usize;
        self.st.blocked_scratch.iter_mut().for_each(|b| *b = false);
        let frag = self
            .st
            .cfg
            .frag_size
            .min(self.st.max_frame - FrameType::Data.header_len());
        let mut i = 0;
        let mut moved = false;
        while sent < SEND_BUDGET && !self.st.streams.is_empty() {
            if i >= self.st.streams.len() {
                if !moved {
                    break;
                }
                i = 0;
                moved = false;
            }
            let idx = self.st.streams[i] as usize;
            let Op::Send(s) = &self.st.slots[idx].op else {
                unreachable!("streams hold sends")
            };
            let dst = s.dst;
            if self.st.blocked_scratch[dst] {
                i += 1;
                continue;
            }
            let SendPhase::Streaming {
                rreq,
                raddr,
                offset,
                head_pending,
            } = s.phase
            else {
                unreachable!("streams hold streaming sends")
            };
            let n = frag.min(s.len - offset);
            let last = offset + n == s.len;
            let mut h = Header::new(FrameType::Data);
            h.src = self.st.rank as u32;
            h.len = s.len as u64;
            h.a = rreq;
            h.b = offset as u64;
            // SAFETY: isend's caller promised `len` readable bytes until completion.
            let payload = unsafe { std::slice::from_raw_parts(s.buf.0.add(offset), n) };
            let kind = FragKind::Data {
                rndv: rreq,
                offset: offset as u64,
                len: n as u64,
                last,
                send_addr: s.buf.0 as u64 + offset as u64,
                recv_addr: raddr + offset as u64,
            };
            let (hb, hn) = encode(&h);
            if !self.wire.try_send(dst, kind, &hb[..hn], payload)? {
                self.st.blocked_scratch[dst] = true;
                i += 1;
                continue;
            }
            sent += 1;
            moved = true;
            self.st.counters.frames_sent += 1;
            self.st.counters.bytes_sent += n as u64;
            let Op::Send(s) = &mut self.st.slots[idx].op else {
                unreachable!()
            };
            if last && head_pending {
                s.phase = SendPhase::Sharing { halves_left: 1 };
                self.st.streams.remove(i);
            } else if last {
                let st = s.status();
                self.st.complete(idx, st);
                self.st.streams.remove(i);
            } else {
                s.phase = SendPhase::Streaming {
                    rreq,
                    raddr,
                    offset: offset + n,
                    head_pending,
                };
                if round_robin {
                    i += 1;
                }
            }
        }
        Ok(sent > 0)
    }

    /// Chooses the protocol for receives that matched an RTS: single copy when offered,
    /// allowed and (on auto) preferred by the wire; otherwise answer CTS for copying.
    fn start_matched(&mut self) -> Result<()> {
        while let Some(idx) = self.st.matched.pop_front() {
            let idx = idx as usize;
            let id = ReqId(((self.st.slots[idx].gen as u64) << 32) | idx as u64).0;
            let Op::Recv(r) = &mut self.st.slots[idx].op else {
                unreachable!("matched holds receives")
            };
            let RecvPhase::Matched {
                from,
                tag,
                len,
                sreq,
                saddr,
                single_ok,
            } = r.phase
            else {
                unreachable!("matched holds matched receives")
            };
            let buf = r.buf;
            let want_single = single_ok
                && !self.st.single_copy_refused
                && match self.st.cfg.single_copy {
                    SingleCopy::On => true,
                    SingleCopy::Off => false,
                    SingleCopy::Auto => {
                        self.wire.preferred_protocol(from, len as u64) == Protocol::SingleCopy
                    }
                };
            // The sender's share, rounded down to whole pages so both halves start aligned.
            let share = if want_single && self.st.single_copy_proven && len >= SHARE_MIN {
                (len * self.st.cfg.single_copy_share as usize / 100) & !4095
            } else {
                0
            };
            if share > 0 {
                let head = len - share;
                self.st.start_receiving(idx, from, tag, len);
                self.st.ctrl[from].push_back(Ctrl::Put {
                    sreq,
                    rreq: id,
                    dst: buf.0 as u64 + head as u64,
                    n: share as u64,
                });
                self.st.ctrl_count += 1;
                // Send the PUT before reading, so both copies run at once.
                self.flush_ctrl()?;
                // SAFETY: the receive buffer holds at least `len` bytes (checked at match);
                // the sender writes only past `head`.
                let local = unsafe { std::slice::from_raw_parts_mut(buf.0, head) };
                match self.wire.get(from, saddr, local)? {
                    GetOutcome::Done => {}
                    GetOutcome::Refused => {
                        return Err(TransportError::Protocol {
                            peer: format!("rank {from}"),
                            what: "the kernel refused a single copy after allowing one".into(),
                        })
                    }
                }
                // The sender may reuse its buffer only once the head is read, too.
                self.st.ctrl[from].push_back(Ctrl::Fin { sreq });
                self.st.ctrl_count += 1;
                self.st.add_received(idx, from, head, "single copy")?;
                continue;
            }
            if want_single {
                // SAFETY: the receive buffer holds at least `len` bytes (checked at match).
                let local = unsafe { std::slice::from_raw_parts_mut(buf.0, len) };
                match self.wire.get(from, saddr, local)? {
                    GetOutcome::Done => {
                        self.st.single_copy_proven = true;
                        self.st.ctrl[from].push_back(Ctrl::Fin { sreq });
                        self.st.ctrl_count += 1;
                        self.st.complete(
                            idx,
                            Status {
                                source: from,
                                tag,
                                len,
                            },
                        );
                        continue;
                    }
                    GetOutcome::Refused => {
                        tracing::warn!(
                            "single copy from rank {from} refused by the kernel; copying instead"
                        );
                        self.st.single_copy_refused = true;
                        self.st.counters.single_copy_fallbacks += 1;
                    }
                }
            }
            self.st.start_receiving(idx, from, tag, len);
            self.st.ctrl[from].push_back(Ctrl::Cts {
                sreq,
                rreq: id,
                len: len as u64,
                raddr: buf.0 as u64,
            });
            self.st.ctrl_count += 1;
        }
        Ok(())
    }
}

impl Core {
    /// Carries out the PUTs received in the last poll: writes each send's tail into the
    /// receiver's buffer and reports it, or, if the wire cannot, streams the tail instead.
    fn start_puts(&mut self) -> Result<()> {
        while let Some(job) = self.st.puts.pop_front() {
            let idx = job.idx as usize;
            let Op::Send(s) = &self.st.slots[idx].op else {
                unreachable!("puts name sends")
            };
            let (peer, len) = (s.dst, s.len);
            let head = len - job.n;
            // SAFETY: isend's caller promised `len` readable bytes until completion.
            let tail = unsafe { std::slice::from_raw_parts(s.buf.0.add(head), job.n) };
            match self.wire.put(peer, job.dst, tail)? {
                GetOutcome::Done => {
                    self.st.ctrl[peer].push_back(Ctrl::PutFin {
                        rreq: job.rreq,
                        n: job.n as u64,
                    });
                    self.st.ctrl_count += 1;
                    self.st.shared_half_done(idx);
                    self.st.counters.rendezvous_single_copy_sends += 1;
                    self.st.counters.shared_single_copy_sends += 1;
                }
                GetOutcome::Refused => {
                    let Op::Send(s) = &mut self.st.slots[idx].op else {
                        unreachable!()
                    };
                    let SendPhase::Sharing { halves_left } = s.phase else {
                        unreachable!("a PUT puts its send in the sharing phase")
                    };
                    s.phase = SendPhase::Streaming {
                        rreq: job.rreq,
                        raddr: job.dst - head as u64,
                        offset: head,
                        head_pending: halves_left == 2,
                    };
                    self.st.streams.push_back(idx as u32);
                    self.st.counters.single_copy_fallbacks += 1;
                }
            }
        }
        Ok(())
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

    fn virtual_time(&self) -> bool {
        self.clock.is_virtual()
    }

    unsafe fn isend(
        &self,
        buf: *const u8,
        len: usize,
        dst: usize,
        tag: Tag,
        ctx: Context,
    ) -> Result<ReqId> {
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
        h.ctx = ctx as u8;
        h.tag = tag;
        h.seq = seq;
        h.src = self.rank as u32;
        h.len = len as u64;
        if dst == self.rank {
            // To self: deliver as one eager frame whatever the size; no wire involved.
            let (hb, hn) = encode(&h);
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
                let (hb, hn) = encode(&h);
                let payload = std::slice::from_raw_parts(buf, len);
                let kind = FragKind::Eager { len: len as u64 };
                let sent = core
                    .wire
                    .try_send(dst, kind, &hb[..hn], payload)
                    .map_err(|e| with_stage(e, &core.st.stage))?;
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
            ctx: ctx as u8,
            seq,
            phase: SendPhase::Queued,
        }));
        let idx = (id.0 & 0xffff_ffff) as usize;
        if !eager
            && core.st.pending_first[dst].is_empty()
            && core
                .emit_first(idx)
                .map_err(|e| with_stage(e, &core.st.stage))?
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
        core.post_recv(buf, cap, src, tag, ctx as u8)
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
        let ctx = ctx as u8;
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
            let polled = core.wire.poll(&mut |peer, frame| {
                if got.is_none() {
                    if let Some(status) = st.fast_match(peer, frame, buf, cap, src, tag, ctx)? {
                        got = Some(status);
                        return Ok(());
                    }
                }
                st.on_frame(peer, frame)
            });
            let n = polled.map_err(|e| with_stage(e, &core.st.stage))?;
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
        let mut status = None;
        self.block_on(
            core,
            |st| {
                status = st.take_done(id)?;
                Ok(status.is_some())
            },
            |st| describe_pending(st, &[id]),
        )?;
        Ok(status.expect("block_on returned on completion"))
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
        let core = &mut *guard;
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
        d
    }
}

/// What a wait is waiting for: the peer it depends on (None: any), and words for errors.
struct Pending {
    rank: Option<usize>,
    peer: String,
    what: String,
}

/// The first still-pending request among `reqs`, for liveness checks and timeout messages.
fn describe_pending(st: &State, reqs: &[ReqId]) -> Pending {
    for r in reqs {
        if *r == ReqId::DONE {
            continue;
        }
        let (idx, gen) = req_index(r.0);
        let Some(slot) = st.slots.get(idx).filter(|s| s.gen == gen) else {
            continue;
        };
        match &slot.op {
            Op::Send(s) => {
                let what = match s.phase {
                    SendPhase::Queued => "room on the wire for a send",
                    SendPhase::WaitCts => "the receiver to accept a rendezvous send",
                    SendPhase::Streaming { .. } => "room on the wire for rendezvous data",
                    SendPhase::Sharing { .. } => {
                        "the receiver to finish reading a shared single copy"
                    }
                };
                return Pending {
                    rank: Some(s.dst),
                    peer: format!("rank {}", s.dst),
                    what: format!("{what} of {} bytes with tag {}", s.len, s.tag),
                };
            }
            Op::Recv(rc) => {
                let rank = match (&rc.phase, rc.src) {
                    (RecvPhase::Receiving { from, .. }, _) => Some(*from),
                    (_, s) => s,
                };
                let peer = rank
                    .map(|r| format!("rank {r}"))
                    .unwrap_or_else(|| "any rank".into());
                let what = match rc.phase {
                    RecvPhase::Receiving { len, got, .. } => {
                        format!("rendezvous data ({got} of {len} bytes arrived)")
                    }
                    _ => format!(
                        "a message with tag {} ({} bytes of room)",
                        rc.tag
                            .map(|t| t.to_string())
                            .unwrap_or_else(|| "any".into()),
                        rc.cap
                    ),
                };
                return Pending { rank, peer, what };
            }
            _ => continue,
        }
    }
    Pending {
        rank: None,
        peer: "a peer".into(),
        what: "a request".into(),
    }
}

#[cfg(test)]
mod tests;
