//! What a stranger on the network meets at a job's listeners (issue 32, items 4 to 6): the
//! bootstrap of ranks started by mpirun refuses the old guessable token and any wrong proof,
//! and logs them; a job completes while silent and garbage connections hit its bootstrap and
//! its tcp fabric listener; rank 0 listens only on an address of its own; and a bootstrap
//! reachable from other hosts without a secret, or with a key file others can read, is bad
//! input.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;
use crate::run::tcp::finish;

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `fabbench run osu_latency ... --bootstrap BOOT` as rank `rank` of 2 under a faked Open MPI
/// without a job id, with `home` as HOME (where the key file lives).
fn ompi_rank(rank: usize, boot: &str, home: &Path, extra: &[&str]) -> Child {
    let out = scratch("strangers-out");
    Command::new(bin())
        .args([
            "run",
            "osu_latency",
            "--fabric",
            "tcp",
            "-m",
            "1:64",
            "-i",
            "5",
            "-x",
            "1",
            "--bootstrap",
            boot,
            "--out",
            out.to_str().unwrap(),
        ])
        .args(extra)
        .env("OMPI_COMM_WORLD_RANK", rank.to_string())
        .env("OMPI_COMM_WORLD_SIZE", "2")
        .env_remove("FABBENCH_TOKEN")
        .env_remove("RUST_LOG")
        .env("HOME", home)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until something listens on 127.0.0.1:`port`.
fn wait_listening(port: u16) {
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "nothing on {port}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// What a peer reads after writing `bytes` blind (without waiting for the server's greeting).
fn say_blind(port: u16, bytes: &[u8]) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(8))).unwrap();
    let _ = s.write_all(bytes);
    let mut got = Vec::new();
    let _ = s.read_to_end(&mut got);
    String::from_utf8_lossy(&got).into_owned()
}

#[test]
fn an_impostor_with_the_old_token_or_a_wrong_proof_is_refused_and_logged() {
    let _g = serial();
    let home = scratch("strangers-home");
    let port = free_port();
    let boot = format!("tcp://127.0.0.1:{port}");
    let r0 = ompi_rank(0, &boot, &home, &[]);
    wait_listening(port);
    for hello in [
        "HELLO 1 Open_MPI-job\nGET tcp/token 3000\n".to_string(),
        format!("HELLO 1 {}\nGET tcp/token 3000\n", "ab".repeat(32)),
    ] {
        let got = say_blind(port, hello.as_bytes());
        assert!(
            !got.lines().any(|l| l == "OK" || l.starts_with("VAL")),
            "served an impostor: {got:?}"
        );
        assert!(got.contains("ERR bad proof"), "{got:?}");
    }
    let r1 = ompi_rank(1, &boot, &home, &[]);
    let (c1, _, e1) = finish(r1, Duration::from_secs(60));
    let (c0, o0, e0) = finish(r0, Duration::from_secs(60));
    assert_eq!((c0, c1), (0, 0), "rank 0: {e0}\nrank 1: {e1}");
    assert!(o0.contains("# OSU MPI Latency Test"), "{o0}");
    let logged = e0
        .lines()
        .filter(|l| l.contains("bootstrap refused a connection from 127.0.0.1:"))
        .filter(|l| l.contains("claimed rank 1 without proof"))
        .count();
    assert_eq!(logged, 2, "{e0}");
}

/// The ports `pid` listens on (from /proc: its sockets' inodes among the listening ones).
fn listening_ports(pid: u32) -> Vec<u16> {
    let inodes: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| {
            d.flatten()
                .filter_map(|e| std::fs::read_link(e.path()).ok())
                .filter_map(|l| {
                    let l = l.to_string_lossy().into_owned();
                    Some(l.strip_prefix("socket:[")?.strip_suffix(']')?.to_string())
                })
                .collect()
        })
        .unwrap_or_default();
    let table = std::fs::read_to_string(format!("/proc/{pid}/net/tcp")).unwrap_or_default();
    table
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let listening = f.get(3) == Some(&"0A");
            let mine = f.get(9).is_some_and(|i| inodes.iter().any(|x| x == i));
            let port = f.get(1)?.rsplit_once(':')?.1;
            (listening && mine).then(|| u16::from_str_radix(port, 16).ok())?
        })
        .collect()
}

/// 100 silent and 100 garbage connections to `port`, held open until dropped.
fn hit(port: u16) -> Vec<TcpStream> {
    (0..200)
        .filter_map(|i| {
            let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
            if i % 2 == 1 {
                let _ = s.write_all(b"\xff\xfe garbage \x00\x01\n");
            }
            Some(s)
        })
        .collect()
}

