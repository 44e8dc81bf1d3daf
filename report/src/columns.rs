//! How `--by` turns the runs' fabrics into the report's columns and their labels. Every fabric
//! of every run is one column (a column never merges two); `--by` only decides what its label
//! says: the fabric, the run, or the tunable settings that tell the columns apart (by the rule
//! of [`results::naming`], which the charts' legends follow too), and, when
//! the columns ran on different numbers of ranks (a scaling run's `-n 1,2,4`), the count as
//! ` n=4`. Labels are made unique here, so every later step can key on them.

use std::collections::{BTreeMap, BTreeSet};

use results::model::FabricRun;

use crate::input::Inputs;
use crate::ReportError;

/// What a column's label names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum By {
    /// The fabric: `shm`, or when the fabric is in several columns `shm · eager_limit=4KiB`
    /// (the tunables that differ) or `shm · 03:28:23` (the run's short stamp).
    Fabric,
    /// The run: its short stamp (`03:28:23`), or `shm · 03:28:23` when the run has several
    /// fabrics.
    Run,
    /// The tunables whose values differ between the columns: `eager_limit=16KiB`.
    Tunable,
}

impl By {
    pub fn name(self) -> &'static str {
        match self {
            By::Fabric => "fabric",
            By::Run => "run",
            By::Tunable => "tunable",
        }
    }
}

/// One column of the report: one fabric of one run, and what the legend says of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub label: String,
    /// Index of its run among the inputs.
    pub input: usize,
    pub run_id: String,
    /// Its run ended before its last point.
    pub partial: bool,
    pub fabric: String,
    /// How many ranks the fabric ran on.
    pub ranks: usize,
    /// "native", "emulated, virtual time" or "mpi".
    pub kind: String,
    pub host: String,
    pub start_time: String,
    pub settings_line: String,
    /// The settings line's `name=value` words (the tunables that apply to its fabric): what
    /// the HTML page splits into settings common to all columns and those that differ.
    pub settings: Vec<String>,
}

impl Column {
    /// The run as the legend names it: its id, and "(partial)" when it ended before its last
    /// point.
    pub fn run_named(&self) -> String {
        match self.partial {
            true => format!("{} (partial)", self.run_id),
            false => self.run_id.clone(),
        }
    }
}

/// The columns of `inputs`, run by run and fabric by fabric in `--fabric` order, labelled as
/// `by` says.
pub fn columns(inputs: &Inputs, by: By) -> Result<Vec<Column>, ReportError> {
    let mut cols: Vec<Column> = inputs
        .iter()
        .enumerate()
        .flat_map(|(i, input)| {
            input.fabrics().iter().map(move |f| Column {
                label: String::new(),
                input: i,
                run_id: input.run_id().to_string(),
                partial: input.partial(),
                fabric: f.fabric.clone(),
                ranks: f.ranks,
                kind: f.kind.words().to_string(),
                host: input.host().to_string(),
                start_time: input.start_time().to_string(),
                settings_line: f.settings_line.clone(),
                settings: f
                    .settings_line
                    .split_whitespace()
                    .map(str::to_string)
                    .collect(),
            })
        })
        .collect();
    let counts_differ = cols.iter().any(|c| c.ranks != cols[0].ranks);
    let labels = match by {
        By::Fabric => fabric_labels(inputs, &cols, counts_differ),
        By::Run => run_labels(inputs, &cols),
        By::Tunable => tunable_labels(inputs, &cols, counts_differ)?,
    };
    for (c, l) in cols.iter_mut().zip(labels) {
        // The count only where it differs, so a report of runs on one count reads as before.
        c.label = match (counts_differ, l.is_empty()) {
            (false, _) => l,
            (true, true) => format!("n={}", c.ranks),
            (true, false) => format!("{l} n={}", c.ranks),
        };
    }
    make_unique(&mut cols);
    Ok(cols)
}

/// What a label calls each input's run: its short stamp ([`results::naming::short_stamps`]:
/// `03:28:23`, with the date only when the runs span days), "(partial)" when it ended before
/// its last point. The whole id is in the legend's table; in a column header it would hide
/// the numbers.
fn run_names(inputs: &Inputs) -> Vec<String> {
    let ids: Vec<&str> = inputs.iter().map(|i| i.run_id()).collect();
    results::naming::short_stamps(&ids)
        .into_iter()
        .zip(inputs.iter())
        .map(|(name, input)| match input.partial() {
            true => format!("{name} (partial)"),
            false => name,
        })
        .collect()
}

