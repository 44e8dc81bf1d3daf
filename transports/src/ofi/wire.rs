//! The ofi wire: the engine's frames over libfabric's untagged messages (`fi_send`/`fi_recv`,
//! `fi_inject` for the smallest), large messages read in place with `fi_read` where the
//! provider has RMA: Open MPI's btl/ofi, under fabbench's own matching and protocols.
//!
//! A frame travels as an 8-byte wire prefix (the sender's rank and its per-peer sequence
//! number, little-endian), the engine's header and payload, and on an RTS that may be read in
//! place a 16-byte trailer with the registration's key and base. The sequence lets the
//! receiver hand frames to the engine in each peer's order even where a provider completes
//! them out of order (a later small message overtaking a large one the provider moves by its
//! own rendezvous); an early frame waits, copied, for the ones before it.
//!
//! Receives are posted ahead into fixed slots, each reposted at the poll after its frame was
//! handed on (off a ping-pong's round trip); sends go from a pool of bounce slots released by
//! their completions. `-FI_EAGAIN` on a post means "progress and retry" (the first send of
//! every connection gets it on tcp;ofi_rxm, shm and net: the connection is made inside
//! `fi_cq_read`), so it becomes `Ok(false)` and the engine polls. Frames that arrive while the
//! wire waits for its own read or write are copied aside and their slots reposted at once.

use std::collections::{HashMap, VecDeque};
use std::ffi::c_void;
use std::time::{Duration, Instant};

use bench_core::clock::{Clock, RealClock};

use super::endpoint::{CqError, Endpoint};
use super::ffi::*;
use super::mr::{Cache, Rules};
use crate::error::{Result, TransportError};
use crate::header::{FrameType, Header, FLAG_SINGLE_COPY_OK};
use crate::order::HostOrder;
use crate::wire::{FragKind, GetOutcome, Protocol, Wire, WireCaps};

/// Bytes before the engine's header: sender rank, sequence.
const PREFIX: usize = 8;
/// Bytes after an RTS header that may be read in place: key, base.
const TRAILER: usize = 16;
/// Registrations kept when no transfer uses them.
const MR_CACHE_ENTRIES: usize = 256;

/// What an operation's context names.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Op {
    Recv(u32),
    Send(u32),
    Rma,
}

/// An operation's context: room the provider may write (FI_CONTEXT2 is 64 bytes), then ours.
#[repr(C)]
struct Ctx {
    provider: [usize; 8],
    op: Op,
}

/// Settings the wire takes.
pub struct WireSettings {
    pub max_frame: usize,
    pub inject_size: usize,
    pub cq_batch: usize,
    pub rx_slots: usize,
    pub tx_slots: usize,
    pub timeout: Duration,
    pub order: HostOrder,
    pub single_copy: bool,
}

pub struct OfiWire {
    ep: Endpoint,
    clock: RealClock,
    s: WireSettings,
    /// Bytes of one slot: prefix, largest frame, trailer.
    slot: usize,
    rx: Vec<u8>,
    tx: Vec<u8>,
    rx_ctx: Box<[Ctx]>,
    tx_ctx: Box<[Ctx]>,
    read_ctx: Box<Ctx>,
    tx_free: Vec<u32>,
    /// Receive slots handed on and not yet given back to the provider.
    unposted: Vec<u32>,
    /// Where a message sent with fi_inject is put together (the provider copies it at once),
    /// allocated once at the largest inject.
    inject_buf: Vec<u8>,
    /// Descriptors of the slot pools, where the provider wants local buffers registered.
    rx_desc: usize,
    tx_desc: usize,
    pool_regs: Vec<super::mr::Registered>,
    cache: Cache,
    /// Frames (prefix included) that arrived while the wire waited for something else, copied
    /// out so their receive slots went back to the provider at once: a provider that carries a
    /// read's reply behind the frames on one connection (net) would otherwise wait for a
    /// receive slot that only the awaited read frees.
    stashed: VecDeque<Vec<u8>>,
    batch: Vec<FiCqTaggedEntry>,
    next_seq_out: Vec<u32>,
    peer_order: super::order::PeerOrder,
    /// Keys of buffers peers offered to be read: (peer, address) to (key, base, RTSs not yet
    /// read). A window of sends from one buffer offers it many times, under one key.
    offered: HashMap<(usize, u64), (u64, u64, u32)>,
    /// Keys of receive buffers peers asked this rank to write into (a PUT): (peer, address)
    /// to (key, base).
    writable: HashMap<(usize, u64), (u64, u64, u32)>,
    /// The region each of this rank's RTS (by its send request) or PUT (by its receive
    /// request) registered, until the FIN or PUTFIN that ends the peer's use of it.
    lent: HashMap<u64, u64>,
    read_done: Option<std::result::Result<(), CqError>>,
    pub reads: u64,
    pub writes: u64,
    pub injects: u64,
}

