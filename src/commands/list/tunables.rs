//! `fabbench list tunables [FABRIC|PREFIX] [--sources]`: which tunables to show and their table.
//!
//! A fabric's name selects what a run on it honours: the engine's tunables less those it
//! ignores or replaces with its own (none on an MPI fabric, which runs its library's
//! protocols), then its own `FABRIC.*` ones, each at the default that fabric runs with. Any
//! other filter is the start of tunable names. Values are printed as a manifest records them
//! (each default parsed by its kind, so `4K` reads `4KiB`). The columns take the width of their
//! longest cell; the meaning wraps to the terminal, beside the columns when at least
//! [`MIN_MEANING`] characters are left there, else on its own lines under each row.

use bench_core::tunables::{Def, Registry};
use transports::fabric::{FabricDef, FabricKind, ENGINE_TUNABLES};
use transports::registry;

/// The narrowest meaning column worth keeping beside the others.
const MIN_MEANING: usize = 30;
/// Where a meaning starts when it goes under its row.
const UNDER_INDENT: usize = 6;
/// The width when neither COLUMNS nor the terminal says (output to a file or a pipe).
const DEFAULT_WIDTH: usize = 100;
/// The columns before the meaning, and the space between two.
const HEADERS: [&str; 3] = ["NAME", "DEFAULT", "RANGE"];
const GAP: &str = "  ";

/// One tunable as listed.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub name: String,
    pub default: String,
    pub range: String,
    pub meaning: String,
    /// Where the default comes from (shown with `--sources`).
    pub source: String,
}

/// The terminal's width: COLUMNS, else stdout's terminal, else [`DEFAULT_WIDTH`].
pub fn width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|c| *c > 0)
        .or_else(|| terminal_size::terminal_size().map(|(w, _)| usize::from(w.0)))
        .unwrap_or(DEFAULT_WIDTH)
}

/// The rows `filter` selects (all without one); Err is the one line naming what is valid.
pub fn select(filter: Option<&str>) -> Result<Vec<Row>, String> {
    let registry = registry::registry(&[]);
    let Some(filter) = filter else {
        return Ok(registry.defs().iter().map(|d| row(d, None)).collect());
    };
    if let Some(fabric) = registry::find(filter) {
        return Ok(for_fabric(&registry, fabric));
    }
    let rows: Vec<Row> = registry
        .defs()
        .iter()
        .filter(|d| d.name.starts_with(filter))
        .map(|d| row(d, None))
        .collect();
    if rows.is_empty() {
        return Err(format!(
            "no fabric or tunable name matches '{filter}'; give a fabric ({}) or the start of tunable names (e.g. eager, tcp.)",
            registry::names().join(", ")
        ));
    }
    Ok(rows)
}

/// What a run on `fabric` honours, at the defaults it runs with.
fn for_fabric(registry: &Registry, fabric: &FabricDef) -> Vec<Row> {
    let own = format!("{}.", fabric.name);
    let engine = ENGINE_TUNABLES.iter().filter(|d| {
        fabric.kind != FabricKind::Mpi
            && !fabric.ignores.contains(&d.name)
            && !fabric.replaces.iter().any(|(e, _)| *e == d.name)
    });
    let mine = registry.defs().iter().filter(|d| d.name.starts_with(&own));
    engine
        .chain(mine)
        .map(|d| {
            let imposed = fabric
                .defaults
                .iter()
                .find(|(n, _)| *n == d.name)
                .map(|(_, v)| (fabric.name, *v));
            row(d, imposed)
        })
        .collect()
}

/// `d` as listed; `imposed` is a fabric's own default for it, which wins over the declared one.
fn row(d: &Def, imposed: Option<(&str, &str)>) -> Row {
    let declared = shown(d, d.default);
    let (default, source) = match imposed {
        Some((fabric, v)) => (
            shown(d, v),
            format!("{fabric}'s default (fabbench's: {declared})"),
        ),
        None if d.source.is_empty() => (declared, "fabbench's default".to_string()),
        None => (declared, d.source.to_string()),
    };
    Row {
        name: d.name.to_string(),
        default,
        range: d.kind.range(),
        meaning: d.help.to_string(),
        source,
    }
}

/// A default as a manifest records it (the kind's canonical text); an empty one is "unset".
fn shown(d: &Def, text: &str) -> String {
    let v = d
        .kind
        .parse(text)
        .map(|v| v.to_string())
        .unwrap_or_else(|_| text.to_string());
    if v.is_empty() {
        "unset".to_string()
    } else {
        v
    }
}

