//! Run directories written before schema versions existed (schema 0: fabbench 0.1.0 up to the
//! runner library). Their manifest lacked the series index and their samples.csv the params
//! column, but they can only hold the OSU trio, whose metrics and layouts are fixed, so the
//! whole run is rebuilt: points from samples.csv, metrics and layouts from each suite's OSU
//! definition and the run's options, the settings line from the comment lines of osu.txt.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use bench_core::machine::HostInfo;
use bench_core::measure::{Layout, Metric, Point, PointKey};
use serde::Deserialize;

use super::source::{malformed, read_text};
use crate::model::{FabricKind, FabricRun, Manifest, Run, Series, TunableRecord};
use crate::ResultsError;

#[derive(Deserialize)]
struct ManifestV0 {
    fabbench_version: String,
    git_revision: String,
    run_id: String,
    command_line: Vec<String>,
    start_time: String,
    end_time: String,
    host: HostInfo,
    suites: Vec<String>,
    options: OptionsV0,
    fabrics: Vec<FabricV0>,
}

/// The OSU options every suite of a schema-0 run shared.
#[derive(Deserialize)]
struct OptionsV0 {
    window: Option<u64>,
    #[serde(default)]
    validate: bool,
    #[serde(default)]
    tail: bool,
}

#[derive(Deserialize)]
struct FabricV0 {
    fabric: String,
    kind: FabricKind,
    emulated: bool,
    virtual_time: bool,
    ranks: usize,
    tunables: BTreeMap<String, TunableRecord>,
    counters: Vec<serde_json::Value>,
    facts: BTreeMap<String, String>,
}

#[derive(Deserialize)]
struct SampleV0 {
    suite: String,
    fabric: String,
    size: u64,
    iteration: usize,
    ns: u64,
}

/// (title, metric column, bytes per sample as a multiple of size x window; 0 for latency)
fn osu(suite: &str) -> Option<(&'static str, &'static str, u64)> {
    Some(match suite {
        "osu_latency" => ("OSU MPI Latency Test v7.4", "Avg Latency(us)", 0),
        "osu_bw" => ("OSU MPI Bandwidth Test v7.4", "Bandwidth (MB/s)", 1),
        "osu_bibw" => (
            "OSU MPI Bi-Directional Bandwidth Test v7.4",
            "Bandwidth (MB/s)",
            2,
        ),
        _ => return None,
    })
}

/// Rebuilds a schema-0 run from its manifest (already parsed as JSON) and samples.csv.
pub fn read(dir: &Path, manifest: serde_json::Value) -> Result<Run, ResultsError> {
    let mpath = dir.join("manifest.json");
    let options = manifest.get("options").cloned().unwrap_or_default();
    let m: ManifestV0 = serde_json::from_value(manifest).map_err(|e| {
        malformed(
            &mpath,
            format!("no schema_version, and not a schema-0 manifest either: {e}"),
        )
    })?;
    let samples = samples(&dir.join("samples.csv"))?;
    let lines = settings_lines(dir);
    let window = m.options.window.unwrap_or(64);
    let mut series = Vec::new();
    for f in &m.fabrics {
        for suite in &m.suites {
            let (title, column, bytes) = osu(suite).ok_or_else(|| {
                malformed(
                    &mpath,
                    format!("a schema-0 run can only hold the OSU trio, not {suite}"),
                )
            })?;
            let Some(sizes) = samples.get(&(suite.clone(), f.fabric.clone())) else {
                continue;
            };
            let points = sizes
                .iter()
                .map(|(size, ns)| {
                    let metric = if bytes == 0 {
                        Metric::latency_us(2.0)
                    } else {
                        // The bytes a sample moves; a size and window from the file can make
                        // more than a u64 holds, which no run measured.
                        let moved = bytes
                            .checked_mul(*size)
                            .and_then(|b| b.checked_mul(window))
                            .ok_or_else(|| {
                                malformed(
                                    &mpath,
                                    format!(
                                        "{suite} at size {size} with window {window} moves more                                          bytes per sample than a run can"
                                    ),
                                )
                            })?;
                        Metric::bandwidth_mbs(moved as f64)
                    };
                    Ok(Point {
                        warmup: None,
                        key: PointKey::size(*size),
                        metrics: vec![metric],
                        samples_ns: ns.clone(),
                        // A schema-0 run was only written when every check passed.
                        validated: m.options.validate.then_some(true),
                        batches: Vec::new(),
                        split: None,
                    })
                })
                .collect::<Result<Vec<_>, ResultsError>>()?;
            series.push(Series {
                suite: suite.clone(),
                fabric: f.fabric.clone(),
                emulated: f.emulated,
                ranks: f.ranks,
                layout: Layout::Osu {
                    title: title.into(),
                    column: column.into(),
                    tail: m.options.tail,
                    tail_at: Vec::new(),
                    validation: m.options.validate,
                },
                points,
                notes: Vec::new(),
            });
        }
    }
    Ok(Run {
        manifest: Manifest {
            partial: None,
            quick: false,
            resumed: vec![],
            schema_version: 0,
            fabbench_version: m.fabbench_version,
            git_revision: m.git_revision,
            run_id: m.run_id,
            command_line: m.command_line,
            start_time: m.start_time,
            end_time: m.end_time,
            host: m.host,
            params: m
                .suites
                .iter()
                .map(|s| (s.clone(), options.clone()))
                .collect(),
            suites: m.suites,
            fabrics: m
                .fabrics
                .into_iter()
                .map(|f| FabricRun {
                    settings_line: lines.get(&f.fabric).cloned().unwrap_or_default(),
                    fabric: f.fabric,
                    kind: f.kind,
                    emulated: f.emulated,
                    virtual_time: f.virtual_time,
                    ranks: f.ranks,
                    tunables: f.tunables,
                    counters: f.counters,
                    facts: f.facts,
                    compute: Vec::new(),
                })
                .collect(),
        },
        series,
    })
}

