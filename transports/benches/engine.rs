//! The engine's own costs, for the shm latency target: how much software a message pays on
//! top of the ring, measured with every cache line local (both ranks driven by one thread),
//! and a cross-thread ping-pong for the whole path.

use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use bench_core::bootstrap::{local, Bootstrap};
use criterion::{criterion_group, criterion_main, Criterion};
use transports::comm::Comm;
use transports::engine::{Engine, EngineConfig, Schedule, SingleCopy};
use transports::shm::ring::{ring_bytes, Consumer, Producer};
use transports::shm::{ShmConfig, ShmWire};

fn cfg() -> EngineConfig {
    EngineConfig {
        eager_limit: 4096,
        frag_size: 32768,
        single_copy: SingleCopy::Off,
        single_copy_share: 0,
        rx_thread: false,
        schedule: Schedule::RoundRobin,
        timeout: Duration::from_secs(30),
        inject_delay_ns: 0,
        byte_orders: Default::default(),
    }
}

/// Two shm comms of one job, made on two threads (the segment set-up fences), returned here.
fn pair() -> (Comm, Comm) {
    let scfg = ShmConfig::new(1 << 20, 4096, 32768, Duration::from_secs(30));
    let (boots, _ev) = local::group(2);
    let mut wires: Vec<ShmWire> = thread::scope(|s| {
        let hs: Vec<_> = boots
            .into_iter()
            .map(|b| {
                s.spawn(move || {
                    let b: Arc<dyn Bootstrap> = Arc::new(b);
                    ShmWire::connect(b.as_ref(), scfg).unwrap()
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let b = wires.pop().unwrap();
    let a = wires.pop().unwrap();
    let mk = |w: ShmWire| Comm::new(Box::new(Engine::new(Box::new(w), cfg(), None).unwrap()));
    (mk(a), mk(b))
}

fn same_thread(c: &mut Criterion) {
    let (a, b) = pair();
    let sbuf = [1u8; 8];
    let mut rbuf = [0u8; 8];
    c.bench_function("engine/8B send then recv, one thread (fast path)", |bch| {
        bch.iter(|| {
            a.send(&sbuf, 1, 1).unwrap();
            b.recv(&mut rbuf, 0, 1).unwrap();
        })
    });
    c.bench_function(
        "engine/8B posted irecv then send, one thread (general path)",
        |bch| {
            bch.iter(|| {
                let r = b.irecv(&mut rbuf, 0, 1).unwrap();
                a.send(&sbuf, 1, 1).unwrap();
                r.wait().unwrap();
            })
        },
    );
    c.bench_function("clock/now", |bch| bch.iter(|| a.now()));
}

fn ring(c: &mut Criterion) {
    let cap = 1 << 20;
    let mem = vec![0u64; ring_bytes(cap) / 8 + 16];
    let base = ((mem.as_ptr() as usize + 63) & !63) as *mut u8;
    let (mut p, mut q) = unsafe { (Producer::new(base, cap), Consumer::new(base, cap)) };
    let hdr = [0u8; 24];
    let payload = [0u8; 8];
    c.bench_function("ring/32B push then pop, one thread", |bch| {
        bch.iter(|| {
            assert!(p.try_push(&hdr, &payload));
            assert!(q.peek().is_some());
            q.release();
        })
    });
    drop(mem);
}

fn ping_pong(c: &mut Criterion) {
    let (a, b) = pair();
    let stop = [0xffu8; 8];
    thread::scope(|s| {
        // A Comm belongs to one thread: the echo side takes `b` with it.
        s.spawn(move || {
            let mut buf = [0u8; 8];
            loop {
                b.recv(&mut buf, 0, 1).unwrap();
                if buf == stop {
                    break;
                }
                b.send(&buf, 0, 1).unwrap();
            }
        });
        let sbuf = [1u8; 8];
        let mut rbuf = [0u8; 8];
        c.bench_function("engine/8B round trip between two threads", |bch| {
            bch.iter_custom(|iters| {
                let t = Instant::now();
                for _ in 0..iters {
                    a.send(&sbuf, 1, 1).unwrap();
                    a.recv(&mut rbuf, 1, 1).unwrap();
                }
                t.elapsed()
            })
        });
        a.send(&stop, 1, 1).unwrap();
    });
}

criterion_group!(benches, same_thread, ring, ping_pong);
criterion_main!(benches);
