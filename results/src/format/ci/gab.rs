//! github-action-benchmark's custom JSON: its `customSmallerIsBetter` and
//! `customBiggerIsBetter` tools each read a JSON array of `{"name", "unit", "value"}` objects
//! with optional `"range"` and `"extra"` strings (the action's README; its parser coerces name,
//! unit, range and extra to strings and value to a number). The direction is the tool's, not
//! the entry's, so latency and bandwidth, which go opposite ways, go to two files, each given
//! to its own action step.
//!
//! Per row of summary.csv: `name` is [`record_name`] (the action matches points over time by
//! it), `value` the headline summary.csv reports, `range` the samples' standard deviation as
//! `±X` (the form the action parses when it converts units), and `extra` (the chart's tooltip)
//! the sample count, minimum, median, p99 and maximum, one per line.

use bench_core::measure::Better;
use serde::Serialize;

use super::{record_name, rows, significant, Export, ExportFile, Row};
use crate::model::Run;
use crate::ResultsError;

/// The file of the metrics where smaller is better (latency, time).
pub const SMALLER_FILE: &str = "gab-smaller-is-better.json";
/// The file of the metrics where bigger is better (bandwidth, rates).
pub const BIGGER_FILE: &str = "gab-bigger-is-better.json";

/// One entry of the array, as the action documents it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Entry {
    pub name: String,
    pub unit: String,
    pub value: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub range: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra: Option<String>,
}

/// The run's rows split by direction, and the names of rows whose value is not finite.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Entries {
    pub smaller: Vec<Entry>,
    pub bigger: Vec<Entry>,
    pub skipped: Vec<String>,
}

/// Every row of the run as an entry of the file its direction belongs to.
pub fn entries(run: &Run) -> Entries {
    let mut out = Entries::default();
    for row in rows(run) {
        let Some(entry) = entry(&row) else {
            out.skipped.push(record_name(&row.record));
            continue;
        };
        match row.better {
            Better::Lower => out.smaller.push(entry),
            Better::Higher => out.bigger.push(entry),
        }
    }
    out
}

/// Both files, always both: one whose array is empty says the run has no metric that goes
/// that way (the action refuses an empty file, so such a file needs no step).
pub fn export(run: &Run) -> Result<Export, ResultsError> {
    let e = entries(run);
    let file = |name: &str, entries: &[Entry]| -> Result<ExportFile, ResultsError> {
        let mut contents = serde_json::to_vec_pretty(entries)?;
        contents.push(b'\n');
        Ok(ExportFile {
            name: name.into(),
            contents,
        })
    };
    Ok(Export {
        files: vec![
            file(SMALLER_FILE, &e.smaller)?,
            file(BIGGER_FILE, &e.bigger)?,
        ],
        skipped: e.skipped,
    })
}

/// The entry of one row; None when its value is not finite (JSON would write null, which the
/// action reads as 0).
fn entry(row: &Row) -> Option<Entry> {
    let r = &row.record;
    if !r.value.is_finite() {
        return None;
    }
    let n = |x: f64| significant(x, 6);
    let range = r.stddev.is_finite().then(|| format!("±{}", n(r.stddev)));
    let spread = [r.min, r.p50, r.p99, r.max].iter().all(|x| x.is_finite());
    let mut extra = vec![format!("samples: {}", r.count)];
    if spread {
        extra.extend([
            format!("min: {} {}", n(r.min), r.unit),
            format!("p50: {} {}", n(r.p50), r.unit),
            format!("p99: {} {}", n(r.p99), r.unit),
            format!("max: {} {}", n(r.max), r.unit),
        ]);
    }
    if !r.validation.is_empty() {
        extra.push(format!("validation: {}", r.validation));
    }
    Some(Entry {
        name: record_name(r),
        unit: r.unit.clone(),
        value: r.value,
        range,
        extra: Some(extra.join("\n")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::ci::tests::run;
    use bench_core::measure::Derivation;

    #[test]
    fn latency_and_time_go_to_the_smaller_file_rates_to_the_bigger() {
        let e = entries(&run());
        let names = |v: &[Entry]| v.iter().map(|e| e.name.clone()).collect::<Vec<_>>();
        assert_eq!(
            names(&e.smaller),
            [
                "osu_latency/rapidio/2 ranks/size 1/latency",
                "osu_latency/rapidio/2 ranks/size 1024/latency",
                "npb/rapidio/4 ranks/class=S kernel=cg/time",
                "npb/rapidio/4 ranks/class=S kernel=cg/compute",
                "npb/rapidio/4 ranks/class=S kernel=cg/comm",
            ]
        );
        assert_eq!(
            names(&e.bigger),
            [
                "osu_bw/rapidio/2 ranks/size 1024/bandwidth",
                "npb/rapidio/4 ranks/class=S kernel=cg/mops",
            ]
        );
        assert!(e.skipped.is_empty());
    }

    #[test]
    fn an_entry_carries_the_headline_its_spread_and_its_percentiles() {
        let e = entries(&run());
        let lat = &e.smaller[0];
        // samples 1.0, 1.2, 1.1, 5.0 us: mean 2.075, sample stddev 1.95; p99 and max are
        // summary.csv's, at histogram resolution (5000 ns is in the bucket 5000..=5003)
        assert_eq!(lat.unit, "us");
        assert_eq!(lat.value, 2.075);
        assert_eq!(lat.range.as_deref(), Some("±1.95171"));
        assert_eq!(
            lat.extra.as_deref(),
            Some("samples: 4\nmin: 1 us\np50: 1.1 us\np99: 5.003 us\nmax: 5.003 us")
        );
        let json = serde_json::to_value(lat).unwrap();
        let keys: Vec<&String> = json.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["extra", "name", "range", "unit", "value"]);
    }

    #[test]
    fn a_value_json_cannot_hold_is_left_out_and_named() {
        let mut run = run();
        // a zero-length window: infinite bandwidth in that sample, no finite spread
        run.series[1].points[0].samples_ns = vec![0, 100_000];
        // a metric whose values are all infinite
        if let Derivation::Time { divisor, .. } = &mut run.series[0].points[1].metrics[0].derive {
            *divisor = 0.0;
        }
        let e = entries(&run);
        assert_eq!(e.skipped, ["osu_latency/rapidio/2 ranks/size 1024/latency"]);
        let bw = &e.bigger[0];
        assert!(bw.value.is_finite());
        assert_eq!(
            (bw.range.as_deref(), bw.extra.as_deref()),
            (None, Some("samples: 2"))
        );
        let files = export(&run).unwrap();
        for f in &files.files {
            let text = String::from_utf8_lossy(&f.contents);
            assert!(!text.contains("null") && !text.contains("inf"), "{text}");
        }
    }

    #[test]
    fn both_files_are_written_even_when_one_is_empty() {
        let mut run = run();
        run.series.truncate(1);
        let x = export(&run).unwrap();
        let names: Vec<&str> = x.files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, [SMALLER_FILE, BIGGER_FILE]);
        assert_eq!(x.files[1].contents, b"[]\n");
        let smaller: serde_json::Value = serde_json::from_slice(&x.files[0].contents).unwrap();
        assert_eq!(smaller.as_array().unwrap().len(), 2);
    }
}
