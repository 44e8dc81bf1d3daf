//! The OSU trio's parameters and options, with OSU's spelling and meaning: `-m [MIN:]MAX`,
//! `-i`, `-x`, `-W`, `-c`, `-z`. `None` means OSU 7.4's own default.

use bench_core::size::{format_size, parse_size};
use serde::{Deserialize, Serialize};

use crate::options::{Dash, OptionDef, OptionKind, SuiteArgs};
use crate::suite::ParamError;
use crate::MAX_MESSAGE_SIZE;

/// The largest window bw and bibw accept.
const MAX_WINDOW: u64 = 1024;

/// Parameters of osu_latency, osu_bw and osu_bibw.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OsuParams {
    pub min_size: Option<u64>,
    pub max_size: Option<u64>,
    pub iterations: Option<u64>,
    /// None: OSU's rule by size (each point records the warm-up it ran).
    pub warmup: Option<u64>,
    /// bw and bibw's window (filled with OSU's 64 when not given); latency has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<u64>,
    /// `-c`: check every received byte.
    pub validate: bool,
    /// `-z`: print P50, P90 and P99 columns.
    pub tail: bool,
    /// `-z50,95`: the percentiles of the tail columns, when not OSU's 50, 90 and 99.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tail_at: Vec<u64>,
    /// Exact sizes, ascending, instead of `-m`'s doubling sequence: not an OSU option, for
    /// library callers (autotune measures between powers of two when it refines a threshold).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_list: Option<Vec<u64>>,
    /// `fabbench run --quick`: a tenth of OSU's iterations and warm-up for every size (at
    /// least one timed iteration); an explicit `-i` or `-x` still wins.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub quick: bool,
}

/// The most timed (and warm-up) iterations per size: ten million samples are 80 MB on rank 0
/// and about 300 MB of samples.csv.
pub const MAX_ITERATIONS: u64 = 10_000_000;

/// Options OSU's tests share with the loggp suite, which measures their patterns.
pub const MESSAGE_SIZE: OptionDef = OptionDef {
    long: "message-size",
    short: Some('m'),
    dash: Dash::Two,
    kind: OptionKind::Text,
    value_name: "[MIN:]MAX",
    help: "Message sizes: [MIN:]MAX or MIN: (bytes; 4K, 1M accepted), as OSU's -m",
};

pub const ITERATIONS: OptionDef = OptionDef {
    long: "iterations",
    short: Some('i'),
    dash: Dash::Two,
    kind: OptionKind::Count,
    value_name: "N",
    help: "Timed iterations per size (default: OSU 7.4's rule for small and large messages)",
};

pub const WARMUP: OptionDef = OptionDef {
    long: "warmup",
    short: Some('x'),
    dash: Dash::Two,
    kind: OptionKind::Count,
    value_name: "N",
    help: "Warm-up iterations per size (default: OSU 7.4's rule)",
};

pub const WINDOW_SIZE: OptionDef = OptionDef {
    long: "window-size",
    short: Some('W'),
    dash: Dash::Two,
    kind: OptionKind::Count,
    value_name: "N",
    help: "Window size for bw and bibw",
};

pub const VALIDATION: OptionDef = OptionDef {
    long: "validation",
    short: Some('c'),
    dash: Dash::Two,
    kind: OptionKind::Flag,
    value_name: "",
    help: "Check every received byte against a per-iteration pattern",
};

pub const TAIL_LAT: OptionDef = OptionDef {
    long: "tail-lat",
    short: Some('z'),
    dash: Dash::Two,
    kind: OptionKind::FlagOrValue,
    value_name: "P,P...",
    help: "Print tail latency percentile columns (P50, P90, P99, or those listed: -z50,95 or --tail-lat=50,95), as OSU's -z",
};

/// The options bw and bibw take (latency's, [`LATENCY_OPTIONS`], less `-W`).
pub static OPTIONS: &[OptionDef] = &[
    MESSAGE_SIZE,
    ITERATIONS,
    WARMUP,
    WINDOW_SIZE,
    VALIDATION,
    TAIL_LAT,
];

/// osu_latency's: the trio's less `-W`, since a ping-pong sends one message at a time (OSU's
/// osu_latency has no window either), so `run --help` lists `-W` for bw and bibw only.
pub static LATENCY_OPTIONS: &[OptionDef] =
    &[MESSAGE_SIZE, ITERATIONS, WARMUP, VALIDATION, TAIL_LAT];

fn usage(msg: impl Into<String>) -> ParamError {
    ParamError(msg.into())
}

impl OsuParams {
    /// The parameters the options say, refusing what OSU would not run.
    pub fn from_args(args: &SuiteArgs) -> Result<OsuParams, ParamError> {
        let (min_size, max_size) = match args.get("message-size") {
            None => (None, None),
            Some(m) => message_sizes(m)?,
        };
        let iterations = args.count("iterations")?;
        let warmup = args.count("warmup")?;
        let window = args.count("window-size")?;
        check_counts(iterations, warmup)?;
        if let Some(w) = window.filter(|w| !(1..=MAX_WINDOW).contains(w)) {
            return Err(usage(format!(
                "-W {w}: the window must be 1 to {MAX_WINDOW}"
            )));
        }
        Ok(OsuParams {
            min_size,
            max_size,
            iterations,
            warmup,
            window,
            validate: args.flag("validation"),
            tail: args.flag("tail-lat"),
            tail_at: tail_percentiles(args.get("tail-lat").unwrap_or(""))?,
            size_list: None,
            quick: false,
        })
    }
}

