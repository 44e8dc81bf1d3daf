//! `fabbench list tunables [FABRIC|PREFIX]`: what a filter selects, a table whose meaning column
//! starts at one offset whatever the widths of names and defaults, sizes written as manifests
//! write them, and a filter that matches nothing refused in one line.

use std::process::{Command, Output};

use crate::common::*;

/// `fabbench ARGS` with the terminal `columns` wide (COLUMNS; the test's stdout is a pipe).
fn list(columns: usize, args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .env("COLUMNS", columns.to_string())
        .output()
        .unwrap()
}

fn stdout(args: &[&str], columns: usize) -> String {
    let out = list(columns, args);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {:?}", out);
    String::from_utf8(out.stdout).unwrap()
}

/// The rows of the table: lines that start with a tunable's name after the two-space margin.
fn rows(table: &str) -> Vec<&str> {
    table
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("NAME"))
        .skip(1)
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .collect()
}

/// The offset of the MEANING header, and where each row's text after its three columns starts.
fn meaning_offsets(table: &str) -> (usize, Vec<usize>) {
    let header = table.lines().find(|l| l.contains("MEANING")).unwrap();
    let at = header.find("MEANING").unwrap();
    let starts = rows(table)
        .iter()
        .map(|r| {
            // The meaning follows the RANGE cell and the padding after it.
            let range_end = r[..at].trim_end().len();
            range_end + r[range_end..].len() - r[range_end..].trim_start().len()
        })
        .collect();
    (at, starts)
}

#[test]
fn a_fabric_lists_its_own_and_the_engine_tunables_it_honours() {
    let t = stdout(&["list", "tunables", "hyperlink"], 120);
    let names: Vec<&str> = rows(&t)
        .iter()
        .map(|r| r.split_whitespace().next().unwrap())
        .collect();
    assert!(names.contains(&"eager_limit"), "{t}");
    assert!(names.contains(&"hyperlink.rx_thread_cpu_share"), "{t}");
    assert!(
        names
            .iter()
            .all(|n| !n.contains('.') || n.starts_with("hyperlink.") || n.starts_with("wire.")),
        "another fabric's tunables: {names:?}"
    );
    // Emulated ranks are threads: CPU binding means nothing there.
    assert!(!names.contains(&"bind"), "{names:?}");
}

#[test]
fn a_prefix_selects_names_that_start_with_it() {
    let t = stdout(&["list", "tunables", "tcp."], 120);
    let names: Vec<&str> = rows(&t)
        .iter()
        .map(|r| r.split_whitespace().next().unwrap())
        .collect();
    assert!(!names.is_empty(), "{t}");
    assert!(names.iter().all(|n| n.starts_with("tcp.")), "{names:?}");
}

#[test]
fn the_meaning_column_starts_at_one_offset() {
    // hyperlink's long names, round_robin's long default, mpi's unset defaults.
    for args in [
        &["list", "tunables", "hyperlink"][..],
        &["list", "tunables"][..],
    ] {
        let t = stdout(args, 200);
        let (at, starts) = meaning_offsets(&t);
        assert!(starts.len() > 10, "{t}");
        assert!(
            starts.iter().all(|s| *s == at),
            "{args:?}: meanings start at {starts:?}, MEANING at {at}\n{t}"
        );
        assert!(t.lines().all(|l| l.chars().count() <= 200), "{t}");
    }
}

#[test]
fn narrow_terminals_wrap_within_their_width() {
    for columns in [80, 120] {
        let t = stdout(&["list", "tunables", "hyperlink", "--sources"], columns);
        let long: Vec<&str> = t.lines().filter(|l| l.chars().count() > columns).collect();
        assert!(long.is_empty(), "{columns} columns: {long:?}");
        assert!(t.contains("source: [S] TI Hyperlink docs"), "{t}");
        assert!(
            t.contains("source: hyperlink's default (fabbench's: off)"),
            "{t}"
        );
    }
}

#[test]
fn sizes_are_written_as_manifests_write_them() {
    let t = stdout(&["list", "tunables", "eager"], 120);
    let row = rows(&t)
        .into_iter()
        .find(|r| r.trim_start().starts_with("eager_limit"))
        .unwrap();
    assert_eq!(row.split_whitespace().nth(1), Some("4KiB"), "{row}");
    assert!(!t.contains(" 4K "), "{t}");
}

#[test]
fn a_filter_that_matches_nothing_is_refused_in_one_line() {
    let out = list(100, &["list", "tunables", "infiniband"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("shm, tcp, ofi, hyperlink, rapidio, bxi"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}
