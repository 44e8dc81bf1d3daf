//! OSU Micro-Benchmarks 7.4's text layout, so existing OSU parsers read fabbench's output: a
//! blank line, the suite title and datatype comment lines, the `# Size` header, and rows of a
//! 10-wide left-aligned size and 20-wide values with two decimals (OSU's FIELD_WIDTH and
//! FLOAT_PRECISION); with `-c` a Validation column, then with `-z` P50, P90 and P99 columns,
//! in OSU's order and with OSU's percentile rule.

use bench_core::measure::Point;

use crate::model::Layout;

const SIZE_WIDTH: usize = 10;
const FIELD_WIDTH: usize = 20;
const FLOAT_PRECISION: usize = 2;

/// Which optional columns are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Columns {
    /// `-z`: P50, P90 and P99 of the per-iteration samples.
    pub tail: bool,
    /// `-c`: Pass/Fail per size.
    pub validation: bool,
}

/// OSU's tail percentiles.
const TAILS: [u64; 3] = [50, 90, 99];

/// The blank line, title and datatype lines, `comment` (fabbench's own line, which OSU
/// parsers skip like any `#` line) and the `# Size` line.
pub fn header(layout: &Layout, cols: Columns, comment: &str) -> String {
    let mut out = format!("\n# {}\n# Datatype: MPI_CHAR.\n{comment}", layout.title);
    out.push_str(&format!(
        "{:<SIZE_WIDTH$}{:>FIELD_WIDTH$}",
        "# Size", layout.column
    ));
    if cols.validation {
        out.push_str(&format!("{:>FIELD_WIDTH$}", "Validation"));
    }
    if cols.tail {
        let unit = if layout.column.contains("MB/s") {
            "Tail BW(MB/s)"
        } else {
            "Tail Lat(us)"
        };
        for p in TAILS {
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
pub fn row(point: &Point, cols: Columns) -> String {
    let mut out = format!(
        "{:<SIZE_WIDTH$}{:>FIELD_WIDTH$.FLOAT_PRECISION$}",
        point.size,
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
        for p in TAILS {
            let v = osu_percentile(&values, p);
            out.push_str(&format!("{v:>FIELD_WIDTH$.FLOAT_PRECISION$}"));
        }
    }
    out.push('\n');
    out
}

/// A column's width: OSU's 20, or wider for a longer header.
fn width(header: &str) -> usize {
    FIELD_WIDTH.max(header.len() + 1)
}

/// The header of a table with one value column per fabric (`columns` are their headers).
pub fn header_multi(
    layout: &Layout,
    columns: &[String],
    validation: bool,
    comment: &str,
) -> String {
    let mut out = format!("\n# {}\n# Datatype: MPI_CHAR.\n{comment}", layout.title);
    out.push_str(&format!("{:<SIZE_WIDTH$}", "# Size"));
    for c in columns {
        out.push_str(&format!("{c:>w$}", w = width(c)));
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
            Some(p) => out.push_str(&format!("{:>w$.FLOAT_PRECISION$}", p.headline())),
            None => out.push_str(&format!("{:>w$}", "-")),
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

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::measure::Metric;

    fn layout() -> Layout {
        Layout {
            title: "OSU MPI Latency Test v7.4".into(),
            column: "Avg Latency(us)".into(),
        }
    }

    #[test]
    fn header_and_row_use_osu_widths() {
        assert_eq!(
            header(&layout(), Columns::default(), "# fabbench\n"),
            "\n# OSU MPI Latency Test v7.4\n# Datatype: MPI_CHAR.\n# fabbench\n# Size         Avg Latency(us)\n"
        );
        let p = Point {
            size: 8,
            metric: Metric::Latency { divisor: 2.0 },
            samples_ns: vec![300, 340],
            validated: None,
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
            validation: true,
        };
        let h = header(&layout(), cols, "");
        assert!(h.ends_with(
            "# Size         Avg Latency(us)          Validation    P50 Tail Lat(us)    P90 Tail Lat(us)    P99 Tail Lat(us)\n"
        ), "{h}");
        let bw = Layout {
            title: "OSU MPI Bandwidth Test v7.4".into(),
            column: "Bandwidth (MB/s)".into(),
        };
        let h = header(
            &bw,
            Columns {
                tail: true,
                validation: false,
            },
            "",
        );
        assert!(h.ends_with("# Size        Bandwidth (MB/s)   P50 Tail BW(MB/s)   P90 Tail BW(MB/s)   P99 Tail BW(MB/s)\n"), "{h}");
        let p = Point {
            size: 1024,
            metric: Metric::Latency { divisor: 2.0 },
            samples_ns: (1..=100).map(|i| i * 20).collect(),
            validated: Some(true),
        };
        let r = row(&p, cols);
        assert_eq!(
            r,
            "1024                      0.51                Pass                0.50                0.90                0.99\n"
        );
    }

    #[test]
    fn a_column_per_fabric() {
        let cols = vec![
            "shm Avg Latency(us)".to_string(),
            "hyperlink Avg Latency(us)".to_string(),
        ];
        let h = header_multi(&layout(), &cols, false, "# c\n");
        assert!(
            h.ends_with("# Size     shm Avg Latency(us) hyperlink Avg Latency(us)\n"),
            "{h:?}"
        );
        let p = Point {
            size: 8,
            metric: Metric::Latency { divisor: 2.0 },
            samples_ns: vec![300],
            validated: Some(true),
        };
        let r = row_multi(8, &[Some(&p), None], &cols, true);
        assert_eq!(
            r,
            "8                         0.15                         -                Fail\n"
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
