//! `fabbench run` prints the same OSU text as before the runner library: byte for byte on
//! emulated fabrics (their numbers are exact), the same layout on shm (its numbers vary). The
//! expected text is what the previous fabbench printed for the same commands
//! (tests/fixtures/osu-text, see its README).

use crate::common::*;

fn fixture(name: &str) -> String {
    let p = format!(
        "{}/tests/fixtures/osu-text/{name}.txt",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

fn printed(name: &str, args: &[&str]) -> String {
    let r = run(name, args);
    r.ok();
    r.stdout()
}

#[test]
fn emulated_runs_print_exactly_what_they_printed_before() {
    let _g = serial();
    let cases: [(&str, &[&str]); 3] = [
        (
            "latency+bw-rapidio-z-c",
            &[
                "run",
                "osu_latency",
                "osu_bw",
                "-m",
                "1:64",
                "-i",
                "5",
                "-x",
                "1",
                "-z",
                "-c",
                "--fabric",
                "rapidio",
            ],
        ),
        (
            "bibw-hyperlink+bxi",
            &[
                "run",
                "osu_bibw",
                "-m",
                "1K:8K",
                "-i",
                "3",
                "-x",
                "1",
                "--fabric",
                "hyperlink,bxi",
            ],
        ),
        (
            "latency-bxi-rendezvous",
            &[
                "run",
                "osu_latency",
                "-m",
                "0:4K",
                "-i",
                "5",
                "-x",
                "1",
                "--fabric",
                "bxi",
                "--set",
                "bxi.rendezvous=1K",
                "-c",
            ],
        ),
    ];
    for (name, args) in cases {
        let want = fixture(name);
        let got = printed(name, args);
        assert_eq!(got, want, "{name}: the printed text changed");
    }
}

/// A line with every number replaced by `#` and runs of spaces by one, so layouts compare
/// whatever was measured (the columns' positions are checked on their own).
fn shape(line: &str) -> String {
    let mut out = String::new();
    let mut in_number = false;
    for c in line.chars() {
        if c.is_ascii_digit() || (in_number && c == '.') {
            if !in_number {
                out.push('#');
            }
            in_number = true;
        } else {
            in_number = false;
            if !(c == ' ' && out.ends_with(' ')) {
                out.push(c);
            }
        }
    }
    out
}

/// The probe's verdict ends the text; its words depend on what the machine's copies cost
/// ("copy at every size", "single copy from 64KiB"), so only its frame is compared.
const VERDICT: &str = "# shm: single_copy=auto: ";

#[test]
fn shm_runs_print_the_same_layout_as_before() {
    let _g = serial();
    let want = fixture("bw-shm-W8");
    let got = printed(
        "bw-shm-W8",
        &[
            "run", "osu_bw", "-m", "8:16", "-i", "5", "-x", "1", "-W", "8",
        ],
    );
    let shapes = |t: &str| {
        t.lines()
            .map(|l| match l.strip_prefix(VERDICT) {
                Some(rest) => {
                    assert!(rest.contains("(probe, best of "), "{l}");
                    VERDICT.to_string()
                }
                None => shape(l),
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(shapes(&got), shapes(&want), "got:\n{got}\nwant:\n{want}");
    // Columns sit where OSU puts them: the value ends at column 30.
    for l in got.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        assert_eq!(l.len(), 30, "{l:?}");
    }
}

/// Where each whitespace-separated word of `line` ends (byte offsets).
fn word_ends(line: &str) -> Vec<usize> {
    let mut ends = Vec::new();
    for (i, c) in line.char_indices() {
        let next_blank = line[i + c.len_utf8()..]
            .chars()
            .next()
            .is_none_or(|n| n == ' ');
        if c != ' ' && next_blank {
            ends.push(i + c.len_utf8());
        }
    }
    ends
}

#[test]
fn a_column_per_fabric_keeps_its_labels_apart_and_over_their_numbers() {
    let _g = serial();
    let fabrics = ["rapidio", "bxi"];
    let got = printed(
        "latency-rapidio+bxi",
        &[
            "run",
            "osu_latency",
            "--fabric",
            "rapidio,bxi",
            "-m",
            "1:8",
            "-i",
            "5",
            "-x",
            "1",
        ],
    );
    let header = got
        .lines()
        .find(|l| l.starts_with("# Size"))
        .unwrap_or_else(|| panic!("no header in\n{got}"));
    // Each label's span in the header, "# Size" first.
    let mut spans = vec![(0, "# Size".len())];
    for f in fabrics {
        let label = format!("{f} Avg Latency(us)");
        let at = header
            .find(&label)
            .unwrap_or_else(|| panic!("{label:?} not in {header:?}"));
        spans.push((at, at + label.len()));
    }
    assert_eq!(spans.last().unwrap().1, header.len(), "{header:?}");
    for w in spans.windows(2) {
        let gap = header.get(w[0].1..w[1].0).unwrap_or_default();
        assert!(
            !gap.is_empty() && gap.chars().all(|c| c == ' '),
            "labels run together: {header:?}"
        );
    }
    // Every row's numbers end where their column's label ends.
    let label_ends: Vec<usize> = spans[1..].iter().map(|s| s.1).collect();
    let rows: Vec<&str> = got
        .lines()
        .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    assert_eq!(rows.len(), 4, "sizes 1 to 8:\n{got}");
    for row in rows {
        assert_eq!(word_ends(row)[1..], label_ends, "\n{header}\n{row}");
    }
}
