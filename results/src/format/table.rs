//! The one table writer behind every table fabbench prints (autotune's, characterise's and
//! calibrate's report.md, compare's and its reference checks', history's, report's): a header,
//! rows of cells and an alignment per column, rendered as aligned text for a terminal or as a
//! GitHub-flavoured Markdown pipe table. Markdown cells follow one escaping rule,
//! [`escape_markdown`], so that no text from a run (a label, a host name, a setting, a verdict's
//! reason) can split a cell, end a row or turn into markup; a caller that means a cell to be
//! Markdown (bold, code) says so with [`Cell::markdown`]. Text is padded by pushing spaces, not
//! by a format width, which `std::fmt` caps at 65,535. Every header and cell is printed as
//! [`crate::printable::cell`] makes it, in both forms: control characters escaped (an ESC in a
//! host name cannot drive the terminal) and anything past 256 characters cut with an ellipsis.

use crate::printable;

/// Which side of its column a cell sits on: numbers go right so their digits line up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// How Markdown's delimiter row (the one under the header) is spaced. Both render the same;
/// each writer keeps the spacing its output always had, so that existing files and the tests
/// that pin them do not change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DelimiterRow {
    /// `| --- | ---: |`, spaced as the header and rows are.
    Padded,
    /// `|---|---:|`.
    Tight,
}

/// One cell: text, escaped when the table is Markdown, or Markdown the caller wrote, put in as
/// it is (text inside it must have gone through [`escape_markdown`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    content: String,
    is_markdown: bool,
}

impl Cell {
    pub fn text(text: impl Into<String>) -> Cell {
        Cell {
            content: text.into(),
            is_markdown: false,
        }
    }

    pub fn markdown(markdown: impl Into<String>) -> Cell {
        Cell {
            content: markdown.into(),
            is_markdown: true,
        }
    }

    fn as_markdown(&self) -> String {
        if self.is_markdown {
            shown(&self.content)
        } else {
            escape_markdown(&shown(&self.content))
        }
    }
}

impl From<String> for Cell {
    fn from(text: String) -> Cell {
        Cell::text(text)
    }
}

impl From<&str> for Cell {
    fn from(text: &str) -> Cell {
        Cell::text(text)
    }
}

impl From<&String> for Cell {
    fn from(text: &String) -> Cell {
        Cell::text(text.as_str())
    }
}

/// A table: a header, an alignment per column, and rows of cells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    headers: Vec<String>,
    aligns: Vec<Align>,
    rows: Vec<Vec<Cell>>,
    delimiter_row: DelimiterRow,
}

impl Table {
    /// A table with these column headers, every column aligned left.
    pub fn new<S: Into<String>>(headers: impl IntoIterator<Item = S>) -> Table {
        Table::with_columns(headers.into_iter().map(|h| (h, Align::Left)))
    }

    /// A table with these columns, each with its alignment.
    pub fn with_columns<S: Into<String>>(columns: impl IntoIterator<Item = (S, Align)>) -> Table {
        let (headers, aligns) = columns.into_iter().map(|(h, a)| (h.into(), a)).unzip();
        Table {
            headers,
            aligns,
            rows: Vec::new(),
            delimiter_row: DelimiterRow::Padded,
        }
    }

    /// The same table with Markdown's delimiter row spaced as `delimiter_row` says.
    pub fn delimiter_row(mut self, delimiter_row: DelimiterRow) -> Table {
        self.delimiter_row = delimiter_row;
        self
    }

    /// Adds a row. A row has a cell per column: missing cells print empty, and cells beyond
    /// the header's columns are not printed.
    pub fn push_row<C: Into<Cell>>(&mut self, cells: impl IntoIterator<Item = C>) {
        let row: Vec<Cell> = cells.into_iter().map(Into::into).collect();
        debug_assert!(
            row.len() <= self.headers.len(),
            "a row of {} cells in a table of {} columns",
            row.len(),
            self.headers.len()
        );
        self.rows.push(row);
    }

