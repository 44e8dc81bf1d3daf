//! Runs built in memory for the unit tests (with the results crate's shared test builder): a
//! few latency points with round values, so each test can say by hand what the table must hold.

use bench_core::measure::{Metric, PointKey};
use results::model::{FabricKind, Series, TunableRecord};
use results::testing::{self, RunBuilder};
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
        let point = testing::point(
            key.clone(),
            vec![Metric::latency_us(1.0)],
            vec![(us * 1000.0).round() as u64],
        );
        match series
            .iter_mut()
            .find(|s| s.suite == *suite && s.fabric == *fabric)
        {
            Some(s) => s.points.push(point),
            None => series.push(testing::series(
                suite,
                fabric,
                true,
                2,
                testing::osu_layout("t", "c"),
                vec![point],
            )),
        }
    }
    let run = RunBuilder::new(id)
        .version("0.1.0")
        .revision("test")
        .times("2026-11-23T15:07:35Z", "2026-11-23T15:07:36Z")
        .host(testing::host());
    let run = fabrics.iter().fold(run, |run, f| {
        run.fabric(testing::fabric(f, FabricKind::Emulated, 2))
    });
    series.into_iter().fold(run, RunBuilder::series).build()
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
