//! HTML (`--format html`): one self-contained HTML5 page a colleague opens in a browser on a
//! laptop, with no file or network resource beside it: the style is inline CSS, and every
//! figure's SVG is inlined (its XML declaration and doctype removed, which are not allowed
//! inside HTML) at the page's full width. The page opens with a summary ([`summary`]); each
//! table scrolls inside its own box with the size column held in view, so a wide table never
//! pushes the page sideways; ratio cells carry a sign and a colour saying better or worse by
//! the metric's direction ([`crate::mark`]); settings are said once ([`settings`]). Text from
//! the runs is escaped.

mod settings;
mod summary;

use super::{sections, value_text, Exporter, Section, MISSING};
use crate::mark::mark;
use crate::{CrossRunReport, Figure, ReportError};

pub struct Html;

const STYLE: &str = "\
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;padding:1.2em 2em 3em;\
color:#1a1a1a;line-height:1.4}\
h1{margin:0 0 .4em;font-size:1.6em}\
h2{margin:1.6em 0 .3em;font-size:1.2em}\
h2.in-summary{margin-top:1em;font-size:1em}\
p.note,ul.basis{color:#444;font-size:.9em;margin:.3em 0}\
section.summary{background:#f6f8fa;border:1px solid #d8dee4;border-radius:6px;padding:.6em 1.2em .8em}\
section.summary dl{display:grid;grid-template-columns:max-content 1fr;gap:.2em 1.2em;margin:.3em 0}\
section.summary dt{font-weight:600}\
section.summary dd{margin:0}\
div.scroll{overflow-x:auto;width:fit-content;max-width:100%;margin:.3em 0 1em;border:1px solid #d8dee4;border-radius:4px}\
table{border-collapse:separate;border-spacing:0;background:#fff}\
th,td{border-right:1px solid #e4e8ec;border-bottom:1px solid #e4e8ec;padding:.2em .6em;white-space:nowrap}\
thead th{background:#eef1f4;text-align:center;vertical-align:bottom}\
th.group{border-bottom:2px solid #b8c0c8}\
.idx{position:sticky;left:0;z-index:1;background:#f6f8fa;text-align:right;box-shadow:inset -2px 0 0 #b8c0c8}\
thead .idx{background:#eef1f4;z-index:2}\
table.counts .idx,table.runs .idx{text-align:left}\
td.num{text-align:right;font-variant-numeric:tabular-nums}\
td.missing{color:#999;text-align:center}\
td.better,span.better{color:#0b6b2b}\
td.better{background:#e3f4e8}\
td.worse,span.worse{color:#a4161a}\
td.worse{background:#fde7e7}\
td.same,span.same,span.of{color:#555}\
td.ratio.first{border-left:2px solid #b8c0c8}\
td.wrap{white-space:normal;min-width:16em}\
code,td.id{font-family:ui-monospace,'DejaVu Sans Mono',monospace;font-size:.85em}\
p.settings{margin:.2em 0;font-size:.9em}\
span.kv{display:inline-block;margin:0 .9em .1em 0;font-family:ui-monospace,'DejaVu Sans Mono',monospace;font-size:.9em;overflow-wrap:anywhere}\
mark{background:#fff1b8;padding:0 .2em;border-radius:2px}\
figure.chart{margin:1em 0 2em}\
figure.chart figcaption{font-weight:600;margin-bottom:.3em}\
figure.chart svg{display:block;width:100%;height:auto}";

/// `s` with the characters HTML gives a meaning to replaced by references, for text and for
/// attribute values alike.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The SVG element of an SVG document: the `<?xml ...?>` declaration and any `<!DOCTYPE ...>`
/// before it are dropped.
pub fn svg_element(svg: &str) -> &str {
    let mut s = svg.trim_start();
    loop {
        let end = if s.starts_with("<?xml") {
            s.find("?>").map(|e| e + 2)
        } else if s.starts_with("<!DOCTYPE") || s.starts_with("<!doctype") {
            s.find('>').map(|e| e + 1)
        } else {
            None
        };
        match end {
            Some(e) => s = s[e..].trim_start(),
            None => return s.trim_end(),
        }
    }
}

