//! The limits as figures: per measured point, its median and best over the samples (exact,
//! from the samples themselves; summary.csv's p50 follows HdrHistogram at whole nanoseconds),
//! named as a reader says them, and the table `fabbench limits` prints.

use std::collections::BTreeMap;

use bench_core::measure::Better;
use bench_core::size::format_size;
use bench_core::stats::Summary;
use results::format::table::{Align, Table};
use results::Run;

use crate::{cacheline, cma, memcpy, tcp};

/// One limit: a measured point's median and best.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub suite: String,
    pub params: BTreeMap<String, String>,
    pub size: u64,
    /// What it is, as the table's first column says it: "cache line, one for both".
    pub label: String,
    /// The unit and what it is per: "us one way", "GB/s", "us per call".
    pub unit: String,
    pub median: f64,
    /// The fastest sample: the lowest time or the highest rate.
    pub best: f64,
    pub samples: usize,
}

impl Figure {
    /// Whether this is `suite`'s point whose parameter `name` is `value` (or any, for "").
    pub fn is(&self, suite: &str, name: &str, value: &str) -> bool {
        self.suite == suite
            && (name.is_empty() || self.params.get(name).map(String::as_str) == Some(value))
    }
}

fn label(suite: &str) -> String {
    match suite {
        cacheline::SUITE_ONE => "cache line, one for both".into(),
        cacheline::SUITE_TWO => "cache lines, one each".into(),
        memcpy::SUITE => "memcpy".into(),
        cma::SUITE => "CMA read".into(),
        tcp::SUITE_SPIN => "TCP loopback, spinning".into(),
        tcp::SUITE_BLOCK => "TCP loopback, blocking".into(),
        other => other.into(),
    }
}

fn per(suite: &str) -> &'static str {
    match suite {
        cacheline::SUITE_ONE | cacheline::SUITE_TWO | tcp::SUITE_BLOCK | tcp::SUITE_SPIN => {
            " one way"
        }
        cma::SUITE => " per call",
        _ => "",
    }
}

/// Every point of `run`'s series, in order, as a figure.
pub fn figures(run: &Run) -> Vec<Figure> {
    let mut out = Vec::new();
    for s in &run.series {
        for p in &s.points {
            let metric = p.metric();
            let Some(st) = Summary::of(&p.values_of(metric)) else {
                continue;
            };
            out.push(Figure {
                suite: s.suite.clone(),
                params: p.key.params.clone(),
                size: p.size(),
                label: label(&s.suite),
                unit: format!("{}{}", metric.unit, per(&s.suite)),
                median: st.p50,
                best: match metric.better {
                    Better::Lower => st.min,
                    Better::Higher => st.max,
                },
                samples: p.samples_ns.len(),
            });
        }
    }
    out
}

/// A byte count as the table shows it: "64B", "64KiB".
pub fn size_text(bytes: u64) -> String {
    let s = format_size(bytes);
    if s.bytes().all(|b| b.is_ascii_digit()) {
        format!("{s}B")
    } else {
        s
    }
}

/// A figure to four significant digits (at most six decimals): 0.02512, 1.592, 93.56, 1235.
pub fn number(x: f64) -> String {
    let magnitude = if x == 0.0 || !x.is_finite() {
        0
    } else {
        x.abs().log10().floor() as i32
    };
    let decimals = (3 - magnitude).clamp(0, 6) as usize;
    format!("{x:.decimals$}")
}

/// The printed table: a row per figure, then each series' notes (CMA refused, say).
pub fn table(run: &Run) -> String {
    let mut t = Table::with_columns([
        ("limit", Align::Left),
        ("size", Align::Right),
        ("median", Align::Right),
        ("best", Align::Right),
        ("unit", Align::Left),
        ("samples", Align::Right),
    ]);
    for f in figures(run) {
        t.push_row([
            f.label.clone(),
            size_text(f.size),
            number(f.median),
            number(f.best),
            f.unit.clone(),
            f.samples.to_string(),
        ]);
    }
    let mut text = t.to_text();
    for note in run.series.iter().flat_map(|s| &s.notes) {
        text.push_str(&format!("# {note}\n"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_four_significant_digits() {
        assert_eq!(number(0.025123), "0.02512");
        assert_eq!(number(1.5923), "1.592");
        assert_eq!(number(93.561), "93.56");
        assert_eq!(number(1234.6), "1235");
        assert_eq!(number(0.0), "0.000");
    }
}