/// Rank 0 is waiting in its tcp fabric's set-up for rank 1 when the strangers come: 100
/// silent and 100 garbage connections at the bootstrap and at the fabric's listener. Rank 1
/// then starts, and the job completes. (One silent connection at a time, 2 s each, failed
/// the fabric's set-up after its 10 s.)
#[test]
fn a_job_completes_while_strangers_hit_its_bootstrap_and_tcp_listener() {
    let _g = serial();
    let home = scratch("strangers-home");
    let port = free_port();
    let boot = format!("tcp://127.0.0.1:{port}");
    let r0 = ompi_rank(0, &boot, &home, &[]);
    wait_listening(port);
    let at_boot = hit(port);
    let start = Instant::now();
    let fabric = loop {
        if let Some(p) = listening_ports(r0.id()).into_iter().find(|p| *p != port) {
            break p;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "no tcp listener");
        std::thread::sleep(Duration::from_millis(10));
    };
    let at_fabric = hit(fabric);
    let r1 = ompi_rank(1, &boot, &home, &[]);
    let (c1, _, e1) = finish(r1, Duration::from_secs(60));
    let (c0, o0, e0) = finish(r0, Duration::from_secs(60));
    drop((at_boot, at_fabric));
    assert_eq!((c0, c1), (0, 0), "rank 0: {e0}\nrank 1: {e1}");
    assert!(o0.contains("# OSU MPI Latency Test"), "{o0}");
    // Refusals are logged, but a flood does not fill the terminal.
    let boot_lines = e0
        .lines()
        .filter(|l| l.contains("bootstrap refused a connection"))
        .count();
    assert!((1..=10).contains(&boot_lines), "{e0}");
    let tcp_lines = e0
        .lines()
        .filter(|l| l.contains("tcp: refused a connection"))
        .count();
    assert!((1..=10).contains(&tcp_lines), "{e0}");
}

/// Rank 0 serves the bootstrap on HOST: a HOST that is not this machine's is bad input (it
/// used to listen on every address instead, silently).
#[test]
fn a_bootstrap_host_that_is_not_this_machine_is_refused() {
    let home = scratch("strangers-home");
    // TEST-NET-3 (RFC 5737): never an address of this machine.
    let boot = format!("tcp://203.0.113.7:{}", free_port());
    let start = Instant::now();
    let (code, _, err) = finish(
        ompi_rank(0, &boot, &home, &["--set", "timeout=1s"]),
        Duration::from_secs(30),
    );
    assert_eq!(code, 2, "{err}");
    assert!(start.elapsed() < Duration::from_secs(5));
    assert!(
        err.contains("not an address of this machine") && err.contains("127.0.0.1 (lo)"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// Without FABBENCH_TOKEN and with no key file to be had (HOME cannot hold one), a bootstrap
/// other hosts can reach is refused, unless asked for by name.
#[test]
fn a_bootstrap_beyond_loopback_without_a_secret_is_refused() {
    let nowhere = PathBuf::from("/proc/no-such-home");
    // Rank 1 connects to rank 0's host, which need not be this one.
    let boot = format!("tcp://203.0.113.7:{}", free_port());
    let (code, _, err) = finish(
        ompi_rank(1, &boot, &nowhere, &["--set", "timeout=1s"]),
        Duration::from_secs(30),
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("no secret") && err.contains("--bootstrap-insecure"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    let (code, _, err) = finish(
        ompi_rank(
            1,
            &boot,
            &nowhere,
            &["--set", "timeout=1s", "--bootstrap-insecure"],
        ),
        Duration::from_secs(30),
    );
    // Asked for: it goes on (and finds nobody there).
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("unreachable"), "{err}");
}

#[test]
fn a_key_file_others_can_read_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let home = scratch("strangers-home");
    std::fs::create_dir_all(home.join(".fabbench")).unwrap();
    let key = home.join(".fabbench/key");
    std::fs::write(&key, "0123456789abcdef0123456789abcdef\n").unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let boot = format!("tcp://127.0.0.1:{}", free_port());
    for rank in [0, 1] {
        let (code, _, err) = finish(
            ompi_rank(rank, &boot, &home, &["--set", "timeout=1s"]),
            Duration::from_secs(30),
        );
        assert_eq!(code, 2, "rank {rank}: {err}");
        assert!(
            err.contains("mode 644") && err.contains("chmod 600"),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}
