//! tcp wire faults at the transport level: a stranger with the wrong token during set-up, a
//! peer that cannot be reached, a peer that closes in the middle of a message. And large
//! messages, where each side keeps one copy (the kernel's): the rest of a fragment the kernel
//! had no room for is written later from the sender's own buffer, so the send must not
//! complete before it is; arriving payloads are read straight into the receive buffer. Small
//! socket buffers make both happen on every fragment.

use std::io::Write;
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use bench_core::bootstrap::{local, Bootstrap};
use bench_core::tunables::{Settings, Source};
use transports::comm::Comm;
use transports::fabric::FabricContext;
use transports::registry;

static SERIAL: Mutex<()> = Mutex::new(());

fn settings(sets: &[(&str, &str)]) -> Settings {
    let registry = registry::registry(&[]);
    let mut s = registry.defaults();
    for (k, v) in registry::find("tcp").unwrap().defaults {
        s.set(&registry, k, v, Source::Fabric).unwrap();
    }
    for (k, v) in sets {
        s.set(&registry, k, v, Source::Cli).unwrap();
    }
    s
}

fn connect(boot: Arc<dyn Bootstrap>, s: &Settings) -> transports::Result<Comm> {
    let ctx = FabricContext { boot, settings: s };
    Ok(Comm::new((registry::find("tcp").unwrap().connect)(&ctx)?))
}

/// Rank 0 of a two-rank job: sends back the 5 bytes rank 1 sends, then gives its facts.
fn echo_once(boot: Arc<dyn Bootstrap>, s: &Settings) -> Vec<(String, String)> {
    let comm = connect(boot, s).unwrap();
    let mut buf = [0u8; 5];
    comm.recv(&mut buf, 1, 0).unwrap();
    comm.send(&buf, 1, 0).unwrap();
    let facts = comm.describe();
    comm.finish().unwrap();
    facts
}

/// Rank 1, arriving `after` the strangers: sends "hello" and returns what came back.
fn say_hello_after(boot: Arc<dyn Bootstrap>, s: &Settings, after: Duration) -> [u8; 5] {
    thread::sleep(after);
    let comm = connect(boot, s).unwrap();
    comm.send(b"hello", 0, 0).unwrap();
    let mut buf = [0u8; 5];
    comm.recv(&mut buf, 0, 0).unwrap();
    comm.finish().unwrap();
    buf
}

#[test]
fn a_connection_with_the_wrong_token_is_refused_and_the_job_goes_on() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let s = settings(&[]);
    let (boots, _ev) = local::group(2);
    let mut it = boots.into_iter();
    let (b0, b1) = (it.next().unwrap(), it.next().unwrap());
    let stranger_boot = b0.clone();
    let (facts, echoed) = thread::scope(|sc| {
        let s = &s;
        // A stranger connects to rank 0 first, with a hello carrying the wrong token.
        sc.spawn(move || {
            let addr = stranger_boot
                .get("tcp/0/addr", Duration::from_secs(10))
                .unwrap();
            let mut c = TcpStream::connect(addr).unwrap();
            let mut hello = b"FABTCP01".to_vec();
            hello.extend_from_slice(&[b'0'; 32]);
            hello.extend_from_slice(&1u32.to_be_bytes());
            hello.extend_from_slice(&2u32.to_be_bytes());
            c.write_all(&hello).unwrap();
            let mut buf = [0u8; 1];
            // refused: the connection is closed without an answer
            use std::io::Read;
            assert_eq!(c.read(&mut buf).unwrap_or(0), 0);
        });
        let h0 = sc.spawn(move || echo_once(Arc::new(b0), s));
        // Rank 1 arrives after the stranger.
        let h1 = sc.spawn(move || say_hello_after(Arc::new(b1), s, Duration::from_millis(300)));
        (h0.join().unwrap(), h1.join().unwrap())
    });
    assert_eq!(&echoed, b"hello");
    assert!(
        facts.contains(&("tcp_rejected_connections".to_string(), "1".to_string())),
        "{facts:?}"
    );
}

