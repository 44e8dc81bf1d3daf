//! The CI job summary's view (GitHub renders it): a heading that says the outcome, the summary
//! line, the regressions and improvements in the open, and what could not be compared and what
//! did not change folded into `<details>` blocks, so a page of unchanged rows does not bury the
//! one that matters.

use super::{entry_table, notes, partial_notes, ranks_vary, summary_line, Renderer};
use crate::model::{Comparison, Entry};
use crate::rule::Verdict;
use crate::CompareError;

pub struct Markdown;

impl Renderer for Markdown {
    fn render(&self, c: &Comparison) -> Result<String, CompareError> {
        let s = c.summary();
        let outcome = if s.regressed > 0 {
            format!("{} regressed", s.regressed)
        } else if s.improved > 0 {
            format!("no regression, {} improved", s.improved)
        } else if s.inconclusive > 0 {
            format!("no regression, {} inconclusive", s.inconclusive)
        } else {
            "no change".into()
        };
        let mut out = format!(
            "## fabbench compare: {outcome}\n\n**{}**\n\n",
            summary_line(c)
        );
        out.push_str(&format!(
            "Baseline `{}`{} (revision `{}`), candidate `{}`{} (revision `{}`).",
            c.baseline.run_id,
            more_runs(c.baseline_runs),
            c.baseline.git_revision,
            c.candidate.run_id,
            more_runs(c.candidate_runs),
            c.candidate.git_revision
        ));
        for note in partial_notes(c) {
            out.push(' ');
            out.push_str(&note);
        }
        for note in notes(c) {
            out.push(' ');
            out.push_str(note);
        }
        out.push_str("\n\n");

        let all: Vec<&Entry> = c.entries.iter().collect();
        let ranks = ranks_vary(&all);
        let of =
            |v: Verdict| -> Vec<&Entry> { c.entries.iter().filter(|e| e.verdict() == v).collect() };
        let mut changes = of(Verdict::Regressed);
        changes.extend(of(Verdict::Improved));
        if !changes.is_empty() {
            out.push_str("### Regressions and improvements\n\n");
            out.push_str(&entry_table(&changes, ranks).to_markdown());
            out.push('\n');
        }
        for (verdict, what) in [
            (Verdict::Inconclusive, "inconclusive"),
            (Verdict::Invalid, "not compared"),
            (Verdict::Unchanged, "unchanged"),
        ] {
            let rows = of(verdict);
            if rows.is_empty() {
                continue;
            }
            out.push_str(&format!(
                "<details><summary>{} {what}</summary>\n\n{}\n</details>\n\n",
                rows.len(),
                entry_table(&rows, ranks).to_markdown()
            ));
        }
        Ok(out.trim_end().to_string() + "\n")
    }
}

/// " and 4 more runs" after the first run's id, when a side holds several.
fn more_runs(runs: usize) -> String {
    match runs {
        0 | 1 => String::new(),
        2 => " and 1 more run".into(),
        n => format!(" and {} more runs", n - 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::testing::comparison;

    #[test]
    fn changes_first_the_rest_folded() {
        let text = Markdown.render(&comparison()).unwrap();
        assert!(text.starts_with("## fabbench compare: 1 regressed\n\n**4 compared: 1 regressed"));
        assert!(text.contains("Baseline `base` (revision `rev-base`), candidate `cand`"));
        let changes = text.find("### Regressions and improvements").unwrap();
        let regressed = text.find("| regressed |").unwrap();
        let improved = text.find("| improved |").unwrap();
        let invalid = text
            .find("<details><summary>1 not compared</summary>")
            .unwrap();
        let unchanged = text
            .find("<details><summary>1 unchanged</summary>")
            .unwrap();
        assert!(changes < regressed && regressed < improved && improved < invalid);
        assert!(invalid < unchanged && unchanged < text.find("| unchanged |").unwrap());
        assert!(
            text.contains("| suite | fabric | point | metric | statistic | baseline |"),
            "{text}"
        );
        assert!(text.contains("|---|---|---|---|---|---:|"), "{text}");
        // "<0.001" would open an HTML tag in GitHub's renderer: no `<` in a table is bare.
        assert!(text.contains("\\<0.001"), "{text}");
        for line in text.lines().filter(|l| l.starts_with('|')) {
            assert!(!line.replace("\\<", "").contains('<'), "{line}");
        }
        assert!(text.trim_end().ends_with("</details>"));
    }

    #[test]
    fn without_regressions_the_heading_says_so() {
        let mut c = comparison();
        c.entries.retain(|e| e.verdict() != Verdict::Regressed);
        let text = Markdown.render(&c).unwrap();
        assert!(
            text.starts_with("## fabbench compare: no regression, 1 improved"),
            "{text}"
        );
        c.entries.retain(|e| e.verdict() != Verdict::Improved);
        let text = Markdown.render(&c).unwrap();
        assert!(text.starts_with("## fabbench compare: no change"), "{text}");
        assert!(!text.contains("### Regressions"), "{text}");
    }

    #[test]
    fn a_partial_run_is_said_to_be_one() {
        let mut c = comparison();
        c.candidate.partial = Some("interrupted (SIGINT)".into());
        for text in [
            Markdown.render(&c).unwrap(),
            super::super::text::Table.render(&c).unwrap(),
        ] {
            assert!(
                text.contains("is a partial run (interrupted (SIGINT)): only the points it measured are compared"),
                "{text}"
            );
        }
    }
}
