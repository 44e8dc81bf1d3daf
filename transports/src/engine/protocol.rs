//! The wire protocol: how a send becomes frames (EAGER inline; or RTS, then CTS and DATA, a single
//! copy closed by FIN, or a single copy shared with the sender by PUT and PUTFIN), and how each
//! incoming frame moves on the operation it names. Frames are handled inside the wire's poll, while
//! the wire is busy, so work that needs the wire is queued there and done by the progress pass.

use crate::error::{Result, TransportError};
use crate::header::{FrameType, Header, FLAG_PLACED, FLAG_SINGLE_COPY_OK, MAX_HEADER_LEN};
use crate::order::HostOrder;
use crate::transport::{ReqId, Status};
use crate::wire::{FragKind, FrameSink, GetOutcome, Placement, Protocol};

use super::config::{Schedule, SingleCopy, SHARE_MIN};
use super::state::{Core, Ctrl, Op, PutJob, RecvPhase, SendPhase, State};

/// Frames one progress pass may emit before it polls again, so receiving never starves.
const SEND_BUDGET: usize = 64;

pub(super) fn encode(h: &Header, order: HostOrder) -> ([u8; MAX_HEADER_LEN], usize) {
    let mut buf = [0u8; MAX_HEADER_LEN];
    let n = h.encode_as(order, &mut buf);
    (buf, n)
}

impl State {
    fn stage_err_peer(&self, peer: usize) -> String {
        format!("rank {peer}")
    }

