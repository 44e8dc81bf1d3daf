//! A reference check printed: an aligned table for a terminal, Markdown for a CI job's summary
//! page, or JSON (every number in full) for tools. Text shows numbers to six significant
//! digits, enough to tell apart an emulated fabric's nanosecond steps in microseconds.

use results::format::ci::significant;
use results::format::table::{Align, Cell, Table};

use super::check::{Check, Outcome, Verdict};
use crate::Format;

/// The outcome in `format`, ending with a newline.
pub fn render(o: &Outcome, format: Format) -> String {
    match format {
        Format::Table => table(o),
        Format::Markdown => markdown(o),
        Format::Json => {
            let mut s = serde_json::to_string_pretty(&Json::of(o)).expect("plain data");
            s.push('\n');
            s
        }
    }
}

/// The JSON document: the outcome with its counts.
#[derive(serde::Serialize)]
struct Json<'a> {
    run: &'a str,
    references: &'a str,
    passed: bool,
    pass: usize,
    fail: usize,
    not_measured: usize,
    checks: &'a [Check],
}

impl<'a> Json<'a> {
    fn of(o: &'a Outcome) -> Json<'a> {
        Json {
            run: &o.run,
            references: &o.references,
            passed: o.passed(),
            pass: o.count(Verdict::Pass),
            fail: o.count(Verdict::Fail),
            not_measured: o.count(Verdict::NotMeasured),
            checks: &o.checks,
        }
    }
}

const HEADERS: [&str; 11] = [
    "#",
    "suite",
    "fabric",
    "ranks",
    "point",
    "metric",
    "measured",
    "reference",
    "tolerance",
    "allowed",
    "verdict",
];

/// Which columns hold numbers (right-aligned).
const NUMERIC: [bool; 11] = [
    true, false, false, true, false, false, true, true, false, false, false,
];

fn cells(c: &Check) -> [String; 11] {
    let n = |x: f64| significant(x, 6);
    [
        c.index.to_string(),
        c.suite.clone(),
        c.fabric.clone(),
        c.ranks.map_or("-".into(), |r| r.to_string()),
        c.point.clone(),
        if c.metric.is_empty() {
            "-".into()
        } else {
            c.metric.clone()
        },
        c.measured.map_or("-".into(), n),
        format!("{} {}", n(c.reference), c.unit),
        format!("{}, {}", percent(c.lower), percent(c.upper)),
        allowed(c),
        verdict_text(c).into(),
    ]
}

fn verdict_text(c: &Check) -> &'static str {
    match c.verdict {
        Verdict::Pass => "pass",
        Verdict::Fail => "FAIL",
        Verdict::NotMeasured => "FAIL: not measured",
    }
}

/// A tolerance as a signed percentage, "none" when absent.
fn percent(t: Option<f64>) -> String {
    match t {
        None => "none".into(),
        Some(0.0) => "0%".into(),
        Some(t) if t > 0.0 => format!("+{}%", significant(t * 100.0, 4)),
        Some(t) => format!("{}%", significant(t * 100.0, 4)),
    }
}

fn allowed(c: &Check) -> String {
    let n = |x: f64| significant(x, 6);
    match (c.min_allowed, c.max_allowed) {
        (Some(lo), Some(hi)) => format!("{} .. {}", n(lo), n(hi)),
        (Some(lo), None) => format!(">= {}", n(lo)),
        (None, Some(hi)) => format!("<= {}", n(hi)),
        (None, None) => "any".into(),
    }
}

fn summary(o: &Outcome) -> String {
    format!(
        "{} references: {} pass, {} fail, {} not measured",
        o.checks.len(),
        o.count(Verdict::Pass),
        o.count(Verdict::Fail),
        o.count(Verdict::NotMeasured)
    )
}

/// The checks under [`HEADERS`], numbers aligned right, with each row's verdict as `verdict`
/// gives it.
fn check_table(o: &Outcome, verdict: impl Fn(&Check) -> Cell) -> Table {
    let columns = HEADERS
        .iter()
        .zip(NUMERIC)
        .map(|(h, numeric)| (*h, if numeric { Align::Right } else { Align::Left }));
    let mut t = Table::with_columns(columns);
    for c in &o.checks {
        let mut row: Vec<Cell> = cells(c).into_iter().map(Cell::text).collect();
        row[10] = verdict(c);
        t.push_row(row);
    }
    t
}

