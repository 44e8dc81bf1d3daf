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
    use crate::rule::Verdict;
    use crate::Statistic;

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
                "statistic",
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
        assert!(lines[8].starts_with("Rows decided statistically show the median"));
        // Each row names the statistic its values are: the rows mix them.
        assert!(
            lines[1].contains(" headline ") && lines[2].contains(" median "),
            "{text}"
        );
    }

    #[test]
    fn the_headers_name_the_statistic_when_every_row_has_the_same() {
        let mut c = comparison();
        c.entries.retain(|e| e.statistic == Statistic::Median);
        let text = Table.render(&c).unwrap();
        let header = text.lines().next().unwrap();
        assert!(
            header.contains("baseline median  candidate median"),
            "{header}"
        );
        assert!(!header.contains("statistic"), "{header}");
    }

    #[test]
    fn inconclusive_rows_are_counted_and_explained() {
        let mut c = comparison();
        let e = &mut c.entries[2];
        e.decision.verdict = Verdict::Inconclusive;
        let text = Table.render(&c).unwrap();
        assert!(
            text.contains("1 unchanged, 1 inconclusive, 1 invalid")
                || text.contains("0 unchanged, 1 inconclusive"),
            "{text}"
        );
        assert!(
            text.contains("cannot separate a change from run-to-run variation"),
            "{text}"
        );
        // A limit, when there was one, is said beside the verdict.
        c.entries[2].decision.limit = Some(crate::Limit {
            fraction: 0.1,
            source: crate::LimitSource::Bound,
            runs: 0,
        });
        let text = Table.render(&c).unwrap();
        assert!(text.contains("inconclusive (within ±10%)"), "{text}");
    }
}
