//! The tables fabbench prints, from text that came from runs, files and users (labels, host
//! names, settings, suite names, reasons): results' one table writer (`format::table`, which
//! report's, compare's, calibrate's, autotune's and history's tables all go through) as
//! aligned text and as Markdown, and `history show`'s tables made from entry files. The first
//! byte picks the mode.
//!
//! Mode 0, the writer: the second byte gives the column count (1 to 6) and the columns
//! aligned right, the third, when its top four bits are set, widens the first cell past 65,535
//! characters (issue 32, item 3: a cell wider than `std::fmt`'s width limit panicked); the
//! rest, as text split at tabs, is the header's cells then the rows'. Must hold: no panic;
//! the text has one line per row plus the header, none ending in a space, none wider than
//! the columns' cut width, and no control character but the line breaks; the Markdown has one line per row plus the header and the delimiter row,
//! each with exactly the table's columns (no cell's text adds or ends a cell or a row).
//! Mode 1, `history show`: the rest, split at lines holding only `@@@`, is entry files; the
//! entries that parse are shown in every format `history show` has; its Markdown table has
//! a row per series.
//!
//! Seed corpus (fuzz/corpus/table_render/): mode 0 inputs are the cells of tables fabbench
//! printed (`fabbench history show --store STORE` and `fabbench compare RUN RUN`, their text
//! tables' cells re-split at tabs), one of them widened; mode 1 inputs are the entry files
//! `fabbench history add` wrote for two runs of `fabbench run osu_latency --fabric shm
//! -m 8:64`.
#![no_main]

use history::format::{render, Format};
use history::store::parse_entry;
use libfuzzer_sys::fuzz_target;
use results::format::table::{escape_markdown, Align, Table};

/// `|` characters that separate cells: those not escaped by an odd run of backslashes.
fn separators(line: &str) -> usize {
    let mut n = 0;
    let mut backslashes = 0;
    for ch in line.chars() {
        match ch {
            '\\' => backslashes += 1,
            '|' => {
                if backslashes % 2 == 0 {
                    n += 1;
                }
                backslashes = 0;
            }
            _ => backslashes = 0,
        }
    }
    n
}

fn writer(shape: u8, widen: u8, text: &str) {
    // Bits 0-2: the column count; bits 3-7: columns 0-4 aligned right.
    let columns = (shape & 7) as usize % 6 + 1;
    let aligns: Vec<Align> = (0..columns)
        .map(|c| {
            if c < 5 && shape >> (c + 3) & 1 == 1 {
                Align::Right
            } else {
                Align::Left
            }
        })
        .collect();
    let mut cells: Vec<String> = text.split('\t').map(str::to_string).collect();
    // Rarely (a wide table costs a hundred narrow ones): past std::fmt's width limit.
    if widen & 0xf0 == 0xf0 {
        let first = if cells[0].is_empty() { "x" } else { &cells[0] };
        let times = (65_536 + (widen & 0x0f) as usize) / first.chars().count() + 1;
        cells[0] = first.repeat(times);
    }
    let mut header: Vec<String> = cells.iter().take(columns).cloned().collect();
    header.resize(columns, String::new());
    let mut table = Table::with_columns(header.into_iter().zip(aligns));
    let rows: Vec<&[String]> = cells
        .get(columns..)
        .unwrap_or(&[])
        .chunks(columns)
        .collect();
    for r in &rows {
        table.push_row(r.iter());
    }
    let text = table.to_text();
    let lines: Vec<&str> = text
        .strip_suffix('\n')
        .expect("ends a line")
        .split('\n')
        .collect();
    assert_eq!(lines.len(), rows.len() + 1, "text lines");
    let widest = lines.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    for l in &lines {
        assert!(!l.ends_with(' '), "{l:?}");
    }
    // A cell is shown printable (a control character as an escape, so wider than it was)
    // and cut to CELL_MAX characters: however long its text, a line is at most that a column.
    assert!(
        widest <= columns * (results::printable::CELL_MAX + 2),
        "a line wider than its cells can be shown"
    );
    assert!(!text.chars().any(|c| c.is_control() && c != '\n'), "{text:?}");
    let md = table.to_markdown();
    let lines: Vec<&str> = md
        .strip_suffix('\n')
        .expect("ends a line")
        .split('\n')
        .collect();
    assert_eq!(lines.len(), rows.len() + 2, "markdown lines");
    for l in &lines {
        assert_eq!(separators(l), columns + 1, "{l:?}");
    }
    let escaped = escape_markdown(text.as_str());
    assert!(!escaped.contains(['\n', '\r']));
}

fn history_show(text: &str) {
    let entries: Vec<_> = text
        .split("\n@@@\n")
        .filter_map(|t| parse_entry(t, std::path::Path::new("entry.json")).ok())
        .collect();
    if entries.is_empty() {
        return;
    }
    let Ok((entries, series)) = history::series::select(entries, &history::Filter::default())
    else {
        return;
    };
    let view = history::trend::of(entries, series, &history::Options::default());
    for f in [Format::Table, Format::Csv, Format::Json, Format::Otava] {
        assert!(render(&view, f).ends_with('\n'));
    }
    let md = render(&view, Format::Markdown);
    let rows = md.lines().filter(|l| l.starts_with('|')).count();
    assert_eq!(rows, view.trends.len() + 2, "{md}");
}

fuzz_target!(|data: &[u8]| {
    let [mode, shape, widen, rest @ ..] = data else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    if mode % 2 == 0 {
        writer(*shape, *widen, text);
    } else {
        history_show(text);
    }
});
