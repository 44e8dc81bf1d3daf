//! Runs made up for the tests of what reads runs (scaling, NPB's report).

use bench_core::machine::HostInfo;
use bench_core::measure::{Layout, Metric, Point, PointKey, Split};

use crate::model::{FabricKind, FabricRun, Manifest, Run, Series, SCHEMA_VERSION};

/// A run of `suite` on `fabric` at `ranks` with one NPB-like kernel point per `(kernel,
/// seconds)`, class S, for tests of what reads runs.
pub(crate) fn testing_run(suite: &str, fabric: &str, ranks: usize, kernels: &[(&str, f64)]) -> Run {
    use bench_core::measure::{Derivation, NpbLayout};
    let time = Metric {
        name: "time".into(),
        unit: "s".into(),
        better: bench_core::measure::Better::Lower,
        derive: Derivation::Time {
            divisor: 1.0,
            unit_ns: 1e9,
        },
    };
    let mops = Metric {
        name: "mops".into(),
        unit: "Mop/s".into(),
        better: bench_core::measure::Better::Higher,
        derive: Derivation::Rate {
            amount: 1e9,
            unit: 1e6,
        },
    };
    Run {
        manifest: Manifest {
            partial: None,
            schema_version: SCHEMA_VERSION,
            fabbench_version: "0".into(),
            git_revision: "x".into(),
            run_id: format!("20261123T000000Z-{suite}-{fabric}-{ranks}"),
            command_line: vec![],
            start_time: "t".into(),
            end_time: "t".into(),
            host: HostInfo::collect(),
            suites: vec![suite.into()],
            params: Default::default(),
            fabrics: vec![FabricRun {
                fabric: fabric.into(),
                kind: FabricKind::Native,
                emulated: false,
                virtual_time: false,
                ranks,
                settings_line: String::new(),
                tunables: Default::default(),
                counters: vec![],
                facts: Default::default(),
            }],
        },
        series: vec![Series {
            suite: suite.into(),
            fabric: fabric.into(),
            emulated: false,
            ranks,
            layout: Layout::Npb(NpbLayout {
                class: "S".into(),
                kernels: vec![],
            }),
            points: kernels
                .iter()
                .map(|(k, secs)| {
                    let ns = (secs * 1e9) as u64;
                    Point {
                        warmup: None,
                        key: PointKey::params([
                            ("class", "S".to_string()),
                            ("kernel", k.to_string()),
                        ]),
                        metrics: vec![time.clone(), mops.clone()],
                        samples_ns: vec![ns],
                        validated: Some(true),
                        batches: Vec::new(),
                        split: Some(Split {
                            compute_ns: vec![ns / 2],
                            comm_ns: vec![ns / 2],
                        }),
                    }
                })
                .collect(),
            notes: Vec::new(),
        }],
    }
}
