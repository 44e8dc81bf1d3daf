//! tcp wire faults at the transport level: a stranger with the wrong token during set-up, a
//! peer that cannot be reached, a peer that closes in the middle of a message.

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
        let h0 = sc.spawn(move || {
            let comm = connect(Arc::new(b0), s).unwrap();
            let mut buf = [0u8; 5];
            comm.recv(&mut buf, 1, 0).unwrap();
            comm.send(&buf, 1, 0).unwrap();
            let facts = comm.describe();
            comm.finish().unwrap();
            facts
        });
        let h1 = sc.spawn(move || {
            // Rank 1 arrives after the stranger.
            thread::sleep(Duration::from_millis(300));
            let comm = connect(Arc::new(b1), s).unwrap();
            comm.send(b"hello", 0, 0).unwrap();
            let mut buf = [0u8; 5];
            comm.recv(&mut buf, 0, 0).unwrap();
            comm.finish().unwrap();
            buf
        });
        (h0.join().unwrap(), h1.join().unwrap())
    });
    assert_eq!(&echoed, b"hello");
    assert!(
        facts.contains(&("tcp_rejected_connections".to_string(), "1".to_string())),
        "{facts:?}"
    );
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
