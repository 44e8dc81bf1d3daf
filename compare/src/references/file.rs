//! The reference file: TOML holding one `[[reference]]` table per checked metric, read
//! strictly (an unknown key is an error that lists the valid ones, so a misspelt `uper` cannot
//! silently leave a bound open), and written from a run so users can start from a measured
//! one.
//!
//! ```toml
//! [[reference]]
//! suite = "osu_latency"
//! fabric = "rapidio"
//! ranks = 2              # optional: the series' rank count
//! size = 1024            # the point: size, params = { class = "S", kernel = "cg" }, or both
//! metric = "latency"     # optional: the point's headline metric
//! value = 39.45335
//! lower = -0.05          # optional fraction in [-1, 0]; absent: no lower bound
//! upper = 0.05           # optional fraction >= 0; absent: no upper bound
//! unit = "us"
//! ```

use std::path::Path;

use results::Run;

use super::{Reference, ReferenceError};

/// The key every entry sits under.
const KEY: &str = "reference";

/// Reads and checks the reference file at `path`.
pub fn load(path: &Path) -> Result<Vec<Reference>, ReferenceError> {
    let file = path.display().to_string();
    let text = results::read::read_regular(path).map_err(|source| ReferenceError::Unreadable {
        file: file.clone(),
        source,
    })?;
    parse(&text, &file)
}

/// Parses a reference file's text; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<Vec<Reference>, ReferenceError> {
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        let line = e.span().map_or(1, |s| {
            text[..s.start.min(text.len())].matches('\n').count() + 1
        });
        ReferenceError::Syntax {
            file: file.into(),
            line,
            reason: one_line(e.message()),
        }
    })?;
    let layout = |reason: String| ReferenceError::Layout {
        file: file.into(),
        reason,
    };
    if let Some(other) = table.keys().find(|k| *k != KEY) {
        return Err(layout(format!(
            "unknown key `{other}`: the file holds only [[reference]] tables"
        )));
    }
    let entries = match table.get(KEY) {
        None => return Err(layout("no [[reference]] tables: nothing to check".into())),
        Some(toml::Value::Array(a)) if a.is_empty() => {
            return Err(layout("no [[reference]] tables: nothing to check".into()))
        }
        Some(toml::Value::Array(a)) => a,
        Some(_) => {
            return Err(layout(
                "`reference` must be an array of tables: write each entry under [[reference]]"
                    .into(),
            ))
        }
    };
    entries
        .iter()
        .enumerate()
        .map(|(i, entry)| {
            let invalid = |reason: String| ReferenceError::Invalid {
                file: file.into(),
                index: i + 1,
                reason,
            };
            let r: Reference = entry
                .clone()
                .try_into()
                .map_err(|e: toml::de::Error| invalid(one_line(e.message())))?;
            validate(&r).map_err(invalid)?;
            Ok(r)
        })
        .collect()
}

/// What serde cannot say about an entry: a point, names, and tolerances in range.
fn validate(r: &Reference) -> Result<(), String> {
    if r.suite.is_empty() || r.fabric.is_empty() {
        return Err("suite and fabric must not be empty".into());
    }
    if r.size.is_none() && r.params.is_empty() {
        return Err(
            "no point: give size = BYTES, params = { name = \"value\", ... }, or both".into(),
        );
    }
    if r.ranks == Some(0) {
        return Err("ranks = 0: a series has at least one rank".into());
    }
    if r.metric.as_deref() == Some("") {
        return Err("metric is empty: name one, or leave it out for the headline".into());
    }
    if !r.value.is_finite() {
        return Err(format!("value = {} is not a finite number", r.value));
    }
    if r.unit.is_empty() {
        return Err("unit is empty: give the unit the value is in (\"us\", \"MB/s\")".into());
    }
    if let Some(l) = r.lower {
        if !(-1.0..=0.0).contains(&l) {
            return Err(format!(
                "lower = {l} is not a fraction in [-1, 0] (-0.05 allows 5 % below value; leave \
                 it out for no lower bound)"
            ));
        }
    }
    if let Some(u) = r.upper {
        if !(u >= 0.0 && u.is_finite()) {
            return Err(format!(
                "upper = {u} is not a fraction >= 0 (0.05 allows 5 % above value; leave it out \
                 for no upper bound)"
            ));
        }
    }
    Ok(())
}

/// A multi-line parser message as one line.
fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A reference for every row of the run's summary (every point and metric): the headline as
/// value, `-tolerance` and `+tolerance` as bounds (a fraction in [0, 1]), and the unit.
pub fn from_run(run: &Run, tolerance: f64) -> Vec<Reference> {
    let lower = if tolerance == 0.0 { 0.0 } else { -tolerance };
    run.records()
        .into_iter()
        .filter(|r| r.value.is_finite())
        .map(|r| Reference {
            params: bench_core::measure::PointKey::parse_params(&r.params).unwrap_or_default(),
            suite: r.suite,
            fabric: r.fabric,
            ranks: Some(r.ranks),
            size: r.size,
            metric: Some(r.metric),
            value: r.value,
            lower: Some(lower),
            upper: Some(tolerance),
            unit: r.unit,
        })
        .collect()
}

