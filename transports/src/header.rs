//! The engine's frame headers, encoded field by field in network byte order.
//!
//! Every frame starts with the same 24-byte common part; rendezvous frames append fixed
//! extensions. Each field sits at an offset that is a multiple of its own size, with explicit
//! reserved bytes, so a peer of any endianness or alignment rule reads the same values. Structs
//! are never transmuted onto the wire, and decoding checks lengths and types so garbage yields an
//! error, never a panic.
//!
//! ```text
//! offset  0: u8  frame type        1: u8 context     2: u16 flags
//!         4: i32 tag               8: u32 sequence  12: u32 source rank
//!        16: u64 message length (whole message, not this fragment)
//! RTS    24: u64 sender request   32: u64 sender buffer address
//! CTS    24: u64 sender request   32: u64 receiver request  40: u64 receiver buffer address
//! DATA   24: u64 receiver request 32: u64 offset of this fragment in the message
//!        (placed: the header alone, its message length field the fragment's length)
//! FIN    24: u64 sender request
//! PUT    24: u64 sender request   32: u64 receiver request  40: u64 destination address
//!        (message length field: the bytes the sender is to write, the message's tail)
//! PUTFIN 24: u64 receiver request (message length field: the bytes written)
//! ```

use crate::order::HostOrder;

/// Bytes of the common part.
pub const COMMON_LEN: usize = 24;
/// The largest header of any frame type.
pub const MAX_HEADER_LEN: usize = 48;

/// The flag on an RTS saying the sender's buffer may be read in place (single copy).
pub const FLAG_SINGLE_COPY_OK: u16 = 1;

/// The flag on a DATA frame saying its wire already wrote the payload into the receive buffer
/// (see [`crate::wire::WireCaps::places_data`]): the frame is the header alone, and its message
/// length field holds the fragment's length, as PUTFIN's holds the bytes a put wrote.
pub const FLAG_PLACED: u16 = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum FrameType {
    Eager = 1,
    Rts = 2,
    Cts = 3,
    Data = 4,
    Fin = 5,
    /// The receiver asks the sender to write the message's tail into its buffer (shared
    /// single copy) while it reads the head itself.
    Put = 6,
    /// The sender wrote the tail a PUT asked for.
    PutFin = 7,
}

impl FrameType {
    fn from_u8(v: u8) -> Option<FrameType> {
        Some(match v {
            1 => FrameType::Eager,
            2 => FrameType::Rts,
            3 => FrameType::Cts,
            4 => FrameType::Data,
            5 => FrameType::Fin,
            6 => FrameType::Put,
            7 => FrameType::PutFin,
            _ => return None,
        })
    }

    /// Header length of this frame type.
    pub fn header_len(self) -> usize {
        match self {
            FrameType::Eager => COMMON_LEN,
            FrameType::Rts | FrameType::Data => COMMON_LEN + 16,
            FrameType::Cts | FrameType::Put => COMMON_LEN + 24,
            FrameType::Fin | FrameType::PutFin => COMMON_LEN + 8,
        }
    }
}

/// A decoded header. Fields a frame type does not carry are zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub ty: FrameType,
    pub ctx: u8,
    pub flags: u16,
    pub tag: i32,
    pub seq: u32,
    pub src: u32,
    pub len: u64,
    /// RTS, CTS, FIN, PUT: the sender's request. DATA, PUTFIN: the receiver's request.
    pub a: u64,
    /// RTS: sender buffer address. CTS, PUT: receiver request. DATA: fragment offset.
    pub b: u64,
    /// CTS: receiver buffer address. PUT: where the tail goes.
    pub c: u64,
}

/// Why bytes did not decode as a header.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    #[error("frame of {got} bytes is shorter than its {need}-byte header")]
    Short { got: usize, need: usize },
    #[error("unknown frame type {0}")]
    UnknownType(u8),
    #[error("reserved header bits set")]
    Reserved,
}

impl Header {
    pub fn new(ty: FrameType) -> Header {
        Header {
            ty,
            ctx: 0,
            flags: 0,
            tag: 0,
            seq: 0,
            src: 0,
            len: 0,
            a: 0,
            b: 0,
            c: 0,
        }
    }

    /// Encodes into `out` and returns the header length.
    #[inline]
    pub fn encode(&self, out: &mut [u8; MAX_HEADER_LEN]) -> usize {
        self.encode_as(HostOrder::Native, out)
    }