// SAFETY: the wire is driven under the engine's lock only; its raw pointers are libfabric
// objects and buffers it owns.
unsafe impl Send for OfiWire {}

impl OfiWire {
    pub fn new(ep: Endpoint, s: WireSettings) -> Result<OfiWire> {
        if ep.calls.send.is_none() || ep.calls.recv.is_none() {
            return Err(TransportError::Config(format!(
                "ofi: provider {} has no untagged send and receive (try ofi.matching=provider)",
                ep.entry.provider
            )));
        }
        let slot = PREFIX + s.max_frame + TRAILER;
        if slot > ep.entry.max_msg_size {
            return Err(TransportError::Config(format!(
                "ofi: provider {}'s largest message is {} bytes, below a {}-byte frame; lower eager_limit and frag_size",
                ep.entry.provider, ep.entry.max_msg_size, slot
            )));
        }
        let rules = Rules {
            mode: ep.entry.mr_mode,
        };
        let mut w = OfiWire {
            clock: RealClock::new(),
            slot,
            rx: vec![0u8; slot * s.rx_slots],
            tx: vec![0u8; slot * s.tx_slots],
            rx_ctx: (0..s.rx_slots)
                .map(|i| Ctx {
                    provider: [0; 8],
                    op: Op::Recv(i as u32),
                })
                .collect(),
            tx_ctx: (0..s.tx_slots)
                .map(|i| Ctx {
                    provider: [0; 8],
                    op: Op::Send(i as u32),
                })
                .collect(),
            read_ctx: Box::new(Ctx {
                provider: [0; 8],
                op: Op::Rma,
            }),
            tx_free: (0..s.tx_slots as u32).rev().collect(),
            unposted: Vec::with_capacity(s.rx_slots),
            inject_buf: vec![0u8; s.inject_size],
            rx_desc: 0,
            tx_desc: 0,
            pool_regs: Vec::new(),
            cache: Cache::new(rules, MR_CACHE_ENTRIES),
            stashed: VecDeque::new(),
            batch: vec![FiCqTaggedEntry::default(); s.cq_batch.max(1)],
            next_seq_out: vec![0; ep.size],
            peer_order: super::order::PeerOrder::new(ep.size),
            offered: HashMap::new(),
            writable: HashMap::new(),
            lent: HashMap::new(),
            read_done: None,
            reads: 0,
            writes: 0,
            injects: 0,
            s,
            ep,
        };
        if rules.local() {
            // The slot pools are registered once, whole.
            let mut reg = w.ep.registrar();
            let access = FI_SEND | FI_RECV;
            for (pool, desc) in [(0, &mut w.rx_desc), (1, &mut w.tx_desc)] {
                let buf = if pool == 0 { &w.rx } else { &w.tx };
                let r = super::mr::Registrar::register(
                    &mut reg,
                    buf.as_ptr() as usize,
                    buf.len(),
                    access,
                    1 << 62 | pool,
                )
                .map_err(|e| TransportError::Config(format!("ofi: {e}")))?;
                *desc = r.desc;
                w.pool_regs.push(r);
            }
        }
        for i in 0..w.s.rx_slots {
            w.post_recv(i)?;
        }
        Ok(w)
    }

    fn post_recv(&mut self, i: usize) -> Result<()> {
        let recv = self.ep.calls.recv.expect("checked at set-up");
        let buf = self.rx[i * self.slot..].as_mut_ptr();
        let ctx = &mut self.rx_ctx[i] as *mut Ctx as *mut c_void;
        let start = Instant::now();
        loop {
            // SAFETY: the slot stays allocated and unused until its completion.
            let rc = unsafe {
                recv(
                    self.ep.ep,
                    buf as *mut c_void,
                    self.slot,
                    self.rx_desc as *mut c_void,
                    FI_ADDR_UNSPEC,
                    ctx,
                )
            };
            if rc == 0 {
                return Ok(());
            }
            if rc != -FI_EAGAIN {
                return Err(self.op_failed(None, "posting a receive", rc));
            }
            self.progress_stash()?;
            if start.elapsed() > self.s.timeout {
                return Err(TransportError::Config(
                    "ofi: the provider took no receive within the timeout".into(),
                ));
            }
        }
    }