/// The file for `refs`, each `# ` line of `header` first. Values are written so they read
/// back to the same number, so a tolerance of 0 is an exact gate.
pub fn to_toml(refs: &[Reference], header: &str) -> String {
    let mut out: String = header.lines().map(|l| format!("# {l}\n")).collect();
    for r in refs {
        out.push_str("\n[[reference]]\n");
        let mut line = |key: &str, value: toml::Value| {
            out.push_str(&format!("{key} = {value}\n"));
        };
        line("suite", r.suite.clone().into());
        line("fabric", r.fabric.clone().into());
        if let Some(n) = r.ranks {
            line("ranks", toml::Value::Integer(n as i64));
        }
        if let Some(s) = r.size {
            line("size", toml::Value::Integer(s as i64));
        }
        if let Some(m) = &r.metric {
            line("metric", m.clone().into());
        }
        line("value", r.value.into());
        if let Some(l) = r.lower {
            line("lower", l.into());
        }
        if let Some(u) = r.upper {
            line("upper", u.into());
        }
        line("unit", r.unit.clone().into());
        if !r.params.is_empty() {
            let pairs: Vec<String> = r
                .params
                .iter()
                .map(|(k, v)| format!("{} = {}", key(k), toml::Value::from(v.clone())))
                .collect();
            out.push_str(&format!("params = {{ {} }}\n", pairs.join(", ")));
        }
    }
    out
}

/// A TOML key: bare when TOML allows it, quoted otherwise.
fn key(k: &str) -> String {
    let bare = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        k.into()
    } else {
        toml::Value::from(k).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
[[reference]]
suite = "osu_latency"
fabric = "rapidio"
size = 1024
value = 39
lower = -0.05
upper = 0.05
unit = "us"

[[reference]]
suite = "npb"
fabric = "shm"
ranks = 4
params = { class = "S", kernel = "cg" }
metric = "mops"
value = 250.5
lower = -0.1
unit = "Mop/s"
"#;

    fn error(text: &str) -> String {
        parse(text, "refs.toml").unwrap_err().to_string()
    }

    #[test]
    fn entries_read_with_optional_fields_left_open() {
        let refs = parse(GOOD, "refs.toml").unwrap();
        assert_eq!(refs.len(), 2);
        // an integer value reads as a float
        assert_eq!((refs[0].value, refs[0].size), (39.0, Some(1024)));
        assert_eq!((refs[0].metric.as_deref(), refs[0].ranks), (None, None));
        assert_eq!(refs[1].point(), "class=S kernel=cg");
        assert_eq!((refs[1].lower, refs[1].upper), (Some(-0.1), None));
        assert_eq!(refs[1].ranks, Some(4));
    }

    #[test]
    fn errors_name_the_file_the_entry_and_what_is_valid() {
        let typo = GOOD.replace("upper = 0.05", "uper = 0.05");
        let e = error(&typo);
        assert!(
            e.starts_with("refs.toml: reference 1: unknown field `uper`, expected one of")
                && e.contains("`upper`"),
            "{e}"
        );
        let e = error(&GOOD.replace("lower = -0.1", "lower = 0.1"));
        assert!(
            e.starts_with("refs.toml: reference 2: lower = 0.1 is not a fraction in [-1, 0]"),
            "{e}"
        );
        let e = error(&GOOD.replace("upper = 0.05", "upper = -0.05"));
        assert!(
            e.contains("reference 1: upper = -0.05 is not a fraction >= 0"),
            "{e}"
        );
        let e = error(&GOOD.replace("unit = \"us\"\n", ""));
        assert_eq!(e, "refs.toml: reference 1: missing field `unit`");
        let e = error(&GOOD.replace("size = 1024\n", ""));
        assert!(
            e.contains("reference 1: no point: give size = BYTES"),
            "{e}"
        );
        let e = error(&GOOD.replace("value = 39", "value = \"39\""));
        assert!(
            e.starts_with("refs.toml: reference 1: invalid type: string"),
            "{e}"
        );
        let e = error(&GOOD.replace(
            "[[reference]]\nsuite = \"npb\"",
            "[[references]]\nsuite = \"npb\"",
        ));
        assert!(e.contains("unknown key `references`"), "{e}");
        let e = error("# nothing\n");
        assert!(e.contains("no [[reference]] tables"), "{e}");
        let e = error("[reference]\nsuite = \"x\"\n");
        assert!(e.contains("must be an array of tables"), "{e}");
        for e in [error(&typo), error("a = \n[[reference]]\n")] {
            assert!(!e.contains('\n'), "one line: {e}");
        }
        let e = error("\n\n[[reference]]\nsuite = = 1\n");
        assert!(e.starts_with("refs.toml line 4: "), "{e}");
    }

    #[test]
    fn a_written_file_reads_back_to_the_same_references() {
        let mut refs = parse(GOOD, "refs.toml").unwrap();
        refs[0].value = 31.291674999999998;
        refs[0].ranks = Some(2);
        refs[0].metric = Some("latency".into());
        refs[1].params.insert("odd key".into(), "a \"b\"".into());
        let text = to_toml(&refs, "written by a test\nline two");
        assert!(text.starts_with("# written by a test\n# line two\n\n[[reference]]\n"));
        assert!(text.contains("value = 31.291674999999998\n"), "{text}");
        assert_eq!(parse(&text, "x").unwrap(), refs);
    }
}