/// Strangers at the listener during set-up: 100 connections that say nothing, 100 that send
/// garbage and one that trickles a byte at a time. Greetings are read side by side within a
/// deadline each, so rank 1 still gets through well inside a 3 s connect timeout (one silent
/// connection at a time, 2 s each, failed the job).
#[test]
fn silent_and_garbage_connections_do_not_stop_set_up() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let s = settings(&[("tcp.connect_timeout", "3s")]);
    let (boots, _ev) = local::group(2);
    let mut it = boots.into_iter();
    let (b0, b1) = (it.next().unwrap(), it.next().unwrap());
    let stranger_boot = b0.clone();
    let start = Instant::now();
    let (facts, echoed, took) = thread::scope(|sc| {
        let s = &s;
        let strangers = sc.spawn(move || {
            let addr = stranger_boot
                .get("tcp/0/addr", Duration::from_secs(10))
                .unwrap();
            let mut held = Vec::new();
            for i in 0..200 {
                let Ok(mut c) = TcpStream::connect(&addr) else {
                    continue;
                };
                if i % 2 == 1 {
                    let _ = c.write_all(&[0xffu8; 100]);
                }
                held.push(c);
            }
            let mut trickle = TcpStream::connect(&addr).unwrap();
            for b in b"FABTCP01" {
                if trickle.write_all(&[*b]).is_err() {
                    break;
                }
                thread::sleep(Duration::from_millis(400));
            }
            held
        });
        let h0 = sc.spawn(move || echo_once(Arc::new(b0), s));
        // Rank 1 arrives after the strangers.
        let h1 = sc.spawn(move || say_hello_after(Arc::new(b1), s, Duration::from_millis(500)));
        let (facts, echoed) = (h0.join().unwrap(), h1.join().unwrap());
        let took = start.elapsed();
        drop(strangers.join().unwrap());
        (facts, echoed, took)
    });
    assert_eq!(&echoed, b"hello");
    assert!(took < Duration::from_secs(3), "{took:?}");
    let rejected: u64 = facts
        .iter()
        .find(|(k, _)| k == "tcp_rejected_connections")
        .map(|(_, v)| v.parse().unwrap())
        .unwrap();
    // The garbage ones are refused as soon as their bytes arrive; silent ones may still be
    // waiting when rank 1 gets in (they are closed with the listener).
    assert!(rejected >= 100, "{facts:?}");
}

#[test]
fn an_unreachable_peer_is_named_with_its_address_within_the_timeout() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let s = settings(&[("tcp.connect_timeout", "1s")]);
    let (boots, _ev) = local::group(2);
    let b1 = boots.into_iter().nth(1).unwrap();
    // Rank 0 "published" an address where nothing listens.
    let dead = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    b1.put("tcp/token", "0123456789abcdef0123456789abcdef")
        .unwrap();
    b1.put("tcp/0/addr", &dead.to_string()).unwrap();
    let start = Instant::now();
    let err = connect(Arc::new(b1), &s).err().unwrap().to_string();
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    assert!(err.contains(&format!("rank 0 at {dead}")), "{err}");
    assert!(err.contains("tcp connect"), "{err}");
}

#[test]
fn a_peer_that_closes_mid_message_is_named() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let s = settings(&[("timeout", "5s")]);
    let (boots, _ev) = local::group(2);
    let mut it = boots.into_iter();
    let (b0, b1) = (it.next().unwrap(), it.next().unwrap());
    let err = thread::scope(|sc| {
        let s = &s;
        sc.spawn(move || {
            let comm = connect(Arc::new(b1), s).unwrap();
            let big = vec![7u8; 64 << 20];
            let req = comm.isend(&big, 0, 0).unwrap();
            // Vanish with the message half sent: no wait, no goodbye.
            std::mem::forget(req);
            thread::sleep(Duration::from_millis(100));
            drop(comm);
        });
        let h = sc.spawn(move || {
            let comm = connect(Arc::new(b0), s).unwrap();
            let mut buf = vec![0u8; 64 << 20];
            thread::sleep(Duration::from_millis(50));
            comm.set_stage("receiving the big one");
            comm.recv(&mut buf, 1, 0)
                .map(|_| ())
                .unwrap_err()
                .to_string()
        });
        h.join().unwrap()
    });
    assert!(err.contains("rank 1 at 127.0.0.1:"), "{err}");
    assert!(
        err.contains("closed the connection") || err.contains("reset"),
        "{err}"
    );
    assert!(err.contains("receiving the big one"), "{err}");
}

