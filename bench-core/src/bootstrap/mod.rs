//! Bootstrap: how ranks learn who they are and exchange endpoint addresses before any fabric
//! is up.
//!
//! A [`Bootstrap`] gives a rank its rank and size, a key-value store with blocking gets, named
//! fences, and a one-way channel to the frontend (stage reports and result events). The local
//! launcher serves it over TCP on loopback ([`tcp::Server`]); every wait on it is bounded and
//! a timeout names what was awaited. Over TCP a rank proves it holds the job's secret
//! ([`auth`]): a random one the launcher hands its ranks, or under mpirun or srun
//! `FABBENCH_TOKEN` or the user's key file ([`keyfile`]).

pub mod auth;
pub mod dir;
pub mod discover;
pub mod keyfile;
pub mod line;
pub mod local;
#[cfg(test)]
mod strangers;
pub mod tcp;

use std::time::Duration;

/// Why a bootstrap operation failed. Messages name the key, fence or server involved.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BootstrapError {
    #[error("timed out after {} waiting for {what}", humantime::format_duration(*.after))]
    Timeout { what: String, after: Duration },
    #[error("bootstrap server {addr}: {reason}")]
    Server { addr: String, reason: String },
    #[error("bootstrap address '{0}' is not valid: use tcp://HOST:PORT or dir:PATH")]
    BadAddress(String),
    #[error("rank discovery: {0}")]
    Discovery(String),
}

/// One rank's view of the bootstrap service.
pub trait Bootstrap: Send + Sync {
    fn rank(&self) -> usize;
    fn size(&self) -> usize;
    /// A random per-job secret every rank shares (authenticates fabric connections).
    fn token(&self) -> &str;
    /// A per-job id, used to name shared resources so they can be found and removed.
    fn job_id(&self) -> &str;
    /// Publishes `value` under `key`. Keys are namespaced by the caller, e.g. `shm/1/pid`.
    fn put(&self, key: &str, value: &str) -> Result<(), BootstrapError>;
    /// Waits up to `timeout` for `key` to be published.
    fn get(&self, key: &str, timeout: Duration) -> Result<String, BootstrapError>;
    /// Returns once every rank has called `fence` with the same name.
    fn fence(&self, name: &str, timeout: Duration) -> Result<(), BootstrapError>;
    /// Tells the frontend what this rank is doing, so a failure can name the stage. Best effort.
    fn report_stage(&self, stage: &str);
    /// Sends one event (a JSON document on one line) to the frontend.
    fn send_event(&self, json: &str) -> Result<(), BootstrapError>;
    /// Whether every rank is a thread of this process (emulated fabrics need that).
    fn in_process(&self) -> bool {
        false
    }
    /// The local address this rank reaches the bootstrap from: on a multi-host job, the
    /// interface that routes to rank 0's host, a good default for fabric traffic.
    fn local_ip(&self) -> Option<std::net::IpAddr> {
        None
    }
}

/// Environment variables the local launcher sets for each rank.
pub mod env {
    pub const RANK: &str = "FABBENCH_RANK";
    pub const SIZE: &str = "FABBENCH_SIZE";
    pub const BOOTSTRAP: &str = "FABBENCH_BOOTSTRAP";
    pub const TOKEN: &str = "FABBENCH_TOKEN";
    pub const JOB_ID: &str = "FABBENCH_JOB_ID";
}

/// Escapes a value so it travels as one space-free token on a text line.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '%' => out.push_str("%25"),
            ' ' => out.push_str("%20"),
            '\n' => out.push_str("%0A"),
            '\r' => out.push_str("%0D"),
            '\t' => out.push_str("%09"),
            c => out.push(c),
        }
    }
    out
}

/// Inverse of [`escape`]; unknown escapes are kept literally.
pub fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('%') {
        out.push_str(&rest[..i]);
        let code = rest.get(i + 1..i + 3);
        let c = match code {
            Some("25") => Some('%'),
            Some("20") => Some(' '),
            Some("0A") => Some('\n'),
            Some("0D") => Some('\r'),
            Some("09") => Some('\t'),
            _ => None,
        };
        match c {
            Some(c) => {
                out.push(c);
                rest = &rest[i + 3..];
            }
            None => {
                out.push('%');
                rest = &rest[i + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// A fresh random hex string of `bytes` random bytes, for tokens and job ids.
pub fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).expect("the kernel's random source");
    buf.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_round_trips_awkward_text() {
        for t in [
            "",
            "plain",
            "a b",
            "100%",
            "line\nbreak\r\tx",
            "%20 literal",
            "%zz",
        ] {
            let e = escape(t);
            assert!(!e.contains([' ', '\n', '\r', '\t']), "{e:?}");
            assert_eq!(unescape(&e), t);
        }
    }

    #[test]
    fn random_hex_has_the_asked_length_and_varies() {
        let a = random_hex(16);
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, random_hex(16));
    }
}
