//! MPI's matching rules: messages from one source are considered in the order they were sent
//! (frames a wire delivers early wait in a reorder buffer), the earliest posted receive that
//! matches wins, and a message no receive has asked for waits as unexpected until one claims it.
//! The receive fast path lives here too, since it may skip the queues only when they are empty.

use crate::error::{Result, TransportError};
use crate::header::{FrameType, Header, COMMON_LEN, FLAG_SINGLE_COPY_OK};
use crate::order::HostOrder;
use crate::transport::{ReqId, Status, Tag};

use super::state::{Core, Op, Ptr, RecvOp, RecvPhase, State, Unexpected, UnexpectedKind};

impl State {
    /// Nothing posted, unexpected, queued or in flight: the receive fast path may run.
    #[inline]
    pub(super) fn quiet(&self) -> bool {
        self.posted.is_empty()
            && self.unexpected.is_empty()
            && self.ctrl_count == 0
            && self.first_count == 0
            && self.streams.is_empty()
            && self.flushing.is_empty()
            && self.matched.is_empty()
    }

    /// The receive fast path's match: an in-order EAGER frame for this receive is copied out
    /// and `Some(status)` returned; anything else is left to `on_frame`.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub(super) fn fast_match(
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
        // The header's fields as `Header::decode_as` reads them (see header.rs for the layout).
        let (ftag, seq, len) = match self.order {
            HostOrder::Native => fields(HostOrder::Native, frame),
            HostOrder::Big => fields(HostOrder::Big, frame),
        };
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

    /// An EAGER or RTS frame in its turn: match it, or keep it as unexpected.
    pub(super) fn ordered(&mut self, peer: usize, h: &Header, payload: &[u8]) -> Result<()> {
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
    pub(super) fn post_recv(
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
}

/// The tag, sequence and message length of an eager frame's common header.
#[inline(always)]
fn fields(o: HostOrder, frame: &[u8]) -> (Tag, u32, u64) {
    (
        o.get_net(&frame[4..8]),
        o.get_net(&frame[8..12]),
        o.get_net(&frame[16..24]),
    )
}