    fn op_failed(&self, peer: Option<usize>, what: &str, rc: isize) -> TransportError {
        let text = self.ep.lib.strerror(rc);
        match peer {
            Some(p) => TransportError::Protocol {
                peer: self.peer_name(p),
                what: format!("{what} failed: {text}"),
            },
            None => TransportError::Config(format!("ofi: {what} failed: {text}")),
        }
    }

    /// Gives the provider back the receive slots whose frames were handed on.
    fn repost(&mut self) -> Result<()> {
        while let Some(i) = self.unposted.pop() {
            self.post_recv(i as usize)?;
        }
        Ok(())
    }

    /// Reads completions (progressing the provider): sends and reads are handled at once,
    /// received frames copied into the stash and their slots reposted.
    fn progress_stash(&mut self) -> Result<usize> {
        self.repost()?;
        let n = self.read_cq()?;
        for k in 0..n {
            let c = self.batch[k];
            if self.retire(&c) {
                continue;
            }
            if let Some(Op::Recv(i)) = self.op_of(c.op_context as usize) {
                let start = i as usize * self.slot;
                let len = c.len.min(self.slot);
                self.stashed.push_back(self.rx[start..start + len].to_vec());
                self.post_recv(i as usize)?;
            }
        }
        Ok(n)
    }

    fn read_cq(&mut self) -> Result<usize> {
        match self.ep.read_completions(&mut self.batch) {
            Ok(n) => Ok(n),
            Err(e) => Err(self.cq_failed(e)),
        }
    }

    fn cq_failed(&mut self, e: CqError) -> TransportError {
        let op = self.op_of(e.context);
        if op == Some(Op::Rma) {
            self.read_done = Some(Err(e.clone()));
        }
        let what = match op {
            Some(Op::Recv(_)) => "a receive",
            Some(Op::Send(_)) => "a send",
            Some(Op::Rma) => "a read in place",
            None => "an operation",
        };
        TransportError::Config(format!(
            "ofi: {what} on provider {} failed: {}",
            self.ep.entry.provider, e.text
        ))
    }

    fn op_of(&self, context: usize) -> Option<Op> {
        if context == 0 {
            return None;
        }
        let within = |ctxs: &[Ctx]| {
            let start = ctxs.as_ptr() as usize;
            (context >= start && context < start + std::mem::size_of_val(ctxs)).then(|| {
                // SAFETY: a pointer into the context array, at an element's start.
                unsafe { (*(context as *const Ctx)).op }
            })
        };
        if context == &*self.read_ctx as *const Ctx as usize {
            return Some(Op::Rma);
        }
        within(&self.rx_ctx).or_else(|| within(&self.tx_ctx))
    }

    /// Handles a send or read completion at once; false for a receive (the caller hands it on).
    fn retire(&mut self, c: &FiCqTaggedEntry) -> bool {
        match self.op_of(c.op_context as usize) {
            Some(Op::Send(i)) => {
                self.tx_free.push(i);
                true
            }
            Some(Op::Rma) => {
                self.read_done = Some(Ok(()));
                true
            }
            _ => false,
        }
    }

    /// Hands one received slot's frame on in its peer's order, then reposts the slot.
    fn deliver(
        &mut self,
        i: usize,
        len: usize,
        sink: &mut dyn FnMut(usize, &[u8]) -> Result<()>,
    ) -> Result<usize> {
        let start = i * self.slot;
        let len = len.min(self.slot);
        // SAFETY: the slot is ours until reposted below; nothing else touches the pool meanwhile.
        let msg: &[u8] = unsafe { std::slice::from_raw_parts(self.rx.as_ptr().add(start), len) };
        let handed = self.accept(msg, sink)?;
        // Reposted at the next poll, not now: a ping-pong's reply is sent before that, so the
        // repost (a call into the provider) is off the round trip.
        self.unposted.push(i as u32);
        Ok(handed)
    }