/// Samples per (suite, fabric), then per size in ascending order.
type SamplesV0 = HashMap<(String, String), BTreeMap<u64, Vec<u64>>>;

fn samples(path: &Path) -> Result<SamplesV0, ResultsError> {
    let text = read_text(path)?;
    let mut out: SamplesV0 = HashMap::new();
    for (line, row) in csv::Reader::from_reader(text.as_bytes())
        .deserialize::<SampleV0>()
        .enumerate()
    {
        let row = row.map_err(|e| malformed(path, e))?;
        let v = out
            .entry((row.suite, row.fabric))
            .or_default()
            .entry(row.size)
            .or_default();
        if row.iteration != v.len() {
            return Err(malformed(
                path,
                format!("row {}: iteration {} out of order", line + 2, row.iteration),
            ));
        }
        v.push(row.ns);
    }
    Ok(out)
}

/// Each fabric's settings line from osu.txt's comment lines, where it can be found:
/// `# fabbench V SUITE: fabric F (KIND), N ranks; LINE` or, in tables with a column per fabric,
/// `# F (KIND): LINE`.
fn settings_lines(dir: &Path) -> HashMap<String, String> {
    let text = super::read_regular(&dir.join("osu.txt")).unwrap_or_default();
    let mut out = HashMap::new();
    for l in text.lines() {
        if let Some(rest) = l.strip_prefix("# fabbench ") {
            if let Some((_, after)) = rest.split_once(": fabric ") {
                let label = after.split(' ').next().unwrap_or_default();
                if let Some((_, line)) = after.split_once(" ranks; ") {
                    out.entry(label.to_string())
                        .or_insert_with(|| line.to_string());
                }
            }
        } else if let Some(rest) = l.strip_prefix("# ") {
            if let Some((head, line)) = rest.split_once("): ") {
                if let Some((label, _kind)) = head.split_once(" (") {
                    if !label.contains(' ') {
                        out.entry(label.to_string())
                            .or_insert_with(|| line.to_string());
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::ResultsError;

    #[test]
    fn a_window_too_large_to_count_bytes_is_refused() {
        // Overflowed `2 * size * window` and panicked (found while writing the run_dir fuzz
        // target): the schema-0 fixture with its window set to 2^62.
        let fixture =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/runs/schema0-rapidio");
        let text = std::fs::read_to_string(fixture.join("manifest.json")).unwrap();
        let mut manifest: serde_json::Value = serde_json::from_str(&text).unwrap();
        manifest["options"]["window"] = serde_json::json!(1u64 << 62);
        let dir =
            std::env::temp_dir().join(format!("results-legacy-window-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("manifest.json"), manifest.to_string()).unwrap();
        std::fs::copy(fixture.join("samples.csv"), dir.join("samples.csv")).unwrap();
        let got = crate::read_run(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        match got {
            Err(ResultsError::Malformed { reason, .. }) => {
                assert!(reason.contains("window 4611686018427387904"), "{reason}")
            }
            other => panic!("{:?}", other.map(|r| r.series.len())),
        }
    }
}
