//! Earlier runs as evidence of how long the next will take: the run directories under the
//! results directory (and scaling runs' `STAMP-scaling/nN/` inside it) whose manifests name the
//! same suites on the same one fabric at the same rank count. Their manifests record when they
//! started and ended, to the second, which is enough for an estimate of ten seconds or more.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use results::model::Manifest;

/// How deep run directories sit under the results directory: `OUT/RUN`,
/// `OUT/STAMP-scaling/nN/RUN`.
const DEPTH: usize = 3;

/// An earlier complete run of one fabric.
#[derive(Debug, Clone)]
pub struct Earlier {
    pub manifest: Manifest,
    /// Its wall time, end minus start.
    pub seconds: f64,
}

/// The latest complete run under `root` of exactly `suites` on `fabric` alone at `ranks`
/// ranks, if there is one.
pub fn latest(root: &Path, suites: &[&str], fabric: &str, ranks: usize) -> Option<Earlier> {
    let mut dirs = Vec::new();
    manifests_under(root, DEPTH, &mut dirs);
    dirs.iter()
        .filter_map(|d| results::read_manifest(d).ok())
        .filter(|m| {
            m.partial.is_none()
                && m.suites
                    .iter()
                    .map(String::as_str)
                    .eq(suites.iter().copied())
                && m.fabrics.len() == 1
                && m.fabrics[0].fabric == fabric
                && m.fabrics[0].ranks == ranks
        })
        .filter_map(|m| {
            let seconds = wall_seconds(&m)?;
            Some(Earlier {
                manifest: m,
                seconds,
            })
        })
        .max_by(|a, b| a.manifest.end_time.cmp(&b.manifest.end_time))
}

/// A manifest's end minus its start, in seconds (None when either does not parse).
pub fn wall_seconds(m: &Manifest) -> Option<f64> {
    let at = |t: &str| humantime::parse_rfc3339_weak(t).ok();
    let (start, end): (SystemTime, SystemTime) = (at(&m.start_time)?, at(&m.end_time)?);
    end.duration_since(start).ok().map(|d| d.as_secs_f64())
}

/// Directories under `dir` (to `depth` levels) that hold a manifest.json, unreadable ones
/// skipped: an estimate never stops a run.
fn manifests_under(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if depth == 0 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        if !path.is_dir() {
            continue;
        }
        if path.join("manifest.json").is_file() {
            out.push(path);
        } else {
            manifests_under(&path, depth - 1, out);
        }
    }
}
