//! The one trait behind every format a report is printed in (hyperfine's shape): an exporter
//! turns a [`CrossRunReport`] and its figures into bytes and knows nothing of where they go. What the
//! formats share lives here: how numbers are printed, the sections the printed formats split the
//! table into, and the legend's sentences.

mod csv;
mod html;
mod markdown;
mod text;

pub use self::csv::Csv;
pub use self::html::Html;
pub use self::markdown::Markdown;
pub use self::text::Text;

use crate::{By, Column, CrossRunReport, ReportError, Row};

/// A chart to go with a report: Markdown links it, HTML inlines it.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub title: String,
    /// The SVG's file name, `latency.svg`: where Markdown's link points, inside the plots
    /// directory.
    pub file_name: String,
    /// The SVG document.
    pub svg: String,
}

/// Every format a report is printed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    Csv,
    Markdown,
    Html,
}

pub trait Exporter {
    /// The whole report in this format.
    fn export(&self, report: &CrossRunReport, figures: &[Figure]) -> Result<Vec<u8>, ReportError>;
}

/// The exporter of `format`. `plots_dir` is where Markdown's figure links point (relative to
/// the report); `None` when the report goes to stdout and no figure files are written.
pub fn exporter(format: Format, plots_dir: Option<&str>) -> Box<dyn Exporter> {
    match format {
        Format::Table => Box::new(Text),
        Format::Csv => Box::new(Csv),
        Format::Markdown => Box::new(Markdown {
            plots_dir: plots_dir.map(str::to_string),
        }),
        Format::Html => Box::new(Html),
    }
}

/// What the printed formats show for a missing cell.
pub const MISSING: &str = "-";

/// A value as OSU prints it, two decimals; below 1, four significant digits, so that a small
/// latency or bandwidth still shows its difference from another.
pub fn value_text(v: f64) -> String {
    if v == 0.0 || !v.is_finite() || v.abs() >= 1.0 {
        return format!("{v:.2}");
    }
    let decimals = (3 - v.abs().log10().floor() as i32).clamp(2, 17) as usize;
    format!("{v:.decimals$}")
}

/// A ratio, three decimals.
pub fn ratio_text(r: f64) -> String {
    format!("{r:.3}")
}

pub(crate) fn cell(v: Option<f64>, text: fn(f64) -> String) -> String {
    v.map(text).unwrap_or_else(|| MISSING.to_string())
}

/// Consecutive rows of one suite, metric and unit: the printed formats give each its own
/// table, since a column cannot mix microseconds and MB/s.
pub(crate) struct Section<'a> {
    pub suite: &'a str,
    pub metric: &'a str,
    pub unit: &'a str,
    pub rows: &'a [Row],
    /// Whether any row has a size; points of named parameters alone (NPB's class) have none.
    pub sizes: bool,
    /// Whether any row has parameters besides its size.
    pub params: bool,
}

impl Section<'_> {
    pub fn title(&self) -> String {
        format!("{}: {} ({})", self.suite, self.metric, self.unit)
    }

    /// The header of the index cells: size and/or params.
    pub fn index_header(&self) -> Vec<&'static str> {
        let mut h = Vec::new();
        if self.sizes || !self.params {
            h.push("size");
        }
        if self.params {
            h.push("params");
        }
        h
    }

    /// A row's index cells, matching [`Section::index_header`].
    pub fn index_cells(&self, r: &Row) -> Vec<String> {
        let mut c = Vec::new();
        if self.sizes || !self.params {
            c.push(
                r.size
                    .map(|s| s.to_string())
                    .unwrap_or_else(|| MISSING.into()),
            );
        }
        if self.params {
            c.push(r.params.clone());
        }
        c
    }
}

/// The rows split into sections (rows come sorted by suite and metric).
pub(crate) fn sections(rows: &[Row]) -> Vec<Section<'_>> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=rows.len() {
        let split = i == rows.len()
            || (rows[i].suite != rows[start].suite
                || rows[i].metric != rows[start].metric
                || rows[i].unit != rows[start].unit);
        if split {
            let part = &rows[start..i];
            out.push(Section {
                suite: &rows[start].suite,
                metric: &rows[start].metric,
                unit: &rows[start].unit,
                rows: part,
                sizes: part.iter().any(|r| r.size.is_some()),
                params: part.iter().any(|r| !r.params.is_empty()),
            });
            start = i;
        }
    }
    out
}

/// The value and ratio headers of every section: the labels, then `LABEL/REF`.
pub(crate) fn value_headers(report: &CrossRunReport) -> Vec<&str> {
    let t = &report.table;
    t.columns
        .iter()
        .map(|c| c.label.as_str())
        .chain(t.ratios.iter().map(|r| r.label.as_str()))
        .collect()
}