/// The fabric, and when the fabric is in several columns what tells them apart
/// ([`results::naming`], the rule the charts' legends follow). When the rank counts differ the
/// count (added by the caller) already tells a scaling run's columns apart, so only columns of
/// one fabric at one count are told apart further.
fn fabric_labels(inputs: &Inputs, cols: &[Column], counts_differ: bool) -> Vec<String> {
    let subjects: Vec<results::naming::Subject<'_>> = cols
        .iter()
        .map(|c| results::naming::Subject {
            run: inputs.get(c.input).run,
            fabric: &c.fabric,
        })
        .collect();
    let keys: Vec<(&str, usize)> = cols
        .iter()
        .map(|c| (c.fabric.as_str(), if counts_differ { c.ranks } else { 0 }))
        .collect();
    results::naming::names_grouped(&subjects, &keys)
}

fn run_labels(inputs: &Inputs, cols: &[Column]) -> Vec<String> {
    let names = run_names(inputs);
    cols.iter()
        .map(|c| {
            if inputs.get(c.input).fabrics().len() > 1 {
                format!("{}{}{}", c.fabric, results::naming::SEP, names[c.input])
            } else {
                names[c.input].clone()
            }
        })
        .collect()
}

/// The tunables that differ between columns of one fabric. Runs that differ only in their rank
/// count are told apart by it (the caller adds ` n=4`), so they are no error.
fn tunable_labels(
    inputs: &Inputs,
    cols: &[Column],
    counts_differ: bool,
) -> Result<Vec<String>, ReportError> {
    let runs: Vec<Option<&FabricRun>> = cols
        .iter()
        .map(|c| inputs.get(c.input).run.fabric(&c.fabric))
        .collect();
    // Differing is judged among the columns of one fabric: two fabrics' own defaults
    // (hyperlink's frag_size against rapidio's) are not a setting the user varied, and would
    // bury the one that was.
    let fabrics: BTreeSet<&str> = cols.iter().map(|c| c.fabric.as_str()).collect();
    let differing: BTreeSet<String> = fabrics
        .iter()
        .flat_map(|f| {
            let same: Vec<&FabricRun> = cols
                .iter()
                .zip(&runs)
                .filter(|(c, _)| c.fabric == *f)
                .filter_map(|(_, r)| *r)
                .collect();
            results::model::differing_tunables(&same)
        })
        .collect();
    if differing.is_empty() && !counts_differ {
        return Err(ReportError::NothingDiffers {
            columns: cols.len(),
        });
    }
    let differing: Vec<String> = differing.into_iter().collect();
    Ok(runs
        .iter()
        .map(|r| results::naming::tunable_words(*r, &differing))
        .collect())
}

/// Columns with the same label get their fabric appended, or if that does not tell them apart
/// their run id, or both; merging them would average different measurements into one cell.
fn make_unique(cols: &mut [Column]) {
    let suffixes: [fn(&Column) -> String; 3] = [
        |c| c.fabric.clone(),
        |c| c.run_id.clone(),
        |c| format!("{}@{}", c.fabric, c.run_id),
    ];
    let groups = duplicates(cols);
    for group in groups {
        let base: Vec<String> = group.iter().map(|&i| cols[i].label.clone()).collect();
        for suffix in suffixes {
            let tried: BTreeSet<String> = group.iter().map(|&i| suffix(&cols[i])).collect();
            if tried.len() == group.len() {
                for (k, &i) in group.iter().enumerate() {
                    cols[i].label = format!("{} ({})", base[k], suffix(&cols[i]));
                }
                break;
            }
        }
    }
    // Only a run that lists a fabric twice gets here; a number settles it.
    for group in duplicates(cols) {
        for (n, &i) in group.iter().enumerate().skip(1) {
            cols[i].label = format!("{} #{}", cols[i].label, n + 1);
        }
    }
}

