//! What a calibration writes: card.toml (the fabric's whole card with the fitted values, each
//! saying how it was fitted and what the card said before), calibration.json (every number),
//! report.md (the table beside the fit, the fitted values and how well each is determined)
//! and calibrate-FABRIC.svg and .png (the table and the fit drawn, [`crate::chart`]), one
//! exporter per format, into a directory made whole or not at all.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use results::format::table::{DelimiterRow, Table};
use results::run_dir::RunDir;

use crate::error::CalibrateError;
use crate::params::card_of;
use crate::Outcome;

fn toml_str(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// A fitted value as the card writes it: whole numbers for counts and sizes, six significant
/// digits otherwise.
fn value_text(kind: &str, x: f64) -> String {
    match kind {
        "int" | "size" => format!("{}", x.round() as u64),
        _ => {
            let digits = (5 - x.abs().max(1e-12).log10().floor() as i32).max(0) as usize;
            let s = format!("{x:.digits$}");
            if s.contains('.') {
                s.trim_end_matches('0').trim_end_matches('.').to_string()
            } else {
                s
            }
        }
    }
}

pub fn card(o: &Outcome) -> String {
    let card = card_of(&o.fabric).expect("the fabric was checked");
    let tables = o.tables.join(", ");
    let worst = o
        .worst()
        .and_then(|p| p.error)
        .map(|e| format!("{:.1} %", e.abs() * 100.0))
        .unwrap_or_else(|| "-".into());
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# The {} card calibrated by `fabbench calibrate` to {tables}: worst error {worst} over {} points.\n# Run it: fabbench run SUITE --fabric {} --model card.toml\nfabric = {}\nsummary = {}",
        o.fabric,
        o.points.iter().filter(|p| p.error.is_some()).count(),
        o.fabric,
        toml_str(&card.fabric),
        toml_str(&card.summary)
    );
    for p in &card.params {
        let fitted = o.params.iter().find(|f| f.free.name == p.name);
        let held = o.fixed.iter().find_map(|s| {
            let (k, v) = s.split_once('=')?;
            let k = k.strip_prefix(&format!("{}.", o.fabric)).unwrap_or(k);
            (k == p.name).then(|| v.to_string())
        });
        let (value, source) = match (fitted, held) {
            (Some(f), _) => (
                value_text(&p.kind, f.value),
                format!(
                    "fitted by fabbench calibrate to {tables} ({}{}); the card said {}: {}",
                    f.determination.verdict,
                    f.determination
                        .within_factor
                        .map(|k| format!(", moves the fit little within x/÷{k}"))
                        .unwrap_or_default(),
                    p.value,
                    p.source
                ),
            ),
            (None, Some(v)) => (
                v,
                format!("held at this value during the calibration (by --set, or chosen as the better of on and off); the card said {}: {}", p.value, p.source),
            ),
            (None, None) => (p.value.clone(), p.source.clone()),
        };
        let _ = writeln!(out, "\n[[param]]");
        let _ = writeln!(out, "name = {}", toml_str(&p.name));
        let _ = writeln!(out, "kind = {}", toml_str(&p.kind));
        let _ = writeln!(out, "value = {}", toml_str(&value));
        for (k, v) in [("min", &p.min), ("max", &p.max)] {
            if let Some(v) = v {
                let _ = writeln!(out, "{k} = {}", toml_str(v));
            }
        }
        if let Some(c) = &p.choices {
            let list: Vec<String> = c.iter().map(|w| toml_str(w)).collect();
            let _ = writeln!(out, "choices = [{}]", list.join(", "));
        }
        let _ = writeln!(out, "meaning = {}", toml_str(&p.meaning));
        let _ = writeln!(out, "source = {}", toml_str(&source));
    }
    // Engine tunables fitted with the card (the MPI stack's eager threshold) go in it too:
    // `--model` sets a name the registry knows as it stands.
    for f in o.params.iter().filter(|f| f.free.engine) {
        let _ = writeln!(out, "\n[[param]]");
        let _ = writeln!(out, "name = {}", toml_str(&f.free.name));
        let _ = writeln!(out, "kind = {}", toml_str(&f.free.kind));
        let _ = writeln!(
            out,
            "value = {}",
            toml_str(&value_text(&f.free.kind, f.value))
        );
        let _ = writeln!(
            out,
            "meaning = {}",
            toml_str("the engine's eager/rendezvous threshold for this stack")
        );
        let _ = writeln!(
            out,
            "source = {}",
            toml_str(&format!(
                "fitted by fabbench calibrate to {tables} ({}); {}",
                f.determination.verdict, f.free.source
            ))
        );
    }
    out
}

