//! What a characterisation writes beside its card: report.md (the model, its switches, how
//! well it fits every measurement, and how to run it), fit.json (every number) and fit.csv
//! (one row per measurement with the model's value), one exporter per format.

use std::fmt::Write as _;

use results::format::table::{DelimiterRow, Table};
use serde::Serialize;

use crate::card::{number, Provenance};
use crate::fit::{Fit, Interval};
use crate::model::LogGp;
use crate::observations::{Observations, Pattern};

/// Everything a characterisation found, the input of every exporter.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub fabric: String,
    pub host: String,
    pub ranks: usize,
    pub emulated: bool,
    /// Run directory names the measurements came from (empty when nothing was written).
    pub runs: Vec<String>,
    pub observations: Observations,
    pub fit: Fit,
}

impl Outcome {
    /// The one line a fit too far from its measurements ends with: how far, where, and what
    /// to do about it. None within [`crate::fit::WARN_ERROR`].
    pub fn warning(&self) -> Option<String> {
        let r = self.fit.too_far()?;
        let what = format!(
            "the fit's worst error is {:+.1} % ({} at {} B), above {:.0} %",
            r.error() * 100.0,
            r.pattern.name(),
            r.size,
            crate::fit::WARN_ERROR * 100.0
        );
        Some(if self.emulated {
            format!(
                "warning: {what}: this fabric does something LogGP cannot follow there (virtual time is exact, so more rounds or iterations will not change it); read report.md's notes, or fit a narrower --sizes range"
            )
        } else {
            format!(
                "warning: {what}: the fabric's rounds disagree or the host was busy; characterise again on an idle machine, with more iterations (-i, above OSU's 1000) or more rounds (--rounds {})",
                (self.fit.rounds * 2).max(5)
            )
        })
    }

    pub fn provenance(&self) -> Provenance {
        Provenance {
            fabric: self.fabric.clone(),
            runs: if self.runs.is_empty() {
                vec!["measurements not stored".into()]
            } else {
                self.runs.clone()
            },
            host: self.host.clone(),
            ranks: self.ranks,
            emulated: self.emulated,
        }
    }
}

/// One output file made from an outcome. Only serialising can fail.
pub trait Exporter {
    fn file_name(&self) -> &'static str;
    fn render(&self, o: &Outcome) -> Result<String, serde_json::Error>;
}

pub struct Card;
pub struct Json;
pub struct Csv;
pub struct Markdown;

/// Every file a characterisation writes besides its plots.
pub const EXPORTERS: &[&dyn Exporter] = &[&Card, &Json, &Csv, &Markdown];

impl Exporter for Card {
    fn file_name(&self) -> &'static str {
        "card.toml"
    }
    fn render(&self, o: &Outcome) -> Result<String, serde_json::Error> {
        Ok(crate::card::card(&o.fit, &o.provenance()))
    }
}

impl Exporter for Json {
    fn file_name(&self) -> &'static str {
        "fit.json"
    }
    fn render(&self, o: &Outcome) -> Result<String, serde_json::Error> {
        serde_json::to_string_pretty(o)
    }
}

impl Exporter for Csv {
    fn file_name(&self) -> &'static str {
        "fit.csv"
    }
    fn render(&self, o: &Outcome) -> Result<String, serde_json::Error> {
        let mut out = String::from("pattern,size,measured_us,model_us,error_pct\n");
        for r in &o.fit.residuals {
            let _ = writeln!(
                out,
                "{},{},{:.6},{:.6},{:.3}",
                r.pattern.name(),
                r.size,
                r.measured_ns / 1e3,
                r.model_ns / 1e3,
                r.error() * 100.0
            );
        }
        Ok(out)
    }
}

fn with_iv(value: f64, iv: Option<Interval>) -> String {
    match iv {
        Some(i) if i.high > i.low => {
            format!("{} ({}..{})", number(value), number(i.low), number(i.high))
        }
        _ => number(value),
    }
}

fn bandwidth(p: &LogGp) -> String {
    p.asymptotic_mbs()
        .map(|b| format!("{:.0}", b))
        .unwrap_or_else(|| "-".into())
}

/// A table of report.md, in the tight delimiter row it always had.
fn markdown_table(header: &[&str]) -> Table {
    Table::new(header.iter().copied()).delimiter_row(DelimiterRow::Tight)
}

