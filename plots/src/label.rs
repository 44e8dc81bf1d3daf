//! Names for what a chart shows: a legend entry per series that tells runs apart, and the
//! title and subtitle lines that say which suite, fabrics and hosts a chart covers and which
//! fabrics were emulated.

use std::collections::BTreeSet;

use results::model::Series;
use results::Run;

/// One suite on one fabric in one run: a line on a chart.
#[derive(Debug, Clone, Copy)]
pub struct Curve<'a> {
    pub run: &'a Run,
    pub series: &'a Series,
}

/// Legend names for `curves`, in order: the fabric, "(emulated)" when it was; when one suite
/// ran on a fabric in several runs, what tells them apart, by the rule the report's columns
/// follow too ([`results::naming`]: the tunables whose values differ, else the run's short
/// stamp); "(partial)" when its run ended before its last point.
pub fn names(curves: &[Curve<'_>]) -> Vec<String> {
    let subjects: Vec<results::naming::Subject<'_>> = curves
        .iter()
        .map(|c| results::naming::Subject {
            run: c.run,
            fabric: &c.series.fabric,
        })
        .collect();
    let keys: Vec<(&str, &str)> = curves
        .iter()
        .map(|c| (c.series.suite.as_str(), c.series.fabric.as_str()))
        .collect();
    results::naming::names_grouped(&subjects, &keys)
        .into_iter()
        .zip(curves)
        .map(
            |(name, c)| match name.strip_prefix(c.series.fabric.as_str()) {
                // The chart says which fabric ran emulated where the table has a column for it.
                Some(rest) => format!("{}{rest}", fabric_words(c.series)),
                None => name,
            },
        )
        .collect()
}

/// "rapidio (emulated)" or "shm".
fn fabric_words(s: &Series) -> String {
    if s.emulated {
        format!("{} (emulated)", s.fabric)
    } else {
        s.fabric.clone()
    }
}

/// A run id's time stamp as a reader says it: 20261123T150735Z → 2026-11-23 15:07:35.
pub fn stamp(run_id: &str) -> String {
    let s = results::run_dir::stamp_of(run_id);
    if s.len() == 16 && s.as_bytes()[8] == b'T' {
        format!(
            "{}-{}-{} {}:{}:{}",
            &s[0..4],
            &s[4..6],
            &s[6..8],
            &s[9..11],
            &s[11..13],
            &s[13..15]
        )
    } else {
        run_id.to_string()
    }
}

/// The fabrics of `curves`, each once, in order: "shm, rapidio".
pub fn fabrics(curves: &[Curve<'_>]) -> String {
    let mut seen = Vec::new();
    for c in curves {
        if !seen.contains(&c.series.fabric) {
            seen.push(c.series.fabric.clone());
        }
    }
    seen.join(", ")
}

/// The subtitle: hosts, ranks, and which fabrics ran emulated in virtual time.
pub fn context(curves: &[Curve<'_>]) -> String {
    let mut hosts: Vec<String> = Vec::new();
    let mut ranks: BTreeSet<usize> = BTreeSet::new();
    let mut emulated: Vec<String> = Vec::new();
    for c in curves {
        let h = &c.run.manifest.host;
        let host = format!("{} ({}, {} CPUs)", h.hostname, h.cpu_model, h.cpus);
        if !hosts.contains(&host) {
            hosts.push(host);
        }
        ranks.insert(c.series.ranks);
        if c.series.emulated && !emulated.contains(&c.series.fabric) {
            emulated.push(c.series.fabric.clone());
        }
    }
    let mut parts = vec![format!(
        "{} {}",
        if hosts.len() == 1 { "host" } else { "hosts" },
        hosts.join(", ")
    )];
    let r: Vec<String> = ranks.iter().map(|r| r.to_string()).collect();
    parts.push(format!("{} ranks", r.join("/")));
    if !emulated.is_empty() {
        parts.push(format!("{} emulated in virtual time", emulated.join(", ")));
    }
    parts.join(" · ")
}
