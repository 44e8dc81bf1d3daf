//! OSU Micro-Benchmarks 7.4's text layout, so existing OSU parsers read fabbench's output: a
//! blank line, the suite title and datatype comment lines, the `# Size` header, and rows of a
//! 10-wide left-aligned size and 20-wide values with two decimals (OSU's FIELD_WIDTH and
//! FLOAT_PRECISION); with `-c` a Validation column, then with `-z` P50, P90 and P99 columns,
//! in OSU's order and with OSU's percentile rule.

use std::path::PathBuf;

use bench_core::measure::{Layout, Point};

use crate::format::Exporter;
use crate::model::{FabricRun, Run, Series};
use crate::ResultsError;

const SIZE_WIDTH: usize = 10;
const FIELD_WIDTH: usize = 20;
const FLOAT_PRECISION: usize = 2;

/// Which optional columns are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Columns<'a> {
    /// `-z`: P50, P90 and P99 of the per-iteration samples.
    pub tail: bool,
    /// `-z50,95`: the percentiles instead of OSU's default three.
    pub tail_at: &'a [u64],
    /// `-c`: Pass/Fail per size.
    pub validation: bool,
}

/// OSU's tail percentiles.
const TAILS: [u64; 3] = [50, 90, 99];

impl Columns<'_> {
    /// The percentiles of the tail columns.
    fn tails(&self) -> &[u64] {
        if self.tail_at.is_empty() {
            &TAILS
        } else {
            self.tail_at
        }
    }
}

/// The parts of an OSU layout: title, metric column and optional columns (None for another
/// format's layout).
fn parts(layout: &Layout) -> Option<(&str, &str, Columns<'_>)> {
    match layout {
        Layout::Osu {
            title,
            column,
            tail,
            tail_at,
            validation,
        } => Some((
            title,
            column,
            Columns {
                tail: *tail,
                tail_at,
                validation: *validation,
            },
        )),
        Layout::Mpptest(_) | Layout::Npb(_) | Layout::Nbody(_) => None,
    }
}

/// The blank line, title and datatype lines, `comment` (fabbench's own line, which OSU
/// parsers skip like any `#` line) and the `# Size` line.
pub fn header(title: &str, column: &str, cols: Columns<'_>, comment: &str) -> String {
    let mut out = format!("\n# {title}\n# Datatype: MPI_CHAR.\n{comment}");
    out.push_str(&format!(
        "{:<SIZE_WIDTH$}{:>FIELD_WIDTH$}",
        "# Size", column
    ));
    if cols.validation {
        out.push_str(&format!("{:>FIELD_WIDTH$}", "Validation"));
    }
    if cols.tail {
        let unit = if column.contains("MB/s") {
            "Tail BW(MB/s)"
        } else {
            "Tail Lat(us)"
        };
        for p in cols.tails() {
            out.push_str(&format!("{:>FIELD_WIDTH$}", format!("P{p} {unit}")));
        }
    }
    out.push('\n');
    out
}

/// OSU's percentile: the per-iteration values sorted ascending, element `n*p/100 - 1`
/// (integer division). For bandwidth that makes P99 a high bandwidth, as in OSU.
pub fn osu_percentile(sorted: &[f64], p: u64) -> f64 {
    let idx = ((sorted.len() as u64 * p) / 100).saturating_sub(1) as usize;
    sorted[idx.min(sorted.len() - 1)]
}

/// One row for one size.
pub fn row(point: &Point, cols: Columns<'_>) -> String {
    let mut out = format!(
        "{:<SIZE_WIDTH$}{:>FIELD_WIDTH$.FLOAT_PRECISION$}",
        point.size(),
        point.headline()
    );
    if cols.validation {
        let v = match point.validated {
            Some(true) => "Pass",
            Some(false) => "Fail",
            None => "N/A",
        };
        out.push_str(&format!("{v:>FIELD_WIDTH$}"));
    }
    if cols.tail && !point.samples_ns.is_empty() {
        let mut values = point.values();
        values.sort_by(|a, b| a.total_cmp(b));
        for &p in cols.tails() {
            let v = osu_percentile(&values, p);
            out.push_str(&format!("{v:>FIELD_WIDTH$.FLOAT_PRECISION$}"));
        }
    }
    out.push('\n');
    out
}