    /// Encodes as a host keeping numbers in `order` would (see [`crate::order`]); the bytes
    /// are the same whatever the order.
    #[inline]
    pub fn encode_as(&self, order: HostOrder, out: &mut [u8; MAX_HEADER_LEN]) -> usize {
        // One branch per header; each arm has its order fixed, so the fields convert inline.
        match order {
            HostOrder::Native => self.encode_in(HostOrder::Native, out),
            HostOrder::Big => self.encode_in(HostOrder::Big, out),
        }
    }

    #[inline(always)]
    fn encode_in(&self, o: HostOrder, out: &mut [u8; MAX_HEADER_LEN]) -> usize {
        out[0] = self.ty as u8;
        out[1] = self.ctx;
        o.put_net(self.flags, &mut out[2..4]);
        o.put_net(self.tag, &mut out[4..8]);
        o.put_net(self.seq, &mut out[8..12]);
        o.put_net(self.src, &mut out[12..16]);
        o.put_net(self.len, &mut out[16..24]);
        let n = self.ty.header_len();
        if n >= 32 {
            o.put_net(self.a, &mut out[24..32]);
        }
        if n >= 40 {
            o.put_net(self.b, &mut out[32..40]);
        }
        if n >= 48 {
            o.put_net(self.c, &mut out[40..48]);
        }
        n
    }

    /// Decodes a frame's header; the payload is `&frame[header.ty.header_len()..]`.
    #[inline]
    pub fn decode(frame: &[u8]) -> Result<Header, HeaderError> {
        Header::decode_as(HostOrder::Native, frame)
    }

    /// Decodes as a host keeping numbers in `order` would; the result is the same whatever the
    /// order.
    #[inline]
    pub fn decode_as(order: HostOrder, frame: &[u8]) -> Result<Header, HeaderError> {
        match order {
            HostOrder::Native => Header::decode_in(HostOrder::Native, frame),
            HostOrder::Big => Header::decode_in(HostOrder::Big, frame),
        }
    }

