//! Runs a closure on N thread-ranks of a registered fabric, for the kernels' unit tests: the
//! kernels are tested over real communication (shared memory, or an emulated fabric in virtual
//! time), never a stand-in.

use std::sync::{Arc, Mutex};
use std::thread;

use bench_core::bootstrap::{local, Bootstrap};
use bench_core::tunables::Source;
use transports::comm::Comm;
use transports::fabric::FabricContext;
use transports::registry;

/// Emulated fabrics keep one model per process: tests that start jobs take turns.
static SERIAL: Mutex<()> = Mutex::new(());

/// Runs `body` on `n` ranks of the fabric `fabric` ("shm", "hyperlink", ...), each a thread;
/// returns what each rank's body returned, in rank order.
pub fn on_ranks<R: Send>(fabric: &str, n: usize, body: impl Fn(&Comm) -> R + Sync) -> Vec<R> {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let def = registry::find(fabric).unwrap_or_else(|| panic!("no fabric {fabric}"));
    let registry = registry::registry(&[]);
    let mut settings = registry.defaults();
    for (k, v) in def.defaults {
        settings.set(&registry, k, v, Source::Fabric).unwrap();
    }
    settings
        .set(&registry, "bind", "none", Source::Cli)
        .unwrap();
    let (boots, _events) = local::group(n);
    let out: Vec<Mutex<Option<R>>> = (0..n).map(|_| Mutex::new(None)).collect();
    thread::scope(|s| {
        for (i, b) in boots.into_iter().enumerate() {
            let (settings, body, out) = (&settings, &body, &out);
            s.spawn(move || {
                let boot: Arc<dyn Bootstrap> = Arc::new(b);
                let ctx = FabricContext { boot, settings };
                let t = (def.connect)(&ctx)
                    .unwrap_or_else(|e| panic!("{}: connect failed: {e}", def.name));
                let comm = Comm::new(t);
                let r = body(&comm);
                comm.finish().unwrap();
                *out[i].lock().unwrap() = Some(r);
            });
        }
    });
    out.into_iter()
        .map(|m| m.into_inner().unwrap().expect("every rank returned"))
        .collect()
}

/// Sets up kernel `K` for `class`, runs its timed section once and verifies it, as the suite
/// does; returns the verdict and this rank's compute time.
pub fn run_kernel<K: super::kernel::Kernel>(
    comm: &Comm,
    class: super::class::Class,
) -> (super::kernel::Verification, u64) {
    let mut k = K::new(comm, class).expect("set-up");
    k.reset(comm).expect("reset");
    let mut meter = super::kernel::Meter::new(comm);
    k.run(comm, &mut meter).expect("timed section");
    let v = k.verify(comm).expect("verification");
    (v, meter.compute_ns())
}
