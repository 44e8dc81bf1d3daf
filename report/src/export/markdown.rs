//! Markdown (`--format markdown`): the legend as a table, a pipe table per suite and metric,
//! then the figures as image links into the plots directory written beside the report. Text
//! from the runs (labels, settings, host names) is escaped by results' one rule
//! ([`escape_markdown`]) so it cannot turn into markup or split a table cell.

use super::{
    figures_note, reference_note, sections, summary, value_cells, value_headers, Exporter,
};
use crate::{CrossRunReport, Figure, ReportError};
use results::format::table::{escape_markdown, Align, Table};

pub struct Markdown {
    /// Where the figure links point, relative to the report (`report-plots`); `None` for a
    /// report on stdout, which has no figure files beside it.
    pub plots_dir: Option<String>,
}

/// A link target: `<...>` keeps spaces and parentheses in a file name from ending the link.
fn target(dir: &str, file: &str) -> String {
    let t = format!("{dir}/{file}");
    if t.contains([' ', '(', ')', '<', '>']) {
        format!("<{}>", t.replace('<', "%3C").replace('>', "%3E"))
    } else {
        t
    }
}

impl Exporter for Markdown {
    fn export(&self, report: &CrossRunReport, figures: &[Figure]) -> Result<Vec<u8>, ReportError> {
        let mut out = String::from("# fabbench report\n\n");
        out.push_str(&format!("{}.\n\n", escape_markdown(&summary(report))));
        let mut legend = Table::new([
            "column", "run", "fabric", "kind", "host", "started", "settings",
        ]);
        for c in &report.table.columns {
            legend.push_row([
                &c.label,
                &c.run_named(),
                &c.fabric,
                &c.kind,
                &c.host,
                &c.start_time,
                &c.settings_line,
            ]);
        }
        out.push_str(&legend.to_markdown());
        if let Some(note) = reference_note(report) {
            out.push_str(&format!("\n{}.\n", escape_markdown(&upper_first(&note))));
        }
        let rows = report.table.rows()?;
        let values = value_headers(report);
        for s in sections(&rows) {
            out.push_str(&format!("\n## {}\n\n", escape_markdown(&s.title())));
            // Sizes and numbers right-aligned; params left.
            let index = s.index_header().into_iter().map(|h| {
                let align = if h == "params" {
                    Align::Left
                } else {
                    Align::Right
                };
                (h, align)
            });
            let mut table =
                Table::with_columns(index.chain(values.iter().map(|h| (*h, Align::Right))));
            for r in s.rows {
                table.push_row(s.index_cells(r).into_iter().chain(value_cells(r)));
            }
            out.push_str(&table.to_markdown());
        }
        if !figures.is_empty() {
            out.push_str("\n## Figures\n\n");
            match &self.plots_dir {
                Some(dir) => {
                    for f in figures {
                        out.push_str(&format!(
                            "![{}]({})\n\n",
                            escape_markdown(&f.title),
                            target(dir, &f.file_name)
                        ));
                    }
                }
                None => out.push_str(&format!("<!-- {} -->\n", figures_note(figures.len()))),
            }
        }
        Ok(out.into_bytes())
    }
}

fn upper_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{export, figure};
    use super::*;

    #[test]
    fn legend_tables_and_figure_links() {
        let md = Markdown {
            plots_dir: Some("report-plots".into()),
        };
        let out = export(&md, &[figure()]);
        assert!(
            out.starts_with("# fabbench report\n\n2 runs, a column per run "),
            "{out}"
        );
        assert!(
            out.contains("| B\\<\\&\\> | B\\<\\&\\> | rapidio | emulated, virtual time | vm | 2026-11-23T15:07:35Z | eager_limit=16KiB |\n"),
            "{out}"
        );
        assert!(out.contains("\nReference: run A (column A); "), "{out}");
        let table = out
            .split("## osu_latency: latency (us)\n\n")
            .nth(1)
            .unwrap();
        let lines: Vec<&str> = table.lines().take(5).collect();
        assert_eq!(
            lines,
            [
                "| size | A | B\\<\\&\\> | B\\<\\&\\>/A |",
                "| ---: | ---: | ---: | ---: |",
                "| 1 | 2.00 | - | - |",
                "| 16 | 4.00 | 5.00 | 1.250 |",
                "| 1024 | - | 9.00 | - |",
            ]
        );
        assert!(
            out.ends_with(
                "## Figures\n\n![latency \\<A \\& B\\>](report-plots/osu_latency.svg)\n\n"
            ),
            "{out}"
        );
        assert!(
            !out.contains("<svg"),
            "Markdown links the figures, never inlines them"
        );
    }

    #[test]
    fn on_stdout_the_figures_are_one_comment() {
        let out = export(&Markdown { plots_dir: None }, &[figure(), figure()]);
        let comments: Vec<&str> = out.lines().filter(|l| l.starts_with("<!--")).collect();
        assert_eq!(comments.len(), 1, "{out}");
        assert!(
            comments[0].contains("2 figures") && comments[0].contains("-o"),
            "{out}"
        );
        assert!(!out.contains("!["), "{out}");
        // No figures, no section and no comment.
        let out = export(&Markdown { plots_dir: None }, &[]);
        assert!(!out.contains("Figures") && !out.contains("<!--"), "{out}");
    }

    #[test]
    fn link_targets_with_spaces_are_bracketed() {
        assert_eq!(target("r-plots", "a b.svg"), "<r-plots/a b.svg>");
        assert_eq!(target("r-plots", "a.svg"), "r-plots/a.svg");
    }
}
