//! The one rule by which a fabric of a run is named wherever runs are shown side by side: a
//! report's column and a chart's legend call the same thing by the same short name. The name
//! is the fabric; when one fabric appears several times, what tells those apart follows it
//! after " · ": the tunables whose values differ, else a short time stamp of the run, else
//! (the same run twice) a position. A run that ended early says "(partial)". The full run id
//! is not part of a name: the report's table of runs shows it once, beside the name.

use std::collections::BTreeMap;

use crate::model::{differing_tunables, FabricRun};
use crate::run_dir::stamp_of;
use crate::Run;

/// Between a fabric and what tells its runs apart.
pub const SEP: &str = " · ";

/// One thing to name: a fabric of a run.
#[derive(Debug, Clone, Copy)]
pub struct Subject<'a> {
    pub run: &'a Run,
    pub fabric: &'a str,
}

impl Subject<'_> {
    fn fabric_run(&self) -> Option<&FabricRun> {
        self.run.fabric(self.fabric)
    }
}

/// Names for `subjects`, in order, each fabric's subjects told apart among themselves.
pub fn names(subjects: &[Subject<'_>]) -> Vec<String> {
    let keys: Vec<&str> = subjects.iter().map(|s| s.fabric).collect();
    names_grouped(subjects, &keys)
}

/// Names for `subjects`, told apart within each group of equal `keys` (one per subject): the
/// report groups by fabric and, when rank counts differ, by count as well, since the count
/// already tells a scaling run's columns apart.
pub fn names_grouped<K: Ord>(subjects: &[Subject<'_>], keys: &[K]) -> Vec<String> {
    let mut groups: BTreeMap<&K, Vec<usize>> = BTreeMap::new();
    for (i, k) in keys.iter().enumerate() {
        groups.entry(k).or_default().push(i);
    }
    let mut out: Vec<String> = subjects.iter().map(|s| s.fabric.to_string()).collect();
    for members in groups.values().filter(|m| m.len() > 1) {
        let same: Vec<Subject<'_>> = members.iter().map(|&i| subjects[i]).collect();
        for (&i, tell) in members.iter().zip(tell_apart(&same)) {
            out[i] = format!("{}{SEP}{tell}", out[i]);
        }
    }
    for (name, s) in out.iter_mut().zip(subjects) {
        if s.run.partial_reason().is_some() {
            name.push_str(" (partial)");
        }
    }
    out
}

/// What tells apart subjects of one fabric: the tunables whose values differ (`eager_limit=4KiB
/// rx_thread=on`); among those whose values agree, the run's short stamp; among those of one
/// run, the position (`#2`).
pub fn tell_apart(same: &[Subject<'_>]) -> Vec<String> {
    let fabrics: Vec<&FabricRun> = same.iter().filter_map(Subject::fabric_run).collect();
    let differing = differing_tunables(&fabrics);
    let mut tell: Vec<String> = same
        .iter()
        .map(|s| tunable_words(s.fabric_run(), &differing))
        .collect();
    for members in equal_groups(&tell) {
        let ids: Vec<&str> = members
            .iter()
            .map(|&i| same[i].run.manifest.run_id.as_str())
            .collect();
        for (&i, stamp) in members.iter().zip(short_stamps(&ids)) {
            tell[i] = join(&tell[i], &stamp);
        }
    }
    for members in equal_groups(&tell) {
        for (k, &i) in members.iter().enumerate() {
            tell[i] = join(&tell[i], &format!("#{}", k + 1));
        }
    }
    tell
}

/// `name=value` of each of `names` for one fabric, space-separated; `(unset)` for one it did
/// not record (a run of another fabbench version).
pub fn tunable_words(fabric: Option<&FabricRun>, names: &[String]) -> String {
    names
        .iter()
        .map(|n| {
            let v = fabric
                .and_then(|f| f.tunables.get(n))
                .map_or_else(|| "(unset)".to_string(), |t| t.text());
            format!("{n}={v}")
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Short names of the runs `ids` (in order) from their time stamps, as short as tells them
/// apart: the time of day when every run is of one day (`03:28:23`), else with the date
/// (`11-28 03:28:23`, and the year when years differ). Runs started in the same second get
/// `#1`, `#2` in order; an id without a time stamp is named whole.
pub fn short_stamps(ids: &[&str]) -> Vec<String> {
    let parsed: Vec<Option<[&str; 6]>> = ids.iter().map(|id| parse_stamp(id)).collect();
    let stamps: Vec<&[&str; 6]> = parsed.iter().flatten().collect();
    let differ = |k: usize| stamps.iter().any(|s| s[k] != stamps[0][k]);
    let (years, dates) = (differ(0), differ(0) || differ(1) || differ(2));
    let mut out: Vec<String> = ids
        .iter()
        .zip(&parsed)
        .map(|(id, p)| match p {
            None => id.to_string(),
            Some([y, mo, d, h, mi, s]) => {
                let time = format!("{h}:{mi}:{s}");
                match (years, dates) {
                    (true, _) => format!("{y}-{mo}-{d} {time}"),
                    (false, true) => format!("{mo}-{d} {time}"),
                    (false, false) => time,
                }
            }
        })
        .collect();
    for members in equal_groups(&out) {
        for (k, &i) in members.iter().enumerate() {
            out[i] = format!("{} #{}", out[i], k + 1);
        }
    }
    out
}

/// `20261128T032823Z...` as year, month, day, hour, minute, second.
fn parse_stamp(id: &str) -> Option<[&str; 6]> {
    let s = stamp_of(id);
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    (s.len() == 16 && b[8] == b'T' && b[15] == b'Z' && digits(0..8) && digits(9..15)).then(|| {
        [
            &s[0..4],
            &s[4..6],
            &s[6..8],
            &s[9..11],
            &s[11..13],
            &s[13..15],
        ]
    })
}

/// Indices sharing each value that is not unique, in order.
fn equal_groups(values: &[String]) -> Vec<Vec<usize>> {
    let mut by: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, v) in values.iter().enumerate() {
        by.entry(v).or_default().push(i);
    }
    by.into_values().filter(|g| g.len() > 1).collect()
}

fn join(a: &str, b: &str) -> String {
    match a.is_empty() {
        true => b.to_string(),
        false => format!("{a} {b}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{FabricKind, Partial, TunableRecord};
    use crate::testing::{fabric, RunBuilder};

    /// A run `id` of `fabrics`, each with `settings`.
    fn run(id: &str, fabrics: &[&str], settings: &[(&str, &str)]) -> Run {
        fabrics
            .iter()
            .fold(RunBuilder::new(id), |b, f| {
                let mut fr = fabric(f, FabricKind::Emulated, 2);
                for (k, v) in settings {
                    fr.tunables.insert(
                        k.to_string(),
                        TunableRecord {
                            value: serde_json::Value::String(v.to_string()),
                            source: "cli".into(),
                        },
                    );
                }
                b.fabric(fr)
            })
            .build()
    }

    fn named(runs: &[(&Run, &str)]) -> Vec<String> {
        let s: Vec<Subject<'_>> = runs
            .iter()
            .map(|(run, fabric)| Subject { run, fabric })
            .collect();
        names(&s)
    }

    #[test]
    fn a_fabric_once_is_its_name() {
        let a = run("20261128T032823Z-osu_latency-rapidio", &["rapidio"], &[]);
        let b = run("20261128T040000Z-osu_latency-shm", &["shm"], &[]);
        assert_eq!(named(&[(&a, "rapidio"), (&b, "shm")]), ["rapidio", "shm"]);
    }

    #[test]
    fn one_fabric_in_several_runs_is_told_apart_by_the_tunables_that_differ() {
        let a = run(
            "20261128T032823Z-x-shm",
            &["shm"],
            &[("eager_limit", "4KiB")],
        );
        let b = run(
            "20261128T040000Z-x-shm",
            &["shm"],
            &[("eager_limit", "1KiB")],
        );
        let c = run("20261128T050000Z-x-rapidio", &["rapidio"], &[]);
        assert_eq!(
            named(&[(&a, "shm"), (&b, "shm"), (&c, "rapidio")]),
            [
                "shm · eager_limit=4KiB",
                "shm · eager_limit=1KiB",
                "rapidio"
            ]
        );
    }

    #[test]
    fn same_settings_fall_back_to_the_shortest_stamp_that_tells_runs_apart() {
        let a = run("20261128T032823Z-x-shm", &["shm"], &[]);
        let b = run("20261128T040000Z-x-shm", &["shm"], &[]);
        assert_eq!(
            named(&[(&a, "shm"), (&b, "shm")]),
            ["shm · 03:28:23", "shm · 04:00:00"]
        );
        let c = run("20261129T040000Z-x-shm", &["shm"], &[]);
        assert_eq!(
            named(&[(&a, "shm"), (&c, "shm")]),
            ["shm · 11-28 03:28:23", "shm · 11-29 04:00:00"]
        );
        let d = run("20271129T040000Z-x-shm", &["shm"], &[]);
        assert_eq!(
            short_stamps(&[&a.manifest.run_id, &d.manifest.run_id]),
            ["2026-11-28 03:28:23", "2027-11-29 04:00:00"]
        );
        // Started in the same second (the second's id ends -2): numbered in order.
        let e = run("20261128T032823Z-x-shm-2", &["shm"], &[]);
        assert_eq!(
            named(&[(&a, "shm"), (&e, "shm")]),
            ["shm · 03:28:23 #1", "shm · 03:28:23 #2"]
        );
        // Ids without a stamp are named whole.
        assert_eq!(short_stamps(&["A", "B"]), ["A", "B"]);
    }

    #[test]
    fn equal_settings_among_differing_ones_add_the_stamp_and_one_run_its_position() {
        let a = run("20261128T010000Z-x", &["shm"], &[("eager_limit", "4KiB")]);
        let b = run("20261128T020000Z-x", &["shm"], &[("eager_limit", "4KiB")]);
        let c = run("20261128T030000Z-x", &["shm"], &[("eager_limit", "1KiB")]);
        assert_eq!(
            named(&[(&a, "shm"), (&b, "shm"), (&c, "shm")]),
            [
                "shm · eager_limit=4KiB 01:00:00",
                "shm · eager_limit=4KiB 02:00:00",
                "shm · eager_limit=1KiB"
            ]
        );
        let twice = run("20261128T010000Z-x", &["shm", "shm"], &[]);
        assert_eq!(
            named(&[(&twice, "shm"), (&twice, "shm")]),
            ["shm · 01:00:00 #1", "shm · 01:00:00 #2"]
        );
    }

    #[test]
    fn a_partial_run_says_so_and_groups_can_be_finer_than_the_fabric() {
        let a = run("20261128T010000Z-x", &["shm"], &[]);
        let mut b = run("20261128T020000Z-x", &["shm"], &[]);
        b.manifest.partial = Some(Partial {
            reason: "interrupted".into(),
            finished: Vec::new(),
        });
        assert_eq!(
            named(&[(&a, "shm"), (&b, "shm")]),
            ["shm · 01:00:00", "shm · 02:00:00 (partial)"]
        );
        // Grouped by (fabric, ranks): runs on different counts need nothing more.
        let s = [
            Subject {
                run: &a,
                fabric: "shm",
            },
            Subject {
                run: &b,
                fabric: "shm",
            },
        ];
        assert_eq!(names_grouped(&s, &[1, 2]), ["shm", "shm (partial)"]);
    }
}
