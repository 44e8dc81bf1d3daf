//! What a `--bootstrap tcp://HOST:PORT` needs before anything listens or connects: rank 0's
//! HOST must be an address of its own host (it listens there and nowhere else), and every rank
//! needs the secret it proves to the bootstrap server: `FABBENCH_TOKEN` if set, else the user's
//! key file `$HOME/.fabbench/key` (made on first use; homes are shared across a cluster's
//! nodes). Without either, only a loopback bootstrap or `--bootstrap-insecure` goes on, with
//! the job's predictable id as the secret.

use std::net::{IpAddr, SocketAddr, TcpListener, ToSocketAddrs};
use std::path::PathBuf;

use bench_core::bootstrap::discover::External;
use bench_core::bootstrap::keyfile::{self, KeyError};

use crate::error::PlanError;

/// Where the secret of an externally launched job comes from.
#[derive(Clone, PartialEq, Eq)]
pub enum Secret {
    /// `FABBENCH_TOKEN`.
    Env(String),
    /// The user's key file.
    KeyFile(PathBuf, String),
    /// No secret: the launcher's name and job id, which anyone can guess (a loopback bootstrap
    /// or `--bootstrap-insecure`).
    Guessable(String),
    /// A `dir:PATH` bootstrap: the directory's permissions guard it.
    Unused,
}

impl Secret {
    /// The bytes ranks prove they hold.
    pub fn value(&self) -> &str {
        match self {
            Secret::Env(s) | Secret::KeyFile(_, s) | Secret::Guessable(s) => s,
            Secret::Unused => "",
        }
    }

    /// Where it comes from, for logs (never the secret itself).
    pub fn source(&self) -> String {
        match self {
            Secret::Env(_) => "FABBENCH_TOKEN".into(),
            Secret::KeyFile(p, _) => p.display().to_string(),
            Secret::Guessable(_) => "no secret (the job id)".into(),
            Secret::Unused => "none".into(),
        }
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secret({})", self.source())
    }
}

/// The addresses HOST:PORT names, or a refusal saying so.
fn resolve(flag: &str, hostport: &str) -> Result<Vec<SocketAddr>, PlanError> {
    hostport
        .to_socket_addrs()
        .map(|a| a.collect::<Vec<_>>())
        .ok()
        .filter(|a| !a.is_empty())
        .ok_or_else(|| {
            PlanError::Refused(format!(
                "{flag}: cannot resolve the host; give rank 0's host name or address"
            ))
        })
}

/// Whether this host has `ip` (a listener can be bound to it).
fn is_mine(ip: IpAddr) -> bool {
    TcpListener::bind(SocketAddr::new(ip, 0)).is_ok()
}

fn my_addresses() -> Vec<String> {
    let mut out: Vec<String> = nix::ifaddrs::getifaddrs()
        .map(|it| {
            it.filter_map(|a| {
                let sa = a.address?;
                let ip = sa
                    .as_sockaddr_in()
                    .map(|s| IpAddr::V4(s.ip()))
                    .or_else(|| sa.as_sockaddr_in6().map(|s| IpAddr::V6(s.ip())))?;
                Some(format!("{ip} ({})", a.interface_name))
            })
            .collect()
        })
        .unwrap_or_default();
    out.dedup();
    out
}

/// Rank 0 serves the bootstrap on HOST:PORT: HOST must be one of its own addresses, or a name
/// for one, as it listens there and nowhere else.
pub fn check_host_is_mine(hostport: &str) -> Result<(), PlanError> {
    let flag = format!("--bootstrap tcp://{hostport}");
    let addrs = resolve(&flag, hostport)?;
    if addrs.iter().any(|a| is_mine(a.ip())) {
        return Ok(());
    }
    Err(PlanError::Refused(format!(
        "{flag}: the host is not an address of this machine, and rank 0 serves the bootstrap on it; valid: one of {}, or a name for one",
        my_addresses().join(", ")
    )))
}

/// The secret of a job started by `ext` meeting at `tcp://hostport`.
pub fn for_tcp(ext: &External, hostport: &str, insecure: bool) -> Result<Secret, PlanError> {
    let from_env = std::env::var("FABBENCH_TOKEN")
        .ok()
        .filter(|t| !t.is_empty());
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty());
    for_tcp_with(ext, hostport, insecure, from_env, home.map(PathBuf::from))
}

