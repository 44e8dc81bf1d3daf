//! A frame header as a peer sends it: `Header::decode` returns an error or a header whose
//! encoding is the frame's first bytes (every header bit is a field or refused), never panics
//! and never reads past the frame.
#![no_main]

use libfuzzer_sys::fuzz_target;
use transports::header::{Header, MAX_HEADER_LEN};

fuzz_target!(|frame: &[u8]| {
    if let Ok(h) = Header::decode(frame) {
        let n = h.ty.header_len();
        assert!(n <= frame.len());
        let mut out = [0u8; MAX_HEADER_LEN];
        assert_eq!(h.encode(&mut out), n);
        assert_eq!(&out[..n], &frame[..n]);
    }
});