/// `-i` and `-x` within what can be run: at least one timed iteration, and at most
/// [`MAX_ITERATIONS`] of either (rank 0 keeps every timed sample, 8 bytes each, and
/// samples.csv a row for each).
pub fn check_counts(iterations: Option<u64>, warmup: Option<u64>) -> Result<(), ParamError> {
    if iterations == Some(0) {
        return Err(usage("-i 0: iterations must be at least 1"));
    }
    if let Some(i) = iterations.filter(|i| *i > MAX_ITERATIONS) {
        return Err(usage(format!(
            "-i {i}: at most {MAX_ITERATIONS} timed iterations per size (every sample is kept)"
        )));
    }
    if let Some(x) = warmup.filter(|x| *x > MAX_ITERATIONS) {
        return Err(usage(format!(
            "-x {x}: at most {MAX_ITERATIONS} warm-up iterations per size"
        )));
    }
    Ok(())
}

/// `-z`'s optional list, `50,95`: whole percentiles 1 to 99, as OSU's integer rule takes them.
fn tail_percentiles(text: &str) -> Result<Vec<u64>, ParamError> {
    if text.is_empty() {
        return Ok(Vec::new());
    }
    text.split(',')
        .map(|p| match p.trim().parse::<u64>() {
            Ok(v) if (1..=99).contains(&v) => Ok(v),
            _ => Err(usage(format!(
                "-z{text}: '{p}' is not a percentile; list whole numbers 1 to 99, such as -z50,95"
            ))),
        })
        .collect()
}

/// OSU's `-m [MIN:]MAX` (and `MIN:`), with sizes such as 4K accepted.
pub fn message_sizes(text: &str) -> Result<(Option<u64>, Option<u64>), ParamError> {
    let limit = format_size(MAX_MESSAGE_SIZE);
    let valid = format!("use -m [MIN:]MAX or -m MIN: with MIN <= MAX <= {limit}");
    let one = |part: &str| -> Result<u64, ParamError> {
        let v = parse_size(part).map_err(|e| usage(format!("-m {text}: {e}")))?;
        if v > MAX_MESSAGE_SIZE {
            return Err(usage(format!(
                "-m {text}: {} exceeds the largest message size, {limit}; {valid}",
                format_size(v)
            )));
        }
        Ok(v)
    };
    let (min, max) = match text.split_once(':') {
        None => (None, Some(one(text)?)),
        Some((a, "")) => (Some(one(a)?), None),
        Some(("", b)) => (None, Some(one(b)?)),
        Some((a, b)) => (Some(one(a)?), Some(one(b)?)),
    };
    if let (Some(a), Some(b)) = (min, max) {
        if a > b {
            return Err(usage(format!(
                "-m {text}: MIN ({a}) is larger than MAX ({b}); {valid}"
            )));
        }
    }
    Ok((min, max))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_size_forms() {
        assert_eq!(message_sizes("128"), Ok((None, Some(128))));
        assert_eq!(message_sizes("2:128"), Ok((Some(2), Some(128))));
        assert_eq!(message_sizes("2:"), Ok((Some(2), None)));
        assert_eq!(message_sizes("4K:1M"), Ok((Some(4096), Some(1 << 20))));
    }

    #[test]
    fn message_size_errors_say_what_is_valid() {
        let e = message_sizes("8:4").unwrap_err().0;
        assert!(
            e.contains("MIN (8) is larger than MAX (4)") && e.contains("[MIN:]MAX"),
            "{e}"
        );
        let e = message_sizes("1:abc").unwrap_err().0;
        assert!(e.contains("'abc' is not a size"), "{e}");
        let e = message_sizes("2G").unwrap_err().0;
        assert!(e.contains("exceeds the largest message size, 1GiB"), "{e}");
        assert!(message_sizes(":").is_err());
    }

    #[test]
    fn options_become_parameters_and_bad_ones_are_refused() {
        let mut a = SuiteArgs::new();
        a.set("message-size", "4K:1M")
            .set("iterations", "20")
            .set("window-size", "8")
            .flag_on("validation");
        let p = OsuParams::from_args(&a).unwrap();
        assert_eq!(
            p,
            OsuParams {
                min_size: Some(4096),
                max_size: Some(1 << 20),
                iterations: Some(20),
                warmup: None,
                window: Some(8),
                validate: true,
                tail: false,
                tail_at: Vec::new(),
                size_list: None,
                quick: false,
            }
        );
        a.set("tail-lat", "50,95");
        assert_eq!(OsuParams::from_args(&a).unwrap().tail_at, vec![50, 95]);
        a.set("tail-lat", "99.9");
        assert!(OsuParams::from_args(&a)
            .unwrap_err()
            .0
            .contains("'99.9' is not a percentile"));
        a.set("tail-lat", "");
        a.set("iterations", "4294967297");
        assert!(OsuParams::from_args(&a)
            .unwrap_err()
            .0
            .contains("at most 10000000 timed iterations"));
        a.set("iterations", "0");
        assert!(OsuParams::from_args(&a)
            .unwrap_err()
            .0
            .contains("iterations must be at least 1"));
        a.set("iterations", "1").set("window-size", "1025");
        assert!(OsuParams::from_args(&a)
            .unwrap_err()
            .0
            .contains("window must be 1 to 1024"));
        assert_eq!(
            OsuParams::from_args(&SuiteArgs::new()).unwrap(),
            OsuParams::default()
        );
    }
}
