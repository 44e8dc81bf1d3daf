//! Running a group of ranks inside this process, as each kind of fabric needs them: an
//! emulated fabric's ranks as tasks of one thread (its discrete-event scheduler lets one run
//! at a time and hands the turn on by a task switch), a native fabric's as threads (each spins
//! on its own medium and needs a core of its own). Tests and benchmarks of fabrics use this;
//! the runner starts an emulated job's tasks itself, so it can report each rank's failure.

use std::sync::Arc;

use bench_core::bootstrap::local::{self, Local};
use bench_core::bootstrap::Bootstrap;
use bench_core::tasks;
use bench_core::tunables::Settings;

use crate::comm::Comm;
use crate::error::Result;
use crate::fabric::{FabricContext, FabricDef, FabricKind};

/// Runs `body` once per bootstrap handle, as `kind` needs, and returns what each returned in
/// rank order; a rank's panic is raised again here.
pub fn run_ranks<T: Send>(
    kind: FabricKind,
    boots: Vec<Local>,
    body: impl Fn(Local) -> T + Sync,
) -> Vec<T> {
    let body = &body;
    match kind {
        FabricKind::Emulated => {
            tasks::run_all(boots.into_iter().map(|b| move || body(b)).collect())
        }
        FabricKind::Native | FabricKind::Mpi => std::thread::scope(|s| {
            let handles: Vec<_> = boots
                .into_iter()
                .map(|b| s.spawn(move || body(b)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        }),
    }
}

/// Connects `n` ranks of `def` with `settings` in this process, runs `f` on each rank's comm
/// and finishes it; what each returned in rank order (a rank's connect or finish error
/// instead). For tests and tools that drive a fabric without the runner.
pub fn on_comms<T: Send>(
    def: &FabricDef,
    settings: &Settings,
    n: usize,
    f: impl Fn(&Comm) -> T + Sync,
) -> Vec<Result<T>> {
    let (boots, _events) = local::group(n);
    run_ranks(def.kind, boots, |b| {
        let boot: Arc<dyn Bootstrap> = Arc::new(b);
        let comm = Comm::new((def.connect)(&FabricContext { boot, settings })?);
        let out = f(&comm);
        comm.finish()?;
        Ok(out)
    })
}
