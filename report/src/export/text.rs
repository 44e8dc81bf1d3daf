//! The text table (`--format table`): a legend in `#` comment lines, as fabbench's OSU text
//! has, then per suite and metric a table of aligned columns for a terminal.

use super::{describe, reference_note, sections, summary, value_cells, value_headers, Exporter};
use crate::{CrossRunReport, Figure, ReportError};
use results::format::table::{Align, Table};

pub struct Text;

impl Exporter for Text {
    fn export(&self, report: &CrossRunReport, _figures: &[Figure]) -> Result<Vec<u8>, ReportError> {
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
            // Sizes and params read as labels, left; the numbers right, so decimals line up.
            let index = s.index_header().into_iter().map(|h| (h, Align::Left));
            let mut table =
                Table::with_columns(index.chain(values.iter().map(|h| (*h, Align::Right))));
            for r in s.rows {
                table.push_row(s.index_cells(r).into_iter().chain(value_cells(r)));
            }
            out.push_str(&table.to_text());
        }
        Ok(out.into_bytes())
    }
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
