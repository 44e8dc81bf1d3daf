//! Emulated-fabric mechanics that need more than the two ranks of the OSU suites, or buffers
//! the suites never use: ring routing, alignment bounce copies, topology limits, deadlocks.

use std::sync::{Arc, Mutex};
use std::thread;

use bench_core::bootstrap::{local, Bootstrap};
use bench_core::tunables::Source;
use transports::comm::Comm;
use transports::fabric::FabricContext;
use transports::in_process::run_ranks;
use transports::registry;
use transports::Result;

static SERIAL: Mutex<()> = Mutex::new(());

/// Runs `body` on `n` thread-ranks of fabric `name`; returns each rank's result.
fn on<R: Send>(
    name: &str,
    n: usize,
    sets: &[(&str, &str)],
    body: impl Fn(&Comm) -> R + Sync,
) -> Vec<Result<R>> {
    let def = registry::find(name).unwrap();
    let registry = registry::registry(&[]);
    let mut settings = registry.defaults();
    for (k, v) in def.defaults {
        settings.set(&registry, k, v, Source::Fabric).unwrap();
    }
    for (k, v) in sets {
        settings.set(&registry, k, v, Source::Cli).unwrap();
    }
    let (boots, _events) = local::group(n);
    run_ranks(def.kind, boots, |b| {
        let boot: Arc<dyn Bootstrap> = Arc::new(b);
        let ctx = FabricContext {
            boot,
            settings: &settings,
        };
        let comm = Comm::new((def.connect)(&ctx)?);
        Ok(body(&comm))
    })
}

/// One-way latency in ns of `size`-byte ping-pongs between rank 0 and `peer`, measured by
/// rank 0 on its virtual clock; other ranks idle.
fn pingpong(c: &Comm, peer: usize, size: usize, offset: usize) -> u64 {
    let mut sbuf = vec![0u8; size + 8192];
    let mut rbuf = vec![0u8; size + 8192];
    // page-align, then shift by `offset`
    let sa = (sbuf.as_ptr() as usize).next_multiple_of(4096) - sbuf.as_ptr() as usize + offset;
    let ra = (rbuf.as_ptr() as usize).next_multiple_of(4096) - rbuf.as_ptr() as usize + offset;
    let iters = 5;
    let me = c.rank();
    let t0 = c.now();
    for _ in 0..iters {
        if me == 0 {
            c.send(&sbuf[sa..sa + size], peer, 1).unwrap();
            c.recv(&mut rbuf[ra..ra + size], peer, 1).unwrap();
        } else if me == peer {
            c.recv(&mut rbuf[ra..ra + size], 0, 1).unwrap();
            c.send(&sbuf[sa..sa + size], 0, 1).unwrap();
        }
    }
    let _ = &mut sbuf;
    (c.now() - t0) / (2 * iters as u64)
}

#[test]
fn a_ring_diagonal_is_slower_than_a_neighbour() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    for size in [8usize, 65536] {
        let r = on("hyperlink", 4, &[], |c| {
            let near = pingpong(c, 1, size, 0);
            c.barrier().unwrap();
            let diagonal = pingpong(c, 2, size, 0);
            c.barrier().unwrap();
            (near, diagonal)
        });
        let (near, diagonal) = *r[0].as_ref().unwrap();
        eprintln!("hyperlink ring, {size} B: neighbour {near} ns, diagonal {diagonal} ns one way");
        assert!(
            diagonal > near,
            "size {size}: diagonal 0->2 via 1 took {diagonal} ns, neighbour {near} ns"
        );
    }
}

#[test]
fn misaligned_buffers_cost_a_bounce_copy_on_rapidio() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let size = 64 * 1024;
    let aligned = on("rapidio", 2, &[], |c| pingpong(c, 1, size, 0));
    let shifted = on("rapidio", 2, &[], |c| pingpong(c, 1, size, 8));
    let (a, m) = (*aligned[0].as_ref().unwrap(), *shifted[0].as_ref().unwrap());
    eprintln!("rapidio 64 KiB one way: aligned {a} ns, misaligned by 8 bytes {m} ns");
    // One extra copy of 64 KiB at the card's 800 MB/s is about 82 us on each side.
    assert!(m > a + 100_000, "aligned {a} ns, misaligned {m} ns");
    let facts = on("rapidio", 2, &[], |c| {
        pingpong(c, 1, size, 8);
        c.describe()
    });
    let f = facts[0].as_ref().unwrap();
    let bounced = f
        .iter()
        .find(|(k, _)| k == "rapidio.bounce_copies")
        .map(|(_, v)| v.parse::<u64>().unwrap())
        .unwrap();
    assert!(bounced > 0, "{f:?}");
}