    /// Adds every row of `rows`.
    pub fn extend_rows<R, C>(&mut self, rows: impl IntoIterator<Item = R>)
    where
        R: IntoIterator<Item = C>,
        C: Into<Cell>,
    {
        for r in rows {
            self.push_row(r);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Aligned text: the header, then a line per row; columns two spaces apart, each as wide
    /// as its widest cell (in characters), and no line ends in spaces. A line break in a cell
    /// is a space, as in Markdown: it would end the row.
    pub fn to_text(&self) -> String {
        let columns = self.headers.len();
        let header: Vec<String> = self.headers.iter().map(|h| shown(h)).collect();
        let rows: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| (0..columns).map(|c| shown(cell(r, c))).collect())
            .collect();
        let widths: Vec<usize> = (0..columns)
            .map(|c| {
                rows.iter()
                    .map(|r| r[c].chars().count())
                    .chain([header[c].chars().count()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut out = String::new();
        for cells in [&header].into_iter().chain(&rows) {
            let start = out.len();
            for (c, text) in cells.iter().enumerate() {
                if c > 0 {
                    out.push_str("  ");
                }
                let pad = widths[c] - text.chars().count();
                match self.aligns[c] {
                    Align::Left => {
                        out.push_str(text);
                        push_spaces(&mut out, pad);
                    }
                    Align::Right => {
                        push_spaces(&mut out, pad);
                        out.push_str(text);
                    }
                }
            }
            out.truncate(start + out[start..].trim_end().len());
            out.push('\n');
        }
        out
    }

    /// A Markdown pipe table: the header, the delimiter row (`---:` under columns aligned
    /// right), then a line per row, every cell as [`Cell::as_markdown`] makes it.
    pub fn to_markdown(&self) -> String {
        let columns = self.headers.len();
        let line = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
        let mut out = line(
            self.headers
                .iter()
                .map(|h| escape_markdown(&shown(h)))
                .collect(),
        );
        let marks: Vec<&str> = self
            .aligns
            .iter()
            .map(|a| match a {
                Align::Left => "---",
                Align::Right => "---:",
            })
            .collect();
        out.push_str(&match self.delimiter_row {
            DelimiterRow::Padded => line(marks.iter().map(|m| m.to_string()).collect()),
            DelimiterRow::Tight => format!("|{}|\n", marks.join("|")),
        });
        for r in &self.rows {
            out.push_str(&line(
                (0..columns)
                    .map(|c| r.get(c).map_or_else(String::new, Cell::as_markdown))
                    .collect(),
            ));
        }
        out
    }
}

/// A header or cell as either form prints it: on one line (a line break would end the row),
/// control characters escaped and cut to [`printable::CELL_MAX`] characters.
fn shown(text: &str) -> String {
    printable::cell(&one_line(text)).into_owned()
}

/// The text of `row`'s cell in `column`, empty where the row is short.
fn cell(row: &[Cell], column: usize) -> &str {
    row.get(column).map_or("", |c| c.content.as_str())
}

fn push_spaces(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n(' ', n));
}

/// The characters escaped in Markdown text: those CommonMark reads as inline markup (emphasis,
/// code, links, HTML and entities, GFM's strikethrough), the backslash itself, and `|`, which
/// would end a table cell.
const MARKUP: &str = "\\`*_[]<>|~&";

/// Text as Markdown that reads as the text itself, in a table cell or anywhere inline: every
/// markup character backslash-escaped (CommonMark allows it before any ASCII punctuation), and
/// each line break (`\n`, `\r\n` or `\r`) a space, since in a table it would end the row. An
/// underscore inside a word (`eager_limit`) cannot start emphasis and is left as it is, so the
/// source stays readable; so are characters that are markup only at the start of a line, which
/// a cell never is.
///
/// This is the one rule of every Markdown table fabbench writes. It replaced three: report's
/// (this one, less the line breaks), compare's (`|` escaped and `<` as `&lt;`) and the others'
/// (`|` alone, or nothing); it is the strictest of them, and `\<` reads as `&lt;` did.
pub fn escape_markdown(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    for (i, &ch) in chars.iter().enumerate() {
        match ch {
            '\r' if chars.get(i + 1) == Some(&'\n') => continue,
            '\n' | '\r' => {
                out.push(' ');
                continue;
            }
            _ => {}
        }
        let inside_word = ch == '_'
            && i > 0
            && chars[i - 1].is_alphanumeric()
            && chars.get(i + 1).is_some_and(|c| c.is_alphanumeric());
        if MARKUP.contains(ch) && !inside_word {
            out.push('\\');
        }
        out.push(ch);
    }
    out
}

/// Markdown on one line: each line break a space, as [`escape_markdown`] does.
fn one_line(markdown: &str) -> String {
    markdown.replace("\r\n", " ").replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut t = Table::with_columns([
            ("size", Align::Left),
            ("value", Align::Right),
            ("note", Align::Left),
        ]);
        t.push_row(["1", "2.00", "fast"]);
        t.push_row(["1024", "123.45", ""]);
        t
    }

    #[test]
    fn text_is_aligned_two_spaces_apart_without_trailing_spaces() {
        assert_eq!(
            sample().to_text(),
            "size   value  note\n\
             1       2.00  fast\n\
             1024  123.45\n"
        );
        // Widths count characters, not bytes.
        let mut t = Table::new(["a", "b"]);
        t.push_row(["—", "x"]);
        t.push_row(["éé", "y"]);
        assert_eq!(t.to_text(), "a   b\n—   x\néé  y\n");
    }

    /// Found by the fuzz target `table_render`: a line break in a cell ended its row in the
    /// text, so a reason or a label of two lines shifted every column after it.
    #[test]
    fn a_line_break_in_a_cell_keeps_its_row_on_one_line() {
        let mut t = Table::with_columns([("a\nb", Align::Left), ("c", Align::Right)]);
        t.push_row(["one\r\ntwo", "3"]);
        t.push_row(["x\ry", "4"]);
        assert_eq!(t.to_text(), "a b      c\none two  3\nx y      4\n");
    }

    #[test]
    fn a_cell_wider_than_a_format_width_is_cut_and_padded() {
        // Wider than the 65,535 std::fmt allows a width (which once panicked), and than a
        // person reads: cut to CELL_MAX characters, saying how much is left out.
        let wide = "x".repeat(70_000);
        let mut t = Table::with_columns([("a", Align::Right), ("b", Align::Left)]);
        t.push_row([wide.as_str(), "end"]);
        t.push_row(["1", "end"]);
        let text = t.to_text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        let shown = lines[1].strip_suffix("  end").unwrap();
        let width = shown.chars().count();
        assert!(
            width <= printable::CELL_MAX && width > printable::CELL_MAX - 30,
            "{width}"
        );
        assert!(shown.ends_with(" more bytes)"), "{shown}");
        assert_eq!(lines[0].chars().count(), width + 2 + 1);
        for l in &lines[1..] {
            assert_eq!(l.chars().count(), width + 2 + 3, "every row as wide");
        }
        assert!(lines[2].ends_with("1  end"));
        let markdown = t.to_markdown();
        assert!(markdown.contains("more bytes)") && !markdown.contains(&wide));
    }

    #[test]
    fn control_characters_in_cells_are_shown_escaped() {
        let mut t = Table::new(["host", "run"]);
        t.push_row(["vm\u{1b}[2J", "r\u{7}"]);
        let text = t.to_text();
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "{text:?}"
        );
        assert!(text.contains("vm\\u{1b}[2J"), "{text}");
        let md = t.to_markdown();
        assert!(!md.chars().any(|c| c.is_control() && c != '\n'), "{md:?}");
    }

    #[test]
    fn markdown_marks_right_aligned_columns_in_either_spacing() {
        assert_eq!(
            sample().to_markdown(),
            "| size | value | note |\n\
             | --- | ---: | --- |\n\
             | 1 | 2.00 | fast |\n\
             | 1024 | 123.45 |  |\n"
        );
        let tight = sample().delimiter_row(DelimiterRow::Tight).to_markdown();
        assert_eq!(tight.lines().nth(1), Some("|---|---:|---|"));
    }

    #[test]
    fn a_short_row_prints_empty_cells() {
        let mut t = Table::new(["a", "b"]);
        t.push_row(["1"]);
        assert_eq!(t.to_text(), "a  b\n1\n");
        assert_eq!(t.to_markdown(), "| a | b |\n| --- | --- |\n| 1 |  |\n");
    }

    #[test]
    fn markdown_cells_cannot_split_end_a_row_or_become_markup() {
        let mut t = Table::new(["a|b", "c"]);
        t.push_row(["x|y", "one\ntwo\r\nthree\rfour"]);
        t.push_row(["<0.001 & <b>", "`code` *em* [l](u) ~s~ a\\b"]);
        let md = t.to_markdown();
        let lines: Vec<&str> = md.lines().collect();
        assert_eq!(lines.len(), 4, "{md}");
        assert_eq!(lines[0], "| a\\|b | c |");
        assert_eq!(lines[2], "| x\\|y | one two three four |");
        assert_eq!(
            lines[3],
            "| \\<0.001 \\& \\<b\\> | \\`code\\` \\*em\\* \\[l\\](u) \\~s\\~ a\\\\b |"
        );
        // Text tables print cells as they are.
        assert!(t.to_text().contains("<0.001 & <b>"));
    }

    #[test]
    fn markdown_cells_of_the_callers_markup_go_in_as_they_are_on_one_line() {
        let mut t = Table::new(["parameter", "chosen"]);
        t.push_row([
            Cell::markdown("`eager_limit`"),
            Cell::markdown(format!("**{}**", escape_markdown("12*KiB"))),
        ]);
        t.push_row([Cell::markdown("a\nb"), Cell::text("**not bold**")]);
        assert_eq!(
            t.to_markdown(),
            "| parameter | chosen |\n| --- | --- |\n| `eager_limit` | **12\\*KiB** |\n\
             | a b | \\*\\*not bold\\*\\* |\n"
        );
    }

    #[test]
    fn markup_is_escaped_but_words_stay_readable() {
        assert_eq!(escape_markdown("eager_limit=4KiB"), "eager_limit=4KiB");
        assert_eq!(
            escape_markdown("_x_ *y* a|b <i> [l]"),
            "\\_x\\_ \\*y\\* a\\|b \\<i\\> \\[l\\]"
        );
        assert_eq!(escape_markdown("a\r\nb\rc\nd"), "a b c d");
    }
}
