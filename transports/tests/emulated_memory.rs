//! An emulated job's memory must not grow with the data its model lets be in flight: a window
//! of 64 messages of 4 MiB, as osu_bw and osu_bibw send by default, once held 256 MiB a
//! direction on bxi (and on loggp, which carries every message eagerly). This binary counts
//! every allocation (its own global allocator, so no other test shares the count) and bounds
//! the peak of live bytes during such windows.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use bench_core::bootstrap::{local, Bootstrap};
use bench_core::tunables::Source;
use transports::comm::Comm;
use transports::fabric::FabricContext;
use transports::in_process::run_ranks;
use transports::registry;

/// The system allocator, counting live bytes and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call goes to the system allocator unchanged; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            grew(l.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(l) };
        if !p.is_null() {
            grew(l.size());
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() {
            LIVE.fetch_sub(l.size(), Ordering::Relaxed);
            grew(new);
        }
        q
    }
}

fn grew(n: usize) {
    let live = LIVE.fetch_add(n, Ordering::Relaxed) + n;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

#[global_allocator]
static ALLOC: Counting = Counting;

static SERIAL: Mutex<()> = Mutex::new(());

const MIB: usize = 1 << 20;
const SIZE: usize = 4 * MIB;
const WINDOW: usize = 64;

/// Runs `body` on two thread-ranks of fabric `name`; returns the peak of live bytes above
/// what was live before the job started.
fn peak_of(name: &str, body: impl Fn(&Comm) + Sync) -> usize {
    let def = registry::find(name).unwrap();
    let registry = registry::registry(&[]);
    let mut settings = registry.defaults();
    for (k, v) in def.defaults {
        settings.set(&registry, k, v, Source::Fabric).unwrap();
    }
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let (boots, _events) = local::group(2);
    run_ranks(def.kind, boots, |b| {
        let boot: Arc<dyn Bootstrap> = Arc::new(b);
        let ctx = FabricContext {
            boot,
            settings: &settings,
        };
        let comm = Comm::new((def.connect)(&ctx).unwrap());
        body(&comm);
        comm.finish().unwrap();
    });
    PEAK.load(Ordering::Relaxed).saturating_sub(base)
}

/// osu_bw's loop at 4 MiB: rank 0 sends windows, rank 1 receives them into one buffer and
/// acknowledges each.
fn bw(c: &Comm) {
    let mut buf = vec![c.rank() as u8 + 1; SIZE];
    let mut ack = [0u8; 4];
    for _ in 0..3 {
        if c.rank() == 0 {
            c.isend_window(&buf, WINDOW, 1, 1).unwrap().wait().unwrap();
            c.recv(&mut ack, 1, 2).unwrap();
        } else {
            c.irecv_window(&mut buf, WINDOW, 0, 1)
                .unwrap()
                .wait()
                .unwrap();
            c.send(&ack, 0, 2).unwrap();
        }
    }
    if c.rank() == 1 {
        assert!(
            buf.iter().all(|&b| b == 1),
            "rank 1 received rank 0's bytes"
        );
    }
}

/// osu_bibw's loop at 4 MiB: both ranks send a window and receive one at once.
fn bibw(c: &Comm) {
    let sbuf = vec![c.rank() as u8 + 1; SIZE];
    let mut rbuf = vec![0u8; SIZE];
    let peer = 1 - c.rank();
    for _ in 0..3 {
        let r = c.irecv_window(&mut rbuf, WINDOW, peer, 1).unwrap();
        let s = c.isend_window(&sbuf, WINDOW, peer, 1).unwrap();
        r.wait().unwrap();
        s.wait().unwrap();
    }
    assert!(rbuf.iter().all(|&b| b == peer as u8 + 1));
}

/// The buffers the test itself holds at once (bibw: a send and a receive buffer per rank),
/// plus room for what the job needs besides: each model's state, the engines' queues, one
/// copy per direction of a payload shared in flight (loggp) and the frame put together at its
/// delivery. Holding the window in flight needs 256 MiB a direction, far above.
const BOUND: usize = 4 * SIZE + 24 * MIB;

#[test]
fn a_window_in_flight_costs_no_copy_per_message() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    for fabric in ["bxi", "loggp", "hyperlink", "rapidio"] {
        for (what, body) in [("osu_bw", bw as fn(&Comm)), ("osu_bibw", bibw)] {
            let peak = peak_of(fabric, body);
            eprintln!(
                "{fabric} {what} at 4 MiB x {WINDOW}: peak {:.1} MiB live",
                peak as f64 / MIB as f64
            );
            assert!(
                peak < BOUND,
                "{fabric} {what}: {:.1} MiB live at the peak, bound {} MiB",
                peak as f64 / MIB as f64,
                BOUND / MIB
            );
        }
    }
}
