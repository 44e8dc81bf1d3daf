//! The bootstrap's challenge-response: how a rank proves it holds the job's secret without
//! sending it. The server opens every connection with `NONCE hex` (16 fresh random bytes); the
//! rank answers `HELLO rank proof`, proof = HMAC-SHA256(secret, nonce, rank, job) in hex. A
//! stranger who reads the line learns nothing it can reuse: the next connection has another
//! nonce, and the proof names the rank, so it cannot be replayed for another one.

use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::random_hex;

type HmacSha256 = Hmac<Sha256>;

/// Length of a proof in hex (SHA-256's 32 bytes).
pub const PROOF_HEX: usize = 64;

/// A fresh challenge for one connection.
pub fn nonce() -> String {
    random_hex(16)
}

fn mac(secret: &str, nonce: &str, rank: usize, job: &str) -> HmacSha256 {
    let mut m = HmacSha256::new_from_slice(secret.as_bytes()).expect("HMAC takes any key length");
    // Separated by NUL so that no two (nonce, rank, job) triples feed the same bytes.
    m.update(nonce.as_bytes());
    m.update(b"\0");
    m.update(rank.to_string().as_bytes());
    m.update(b"\0");
    m.update(job.as_bytes());
    m
}

/// The proof rank `rank` of job `job` sends for `nonce`.
pub fn proof(secret: &str, nonce: &str, rank: usize, job: &str) -> String {
    mac(secret, nonce, rank, job)
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Whether `proof` (hex) is the right one, compared in constant time.
pub fn verify(secret: &str, nonce: &str, rank: usize, job: &str, proof: &str) -> bool {
    let Some(bytes) = from_hex(proof) else {
        return false;
    };
    mac(secret, nonce, rank, job).verify_slice(&bytes).is_ok()
}

fn from_hex(text: &str) -> Option<Vec<u8>> {
    // Hex digits only: `from_str_radix` also takes a sign ("+0"), which would let one proof
    // be spelt several ways (found by the `greetings` fuzz target).
    if text.len() != PROOF_HEX || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok())
        .collect()
}

/// The server's first line, `NONCE hex`: the nonce, or `None` for anything else.
pub fn parse_nonce(line: &str) -> Option<&str> {
    let nonce = line.trim_end_matches(['\n', '\r']).strip_prefix("NONCE ")?;
    let ok = (16..=128).contains(&nonce.len()) && nonce.bytes().all(|b| b.is_ascii_hexdigit());
    ok.then_some(nonce)
}

/// A connection's greeting, `HELLO rank proof`: the rank and the proof as sent (the server
/// checks the proof, then the rank against the job's size); `None` for any other line.
pub fn parse_hello(line: &str) -> Option<(usize, &str)> {
    let mut words = line.trim_end_matches(['\n', '\r']).split(' ');
    match (words.next(), words.next(), words.next(), words.next()) {
        (Some("HELLO"), Some(rank), Some(proof), None) => {
            // Digits only: `usize::from_str` also takes a leading '+', which would let one
            // rank be spelt two ways.
            if rank.is_empty() || rank.len() > 10 || !rank.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            Some((rank.parse().ok()?, proof))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proof_holds_only_for_its_secret_nonce_rank_and_job() {
        let n = "00112233445566778899aabbccddeeff";
        let p = proof("s3cret", n, 1, "job");
        assert_eq!(p.len(), PROOF_HEX);
        assert!(verify("s3cret", n, 1, "job", &p));
        assert!(!verify("guess", n, 1, "job", &p));
        assert!(!verify(
            "s3cret",
            "ffeeddccbbaa99887766554433221100",
            1,
            "job",
            &p
        ));
        assert!(!verify("s3cret", n, 2, "job", &p));
        assert!(!verify("s3cret", n, 1, "other", &p));
        assert!(!verify("s3cret", n, 1, "job", "Open_MPI-job"));
        assert!(!verify("s3cret", n, 1, "job", &p.to_uppercase()[..63]));
        // A sign in a pair of digits: "+e" reads as 0x0e with from_str_radix.
        let i = (0..PROOF_HEX)
            .step_by(2)
            .find(|i| &p[*i..*i + 1] == "0")
            .expect("a proof with a pair starting with 0");
        let signed = format!("{}+{}", &p[..i], &p[i + 1..]);
        assert!(!verify("s3cret", n, 1, "job", &signed), "{signed}");
    }

    /// RFC 4231 test case 2: the HMAC is the standard one, so another implementation of a
    /// rank could speak this protocol.
    #[test]
    fn the_mac_is_rfc_4231_hmac_sha256() {
        let mut m = HmacSha256::new_from_slice(b"Jefe").unwrap();
        m.update(b"what do ya want for nothing?");
        let hex: String = m
            .finalize()
            .into_bytes()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(
            hex,
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn greetings_decode() {
        assert_eq!(parse_hello("HELLO 3 abc\n"), Some((3, "abc")));
        assert_eq!(parse_hello("HELLO 3"), None);
        assert_eq!(parse_hello("HELLO +3 abc"), None);
        assert_eq!(parse_hello("HELLO 3 abc extra"), None);
        assert_eq!(parse_hello("HELLO 99999999999 abc"), None);
        assert_eq!(
            parse_nonce("NONCE 00112233445566778899aabbccddeeff\n"),
            Some("00112233445566778899aabbccddeeff")
        );
        assert_eq!(parse_nonce("NONCE xyz"), None);
        assert_eq!(parse_nonce("OK"), None);
    }
}
