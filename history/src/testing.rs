//! Runs and directories made up for the store's tests: an OSU latency run whose samples give a
//! chosen latency, written as a run directory by the results crate's own exporters.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use bench_core::machine::HostInfo;
use bench_core::measure::{Layout, Metric, Point, PointKey};
use results::model::{FabricKind, FabricRun, Manifest, Run, Series, SCHEMA_VERSION};

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
    let ns = (us * 2000.0) as u64;
    Run {
        manifest: Manifest {
            partial: None,
            schema_version: SCHEMA_VERSION,
            fabbench_version: "0.1.0".into(),
            git_revision: "0123456789ab".into(),
            run_id: id.into(),
            command_line: vec!["fabbench".into(), "run".into(), id.into()],
            start_time: start.into(),
            end_time: start.into(),
            host: HostInfo::collect(),
            suites: vec!["osu_latency".into()],
            params: Default::default(),
            fabrics: vec![FabricRun {
                fabric: "rapidio".into(),
                kind: FabricKind::Emulated,
                emulated: true,
                virtual_time: true,
                ranks: 2,
                settings_line: "eager_limit=4KiB".into(),
                tunables: Default::default(),
                counters: vec![],
                facts: Default::default(),
            }],
        },
        series: vec![Series {
            suite: "osu_latency".into(),
            fabric: "rapidio".into(),
            emulated: true,
            ranks: 2,
            layout: Layout::Osu {
                title: "OSU MPI Latency Test v7.4".into(),
                column: "Avg Latency(us)".into(),
                tail: false,
                tail_at: Vec::new(),
                validation: false,
            },
            points: [1, 8]
                .into_iter()
                .map(|size| Point {
                    warmup: None,
                    key: PointKey::size(size),
                    metrics: vec![Metric::latency_us(2.0)],
                    samples_ns: vec![ns; 4],
                    validated: None,
                    batches: Vec::new(),
                    split: None,
                })
                .collect(),
            notes: Vec::new(),
        }],
    }
}

/// `run` written as a run directory `parent/RUN_ID`; its path.
pub(crate) fn write_run(parent: &Path, run: &Run) -> PathBuf {
    let dir = parent.join(&run.manifest.run_id);
    for (rel, bytes) in results::export::export_all(run).expect("the run exports") {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("a directory");
        std::fs::write(&path, bytes).expect("a file");
    }
    dir
}

/// A view of one entry per latency in `us` (revisions r0, r1, ...), found with the defaults.
pub(crate) fn view_of(us: &[f64]) -> crate::trend::View {
    let entries: Vec<crate::entry::Entry> = us
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let run = latency_run(
                &format!("run{i}"),
                &format!("2026-01-{:02}T00:00:00Z", i + 1),
                v,
            );
            let o = crate::entry::Overrides {
                revision: Some(format!("r{i}")),
                date: None,
            };
            crate::entry::Entry::of(&run, &o, i as u64 + 1).expect("an entry")
        })
        .collect();
    let (entries, series) =
        crate::series::select(entries, &crate::series::Filter::default()).expect("series");
    crate::trend::of(entries, series, &crate::changes::Options::default())
}
