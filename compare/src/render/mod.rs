//! How a [`Comparison`] is printed, one [`Renderer`] per format (hyperfine's exporter shape): an
//! aligned table for a terminal, Markdown for a CI job's summary page, JSON for tools. A renderer
//! turns a comparison into text and knows nothing of where it goes. What the printed formats
//! share lives here: the columns, how numbers and points are written, the summary sentence.

mod json;
mod markdown;
mod text;

pub use json::Json;
pub use markdown::Markdown;
pub use text::Table;

use std::collections::BTreeSet;

use bench_core::measure::PointKey;
use results::format::table;

use crate::model::{Comparison, Entry, Statistic};
use crate::rule::{p_text, Rule, Verdict};
use crate::settings::percent;
use crate::{CompareError, Format};

pub trait Renderer {
    /// The whole comparison in this format.
    fn render(&self, comparison: &Comparison) -> Result<String, CompareError>;
}

/// The renderer of `format`.
pub fn renderer(format: Format) -> Box<dyn Renderer> {
    match format {
        Format::Table => Box::new(Table),
        Format::Markdown => Box::new(Markdown),
        Format::Json => Box::new(Json),
    }
}

/// `comparison` in `format`.
pub fn render(comparison: &Comparison, format: Format) -> Result<String, CompareError> {
    renderer(format).render(comparison)
}

/// What the printed formats show for a missing cell.
const MISSING: &str = "-";

/// "22 compared: 2 regressed, 0 improved, 20 unchanged, 0 invalid (noise band ±2%, 95%
/// confidence)"; "N inconclusive" among them when there are any.
pub fn summary_line(c: &Comparison) -> String {
    let s = c.summary();
    let inconclusive = if s.inconclusive > 0 {
        format!("{} inconclusive, ", s.inconclusive)
    } else {
        String::new()
    };
    format!(
        "{} compared: {} regressed, {} improved, {} unchanged, {inconclusive}{} invalid (noise \
         band ±{}, {} confidence)",
        s.compared,
        s.regressed,
        s.improved,
        s.unchanged,
        s.invalid,
        percent(c.settings.noise),
        percent(c.settings.confidence)
    )
}

/// Said under the summary: how to read the rows each rule decided, for the rules present.
/// A line for each side that is a partial run (it ended before its last point).
pub(crate) fn partial_notes(c: &Comparison) -> Vec<String> {
    [("baseline", &c.baseline), ("candidate", &c.candidate)]
        .iter()
        .filter_map(|(side, info)| {
            let why = info.partial.as_ref()?;
            Some(format!(
                "The {side} {} is a partial run ({why}): only the points it measured are compared.",
                info.run_id
            ))
        })
        .collect()
}

pub(crate) fn notes(c: &Comparison) -> Vec<&'static str> {
    let decided_by = |rule| {
        c.entries
            .iter()
            .any(|e| e.decision.rule == rule && e.decision.ratio.is_some())
    };
    let mut out = Vec::new();
    if c.summary().inconclusive > 0 {
        out.push(
            "Rows marked inconclusive had one run a side on a measured fabric: they moved by more \
             than the samples of one run vary, but two runs of the same build on a shared \
             machine differ by more than that, so one run a side cannot separate a change from \
             run-to-run variation, and they fail nothing. Compare directories of several runs a \
             side (scripts/ci-perf.sh --runs K), or fail beyond a limit: --bound PCT, or a \
             noise floor learned with --history STORE.",
        );
    }
    if decided_by(Rule::Exact) {
        out.push(
            "Rows marked exact ran on emulated fabrics in virtual time: their headlines are \
             compared exactly, so any difference is real.",
        );
    }
    if decided_by(Rule::Runs) {
        out.push(
            "Rows decided by runs had several runs a side: each run's interquartile mean (the \
             mean of its middle half of samples) is one observation, and baseline and candidate \
             are the median of those; change and interval are the Hodges-Lehmann ratio of the \
             runs' values (the median of every candidate-run over baseline-run ratio) and its \
             interval, so a change must show across the runs and one disturbed run cannot \
             decide.",
        );
    }
    if decided_by(Rule::Statistical) {
        out.push(
            "Rows decided statistically show the median of the raw samples (of a side's runs \
             pooled), and change and interval are of their ratio (candidate over baseline); the \
             suites' headline figures (mean latency ...) are in the JSON.",
        );
    }
    out
}