/// The table of `rows` for a terminal `width` characters wide.
pub fn render(rows: &[Row], width: usize, sources: bool) -> String {
    let cells = |r: &Row| [r.name.clone(), r.default.clone(), r.range.clone()];
    let mut widths = HEADERS.map(str::len);
    for r in rows {
        for (w, c) in widths.iter_mut().zip(cells(r)) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |c: [String; 3]| {
        let mut s = String::from(GAP);
        for (i, (cell, w)) in c.iter().zip(widths).enumerate() {
            s.push_str(cell);
            if i < 2 {
                s.push_str(&" ".repeat(w - cell.chars().count()));
                s.push_str(GAP);
            }
        }
        s
    };
    let beside = GAP.len() + widths.iter().sum::<usize>() + 3 * GAP.len();
    let side = width.saturating_sub(beside) >= MIN_MEANING;
    let (offset, room) = if side {
        (beside, width - beside)
    } else {
        (
            UNDER_INDENT,
            width.saturating_sub(UNDER_INDENT).max(MIN_MEANING),
        )
    };
    let mut out = String::new();
    let mut intro = vec!["TUNABLES (set with --set NAME=VALUE or a --profile file)".to_string()];
    if sources {
        intro.push(
            "sources: a model card's [S] stated by a source, [D] derived, [A] assumption to calibrate"
                .to_string(),
        );
    }
    for l in intro.iter().flat_map(|l| wrap(l, width.max(MIN_MEANING))) {
        out.push_str(&format!("{l}\n"));
    }
    let headers = HEADERS.map(String::from);
    if side {
        out.push_str(&pad_to(&line(headers), offset));
        out.push_str("MEANING\n");
    } else {
        out.push_str(&format!(
            "{}\n{}MEANING\n",
            line(headers).trim_end(),
            " ".repeat(offset)
        ));
    }
    for r in rows {
        let mut text = wrap(&r.meaning, room);
        if sources {
            text.extend(wrap(&format!("source: {}", r.source), room));
        }
        let first = if side {
            let head = pad_to(&line(cells(r)), offset);
            let first = text.remove(0);
            format!("{head}{first}\n")
        } else {
            format!("{}\n", line(cells(r)).trim_end())
        };
        out.push_str(&first);
        for t in text {
            out.push_str(&format!("{}{t}\n", " ".repeat(offset)));
        }
    }
    out
}

/// `s` with spaces up to `to` characters.
fn pad_to(s: &str, to: usize) -> String {
    format!("{s}{}", " ".repeat(to.saturating_sub(s.chars().count())))
}

/// `text` in lines of at most `room` characters (a word longer than that is broken).
fn wrap(text: &str, room: usize) -> Vec<String> {
    let lines: Vec<String> = textwrap::wrap(text, room)
        .into_iter()
        .map(|l| l.into_owned())
        .collect();
    if lines.is_empty() {
        vec![String::new()]
    } else {
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows() -> Vec<Row> {
        ["a", "a_much_longer_name"]
            .iter()
            .map(|n| Row {
                name: n.to_string(),
                default: "round_robin".into(),
                range: "1KiB..16MiB".into(),
                meaning: "word ".repeat(30).trim_end().into(),
                source: "[S] a paper".into(),
            })
            .collect()
    }

    /// Where each line's meaning text starts (the header's MEANING included).
    fn meaning_starts(table: &str, meaning: &str) -> Vec<usize> {
        table
            .lines()
            .filter_map(|l| l.find(meaning))
            .collect::<Vec<_>>()
    }

    #[test]
    fn wide_terminals_keep_the_meaning_beside_the_columns() {
        let t = render(&rows(), 120, false);
        let starts = meaning_starts(&t, "word");
        assert!(starts.len() > 2, "{t}");
        assert!(starts.windows(2).all(|w| w[0] == w[1]), "{t}");
        assert_eq!(meaning_starts(&t, "MEANING"), vec![starts[0]], "{t}");
        assert!(t.lines().all(|l| l.chars().count() <= 120), "{t}");
    }

    #[test]
    fn narrow_terminals_put_the_meaning_under_its_row() {
        let t = render(&rows(), 50, true);
        assert!(t.lines().all(|l| l.chars().count() <= 50), "{t}");
        assert!(
            t.contains("\n  a_much_longer_name  round_robin  1KiB..16MiB\n"),
            "{t}"
        );
        let starts = meaning_starts(&t, "word");
        assert!(starts.iter().all(|s| *s == UNDER_INDENT), "{t}");
        assert!(t.contains(&format!("{}source: [S] a paper", " ".repeat(UNDER_INDENT))));
    }

    #[test]
    fn sizes_read_as_a_manifest_records_them() {
        let eager = select(Some("eager_limit")).unwrap();
        assert_eq!(eager[0].default, "4KiB");
    }

    #[test]
    fn a_fabric_selects_what_it_honours_at_its_defaults() {
        let rows = select(Some("hyperlink")).unwrap();
        let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
        assert!(names.contains(&"eager_limit") && names.contains(&"hyperlink.lanes"));
        // Emulated ranks are tasks of one thread: no CPU binding, no single copy.
        assert!(!names.contains(&"bind") && !names.contains(&"single_copy"));
        assert!(!names.iter().any(|n| n.starts_with("rapidio.")));
        let rx = rows.iter().find(|r| r.name == "rx_thread").unwrap();
        assert_eq!(rx.default, "on");
        assert!(
            rx.source.starts_with("hyperlink's default"),
            "{}",
            rx.source
        );
    }

    #[test]
    fn a_filter_that_matches_nothing_names_the_fabrics() {
        let e = select(Some("nothing_like_this")).unwrap_err();
        assert!(e.contains("shm, tcp, ofi, hyperlink"), "{e}");
    }
}
