//! Reading a run directory back into a [`Run`]: manifest.json says what was measured, and
//! samples.csv holds every raw sample; everything else in the directory is derived and is not
//! read. Directories written before schema versions existed go to [`legacy`].

mod compute;
pub mod legacy;
mod source;

use std::collections::HashMap;
use std::path::Path;

use bench_core::measure::{Point, PointKey};

use crate::format::json_csv::{ManifestFile, SampleRow};
use crate::model::{Run, Series, SCHEMA_VERSION};
use crate::ResultsError;
pub use source::read_regular;
use source::{malformed, read_text};

/// The samples of a run by (suite, fabric, point key), in iteration order.
pub type Samples = HashMap<(String, String, PointKey), Vec<u64>>;

/// The run directories `dir` stands for: a scaling run's directory (`run -n 1,2,4`, holding
/// scaling.csv) stands for the runs inside it (`nN/RUN_ID`), in name order; any other
/// directory for itself.
pub fn runs_in(dir: &Path) -> Vec<std::path::PathBuf> {
    if !dir.join("scaling.csv").is_file() {
        return vec![dir.to_path_buf()];
    }
    let mut runs: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .flat_map(|count| std::fs::read_dir(count).into_iter().flatten().flatten())
        .map(|e| e.path())
        .filter(|p| p.join("manifest.json").is_file())
        .collect();
    runs.sort();
    if runs.is_empty() {
        vec![dir.to_path_buf()]
    } else {
        runs
    }
}

/// Reads the run in `dir`. Errors name the file that is missing or malformed.
pub fn read_run(dir: &Path) -> Result<Run, ResultsError> {
    let path = dir.join("manifest.json");
    let text = read_text(&path)?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| malformed(&path, e))?;
    let version = match value.get("schema_version") {
        None => 0,
        Some(v) => v.as_u64().ok_or_else(|| ResultsError::Malformed {
            path: path.to_path_buf(),
            reason: format!("schema_version is {v}, not a number"),
        })?,
    };
    if version == 0 {
        return legacy::read(dir, value);
    }
    if version != SCHEMA_VERSION as u64 {
        return Err(ResultsError::Schema {
            path: path.to_path_buf(),
            found: version,
            supported: SCHEMA_VERSION,
        });
    }
    let file: ManifestFile = serde_json::from_value(value).map_err(|e| malformed(&path, e))?;
    let csv = dir.join("samples.csv");
    let mut text = read_text(&csv)?;
    if file.manifest.partial.is_some() {
        // A run that was killed may have been cut off in the middle of appending a point's
        // rows: its last line, without its newline, is not a row. The points the manifest
        // lists were all whole before it listed them.
        let whole = text.rfind('\n').map_or(0, |i| i + 1);
        text.truncate(whole);
    }
    let mut samples = parse_samples(&text, &csv)?;
    let mut series = Vec::new();
    for s in file.series {
        let mut points = Vec::new();
        for p in s.points {
            let got = samples
                .remove(&(s.suite.clone(), s.fabric.clone(), p.key.clone()))
                .unwrap_or_default();
            if got.len() != p.samples {
                return Err(ResultsError::Malformed {
                    path: csv.to_path_buf(),
                    reason: format!(
                        "{} on {} at {} has {} samples; manifest.json says {}",
                        s.suite,
                        s.fabric,
                        p.key,
                        got.len(),
                        p.samples
                    ),
                });
            }
            points.push(Point {
                key: p.key,
                metrics: p.metrics,
                samples_ns: got,
                validated: p.validated,
                batches: p.batches,
                split: p.split,
                warmup: p.warmup,
            });
        }
        series.push(Series {
            suite: s.suite,
            fabric: s.fabric,
            emulated: s.emulated,
            ranks: s.ranks,
            layout: s.layout,
            points,
            notes: s.notes,
        });
    }
    let mut manifest = file.manifest;
    compute::read_compute(dir, &mut manifest.fabrics)?;
    Ok(Run { manifest, series })
}

/// The manifest of the run in `dir` alone (what a resumed run is continued with), without
/// reading its samples.
pub fn read_manifest(dir: &Path) -> Result<crate::model::Manifest, ResultsError> {
    let path = dir.join("manifest.json");
    let text = read_text(&path)?;
    let file: ManifestFile = serde_json::from_str(&text).map_err(|e| malformed(&path, e))?;
    Ok(file.manifest)
}

/// samples.csv's text, grouped by point (what [`read_run`] reads the file with; public for the
/// fuzz targets). `path` only names the file in errors.
pub fn parse_samples(text: &str, path: &Path) -> Result<Samples, ResultsError> {
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let mut out: Samples = HashMap::new();
    for (line, row) in r.deserialize::<SampleRow>().enumerate() {
        let row = row.map_err(|e| malformed(path, e))?;
        let params = PointKey::parse_params(&row.params)
            .map_err(|e| malformed(path, format!("row {}: params {e}", line + 2)))?;
        let key = PointKey {
            size: row.size,
            params,
        };
        let v = out.entry((row.suite, row.fabric, key)).or_default();
        if row.iteration != v.len() {
            return Err(malformed(
                path,
                format!(
                    "row {}: iteration {} follows {} samples of its point",
                    line + 2,
                    row.iteration,
                    v.len()
                ),
            ));
        }
        v.push(row.ns);
    }
    Ok(out)
}
