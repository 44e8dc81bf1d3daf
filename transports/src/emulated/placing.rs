//! Placing rendezvous data: an emulated wire writes a DATA fragment straight into the receive
//! buffer when it accepts the frame, and carries the header alone.
//!
//! Holding a copy of every fragment in flight made a run's memory grow with window x size: a
//! window of 64 messages of 4 MiB, accepted at once by a model whose link queues them, held
//! 256 MiB per direction. The sender cannot be read at delivery instead: its send completes
//! when the wire accepts the last fragment (as a copy protocol's does), often long before the
//! modelled arrival, and from then on the sender may reuse its buffer. The receive buffer,
//! though, is the receiver's only once its receive completes, and that happens when the last
//! fragment's frame is delivered, at the time the model says: writing the bytes early changes
//! nothing a correct program can see, and the models only ever see sizes, kinds and addresses.
//! Eager data cannot be placed (its receive may not be posted yet): it is still copied.
//!
//! The ranks are tasks of one process, so the buffer a CTS names is addressable by the
//! sender's thread. The wire writes only inside a buffer a CTS it carried announced, never more
//! bytes than that CTS asked for, and never into a rank whose wire is gone (it forgets that
//! rank's buffers and places nothing for it).

use std::collections::BTreeMap;

/// What a CTS announced and the fragments placed in it so far.
#[derive(Debug, Clone, Copy)]
struct Region {
    start: u64,
    len: u64,
    /// Bytes not placed yet; the region is forgotten when none are left.
    left: u64,
}

/// The receive buffers of one job that the wire may place data in.
#[derive(Debug)]
pub(super) struct Placements {
    /// Open regions by (receiving rank, rendezvous id: the receiver's request).
    open: BTreeMap<(usize, u64), Region>,
}

impl Placements {
    pub(super) fn new() -> Placements {
        Placements {
            open: BTreeMap::new(),
        }
    }

    /// A CTS from `receiver` for rendezvous `rndv` was carried: `len` bytes at `addr` await
    /// the data.
    pub(super) fn announce(&mut self, receiver: usize, rndv: u64, addr: u64, len: u64) {
        self.open.insert(
            (receiver, rndv),
            Region {
                start: addr,
                len,
                left: len,
            },
        );
    }

    /// Why a fragment of `len` bytes at `addr` for `receiver`'s rendezvous `rndv` may not be
    /// placed, if it may not.
    pub(super) fn check(
        &self,
        receiver: usize,
        rndv: u64,
        addr: u64,
        len: u64,
    ) -> Result<(), String> {
        let Some(r) = self.open.get(&(receiver, rndv)) else {
            return Err(format!(
                "data for rendezvous {rndv:#x} of rank {receiver}, which no CTS announced"
            ));
        };
        let inside = addr >= r.start
            && addr
                .checked_add(len)
                .is_some_and(|end| end <= r.start + r.len);
        if !inside || len > r.left {
            return Err(format!(
                "{len} bytes at {addr:#x} for rendezvous {rndv:#x} of rank {receiver}: outside the {}-byte buffer at {:#x} its CTS announced, or past its {} bytes still to come",
                r.len, r.start, r.left
            ));
        }
        Ok(())
    }

    /// Writes `payload` at `addr` in `receiver`'s memory, for its rendezvous `rndv`; the
    /// caller has [`check`](Self::check)ed it, the model has accepted the frame, and the
    /// receiver's wire is not gone (the caller knows, under the lock `forget` is called with).
    pub(super) fn place(&mut self, receiver: usize, rndv: u64, addr: u64, payload: &[u8]) {
        let key = (receiver, rndv);
        let r = self.open.get_mut(&key).expect("checked before the offer");
        debug_assert!(addr >= r.start && addr + payload.len() as u64 <= r.start + r.len);
        // SAFETY: `addr..addr + len` lies inside the buffer of a receive the receiving rank's
        // engine holds pending: it announced that buffer (the receive's own, of the matched
        // length, checked at match time) in a CTS this wire carried, and the receive completes
        // only once every announced byte has been delivered, each in a frame queued below
        // after its bytes were placed here; `left` keeps the bytes placed to the announced
        // length, so nothing is placed after the last one. The receiving rank's wire is not
        // gone (the caller's check, under the same lock its drop takes), so its engine, and
        // the receive with it, is alive. The receiving thread is not running: under the
        // discrete-event scheduler one rank thread runs at a time, and this one holds the
        // turn (every wire call syncs first). It reads the bytes only after popping the
        // frame under the lock held while they are written, which orders the write first.
        // The sender's payload is its own buffer, valid for this call: the two cannot
        // overlap, since the receiver owns its buffer exclusively until the receive completes.
        unsafe {
            std::ptr::copy_nonoverlapping(payload.as_ptr(), addr as *mut u8, payload.len());
        }
        r.left -= payload.len() as u64;
        if r.left == 0 {
            self.open.remove(&key);
        }
    }

    /// `rank`'s wire is gone: forget its buffers.
    pub(super) fn forget(&mut self, rank: usize) {
        self.open.retain(|(receiver, _), _| *receiver != rank);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_only_inside_an_announced_buffer_and_only_what_it_asked_for() {
        let mut buf = vec![0u8; 16];
        let at = buf.as_mut_ptr() as u64;
        let mut p = Placements::new();
        assert!(p.check(1, 7, at, 4).unwrap_err().contains("no CTS"));
        p.announce(1, 7, at, 16);
        assert!(p.check(1, 7, at + 8, 9).is_err(), "runs past the end");
        assert!(p.check(1, 7, at - 1, 4).is_err(), "starts before it");
        assert!(p.check(1, 8, at, 4).is_err(), "another rendezvous");
        assert!(p.check(0, 7, at, 4).is_err(), "another rank");
        p.check(1, 7, at + 8, 8).unwrap();
        p.place(1, 7, at + 8, &[9; 8]);
        p.check(1, 7, at, 8).unwrap();
        p.place(1, 7, at, &[5; 8]);
        assert!(
            p.check(1, 7, at, 1).unwrap_err().contains("no CTS"),
            "a filled region is forgotten"
        );
        assert_eq!(&buf[..8], &[5; 8]);
        assert_eq!(&buf[8..], &[9; 8]);
    }

    #[test]
    fn a_gone_rank_s_buffers_are_forgotten() {
        let buf = [0u8; 8];
        let at = buf.as_ptr() as u64;
        let mut p = Placements::new();
        p.announce(0, 3, at, 8);
        p.announce(1, 7, at, 8);
        p.forget(1);
        assert!(p.check(1, 7, at, 8).is_err());
        p.check(0, 3, at, 8).unwrap();
    }
}
