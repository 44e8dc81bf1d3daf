//! The operation table. Every send and receive the application starts is a slot whose index and
//! generation make up its request id and whose phase records how far its protocol has got; the
//! other modules move operations through their phases, this one owns how a request is allocated,
//! found again from an id a peer sends back, completed and released, so a stale or unknown id is
//! caught in one place.

use crate::error::{Result, TransportError};
use crate::transport::{ReqId, Status, Tag};

use super::state::{Op, Ptr, RecvOp, RecvPhase, SendPhase, Slot, State};

pub(super) fn req_index(id: u64) -> (usize, u32) {
    ((id & 0xffff_ffff) as usize, (id >> 32) as u32)
}

impl State {
    pub(super) fn alloc(&mut self, op: Op) -> ReqId {
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
    pub(super) fn start_receiving(&mut self, idx: usize, from: usize, tag: Tag, len: usize) {
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
    pub(super) fn receiving(&self, idx: usize, peer: usize, frame: &str) -> Result<(Ptr, usize)> {
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
    pub(super) fn add_received(
        &mut self,
        idx: usize,
        peer: usize,
        n: usize,
        frame: &str,
    ) -> Result<()> {
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

    pub(super) fn slot_of(&mut self, id: u64, peer: usize, frame: &str) -> Result<usize> {
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
    pub(super) fn take_done(&mut self, req: ReqId) -> Result<Option<Status>> {
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

    pub(super) fn complete(&mut self, idx: usize, status: Status) {
        self.slots[idx].op = Op::Done(status);
    }

    /// One half of shared send `idx` is done; the second completes it.
    pub(super) fn shared_half_done(&mut self, idx: usize) {
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
}
