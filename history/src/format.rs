//! A view as text: an aligned table for a terminal, Markdown for a CI job's summary page, CSV
//! for spreadsheets, and JSON with every value and change point for other tools. Each has one
//! row per series (the one row per entry that Apache Otava reads is [`crate::otava`]'s): where it is, how many entries, the latest value, its move since the entry
//! before, and the change points ("at REV DATE: 1.23 -> 1.41 us (+14.6%, regression,
//! p=1.0e-5)").

use results::format::table::{DelimiterRow, Table};
use serde_json::json;

use crate::changes::Change;
use crate::entry::{short_revision, Entry};
use crate::trend::{Trend, View};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    Markdown,
    Csv,
    Json,
    /// One row per entry, one column per series: Apache Otava's CSV.
    Otava,
}

/// The view in `format`, ending with a newline.
pub fn render(view: &View, format: Format) -> String {
    match format {
        Format::Table => table(view),
        Format::Markdown => markdown(view),
        Format::Csv => csv_text(view),
        Format::Otava => crate::otava::render(view),
        Format::Json => {
            let mut s = serde_json::to_string_pretty(&to_json(view)).expect("JSON of a view");
            s.push('\n');
            s
        }
    }
}

/// A value with four significant digits (no exponent for the magnitudes fabbench reports).
pub fn number(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    if v == 0.0 {
        return "0".into();
    }
    let digits = v.abs().log10().floor() as i32;
    let decimals = (3 - digits).clamp(0, 9) as usize;
    format!("{v:.decimals$}")
}

/// +14.6%
pub fn percent(r: f64) -> String {
    format!("{:+.1}%", r * 100.0)
}

fn p_text(c: &Change) -> String {
    match c.p_value {
        None => "exact".into(),
        Some(p) => format!("p={p:.1e}"),
    }
}

/// "at 1a2b3c4d 2026-03-01: 1.230 -> 1.410 us (+14.6%, regression, p=1.0e-5)"
pub fn change_text(view: &View, t: &Trend, c: &Change) -> String {
    let e = &view.entries[t.entry_of(c.index)];
    format!(
        "at {} {}: {} -> {} {} ({}, {}, {})",
        e.short_revision(),
        day(e),
        number(c.before),
        number(c.after),
        t.series.unit,
        percent(c.relative()),
        if t.is_regression(c) {
            "regression"
        } else {
            "improvement"
        },
        p_text(c)
    )
}

fn changes_text(view: &View, t: &Trend) -> String {
    let mut parts: Vec<String> = t
        .found
        .changes
        .iter()
        .map(|c| change_text(view, t, c))
        .collect();
    for &i in &t.found.spikes {
        let e = &view.entries[t.entry_of(i)];
        parts.push(format!(
            "spike at {} {}: {} {} (not a change)",
            e.short_revision(),
            day(e),
            number(t.series.values[i].value),
            t.series.unit
        ));
    }
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join("; ")
    }
}

fn day(e: &Entry) -> &str {
    e.date.get(..10).unwrap_or(&e.date)
}

/// The first line of the table and Markdown forms: what the view covers and how changes
/// were sought.
fn heading(view: &View) -> String {
    let (first, last) = (&view.entries[0], &view.entries[view.entries.len() - 1]);
    let o = &view.options;
    format!(
        "{} entries, {} ({}) to {} ({}); change points by E-divisive means and Student's t-test (window {}, p < {}{})",
        view.entries.len(),
        day(first),
        first.short_revision(),
        day(last),
        last.short_revision(),
        o.window,
        o.max_pvalue,
        if o.min_magnitude > 0.0 {
            format!(", change > {}", percent(o.min_magnitude).trim_start_matches('+'))
        } else {
            String::new()
        }
    )
}

/// One row per series: where it is, how many entries, the latest value, its move and the
/// change points.
fn series_table(view: &View) -> Table {
    let hosts: std::collections::BTreeSet<Option<&String>> = view
        .trends
        .iter()
        .map(|t| t.series.key.host.as_ref())
        .collect();
    let with_host = hosts.len() > 1;
    let mut header: Vec<&str> = Vec::new();
    if with_host {
        header.push("host");
    }
    header.extend([
        "suite",
        "fabric",
        "ranks",
        "point",
        "metric",
        "unit",
        "N",
        "latest",
        "vs prev",
        "change points",
    ]);
    let mut table = Table::new(header).delimiter_row(DelimiterRow::Tight);
    for t in &view.trends {
        let k = &t.series.key;
        let mut row = Vec::new();
        if with_host {
            row.push(k.host.clone().unwrap_or_else(|| "any (exact)".into()));
        }
        row.extend([
            k.suite.clone(),
            k.fabric.clone(),
            k.ranks.to_string(),
            k.point().to_string(),
            k.metric.clone(),
            t.series.unit.clone(),
            t.series.values.len().to_string(),
            number(t.latest()),
            t.since_previous().map_or("-".into(), percent),
            changes_text(view, t),
        ]);
        table.push_row(row);
    }
    table
}

fn table(view: &View) -> String {
    format!("{}\n{}", heading(view), series_table(view).to_text())
}

fn markdown(view: &View) -> String {
    format!("{}\n\n{}", heading(view), series_table(view).to_markdown())
}

