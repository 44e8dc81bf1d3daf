//! Text from a file or a peer made safe to print on a terminal: every control character shown
//! as an escape instead of acting (an ESC sequence in a run id cannot recolour, move the cursor
//! or retitle the terminal; a newline cannot start a line that looks like fabbench's own), and
//! a value too long to read cut with an ellipsis that says how much was left out. Every table
//! cell ([`crate::format::table`]) and every error line goes through it.

use std::borrow::Cow;

/// The most characters of one table cell that are printed.
pub const CELL_MAX: usize = 256;
/// The most characters of one word (a run of text without spaces) of an error line: a value
/// such as a path, an id or a number is far shorter; a 5 MB one is not repeated whole.
pub const WORD_MAX: usize = 256;
/// The most characters of an error line.
pub const LINE_MAX: usize = 4096;

/// `text` with every control character (C0, DEL, C1) written as Rust writes it in a string
/// literal (`\n`, `\t`, `\u{1b}`), and the backslash itself left alone. Borrowed when there is
/// nothing to escape, which is nearly always.
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for ch in text.chars() {
        if ch.is_control() {
            out.extend(ch.escape_debug());
        } else {
            out.push(ch);
        }
    }
    Cow::Owned(out)
}

/// At most `max` characters of `text`: a longer one keeps its start and ends in
/// `…(N more bytes)`, so what is shown says that something, and how much, is missing.
pub fn cut(text: &str, max: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max) {
        None => Cow::Borrowed(text),
        Some(_) => {
            let note_room = 24.min(max);
            let keep = text
                .char_indices()
                .nth(max - note_room)
                .map_or(text.len(), |(i, _)| i);
            Cow::Owned(format!(
                "{}…({} more bytes)",
                &text[..keep],
                text.len() - keep
            ))
        }
    }
}

/// A whole text output (a table, a report, a comparison in text or Markdown) as a terminal
/// should get it: control characters escaped except the line breaks and tabs that lay it out,
/// and each line cut to [`LINE_MAX`] characters. Not for CSV or JSON, which are data.
pub fn terminal_text(text: &str) -> Cow<'_, str> {
    let odd = |ch: char| ch.is_control() && ch != '\n' && ch != '\t';
    let long = text.split('\n').any(|l| l.len() > LINE_MAX);
    if !long && !text.chars().any(odd) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len().min(1 << 20));
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let mut safe = String::with_capacity(line.len());
        for ch in line.chars() {
            if odd(ch) {
                safe.extend(ch.escape_debug());
            } else {
                safe.push(ch);
            }
        }
        out.push_str(&cut(&safe, LINE_MAX));
    }
    Cow::Owned(out)
}

/// A table cell as printed: printable, and cut to [`CELL_MAX`] characters.
pub fn cell(text: &str) -> Cow<'_, str> {
    match printable(text) {
        Cow::Borrowed(b) => cut(b, CELL_MAX),
        Cow::Owned(o) => Cow::Owned(cut(&o, CELL_MAX).into_owned()),
    }
}

/// An error line as printed: printable, each word cut to [`WORD_MAX`] characters, and the
/// whole to [`LINE_MAX`] (its start and its end, which says what is valid, kept).
pub fn error_line(line: &str) -> String {
    let safe = printable(line);
    let mut out = String::with_capacity(safe.len().min(LINE_MAX + 64));
    for (i, word) in safe.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(&cut(word, WORD_MAX));
    }
    let chars = out.chars().count();
    if chars <= LINE_MAX {
        return out;
    }
    let head: String = out.chars().take(LINE_MAX / 2).collect();
    let tail: String = out.chars().skip(chars - LINE_MAX / 4).collect();
    format!("{head} … {tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_not_obeyed() {
        assert_eq!(printable("run-1"), "run-1");
        assert!(matches!(printable("plain ünïcode"), Cow::Borrowed(_)));
        assert_eq!(printable("a\u{1b}[31mred"), "a\\u{1b}[31mred");
        assert_eq!(printable("two\nlines\r\t"), "two\\nlines\\r\\t");
        assert_eq!(
            printable("bell\u{7}del\u{7f}c1\u{9b}"),
            "bell\\u{7}del\\u{7f}c1\\u{9b}"
        );
        assert!(!printable("\u{1b}]0;title\u{7}")
            .chars()
            .any(char::is_control));
    }

    #[test]
    fn long_text_is_cut_and_says_how_much_is_missing() {
        assert_eq!(cut("short", 10), "short");
        assert_eq!(cut("exactly10!", 10), "exactly10!");
        let long = "x".repeat(5_000_000);
        let c = cut(&long, 100);
        assert_eq!(
            c.chars().count(),
            76 + "…(4999924 more bytes)".chars().count()
        );
        assert!(c.ends_with("…(4999924 more bytes)"), "{c}");
        // Multi-byte characters are cut on a character boundary.
        let wide = "é".repeat(300);
        assert!(cut(&wide, 50).starts_with("éé"));
    }

    #[test]
    fn terminal_text_keeps_its_layout_and_escapes_the_rest() {
        let table = "size  host\n8     vm\tx\n";
        assert!(matches!(terminal_text(table), Cow::Borrowed(_)));
        assert_eq!(
            terminal_text("a\u{1b}[2Jb\nc\u{7}\n"),
            "a\\u{1b}[2Jb\nc\\u{7}\n"
        );
        let huge = format!("head\n{}\ntail\n", "h".repeat(100_000));
        let shown = terminal_text(&huge);
        assert!(shown.len() < LINE_MAX + 100, "{}", shown.len());
        assert!(shown.starts_with("head\n") && shown.ends_with("more bytes)\ntail\n"));
    }

    #[test]
    fn an_error_line_keeps_its_words_and_cuts_a_huge_value() {
        let value = "A".repeat(5_000_000);
        let line = format!("{value} is not a run id; give one of run-1, run-2");
        let shown = error_line(&line);
        assert!(shown.len() < 400, "{} bytes", shown.len());
        assert!(
            shown.ends_with("is not a run id; give one of run-1, run-2"),
            "{shown}"
        );
        assert!(shown.contains("more bytes)"), "{shown}");
        assert_eq!(error_line("plain words"), "plain words");
        assert_eq!(error_line("host\u{1b}[2J"), "host\\u{1b}[2J");
        // Many short words: the line as a whole is capped, its end kept.
        let many = format!("{} the end", "word ".repeat(10_000));
        let shown = error_line(&many);
        assert!(shown.chars().count() <= LINE_MAX + 3, "{}", shown.len());
        assert!(shown.ends_with("the end"));
    }
}
