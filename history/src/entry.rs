//! One entry of a history: what a run measured, reduced to what trends need. An entry keeps
//! the run's identity (run id, git revision, date, host, fabbench version, each fabric's kind
//! and settings) and one record per suite, fabric, rank count, point and metric with the
//! headline value and a few statistics, never raw samples: a store grows by kilobytes a run,
//! and the run directory stays the place to look at a run in detail.

use bench_core::measure::{Better, PointKey, Split};
use results::model::{FabricKind, Run};
use serde::{Deserialize, Serialize};

use crate::date::Date;
use crate::error::HistoryError;

/// One run in the store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub run_id: String,
    /// The git revision the run measured: the manifest's, or what `--revision` said.
    pub revision: String,
    /// When: the run's start (or `--date`), RFC 3339 UTC, whole seconds.
    pub date: String,
    /// The order entries were added in (1, 2, ...): ties of date are shown in this order.
    pub seq: u64,
    pub host: Host,
    pub fabbench_version: String,
    /// The run's command line: with the run id and host, what tells two runs apart (run ids
    /// are unique only within one output directory).
    #[serde(default)]
    pub command_line: Vec<String>,
    pub fabrics: Vec<EntryFabric>,
    pub records: Vec<EntryRecord>,
}

/// The host a run measured on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Host {
    pub hostname: String,
    pub cpu_model: String,
}

/// A fabric of the run, as its manifest names and configures it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EntryFabric {
    pub fabric: String,
    pub kind: FabricKind,
    pub emulated: bool,
    /// The settings that matter on this fabric, as osu.txt's comment line shows them.
    pub settings_line: String,
}

/// One suite, fabric, rank count, point and metric of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EntryRecord {
    pub suite: String,
    pub fabric: String,
    pub ranks: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// The point's other parameters, `name=value;name=value` (empty for OSU points).
    #[serde(default)]
    pub params: String,
    pub metric: String,
    pub unit: String,
    pub better: Better,
    /// The headline, as summary.csv's `value`.
    pub value: f64,
    pub p50: f64,
    pub min: f64,
    pub count: u64,
    /// Measured in virtual time with nothing timed on the host: the same on any machine and
    /// every run, so any change in it is real.
    pub exact: bool,
}

impl EntryRecord {
    /// The point the record was measured at.
    pub fn key(&self) -> PointKey {
        PointKey {
            size: self.size,
            params: PointKey::parse_params(&self.params).unwrap_or_default(),
        }
    }
}

/// What the command line may set instead of the manifest.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// The revision CI knows (`$GITHUB_SHA`); the manifest's was taken at build time.
    pub revision: Option<String>,
    /// RFC 3339, any offset.
    pub date: Option<String>,
}

impl Entry {
    /// The entry of `run`, numbered `seq`. Fails only on a date that is not RFC 3339.
    pub fn of(run: &Run, overrides: &Overrides, seq: u64) -> Result<Entry, HistoryError> {
        let m = &run.manifest;
        let date = Date::parse(overrides.date.as_deref().unwrap_or(&m.start_time))?;
        let mut records = Vec::new();
        for s in &run.series {
            // Host compute time charged to a virtual clock varies with the host, and moves
            // every later event of the series, so one such point makes the series inexact.
            let host_timed = s.points.iter().any(|p| {
                p.split
                    .as_ref()
                    .is_some_and(|sp| sp.compute_ns.iter().any(|&c| c != 0))
            });
            let exact = s.emulated && !host_timed;
            for r in s.records() {
                let point = s
                    .points
                    .iter()
                    .find(|p| p.key.size == r.size && p.key.params_text() == r.params);
                let better = point
                    .and_then(|p| p.metrics.iter().find(|m| m.name == r.metric))
                    .map(|m| m.better)
                    .or_else(|| {
                        Split::metrics()
                            .into_iter()
                            .find(|m| m.name == r.metric)
                            .map(|m| m.better)
                    })
                    .unwrap_or(Better::Lower);
                records.push(EntryRecord {
                    suite: r.suite,
                    fabric: r.fabric,
                    ranks: r.ranks,
                    size: r.size,
                    params: r.params,
                    metric: r.metric,
                    unit: r.unit,
                    better,
                    value: r.value,
                    p50: r.p50,
                    min: r.min,
                    count: r.count,
                    exact,
                });
            }
        }
        Ok(Entry {
            run_id: m.run_id.clone(),
            revision: overrides
                .revision
                .clone()
                .unwrap_or_else(|| m.git_revision.clone()),
            date: date.rfc3339(),
            seq,
            host: Host {
                hostname: m.host.hostname.clone(),
                cpu_model: m.host.cpu_model.clone(),
            },
            fabbench_version: m.fabbench_version.clone(),
            command_line: m.command_line.clone(),
            fabrics: m
                .fabrics
                .iter()
                .map(|f| EntryFabric {
                    fabric: f.fabric.clone(),
                    kind: f.kind,
                    emulated: f.emulated,
                    settings_line: f.settings_line.clone(),
                })
                .collect(),
            records,
        })
    }