    /// Hands one message's frame on if it is its peer's next, with any early ones it frees;
    /// keeps it (copied) if frames before it are still to come.
    fn accept(
        &mut self,
        msg: &[u8],
        sink: &mut dyn FnMut(usize, &[u8]) -> Result<()>,
    ) -> Result<usize> {
        if msg.len() < PREFIX {
            return Err(TransportError::Config(format!(
                "ofi: a {}-byte message is no fabbench frame",
                msg.len()
            )));
        }
        let peer = u32::from_le_bytes(msg[..4].try_into().expect("4 bytes")) as usize;
        let seq = u32::from_le_bytes(msg[4..8].try_into().expect("4 bytes"));
        if peer >= self.ep.size {
            return Err(TransportError::Config(format!(
                "ofi: a frame names rank {peer} of {}",
                self.ep.size
            )));
        }
        if !self.peer_order.arrived(peer, seq, &msg[PREFIX..]) {
            return Ok(0);
        }
        let frame = self.inspect(peer, &msg[PREFIX..])?;
        sink(peer, frame)?;
        let mut handed = 1;
        while let Some(f) = self.peer_order.handed(peer) {
            let f = self.inspect(peer, &f)?.to_vec();
            sink(peer, &f)?;
            handed += 1;
        }
        Ok(handed)
    }

    /// Notes what the wire itself needs from a frame, and strips its trailer: an RTS's key for
    /// a read in place; a FIN's release of the registration an RTS of this rank lent.
    fn inspect<'f>(&mut self, peer: usize, frame: &'f [u8]) -> Result<&'f [u8]> {
        match frame.first().copied() {
            Some(t) if t == FrameType::Rts as u8 => {
                let h = Header::decode_as(self.s.order, frame).map_err(|e| {
                    TransportError::Protocol {
                        peer: self.peer_name(peer),
                        what: format!("sent a bad RTS: {e}"),
                    }
                })?;
                if h.flags & FLAG_SINGLE_COPY_OK != 0 && self.s.single_copy {
                    let n = frame.len();
                    if n < FrameType::Rts.header_len() + TRAILER {
                        return Err(TransportError::Protocol {
                            peer: self.peer_name(peer),
                            what: "sent an RTS without its registration key".into(),
                        });
                    }
                    let key = u64::from_le_bytes(frame[n - 16..n - 8].try_into().expect("8"));
                    let base = u64::from_le_bytes(frame[n - 8..].try_into().expect("8"));
                    let e = self.offered.entry((peer, h.b)).or_insert((key, base, 0));
                    // The latest registration of the address is the live one.
                    *e = (key, base, e.2 + 1);
                    return Ok(&frame[..n - TRAILER]);
                }
                Ok(frame)
            }
            Some(t) if t == FrameType::Put as u8 && self.s.single_copy => {
                let h = Header::decode_as(self.s.order, frame).map_err(|e| {
                    TransportError::Protocol {
                        peer: self.peer_name(peer),
                        what: format!("sent a bad PUT: {e}"),
                    }
                })?;
                let n = frame.len();
                if n < FrameType::Put.header_len() + TRAILER {
                    return Err(TransportError::Protocol {
                        peer: self.peer_name(peer),
                        what: "sent a PUT without its registration key".into(),
                    });
                }
                let key = u64::from_le_bytes(frame[n - 16..n - 8].try_into().expect("8"));
                let base = u64::from_le_bytes(frame[n - 8..].try_into().expect("8"));
                let e = self.writable.entry((peer, h.c)).or_insert((key, base, 0));
                *e = (key, base, e.2 + 1);
                Ok(&frame[..n - TRAILER])
            }
            Some(t)
                if (t == FrameType::Fin as u8 || t == FrameType::PutFin as u8)
                    && !self.lent.is_empty() =>
            {
                if let Ok(h) = Header::decode_as(self.s.order, frame) {
                    self.release_lent(h.a);
                }
                Ok(frame)
            }
            _ => Ok(frame),
        }
    }

    fn post_send(&mut self, peer: usize, total: usize) -> Result<Option<u32>> {
        let Some(i) = self.tx_free.pop() else {
            return Ok(None);
        };
        let send = self.ep.calls.send.expect("checked at set-up");
        let buf = self.tx[i as usize * self.slot..].as_ptr();
        let ctx = &mut self.tx_ctx[i as usize] as *mut Ctx as *mut c_void;
        // SAFETY: the slot holds `total` bytes and stays ours until its completion.
        let rc = unsafe {
            send(
                self.ep.ep,
                buf as *const c_void,
                total,
                self.tx_desc as *mut c_void,
                self.ep.addrs[peer],
                ctx,
            )
        };
        if rc == 0 {
            return Ok(Some(i));
        }
        self.tx_free.push(i);
        if rc == -FI_EAGAIN {
            return Ok(None);
        }
        Err(self.op_failed(Some(peer), "a send", rc))
    }

    /// Registers the buffer an RTS offers to be read (or a PUT asks to be written), and
    /// returns the trailer naming it and the request it is lent under.
    fn lend(&mut self, header: &[u8]) -> Result<Option<([u8; TRAILER], u64)>> {
        let h = Header::decode_as(self.s.order, header)
            .map_err(|e| TransportError::Config(format!("ofi: {e}")))?;
        let (addr, request, access) = match h.ty {
            FrameType::Rts if h.flags & FLAG_SINGLE_COPY_OK != 0 => (h.b, h.a, FI_REMOTE_READ),
            FrameType::Put => (h.c, h.b, FI_REMOTE_WRITE),
            _ => return Ok(None),
        };
        if !self.s.single_copy {
            return Ok(None);
        }
        let mut reg = self.ep.registrar();
        let region = self
            .cache
            .acquire(&mut reg, addr as usize, h.len as usize, access)
            .map_err(|e| TransportError::Config(format!("ofi: {e}")))?;
        self.lent.insert(request, region.id);
        let mut t = [0u8; TRAILER];
        t[..8].copy_from_slice(&region.key.to_le_bytes());
        t[8..].copy_from_slice(&region.base.to_le_bytes());
        Ok(Some((t, request)))
    }

    /// The peer is done with the region `request` lent (its FIN or PUTFIN came, or the frame
    /// that offered it was never sent).
    fn release_lent(&mut self, request: u64) {
        if let Some(id) = self.lent.remove(&request) {
            let mut reg = self.ep.registrar();
            self.cache.done(&mut reg, id);
        }
    }
}