/// The fewest spaces between two labels of the table with a column per fabric. OSU's own
/// labels are short enough that its 20-wide fields leave four or more spaces; a fabric name in
/// front takes that room ("shm Bandwidth (MB/s)" is exactly 20), and with one space left the
/// labels ran together ("... (MB/s) tcp Bandwidth ...").
const LABEL_GAP: usize = 4;

/// A column's width in the table with a column per fabric: OSU's 20, or the label and
/// [`LABEL_GAP`] spaces before it, so every label stands apart and right-aligns over its
/// numbers.
fn width(header: &str) -> usize {
    FIELD_WIDTH.max(header.chars().count() + LABEL_GAP)
}

/// `text` right-aligned in `width` characters. Padded by pushing spaces, not with a format
/// width: `std::fmt` panics on a width past 65,535, and a column's width comes from a fabric's
/// label, which any manifest can make that long.
fn right(out: &mut String, text: &str, width: usize) {
    let pad = width.saturating_sub(text.chars().count());
    out.extend(std::iter::repeat_n(' ', pad));
    out.push_str(text);
}

/// The header of a table with one value column per fabric (`columns` are their headers).
pub fn header_multi(title: &str, columns: &[String], validation: bool, comment: &str) -> String {
    let mut out = format!("\n# {title}\n# Datatype: MPI_CHAR.\n{comment}");
    out.push_str(&format!("{:<SIZE_WIDTH$}", "# Size"));
    for c in columns {
        right(&mut out, c, width(c));
    }
    if validation {
        out.push_str(&format!("{:>FIELD_WIDTH$}", "Validation"));
    }
    out.push('\n');
    out
}

/// A row of that table: the OSU figure of each fabric at `size` ("-" where one has none);
/// validation passes only if every fabric passed.
pub fn row_multi(
    size: u64,
    points: &[Option<&Point>],
    columns: &[String],
    validation: bool,
) -> String {
    let mut out = format!("{size:<SIZE_WIDTH$}");
    for (p, c) in points.iter().zip(columns) {
        let w = width(c);
        match p {
            Some(p) => right(&mut out, &format!("{:.FLOAT_PRECISION$}", p.headline()), w),
            None => right(&mut out, "-", w),
        }
    }
    if validation {
        let all = points
            .iter()
            .all(|p| p.is_some_and(|p| p.validated == Some(true)));
        out.push_str(&format!(
            "{:>FIELD_WIDTH$}",
            if all { "Pass" } else { "Fail" }
        ));
    }
    out.push('\n');
    out
}

/// The comment line naming fabbench, the fabric and the settings in force.
fn comment_line(run: &Run, suite: &str, f: &FabricRun) -> String {
    format!(
        "# fabbench {} {suite}: fabric {} ({}), {} ranks{}; {}\n",
        run.manifest.fabbench_version,
        f.fabric,
        f.kind.words(),
        f.ranks,
        quick_words(run),
        f.settings_line
    )
}

/// What the header says of a `--quick` run, so a first look is never taken for a full one.
fn quick_words(run: &Run) -> &'static str {
    if run.manifest.quick {
        ", quick (a tenth of the iterations)"
    } else {
        ""
    }
}

/// Whether a run prints one table per series as it goes (one fabric) rather than one table
/// per suite with a column per fabric at the end.
pub fn prints_live(run: &Run) -> bool {
    run.manifest.fabrics.len() == 1
}

/// The header of a series' table, printed when the series starts (runs on one fabric; None
/// otherwise, or for a series not in OSU's layout).
pub fn series_header(run: &Run, series: &Series) -> Option<String> {
    let (title, column, cols) = parts(&series.layout)?;
    let f = run.fabric(&series.fabric)?;
    prints_live(run).then(|| header(title, column, cols, &comment_line(run, &series.suite, f)))
}

/// A series' row for `point`, printed as it is measured (runs on one fabric).
pub fn series_row(run: &Run, series: &Series, point: &Point) -> Option<String> {
    let (_, _, cols) = parts(&series.layout)?;
    prints_live(run).then(|| row(point, cols))
}

