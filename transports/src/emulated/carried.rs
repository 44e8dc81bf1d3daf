//! What a frame in flight holds: a copy of its bytes, made when the wire accepts it, since the
//! sender may reuse its buffer from then on while the frame arrives much later in virtual time.
//!
//! Rendezvous data holds none (it is placed, see [`super::placing`]); eager messages must be
//! copied, since their receive may not be posted yet. Where a model lets many large eager
//! messages be in flight at once (loggp carries every message eagerly: a window of 64 messages
//! of 4 MiB held 256 MiB per direction), they are nearly always the same buffer sent again
//! unchanged, as a bandwidth test does. So a large payload that matches, byte for byte, the
//! last one its sender sent from the same address and that is still in flight shares that
//! copy. Comparing costs about what copying did. The copy keeps room for a header in front, so
//! the last frame to hold it is delivered in place; a frame that shares it is put together for
//! its delivery.

use std::sync::{Arc, Weak};

use crate::header::MAX_HEADER_LEN;

/// Payloads from this size on may share a copy; smaller frames stay one contiguous copy, so
/// small messages pay nothing for it.
pub(super) const SHARE_MIN: usize = 64 * 1024;

/// Room for a header in front of a shared payload's copy.
const ROOM: usize = MAX_HEADER_LEN;

/// A frame's bytes in flight.
#[derive(Debug)]
pub(super) enum Carried {
    /// Header and payload, one copy.
    Whole(Vec<u8>),
    /// The header, and a payload copy other frames in flight may share: `ROOM` bytes for a
    /// header, then the payload.
    Shared { header: Vec<u8>, copy: Arc<Vec<u8>> },
}

impl Carried {
    /// Hands the frame to `sink` as one slice: a shared payload no other frame holds any more
    /// gets its header written in front, in place; one still shared is put together with it.
    pub(super) fn deliver<R>(self, sink: impl FnOnce(&[u8]) -> R) -> R {
        match self {
            Carried::Whole(v) => sink(&v),
            Carried::Shared { header, copy } => {
                // The last holder takes the copy (the sender's weak reference then finds it
                // gone, so nothing new shares it).
                let copy = match (header.len() <= ROOM, Arc::try_unwrap(copy)) {
                    (true, Ok(mut v)) => {
                        let start = ROOM - header.len();
                        v[start..ROOM].copy_from_slice(&header);
                        return sink(&v[start..]);
                    }
                    (_, Ok(v)) => Arc::new(v),
                    (_, Err(shared)) => shared,
                };
                let mut v = Vec::with_capacity(header.len() + copy.len() - ROOM);
                v.extend_from_slice(&header);
                v.extend_from_slice(&copy[ROOM..]);
                sink(&v)
            }
        }
    }
}

/// The last large payload each rank sent, while a frame in flight still holds it.
#[derive(Debug)]
pub(super) struct Copies {
    last: Vec<Option<(usize, Weak<Vec<u8>>)>>,
}

impl Copies {
    pub(super) fn new(ranks: usize) -> Copies {
        Copies {
            last: vec![None; ranks],
        }
    }

    /// The bytes to carry for a frame `src` sends: `header` then `payload`.
    pub(super) fn carry(&mut self, src: usize, header: &[u8], payload: &[u8]) -> Carried {
        if payload.len() < SHARE_MIN {
            let mut v = Vec::with_capacity(header.len() + payload.len());
            v.extend_from_slice(header);
            v.extend_from_slice(payload);
            return Carried::Whole(v);
        }
        let addr = payload.as_ptr() as usize;
        let same = self.last[src]
            .as_ref()
            .filter(|(at, _)| *at == addr)
            .and_then(|(_, copy)| copy.upgrade())
            .filter(|copy| &copy[ROOM..] == payload);
        let copy = same.unwrap_or_else(|| {
            let mut v = Vec::with_capacity(ROOM + payload.len());
            v.resize(ROOM, 0);
            v.extend_from_slice(payload);
            let copy = Arc::new(v);
            // A weak reference: the copy goes with the last frame that holds it.
            self.last[src] = Some((addr, Arc::downgrade(&copy)));
            copy
        });
        Carried::Shared {
            header: header.to_vec(),
            copy,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(c: Carried) -> Vec<u8> {
        c.deliver(|b| b.to_vec())
    }

    fn copy_of(c: &Carried) -> &Arc<Vec<u8>> {
        match c {
            Carried::Shared { copy, .. } => copy,
            Carried::Whole(_) => panic!("large payloads are shared"),
        }
    }

    #[test]
    fn the_same_buffer_sent_again_unchanged_shares_one_copy() {
        let mut copies = Copies::new(2);
        let mut buf = vec![7u8; SHARE_MIN];
        let a = copies.carry(0, b"h1", &buf);
        let b = copies.carry(0, b"h2", &buf);
        assert!(Arc::ptr_eq(copy_of(&a), copy_of(&b)));
        // Changed in place: a copy of its own, and the first frames keep what they carried.
        buf[100] = 8;
        let c = copies.carry(0, b"h3", &buf);
        // Another rank's identical payload is its own copy (each rank has its own last).
        let d = copies.carry(1, b"h4", &buf);
        assert!(!Arc::ptr_eq(copy_of(&c), copy_of(&d)));
        assert_eq!(bytes(c)[2 + 100], 8);
        // Still shared with `a`: put together; then `a` alone holds it: in place.
        let b = bytes(b);
        assert_eq!((&b[..2], b.len()), (&b"h2"[..], 2 + SHARE_MIN));
        let at = copy_of(&a).as_ptr() as usize + ROOM - 2;
        let (in_place, a) = a.deliver(|f| (f.as_ptr() as usize == at, f.to_vec()));
        assert!(
            in_place,
            "the last holder is delivered from the copy itself"
        );
        assert_eq!(
            (&a[..2], a.len(), a[2 + 100]),
            (&b"h1"[..], 2 + SHARE_MIN, 7)
        );
        assert_eq!(bytes(d)[..2], *b"h4");
    }

    #[test]
    fn a_copy_goes_with_its_last_frame_and_small_frames_are_whole() {
        let mut copies = Copies::new(1);
        let buf = vec![1u8; SHARE_MIN];
        drop(copies.carry(0, b"h", &buf));
        let (_, weak) = copies.last[0].as_ref().unwrap();
        assert!(weak.upgrade().is_none());
        let small = copies.carry(0, b"h", &buf[..SHARE_MIN - 1]);
        assert!(matches!(&small, Carried::Whole(v) if v.len() == SHARE_MIN));
    }
}
