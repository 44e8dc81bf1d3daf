//! Runs built in memory for the unit tests: a few latency points with round values, so each
//! test can say by hand what the table must hold.

use std::collections::BTreeMap;

use bench_core::machine::HostInfo;
use bench_core::measure::{Layout, Metric, Point, PointKey};
use results::model::{FabricKind, FabricRun, Manifest, Series, TunableRecord};
use results::Run;

/// A point: suite, fabric, key, latency in microseconds (a whole number of nanoseconds).
pub type P<'a> = (&'a str, &'a str, PointKey, f64);

/// A latency point at `size`.
pub fn at<'a>(suite: &'a str, fabric: &'a str, size: u64, us: f64) -> P<'a> {
    (suite, fabric, PointKey::size(size), us)
}

/// A run `id` over `fabrics` (each emulated, with no tunables) measuring `points`.
pub fn run(id: &str, fabrics: &[&str], points: &[P<'_>]) -> Run {
    let mut series: Vec<Series> = Vec::new();
    for (suite, fabric, key, us) in points {
        let point = Point {
            warmup: None,
            key: key.clone(),
            metrics: vec![Metric::latency_us(1.0)],
            samples_ns: vec![(us * 1000.0).round() as u64],
            validated: None,
            batches: Vec::new(),
            split: None,
        };
        match series
            .iter_mut()
            .find(|s| s.suite == *suite && s.fabric == *fabric)
        {
            Some(s) => s.points.push(point),
            None => series.push(Series {
                suite: suite.to_string(),
                fabric: fabric.to_string(),
                emulated: true,
                ranks: 2,
                layout: Layout::Osu {
                    title: "t".into(),
                    column: "c".into(),
                    tail: false,
                    tail_at: Vec::new(),
                    validation: false,
                },
                points: vec![point],
                notes: Vec::new(),
            }),
        }
    }
    Run {
        manifest: Manifest {
            partial: None,
            schema_version: results::SCHEMA_VERSION,
            fabbench_version: "0.1.0".into(),
            git_revision: "test".into(),
            run_id: id.into(),
            command_line: vec![],
            start_time: "2026-11-23T15:07:35Z".into(),
            end_time: "2026-11-23T15:07:36Z".into(),
            host: HostInfo {
                hostname: "vm".into(),
                cpu_model: "cpu".into(),
                cpus: 2,
                kernel: "k".into(),
                os: "Linux".into(),
            },
            suites: vec![],
            params: BTreeMap::new(),
            fabrics: fabrics
                .iter()
                .map(|f| FabricRun {
                    fabric: f.to_string(),
                    kind: FabricKind::Emulated,
                    emulated: true,
                    virtual_time: true,
                    ranks: 2,
                    settings_line: String::new(),
                    tunables: BTreeMap::new(),
                    counters: vec![],
                    facts: BTreeMap::new(),
                })
                .collect(),
        },
        series,
    }
}

/// Sets a tunable of one fabric of `run` (and its settings line, as the runner writes it).
pub fn set(run: &mut Run, fabric: &str, name: &str, value: &str) {
    let f = run
        .manifest
        .fabrics
        .iter_mut()
        .find(|f| f.fabric == fabric)
        .expect("the fabric is in the run");
    f.tunables.insert(
        name.into(),
        TunableRecord {
            value: serde_json::Value::String(value.into()),
            source: "cli".into(),
        },
    );
    f.settings_line = f
        .tunables
        .iter()
        .map(|(k, t)| format!("{k}={}", t.value.as_str().unwrap_or_default()))
        .collect::<Vec<_>>()
        .join(" ");
}
