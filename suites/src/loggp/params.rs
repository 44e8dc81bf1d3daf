//! The loggp suite's parameters and options. The OSU options it shares (`-m`, `-i`, `-x`,
//! `-W`, `-c`) are declared exactly as the OSU trio declares them, so one argument serves all
//! and means the same; `--pattern` is its own.

use serde::{Deserialize, Serialize};

use crate::options::{Dash, OptionDef, OptionKind, SuiteArgs};
use crate::osu::{
    check_counts, message_sizes, DEFAULT_MAX_SIZE, ITERATIONS, LARGE_MESSAGE_SIZE, MESSAGE_SIZE,
    VALIDATION, WARMUP, WINDOW_SIZE,
};
use crate::suite::ParamError;
use crate::MAX_MESSAGE_SIZE;

/// The patterns' names, in their default order, for messages that say what is valid.
const VALID: &str = "pingpong, stream, send, recv";

/// One measured pattern; serialised (and keyed in points) by its lowercase name.
/// Ordered as measured (a characterisation keys its observations by it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    /// Half a ping-pong's round trip (osu_latency's iteration).
    Pingpong,
    /// Time per message of a window of back-to-back sends and its 1-byte acknowledgement
    /// (osu_bw's iteration).
    Stream,
    /// The sender's time in isend and wait, a delay between them (o_s).
    Send,
    /// The receiver's time in irecv and wait, the message there before the wait (o_r).
    Recv,
}

impl Pattern {
    /// Every pattern, in the order a run measures them.
    pub const ALL: [Pattern; 4] = [
        Pattern::Pingpong,
        Pattern::Stream,
        Pattern::Send,
        Pattern::Recv,
    ];

    /// The name in `--pattern` and in a point's `pattern` parameter.
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Pingpong => "pingpong",
            Pattern::Stream => "stream",
            Pattern::Send => "send",
            Pattern::Recv => "recv",
        }
    }

    /// The pattern named `word`, if any.
    pub fn from_name(word: &str) -> Option<Pattern> {
        Pattern::ALL.into_iter().find(|p| p.name() == word)
    }

    /// `--pattern`'s comma-separated list, in the order given, each pattern once.
    pub fn parse_list(list: &str) -> Result<Vec<Pattern>, ParamError> {
        if list.trim().is_empty() {
            return Err(ParamError(format!(
                "--pattern '{list}': give one or more of {VALID}, comma-separated"
            )));
        }
        let mut out = Vec::new();
        for w in list.split(',').map(str::trim) {
            let p = Pattern::from_name(w).ok_or_else(|| {
                ParamError(format!(
                    "--pattern {list}: '{w}' is not a pattern; valid patterns are {VALID} (comma-separated)"
                ))
            })?;
            if !out.contains(&p) {
                out.push(p);
            }
        }
        Ok(out)
    }
}

/// The stream's default window (osu_bw's).
pub const DEFAULT_WINDOW: u64 = 64;
/// The largest window (osu_bw's limit in fabbench).
const MAX_WINDOW: u64 = 1024;

/// The loggp suite's parameters. Every field has a default, so a library caller gives only
/// what it sets, as JSON or as this struct.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct LoggpParams {
    /// Exact sizes in bytes, ascending; empty: OSU's doubling sequence from `min_size` to
    /// `max_size` (what `-m` sets).
    pub sizes: Vec<u64>,
    pub min_size: Option<u64>,
    pub max_size: Option<u64>,
    /// The patterns, measured in this order (every size of one, then the next).
    pub patterns: Vec<Pattern>,
    /// Messages per stream iteration (osu_bw's window, 64).
    pub window: u64,
    /// Timed iterations per point (default: [`LoggpParams::counts`]'s rule).
    pub iterations: Option<u64>,
    pub warmup: Option<u64>,
    /// `-c`: fill every message with OSU's per-iteration pattern and check every received byte.
    pub validate: bool,
}

impl Default for LoggpParams {
    fn default() -> LoggpParams {
        LoggpParams {
            sizes: Vec::new(),
            min_size: None,
            max_size: None,
            patterns: Pattern::ALL.to_vec(),
            window: DEFAULT_WINDOW,
            iterations: None,
            warmup: None,
            validate: false,
        }
    }
}

impl LoggpParams {
    /// The sizes measured, ascending: the exact list, or OSU's sequence from `min_size`
    /// (default 1, as osu_bw) doubling to `max_size` (default 4 MiB), 0 followed by 1.
    pub fn size_list(&self) -> Vec<u64> {
        if !self.sizes.is_empty() {
            return self.sizes.clone();
        }
        let min = self.min_size.unwrap_or(1);
        let max = self.max_size.unwrap_or(DEFAULT_MAX_SIZE);
        let mut out = Vec::new();
        let mut s = min;
        while s <= max {
            out.push(s);
            s = if s == 0 { 1 } else { s * 2 };
        }
        out
    }