/// A byte count in whole binary units where it divides: "8 B", "4 KiB", "1 MiB", "1000 B".
pub fn size_text(bytes: u64) -> String {
    for (shift, unit) in [(30u32, "GiB"), (20, "MiB"), (10, "KiB")] {
        let m = 1u64 << shift;
        if bytes >= m && bytes.is_multiple_of(m) {
            return format!("{} {unit}", bytes / m);
        }
    }
    format!("{bytes} B")
}

/// The point: its size, then its parameters as `name=value;name=value`; "(all points)" for a
/// row standing for a whole series.
pub fn point_text(key: Option<&PointKey>) -> String {
    let Some(key) = key else {
        return "(all points)".into();
    };
    let mut parts = Vec::new();
    if let Some(s) = key.size {
        parts.push(size_text(s));
    }
    if !key.params.is_empty() {
        parts.push(key.params_text());
    }
    parts.join(" ")
}

/// A value as OSU prints it, two decimals; below 1, four significant digits, so a small
/// latency or bandwidth still shows its change.
pub fn value_text(v: Option<f64>) -> String {
    match v {
        None => MISSING.into(),
        Some(v) if v == 0.0 || !v.is_finite() || v.abs() >= 1.0 => format!("{v:.2}"),
        Some(v) => {
            let decimals = (3 - v.abs().log10().floor() as i32).clamp(2, 17) as usize;
            format!("{v:.decimals$}")
        }
    }
}

/// A ratio as a change in percent: 1.159 -> "+15.9%"; a change too small for one decimal
/// still shows its sign ("+<0.1%"), since on an emulated fabric it is a real change.
pub fn change_text(ratio: Option<f64>) -> String {
    let Some(r) = ratio else {
        return MISSING.into();
    };
    let pct = (r - 1.0) * 100.0;
    if pct != 0.0 && pct.abs() < 0.05 {
        return if pct > 0.0 { "+<0.1%" } else { "-<0.1%" }.into();
    }
    format!("{pct:+.1}%")
}

/// The interval as changes, "+3.1% .. +5.0%"; "exact" for rows decided exactly.
pub fn interval_text(e: &Entry) -> String {
    let d = &e.decision;
    match (d.low, d.high) {
        (Some(l), Some(h)) => format!("{} .. {}", change_text(Some(l)), change_text(Some(h))),
        _ if d.rule == Rule::Exact && d.verdict != Verdict::Invalid => "exact".into(),
        _ => MISSING.into(),
    }
}

/// The verdict; an invalid one with its reason; one decided against a limit (one run a side)
/// with the limit ("regressed (beyond ±10%)", "inconclusive (within ±7.3%)").
pub fn verdict_text(e: &Entry) -> String {
    let limit = e
        .decision
        .limit
        .map(|l| percent((l.fraction * 1000.0).round() / 1000.0));
    match (e.verdict(), limit) {
        (Verdict::Invalid, _) => format!("invalid: {}", e.decision.reason),
        (Verdict::Inconclusive, Some(l)) => format!("inconclusive (within ±{l})"),
        (v @ (Verdict::Regressed | Verdict::Improved), Some(l)) => {
            format!("{} (beyond ±{l})", v.word())
        }
        (v, _) => v.word().into(),
    }
}

/// Whether rows need a rank-count column: only when the comparison holds several counts.
fn ranks_vary(entries: &[&Entry]) -> bool {
    entries
        .iter()
        .map(|e| e.ranks)
        .collect::<BTreeSet<_>>()
        .len()
        > 1
}