/// Writes one message as the wire carries it into `out` (exactly its length): the prefix,
/// the engine's header and payload, and the trailer if any.
fn write_frame(
    out: &mut [u8],
    rank: usize,
    seq: u32,
    header: &[u8],
    payload: &[u8],
    trailer: Option<&[u8; TRAILER]>,
) {
    out[..4].copy_from_slice(&(rank as u32).to_le_bytes());
    out[4..8].copy_from_slice(&seq.to_le_bytes());
    let (h, rest) = out[PREFIX..].split_at_mut(header.len());
    h.copy_from_slice(header);
    let (p, t) = rest.split_at_mut(payload.len());
    p.copy_from_slice(payload);
    if let Some(trailer) = trailer {
        t.copy_from_slice(trailer);
    }
}

impl Wire for OfiWire {
    fn name(&self) -> &str {
        "ofi"
    }

    fn caps(&self) -> WireCaps {
        WireCaps {
            max_frame: self.s.max_frame,
            single_copy: self.s.single_copy,
            virtual_time: false,
            models_rx_thread: false,
            places_data: false,
        }
    }

    fn rank(&self) -> usize {
        self.ep.rank
    }

    fn size(&self) -> usize {
        self.ep.size
    }

    fn clock(&self) -> Clock {
        Clock::Real(self.clock)
    }

    fn peer_name(&self, peer: usize) -> String {
        match self.ep.names.get(peer) {
            Some(a) => format!("rank {peer} ({a})"),
            None => format!("rank {peer}"),
        }
    }