    /// Handles one frame from `peer`. Runs inside the wire's poll, so it only updates state
    /// and queues work that needs the wire.
    pub(super) fn on_frame(&mut self, peer: usize, frame: &[u8]) -> Result<()> {
        let h = Header::decode_as(self.order, frame).map_err(|source| TransportError::Header {
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
                    let hh = Header::decode_as(self.order, &held).expect("decoded before");
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
                let placed = h.flags & FLAG_PLACED != 0;
                if placed && (!self.wire_places_data || !payload.is_empty()) {
                    return Err(TransportError::Protocol {
                        peer: format!("rank {peer}"),
                        what: "a placed DATA frame from a wire that does not place data, or with a payload".into(),
                    });
                }
                // A placed fragment is already in the buffer: its length is in the header.
                let n = if placed {
                    h.len as usize
                } else {
                    payload.len()
                };
                if off.checked_add(n).is_none_or(|end| end > len) {
                    return Err(TransportError::Protocol {
                        peer: format!("rank {peer}"),
                        what: format!(
                            "DATA at offset {off} of {n} bytes overruns a {len}-byte message"
                        ),
                    });
                }
                if !placed {
                    // SAFETY: the receive buffer holds `len` bytes (checked at match time) and
                    // stays valid until this request completes.
                    unsafe { std::ptr::copy_nonoverlapping(payload.as_ptr(), buf.0.add(off), n) };
                }
                self.add_received(idx, peer, n, "DATA")
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
}

impl Core {
    /// One pass: control frames, first frames, rendezvous data, then incoming frames.
    /// Returns whether anything happened.
    #[inline]
    pub(super) fn progress(&mut self) -> Result<bool> {
        self.progress_inner()
            .map_err(|e| e.with_stage(&self.st.stage))
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
        let n = if self.st.wire_reads_into_place {
            let on_frame = |st: &mut State, peer: usize, frame: &[u8]| st.on_frame(peer, frame);
            self.wire
                .poll_placing(&mut FnPlacer(&mut self.st, on_frame))?
        } else {
            let st = &mut self.st;
            self.wire
                .poll(&mut |peer, frame| st.on_frame(peer, frame))?
        };
        active |= n > 0;
        if !self.st.flushing.is_empty() {
            active |= self.complete_flushed();
        }
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

    /// Completes the sends whose last fragment the wire has let go of.
    fn complete_flushed(&mut self) -> bool {
        let mut any = false;
        let mut k = 0;
        while k < self.st.flushing.len() {
            let idx = self.st.flushing[k] as usize;
            let Op::Send(s) = &self.st.slots[idx].op else {
                unreachable!("flushing holds sends")
            };
            if self.wire.holds(s.dst) {
                k += 1;
                continue;
            }
            let st = s.status();
            self.st.complete(idx, st);
            self.st.flushing.swap_remove(k);
            any = true;
        }
        any
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
                let (hb, hn) = encode(&h, self.st.order);
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
    pub(super) fn emit_first(&mut self, idx: usize) -> Result<bool> {
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
        let (hb, hn) = encode(&h, self.st.order);
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
            let placed = self.st.wire_places_data;
            let mut h = Header::new(FrameType::Data);
            h.src = self.st.rank as u32;
            h.a = rreq;
            h.b = offset as u64;
            if placed {
                // The receiver sees the header alone: it needs the fragment's length.
                h.flags |= FLAG_PLACED;
                h.len = n as u64;
            } else {
                h.len = s.len as u64;
            }
            // SAFETY: isend's caller promised `len` readable bytes until completion.
            let payload = unsafe { std::slice::from_raw_parts(s.buf.0.add(offset), n) };
            let kind = FragKind::Data {
                rndv: rreq,
                offset: offset as u64,
                len: n as u64,
                last,
                send_addr: s.buf.0 as u64 + offset as u64,
                recv_addr: raddr + offset as u64,
                placed,
            };
            let (hb, hn) = encode(&h, self.st.order);
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
            } else if last && self.wire.holds(dst) {
                // The caller may change the buffer once the send completes; the wire is still
                // reading its tail.
                s.phase = SendPhase::Flushing;
                self.st.flushing.push(idx as u32);
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
    pub(super) fn start_matched(&mut self) -> Result<()> {
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

/// The engine as a wire's frame sink: whole frames go to a function of the caller's
/// (`on_frame`, or the receive fast path's match first); a DATA frame's payload may be placed
/// by the wire straight into its receive buffer.
pub(super) struct FnPlacer<'a, F>(pub(super) &'a mut State, pub(super) F);

impl<F: FnMut(&mut State, usize, &[u8]) -> Result<()>> FrameSink for FnPlacer<'_, F> {
    fn frame(&mut self, peer: usize, frame: &[u8]) -> Result<()> {
        (self.1)(self.0, peer, frame)
    }

    fn place(&mut self, peer: usize, head: &[u8], frame_len: usize) -> Result<Option<Placement>> {
        self.0.place_data(peer, head, frame_len)
    }

    fn placed(&mut self, peer: usize, placement: &Placement) -> Result<()> {
        self.0
            .add_received(placement.token, peer, placement.len, "DATA")
    }
}

impl State {
    /// Where the payload of a DATA frame goes: checked as `on_frame` checks a DATA frame it
    /// copies, so a placed frame and a copied one fail alike.
    fn place_data(
        &mut self,
        peer: usize,
        head: &[u8],
        frame_len: usize,
    ) -> Result<Option<Placement>> {
        let h = Header::decode_as(self.order, head).map_err(|source| TransportError::Header {
            peer: self.stage_err_peer(peer),
            source,
        })?;
        if h.ty != FrameType::Data || h.flags & FLAG_PLACED != 0 {
            // A frame placed by its sender carries no payload; `on_frame` judges it.
            return Ok(None);
        }
        let header_len = h.ty.header_len();
        let n = frame_len.saturating_sub(header_len);
        let idx = self.slot_of(h.a, peer, "DATA")?;
        let (buf, len) = self.receiving(idx, peer, "DATA")?;
        let off = h.b as usize;
        if off.checked_add(n).is_none_or(|end| end > len) {
            return Err(TransportError::Protocol {
                peer: format!("rank {peer}"),
                what: format!("DATA at offset {off} of {n} bytes overruns a {len}-byte message"),
            });
        }
        self.counters.frames_received += 1;
        Ok(Some(Placement {
            header_len,
            // SAFETY: in bounds of the `len`-byte receive buffer, checked above.
            dst: unsafe { buf.0.add(off) },
            len: n,
            token: idx,
        }))
    }
}
