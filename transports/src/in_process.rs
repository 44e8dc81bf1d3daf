//! Running a group of ranks inside this process, as each kind of fabric needs them: an
//! emulated fabric's ranks as tasks of one thread (its discrete-event scheduler lets one run
//! at a time and hands the turn on by a task switch), a native fabric's as threads (each spins
//! on its own medium and needs a core of its own). Tests and benchmarks of fabrics use this;
//! the runner starts an emulated job's tasks itself, so it can report each rank's failure.

use bench_core::bootstrap::local::Local;
use bench_core::tasks;

use crate::fabric::FabricKind;

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
