//! Series over time: the entries chosen for a view (filters on suite, fabric and metric; the
//! last N entries), regrouped as one series per host, suite, fabric, rank count, point and
//! metric, each value in entry order. Exact series (emulated fabrics in virtual time) leave
//! the host out of their key: they are the same on any machine, so runs from every CI runner
//! make one series.

use bench_core::measure::{Better, PointKey};

use crate::entry::Entry;
use crate::error::HistoryError;

/// What a series is of. The field order is the order series are shown in.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SeriesKey {
    pub suite: String,
    pub fabric: String,
    pub metric: String,
    pub ranks: usize,
    /// None for exact series, which are host-independent.
    pub host: Option<String>,
    pub size: Option<u64>,
    pub params: String,
}

impl SeriesKey {
    pub fn point(&self) -> PointKey {
        PointKey {
            size: self.size,
            params: PointKey::parse_params(&self.params).unwrap_or_default(),
        }
    }
}

/// One value of a series: the entry (an index into the view's entries) and its headline.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Value {
    pub entry: usize,
    pub value: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub key: SeriesKey,
    pub unit: String,
    pub better: Better,
    /// Every value was measured exactly (virtual time, nothing timed on the host).
    pub exact: bool,
    /// In entry order.
    pub values: Vec<Value>,
}

impl Series {
    pub fn numbers(&self) -> Vec<f64> {
        self.values.iter().map(|v| v.value).collect()
    }
}

/// Which entries and series a view shows. Empty lists select everything.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub metrics: Vec<String>,
    pub suites: Vec<String>,
    pub fabrics: Vec<String>,
    /// Only the last N entries (oldest first as always).
    pub last: Option<usize>,
}

/// The entries of the view (the last N of `entries`, which are oldest first) and its series,
/// in [`SeriesKey`] order. A filter naming something no entry has is refused with what there
/// is.
pub fn select(
    entries: Vec<Entry>,
    filter: &Filter,
) -> Result<(Vec<Entry>, Vec<Series>), HistoryError> {
    let mut entries = entries;
    if let Some(n) = filter.last {
        let from = entries.len().saturating_sub(n);
        entries.drain(..from);
    }
    let records = || entries.iter().flat_map(|e| e.records.iter());
    check(
        "--suite",
        "suites",
        &filter.suites,
        records().map(|r| &r.suite),
    )?;
    check(
        "--fabric",
        "fabrics",
        &filter.fabrics,
        records().map(|r| &r.fabric),
    )?;
    check(
        "--metric",
        "metrics",
        &filter.metrics,
        records().map(|r| &r.metric),
    )?;
    let wanted = |list: &[String], v: &String| list.is_empty() || list.contains(v);
    let mut series: std::collections::BTreeMap<SeriesKey, Series> = Default::default();
    for (i, e) in entries.iter().enumerate() {
        for r in &e.records {
            if !wanted(&filter.suites, &r.suite)
                || !wanted(&filter.fabrics, &r.fabric)
                || !wanted(&filter.metrics, &r.metric)
            {
                continue;
            }
            let key = SeriesKey {
                suite: r.suite.clone(),
                fabric: r.fabric.clone(),
                metric: r.metric.clone(),
                ranks: r.ranks,
                host: (!r.exact).then(|| e.host.hostname.clone()),
                size: r.size,
                params: r.params.clone(),
            };
            let s = series.entry(key.clone()).or_insert_with(|| Series {
                key,
                unit: r.unit.clone(),
                better: r.better,
                exact: true,
                values: Vec::new(),
            });
            s.exact &= r.exact;
            s.values.push(Value {
                entry: i,
                value: r.value,
            });
        }
    }
    Ok((entries, series.into_values().collect()))
}

/// Refuses a filter value that nothing in the view has, naming what it has.
fn check<'a>(
    option: &str,
    what: &str,
    asked: &[String],
    present: impl Iterator<Item = &'a String>,
) -> Result<(), HistoryError> {
    let present: std::collections::BTreeSet<&String> = present.collect();
    for a in asked {
        if !present.contains(a) {
            let have: Vec<&str> = present.iter().map(|s| s.as_str()).collect();
            return Err(HistoryError::NoMatch(format!(
                "no entry has {option} {a}; the {what} in view are: {}",
                if have.is_empty() {
                    "none".to_string()
                } else {
                    have.join(", ")
                }
            )));
        }
    }
    Ok(())
}
