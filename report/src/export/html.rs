//! HTML (`--format html`): one self-contained HTML5 page a colleague opens in a browser, with
//! no file or network resource beside it: the style is inline CSS, and every figure's SVG is
//! inlined (its XML declaration and doctype removed, which are not allowed inside HTML). Text
//! from the runs is escaped.

use super::{reference_note, sections, summary, value_cells, value_headers, Exporter, MISSING};
use crate::{CrossRunReport, Figure, ReportError};

pub struct Html;

const STYLE: &str =
    "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2em;color:#1a1a1a}\
table{border-collapse:collapse;margin:0.5em 0 1.5em}\
th,td{border:1px solid #ccc;padding:0.2em 0.6em}\
th{background:#f2f2f2}\
td.num{text-align:right;font-variant-numeric:tabular-nums}\
td.missing{color:#999;text-align:center}\
table.legend td,table.legend th{vertical-align:top}\
table.legend td.settings{max-width:60em;color:#444;font-family:monospace;font-size:0.85em}\
figure{margin:1em 0 2em}\
figure svg{max-width:100%;height:auto}";

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

fn cell(text: &str, numeric: bool) -> String {
    if text == MISSING {
        format!("<td class=\"missing\">{MISSING}</td>")
    } else if numeric {
        format!("<td class=\"num\">{}</td>", escape(text))
    } else {
        format!("<td>{}</td>", escape(text))
    }
}

impl Exporter for Html {
    fn export(&self, report: &CrossRunReport, figures: &[Figure]) -> Result<Vec<u8>, ReportError> {
        let mut out = String::new();
        out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
        out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
        out.push_str("<title>fabbench report</title>\n");
        out.push_str(&format!("<style>{STYLE}</style>\n</head>\n<body>\n"));
        out.push_str("<h1>fabbench report</h1>\n");
        out.push_str(&format!("<p>{}.</p>\n", escape(&summary(report))));
        // The settings line runs to hundreds of characters: it gets a row of its own under
        // its column's facts, so the short facts keep their width and the line wraps.
        out.push_str("<table class=\"legend\">\n<thead><tr><th>column</th><th>run</th><th>fabric</th><th>kind</th><th>host</th><th>started</th></tr></thead>\n<tbody>\n");
        for c in &report.table.columns {
            out.push_str(&format!(
                "<tr><th rowspan=\"2\">{}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n<tr><td class=\"settings\" colspan=\"5\">{}</td></tr>\n",
                escape(&c.label),
                escape(&c.run_named()),
                escape(&c.fabric),
                escape(&c.kind),
                escape(&c.host),
                escape(&c.start_time),
                escape(&c.settings_line)
            ));
        }
        out.push_str("</tbody>\n</table>\n");
        if let Some(note) = reference_note(report) {
            out.push_str(&format!("<p>{}.</p>\n", escape(&note)));
        }
        let rows = report.table.rows()?;
        let values = value_headers(report);
        for s in sections(&rows) {
            out.push_str(&format!(
                "<h2>{}</h2>\n<table>\n<thead><tr>",
                escape(&s.title())
            ));
            let index = s.index_header();
            for h in index.iter().copied().chain(values.iter().copied()) {
                out.push_str(&format!("<th>{}</th>", escape(h)));
            }
            out.push_str("</tr></thead>\n<tbody>\n");
            for r in s.rows {
                out.push_str("<tr>");
                for (h, c) in index.iter().zip(s.index_cells(r)) {
                    out.push_str(&cell(&c, *h == "size"));
                }
                for c in value_cells(r) {
                    out.push_str(&cell(&c, true));
                }
                out.push_str("</tr>\n");
            }
            out.push_str("</tbody>\n</table>\n");
        }
        if !figures.is_empty() {
            out.push_str("<h2 id=\"figures\">Figures</h2>\n");
            for f in figures {
                out.push_str(&format!(
                    "<figure>\n<h3>{}</h3>\n{}\n</figure>\n",
                    escape(&f.title),
                    svg_element(&f.svg)
                ));
            }
        }
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
        assert!(out.contains("<th>B&lt;&amp;&gt;</th>"), "{out}");
        assert!(
            out.contains("<h3>latency &lt;A &amp; B&gt;</h3>\n<svg xmlns="),
            "{out}"
        );
        assert!(!out.contains("<?xml"), "{out}");
        assert!(!out.contains("B<&>"), "{out}");
        assert_eq!(out.matches("<svg").count(), 1);
        assert!(out.contains(
            "<tr><td class=\"num\">16</td><td class=\"num\">4.00</td><td class=\"num\">5.00</td><td class=\"num\">1.250</td></tr>"
        ), "{out}");
        assert!(out.contains(
            "<tr><td class=\"num\">1</td><td class=\"num\">2.00</td><td class=\"missing\">-</td><td class=\"missing\">-</td></tr>"
        ), "{out}");
        // Every element opened is closed.
        for tag in [
            "table", "thead", "tbody", "tr", "h1", "h2", "h3", "figure", "p", "style", "head",
            "body", "html", "svg",
        ] {
            assert_eq!(
                out.matches(&format!("<{tag}>")).count() + out.matches(&format!("<{tag} ")).count(),
                out.matches(&format!("</{tag}>")).count(),
                "<{tag}> in {out}"
            );
        }
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