fn csv_text(view: &View) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record([
        "host",
        "suite",
        "fabric",
        "ranks",
        "size",
        "params",
        "metric",
        "unit",
        "better",
        "exact",
        "points",
        "latest",
        "since_previous",
        "regressed",
        "change_points",
    ]);
    for t in &view.trends {
        let k = &t.series.key;
        let _ = w.write_record([
            k.host.clone().unwrap_or_default(),
            k.suite.clone(),
            k.fabric.clone(),
            k.ranks.to_string(),
            k.size.map(|s| s.to_string()).unwrap_or_default(),
            k.params.clone(),
            k.metric.clone(),
            t.series.unit.clone(),
            better(t).into(),
            t.series.exact.to_string(),
            t.series.values.len().to_string(),
            t.latest().to_string(),
            t.since_previous()
                .map(|r| r.to_string())
                .unwrap_or_default(),
            t.regressed().to_string(),
            changes_text(view, t),
        ]);
    }
    String::from_utf8(w.into_inner().expect("writing to memory")).expect("CSV is UTF-8")
}

fn better(t: &Trend) -> &'static str {
    match t.series.better {
        bench_core::measure::Better::Lower => "lower",
        bench_core::measure::Better::Higher => "higher",
    }
}

/// Everything in the view, for tools: the options, the entries, and per series every value
/// with its entry, the change points and spikes.
pub fn to_json(view: &View) -> serde_json::Value {
    let entry = |i: usize| {
        let e = &view.entries[i];
        json!({"run_id": e.run_id, "revision": e.revision, "date": e.date})
    };
    let series: Vec<serde_json::Value> = view
        .trends
        .iter()
        .map(|t| {
            let k = &t.series.key;
            let changes: Vec<serde_json::Value> = t
                .found
                .changes
                .iter()
                .map(|c| {
                    let e = &view.entries[t.entry_of(c.index)];
                    json!({
                        "index": c.index,
                        "revision": e.revision,
                        "short_revision": short_revision(&e.revision),
                        "date": e.date,
                        "run_id": e.run_id,
                        "before": c.before,
                        "after": c.after,
                        "change": c.relative(),
                        "p_value": c.p_value,
                        "regression": t.is_regression(c),
                    })
                })
                .collect();
            let spikes: Vec<serde_json::Value> = t
                .found
                .spikes
                .iter()
                .map(|&i| {
                    let mut v = entry(t.entry_of(i));
                    v["index"] = json!(i);
                    v["value"] = json!(t.series.values[i].value);
                    v
                })
                .collect();
            let values: Vec<serde_json::Value> = t
                .series
                .values
                .iter()
                .map(|v| {
                    let mut j = entry(v.entry);
                    j["value"] = json!(v.value);
                    j
                })
                .collect();
            json!({
                "host": k.host,
                "suite": k.suite,
                "fabric": k.fabric,
                "ranks": k.ranks,
                "size": k.size,
                "params": k.params,
                "metric": k.metric,
                "unit": t.series.unit,
                "better": better(t),
                "exact": t.series.exact,
                "latest": t.latest(),
                "since_previous": t.since_previous(),
                "regressed": t.regressed(),
                "change_points": changes,
                "spikes": spikes,
                "values": values,
            })
        })
        .collect();
    json!({
        "format": "fabbench-history-show",
        "version": 1,
        "options": {
            "window": view.options.window,
            "max_pvalue": view.options.max_pvalue,
            "min_magnitude": view.options.min_magnitude,
        },
        "entries": view.entries.iter().map(|e| json!({
            "run_id": e.run_id,
            "revision": e.revision,
            "date": e.date,
            "host": e.host.hostname,
            "fabbench_version": e.fabbench_version,
        })).collect::<Vec<_>>(),
        "regressed": view.regressed(),
        "series": series,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::view_of;

    #[test]
    fn a_step_reads_as_where_from_what_to_what_and_how_sure() {
        let view = view_of(&[30.0, 30.0, 30.0, 36.0, 36.0]);
        assert_eq!(view.trends.len(), 2, "one series per size");
        let t = &view.trends[0];
        assert!(t.series.exact && t.regressed());
        let c = &t.found.changes[0];
        assert_eq!(
            change_text(&view, t, c),
            "at r3 2026-01-04: 30.00 -> 36.00 us (+20.0%, regression, exact)"
        );
        let text = render(&view, Format::Table);
        assert!(
            text.starts_with("5 entries, 2026-01-01 (r0) to 2026-01-05 (r4)"),
            "{text}"
        );
        assert!(text.contains("size 8") && text.contains("+0.0%"), "{text}");
        let md = render(&view, Format::Markdown);
        assert!(
            md.contains("|---|") && md.contains("| osu_latency | rapidio | 2 | size 1 |"),
            "{md}"
        );
        let json: serde_json::Value = serde_json::from_str(&render(&view, Format::Json)).unwrap();
        let cp = &json["series"][0]["change_points"][0];
        assert_eq!(
            (cp["revision"].as_str(), cp["index"].as_u64()),
            (Some("r3"), Some(3))
        );
        assert_eq!(cp["p_value"], serde_json::Value::Null);
        assert_eq!(json["regressed"], true);
        let csv = render(&view, Format::Csv);
        assert_eq!(csv.lines().count(), 3, "{csv}");
    }

    #[test]
    fn an_improvement_and_a_spike_are_told_apart_from_a_regression() {
        let view = view_of(&[30.0, 30.0, 50.0, 30.0, 30.0, 25.0, 25.0]);
        let t = &view.trends[0];
        assert!(!t.regressed());
        let text = changes_text(&view, t);
        assert!(text.contains("-16.7%, improvement, exact"), "{text}");
        assert!(
            text.contains("spike at r2 2026-01-03: 50.00 us (not a change)"),
            "{text}"
        );
    }

    #[test]
    fn numbers_keep_four_significant_digits() {
        assert_eq!(number(36.2913), "36.29");
        assert_eq!(number(0.038461), "0.03846");
        assert_eq!(number(12345.6), "12346");
        assert_eq!(percent(0.146), "+14.6%");
        assert_eq!(percent(-0.05), "-5.0%");
    }
}