impl Exporter for Markdown {
    fn file_name(&self) -> &'static str {
        "report.md"
    }
    fn render(&self, o: &Outcome) -> Result<String, serde_json::Error> {
        let mut md = String::new();
        let fit = &o.fit;
        let _ = writeln!(md, "# Characterisation of {}\n", o.fabric);
        let _ = writeln!(
            md,
            "Host {}, {} ranks, measured in {}{}.\n",
            o.host,
            o.ranks,
            if o.runs.is_empty() {
                "runs not stored".into()
            } else {
                o.runs.join(", ")
            },
            if o.emulated {
                " (an emulated fabric: virtual time, exact)"
            } else {
                ""
            }
        );
        let _ = writeln!(
            md,
            "{} round(s) of every size and pattern, measured one after the other; the fit is of each size's median{}.\n",
            fit.rounds,
            if fit.rounds > 1 {
                ", its intervals a 95 % bootstrap over the rounds"
            } else {
                " (one round: no interval)"
            }
        );
        let _ = writeln!(md, "## The model\n");
        let _ = writeln!(
            md,
            "LogGP per protocol segment: a message of s bytes costs the sender o_s(s) = o_s + s·o_s/B, the wire s·G and then L, the receiver o_r(s) = o_r + s·o_r/B; the NIC starts one message per g + s·(G + G+), where G+ (0 in LogGP) is what a stream shows per byte beyond one message's way. Values in ns (per byte where /B); 95 % intervals in parentheses where the data give one.\n"
        );
        let mut segments = markdown_table(&[
            "segment",
            "sizes measured",
            "L",
            "o_s",
            "o_s/B",
            "o_r",
            "o_r/B",
            "g",
            "G",
            "G+",
            "one-way at start (us)",
            "stream limit (MB/s)",
        ]);
        for (k, s) in fit.segments.iter().enumerate() {
            let p = &s.params;
            let iv = &s.intervals;
            segments.push_row([
                format!("{} from {} B", k + 1, s.from),
                format!(
                    "{} ({}..{} B)",
                    s.sizes.len(),
                    s.sizes.first().unwrap_or(&0),
                    s.sizes.last().unwrap_or(&0)
                ),
                with_iv(p.latency_ns, iv.latency_ns),
                with_iv(p.send_ns, iv.send_ns),
                with_iv(p.send_per_byte_ns, iv.send_per_byte_ns),
                with_iv(p.recv_ns, iv.recv_ns),
                with_iv(p.recv_per_byte_ns, iv.recv_per_byte_ns),
                with_iv(p.gap_ns, iv.gap_ns),
                with_iv(p.gap_per_byte_ns, iv.gap_per_byte_ns),
                with_iv(p.extra_gap_per_byte_ns, iv.extra_gap_per_byte_ns),
                format!("{:.3}", p.one_way(s.from) / 1e3),
                bandwidth(p),
            ]);
        }
        md.push_str(&segments.to_markdown());
        let _ = writeln!(md, "\n## Protocol switches\n");
        if fit.switches.is_empty() {
            let _ = writeln!(md, "The ping-pong curve is one straight line: no switch.");
        } else {
            let mut switches = markdown_table(&[
                "between (B)",
                "kind",
                "step at the first size after",
                "off the line before, per round (median)",
                "the rounds' interquartile range",
            ]);
            for s in &fit.switches {
                switches.push_row([
                    format!("{}..{}", s.after, s.before),
                    s.kind.to_string(),
                    format!("{:+.1} %", s.step * 100.0),
                    format!("{:.1} %", s.effect * 100.0),
                    format!("{:.1} %", s.spread * 100.0),
                ]);
            }
            md.push_str(&switches.to_markdown());
        }
        if !fit.within_spread.is_empty() {
            let _ = writeln!(
                md,
                "\nBends of the ping-pong curve no larger than the spread of its rounds there, so not switches: {}.",
                fit.within_spread
                    .iter()
                    .map(|s| format!(
                        "{}..{} B ({:.1} % off the line per round (median), the rounds' interquartile range {:.1} %)",
                        s.after, s.before, s.effect * 100.0, s.spread * 100.0
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        let notes: Vec<String> = fit
            .segments
            .iter()
            .enumerate()
            .flat_map(|(k, s)| {
                s.notes
                    .iter()
                    .map(move |n| format!("- segment {}: {n}", k + 1))
            })
            .collect();
        if !notes.is_empty() {
            let _ = writeln!(
                md,
                "\n## How parameters were found where the direct route was closed\n"
            );
            let _ = writeln!(md, "{}", notes.join("\n"));
        }
        let _ = writeln!(md, "\n## How well the model fits\n");
        let mut worst = markdown_table(&[
            "pattern",
            "worst error",
            "at size (B)",
            "measured (us)",
            "model (us)",
        ]);
        for p in Pattern::ALL {
            if let Some(r) = fit.worst(p, 0) {
                worst.push_row([
                    p.name().to_string(),
                    format!("{:+.1} %", r.error() * 100.0),
                    r.size.to_string(),
                    format!("{:.3}", r.measured_ns / 1e3),
                    format!("{:.3}", r.model_ns / 1e3),
                ]);
            }
        }
        md.push_str(&worst.to_markdown());
        let _ = writeln!(md, "\nEvery measurement beside the model is in fit.csv.\n");
        if let Some(w) = o.warning() {
            let _ = writeln!(md, "**{w}**\n");
        }
        let _ = writeln!(md, "![the fit](fit-{}.svg)\n", o.fabric);
        let _ = writeln!(md, "## Run the model\n");
        let _ = writeln!(md, "```\nfabbench run osu_latency osu_bw --fabric loggp --model card.toml\nfabbench run mpptest -gop -dsum --fabric loggp --model card.toml -n 64\n```");
        Ok(md)
    }
}
