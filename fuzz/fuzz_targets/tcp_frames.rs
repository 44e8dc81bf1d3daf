//! The bytes a peer sends over a tcp fabric connection once set up (after the hello, which
//! this target leaves alone): length-prefixed frames, cut by the wire's `frame::next_frame`
//! and `frame::announced` as they arrive, in pieces of any size. The first byte picks the
//! mode and the second how the stream is cut into arrivals. Mode 0 takes the rest as a raw
//! stream from a peer: no panic; every length the wire would grow its buffer to is at most
//! `MAX_FRAME` (an oversized prefix is an error, not an allocation); the frames and the error
//! are the same however the stream is cut; what is left is an incomplete frame. Mode 1 takes
//! the rest as frames (split at newlines), prefixes them as the sending wire does and checks
//! they come out whole and in order, however cut.
//!
//! Seed corpus (fuzz/corpus/tcp_frames/): the bytes each rank wrote to its peer's connection
//! in `fabbench run osu_latency --fabric tcp -m 8:64 -i 10 -x 2` (captured with `strace -f -e
//! trace=writev -xx`; the writev calls of one process concatenated): `mode0-rankN-stream` is
//! its first twelve frames, `mode0-rankN-end-midframe` its last four cut five bytes short,
//! `mode1-rankN-frames` eight of its frames (headers and payloads) for mode 1, and
//! `mode0-oversized-after-a-frame` rank 0's first frame followed by the prefix ff ff ff ff
//! (written by hand).
#![no_main]

use libfuzzer_sys::fuzz_target;
use transports::tcp::frame::{announced, next_frame, prefix, Oversized, MAX_FRAME, PREFIX};

/// The frames of `stream` arriving in pieces `cut` decides (None: all at once), the error if a
/// prefix is refused, and how many bytes were left over.
fn receive(stream: &[u8], cut: Option<u8>) -> (Vec<Vec<u8>>, Option<Oversized>, usize) {
    let mut buf = Vec::new();
    let mut start = 0;
    let mut frames = Vec::new();
    let mut at = 0;
    let mut step = cut.map_or(stream.len(), |c| c as usize % 17 + 1);
    while at < stream.len() {
        let end = (at + step).min(stream.len());
        buf.extend_from_slice(&stream[at..end]);
        at = end;
        step = cut.map_or(stream.len(), |c| (step * 7 + c as usize) % 23 + 1);
        match announced(&buf[start..]) {
            Ok(Some(len)) => assert!(len <= MAX_FRAME),
            Ok(None) => assert!(buf.len() - start < PREFIX),
            Err(e) => return (frames, Some(e), buf.len() - start),
        }
        loop {
            match next_frame(&buf[start..]) {
                Ok(Some(f)) => {
                    frames.push(f.to_vec());
                    start += PREFIX + f.len();
                }
                Ok(None) => break,
                Err(e) => return (frames, Some(e), buf.len() - start),
            }
        }
    }
    (frames, None, buf.len() - start)
}

fuzz_target!(|data: &[u8]| {
    let [mode, cut, rest @ ..] = data else {
        return;
    };
    if mode % 2 == 0 {
        let got = receive(rest, Some(*cut));
        let whole = receive(rest, None);
        assert_eq!(got.0, whole.0, "frames depend on how the stream was cut");
        assert_eq!(got.1, whole.1);
        let (frames, err, _) = got;
        let used: usize = frames.iter().map(|f| PREFIX + f.len()).sum();
        match err {
            Some(Oversized(len)) => {
                assert!(len > MAX_FRAME as u64);
                assert_eq!(announced(&rest[used..]), Err(Oversized(len)));
            }
            None => assert_eq!(
                next_frame(&rest[used..]),
                Ok(None),
                "a whole frame was left"
            ),
        }
    } else {
        let sent: Vec<&[u8]> = rest.split(|b| *b == b'\n').collect();
        let mut stream = Vec::new();
        for f in &sent {
            stream.extend_from_slice(&prefix(f.len()));
            stream.extend_from_slice(f);
        }
        let (frames, err, left) = receive(&stream, Some(*cut));
        assert_eq!(err, None);
        assert_eq!(left, 0);
        assert_eq!(frames, sent);
    }
});