/// What follows the live tables: for a run on several fabrics, one table per suite with a
/// column per fabric; then what each fabric decided at run time (facts named `decided.*`, from
/// rank 0, which agrees with the others by construction), as comment lines.
pub fn closing(run: &Run) -> String {
    let mut out = String::new();
    if !prints_live(run) {
        out.push_str(&combined_tables(run));
    }
    for f in &run.manifest.fabrics {
        for (k, v) in &f.facts {
            if let Some(what) = k.strip_prefix("rank0.decided.") {
                out.push_str(&format!("# {}: {what}: {v}\n", f.fabric));
            }
        }
    }
    out
}

/// One OSU-style table per suite with a column per fabric.
fn combined_tables(run: &Run) -> String {
    let mut out = String::new();
    for suite in &run.manifest.suites {
        let per: Vec<&Series> = run
            .manifest
            .fabrics
            .iter()
            .filter_map(|f| run.series_of(suite, &f.fabric))
            .collect();
        let Some(first) = per.first() else { continue };
        let Some((title, column, cols)) = parts(&first.layout) else {
            continue;
        };
        let mut comment = format!(
            "# fabbench {} {suite}: {} ranks{}; a column per fabric\n",
            run.manifest.fabbench_version,
            first.ranks,
            quick_words(run)
        );
        for f in &run.manifest.fabrics {
            comment.push_str(&format!(
                "# {} ({}): {}\n",
                f.fabric,
                f.kind.words(),
                f.settings_line
            ));
        }
        let columns: Vec<String> = per
            .iter()
            .map(|s| format!("{} {column}", s.fabric))
            .collect();
        out.push_str(&header_multi(title, &columns, cols.validation, &comment));
        for p in &first.points {
            let points: Vec<Option<&Point>> = per.iter().map(|s| s.point(&p.key)).collect();
            out.push_str(&row_multi(p.size(), &points, &columns, cols.validation));
        }
    }
    out
}

/// The whole OSU text of a run, as `fabbench run` printed it.
pub fn text(run: &Run) -> String {
    let mut out = String::new();
    for s in &run.series {
        if let Some(h) = series_header(run, s) {
            out.push_str(&h);
            for p in &s.points {
                out.push_str(&series_row(run, s, p).unwrap_or_default());
            }
        }
    }
    out.push_str(&closing(run));
    out
}

/// osu.txt: the OSU-format text the run printed.
pub struct OsuText;

