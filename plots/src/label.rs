//! Names for what a chart shows: a legend entry per series that tells runs apart, and the
//! title and subtitle lines that say which suite, fabrics and hosts a chart covers and which
//! fabrics were emulated.

use std::collections::{BTreeMap, BTreeSet};

use results::model::{FabricRun, Series};
use results::Run;

/// One suite on one fabric in one run: a line on a chart.
#[derive(Debug, Clone, Copy)]
pub struct Curve<'a> {
    pub run: &'a Run,
    pub series: &'a Series,
}

/// Legend names for `curves`, in order: the fabric, "(emulated)" when it was, "(partial
/// run)" when its run ended before its last point; when one
/// suite ran on a fabric in several runs, what tells them apart: the tunables whose values
/// differ, else the run's time stamp.
pub fn names(curves: &[Curve<'_>]) -> Vec<String> {
    let mut by_fabric: BTreeMap<(&str, &str), Vec<usize>> = BTreeMap::new();
    for (i, c) in curves.iter().enumerate() {
        by_fabric
            .entry((&c.series.suite, &c.series.fabric))
            .or_default()
            .push(i);
    }
    let mut out: Vec<String> = curves
        .iter()
        .map(|c| match c.run.partial_reason() {
            Some(_) => format!("{} (partial run)", fabric_words(c.series)),
            None => fabric_words(c.series),
        })
        .collect();
    for same in by_fabric.values().filter(|v| v.len() > 1) {
        let runs: BTreeSet<&str> = same
            .iter()
            .map(|&i| curves[i].run.manifest.run_id.as_str())
            .collect();
        let differing = differing_tunables(same.iter().map(|&i| curves[i]));
        for &i in same {
            let c = curves[i];
            let tell = if !differing.is_empty() {
                tunable_words(c, &differing)
            } else if runs.len() > 1 {
                stamp(&c.run.manifest.run_id)
            } else {
                // The same fabric twice in one run (a suite run twice): its position.
                format!("#{}", i + 1)
            };
            out[i] = format!("{} · {tell}", out[i]);
        }
    }
    out
}

/// "rapidio (emulated)" or "shm".
fn fabric_words(s: &Series) -> String {
    if s.emulated {
        format!("{} (emulated)", s.fabric)
    } else {
        s.fabric.clone()
    }
}

/// The tunables whose values differ between these curves' fabrics.
fn differing_tunables<'a>(curves: impl Iterator<Item = Curve<'a>>) -> Vec<String> {
    let fabrics: Vec<&FabricRun> = curves
        .filter_map(|c| c.run.fabric(&c.series.fabric))
        .collect();
    results::model::differing_tunables(&fabrics)
}

fn tunable_words(c: Curve<'_>, names: &[String]) -> String {
    let Some(f) = c.run.fabric(&c.series.fabric) else {
        return String::new();
    };
    names
        .iter()
        .filter_map(|n| Some(format!("{n}={}", f.tunables.get(n)?.text())))
        .collect::<Vec<_>>()
        .join(" ")
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