    #[inline(always)]
    fn decode_in(o: HostOrder, frame: &[u8]) -> Result<Header, HeaderError> {
        if frame.len() < COMMON_LEN {
            return Err(HeaderError::Short {
                got: frame.len(),
                need: COMMON_LEN,
            });
        }
        let ty = FrameType::from_u8(frame[0]).ok_or(HeaderError::UnknownType(frame[0]))?;
        let need = ty.header_len();
        if frame.len() < need {
            return Err(HeaderError::Short {
                got: frame.len(),
                need,
            });
        }
        let u64_at = |at: usize| o.get_net::<u64>(&frame[at..at + 8]);
        let flags: u16 = o.get_net(&frame[2..4]);
        let known = match ty {
            FrameType::Data => FLAG_SINGLE_COPY_OK | FLAG_PLACED,
            _ => FLAG_SINGLE_COPY_OK,
        };
        if flags & !known != 0 {
            return Err(HeaderError::Reserved);
        }
        Ok(Header {
            ty,
            ctx: frame[1],
            flags,
            tag: o.get_net(&frame[4..8]),
            seq: o.get_net(&frame[8..12]),
            src: o.get_net(&frame[12..16]),
            len: u64_at(16),
            a: if need >= 32 { u64_at(24) } else { 0 },
            b: if need >= 40 { u64_at(32) } else { 0 },
            c: if need >= 48 { u64_at(40) } else { 0 },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(ty: FrameType) -> Header {
        let n = ty.header_len();
        Header {
            ty,
            ctx: 1,
            flags: match ty {
                FrameType::Rts => FLAG_SINGLE_COPY_OK,
                FrameType::Data => FLAG_PLACED,
                _ => 0,
            },
            tag: -7,
            seq: 0xdead_beef,
            src: 3,
            len: 1 << 40,
            a: if n >= 32 { 0x0102_0304_0506_0708 } else { 0 },
            b: if n >= 40 { 42 } else { 0 },
            c: if n >= 48 { u64::MAX } else { 0 },
        }
    }

    #[test]
    fn every_frame_type_round_trips() {
        for ty in [
            FrameType::Eager,
            FrameType::Rts,
            FrameType::Cts,
            FrameType::Data,
            FrameType::Fin,
            FrameType::Put,
            FrameType::PutFin,
        ] {
            let h = sample(ty);
            let mut buf = [0u8; MAX_HEADER_LEN];
            let n = h.encode(&mut buf);
            assert_eq!(n, ty.header_len());
            assert_eq!(Header::decode(&buf[..n]).unwrap(), h);
        }
    }

    #[test]
    fn layout_is_big_endian_at_fixed_offsets() {
        let mut h = Header::new(FrameType::Eager);
        h.tag = 1;
        h.seq = 2;
        h.src = 3;
        h.len = 4;
        let mut buf = [0u8; MAX_HEADER_LEN];
        h.encode(&mut buf);
        assert_eq!(
            &buf[..24],
            &[1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 4]
        );
    }

    /// Every frame type's bytes, pinned: each field at its offset, most significant byte
    /// first, the same from either host order, and nothing written past the header.
    #[test]
    fn every_frame_type_has_its_golden_bytes() {
        const TAG: [u8; 4] = [0xff, 0xff, 0xff, 0xf9];
        const SEQ: [u8; 4] = [0xde, 0xad, 0xbe, 0xef];
        const SRC: [u8; 4] = [0, 0, 0, 3];
        const LEN: [u8; 8] = [0, 0, 1, 0, 0, 0, 0, 0];
        const A: [u8; 8] = [1, 2, 3, 4, 5, 6, 7, 8];
        const B: [u8; 8] = [0, 0, 0, 0, 0, 0, 0, 42];
        const C: [u8; 8] = [0xff; 8];
        let golden = |ty: FrameType, flags: [u8; 2], ext: &[&[u8]]| {
            let mut v = vec![ty as u8, 1];
            v.extend_from_slice(&flags);
            for f in [&TAG[..], &SEQ, &SRC, &LEN]
                .into_iter()
                .chain(ext.iter().copied())
            {
                v.extend_from_slice(f);
            }
            v
        };
        let cases = [
            (FrameType::Eager, golden(FrameType::Eager, [0, 0], &[])),
            (FrameType::Rts, golden(FrameType::Rts, [0, 1], &[&A, &B])),
            (
                FrameType::Cts,
                golden(FrameType::Cts, [0, 0], &[&A, &B, &C]),
            ),
            (FrameType::Data, golden(FrameType::Data, [0, 2], &[&A, &B])),
            (FrameType::Fin, golden(FrameType::Fin, [0, 0], &[&A])),
            (
                FrameType::Put,
                golden(FrameType::Put, [0, 0], &[&A, &B, &C]),
            ),
            (FrameType::PutFin, golden(FrameType::PutFin, [0, 0], &[&A])),
        ];
        for (ty, want) in cases {
            assert_eq!(want.len(), ty.header_len(), "{ty:?}");
            for order in [HostOrder::Native, HostOrder::Big] {
                let mut buf = [0xaau8; MAX_HEADER_LEN];
                let n = sample(ty).encode_as(order, &mut buf);
                assert_eq!(&buf[..n], &want[..], "{ty:?} from {order:?}");
                assert!(
                    buf[n..].iter().all(|&b| b == 0xaa),
                    "{ty:?} wrote past its header"
                );
                assert_eq!(Header::decode_as(order, &want), Ok(sample(ty)));
            }
        }
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(matches!(
            Header::decode(&[1, 2, 3]),
            Err(HeaderError::Short { .. })
        ));
        let mut buf = [0u8; MAX_HEADER_LEN];
        buf[0] = 99;
        assert_eq!(Header::decode(&buf), Err(HeaderError::UnknownType(99)));
        buf[0] = FrameType::Cts as u8;
        assert!(matches!(
            Header::decode(&buf[..30]),
            Err(HeaderError::Short { need: 48, .. })
        ));
        buf[0] = FrameType::Eager as u8;
        buf[2] = 0x80;
        assert_eq!(Header::decode(&buf), Err(HeaderError::Reserved));
        assert_eq!(
            Header::decode_as(HostOrder::Big, &buf),
            Err(HeaderError::Reserved)
        );
        buf[2] = 0;
        // Placed is a DATA frame's flag only.
        buf[3] = FLAG_PLACED as u8;
        assert_eq!(Header::decode(&buf), Err(HeaderError::Reserved));
        buf[0] = FrameType::Data as u8;
        assert_eq!(Header::decode(&buf).map(|h| h.flags), Ok(FLAG_PLACED));
        // every prefix of every byte pattern decodes or errors
        for len in 0..MAX_HEADER_LEN {
            for fill in [0u8, 1, 2, 3, 4, 5, 0xff] {
                let junk = vec![fill; len];
                let _ = Header::decode(&junk);
                let _ = Header::decode_as(HostOrder::Big, &junk);
            }
        }
    }
}