    /// (timed, warm-up) iterations of `pattern` at `size`: `iterations`/`warmup` where set,
    /// else a tenth of osu_latency's rule for the ping-pong and the overheads (1000/100 up to
    /// 8 KiB, 100/10 above: a fit needs means, and four patterns with delays at every size
    /// would take minutes at OSU's counts), osu_bw's (100/10, 20/2) for the stream, whose
    /// every iteration is a window of messages.
    pub fn counts(&self, pattern: Pattern, size: u64) -> (u64, u64) {
        let large = size > LARGE_MESSAGE_SIZE;
        let (i, x) = match (pattern, large) {
            (Pattern::Stream, false) => (100, 10),
            (Pattern::Stream, true) => (20, 2),
            (_, false) => (1000, 100),
            (_, true) => (100, 10),
        };
        (self.iterations.unwrap_or(i), self.warmup.unwrap_or(x))
    }

    /// The parameters the options say (`-m`, `-i`, `-x`, `-W`, `-c` as OSU's, `--pattern`).
    pub fn from_args(args: &SuiteArgs) -> Result<LoggpParams, ParamError> {
        let usage = |m: String| ParamError(m);
        let (min_size, max_size) = match args.get("message-size") {
            None => (None, None),
            Some(m) => message_sizes(m)?,
        };
        let patterns = match args.get("pattern") {
            None => Pattern::ALL.to_vec(),
            Some(list) => Pattern::parse_list(list)?,
        };
        let iterations = args.count("iterations")?;
        let warmup = args.count("warmup")?;
        check_counts(iterations, warmup)?;
        let window = args.count("window-size")?.unwrap_or(DEFAULT_WINDOW);
        if !(1..=MAX_WINDOW).contains(&window) {
            return Err(usage(format!(
                "-W {window}: the window must be 1 to {MAX_WINDOW}"
            )));
        }
        Ok(LoggpParams {
            sizes: Vec::new(),
            min_size,
            max_size,
            patterns,
            window,
            iterations,
            warmup,
            validate: args.flag("validation"),
        })
    }

    /// Refuses what cannot be measured (parameters a library caller built directly too).
    pub fn check(&self) -> Result<(), ParamError> {
        let sizes = self.size_list();
        if sizes.is_empty() || sizes.windows(2).any(|w| w[0] >= w[1]) {
            return Err(ParamError(
                "loggp: sizes must be ascending and not empty".into(),
            ));
        }
        if *sizes.last().expect("not empty") > MAX_MESSAGE_SIZE {
            return Err(ParamError(format!(
                "loggp: sizes are at most {MAX_MESSAGE_SIZE} bytes"
            )));
        }
        if self.patterns.is_empty() {
            return Err(ParamError(format!("loggp: at least one pattern ({VALID})")));
        }
        if let Some(p) = self
            .patterns
            .iter()
            .enumerate()
            .find_map(|(i, p)| self.patterns[..i].contains(p).then_some(p))
        {
            return Err(ParamError(format!(
                "loggp: pattern {} is asked for twice; each of {VALID} at most once",
                p.name()
            )));
        }
        if !(1..=MAX_WINDOW).contains(&self.window) {
            return Err(ParamError(format!(
                "loggp: the window must be 1 to {MAX_WINDOW}"
            )));
        }
        if self.iterations == Some(0) {
            return Err(ParamError("loggp: iterations must be at least 1".into()));
        }
        Ok(())
    }
}