/// Runs `f(rank, comm)` on two tcp ranks over loopback, each on its own thread.
fn two_ranks<T: Send>(s: &Settings, f: impl Fn(usize, Comm) -> T + Sync) -> (T, T) {
    let (boots, _ev) = local::group(2);
    let f = &f;
    thread::scope(|sc| {
        let hs: Vec<_> = boots
            .into_iter()
            .enumerate()
            .map(|(rank, b)| {
                sc.spawn(move || {
                    let boot: Arc<dyn Bootstrap> = Arc::new(b);
                    let ctx = FabricContext { boot, settings: s };
                    let t = (registry::find("tcp").unwrap().connect)(&ctx).unwrap();
                    f(rank, Comm::new(t))
                })
            })
            .collect();
        let mut out = hs.into_iter().map(|h| h.join().unwrap());
        (out.next().unwrap(), out.next().unwrap())
    })
}

/// Byte `i` of message `m`: no two messages nor offsets alike within a period.
fn pattern(m: usize, len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 + m * 13 + i / 251) as u8).collect()
}

#[test]
fn a_send_completes_only_once_its_held_tail_is_written() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    // 4 KiB socket buffers: the kernel takes a few KiB of each 512 KiB fragment, the wire
    // holds the rest in the sender's buffer.
    let s = settings(&[("tcp.sndbuf", "4K"), ("tcp.rcvbuf", "4K")]);
    let len = 1 << 20;
    let (_, got) = two_ranks(&s, |rank, comm| {
        if rank == 0 {
            let mut buf = pattern(1, len);
            comm.send(&buf, 1, 5).unwrap();
            // The send completed: the caller may change its buffer now. Had the wire still
            // held part of it, the receiver would see these bytes.
            buf.fill(0xBB);
            comm.send(&buf[..1], 1, 6).unwrap();
            comm.finish().unwrap();
            Vec::new()
        } else {
            let mut buf = vec![0u8; len];
            let mut r = comm.irecv(&mut buf, 0, 5).unwrap();
            // One pass of progress once the request to send is here answers it; then nothing
            // is read for a while, so the socket fills and the sender's wire holds the rest.
            thread::sleep(Duration::from_millis(100));
            assert!(
                r.test().unwrap().is_none(),
                "1 MiB arrived through 4 KiB buffers"
            );
            thread::sleep(Duration::from_millis(300));
            r.wait().unwrap();
            let mut tail = [0u8; 1];
            comm.recv(&mut tail, 0, 6).unwrap();
            comm.finish().unwrap();
            buf
        }
    });
    let want = pattern(1, len);
    let bad = got.iter().zip(&want).filter(|(a, b)| a != b).count();
    assert_eq!(bad, 0, "{bad} of {len} bytes differ from what was sent");
}

#[test]
fn large_messages_cross_whole_both_ways_at_once() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    // Odd sizes and a fragment size that does not divide them, both directions at once (as
    // osu_bibw), with small and with default socket buffers.
    let sizes = [(64 << 10) + 1, 1 << 20, (3 << 20) + 7, 200_003];
    for sets in [
        &[
            ("tcp.sndbuf", "8K"),
            ("tcp.rcvbuf", "8K"),
            ("frag_size", "40K"),
        ][..],
        &[][..],
    ] {
        let s = settings(sets);
        let (a, b) = two_ranks(&s, |rank, comm| {
            let peer = 1 - rank;
            let sends: Vec<Vec<u8>> = sizes
                .iter()
                .enumerate()
                .map(|(m, &n)| pattern(m + 10 * rank, n))
                .collect();
            let mut recvs: Vec<Vec<u8>> = sizes.iter().map(|&n| vec![0u8; n]).collect();
            let rr: Vec<_> = recvs
                .iter_mut()
                .enumerate()
                .map(|(m, buf)| comm.irecv(buf, peer, m as i32).unwrap())
                .collect();
            let sr: Vec<_> = sends
                .iter()
                .enumerate()
                .map(|(m, buf)| comm.isend(buf, peer, m as i32).unwrap())
                .collect();
            for r in sr.into_iter().chain(rr) {
                r.wait().unwrap();
            }
            comm.finish().unwrap();
            recvs
        });
        for (rank, got) in [(1, a), (0, b)] {
            for (m, buf) in got.iter().enumerate() {
                assert!(
                    *buf == pattern(m + 10 * rank, sizes[m]),
                    "message {m} from rank {rank} ({} bytes, settings {sets:?}) arrived changed",
                    sizes[m]
                );
            }
        }
    }
}
