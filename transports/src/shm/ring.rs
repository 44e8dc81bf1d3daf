//! A single-producer single-consumer frame ring in shared memory, one per ordered rank pair.
//!
//! A ring is a fixed array of 128-byte descriptor slots plus a byte area. A slot starts with a
//! stamp (the frame's sequence number + 1, stored last with release ordering), the frame
//! length and where the bytes are: frames of up to 112 bytes live inside the slot itself, so a
//! small message costs the consumer a single cache-line transfer; larger frames go to the byte
//! area, allocated contiguously in order (skipping to the start rather than wrapping a frame),
//! placed so that the payload after a header of up to 64 bytes starts on a cache line: the two
//! copies a message takes then never straddle lines.
//! Because stamps only ever sit at slot starts, stale payload can never be mistaken for a new
//! frame. The consumer publishes how far it has read (slots and bytes) on a cache line of its
//! own; the producer re-reads it only when it believes the ring is full.
//!
//! ```text
//! [0, 64)      reserved (producer side)
//! [64, 128)    consumer line: u64 slots consumed, u64 byte position consumed
//! [128, ...)   SLOTS descriptors: u64 stamp | u32 len | u32 data offset (INLINE = in slot) | body
//! [..., +cap)  byte area
//! ```
//!
//! Descriptor fields are in the host's byte order, the one place bytes cross between processes
//! that is not network order: both ends of a ring always share one host, and the stamp and the
//! consumer's counters are atomics, which only exist in host order. The frames inside carry
//! the engine's network-order headers. A test pins the layout.

use std::sync::atomic::{AtomicU64, Ordering};

pub const SLOTS: usize = 256;
const SLOT_BYTES: usize = 128;
const SLOT_HEADER: usize = 16;
/// Largest frame stored inside its descriptor.
pub const INLINE_MAX: usize = SLOT_BYTES - SLOT_HEADER;
const CTRL_BYTES: usize = 128;
const INLINE: u32 = u32::MAX;
const ALIGN: u64 = 64;

/// Bytes of shared memory one ring with a `data_cap`-byte area occupies.
pub fn ring_bytes(data_cap: usize) -> usize {
    CTRL_BYTES + SLOTS * SLOT_BYTES + data_cap
}

/// The largest frame a ring with `data_cap` bytes accepts (half, so two frames always fit).
pub fn max_frame(data_cap: usize) -> usize {
    data_cap / 2
}

fn align_up(v: u64) -> u64 {
    (v + ALIGN - 1) & !(ALIGN - 1)
}

/// # Safety
/// `p` must be 8-byte aligned and point into a live shared mapping.
unsafe fn atomic<'a>(p: *mut u8) -> &'a AtomicU64 {
    AtomicU64::from_ptr(p as *mut u64)
}

/// The producer's end of a ring.
pub struct Producer {
    base: *mut u8,
    cap: u64,
    seq: u64,
    head: u64,
    seen_slots: u64,
    seen_bytes: u64,
}

/// The consumer's end of a ring.
pub struct Consumer {
    base: *mut u8,
    cap: u64,
    seq: u64,
    tail: u64,
    /// Byte position after the frame handed out by `peek`, until `release`.
    pending_tail: Option<u64>,
    /// What the producer has been told (published lazily, see `release`).
    told_seq: u64,
    told_tail: u64,
}

/// Frames consumed between publications of the consumer's position.
const PUBLISH_FRAMES: u64 = 32;

// SAFETY: a ring end is used by one thread at a time (the engine lock serialises it); the
// memory it points to lives as long as the mapping that owns both ends.
unsafe impl Send for Producer {}
unsafe impl Send for Consumer {}

impl Producer {
    /// # Safety
    /// `base` must point to `ring_bytes(data_cap)` zeroed (or previously consumed) bytes of a
    /// 64-byte aligned shared mapping that outlives this value, with one producer per ring.
    pub unsafe fn new(base: *mut u8, data_cap: usize) -> Producer {
        Producer {
            base,
            cap: data_cap as u64,
            seq: 0,
            head: 0,
            seen_slots: 0,
            seen_bytes: 0,
        }
    }

    fn consumer_line(&self) -> (&AtomicU64, &AtomicU64) {
        // SAFETY: offsets 64 and 72 are inside the ring's control bytes, 8-aligned.
        unsafe { (atomic(self.base.add(64)), atomic(self.base.add(72))) }
    }

