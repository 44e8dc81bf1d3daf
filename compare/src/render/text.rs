//! The terminal's view: every entry in the runs' order as an aligned table (numbers to the
//! right), then the summary line last, where a terminal leaves the eye.

use super::{entry_table, notes, partial_notes, ranks_vary, summary_line, Renderer};
use crate::model::{Comparison, Entry};
use crate::CompareError;

pub struct Table;

impl Renderer for Table {
    fn render(&self, c: &Comparison) -> Result<String, CompareError> {
        let entries: Vec<&Entry> = c.entries.iter().collect();
        let mut out = entry_table(&entries, ranks_vary(&entries)).to_text();
        out.push('\n');
        out.push_str(&summary_line(c));
        out.push('\n');
        for note in partial_notes(c) {
            out.push_str(&note);
            out.push('\n');
        }
        for note in notes(c) {
            out.push_str(note);
            out.push('\n');
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::testing::comparison;

    #[test]
    fn aligned_rows_then_the_summary() {
        let text = Table.render(&comparison()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let words: Vec<&str> = lines[0].split_whitespace().collect();
        assert_eq!(
            words,
            [
                "suite",
                "fabric",
                "point",
                "metric",
                "baseline",
                "candidate",
                "change",
                "interval",
                "p",
                "verdict"
            ]
        );
        // Every row's verdict starts in the same column as the header's.
        let at = lines[0].find("verdict").unwrap();
        for l in &lines[1..5] {
            let v = l[at..].split_whitespace().next().unwrap();
            assert!(
                ["regressed", "improved", "unchanged", "invalid:"].contains(&v),
                "{l}"
            );
        }
        assert!(
            lines[1].contains("+15.9%") && lines[1].contains("exact"),
            "{text}"
        );
        assert!(
            lines[2].contains("+3.0% .. +5.0%") && lines[2].contains("<0.001"),
            "{text}"
        );
        assert!(lines[4].ends_with("invalid: not in candidate"), "{text}");
        assert_eq!(
            lines[6],
            "4 compared: 1 regressed, 1 improved, 1 unchanged, 1 invalid (noise band ±2%, 95% \
             confidence)"
        );
        assert!(lines[7].starts_with("Rows marked exact"), "{text}");
        assert!(lines[8].starts_with("Elsewhere change and interval are of the median"));
    }
}
