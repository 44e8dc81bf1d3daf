//! The tcp wire's own costs over loopback, so a regression in its send or receive path shows in
//! `cargo bench`: what one small message costs (a round trip between two threads, and a window
//! of sends as osu_bw posts them) and what a byte costs (1 MiB messages, which cross as
//! rendezvous fragments read straight into the receive buffer).

use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use bench_core::bootstrap::{local, Bootstrap};
use bench_core::tunables::{Settings, Source};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use transports::comm::Comm;
use transports::engine::Engine;
use transports::fabric::engine_config;
use transports::registry;
use transports::tcp::TcpWire;

/// The tcp fabric's settings: every tunable at its default, then the fabric's own defaults
/// (eager below 64 KiB, 512 KiB fragments), as a run gets them.
fn settings() -> Settings {
    let registry = registry::registry(&[]);
    let mut s = registry.defaults();
    for (k, v) in registry::find("tcp").unwrap().defaults {
        s.set(&registry, k, v, Source::Fabric).unwrap();
    }
    s
}

/// Two tcp comms of one job over loopback, connected on two threads.
fn pair() -> (Comm, Comm) {
    let settings = settings();
    let (boots, _ev) = local::group(2);
    let mut wires: Vec<TcpWire> = thread::scope(|s| {
        let hs: Vec<_> = boots
            .into_iter()
            .map(|b| {
                let settings = settings.clone();
                s.spawn(move || {
                    let b: Arc<dyn Bootstrap> = Arc::new(b);
                    TcpWire::connect(b.as_ref(), &settings).unwrap()
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let b = wires.pop().unwrap();
    let a = wires.pop().unwrap();
    let cfg = engine_config(&settings);
    let mk = |w: TcpWire| Comm::new(Box::new(Engine::new(Box::new(w), cfg, None).unwrap()));
    (mk(a), mk(b))
}

/// Rank 1 runs `serve` on its own thread while `measure` runs here with rank 0; a message with
/// tag 9 ends the server.
fn with_server(serve: impl FnOnce(&Comm) + Send, measure: impl FnOnce(&Comm)) {
    let (a, b) = pair();
    thread::scope(|s| {
        s.spawn(move || serve(&b));
        measure(&a);
        a.send(&[0u8; 1], 1, 9).unwrap();
    });
}

/// Serves round trips of `len`-byte messages until told to stop.
fn echo(b: &Comm, len: usize) {
    let mut buf = vec![0u8; len.max(1)];
    loop {
        let st = b.recv_any(&mut buf, Some(0), None).unwrap();
        if st.tag == 9 {
            return;
        }
        b.send(&buf[..len], 0, 1).unwrap();
    }
}

fn round_trip(c: &mut Criterion) {
    with_server(
        |b| echo(b, 8),
        |a| {
            let sbuf = [1u8; 8];
            let mut rbuf = [0u8; 8];
            c.bench_function("tcp/8B round trip between two threads", |bch| {
                bch.iter_custom(|iters| {
                    let t = Instant::now();
                    for _ in 0..iters {
                        a.send(&sbuf, 1, 1).unwrap();
                        a.recv(&mut rbuf, 1, 1).unwrap();
                    }
                    t.elapsed()
                })
            });
        },
    );
}

/// A window of 64 nonblocking sends answered by one ack, as osu_bw's inner loop: the cost of
/// a message when the wire is kept busy.
fn window(c: &mut Criterion, len: usize, name: &str) {
    const WINDOW: usize = 64;
    with_server(
        |b| {
            let mut bufs = vec![vec![0u8; len.max(1)]; WINDOW];
            loop {
                let st = b.recv_any(&mut bufs[0], Some(0), None).unwrap();
                if st.tag == 9 {
                    return;
                }
                let reqs: Vec<_> = bufs[1..]
                    .iter_mut()
                    .map(|buf| b.irecv(&mut buf[..len], 0, 1).unwrap())
                    .collect();
                for r in reqs {
                    r.wait().unwrap();
                }
                b.send(&[0u8; 4], 0, 2).unwrap();
            }
        },
        |a| {
            let sbuf = vec![1u8; len];
            let mut ack = [0u8; 4];
            let mut g = c.benchmark_group("tcp");
            g.throughput(Throughput::Bytes((len * WINDOW) as u64));
            g.bench_function(name, |bch| {
                bch.iter(|| {
                    let reqs: Vec<_> = (0..WINDOW).map(|_| a.isend(&sbuf, 1, 1).unwrap()).collect();
                    for r in reqs {
                        r.wait().unwrap();
                    }
                    a.recv(&mut ack, 1, 2).unwrap();
                })
            });
            g.finish();
        },
    );
}

fn small_window(c: &mut Criterion) {
    window(c, 8, "8B x 64 window (per message)");
}

fn large_window(c: &mut Criterion) {
    window(c, 1 << 20, "1MiB x 64 window (per byte)");
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(Duration::from_secs(3));
    targets = round_trip, small_window, large_window
}
criterion_main!(benches);