#[test]
fn a_hyperlink_ring_of_any_size_goes_the_shortest_way_round() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    // 8 nodes: rank 0's peers 1 and 7 are neighbours, 2 and 6 two away (through one node's
    // memory), 3 and 5 three away, 4 four away either way.
    let r = on("hyperlink", 8, &[], |c| {
        (1..8)
            .map(|peer| {
                // The first round trips wait for the peer to leave the barrier.
                pingpong(c, peer, 8, 0);
                let t = pingpong(c, peer, 8, 0);
                c.barrier().unwrap();
                t
            })
            .collect::<Vec<_>>()
    });
    let t = r[0].as_ref().unwrap();
    eprintln!("hyperlink 8-ring, 8 B one way to ranks 1..7: {t:?} ns");
    // Either way round is as far: the same time (to the ns the clock is read in).
    for (a, b) in [(0, 6), (1, 5), (2, 4)] {
        assert!(
            t[a].abs_diff(t[b]) <= 1,
            "peers {} and {}: {t:?}",
            a + 1,
            b + 1
        );
    }
    assert!(t[0] < t[1] && t[1] < t[2] && t[2] < t[3], "{t:?}");
    // Four ranks on a ring of two nodes: rank 0 and 1 share node 0, whose peer is node 1.
    let r = on("hyperlink", 4, &[("hyperlink.ranks_per_node", "2")], |c| {
        pingpong(c, 1, 8, 0);
        let within = pingpong(c, 1, 8, 0);
        c.barrier().unwrap();
        pingpong(c, 2, 8, 0);
        let across = pingpong(c, 2, 8, 0);
        c.barrier().unwrap();
        (within, across, c.describe())
    });
    let (within, across, facts) = r[0].as_ref().unwrap();
    assert!(
        within < across,
        "within a node {within} ns, across {across} ns"
    );
    assert!(
        facts.contains(&("hyperlink.topology".into(), "2 nodes, one link".into()))
            && facts.contains(&("hyperlink.ranks_per_node".into(), "2".into())),
        "{facts:?}"
    );
}

#[test]
fn an_application_deadlock_is_reported_not_hung() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let r = on("bxi", 2, &[], |c| {
        // Both ranks receive first: nothing can ever arrive.
        let mut b = [0u8; 8];
        c.recv(&mut b, 1 - c.rank(), 0)
            .map(|_| ())
            .unwrap_err()
            .to_string()
    });
    for e in r {
        let e = e.unwrap();
        assert!(e.contains("deadlock"), "{e}");
        assert!(
            e.contains("rank 0 waits for") && e.contains("rank 1 waits for"),
            "{e}"
        );
    }
}

#[test]
fn every_emulated_result_is_reproducible_across_thread_timing() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    // Host noise must not leak into virtual time: a busy host thread changes nothing.
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let run = || {
        on("hyperlink", 3, &[], |c| {
            let mut out = Vec::new();
            for peer in 1..3 {
                out.push(pingpong(c, peer, 4096, 0));
                c.barrier().unwrap();
            }
            out
        })[0]
            .as_ref()
            .unwrap()
            .clone()
    };
    let quiet = run();
    let s2 = stop.clone();
    let noise = thread::spawn(move || {
        let mut x = 0u64;
        while !s2.load(std::sync::atomic::Ordering::Relaxed) {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        x
    });
    let busy = run();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    noise.join().unwrap();
    assert_eq!(quiet, busy);
}

/// Spins on arithmetic for about `ms` milliseconds of host time; returns a value so the work
/// is not optimised away.
fn busy(ms: u64) -> u64 {
    let end = std::time::Instant::now() + std::time::Duration::from_millis(ms);
    let mut x = 1u64;
    while std::time::Instant::now() < end {
        for _ in 0..1000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
    }
    x
}

#[test]
fn computing_costs_the_emulated_node_its_scaled_host_time() {
    // rapidio's card says its node computes 10x slower than this host.
    let r = on("rapidio", 2, &[], |c| {
        let t0 = c.now();
        let host = bench_core::clock::thread_cpu_ns();
        let x = c.compute(|| busy(20)).unwrap();
        let host_ns = (bench_core::clock::thread_cpu_ns() - host) as f64;
        let virt = (c.now() - t0) as f64;
        assert_eq!(c.compute_scale().unwrap().1, "rapidio.compute_scale");
        (x, virt / host_ns)
    });
    for x in r {
        let (_, ratio) = x.unwrap();
        // The virtual time is 10x the CPU time inside the closure, a little less than the
        // CPU time measured around it.
        assert!((9.0..=10.05).contains(&ratio), "virtual/host = {ratio}");
    }
    // Scaled by 0, computing is free; communication still costs what the model says.
    let r = on("rapidio", 2, &[("rapidio.compute_scale", "0")], |c| {
        let t0 = c.now();
        c.compute(|| busy(5)).unwrap();
        let t1 = c.now();
        c.barrier().unwrap();
        (t1 - t0, c.now() - t1)
    });
    for x in r {
        let (computing, barrier) = x.unwrap();
        assert_eq!(computing, 0);
        assert!(barrier > 0);
    }
}

/// A stretch is charged the CPU time the rank used, not the wall time that passed: a stretch
/// that waits (as a rank does when the host gives its core to another program) costs the node
/// nothing for the wait.
#[test]
fn computing_is_charged_the_ranks_cpu_time_not_the_time_the_host_kept_it_waiting() {
    let r = on("rapidio", 2, &[("rapidio.compute_scale", "1")], |c| {
        let t0 = c.now();
        c.compute(|| std::thread::sleep(std::time::Duration::from_millis(100)))
            .unwrap();
        c.now() - t0
    });
    for x in r {
        let charged = x.unwrap();
        // Waking from the sleep costs the thread microseconds of CPU; the wall clock saw
        // 100 ms pass.
        assert!(
            charged < 5_000_000,
            "charged {charged} ns for a 100 ms sleep"
        );
    }
}
