//! The first bytes a stranger can send a job's listeners: the tcp fabric's hello (magic,
//! token, rank, size; `transports::tcp::decode_hello`) and the bootstrap's greeting lines
//! (`NONCE hex` from the server, `HELLO rank proof` from a rank; `bench_core::bootstrap::auth`).
//! The first byte picks the decoder. What decodes must be what an honest peer would have sent.
#![no_main]

use bench_core::bootstrap::auth::{parse_hello, parse_nonce, proof, verify, PROOF_HEX};
use libfuzzer_sys::fuzz_target;
use transports::tcp::{decode_hello, hello};

const TOKEN: &str = "0123456789abcdef0123456789abcdef";
const NONCE: &str = "00112233445566778899aabbccddeeff";

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    if which % 2 == 0 {
        for (me, size) in [(0, 2), (1, 4), (0, 1)] {
            if let Ok(r) = decode_hello(rest, TOKEN, me, size) {
                assert!(me < r && r < size, "rank {r} accepted by {me} of {size}");
                assert_eq!(&hello(TOKEN, r, size)[..], rest);
            }
        }
        return;
    }
    // The server reads greetings as text: bytes that are not UTF-8 are refused before this.
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    if let Some(n) = parse_nonce(text) {
        assert!(n.bytes().all(|b| b.is_ascii_hexdigit()));
    }
    if let Some((rank, p)) = parse_hello(text) {
        assert_eq!(parse_hello(&format!("HELLO {rank} {p}")), Some((rank, p)));
        // Only the proof made with the secret passes.
        let good = proof("secret", NONCE, rank, "job");
        let same = p.len() == PROOF_HEX && p.eq_ignore_ascii_case(&good);
        assert_eq!(verify("secret", NONCE, rank, "job", p), same);
    }
});