/// Indices of the columns sharing each label that is not unique, in column order.
fn duplicates(cols: &[Column]) -> Vec<Vec<usize>> {
    let mut by_label: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, c) in cols.iter().enumerate() {
        by_label.entry(&c.label).or_default().push(i);
    }
    let mut groups: Vec<Vec<usize>> = by_label.into_values().filter(|g| g.len() > 1).collect();
    groups.sort();
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{at, run, set};

    fn labels(inputs: &Inputs, by: By) -> Vec<String> {
        columns(inputs, by)
            .unwrap()
            .into_iter()
            .map(|c| c.label)
            .collect()
    }

    #[test]
    fn runs_are_named_by_their_short_stamp_and_numbered_when_two_share_it() {
        let inputs = Inputs::new(vec![
            (
                "a".into(),
                run(
                    "20261123T150735Z-osu_latency-shm",
                    &["shm"],
                    &[at("osu_latency", "shm", 8, 1.0)],
                ),
            ),
            (
                "b".into(),
                run(
                    "20261123T150801Z-osu_latency-shm",
                    &["shm"],
                    &[at("osu_latency", "shm", 8, 1.0)],
                ),
            ),
            (
                "c".into(),
                run(
                    "20261123T150801Z-osu_latency-shm-2",
                    &["shm"],
                    &[at("osu_latency", "shm", 8, 1.0)],
                ),
            ),
        ])
        .unwrap();
        let labels: Vec<String> = columns(&inputs, By::Run)
            .unwrap()
            .into_iter()
            .map(|c| c.label)
            .collect();
        assert_eq!(labels, ["15:07:35", "15:08:01 #1", "15:08:01 #2"]);
        let labels: Vec<String> = columns(&inputs, By::Fabric)
            .unwrap()
            .into_iter()
            .map(|c| c.label)
            .collect();
        // No tunable differs: the short stamp, as the charts' legends say it.
        assert_eq!(labels[0], "shm · 15:07:35");
    }

    #[test]
    fn fabric_labels_name_the_run_only_when_the_fabric_is_in_several() {
        let inputs = Inputs::new(vec![
            ("a".into(), run("A", &["shm", "tcp"], &[])),
            ("b".into(), run("B", &["shm"], &[])),
        ])
        .unwrap();
        assert_eq!(labels(&inputs, By::Fabric), ["shm · A", "tcp", "shm · B"]);
    }

    #[test]
    fn a_partial_run_is_named_so() {
        let mut b = run("B", &["shm"], &[]);
        b.manifest.partial = Some(results::model::Partial {
            reason: "interrupted".into(),
            finished: Vec::new(),
        });
        let inputs =
            Inputs::new(vec![("a".into(), run("A", &["shm"], &[])), ("b".into(), b)]).unwrap();
        assert_eq!(labels(&inputs, By::Run), ["A", "B (partial)"]);
        let named: Vec<String> = columns(&inputs, By::Fabric)
            .unwrap()
            .iter()
            .map(Column::run_named)
            .collect();
        assert_eq!(named, ["A", "B (partial)"]);
    }

    #[test]
    fn run_labels_name_the_fabric_only_when_the_run_has_several() {
        let inputs = Inputs::new(vec![
            ("a".into(), run("A", &["shm", "tcp"], &[])),
            ("b".into(), run("B", &["shm"], &[])),
        ])
        .unwrap();
        assert_eq!(labels(&inputs, By::Run), ["shm · A", "tcp · A", "B"]);
    }

    #[test]
    fn tunable_labels_are_the_settings_that_differ() {
        let mut a = run("A", &["rapidio"], &[]);
        set(&mut a, "rapidio", "eager_limit", "4KiB");
        set(&mut a, "rapidio", "rx_thread", "off");
        let mut b = run("B", &["rapidio"], &[]);
        set(&mut b, "rapidio", "eager_limit", "16KiB");
        set(&mut b, "rapidio", "rx_thread", "off");
        let mut c = run("C", &["rapidio"], &[]);
        set(&mut c, "rapidio", "eager_limit", "16KiB");
        set(&mut c, "rapidio", "rx_thread", "on");
        let inputs = Inputs::new(vec![
            ("a".into(), a.clone()),
            ("b".into(), b.clone()),
            ("c".into(), c),
        ])
        .unwrap();
        assert_eq!(
            labels(&inputs, By::Tunable),
            [
                "eager_limit=4KiB rx_thread=off",
                "eager_limit=16KiB rx_thread=off",
                "eager_limit=16KiB rx_thread=on"
            ]
        );
        let two = Inputs::new(vec![("a".into(), a), ("b".into(), b)]).unwrap();
        assert_eq!(
            labels(&two, By::Tunable),
            ["eager_limit=4KiB", "eager_limit=16KiB"]
        );
    }

    #[test]
    fn tunables_differ_within_a_fabric_not_between_fabrics_defaults() {
        let mut a = run("A", &["rapidio", "hyperlink"], &[]);
        set(&mut a, "rapidio", "eager_limit", "4KiB");
        set(&mut a, "rapidio", "frag_size", "32KiB");
        set(&mut a, "hyperlink", "eager_limit", "4KiB");
        set(&mut a, "hyperlink", "frag_size", "65472");
        let mut b = run("B", &["rapidio"], &[]);
        set(&mut b, "rapidio", "eager_limit", "16KiB");
        set(&mut b, "rapidio", "frag_size", "32KiB");
        let inputs = Inputs::new(vec![("a".into(), a), ("b".into(), b)]).unwrap();
        assert_eq!(
            labels(&inputs, By::Tunable),
            [
                "eager_limit=4KiB (rapidio)",
                "eager_limit=4KiB (hyperlink)",
                "eager_limit=16KiB"
            ]
        );
    }

    #[test]
    fn no_differing_tunable_is_an_error_that_suggests_by_run() {
        let inputs = Inputs::new(vec![
            ("a".into(), run("A", &["rapidio"], &[])),
            ("b".into(), run("B", &["rapidio"], &[])),
        ])
        .unwrap();
        let e = columns(&inputs, By::Tunable).unwrap_err().to_string();
        assert!(e.contains("--by run"), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }

    #[test]
    fn equal_labels_are_told_apart_by_fabric_then_run() {
        let mut a = run("A", &["rapidio"], &[]);
        set(&mut a, "rapidio", "eager_limit", "16KiB");
        let mut b = run("B", &["bxi"], &[]);
        set(&mut b, "bxi", "eager_limit", "16KiB");
        let mut c = run("C", &["rapidio"], &[]);
        set(&mut c, "rapidio", "eager_limit", "4KiB");
        let inputs = Inputs::new(vec![
            ("a".into(), a.clone()),
            ("b".into(), b),
            ("c".into(), c),
        ])
        .unwrap();
        assert_eq!(
            labels(&inputs, By::Tunable),
            [
                "eager_limit=16KiB (rapidio)",
                "eager_limit=16KiB (bxi)",
                "eager_limit=4KiB"
            ]
        );
        // Same fabric, same setting: the run id tells them apart.
        let mut d = run("D", &["rapidio"], &[]);
        set(&mut d, "rapidio", "eager_limit", "16KiB");
        let mut e = run("E", &["rapidio"], &[]);
        set(&mut e, "rapidio", "eager_limit", "4KiB");
        let inputs = Inputs::new(vec![("a".into(), a), ("d".into(), d), ("e".into(), e)]).unwrap();
        assert_eq!(
            labels(&inputs, By::Tunable),
            [
                "eager_limit=16KiB (A)",
                "eager_limit=16KiB (D)",
                "eager_limit=4KiB"
            ]
        );
    }

    /// `run` with every fabric on `n` ranks.
    fn on(mut r: results::Run, n: usize) -> results::Run {
        for f in &mut r.manifest.fabrics {
            f.ranks = n;
        }
        r
    }

    #[test]
    fn labels_name_the_rank_count_only_when_the_counts_differ() {
        // A scaling run's three counts: the count tells the columns apart, whatever --by says.
        let scaling = Inputs::new(vec![
            ("a".into(), on(run("A", &["shm"], &[]), 1)),
            ("b".into(), on(run("B", &["shm"], &[]), 2)),
            ("c".into(), on(run("C", &["shm"], &[]), 4)),
        ])
        .unwrap();
        assert_eq!(
            labels(&scaling, By::Fabric),
            ["shm n=1", "shm n=2", "shm n=4"]
        );
        assert_eq!(labels(&scaling, By::Run), ["A n=1", "B n=2", "C n=4"]);
        assert_eq!(labels(&scaling, By::Tunable), ["n=1", "n=2", "n=4"]);
        // Two runs at one count still name their runs; the third's count is enough.
        let inputs = Inputs::new(vec![
            ("a".into(), on(run("A", &["shm", "tcp"], &[]), 2)),
            ("b".into(), on(run("B", &["shm"], &[]), 2)),
            ("c".into(), on(run("C", &["shm"], &[]), 4)),
        ])
        .unwrap();
        assert_eq!(
            labels(&inputs, By::Fabric),
            ["shm · A n=2", "tcp n=2", "shm · B n=2", "shm n=4"]
        );
        // Every run on the same count: the labels the other tests pin, without a count.
        let same = Inputs::new(vec![
            ("a".into(), on(run("A", &["shm"], &[]), 4)),
            ("b".into(), on(run("B", &["shm"], &[]), 4)),
        ])
        .unwrap();
        assert_eq!(labels(&same, By::Fabric), ["shm · A", "shm · B"]);
        assert_eq!(labels(&same, By::Run), ["A", "B"]);
    }

    #[test]
    fn a_fabric_listed_twice_still_gets_two_columns() {
        let inputs = Inputs::new(vec![("a".into(), run("A", &["shm", "shm"], &[]))]).unwrap();
        assert_eq!(labels(&inputs, By::Fabric), ["shm · A #1", "shm · A #2"]);
    }
}
