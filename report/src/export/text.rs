//! The text table (`--format table`): a legend in `#` comment lines, as fabbench's OSU text
//! has, then per suite and metric a table of aligned columns for a terminal.

use super::{describe, reference_note, sections, summary, value_cells, value_headers, Exporter};
use crate::{Figure, Report, ReportError};

pub struct Text;

impl Exporter for Text {
    fn export(&self, report: &Report, _figures: &[Figure]) -> Result<Vec<u8>, ReportError> {
        let mut out = String::new();
        out.push_str(&format!("# fabbench report: {}\n", summary(report)));
        out.push_str("# columns:\n");
        for c in &report.table.columns {
            out.push_str(&format!("#   {}: {}\n", c.label, describe(c)));
        }
        if let Some(note) = reference_note(report) {
            out.push_str(&format!("# {note}\n"));
        }
        let rows = report.table.rows()?;
        let values = value_headers(report);
        for s in sections(&rows) {
            out.push_str(&format!("\n# {}\n", s.title()));
            let index = s.index_header();
            let mut grid: Vec<Vec<String>> = vec![index
                .iter()
                .map(|h| h.to_string())
                .chain(values.iter().map(|h| h.to_string()))
                .collect()];
            grid.extend(s.rows.iter().map(|r| {
                let mut cells = s.index_cells(r);
                cells.extend(value_cells(r));
                cells
            }));
            out.push_str(&aligned(&grid, index.len()));
        }
        Ok(out.into_bytes())
    }
}

/// The grid's lines, the first `left` columns left-aligned (sizes and params read as labels),
/// the numbers right-aligned so their decimals line up.
fn aligned(grid: &[Vec<String>], left: usize) -> String {
    let widths: Vec<usize> = (0..grid[0].len())
        .map(|j| grid.iter().map(|r| r[j].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in grid {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(j, (c, &w))| {
                if j < left {
                    format!("{c:<w$}")
                } else {
                    format!("{c:>w$}")
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::tests::{export, figure};
    use super::*;

    #[test]
    fn a_legend_then_an_aligned_table_per_section() {
        let out = export(&Text, &[figure()]);
        let lines: Vec<&str> = out.lines().collect();
        assert!(
            lines[0].starts_with("# fabbench report: 2 runs, a column per run"),
            "{out}"
        );
        assert_eq!(
            lines[2],
            "#   A: run A, fabric rapidio (emulated, virtual time), host vm, started \
             2026-11-23T15:07:35Z; eager_limit=4KiB"
        );
        assert!(
            lines[4].starts_with("# reference: run A (column A); "),
            "{out}"
        );
        assert!(lines[4].contains("above 1 means a larger value"), "{out}");
        let table: Vec<&str> = out
            .split("# osu_latency: latency (us)\n")
            .nth(1)
            .unwrap()
            .lines()
            .collect();
        assert_eq!(
            table,
            [
                "size     A  B<&>  B<&>/A",
                "1     2.00     -       -",
                "16    4.00  5.00   1.250",
                "1024     -  9.00       -",
            ]
        );
        // Text has no place for figures.
        assert!(!out.contains("svg"), "{out}");
    }
}