    /// Appends `header` then `payload` as one frame; `false` when the ring is full.
    pub fn try_push(&mut self, header: &[u8], payload: &[u8]) -> bool {
        let len = header.len() + payload.len();
        debug_assert!(
            len as u64 <= self.cap / 2,
            "frame larger than the ring allows"
        );
        if self.seq - self.seen_slots >= SLOTS as u64 {
            self.seen_slots = self.consumer_line().0.load(Ordering::Acquire);
            if self.seq - self.seen_slots >= SLOTS as u64 {
                return false;
            }
        }
        // SAFETY: the slot index is < SLOTS, so the slot lies inside the ring.
        let slot = unsafe {
            self.base
                .add(CTRL_BYTES + (self.seq % SLOTS as u64) as usize * SLOT_BYTES)
        };
        let (dest, offset) = if len <= INLINE_MAX {
            // SAFETY: the body area of the slot holds INLINE_MAX bytes.
            (unsafe { slot.add(SLOT_HEADER) }, INLINE)
        } else {
            // Lead bytes before the header so the payload begins on the next line boundary.
            let lead = if header.len() <= ALIGN as usize {
                (ALIGN as usize - header.len()) % ALIGN as usize
            } else {
                0
            };
            let span = (lead + len) as u64;
            let mut start = self.head;
            let pos = start % self.cap;
            if pos + span > self.cap {
                start += self.cap - pos;
            }
            let end = align_up(start + span);
            if end - self.seen_bytes > self.cap {
                self.seen_bytes = self.consumer_line().1.load(Ordering::Acquire);
                if end - self.seen_bytes > self.cap {
                    return false;
                }
            }
            self.head = end;
            let off = start % self.cap + lead as u64;
            // SAFETY: off + len <= cap by construction of `start`.
            (
                unsafe {
                    self.base
                        .add(CTRL_BYTES + SLOTS * SLOT_BYTES + off as usize)
                },
                off as u32,
            )
        };
        // SAFETY: `dest` has room for `len` bytes (inline or reserved in the byte area), and
        // the consumer does not read it until the stamp below is published.
        unsafe {
            std::ptr::copy_nonoverlapping(header.as_ptr(), dest, header.len());
            std::ptr::copy_nonoverlapping(payload.as_ptr(), dest.add(header.len()), payload.len());
            (slot.add(8) as *mut u32).write(len as u32);
            (slot.add(12) as *mut u32).write(offset);
            atomic(slot).store(self.seq + 1, Ordering::Release);
        }
        self.seq += 1;
        true
    }
}

impl Consumer {
    /// # Safety
    /// As for [`Producer::new`], with one consumer per ring.
    pub unsafe fn new(base: *mut u8, data_cap: usize) -> Consumer {
        Consumer {
            base,
            cap: data_cap as u64,
            seq: 0,
            tail: 0,
            pending_tail: None,
            told_seq: 0,
            told_tail: 0,
        }
    }

    /// Tells the producer how far this consumer has read.
    #[inline]
    fn publish(&mut self) {
        // SAFETY: offsets 64 and 72 lie in the control bytes.
        let (slots, bytes) = unsafe { (atomic(self.base.add(64)), atomic(self.base.add(72))) };
        if self.told_tail != self.tail {
            bytes.store(self.tail, Ordering::Release);
            self.told_tail = self.tail;
        }
        slots.store(self.seq, Ordering::Release);
        self.told_seq = self.seq;
    }

    /// The next frame, if one has been published. Valid until [`Consumer::release`].
    pub fn peek(&mut self) -> Option<&[u8]> {
        // SAFETY: the slot index is < SLOTS.
        let slot = unsafe {
            self.base
                .add(CTRL_BYTES + (self.seq % SLOTS as u64) as usize * SLOT_BYTES)
        };
        // SAFETY: the stamp is the slot's first 8 bytes.
        if unsafe { atomic(slot) }.load(Ordering::Acquire) != self.seq + 1 {
            // Idle: whatever was consumed is now told, so a producer waiting for room never
            // waits on a consumer that has nothing to do.
            if self.told_seq != self.seq {
                self.publish();
            }
            return None;
        }
        // SAFETY: the producer wrote len and offset before publishing the stamp (acquire above).
        let (len, offset) = unsafe {
            (
                (slot.add(8) as *const u32).read() as usize,
                (slot.add(12) as *const u32).read(),
            )
        };
        let ptr = if offset == INLINE {
            self.pending_tail = None;
            // SAFETY: inline bodies lie within the slot.
            unsafe { slot.add(SLOT_HEADER) }
        } else {
            let pos = self.tail % self.cap;
            // Records start on a line; the frame may begin up to 63 lead bytes into it.
            let rec = offset as u64 & !(ALIGN - 1);
            let start = if rec == pos {
                self.tail
            } else {
                // The producer skipped the end of the area; the frame starts a new lap.
                self.tail + (self.cap - pos)
            };
            self.pending_tail = Some(align_up(start + (offset as u64 - rec) + len as u64));
            // SAFETY: offset + len <= cap, as the producer allocated it.
            unsafe {
                self.base
                    .add(CTRL_BYTES + SLOTS * SLOT_BYTES + offset as usize)
            }
        };
        // SAFETY: `len` bytes at `ptr` were written before the stamp was published and are not
        // reused until `release` publishes the new consumer position.
        Some(unsafe { std::slice::from_raw_parts(ptr, len) })
    }

