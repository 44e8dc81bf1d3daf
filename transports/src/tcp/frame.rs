//! The tcp wire's framing: every frame is a u32 length prefix in network order, then that many
//! bytes. This is the first thing a peer's bytes go through, so it is kept apart from the
//! sockets as functions of bytes alone (the fuzz target `tcp_frames` runs the same ones), and
//! a prefix announcing more than [`MAX_FRAME`] is refused: the wire grows its buffer to hold a
//! frame, and a peer's four bytes must not be able to ask for 4 GiB.

/// Bytes of the length prefix.
pub const PREFIX: usize = 4;

/// The largest frame the wire sends or accepts (its `max_frame`).
pub const MAX_FRAME: usize = 1 << 30;

/// A prefix announced a frame longer than [`MAX_FRAME`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Oversized(pub u64);

impl std::fmt::Display for Oversized {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "announced a frame of {} bytes; a frame is at most {MAX_FRAME} bytes",
            self.0
        )
    }
}

/// The length prefix of a frame of `len` bytes (at most [`MAX_FRAME`]).
pub fn prefix(len: usize) -> [u8; PREFIX] {
    debug_assert!(len <= MAX_FRAME, "a frame of {len} bytes");
    (len as u32).to_be_bytes()
}

/// The length the prefix at the start of `b` announces: None while fewer than [`PREFIX`]
/// bytes have come.
pub fn announced(b: &[u8]) -> Result<Option<usize>, Oversized> {
    let Some(p) = b.first_chunk::<PREFIX>() else {
        return Ok(None);
    };
    let len = u32::from_be_bytes(*p) as usize;
    if len > MAX_FRAME {
        return Err(Oversized(len as u64));
    }
    Ok(Some(len))
}

/// The frame at the start of `b` (its bytes after the prefix) once all of it has come; the
/// next frame starts [`PREFIX`] + its length further on.
pub fn next_frame(b: &[u8]) -> Result<Option<&[u8]>, Oversized> {
    Ok(announced(b)?.and_then(|len| b.get(PREFIX..PREFIX + len)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_split_where_their_prefixes_say() {
        let mut stream = Vec::new();
        for f in [&b"abc"[..], b"", b"hello"] {
            stream.extend_from_slice(&prefix(f.len()));
            stream.extend_from_slice(f);
        }
        assert_eq!(
            &stream[..7],
            &[0, 0, 0, 3, b'a', b'b', b'c'],
            "network order"
        );
        let mut got = Vec::new();
        let mut at = 0;
        while let Some(f) = next_frame(&stream[at..]).unwrap() {
            got.push(f.to_vec());
            at += PREFIX + f.len();
        }
        assert_eq!(got, [b"abc".to_vec(), vec![], b"hello".to_vec()]);
        assert_eq!(at, stream.len());
        assert_eq!(
            next_frame(&stream[..6]),
            Ok(None),
            "an incomplete frame waits"
        );
        assert_eq!(announced(&stream[..3]), Ok(None));
    }

    #[test]
    fn a_prefix_past_the_largest_frame_is_refused() {
        assert_eq!(announced(&prefix(MAX_FRAME)), Ok(Some(MAX_FRAME)));
        let over = ((MAX_FRAME + 1) as u32).to_be_bytes();
        assert_eq!(announced(&over), Err(Oversized(MAX_FRAME as u64 + 1)));
        assert_eq!(next_frame(&[0xff; 4]), Err(Oversized(u32::MAX as u64)));
    }
}
