//! Exporters: one trait behind every file format a run is written in (hyperfine's shape).
//! Each turns a [`Run`] into named files; the run directory writes them atomically.

use std::path::PathBuf;

use serde::Serialize;

use crate::model::Run;
use crate::ResultsError;

pub trait Exporter {
    /// The files this exporter makes, as (path inside the run directory, bytes).
    fn export(&self, run: &Run) -> Result<Vec<(PathBuf, Vec<u8>)>, ResultsError>;
}

/// manifest.json
pub struct ManifestJson;

impl Exporter for ManifestJson {
    fn export(&self, run: &Run) -> Result<Vec<(PathBuf, Vec<u8>)>, ResultsError> {
        let mut bytes = serde_json::to_vec_pretty(&run.manifest).map_err(ResultsError::json)?;
        bytes.push(b'\n');
        Ok(vec![("manifest.json".into(), bytes)])
    }
}

/// summary.csv: one tidy row per suite, fabric, size and metric.
pub struct SummaryCsv;

impl Exporter for SummaryCsv {
    fn export(&self, run: &Run) -> Result<Vec<(PathBuf, Vec<u8>)>, ResultsError> {
        Ok(vec![("summary.csv".into(), to_csv(&run.records())?)])
    }
}

#[derive(Serialize)]
struct SampleRow<'a> {
    suite: &'a str,
    fabric: &'a str,
    size: u64,
    iteration: usize,
    ns: u64,
}

/// samples.csv: every raw timed sample, so any statistic can be recomputed later.
pub struct SamplesCsv;

impl Exporter for SamplesCsv {
    fn export(&self, run: &Run) -> Result<Vec<(PathBuf, Vec<u8>)>, ResultsError> {
        let mut rows = Vec::new();
        for s in &run.series {
            for p in &s.points {
                for (i, ns) in p.samples_ns.iter().enumerate() {
                    rows.push(SampleRow {
                        suite: &s.suite,
                        fabric: &s.fabric,
                        size: p.size,
                        iteration: i,
                        ns: *ns,
                    });
                }
            }
        }
        Ok(vec![("samples.csv".into(), to_csv(&rows)?)])
    }
}

/// results.json: the manifest and the summary records in one document.
pub struct ResultsJson;

impl Exporter for ResultsJson {
    fn export(&self, run: &Run) -> Result<Vec<(PathBuf, Vec<u8>)>, ResultsError> {
        #[derive(Serialize)]
        struct Doc<'a> {
            manifest: &'a crate::model::Manifest,
            records: Vec<crate::model::Record>,
        }
        let doc = Doc {
            manifest: &run.manifest,
            records: run.records(),
        };
        let mut bytes = serde_json::to_vec_pretty(&doc).map_err(ResultsError::json)?;
        bytes.push(b'\n');
        Ok(vec![("results.json".into(), bytes)])
    }
}

fn to_csv<T: Serialize>(rows: &[T]) -> Result<Vec<u8>, ResultsError> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in rows {
        w.serialize(r)
            .map_err(|e| ResultsError::Format(e.to_string()))?;
    }
    w.into_inner()
        .map_err(|e| ResultsError::Format(e.to_string()))
}