/// A value cell; `class` adds to `num` (the index column's `idx`).
fn value_cell(v: Option<f64>, class: &str) -> String {
    match v {
        None => format!("<td class=\"missing\">{MISSING}</td>"),
        Some(v) => format!("<td class=\"num{class}\">{}</td>", escape(&value_text(v))),
    }
}

/// A ratio cell: its sign and class by the metric's direction, when the direction is known.
fn ratio_cell(r: Option<f64>, better: Option<bench_core::measure::Better>, first: bool) -> String {
    let edge = if first { " first" } else { "" };
    match (r, better) {
        (None, _) => format!("<td class=\"missing ratio{edge}\">{MISSING}</td>"),
        (Some(r), None) => format!(
            "<td class=\"num ratio{edge}\">{}</td>",
            super::ratio_text(r)
        ),
        (Some(r), Some(b)) => {
            let m = mark(r, b);
            format!(
                "<td class=\"num ratio {}{edge}\">{} {}</td>",
                m.word(),
                m.sign(),
                super::ratio_text(r)
            )
        }
    }
}

/// A span per `name=value`.
fn settings_spans(settings: &[String]) -> String {
    settings
        .iter()
        .map(|kv| format!("<span class=\"kv\">{}</span>", escape(kv)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The table of columns: each one's name, what ran, where and when, its whole run id, and the
/// settings that set it apart; then the settings shared, once.
fn runs_table(report: &CrossRunReport) -> String {
    let t = &report.table;
    let split = settings::split(&t.columns);
    let mut out = String::from(
        "<h2 id=\"runs\">Columns and runs</h2>\n<div class=\"scroll\"><table class=\"runs\">\n<thead><tr><th class=\"idx\">column</th><th>run id</th><th>started</th><th>host</th><th>ranks</th><th>settings of its own</th></tr></thead>\n<tbody>\n",
    );
    for (c, own) in t.columns.iter().zip(&split.per_column) {
        let own = match own.is_empty() {
            true => "<span class=\"of\">none</span>".to_string(),
            false => own
                .iter()
                .map(|kv| format!("<span class=\"kv\"><mark>{}</mark></span>", escape(kv)))
                .collect::<Vec<_>>()
                .join(" "),
        };
        let reference = if Some(c.input) == t.reference {
            " <small>(reference)</small>"
        } else {
            ""
        };
        out.push_str(&format!(
            "<tr><th class=\"idx\">{}{reference}</th><td class=\"id\">{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"wrap\">{own}</td></tr>\n",
            escape(&c.label),
            escape(&c.run_named()),
            escape(&c.start_time.replacen('T', " ", 1)),
            escape(&c.host),
            c.ranks,
        ));
    }
    out.push_str("</tbody>\n</table></div>\n");
    if !split.common.is_empty() {
        out.push_str(&format!(
            "<p class=\"settings\"><b>Every column ran with</b> {}</p>\n",
            settings_spans(&split.common)
        ));
    }
    for (fabric, shared) in &split.per_fabric {
        out.push_str(&format!(
            "<p class=\"settings\"><b>Every {} column ran with</b> {}</p>\n",
            escape(fabric),
            settings_spans(shared)
        ));
    }
    out
}

/// The sentence saying what the ratio cells' marks mean.
fn marks_legend(report: &CrossRunReport) -> String {
    let t = &report.table;
    let refs: Vec<&str> = t
        .ratios
        .iter()
        .map(|r| t.columns[r.against].label.as_str())
        .fold(Vec::new(), |mut v, l| {
            if !v.contains(&l) {
                v.push(l);
            }
            v
        });
    format!(
        "<p class=\"note\">Ratio cells are a column's value over the reference's ({}) at the \
         same point. <span class=\"better\">▲ green: better</span>, \
         <span class=\"worse\">▼ red: worse</span>, <span class=\"same\">= the same to three \
         decimals</span>; better is lower for a time (latency) and higher for a rate \
         (bandwidth), as each table's heading says.</p>\n",
        refs.iter()
            .map(|l| format!("<b>{}</b>", escape(l)))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// One section's table in its scrolling box: the index column held in view, the values, then
/// the ratios under a heading naming what they are against.
fn section_table(report: &CrossRunReport, s: &Section<'_>) -> String {
    let t = &report.table;
    let better = t.better(s.suite, s.metric);
    let mut out = format!(
        "<h2>{}{}</h2>\n<div class=\"scroll\"><table class=\"data\">\n<thead><tr>",
        escape(&s.title()),
        better
            .map(|b| format!(" <small>· {}</small>", summary::direction_words(b)))
            .unwrap_or_default()
    );
    let index = s.index_header();
    for (k, h) in index.iter().enumerate() {
        let class = if k == 0 { " class=\"idx\"" } else { "" };
        out.push_str(&format!("<th rowspan=\"2\"{class}>{h}</th>"));
    }
    out.push_str(&format!(
        "<th colspan=\"{}\" class=\"group\">{} ({})</th>",
        t.columns.len(),
        escape(s.metric),
        escape(s.unit)
    ));
    // One reference column for every ratio: it heads the group, and each ratio is named by
    // its column alone.
    let against: Vec<usize> = t.ratios.iter().map(|r| r.against).collect();
    let one_against = against.windows(2).all(|w| w[0] == w[1]);
    if !t.ratios.is_empty() {
        let head = match one_against {
            true => format!("ratio to {}", escape(&t.columns[against[0]].label)),
            false => "ratio to the reference".to_string(),
        };
        out.push_str(&format!(
            "<th colspan=\"{}\" class=\"group\">{head}</th>",
            t.ratios.len()
        ));
    }
    out.push_str("</tr>\n<tr>");
    for c in &t.columns {
        out.push_str(&format!("<th>{}</th>", escape(&c.label)));
    }
    for r in &t.ratios {
        let name = match one_against {
            true => escape(&t.columns[r.column].label),
            false => format!(
                "{} ÷ {}",
                escape(&t.columns[r.column].label),
                escape(&t.columns[r.against].label)
            ),
        };
        out.push_str(&format!("<th>{name}</th>"));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for r in s.rows {
        out.push_str("<tr>");
        for (k, c) in s.index_cells(r).iter().enumerate() {
            let class = if k == 0 { "idx num" } else { "" };
            out.push_str(&format!("<th class=\"{class}\">{}</th>", escape(c)));
        }
        for v in &r.values {
            out.push_str(&value_cell(*v, ""));
        }
        for (k, v) in r.ratios.iter().enumerate() {
            out.push_str(&ratio_cell(*v, better, k == 0));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table></div>\n");
    out
}

impl Exporter for Html {
    fn export(&self, report: &CrossRunReport, figures: &[Figure]) -> Result<Vec<u8>, ReportError> {
        let rows = report.table.rows()?;
        let sections = sections(&rows);
        let mut out = String::new();
        out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
        out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
        out.push_str("<title>fabbench report</title>\n");
        out.push_str(&format!("<style>{STYLE}</style>\n</head>\n<body>\n"));
        out.push_str("<h1>fabbench report</h1>\n");
        out.push_str(&summary::html(report, &sections));
        // The numbers first, then the charts; what each column ran with (its whole run id,
        // its settings) is reference matter, at the end.
        if !report.table.ratios.is_empty() {
            out.push_str(&marks_legend(report));
        }
        for s in &sections {
            out.push_str(&section_table(report, s));
        }
        if !figures.is_empty() {
            out.push_str("<h2 id=\"figures\">Figures</h2>\n");
            for f in figures {
                out.push_str(&format!(
                    "<figure class=\"chart\">\n<figcaption>{}</figcaption>\n{}\n</figure>\n",
                    escape(&f.title),
                    svg_element(&f.svg)
                ));
            }
        }
        out.push_str(&runs_table(report));
        out.push_str("</body>\n</html>\n");
        Ok(out.into_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{export, figure};
    use super::*;

    #[test]
    fn a_standalone_page_with_escaped_text_and_inline_svgs() {
        let out = export(&Html, &[figure()]);
        assert!(
            out.starts_with(
                "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            ),
            "{out}"
        );
        assert!(out.ends_with("</body>\n</html>\n"), "{out}");
        // Nothing fetched from elsewhere: no links, scripts, or sources.
        for banned in ["<link", "<script", "src=", "href=", "url(", "@import"] {
            assert!(!out.contains(banned), "{banned} in {out}");
        }
        // The run id B<&> and the figure title are text, not markup.
        assert!(
            out.contains("<td class=\"id\">B&lt;&amp;&gt;</td>"),
            "{out}"
        );
        assert!(
            out.contains("<figcaption>latency &lt;A &amp; B&gt;</figcaption>\n<svg xmlns="),
            "{out}"
        );
        assert!(!out.contains("<?xml"), "{out}");
        assert!(!out.contains("B<&>"), "{out}");
        assert_eq!(out.matches("<svg").count(), 1);
        // Every element opened is closed.
        for tag in [
            "table",
            "thead",
            "tbody",
            "tr",
            "h1",
            "h2",
            "figure",
            "figcaption",
            "p",
            "style",
            "head",
            "body",
            "html",
            "svg",
            "div",
            "section",
            "dl",
            "ul",
            "li",
            "span",
            "mark",
        ] {
            assert_eq!(
                out.matches(&format!("<{tag}>")).count() + out.matches(&format!("<{tag} ")).count(),
                out.matches(&format!("</{tag}>")).count(),
                "<{tag}> in {out}"
            );
        }
    }

    #[test]
    fn tables_scroll_in_their_own_box_with_the_size_column_held() {
        let out = export(&Html, &[]);
        // Every table sits in a scrolling box, which the style makes scroll sideways.
        assert_eq!(
            out.matches("<table").count(),
            out.matches("<div class=\"scroll\"><table").count(),
            "{out}"
        );
        assert!(STYLE.contains("div.scroll{overflow-x:auto"), "{STYLE}");
        assert!(STYLE.contains(".idx{position:sticky;left:0"), "{STYLE}");
        assert!(STYLE.contains("figure.chart svg{display:block;width:100%"));
        // The rows: size (held), the values, then the ratio marked by the metric's direction
        // (latency: 5.00 over 4.00 is worse).
        assert!(out.contains(
            "<tr><th class=\"idx num\">16</th><td class=\"num\">4.00</td><td class=\"num\">5.00</td><td class=\"num ratio worse first\">▼ 1.250</td></tr>"
        ), "{out}");
        assert!(out.contains(
            "<tr><th class=\"idx num\">1</th><td class=\"num\">2.00</td><td class=\"missing\">-</td><td class=\"missing ratio first\">-</td></tr>"
        ), "{out}");
        assert!(out.contains("lower is better"), "{out}");
        assert!(out.contains("▲ green: better"), "{out}");
    }

    #[test]
    fn the_summary_counts_cells_and_says_what_they_rest_on() {
        let out = export(&Html, &[]);
        assert!(
            out.contains("<dd>osu_latency (1 B to 1 KiB, 3 sizes)</dd>"),
            "{out}"
        );
        // One point in common, worse; both columns emulated, so no noise to speak of.
        assert!(
            out.contains("▲ 0 better</span> <span class=\"worse\">▼ 1 worse</span> <span class=\"of\">of 1</span>"),
            "{out}"
        );
        assert!(out.contains("both emulated in virtual time"), "{out}");
    }

    #[test]
    fn settings_are_said_once_and_each_columns_own_highlighted() {
        let out = export(&Html, &[]);
        assert_eq!(out.matches("eager_limit=16KiB").count(), 1, "{out}");
        assert!(out.contains("<mark>eager_limit=16KiB</mark>"), "{out}");
        assert!(out.contains("<mark>eager_limit=4KiB</mark>"), "{out}");
    }

    #[test]
    fn escaping_covers_text_and_attributes() {
        assert_eq!(escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
    }

    #[test]
    fn the_svg_element_alone() {
        assert_eq!(
            svg_element("<?xml version=\"1.0\"?>\n<!DOCTYPE svg PUBLIC \"x\" \"y\">\n<svg/>\n"),
            "<svg/>"
        );
        assert_eq!(svg_element("<svg></svg>"), "<svg></svg>");
    }
}