/// [`for_tcp`] with the environment given.
pub fn for_tcp_with(
    ext: &External,
    hostport: &str,
    insecure: bool,
    from_env: Option<String>,
    home: Option<PathBuf>,
) -> Result<Secret, PlanError> {
    if let Some(t) = from_env {
        return Ok(Secret::Env(t));
    }
    let why = match home {
        None => "HOME is not set, so there is no key file".to_string(),
        Some(home) => {
            let path = keyfile::path_in(&home);
            match keyfile::load_or_create(&path) {
                Ok(key) => return Ok(Secret::KeyFile(path, key)),
                Err(KeyError::Unsafe(why)) => {
                    return Err(PlanError::Refused(format!(
                        "the bootstrap's key file {why} (or set FABBENCH_TOKEN on every rank)"
                    )))
                }
                Err(KeyError::Unavailable(why)) => why,
            }
        }
    };
    let guessable = Secret::Guessable(format!(
        "{}-{}",
        ext.launcher.replace(' ', "_"),
        ext.job.as_deref().unwrap_or("job")
    ));
    let loopback = hostport
        .to_socket_addrs()
        .map(|mut a| a.all(|a| a.ip().is_loopback()))
        .unwrap_or(false);
    if insecure || loopback {
        tracing::warn!(
            "the tcp bootstrap runs without a secret ({why}): any process that can reach tcp://{hostport} and guess the job id can join"
        );
        return Ok(guessable);
    }
    Err(PlanError::Refused(format!(
        "--bootstrap tcp://{hostport} is reachable from other hosts but there is no secret to authenticate ranks ({why}): set FABBENCH_TOKEN to the same secret on every rank, make $HOME/.fabbench/key creatable, or give --bootstrap-insecure to accept any peer that guesses the job id"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ext() -> External {
        External {
            launcher: "Open MPI",
            rank: 0,
            size: 2,
            job: None,
        }
    }

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "fabbench-secret-{name}-{}",
            bench_core::bootstrap::random_hex(4)
        ));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn the_token_wins_then_the_key_file() {
        let home = scratch("order");
        let s = for_tcp_with(
            &ext(),
            "10.0.0.1:1",
            false,
            Some("t".into()),
            Some(home.clone()),
        );
        assert_eq!(s.unwrap(), Secret::Env("t".into()));
        let s = for_tcp_with(&ext(), "10.0.0.1:1", false, None, Some(home.clone())).unwrap();
        assert!(
            matches!(&s, Secret::KeyFile(p, k) if p.starts_with(&home) && k.len() == 64),
            "{s:?}"
        );
        let _ = std::fs::remove_dir_all(home);
    }

    #[test]
    fn without_a_secret_only_loopback_or_the_insecure_option_go_on() {
        let s = for_tcp_with(&ext(), "10.0.0.1:1", false, None, None);
        let err = s.unwrap_err().to_string();
        assert!(
            err.contains("--bootstrap-insecure") && err.contains("FABBENCH_TOKEN"),
            "{err}"
        );
        let s = for_tcp_with(&ext(), "10.0.0.1:1", true, None, None).unwrap();
        assert_eq!(s, Secret::Guessable("Open_MPI-job".into()));
        let s = for_tcp_with(&ext(), "127.0.0.1:1", false, None, None).unwrap();
        assert_eq!(s, Secret::Guessable("Open_MPI-job".into()));
    }

    #[test]
    fn the_secret_is_never_printed() {
        let s = Secret::Env("hunter2".into());
        assert!(!format!("{s:?}").contains("hunter2"));
    }

    #[test]
    fn a_host_that_is_not_mine_is_refused() {
        assert!(check_host_is_mine("127.0.0.1:7000").is_ok());
        // TEST-NET-3 (RFC 5737): never a local address.
        let err = check_host_is_mine("203.0.113.7:7000")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("not an address of this machine") && err.contains("127.0.0.1 (lo)"),
            "{err}"
        );
    }
}
