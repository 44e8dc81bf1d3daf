//! The model card a fit becomes: TOML in the format of fabbench's built-in cards, for the
//! `loggp` fabric (`fabbench run SUITE --fabric loggp --model card.toml`). Every value says
//! where it came from (the run and the pattern it was fitted from, or why it was assumed) and,
//! where the data give one, its 95 % interval.

use std::fmt::Write as _;

use crate::fit::{Fit, Interval};
use crate::model::LogGp;

/// Where the measurements came from, for the card's sources.
#[derive(Debug, Clone)]
pub struct Provenance {
    /// The fabric label measured ("shm", "bxi").
    pub fabric: String,
    /// The run directory names the fit was made from.
    pub runs: Vec<String>,
    /// The host measured on.
    pub host: String,
    /// Ranks in the measured job.
    pub ranks: usize,
    /// Whether the fabric measured runs in virtual time.
    pub emulated: bool,
}

/// A number short enough to read, exact enough to reproduce the fit: six significant digits.
pub fn number(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return "0".into();
    }
    let digits = 6 - 1 - x.abs().log10().floor() as i32;
    let rounded = if digits > 0 {
        let f = 10f64.powi(digits);
        (x * f).round() / f
    } else {
        let f = 10f64.powi(-digits);
        (x / f).round() * f
    };
    format!("{rounded}")
}

fn iv_text(iv: Option<Interval>) -> Option<String> {
    iv.map(|i| format!("{} .. {}", number(i.low), number(i.high)))
}

struct Entry {
    name: String,
    kind: &'static str,
    value: String,
    meaning: String,
    source: String,
    interval: Option<String>,
}