fn table(o: &Outcome) -> String {
    let verdict = |c: &Check| Cell::text(verdict_text(c));
    format!(
        "fabbench reference check: run {} against {}\n{}{}\n",
        o.run,
        o.references,
        check_table(o, verdict).to_text(),
        summary(o)
    )
}

fn markdown(o: &Outcome) -> String {
    let failed = o.checks.len() - o.count(Verdict::Pass);
    let title = if failed == 0 {
        format!("all {} passed", o.checks.len())
    } else {
        format!("{failed} of {} failed", o.checks.len())
    };
    let verdict = |c: &Check| {
        Cell::markdown(match c.verdict {
            Verdict::Pass => "✅ pass",
            Verdict::Fail => "❌ **fail**",
            Verdict::NotMeasured => "❌ **not measured**",
        })
    };
    format!(
        "### fabbench reference check: {title}\n\nRun `{}` against `{}`.\n\n{}\n{}.\n",
        o.run,
        o.references,
        check_table(o, verdict).to_markdown(),
        summary(o)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::references::check::check;
    use crate::references::check::tests::{reference, run};

    fn outcome() -> Outcome {
        let mut open = reference(64, 3.0, None);
        open.lower = Some(-0.1);
        let refs = [
            reference(8, 1.5, Some(0.05)),
            reference(8, 1.4, Some(0.05)),
            open,
            reference(16, 1.0, None),
        ];
        check(&run(), &refs, "refs.toml").unwrap()
    }

    #[test]
    fn the_table_lines_up_and_ends_with_the_counts() {
        let t = render(&outcome(), Format::Table);
        let expected = "\
fabbench reference check: run 20261123T000000Z-osu_latency-rapidio against refs.toml
#  suite        fabric   ranks  point    metric   measured  reference  tolerance   allowed         verdict
1  osu_latency  rapidio      2  size 8   latency       1.5     1.5 us  -5%, +5%    1.425 .. 1.575  pass
2  osu_latency  rapidio      2  size 8   latency       1.5     1.4 us  -5%, +5%    1.33 .. 1.47    FAIL
3  osu_latency  rapidio      2  size 64  latency         3       3 us  -10%, none  >= 2.7          pass
4  osu_latency  rapidio      2  size 16  latency         -       1 us  none, none  any             FAIL: not measured
4 references: 2 pass, 1 fail, 1 not measured
";
        assert_eq!(t, expected, "{t}");
    }

    #[test]
    fn markdown_titles_the_failures_and_marks_each_row() {
        let m = render(&outcome(), Format::Markdown);
        assert!(
            m.starts_with("### fabbench reference check: 2 of 4 failed\n"),
            "{m}"
        );
        assert!(m.contains("| # | suite | fabric | ranks |"), "{m}");
        assert!(m.contains("| ---: | --- | --- | ---: |"), "{m}");
        assert!(m.contains("| 2 | osu_latency | rapidio | 2 | size 8 | latency | 1.5 | 1.4 us | -5%, +5% | 1.33 .. 1.47 | ❌ **fail** |"), "{m}");
        assert!(
            m.contains("❌ **not measured**") && m.contains("✅ pass"),
            "{m}"
        );
    }

    #[test]
    fn tolerances_print_as_signed_percentages() {
        assert_eq!(percent(Some(-0.05)), "-5%");
        assert_eq!(percent(Some(0.125)), "+12.5%");
        assert_eq!(percent(Some(-0.0)), "0%");
        assert_eq!(percent(Some(0.0)), "0%");
        assert_eq!(percent(None), "none");
    }

    #[test]
    fn json_holds_every_number_in_full() {
        let j: serde_json::Value = serde_json::from_str(&render(&outcome(), Format::Json)).unwrap();
        assert_eq!(j["passed"], false);
        assert_eq!((j["pass"].as_u64(), j["fail"].as_u64()), (Some(2), Some(1)));
        assert_eq!(j["not_measured"], 1);
        let c = &j["checks"][2];
        assert_eq!(c["verdict"], "pass");
        assert_eq!(c["max_allowed"], serde_json::Value::Null);
        assert_eq!(c["measured"], 3.0);
        assert_eq!(j["checks"][3]["verdict"], "not_measured");
        assert_eq!(j["checks"][3]["measured"], serde_json::Value::Null);
    }
}