    fn try_send(
        &mut self,
        peer: usize,
        kind: FragKind,
        header: &[u8],
        payload: &[u8],
    ) -> Result<bool> {
        let lent = match kind {
            FragKind::Rts { .. } | FragKind::Put { .. } => self.lend(header)?,
            _ => None,
        };
        let trailer = lent.as_ref().map(|(t, _)| t);
        let body = header.len() + payload.len() + trailer.map_or(0, |t| t.len());
        let total = PREFIX + body;
        let seq = self.next_seq_out[peer];
        let rank = self.ep.rank;
        let sent = if total <= self.s.inject_size {
            let inject = self
                .ep
                .calls
                .inject
                .expect("inject_size is 0 without fi_inject");
            let out = &mut self.inject_buf[..total];
            write_frame(out, rank, seq, header, payload, trailer);
            // SAFETY: `out` holds `total` bytes; inject copies them before returning.
            let rc = unsafe {
                inject(
                    self.ep.ep,
                    out.as_ptr() as *const c_void,
                    total,
                    self.ep.addrs[peer],
                )
            };
            if rc == 0 {
                self.injects += 1;
                true
            } else if rc == -FI_EAGAIN {
                false
            } else {
                return Err(self.op_failed(Some(peer), "an inject", rc));
            }
        } else {
            if body > self.s.max_frame + TRAILER {
                return Err(TransportError::Config(format!(
                    "ofi: a {body}-byte frame is larger than the wire's {}",
                    self.s.max_frame
                )));
            }
            match self.tx_free.last().copied() {
                Some(i) => {
                    let start = i as usize * self.slot;
                    write_frame(
                        &mut self.tx[start..start + total],
                        rank,
                        seq,
                        header,
                        payload,
                        trailer,
                    );
                    self.post_send(peer, total)?.is_some()
                }
                None => false,
            }
        };
        if !sent {
            // Give back what lend took; the engine retries the whole frame after polling.
            if let Some((_, request)) = lent {
                self.release_lent(request);
            }
            self.progress_stash()?;
            return Ok(false);
        }
        self.next_seq_out[peer] = seq.wrapping_add(1);
        Ok(true)
    }

    fn poll(&mut self, sink: &mut dyn FnMut(usize, &[u8]) -> Result<()>) -> Result<usize> {
        self.repost()?;
        let mut handed = 0;
        while let Some(msg) = self.stashed.pop_front() {
            handed += self.accept(&msg, sink)?;
        }
        let n = self.read_cq()?;
        for k in 0..n {
            let c = self.batch[k];
            if self.retire(&c) {
                continue;
            }
            if let Some(Op::Recv(i)) = self.op_of(c.op_context as usize) {
                handed += self.deliver(i as usize, c.len, sink)?;
            }
        }
        Ok(handed)
    }

    fn get(&mut self, peer: usize, remote_addr: u64, local: &mut [u8]) -> Result<GetOutcome> {
        let Some((key, base)) = take_offer(&mut self.offered, (peer, remote_addr)) else {
            return Ok(GetOutcome::Refused);
        };
        if self.ep.calls.read.is_none() {
            return Ok(GetOutcome::Refused);
        }
        self.rma(
            peer,
            remote_addr,
            key,
            base,
            local.as_mut_ptr(),
            local.len(),
            Rma::Read,
        )?;
        self.reads += 1;
        Ok(GetOutcome::Done)
    }

    fn put(&mut self, peer: usize, remote_addr: u64, local: &[u8]) -> Result<GetOutcome> {
        let Some((key, base)) = take_offer(&mut self.writable, (peer, remote_addr)) else {
            return Ok(GetOutcome::Refused);
        };
        if self.ep.calls.write.is_none() {
            return Ok(GetOutcome::Refused);
        }
        self.rma(
            peer,
            remote_addr,
            key,
            base,
            local.as_ptr() as *mut u8,
            local.len(),
            Rma::Write,
        )?;
        self.writes += 1;
        Ok(GetOutcome::Done)
    }

    fn preferred_protocol(&self, _peer: usize, _len: u64) -> Protocol {
        if self.s.single_copy {
            Protocol::SingleCopy
        } else {
            Protocol::Copy
        }
    }

    fn idle(&mut self, idle_rounds: u64) -> Result<()> {
        if idle_rounds < 4096 {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
        Ok(())
    }

    /// libfabric reports a lost peer only as a failed operation, which fails the call that
    /// reaps it; a wait with nothing posted to the peer ends at `timeout`, naming it, and the
    /// launcher reports the rank that died.
    fn check_peers(&mut self, _awaited: Option<usize>) -> Result<()> {
        Ok(())
    }

    fn describe(&self) -> Vec<(String, String)> {
        let mut out = super::facts(&self.ep);
        out.extend([
            ("ofi_matching".to_string(), "engine".to_string()),
            (
                "ofi_inject_size_used".into(),
                self.s.inject_size.to_string(),
            ),
            ("ofi_reads_in_place".into(), self.reads.to_string()),
            ("ofi_writes_in_place".into(), self.writes.to_string()),
            (
                "ofi_registrations".into(),
                self.cache.registrations.to_string(),
            ),
        ]);
        out.extend(super::provider_env());
        out
    }
}

pub fn progress_name(p: std::ffi::c_int) -> &'static str {
    match p {
        FI_PROGRESS_AUTO => "auto",
        FI_PROGRESS_MANUAL => "manual",
        _ => "unspecified",
    }
}

