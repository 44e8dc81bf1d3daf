//! What the emulator costs in real time: per message (8-byte ping-pongs and windows, where the
//! scheduler's hand-overs and the models' bookkeeping dominate) and per byte (windows of 1 MiB
//! messages: rendezvous data placed on bxi, eager payloads copied on loggp). The virtual-time
//! results are exact whatever this costs; this is how long a run takes to get them.
//!
//! Rank 0 measures; rank 1 receives a window into one buffer and acknowledges it with 8 bytes,
//! until a window starts with `STOP`. Both are tasks of the bench's thread, as a run's ranks
//! are, so a hand-over between them is a task switch and a busy machine slows it only as much
//! as it slows any one thread.

use std::sync::Arc;

use bench_core::bootstrap::{local, Bootstrap};
use bench_core::tasks;
use bench_core::tunables::Source;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use transports::comm::Comm;
use transports::fabric::FabricContext;
use transports::registry;

const STOP: u8 = 0xff;

/// One rank's comm on `fabric` (with the fabric's defaults), connected from `boot`.
fn connect(fabric: &str, boot: local::Local) -> Comm {
    let def = registry::find(fabric).unwrap();
    let registry = registry::registry(&[]);
    let mut settings = registry.defaults();
    for (k, v) in def.defaults {
        settings.set(&registry, k, v, Source::Fabric).unwrap();
    }
    let boot: Arc<dyn Bootstrap> = Arc::new(boot);
    let ctx = FabricContext {
        boot,
        settings: &settings,
    };
    Comm::new((def.connect)(&ctx).unwrap())
}

/// Rank 1 of a two-rank job: receives windows of `window` messages of `size` bytes into one
/// buffer and acknowledges each, until a window starts with `STOP`.
fn answer(fabric: &str, boot: local::Local, size: usize, window: usize) {
    let c = connect(fabric, boot);
    let mut buf = vec![0u8; size];
    let ack = [1u8; 8];
    loop {
        c.irecv_window(&mut buf, window, 0, 1)
            .unwrap()
            .wait()
            .unwrap();
        c.send(&ack, 0, 2).unwrap();
        if buf[0] == STOP {
            break;
        }
    }
    c.finish().unwrap();
}

/// One window from rank 0 and its acknowledgement.
fn window(c: &Comm, buf: &[u8], n: usize, ack: &mut [u8; 8]) {
    c.isend_window(buf, n, 1, 1).unwrap().wait().unwrap();
    c.recv(ack, 1, 2).unwrap();
}

/// Rank 0 measures (criterion runs inside its task), rank 1 answers: the two ranks are tasks
/// of this thread, as a run's are.
fn bench(c: &mut Criterion, fabric: &'static str, size: usize, n: usize, name: &str) {
    // Events (none are sent here) go nowhere once the receiver is dropped.
    let mut boots = local::group(2).0.into_iter();
    let (b0, b1) = (boots.next().unwrap(), boots.next().unwrap());
    let measure = move || {
        let comm = connect(fabric, b0);
        let buf = vec![0u8; size];
        let mut ack = [0u8; 8];
        let mut g = c.benchmark_group(format!("emulated/{fabric}"));
        g.throughput(if size >= 1 << 20 {
            Throughput::Bytes((size * n) as u64)
        } else {
            Throughput::Elements(n as u64)
        });
        g.bench_function(name, |b| b.iter(|| window(&comm, &buf, n, &mut ack)));
        g.finish();
        window(&comm, &vec![STOP; size], n, &mut ack);
        comm.finish().unwrap();
    };
    let bodies: Vec<Box<dyn FnOnce() + '_>> = vec![
        Box::new(measure),
        Box::new(move || answer(fabric, b1, size, n)),
    ];
    tasks::run_all(bodies);
}

fn per_message(c: &mut Criterion) {
    bench(c, "bxi", 8, 1, "8B ping-pong");
    bench(c, "bxi", 8, 64, "8B window of 64");
    bench(c, "hyperlink", 8, 64, "8B window of 64");
}

fn per_byte(c: &mut Criterion) {
    bench(
        c,
        "bxi",
        1 << 20,
        16,
        "1MiB window of 16 (rendezvous, placed)",
    );
    bench(
        c,
        "loggp",
        1 << 20,
        16,
        "1MiB window of 16 (eager, shared copy)",
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = per_message, per_byte
}
criterion_main!(benches);