impl Exporter for OsuText {
    fn export(&self, run: &Run) -> Result<Vec<(PathBuf, Vec<u8>)>, ResultsError> {
        let osu = run.series.iter().any(|s| parts(&s.layout).is_some());
        Ok(if osu {
            vec![("osu.txt".into(), text(run).into_bytes())]
        } else {
            Vec::new()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::measure::{Metric, PointKey};

    const LAT: (&str, &str) = ("OSU MPI Latency Test v7.4", "Avg Latency(us)");

    #[test]
    fn header_and_row_use_osu_widths() {
        assert_eq!(
            header(LAT.0, LAT.1, Columns::default(), "# fabbench\n"),
            "\n# OSU MPI Latency Test v7.4\n# Datatype: MPI_CHAR.\n# fabbench\n# Size         Avg Latency(us)\n"
        );
        let p = Point {
            warmup: None,
            key: PointKey::size(8),
            metrics: vec![Metric::latency_us(2.0)],
            samples_ns: vec![300, 340],
            validated: None,
            batches: Vec::new(),
            split: None,
        };
        assert_eq!(
            row(&p, Columns::default()),
            "8                         0.16\n"
        );
    }

    #[test]
    fn optional_columns() {
        let cols = Columns {
            tail: true,
            tail_at: &[],
            validation: true,
        };
        let h = header(LAT.0, LAT.1, cols, "");
        assert!(h.ends_with(
            "# Size         Avg Latency(us)          Validation    P50 Tail Lat(us)    P90 Tail Lat(us)    P99 Tail Lat(us)\n"
        ), "{h}");
        let h = header(
            "OSU MPI Bandwidth Test v7.4",
            "Bandwidth (MB/s)",
            Columns {
                tail: true,
                tail_at: &[],
                validation: false,
            },
            "",
        );
        assert!(h.ends_with("# Size        Bandwidth (MB/s)   P50 Tail BW(MB/s)   P90 Tail BW(MB/s)   P99 Tail BW(MB/s)\n"), "{h}");
        let p = Point {
            warmup: None,
            key: PointKey::size(1024),
            metrics: vec![Metric::latency_us(2.0)],
            samples_ns: (1..=100).map(|i| i * 20).collect(),
            validated: Some(true),
            batches: Vec::new(),
            split: None,
        };
        let r = row(&p, cols);
        assert_eq!(
            r,
            "1024                      0.51                Pass                0.50                0.90                0.99\n"
        );
        // -z50,95: those percentiles, by the same rule
        let chosen = Columns {
            tail: true,
            tail_at: &[50, 95],
            validation: false,
        };
        assert!(header(LAT.0, LAT.1, chosen, "")
            .ends_with("Avg Latency(us)    P50 Tail Lat(us)    P95 Tail Lat(us)\n"));
        assert_eq!(
            row(&p, chosen),
            "1024                      0.51                0.50                0.95\n"
        );
    }

    /// An 8-byte latency point of 2 us, validated.
    fn eight_bytes() -> Point {
        Point {
            warmup: None,
            key: PointKey::size(8),
            metrics: vec![Metric::latency_us(2.0)],
            samples_ns: vec![300],
            validated: Some(true),
            batches: Vec::new(),
            split: None,
        }
    }

    #[test]
    fn a_fabric_label_past_a_format_width_lines_up_without_a_panic() {
        // std::fmt's widths stop at 65,535; a manifest can name a fabric longer than that.
        let cols = vec![format!("{} Avg Latency(us)", "f".repeat(70_000))];
        let h = header_multi(LAT.0, &cols, false, "");
        let p = eight_bytes();
        let r = row_multi(8, &[Some(&p)], &cols, false);
        let (header, row) = (h.lines().last().unwrap(), r.trim_end_matches('\n'));
        assert_eq!(header.chars().count(), row.chars().count());
        assert!(row.ends_with(" 0.15"), "{}", &row[row.len() - 20..]);
    }

    #[test]
    fn a_column_per_fabric() {
        let cols = vec![
            "shm Avg Latency(us)".to_string(),
            "hyperlink Avg Latency(us)".to_string(),
        ];
        let h = header_multi(LAT.0, &cols, false, "# c\n");
        assert!(
            h.ends_with("# Size        shm Avg Latency(us)    hyperlink Avg Latency(us)\n"),
            "{h:?}"
        );
        let p = eight_bytes();
        let r = row_multi(8, &[Some(&p), None], &cols, true);
        assert_eq!(
            r,
            "8                            0.15                            -                Fail\n"
        );
        // Every label ends where its numbers end, and the labels stand apart.
        let label_ends: Vec<usize> = cols
            .iter()
            .map(|c| h.lines().last().unwrap().find(c.as_str()).unwrap() + c.len())
            .collect();
        let value_ends = [r.find("0.15").unwrap() + 4, r.find('-').unwrap() + 1];
        assert_eq!(label_ends, value_ends, "{h}{r}");
        // The widest label OSU has, with a fabric's name in front.
        let bw = [
            "shm Bandwidth (MB/s)".to_string(),
            "tcp Bandwidth (MB/s)".to_string(),
        ];
        let h = header_multi("OSU MPI Bandwidth Test v7.4", &bw, false, "");
        assert!(
            h.ends_with("# Size        shm Bandwidth (MB/s)    tcp Bandwidth (MB/s)\n"),
            "{h:?}"
        );
    }

    #[test]
    fn percentiles_follow_osus_index_rule() {
        let v: Vec<f64> = (1..=20).map(|x| x as f64).collect();
        // OSU: n*p/100 - 1 with integer division: 20*99/100 = 19 -> index 18
        assert_eq!(osu_percentile(&v, 99), 19.0);
        assert_eq!(osu_percentile(&v, 50), 10.0);
        assert_eq!(osu_percentile(&[5.0], 50), 5.0);
    }
}