/// A row's value and ratio cells.
pub(crate) fn value_cells(r: &Row) -> Vec<String> {
    r.values
        .iter()
        .map(|v| cell(*v, value_text))
        .chain(r.ratios.iter().map(|v| cell(*v, ratio_text)))
        .collect()
}

/// "2 runs, a column per run".
pub(crate) fn summary(report: &CrossRunReport) -> String {
    let what = match report.by {
        By::Fabric => "a column per fabric",
        By::Run => "a column per run (per fabric of a run with several)",
        By::Tunable => "a column per setting of the tunables that differ",
    };
    let runs = if report.runs == 1 { "run" } else { "runs" };
    format!(
        "{} {runs}, {what}; cells are each point's headline value (summary.csv's value)",
        report.runs
    )
}

/// The reference sentence, when there is a reference run.
pub(crate) fn reference_note(report: &CrossRunReport) -> Option<String> {
    let id = report.reference.as_ref()?;
    let t = &report.table;
    let cols: Vec<&str> = t
        .columns
        .iter()
        .filter(|c| Some(c.input) == t.reference)
        .map(|c| c.label.as_str())
        .collect();
    Some(format!(
        "reference: run {id} ({} {}); LABEL/REF is LABEL's value over REF's at the same point: \
         above 1 means a larger value than the reference (slower for latency, faster for bandwidth)",
        if cols.len() == 1 { "column" } else { "columns" },
        cols.join(", ")
    ))
}

/// What the legend says of a column: "run RUNID, fabric F (KIND), host H, started T; SETTINGS".
pub(crate) fn describe(c: &Column) -> String {
    let mut s = format!(
        "run {}, fabric {} ({}), host {}, started {}",
        c.run_named(),
        c.fabric,
        c.kind,
        c.host,
        c.start_time
    );
    if !c.settings_line.is_empty() {
        s.push_str("; ");
        s.push_str(&c.settings_line);
    }
    s
}

/// What Markdown says instead of linking figures when the report goes to stdout, where no
/// figure files are written beside it.
pub(crate) fn figures_note(n: usize) -> String {
    format!(
        "{n} figure{} not written: with -o FILE the report writes them as SVG files into FILE's \
         STEM-plots directory",
        if n == 1 { "" } else { "s" }
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::testing::{at, run, set};
    use crate::{By, CrossRunReport, Inputs};

    /// Two runs of different sizes and eager limits, by run, against the first.
    pub fn report() -> CrossRunReport {
        let mut a = run(
            "A",
            &["rapidio"],
            &[
                at("osu_latency", "rapidio", 1, 2.0),
                at("osu_latency", "rapidio", 16, 4.0),
            ],
        );
        set(&mut a, "rapidio", "eager_limit", "4KiB");
        let mut b = run(
            "B<&>",
            &["rapidio"],
            &[
                at("osu_latency", "rapidio", 16, 5.0),
                at("osu_latency", "rapidio", 1024, 9.0),
            ],
        );
        set(&mut b, "rapidio", "eager_limit", "16KiB");
        let inputs = Inputs::new(vec![("a".into(), a), ("b".into(), b)]).unwrap();
        CrossRunReport::build(&inputs, By::Run, Some("A")).unwrap()
    }

    pub fn figure() -> Figure {
        Figure {
            title: "latency <A & B>".into(),
            file_name: "osu_latency.svg".into(),
            svg: "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\"><rect width=\"10\" height=\"10\"/></svg>\n".into(),
        }
    }

    pub fn export(e: &dyn Exporter, figures: &[Figure]) -> String {
        String::from_utf8(e.export(&report(), figures).unwrap()).unwrap()
    }

    #[test]
    fn values_print_like_osu_and_small_ones_keep_four_digits() {
        assert_eq!(value_text(31.2916), "31.29");
        assert_eq!(value_text(1234.5), "1234.50");
        assert_eq!(value_text(0.5), "0.5000");
        assert_eq!(value_text(0.012346), "0.01235");
        assert_eq!(value_text(0.0), "0.00");
        assert_eq!(value_text(-0.25), "-0.2500");
        assert_eq!(ratio_text(1.25), "1.250");
        assert_eq!(ratio_text(2.0 / 3.0), "0.667");
        assert_eq!(cell(None, value_text), "-");
    }

    #[test]
    fn sections_split_on_suite_and_metric() {
        let r = report();
        let rows = r.table.rows().unwrap();
        let s = sections(&rows);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].title(), "osu_latency: latency (us)");
        assert_eq!(s[0].rows.len(), 3);
        assert_eq!(s[0].index_header(), ["size"]);
    }
}