/// OSU's size, iteration, window and validation options, and the patterns.
pub static OPTIONS: &[OptionDef] = &[
    MESSAGE_SIZE,
    ITERATIONS,
    WARMUP,
    WINDOW_SIZE,
    VALIDATION,
    OptionDef {
        long: "pattern",
        short: None,
        dash: Dash::Two,
        kind: OptionKind::Text,
        value_name: "P[,P]",
        help: "loggp: the patterns to measure, comma-separated, of pingpong, stream, send, recv (default all four, in that order)",
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_become_parameters() {
        let mut a = SuiteArgs::new();
        a.set("message-size", "1:64K")
            .set("pattern", "send, recv,send")
            .set("iterations", "20")
            .set("warmup", "2")
            .set("window-size", "16")
            .flag_on("validation");
        let p = LoggpParams::from_args(&a).unwrap();
        assert_eq!(
            p,
            LoggpParams {
                sizes: Vec::new(),
                min_size: Some(1),
                max_size: Some(65536),
                patterns: vec![Pattern::Send, Pattern::Recv],
                window: 16,
                iterations: Some(20),
                warmup: Some(2),
                validate: true,
            }
        );
        assert_eq!(p.size_list().len(), 17);
        assert!(p.check().is_ok());
        let d = LoggpParams::from_args(&SuiteArgs::new()).unwrap();
        assert_eq!(d, LoggpParams::default());
        assert_eq!(d.patterns, Pattern::ALL);
        assert_eq!((d.size_list()[0], d.size_list().len()), (1, 23));
    }

    #[test]
    fn a_bad_pattern_says_which_are_valid() {
        let e = Pattern::parse_list(" ").unwrap_err().0;
        assert!(
            e.contains("give one or more of pingpong, stream, send, recv"),
            "{e}"
        );
        for bad in ["sned", "send,", "pingpong,all"] {
            let mut a = SuiteArgs::new();
            a.set("pattern", bad);
            let e = LoggpParams::from_args(&a).unwrap_err().0;
            assert!(
                e.starts_with(&format!("--pattern {bad}:"))
                    && e.contains("valid patterns are pingpong, stream, send, recv"),
                "{e}"
            );
        }
    }

    #[test]
    fn bad_numbers_are_refused() {
        for (opt, v, says) in [
            ("iterations", "0", "iterations must be at least 1"),
            ("window-size", "0", "window must be 1 to 1024"),
            ("window-size", "1025", "window must be 1 to 1024"),
            ("message-size", "8:4", "MIN (8) is larger than MAX (4)"),
        ] {
            let mut a = SuiteArgs::new();
            a.set(opt, v);
            let e = LoggpParams::from_args(&a).unwrap_err().0;
            assert!(e.contains(says), "{opt} {v}: {e}");
        }
    }

    #[test]
    fn parameters_built_directly_are_checked() {
        let ok = LoggpParams {
            sizes: vec![0, 8, 4096],
            ..Default::default()
        };
        assert!(ok.check().is_ok(), "0 bytes is a size, as in osu_latency");
        let bad = [
            LoggpParams {
                sizes: vec![8, 8],
                ..Default::default()
            },
            LoggpParams {
                sizes: vec![MAX_MESSAGE_SIZE + 1],
                ..Default::default()
            },
            LoggpParams {
                patterns: Vec::new(),
                ..Default::default()
            },
            LoggpParams {
                patterns: vec![Pattern::Send, Pattern::Send],
                ..Default::default()
            },
            LoggpParams {
                window: 0,
                ..Default::default()
            },
            LoggpParams {
                iterations: Some(0),
                ..Default::default()
            },
            LoggpParams {
                min_size: Some(8),
                max_size: Some(4),
                ..Default::default()
            },
        ];
        for p in bad {
            assert!(p.check().is_err(), "{p:?} should be refused");
        }
    }

    #[test]
    fn json_names_the_fields_and_the_patterns_in_lowercase() {
        let p: LoggpParams = serde_json::from_str(
            r#"{"sizes": [1, 64], "patterns": ["stream", "pingpong"], "iterations": 20}"#,
        )
        .unwrap();
        assert_eq!(p.patterns, vec![Pattern::Stream, Pattern::Pingpong]);
        assert_eq!(
            (p.window, p.iterations, p.warmup, p.size_list()),
            (DEFAULT_WINDOW, Some(20), None, vec![1, 64])
        );
        let back = serde_json::to_value(&p).unwrap();
        assert_eq!(back["patterns"], serde_json::json!(["stream", "pingpong"]));
        assert!(serde_json::from_str::<LoggpParams>(r#"{"patterns": ["Send"]}"#).is_err());
    }

    #[test]
    fn a_tenth_of_osu_latency_s_rule_and_osu_bw_s_unless_overridden() {
        let d = LoggpParams::default();
        assert_eq!(d.counts(Pattern::Pingpong, 8192), (1000, 100));
        assert_eq!(d.counts(Pattern::Send, 8193), (100, 10));
        assert_eq!(d.counts(Pattern::Stream, 8192), (100, 10));
        assert_eq!(d.counts(Pattern::Stream, 8193), (20, 2));
        let o = LoggpParams {
            iterations: Some(20),
            warmup: Some(0),
            ..Default::default()
        };
        assert_eq!(o.counts(Pattern::Recv, 1 << 20), (20, 0));
    }

    #[test]
    fn shared_options_are_declared_as_osu_declares_them() {
        for o in OPTIONS.iter().filter(|o| o.long != "pattern") {
            let osu = crate::osu::OPTIONS.iter().find(|x| x.long == o.long);
            assert_eq!(Some(o), osu, "--{}", o.long);
        }
    }
}