/// The statistic every row shows, when they all show the same one; None when they mix (the
/// table then has a column saying each row's).
fn one_statistic(entries: &[&Entry]) -> Option<Statistic> {
    let set: BTreeSet<&str> = entries.iter().map(|e| e.statistic.word()).collect();
    match set.len() {
        1 => Some(entries[0].statistic),
        _ => None,
    }
}

/// The entries as the printed formats show them: a row each, numbers aligned right, and a
/// rank-count column when `ranks`. The value columns hold the statistic the verdict is decided
/// on, and their headers name it ("baseline median"); when rows mix statistics, a column names
/// each row's. The delimiter row is the tight one compare's Markdown always had.
pub(crate) fn entry_table(entries: &[&Entry], ranks: bool) -> table::Table {
    use table::Align::{Left, Right};
    let mut columns: Vec<(String, table::Align)> =
        vec![("suite".into(), Left), ("fabric".into(), Left)];
    if ranks {
        columns.push(("ranks".into(), Right));
    }
    columns.extend([("point".into(), Left), ("metric".into(), Left)]);
    let one = one_statistic(entries);
    match one {
        Some(stat) => columns.extend([
            (format!("baseline {}", stat.word()), Right),
            (format!("candidate {}", stat.word()), Right),
        ]),
        None => columns.extend([
            ("statistic".into(), Left),
            ("baseline".into(), Right),
            ("candidate".into(), Right),
        ]),
    }
    let columns: Vec<(&str, table::Align)> = columns
        .iter()
        .map(|(name, align)| (name.as_str(), *align))
        .chain([
            ("change", Right),
            ("interval", Right),
            ("p", Right),
            ("verdict", Left),
        ])
        .collect();
    let mut t = table::Table::with_columns(columns).delimiter_row(table::DelimiterRow::Tight);
    t.extend_rows(entries.iter().map(|e| cells(e, ranks, one.is_none())));
    t
}

/// One entry's cells, matching [`entry_table`]'s columns (`statistic`: the column naming the
/// row's statistic is there).
fn cells(e: &Entry, ranks: bool, statistic: bool) -> Vec<String> {
    let mut c = vec![e.suite.clone(), e.fabric.clone()];
    if ranks {
        c.push(e.ranks.to_string());
    }
    c.extend([
        point_text(e.key.as_ref()),
        format!("{} ({})", e.metric, e.unit),
    ]);
    if statistic {
        c.push(e.statistic.word().into());
    }
    c.extend([
        value_text(e.baseline),
        value_text(e.candidate),
        change_text(e.decision.ratio),
        interval_text(e),
        e.decision.p.map(p_text).unwrap_or_else(|| MISSING.into()),
        verdict_text(e),
    ]);
    c
}

#[cfg(test)]
pub(crate) mod testing;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_points_values_and_changes_print_compactly() {
        assert_eq!(size_text(8), "8 B");
        assert_eq!(size_text(1024), "1 KiB");
        assert_eq!(size_text(1 << 20), "1 MiB");
        assert_eq!(size_text(1000), "1000 B");
        assert_eq!(size_text(0), "0 B");
        let k = PointKey::params([("class", "S".to_string()), ("kernel", "cg".to_string())]);
        assert_eq!(point_text(Some(&k)), "class=S;kernel=cg");
        assert_eq!(point_text(Some(&PointKey::size(8))), "8 B");
        assert_eq!(point_text(None), "(all points)");
        assert_eq!(value_text(Some(31.2916)), "31.29");
        assert_eq!(value_text(Some(0.0512)), "0.05120");
        assert_eq!(value_text(None), "-");
        assert_eq!(change_text(Some(1.159)), "+15.9%");
        assert_eq!(change_text(Some(0.97)), "-3.0%");
        assert_eq!(change_text(Some(1.0)), "+0.0%");
        assert_eq!(change_text(Some(1.0 + 1e-9)), "+<0.1%");
        assert_eq!(change_text(None), "-");
    }
}