    /// What makes two entries the same run: its id, host and command line (not the revision
    /// or date, which `add` may override).
    pub fn identity(&self) -> (&str, &str, &[String]) {
        (&self.run_id, &self.host.hostname, &self.command_line)
    }

    /// The entry's file name: `DATE-REV-RUNID.json`, so a listing sorts by date. Characters a
    /// file name should not hold become `_`, and each part is cut so that the name stays
    /// within the 255 bytes file systems allow (the run id whole is inside the entry; two
    /// entries whose cut names meet get `-2`, `-3` ...).
    pub fn file_name(&self) -> String {
        let date = Date::parse(&self.date)
            .map(Date::compact)
            .unwrap_or_else(|_| file_safe(&self.date));
        let part = |s: &str, max: usize| file_safe(s).chars().take(max).collect::<String>();
        format!(
            "{}-{}-{}.json",
            part(&date, 32),
            part(&self.revision, 64),
            part(&self.run_id, 128)
        )
    }

    /// The revision as an axis or a table shows it: the first 8 characters, `-dirty` kept.
    pub fn short_revision(&self) -> String {
        short_revision(&self.revision)
    }
}

/// `1a2b3c4d5e6f-dirty` -> `1a2b3c4d-dirty`; names that are not hex stay whole.
pub fn short_revision(rev: &str) -> String {
    let (base, dirty) = match rev.strip_suffix("-dirty") {
        Some(b) => (b, "-dirty"),
        None => (rev, ""),
    };
    if base.len() > 8 && base.bytes().all(|c| c.is_ascii_hexdigit()) {
        format!("{}{dirty}", &base[..8])
    } else {
        rev.to_string()
    }
}

/// `s` with every character a file name or shell might mind replaced by `_`.
pub(crate) fn file_safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '+' | '.' | '@') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_revisions_keep_dirty_and_names() {
        assert_eq!(short_revision("ac739cf1c7d7-dirty"), "ac739cf1-dirty");
        assert_eq!(short_revision("ac739cf1c7d7"), "ac739cf1");
        assert_eq!(short_revision("v1.2.3"), "v1.2.3");
        assert_eq!(short_revision("unknown"), "unknown");
    }

    #[test]
    fn a_file_name_fits_a_file_system_whatever_the_run_id() {
        let run = crate::testing::latency_run("r", "2026-01-02T00:00:00Z", 1.0);
        let mut e = Entry::of(&run, &Default::default(), 1).unwrap();
        e.run_id = "x".repeat(300_000);
        e.revision = "f".repeat(1000);
        let name = e.file_name();
        assert!(name.len() <= 240, "{} bytes", name.len());
        assert!(name.ends_with(".json"));
    }

    #[test]
    fn file_names_sort_by_date_and_hold_no_separators() {
        assert_eq!(file_safe("feature/x y"), "feature_x_y");
        assert_eq!(
            file_safe("20261123T150735Z-osu_latency+osu_bw-tcp@mpi"),
            "20261123T150735Z-osu_latency+osu_bw-tcp@mpi"
        );
    }
}