pub fn json(o: &Outcome) -> String {
    serde_json::to_string_pretty(o).expect("the outcome serialises")
}

fn unit(suite: &str) -> &'static str {
    if suite == "osu_latency" {
        "us"
    } else {
        "MB/s"
    }
}

/// A table of report.md, in the tight delimiter row it always had.
fn markdown_table(header: &[&str]) -> Table {
    Table::new(header.iter().copied()).delimiter_row(DelimiterRow::Tight)
}

pub fn markdown(o: &Outcome) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# Calibration of the {} card\n", o.fabric);
    let _ = writeln!(
        md,
        "Fitted to {} in {} trials ({:.0} s): the sum of squared log errors went from {:.3} to {:.4}.{}\n",
        o.tables.join(", "),
        o.trials,
        o.seconds,
        o.cost_before,
        o.cost,
        if o.left_out > 0 {
            format!(
                " {} value(s) printed as 0.00 (below OSU's two decimals) cannot be matched relatively and were left out of the fit; the card's value there is shown.",
                o.left_out
            )
        } else {
            String::new()
        }
    );
    let _ = writeln!(md, "## The table beside the calibrated card\n");
    let mut points = markdown_table(&[
        "suite",
        "size (B)",
        "measured",
        "calibrated",
        "error",
        "card before",
    ]);
    for p in &o.points {
        let f = |v: Option<f64>| v.map(|v| format!("{v:.2}")).unwrap_or_else(|| "-".into());
        points.push_row([
            p.suite.clone(),
            p.size.to_string(),
            format!("{:.2} {}", p.measured, unit(&p.suite)),
            f(p.emulated),
            p.error
                .map(|e| format!("{:+.1} %", e * 100.0))
                .unwrap_or_else(|| "left out".into()),
            f(p.before),
        ]);
    }
    md.push_str(&points.to_markdown());
    let _ = writeln!(md, "\n## Fitted values\n");
    let mut fitted = markdown_table(&[
        "parameter",
        "card",
        "fitted",
        "how well the table determines it",
    ]);
    for p in &o.params {
        fitted.push_row([
            format!(
                "{}{}",
                p.free.name,
                if p.free.overrides_stated {
                    " (overrides a stated value)"
                } else {
                    ""
                }
            ),
            value_text(&p.free.kind, p.free.start),
            value_text(&p.free.kind, p.value),
            format!(
                "{}{}",
                p.determination.verdict,
                p.determination
                    .within_factor
                    .map(|k| format!(" (the fit holds within x/÷{k})"))
                    .unwrap_or_default()
            ),
        ]);
    }
    md.push_str(&fitted.to_markdown());
    let _ = writeln!(
        md,
        "\nRun it: `fabbench run osu_latency osu_bw osu_bibw --fabric {} --model card.toml`",
        o.fabric
    );
    md
}

/// Writes card.toml, calibration.json, report.md and the chart into a new directory under
/// `out`.
pub fn write(o: &Outcome, out: &Path) -> Result<PathBuf, CalibrateError> {
    let id = format!(
        "{}-calibrate-{}",
        results::run_dir::stamp(std::time::SystemTime::now()),
        o.fabric
    );
    // Everything is rendered before the directory exists: a failure leaves nothing behind.
    let chart = crate::chart::chart(&o.into());
    let files: Vec<(String, Vec<u8>)> = vec![
        ("card.toml".into(), card(o).into_bytes()),
        ("calibration.json".into(), json(o).into_bytes()),
        ("report.md".into(), markdown(o).into_bytes()),
        (format!("{}.svg", chart.name), chart.svg()?.into_bytes()),
        (format!("{}.png", chart.name), chart.png()?),
    ];
    let dir = RunDir::create(out, &id).map_err(CalibrateError::Unwritable)?;
    for (name, bytes) in &files {
        dir.write(Path::new(name), bytes)
            .map_err(|source| CalibrateError::Write {
                path: dir.final_path().join(name),
                source,
            })?;
    }
    dir.commit().map_err(|source| CalibrateError::Write {
        path: out.to_path_buf(),
        source,
    })
}