    /// Marks the frame returned by the last `peek` as consumed. The position is published
    /// every PUBLISH_FRAMES frames or eighth of the byte area, and whenever the ring is found
    /// empty: publishing on every frame would bounce the consumer's line between cores while
    /// a streaming producer polls it.
    #[inline]
    pub fn release(&mut self) {
        self.seq += 1;
        if let Some(t) = self.pending_tail.take() {
            self.tail = t;
        }
        if self.seq - self.told_seq >= PUBLISH_FRAMES || self.tail - self.told_tail >= self.cap / 8
        {
            self.publish();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Mem(Vec<u64>);

    impl Mem {
        fn new(cap: usize) -> Mem {
            Mem(vec![0u64; ring_bytes(cap).div_ceil(8) + 8])
        }
        fn base(&mut self) -> *mut u8 {
            // 64-byte align inside the vector
            let p = self.0.as_mut_ptr() as usize;
            ((p + 63) & !63) as *mut u8
        }
    }

    fn frame(i: usize) -> Vec<u8> {
        let len = [0usize, 1, 8, 111, 112, 113, 500, 1000, 3000][i % 9];
        (0..len).map(|k| (k + i) as u8).collect()
    }

    /// The descriptor layout, pinned. Its numbers are in host order (both ends of a ring are
    /// on one host, and the stamp and the consumer's counters are atomics), so the expected
    /// bytes are built with `to_ne_bytes`; the offsets are what this pins.
    #[test]
    fn descriptors_have_their_golden_layout() {
        let cap = 8192;
        let mut m = Mem::new(cap);
        let base = m.base();
        let (mut p, mut c) = unsafe { (Producer::new(base, cap), Consumer::new(base, cap)) };
        let big: Vec<u8> = (0..200u8).collect();
        assert!(p.try_push(&[1, 2, 3], &[4, 5]));
        assert!(p.try_push(&big[..3], &big[3..]));
        let ring = unsafe { std::slice::from_raw_parts(base, ring_bytes(cap)) };
        let slot0 = &ring[CTRL_BYTES..CTRL_BYTES + SLOT_BYTES];
        let mut want = Vec::new();
        want.extend_from_slice(&1u64.to_ne_bytes());
        want.extend_from_slice(&5u32.to_ne_bytes());
        want.extend_from_slice(&u32::MAX.to_ne_bytes()); // inline
        want.extend_from_slice(&[1, 2, 3, 4, 5]);
        assert_eq!(&slot0[..want.len()], &want[..]);
        let slot1 = &ring[CTRL_BYTES + SLOT_BYTES..CTRL_BYTES + 2 * SLOT_BYTES];
        assert_eq!(&slot1[..8], &2u64.to_ne_bytes());
        assert_eq!(&slot1[8..12], &200u32.to_ne_bytes());
        // Lead bytes put the payload after a 3-byte header on the area's first line boundary.
        assert_eq!(&slot1[12..16], &61u32.to_ne_bytes());
        let area = &ring[CTRL_BYTES + SLOTS * SLOT_BYTES..];
        assert_eq!(&area[61..261], &big[..]);
        assert_eq!(c.peek(), Some(&[1u8, 2, 3, 4, 5][..]));
        c.release();
        assert_eq!(c.peek(), Some(&big[..]));
        c.release();
        assert_eq!(
            c.peek(),
            None,
            "and the consumer line is published when idle"
        );
        let ring = unsafe { std::slice::from_raw_parts(base, ring_bytes(cap)) };
        assert_eq!(&ring[64..72], &2u64.to_ne_bytes(), "slots consumed");
        assert_eq!(
            &ring[72..80],
            &320u64.to_ne_bytes(),
            "byte position consumed"
        );
    }

    #[test]
    fn frames_of_every_size_cross_in_order_single_threaded() {
        let cap = 8192;
        let mut m = Mem::new(cap);
        let base = m.base();
        let (mut p, mut c) = unsafe { (Producer::new(base, cap), Consumer::new(base, cap)) };
        let mut next_read = 0;
        for i in 0..2000 {
            let f = frame(i);
            while !p.try_push(&f[..f.len().min(3)], &f[f.len().min(3)..]) {
                // full: drain one
                let got = c.peek().expect("full ring has a frame").to_vec();
                assert_eq!(got, frame(next_read));
                c.release();
                next_read += 1;
            }
        }
        while let Some(got) = c.peek() {
            assert_eq!(got, &frame(next_read)[..]);
            c.release();
            next_read += 1;
        }
        assert_eq!(next_read, 2000);
    }

    #[test]
    fn payloads_after_short_headers_start_on_a_cache_line() {
        let cap = 1 << 16;
        let mut m = Mem::new(cap);
        let base = m.base();
        let (mut p, mut c) = unsafe { (Producer::new(base, cap), Consumer::new(base, cap)) };
        for hlen in [0usize, 24, 40, 48, 64] {
            let h = vec![1u8; hlen];
            let body = vec![2u8; 5000];
            assert!(p.try_push(&h, &body));
            let f = c.peek().unwrap();
            assert_eq!(f.len(), hlen + 5000);
            assert_eq!((f.as_ptr() as usize + hlen) % 64, 0, "header {hlen}");
            assert!(f[..hlen].iter().all(|x| *x == 1) && f[hlen..].iter().all(|x| *x == 2));
            c.release();
        }
    }

    #[test]
    fn a_full_ring_refuses_and_then_accepts_after_release() {
        let cap = 4096;
        let mut m = Mem::new(cap);
        let base = m.base();
        let (mut p, mut c) = unsafe { (Producer::new(base, cap), Consumer::new(base, cap)) };
        let big = vec![7u8; 2000];
        assert!(p.try_push(&[], &big));
        assert!(p.try_push(&[], &big));
        assert!(!p.try_push(&[], &big), "byte area is full");
        assert_eq!(c.peek().unwrap().len(), 2000);
        c.release();
        assert!(p.try_push(&[], &big));
        // slot exhaustion with inline frames
        let mut m = Mem::new(cap);
        let base = m.base();
        let (mut p, mut c) = unsafe { (Producer::new(base, cap), Consumer::new(base, cap)) };
        for _ in 0..SLOTS {
            assert!(p.try_push(b"x", &[]));
        }
        assert!(!p.try_push(b"x", &[]));
        // Room is told in batches: one release is not yet visible...
        c.peek().unwrap();
        c.release();
        assert!(!p.try_push(b"x", &[]));
        // ...a batch is.
        for _ in 1..PUBLISH_FRAMES {
            c.peek().unwrap();
            c.release();
        }
        assert!(p.try_push(b"x", &[]));
        // And a consumer that finds the ring empty tells everything it has read.
        let mut m = Mem::new(cap);
        let base = m.base();
        let (mut p, mut c) = unsafe { (Producer::new(base, cap), Consumer::new(base, cap)) };
        for _ in 0..SLOTS {
            assert!(p.try_push(b"x", &[]));
        }
        let odd = PUBLISH_FRAMES as usize + 3;
        for _ in 0..odd {
            c.peek().unwrap();
            c.release();
        }
        // one batch told, three frames not
        for _ in 0..PUBLISH_FRAMES {
            assert!(p.try_push(b"x", &[]));
        }
        assert!(!p.try_push(b"x", &[]));
        while c.peek().is_some() {
            c.release();
        }
        assert!(p.try_push(b"x", &[]), "an idle consumer told all it read");
    }

    #[test]
    fn two_threads_stream_a_million_bytes_intact() {
        let cap = 16384;
        let mut m = Mem::new(cap);
        let base = m.base() as usize;
        let n = 20_000;
        std::thread::scope(|s| {
            s.spawn(move || {
                let mut p = unsafe { Producer::new(base as *mut u8, cap) };
                for i in 0..n {
                    let f = frame(i);
                    while !p.try_push(&[], &f) {
                        std::hint::spin_loop();
                    }
                }
            });
            let mut c = unsafe { Consumer::new(base as *mut u8, cap) };
            for i in 0..n {
                loop {
                    if let Some(got) = c.peek() {
                        assert_eq!(got, &frame(i)[..], "frame {i}");
                        break;
                    }
                    std::hint::spin_loop();
                }
                c.release();
            }
        });
    }
}
