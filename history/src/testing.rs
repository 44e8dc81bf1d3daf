//! Runs and directories made up for the store's tests: an OSU latency run whose samples give a
//! chosen latency (built with the results crate's shared test builder, which also writes it
//! as a run directory), and a view of such runs.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use bench_core::measure::{Metric, PointKey};
use results::model::{FabricKind, FabricRun, Run};
use results::testing::{self, RunBuilder};

pub(crate) use results::testing::write_run;

/// A fresh, empty directory under the system's temporary directory.
pub(crate) fn temp_dir(name: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "fabbench-history-{name}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    dir
}

/// An emulated osu_latency run `id` at sizes 1 and 8, one-way latency `us` at both.
pub(crate) fn latency_run(id: &str, start: &str, us: f64) -> Run {
    latency_run_on(id, start, "rapidio", &[1, 8], |_| us)
}

/// An emulated osu_latency run `id` on `fabric` at `sizes`, one-way latency `us(size)`.
pub(crate) fn latency_run_on(
    id: &str,
    start: &str,
    fabric: &str,
    sizes: &[u64],
    us: impl Fn(u64) -> f64,
) -> Run {
    let points = sizes
        .iter()
        .map(|&size| {
            let ns = (us(size) * 2000.0) as u64;
            testing::point(
                PointKey::size(size),
                vec![Metric::latency_us(2.0)],
                vec![ns; 4],
            )
        })
        .collect();
    RunBuilder::new(id)
        .version("0.1.0")
        .revision("0123456789ab")
        .command_line(&["fabbench", "run", id])
        .times(start, start)
        .suites(&["osu_latency"])
        .fabric(FabricRun {
            settings_line: "eager_limit=4KiB".into(),
            ..testing::fabric(fabric, FabricKind::Emulated, 2)
        })
        .series(testing::series(
            "osu_latency",
            fabric,
            true,
            2,
            testing::osu_layout("OSU MPI Latency Test v7.4", "Avg Latency(us)"),
            points,
        ))
        .build()
}

/// A view of `runs`, one entry each in order (revisions r0, r1, ...), found with the
/// defaults.
pub(crate) fn view_of_runs(runs: &[Run]) -> crate::trend::View {
    let entries: Vec<crate::entry::Entry> = runs
        .iter()
        .enumerate()
        .map(|(i, run)| {
            let o = crate::entry::Overrides {
                revision: Some(format!("r{i}")),
                date: None,
            };
            crate::entry::Entry::of(run, &o, i as u64 + 1).expect("an entry")
        })
        .collect();
    let (entries, series) =
        crate::series::select(entries, &crate::series::Filter::default()).expect("series");
    crate::trend::of(entries, series, &crate::changes::Options::default())
}

/// A view of one entry per latency in `us` (revisions r0, r1, ...), found with the defaults.
pub(crate) fn view_of(us: &[f64]) -> crate::trend::View {
    let runs: Vec<Run> = us
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            latency_run(
                &format!("run{i}"),
                &format!("2026-01-{:02}T00:00:00Z", i + 1),
                v,
            )
        })
        .collect();
    view_of_runs(&runs)
}