fn toml_str(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// The card's TOML.
pub fn card(fit: &Fit, from: &Provenance) -> String {
    let runs = from.runs.join(", ");
    let mut entries: Vec<Entry> = vec![
        Entry {
            name: "segments".into(),
            kind: "int",
            value: fit.segments.len().to_string(),
            meaning: "protocol segments in use (slots s1..)".into(),
            source: format!(
                "fitted from {runs}: the switches of the ping-pong curve ({})",
                if fit.switches.is_empty() {
                    "none".to_string()
                } else {
                    fit.switches
                        .iter()
                        .map(|s| format!("{}..{} B", s.after, s.before))
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            ),
            interval: None,
        },
        Entry {
            name: "ranks_per_node".into(),
            kind: "int",
            value: "1".into(),
            meaning: "ranks sharing one node's NIC".into(),
            source: format!(
                "[A] each rank has its own NIC, as the {} ranks measured on {} had their own path; set it to ask what sharing one does",
                from.ranks, from.fabric
            ),
            interval: None,
        },
        Entry {
            name: "compute_scale".into(),
            kind: "float",
            value: "1".into(),
            meaning: "the node's compute time as a multiple of this host's".into(),
            source: format!("[A] the node modelled is the host measured ({})", from.host),
            interval: None,
        },
    ];
    for (k, seg) in fit.segments.iter().enumerate() {
        let slot = k + 1;
        let first = seg.sizes.first().copied().unwrap_or(0);
        let last = seg.sizes.last().copied().unwrap_or(0);
        let whence = |what: &str| {
            format!(
                "fitted from {runs}: {what}, segment {slot} ({} sizes, {first}..{last} B)",
                seg.sizes.len()
            )
        };
        let p: &LogGp = &seg.params;
        let iv = &seg.intervals;
        let from_src = if k == 0 {
            "the first segment starts at 0".to_string()
        } else {
            let s = &fit.switches[k - 1];
            format!(
                "fitted from {runs}: the ping-pong switches ({}) between {} and {} B",
                s.kind, s.after, s.before
            )
        };
        let mut push = |name: &str,
                        kind: &'static str,
                        value: String,
                        meaning: &str,
                        source: String,
                        interval: Option<String>| {
            entries.push(Entry {
                name: format!("s{slot}.{name}"),
                kind,
                value,
                meaning: meaning.into(),
                source,
                interval,
            })
        };
        push(
            "from",
            "size",
            seg.from.to_string(),
            "smallest message of the segment, bytes",
            from_src,
            None,
        );
        push(
            "latency_ns",
            "float",
            number(p.latency_ns),
            "L: time of flight after the sender's overhead and the bytes' injection",
            whence("ping-pong less both overheads and s*G"),
            iv_text(iv.latency_ns),
        );
        push(
            "send_ns",
            "float",
            number(p.send_ns),
            "o_s: the sender's time in its calls, fixed part",
            whence("send pattern's intercept"),
            iv_text(iv.send_ns),
        );
        push(
            "send_per_byte_ns",
            "float",
            number(p.send_per_byte_ns),
            "o_s per byte",
            whence("send pattern's slope"),
            iv_text(iv.send_per_byte_ns),
        );
        push(
            "recv_ns",
            "float",
            number(p.recv_ns),
            "o_r: the receiver's time in its calls, fixed part",
            whence("receive pattern's intercept"),
            iv_text(iv.recv_ns),
        );
        push(
            "recv_per_byte_ns",
            "float",
            number(p.recv_per_byte_ns),
            "o_r per byte",
            whence("receive pattern's slope"),
            iv_text(iv.recv_per_byte_ns),
        );
        push(
            "gap_ns",
            "float",
            number(p.gap_ns),
            "g: least time between two messages' starts at the NIC",
            whence("stream's steady step less s*G"),
            iv_text(iv.gap_ns),
        );
        push(
            "gap_per_byte_ns",
            "float",
            number(p.gap_per_byte_ns),
            "G: time per byte on the wire",
            whence("stream's slope where the wire sets the pace"),
            iv_text(iv.gap_per_byte_ns),
        );
        push(
            "extra_gap_per_byte_ns",
            "float",
            number(p.extra_gap_per_byte_ns),
            "G+: the NIC's gap per byte between messages beyond G (0 in LogGP)",
            whence("stream's slope beyond the model's pace"),
            iv_text(iv.extra_gap_per_byte_ns),
        );
    }
    for (k, seg) in fit.segments.iter().enumerate() {
        if !seg.notes.is_empty() {
            let slot = k + 1;
            for e in entries
                .iter_mut()
                .filter(|e| e.name.starts_with(&format!("s{slot}.")))
            {
                if e.name.ends_with("from") {
                    continue;
                }
                e.source.push_str(&format!("; {}", seg.notes.join("; ")));
            }
        }
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# A LogGP model of {} fitted by `fabbench characterise` from {runs} on {}.\n# Run it: fabbench run SUITE --fabric loggp --model card.toml -n N\n# Each value's source says what it was fitted from; interval is its 95 % confidence interval.",
        from.fabric, from.host
    );
    let _ = writeln!(out, "fabric = \"loggp\"");
    let _ = writeln!(
        out,
        "summary = {}",
        toml_str(&format!(
            "{} as a LogGP model with {} protocol segment(s), fitted from {runs}{}",
            from.fabric,
            fit.segments.len(),
            if from.emulated {
                " (itself emulated)"
            } else {
                ""
            }
        ))
    );
    for e in entries {
        let _ = writeln!(out, "\n[[param]]");
        let _ = writeln!(out, "name = {}", toml_str(&e.name));
        let _ = writeln!(out, "kind = {}", toml_str(e.kind));
        let _ = writeln!(out, "value = {}", toml_str(&e.value));
        let _ = writeln!(out, "meaning = {}", toml_str(&e.meaning));
        let _ = writeln!(out, "source = {}", toml_str(&e.source));
        if let Some(i) = e.interval {
            let _ = writeln!(out, "interval = {}", toml_str(&i));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_six_significant_digits() {
        assert_eq!(number(710.000000001), "710");
        assert_eq!(number(0.0666666666), "0.0666667");
        assert_eq!(number(123456789.0), "123457000");
        assert_eq!(number(0.0), "0");
    }

    #[test]
    fn the_card_reads_back_as_the_loggp_fabric_s_values() {
        use crate::fit::{Intervals, SegmentFit};
        let p = LogGp {
            latency_ns: 710.0,
            send_ns: 300.0,
            send_per_byte_ns: 0.0,
            recv_ns: 600.0,
            recv_per_byte_ns: 1.0 / 15.0,
            gap_ns: 310.0,
            gap_per_byte_ns: 0.08,
            extra_gap_per_byte_ns: 0.0,
        };
        let seg = |from: u64| SegmentFit {
            from,
            sizes: vec![from.max(1), from.max(1) * 2],
            params: p,
            intervals: Intervals {
                latency_ns: Some(Interval {
                    low: 700.0,
                    high: 720.0,
                }),
                ..Intervals::default()
            },
            notes: vec!["a note".into()],
        };
        let fit = Fit {
            window: 64,
            switches: vec![crate::segments::Switch {
                after: 32768,
                before: 40960,
                kind: curves::Kind::Jump,
                step: 0.5,
                effect: 0.5,
                spread: 0.02,
            }],
            within_spread: Vec::new(),
            rounds: 3,
            segments: vec![seg(0), seg(40960)],
            residuals: Vec::new(),
        };
        let text = card(
            &fit,
            &Provenance {
                fabric: "bxi".into(),
                runs: vec!["RUN1".into()],
                host: "h".into(),
                ranks: 2,
                emulated: true,
            },
        );
        let read = transports::registry::read_model_card(&text).unwrap();
        assert_eq!(read.fabric.as_deref(), Some("loggp"));
        let get = |n: &str| {
            read.values
                .iter()
                .find(|(k, _)| k == n)
                .map(|(_, v)| v.clone())
                .unwrap_or_else(|| panic!("{n} missing from\n{text}"))
        };
        assert_eq!(get("segments"), "2");
        assert_eq!(get("s2.from"), "40960");
        assert_eq!(get("s1.recv_per_byte_ns"), "0.0666667");
        assert_eq!(get("s2.latency_ns"), "710");
        assert!(text.contains("interval = \"700 .. 720\""), "{text}");
        assert!(text.contains("fitted from RUN1"), "{text}");
    }
}
