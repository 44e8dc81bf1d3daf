//! Runs built in memory for tests, one way for every crate: a [`RunBuilder`] for the manifest
//! and a few pieces (a fabric, a series, a point, a fixed host) that each test fills with the
//! values it checks by hand. Compiled for this crate's own tests and, through the `testing`
//! feature, for other crates' tests, which enable it in their dev-dependencies:
//! `results = { path = "../results", features = ["testing"] }`.

use std::path::{Path, PathBuf};

use bench_core::machine::HostInfo;
use bench_core::measure::{Layout, Metric, Point, PointKey, Split};

use crate::model::{FabricKind, FabricRun, Manifest, Run, Series, SCHEMA_VERSION};

/// A [`Run`] put together field by field. What a test does not set is a placeholder no test
/// reads: version "0", revision "x", start and end "t", this machine's host facts, no command
/// line, suites, parameters, fabrics or series.
#[derive(Debug, Clone)]
pub struct RunBuilder {
    run: Run,
}

impl RunBuilder {
    /// A run whose id is `run_id`, otherwise empty.
    pub fn new(run_id: &str) -> RunBuilder {
        RunBuilder {
            run: Run {
                manifest: Manifest {
                    partial: None,
                    quick: false,
                    resumed: vec![],
                    schema_version: SCHEMA_VERSION,
                    fabbench_version: "0".into(),
                    git_revision: "x".into(),
                    run_id: run_id.into(),
                    command_line: vec![],
                    start_time: "t".into(),
                    end_time: "t".into(),
                    host: HostInfo::collect(),
                    suites: vec![],
                    params: Default::default(),
                    fabrics: vec![],
                },
                series: vec![],
            },
        }
    }

    /// The fabbench version the manifest records.
    pub fn version(mut self, fabbench_version: &str) -> RunBuilder {
        self.run.manifest.fabbench_version = fabbench_version.into();
        self
    }

    /// The git revision the manifest records.
    pub fn revision(mut self, git_revision: &str) -> RunBuilder {
        self.run.manifest.git_revision = git_revision.into();
        self
    }

    /// When the run started and ended, as the manifest writes them.
    pub fn times(mut self, start: &str, end: &str) -> RunBuilder {
        self.run.manifest.start_time = start.into();
        self.run.manifest.end_time = end.into();
        self
    }

    /// The machine the run says it ran on (see [`host`] for a fixed one).
    pub fn host(mut self, host: HostInfo) -> RunBuilder {
        self.run.manifest.host = host;
        self
    }

    /// The command line the manifest records.
    pub fn command_line(mut self, args: &[&str]) -> RunBuilder {
        self.run.manifest.command_line = args.iter().map(|a| a.to_string()).collect();
        self
    }

    /// The suites the manifest lists (not derived from the series: some tests leave it empty).
    pub fn suites(mut self, suites: &[&str]) -> RunBuilder {
        self.run.manifest.suites = suites.iter().map(|s| s.to_string()).collect();
        self
    }

    /// Adds a fabric to the manifest.
    pub fn fabric(mut self, fabric: FabricRun) -> RunBuilder {
        self.run.manifest.fabrics.push(fabric);
        self
    }

    /// Adds a series of points.
    pub fn series(mut self, series: Series) -> RunBuilder {
        self.run.series.push(series);
        self
    }

    pub fn build(self) -> Run {
        self.run
    }
}

/// A fabric of `ranks` ranks with no settings, tunables, counters or facts; emulated fabrics
/// run in virtual time.
pub fn fabric(name: &str, kind: FabricKind, ranks: usize) -> FabricRun {
    let emulated = kind == FabricKind::Emulated;
    FabricRun {
        fabric: name.into(),
        kind,
        emulated,
        virtual_time: emulated,
        ranks,
        settings_line: String::new(),
        tunables: Default::default(),
        counters: vec![],
        facts: Default::default(),
        compute: Vec::new(),
    }
}

/// A series of `suite` on `fabric`, without notes.
pub fn series(
    suite: &str,
    fabric: &str,
    emulated: bool,
    ranks: usize,
    layout: Layout,
    points: Vec<Point>,
) -> Series {
    Series {
        suite: suite.into(),
        fabric: fabric.into(),
        emulated,
        ranks,
        layout,
        points,
        notes: Vec::new(),
    }
}

/// OSU's layout with its title and value column, without tail percentiles or validation.
pub fn osu_layout(title: &str, column: &str) -> Layout {
    Layout::Osu {
        title: title.into(),
        column: column.into(),
        tail: false,
        tail_at: Vec::new(),
        validation: false,
    }
}

/// A measured point without warm-up, validation, batches or a compute/communication split.
pub fn point(key: PointKey, metrics: Vec<Metric>, samples_ns: Vec<u64>) -> Point {
    Point {
        warmup: None,
        key,
        metrics,
        samples_ns,
        validated: None,
        batches: Vec::new(),
        split: None,
    }
}

/// A made-up machine, the same everywhere, for tests whose output shows the host.
pub fn host() -> HostInfo {
    HostInfo {
        hostname: "vm".into(),
        cpu_model: "cpu".into(),
        cpus: 2,
        kernel: "k".into(),
        os: "Linux".into(),
    }
}

/// A native run of `suite` on `fabric` at `ranks` with one NPB-like kernel point per `(kernel,
/// seconds)`, class S, validated, its time split evenly between compute and communication.
pub fn npb_run(suite: &str, fabric: &str, ranks: usize, kernels: &[(&str, f64)]) -> Run {
    use bench_core::measure::{Better, Derivation, NpbLayout};
    let time = Metric {
        name: "time".into(),
        unit: "s".into(),
        better: Better::Lower,
        derive: Derivation::Time {
            divisor: 1.0,
            unit_ns: 1e9,
        },
    };
    let mops = Metric {
        name: "mops".into(),
        unit: "Mop/s".into(),
        better: Better::Higher,
        derive: Derivation::Rate {
            amount: 1e9,
            unit: 1e6,
        },
    };
    let points = kernels
        .iter()
        .map(|(k, secs)| {
            let ns = (secs * 1e9) as u64;
            Point {
                validated: Some(true),
                split: Some(Split {
                    compute_ns: vec![ns / 2],
                    comm_ns: vec![ns / 2],
                }),
                ..point(
                    PointKey::params([("class", "S".to_string()), ("kernel", k.to_string())]),
                    vec![time.clone(), mops.clone()],
                    vec![ns],
                )
            }
        })
        .collect();
    let layout = Layout::Npb(NpbLayout {
        class: "S".into(),
        kernels: vec![],
    });
    RunBuilder::new(&format!("20261123T000000Z-{suite}-{fabric}-{ranks}"))
        .suites(&[suite])
        .fabric(self::fabric(fabric, FabricKind::Native, ranks))
        .series(series(suite, fabric, false, ranks, layout, points))
        .build()
}

/// `run` written by this crate's exporters as the run directory `parent/RUN_ID`; its path.
pub fn write_run(parent: &Path, run: &Run) -> PathBuf {
    let dir = parent.join(&run.manifest.run_id);
    for (rel, bytes) in crate::format::export_all(run).expect("the run exports") {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("a directory");
        std::fs::write(&path, bytes).expect("a file");
    }
    dir
}
