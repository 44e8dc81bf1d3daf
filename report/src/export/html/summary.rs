//! The box at the top of the page: what ran (suites and their sizes), where (hosts), and, with
//! a reference, how many cells of each table are better or worse than it. The counts say what
//! they rest on: one run a side gives a ratio with no interval, so for a fabric in real time
//! the page says it is not a verdict; on emulated fabrics (virtual time, the same numbers on
//! every run) a difference is the model's, not noise.

use bench_core::measure::Better;

use super::escape;
use crate::export::Section;
use crate::mark::Tally;
use crate::{Column, CrossRunReport};

/// `4096` as `4 KiB`, `1` as `1 B`.
pub fn bytes_text(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n;
    let mut u = 0;
    while v >= 1024 && v.is_multiple_of(1024) && u + 1 < UNITS.len() {
        v /= 1024;
        u += 1;
    }
    format!("{v} {}", UNITS[u])
}

/// "lower is better" or "higher is better".
pub fn direction_words(better: Better) -> &'static str {
    match better {
        Better::Lower => "lower is better",
        Better::Higher => "higher is better",
    }
}

/// What ran: each suite once, with its sizes (or how many points without a size).
fn what_ran(sections: &[Section<'_>]) -> String {
    let mut suites: Vec<&str> = Vec::new();
    for s in sections {
        if !suites.contains(&s.suite) {
            suites.push(s.suite);
        }
    }
    suites
        .iter()
        .map(|suite| {
            let rows = sections
                .iter()
                .filter(|s| s.suite == *suite)
                .flat_map(|s| s.rows);
            let mut sizes: Vec<u64> = rows.clone().filter_map(|r| r.size).collect();
            sizes.sort_unstable();
            sizes.dedup();
            match (sizes.first(), sizes.last()) {
                (Some(lo), Some(hi)) if lo != hi => format!(
                    "{suite} ({} to {}, {} sizes)",
                    bytes_text(*lo),
                    bytes_text(*hi),
                    sizes.len()
                ),
                (Some(one), _) => format!("{suite} ({})", bytes_text(*one)),
                _ => {
                    let mut points: Vec<&str> = rows.map(|r| r.params.as_str()).collect();
                    points.sort_unstable();
                    points.dedup();
                    let n = points.len();
                    format!("{suite} ({n} point{})", if n == 1 { "" } else { "s" })
                }
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Each of the columns' values once, in column order.
fn distinct<'a>(columns: &'a [Column], of: impl Fn(&'a Column) -> &'a str) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for c in columns {
        if !out.contains(&of(c)) {
            out.push(of(c));
        }
    }
    out
}

fn emulated(c: &Column) -> bool {
    c.kind.starts_with("emulated")
}

/// What a ratio of `column` over `against` can be taken for.
pub fn ratio_basis(column: &Column, against: &Column) -> &'static str {
    if emulated(column) && emulated(against) {
        "both emulated in virtual time, where a run gives the same numbers every time: a \
         difference is the model's, not noise"
    } else {
        "ratio of headline values (each the mean of the point's best batch), one run per side: \
         not a verdict"
    }
}

/// The summary box.
pub fn html(report: &CrossRunReport, sections: &[Section<'_>]) -> String {
    let t = &report.table;
    let mut out = String::from("<section class=\"summary\">\n<dl>\n");
    let mut item = |term: &str, text: String| {
        out.push_str(&format!("<dt>{term}</dt><dd>{text}</dd>\n"));
    };
    item("What ran", escape(&what_ran(sections)));
    let fabrics: Vec<String> = distinct(&t.columns, |c| &c.fabric)
        .iter()
        .map(|f| {
            let kind = t.columns.iter().find(|c| c.fabric == *f).map(|c| &c.kind);
            format!("{f} ({})", kind.map(String::as_str).unwrap_or_default())
        })
        .collect();
    item(
        "On",
        escape(&format!(
            "{}; {} run{}, {} column{}",
            fabrics.join(", "),
            report.runs,
            if report.runs == 1 { "" } else { "s" },
            t.columns.len(),
            if t.columns.len() == 1 { "" } else { "s" },
        )),
    );
    let hosts = distinct(&t.columns, |c| &c.host);
    item(
        if hosts.len() == 1 { "Host" } else { "Hosts" },
        escape(&hosts.join(", ")),
    );
    item(
        "Tables",
        escape(&format!(
            "{}; the columns' run ids and settings are at the end, under Columns and runs",
            crate::export::summary(report)
        )),
    );
    if let Some(r) = t.reference {
        let names = distinct(
            &t.columns
                .iter()
                .filter(|c| c.input == r)
                .cloned()
                .collect::<Vec<_>>(),
            |c| &c.label,
        )
        .iter()
        .map(|l| escape(l))
        .collect::<Vec<_>>()
        .join(", ");
        item("Reference", format!("<b>{names}</b>"));
    }
    out.push_str("</dl>\n");
    if t.reference.is_some() && !t.ratios.is_empty() {
        out.push_str(&against_reference(report, sections));
    }
    out.push_str("</section>\n");
    out
}

/// The table of counts: a row per section, a column per ratio; then what each ratio rests on.
fn against_reference(report: &CrossRunReport, sections: &[Section<'_>]) -> String {
    let t = &report.table;
    let mut out = String::from(
        "<h2 class=\"in-summary\">Against the reference</h2>\n<div class=\"scroll\"><table class=\"counts\">\n<thead><tr><th class=\"idx\">table</th>",
    );
    for r in &t.ratios {
        out.push_str(&format!("<th>{}</th>", escape(&t.columns[r.column].label)));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for s in sections {
        let better = t.better(s.suite, s.metric);
        out.push_str(&format!(
            "<tr><th class=\"idx\">{}<br><small>{}</small></th>",
            escape(&s.title()),
            better.map(direction_words).unwrap_or("direction unknown")
        ));
        for (k, _) in t.ratios.iter().enumerate() {
            let Some(better) = better else {
                out.push_str("<td class=\"missing\">-</td>");
                continue;
            };
            let tally = Tally::of(s.rows.iter().map(|row| row.ratios[k]), better);
            if tally.total() == 0 {
                out.push_str("<td class=\"missing\">-</td>");
                continue;
            }
            out.push_str(&format!(
                "<td><span class=\"better\">▲ {} better</span> <span class=\"worse\">▼ {} worse</span>{} <span class=\"of\">of {}</span></td>",
                tally.better,
                tally.worse,
                match tally.same {
                    0 => String::new(),
                    n => format!(" <span class=\"same\">= {n} same</span>"),
                },
                tally.total()
            ));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table></div>\n<ul class=\"basis\">\n");
    // Ratios resting on the same thing against the same column are said in one line.
    let mut lines: Vec<(usize, &str, Vec<&str>)> = Vec::new();
    for r in &t.ratios {
        let (c, a) = (&t.columns[r.column], &t.columns[r.against]);
        let basis = ratio_basis(c, a);
        match lines
            .iter_mut()
            .find(|(against, b, _)| *against == r.against && *b == basis)
        {
            Some((_, _, cols)) => cols.push(&c.label),
            None => lines.push((r.against, basis, vec![&c.label])),
        }
    }
    for (against, basis, cols) in lines {
        out.push_str(&format!(
            "<li>{} against <b>{}</b>: {basis}.</li>\n",
            cols.iter()
                .map(|l| format!("<b>{}</b>", escape(l)))
                .collect::<Vec<_>>()
                .join(", "),
            escape(&t.columns[against].label),
        ));
    }
    out.push_str(
        "</ul>\n<p class=\"note\">A cell counts as the same when its ratio prints as 1.000; \
         nothing here estimates noise.</p>\n",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_in_binary_units() {
        assert_eq!(bytes_text(1), "1 B");
        assert_eq!(bytes_text(4096), "4 KiB");
        assert_eq!(bytes_text(3 << 20), "3 MiB");
        assert_eq!(bytes_text(1000), "1000 B");
        assert_eq!(bytes_text(0), "0 B");
    }
}