/// The key and base a peer offered for `at`, counting one use of the offer off: a window of
/// messages from (or into) one buffer offers it once per message, under one registration.
fn take_offer(
    offers: &mut HashMap<(usize, u64), (u64, u64, u32)>,
    at: (usize, u64),
) -> Option<(u64, u64)> {
    let e = offers.get_mut(&at)?;
    let found = (e.0, e.1);
    e.2 -= 1;
    if e.2 == 0 {
        offers.remove(&at);
    }
    Some(found)
}

/// Which way an RMA moves the bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Rma {
    Read,
    Write,
}

impl OfiWire {
    /// Reads `len` bytes of `peer`'s registered memory at `remote_addr` into `local`, or writes
    /// them there from `local`, waiting for the completion (the engine's single copy is
    /// synchronous); completions read meanwhile are kept for the next poll.
    #[allow(clippy::too_many_arguments)]
    fn rma(
        &mut self,
        peer: usize,
        remote_addr: u64,
        key: u64,
        base: u64,
        local: *mut u8,
        len: usize,
        way: Rma,
    ) -> Result<()> {
        let rules = self.cache.rules;
        let local_region = if rules.local() && len > 0 {
            let mut reg = self.ep.registrar();
            let access = if way == Rma::Read { FI_READ } else { FI_WRITE };
            Some(
                self.cache
                    .acquire(&mut reg, local as usize, len, access)
                    .map_err(|e| TransportError::Config(format!("ofi: {e}")))?,
            )
        } else {
            None
        };
        let desc = local_region.map_or(0, |r| r.desc) as *mut c_void;
        let start = Instant::now();
        let chunk = self.ep.entry.max_msg_size.max(1);
        let what = if way == Rma::Read {
            "a read in place"
        } else {
            "a write in place"
        };
        let result = (|| {
            let mut at = 0usize;
            while at < len {
                let n = (len - at).min(chunk);
                let raddr = rules.remote_address(remote_addr + at as u64, base);
                let ctx = &mut *self.read_ctx as *mut Ctx as *mut c_void;
                self.read_done = None;
                loop {
                    // SAFETY: `local[at..at+n]` stays ours until the operation completes,
                    // awaited below.
                    let rc = unsafe {
                        let buf = local.add(at) as *mut c_void;
                        match way {
                            Rma::Read => (self.ep.calls.read.expect("checked"))(
                                self.ep.ep,
                                buf,
                                n,
                                desc,
                                self.ep.addrs[peer],
                                raddr,
                                key,
                                ctx,
                            ),
                            Rma::Write => (self.ep.calls.write.expect("checked"))(
                                self.ep.ep,
                                buf,
                                n,
                                desc,
                                self.ep.addrs[peer],
                                raddr,
                                key,
                                ctx,
                            ),
                        }
                    };
                    if rc == 0 {
                        break;
                    }
                    if rc != -FI_EAGAIN {
                        return Err(self.op_failed(Some(peer), what, rc));
                    }
                    self.progress_stash()?;
                    self.timed_out(start, peer)?;
                }
                while self.read_done.is_none() {
                    self.progress_stash()?;
                    self.timed_out(start, peer)?;
                }
                if let Some(Err(e)) = self.read_done.take() {
                    return Err(TransportError::Protocol {
                        peer: self.peer_name(peer),
                        what: format!("{what} failed: {}", e.text),
                    });
                }
                at += n;
            }
            Ok(())
        })();
        if let Some(r) = local_region {
            let mut reg = self.ep.registrar();
            self.cache.done(&mut reg, r.id);
        }
        result
    }

    fn timed_out(&self, start: Instant, peer: usize) -> Result<()> {
        if start.elapsed() > self.s.timeout {
            return Err(TransportError::Timeout {
                peer: self.peer_name(peer),
                what: "a read or write of its memory in place".into(),
                stage: "single copy".into(),
                after: self.s.timeout,
            });
        }
        Ok(())
    }
}

impl Drop for OfiWire {
    fn drop(&mut self) {
        let mut reg = self.ep.registrar();
        self.cache.clear(&mut reg);
        for r in self.pool_regs.drain(..) {
            super::mr::Registrar::release(&mut reg, r);
        }
        // The endpoint closes after (its own Drop), with the slots still allocated: the
        // provider may touch posted receives until the endpoint is closed.
        self.ep.close();
    }
}
