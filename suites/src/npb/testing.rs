//! Runs a closure on N in-process ranks of a registered fabric, for the kernels' unit tests: the
//! kernels are tested over real communication (shared memory, or an emulated fabric in virtual
//! time), never a stand-in.

use std::sync::{Arc, Mutex};

use bench_core::bootstrap::{local, Bootstrap};
use bench_core::tunables::Source;
use transports::comm::Comm;
use transports::fabric::FabricContext;
use transports::in_process::run_ranks;
use transports::registry;

/// Emulated fabrics keep one model per process: tests that start jobs take turns.
static SERIAL: Mutex<()> = Mutex::new(());

/// Runs `body` on `n` ranks of the fabric `fabric` ("shm", "hyperlink", ...), as
/// [`run_ranks`] runs them;
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
    run_ranks(def.kind, boots, |b| {
        let boot: Arc<dyn Bootstrap> = Arc::new(b);
        let ctx = FabricContext {
            boot,
            settings: &settings,
        };
        let t = (def.connect)(&ctx).unwrap_or_else(|e| panic!("{}: connect failed: {e}", def.name));
        let comm = Comm::new(t);
        let r = body(&comm);
        comm.finish().unwrap();
        r
    })
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

/// Runs kernel `K` at `class` on `ranks` ranks of `fabric` and asserts that every rank
/// verifies and that all give the same verdict and values.
pub fn assert_verifies<K: super::kernel::Kernel>(
    fabric: &str,
    ranks: usize,
    class: super::class::Class,
) {
    let verdicts = on_ranks(fabric, ranks, |comm| run_kernel::<K>(comm, class).0);
    for (rank, v) in verdicts.iter().enumerate() {
        assert!(
            v.passed,
            "{} class {class} on {ranks} {fabric} ranks, rank {rank}: {:#?}",
            K::NAME,
            v.lines
        );
        assert_eq!(v, &verdicts[0], "ranks disagree");
    }
}

/// Times kernel `K`'s timed section at `class` on `ranks` shm ranks as the suite does (rank
/// 0's clock around `run`) and prints it with NPB's Mop/s.
pub fn print_timing<K: super::kernel::Kernel>(class: super::class::Class, ranks: usize) {
    let out = on_ranks("shm", ranks, |comm| {
        let mut k = K::new(comm, class).expect("set-up");
        k.reset(comm).expect("reset");
        comm.barrier().expect("barrier");
        let mut meter = super::kernel::Meter::new(comm);
        let t0 = comm.now();
        k.run(comm, &mut meter).expect("timed section");
        let ns = comm.now() - t0;
        (
            k.verify(comm).expect("verification"),
            ns,
            meter.compute_ns(),
        )
    });
    let (v, ns, compute) = &out[0];
    let secs = *ns as f64 * 1e-9;
    println!(
        "{} class {class} on {ranks} shm ranks: {secs:.3} s, {:.0} Mop/s, compute {:.3} s",
        K::NAME,
        K::operations(class) / secs / 1e6,
        *compute as f64 * 1e-9
    );
    assert!(out.iter().all(|(v, _, _)| v.passed), "{:?}", v.lines);
}

/// The tests every kernel has: class S verifies at 1, 2 and 4 ranks on shm and on emulated
/// rapidio, class W at 1, 2 and 4 on shm; and, run by hand, class W over tcp and class A's
/// timing on shm (`cargo test --release -p suites npb::cg -- --ignored --nocapture`).
macro_rules! kernel_tests {
    ($kernel:ty) => {
        #[test]
        fn class_s_verifies_on_shm() {
            for ranks in [1, 2, 4] {
                $crate::npb::testing::assert_verifies::<$kernel>("shm", ranks, Class::S);
            }
        }

        #[test]
        fn class_s_verifies_on_rapidio() {
            for ranks in [1, 2, 4] {
                $crate::npb::testing::assert_verifies::<$kernel>("rapidio", ranks, Class::S);
            }
        }

        #[test]
        fn class_w_verifies_on_shm() {
            for ranks in [1, 2, 4] {
                $crate::npb::testing::assert_verifies::<$kernel>("shm", ranks, Class::W);
            }
        }

        #[test]
        #[ignore = "class W over TCP sockets: run by hand"]
        fn class_w_verifies_on_tcp() {
            for ranks in [1, 2, 4] {
                $crate::npb::testing::assert_verifies::<$kernel>("tcp", ranks, Class::W);
            }
        }

        #[test]
        #[ignore = "class A takes seconds: run by hand for timings"]
        fn class_a_timing_on_shm() {
            for ranks in [1, 2] {
                $crate::npb::testing::print_timing::<$kernel>(Class::A, ranks);
            }
        }
    };
}
pub(crate) use kernel_tests;
