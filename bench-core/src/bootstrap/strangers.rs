//! Tests: what a stranger who can reach the bootstrap server's port can do to it. Impostors
//! are refused and reported, a connected rank cannot be claimed twice, garbage and floods are
//! cut, bounded and reported at most [`SHOWN_REFUSALS`] times, and real ranks get through.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::thread;
use std::time::{Duration, Instant};

use super::auth;
use super::tcp::{Client, Limits, Server, ServerEvent, SHOWN_REFUSALS};
use super::Bootstrap;

const SECS10: Duration = Duration::from_secs(10);

fn quick() -> Limits {
    Limits {
        greeting_deadline: Duration::from_millis(500),
        pending: 8,
        ..Limits::default()
    }
}

fn server(size: usize) -> Server {
    Server::start_with("127.0.0.1:0", size, "the secret", "job", quick()).unwrap()
}

/// Opens a connection and reads the server's NONCE line.
fn open(server: &Server) -> (TcpStream, BufReader<TcpStream>, String) {
    let s = TcpStream::connect(server.addr()).unwrap();
    let mut r = BufReader::new(s.try_clone().unwrap());
    let mut greeting = String::new();
    r.read_line(&mut greeting).unwrap();
    let nonce = greeting
        .strip_prefix("NONCE ")
        .unwrap()
        .trim_end()
        .to_string();
    (s, r, nonce)
}

fn reply(r: &mut BufReader<TcpStream>) -> String {
    let mut line = String::new();
    let _ = r.read_line(&mut line);
    line.trim_end().to_string()
}

/// The reasons of the refusals reported within `wait` (other events are skipped).
fn refusals(server: &Server, wait: Duration) -> Vec<String> {
    let until = Instant::now() + wait;
    let mut out = Vec::new();
    while let Some(ev) = server.next_event(until.saturating_duration_since(Instant::now())) {
        if let ServerEvent::Rejected { reason, .. } = ev {
            out.push(reason);
        }
    }
    out
}

#[test]
fn the_old_predictable_token_and_a_wrong_proof_are_refused_and_reported() {
    let server = server(2);
    for hello in [
        "HELLO 1 Open_MPI-job".to_string(),
        format!("HELLO 1 {}", auth::proof("a guess", "00", 1, "job")),
    ] {
        let (mut w, mut r, _) = open(&server);
        writeln!(w, "{hello}").unwrap();
        assert!(reply(&mut r).starts_with("ERR"), "{hello}");
        // Nothing is served: the connection is closed.
        writeln!(w, "GET tcp/token 3000").unwrap_or(());
        assert_eq!(reply(&mut r), "");
    }
    let got = refusals(&server, Duration::from_millis(300));
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got.iter().all(|r| r.contains("without proof")), "{got:?}");
}

/// A proof answers one nonce: seen on the wire, it is worth nothing on the next connection.
#[test]
fn a_proof_cannot_be_replayed() {
    let server = server(2);
    let (mut w, mut r, nonce) = open(&server);
    let proof = auth::proof("the secret", &nonce, 1, "job");
    writeln!(w, "HELLO 1 {proof}").unwrap();
    assert_eq!(reply(&mut r), "OK");
    let (mut w2, mut r2, _) = open(&server);
    writeln!(w2, "HELLO 1 {proof}").unwrap();
    assert!(reply(&mut r2).starts_with("ERR"));
}

#[test]
fn a_second_hello_for_a_connected_rank_is_refused_and_reported() {
    let server = server(2);
    let _rank1 = Client::connect(&server.url(), 1, 2, "the secret", "job", SECS10).unwrap();
    let again = Client::connect(&server.url(), 1, 2, "the secret", "job", SECS10);
    let err = again.err().expect("refused").to_string();
    assert!(err.contains("rank already connected"), "{err}");
    let got = refusals(&server, Duration::from_millis(300));
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0].contains("rank 1 is already connected"), "{got:?}");
}

#[test]
fn garbage_greetings_are_cut_and_reported() {
    let server = server(2);
    let cases: [(&[u8], &str); 3] = [
        (b"\xff\xfe\xfd garbage\n", "not UTF-8"),
        (b"GET tcp/token 3000\n", "not `HELLO rank proof`"),
        (&[b'A'; 64 << 10], "without a newline"),
    ];
    for (bytes, _) in cases {
        let (mut w, mut r, _) = open(&server);
        let _ = w.write_all(bytes);
        assert!(reply(&mut r).starts_with("ERR"));
    }
    let got = refusals(&server, Duration::from_millis(300));
    assert_eq!(got.len(), 3, "{got:?}");
    for ((_, why), reason) in cases.iter().zip(&got) {
        assert!(reason.contains(why), "{reason}");
    }
}

/// A byte at a time never trips a per-read timeout: the whole greeting has a deadline.
#[test]
fn a_trickling_greeting_is_cut_at_the_deadline() {
    let server = server(2);
    let (mut w, r, _) = open(&server);
    let start = Instant::now();
    let mut r = r;
    // Without the deadline the server would wait for ever: fail instead of hanging.
    r.get_ref()
        .set_read_timeout(Some(Duration::from_secs(3)))
        .unwrap();
    let cut = thread::spawn(move || {
        let mut rest = Vec::new();
        let _ = r.read_to_end(&mut rest);
        (start.elapsed(), rest)
    });
    for _ in 0..40 {
        if w.write_all(b"H").is_err() {
            break;
        }
        thread::sleep(Duration::from_millis(50));
    }
    let (after, rest) = cut.join().unwrap();
    assert!(after < Duration::from_millis(1500), "{after:?}");
    assert_eq!(String::from_utf8_lossy(&rest), "ERR timeout\n");
    let got = refusals(&server, Duration::from_millis(300));
    assert!(
        got.iter().any(|r| r.contains("no greeting within 500ms")),
        "{got:?}"
    );
}

/// Silent connections take the places of pending greetings, not the real ranks' turn: past the
/// cap they are closed at once, and a rank still gets in.
#[test]
fn silent_connections_are_capped_and_do_not_starve_ranks() {
    let server = server(2);
    let silent: Vec<TcpStream> = (0..40)
        .map(|_| TcpStream::connect(server.addr()).unwrap())
        .collect();
    let start = Instant::now();
    let rank = Client::connect(&server.url(), 1, 2, "the secret", "job", SECS10);
    // The rank may meet the cap while the silent ones hold every place; it retries within
    // its patience, and the deadline frees the places.
    let rank = rank.or_else(|_| Client::connect(&server.url(), 1, 2, "the secret", "job", SECS10));
    assert!(rank.is_ok(), "{:?}", rank.err());
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
    // Of 40 silent ones, at most 8 were held; the rest were closed at once, and only the
    // first few refusals are reported one by one.
    assert!(server.refused() >= 32, "{}", server.refused());
    let got = refusals(&server, Duration::from_millis(800));
    assert_eq!(got.len() as u64, SHOWN_REFUSALS, "{got:?}");
    drop(silent);
    assert!(rank.unwrap().put("k", "v").is_ok());
}
