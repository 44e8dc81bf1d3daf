//! The loggp suite's parameters and options. The OSU options it shares (`-m`, `-i`, `-x`,
//! `-W`, `-c`) are declared exactly as the OSU trio declares them, so one argument serves all.

use serde::{Deserialize, Serialize};

use crate::options::{Dash, OptionDef, OptionKind, SuiteArgs};
use crate::osu::message_sizes;
use crate::suite::ParamError;
use crate::MAX_MESSAGE_SIZE;

/// One measured pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    /// Half a ping-pong's round trip.
    Pingpong,
    /// Time per message of a window of back-to-back sends and its 1-byte acknowledgement.
    Stream,
    /// The sender's time in isend and wait, a delay between them (o_s).
    Send,
    /// The receiver's time in irecv and wait, the message there before the wait (o_r).
    Recv,
}

impl Pattern {
    pub const ALL: [Pattern; 4] = [
        Pattern::Pingpong,
        Pattern::Stream,
        Pattern::Send,
        Pattern::Recv,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Pattern::Pingpong => "pingpong",
            Pattern::Stream => "stream",
            Pattern::Send => "send",
            Pattern::Recv => "recv",
        }
    }

    fn parse(word: &str) -> Result<Pattern, ParamError> {
        Pattern::ALL
            .into_iter()
            .find(|p| p.name() == word)
            .ok_or_else(|| {
                ParamError(format!(
                    "--pattern {word}: valid patterns are pingpong, stream, send, recv"
                ))
            })
    }
}

/// The stream's default window (osu_bw's).
pub const DEFAULT_WINDOW: u64 = 64;
const MAX_WINDOW: u64 = 1024;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct LoggpParams {
    /// Exact sizes, ascending; empty: powers of two from `min_size` to `max_size`.
    pub sizes: Vec<u64>,
    pub min_size: Option<u64>,
    pub max_size: Option<u64>,
    pub patterns: Vec<Pattern>,
    pub window: u64,
    /// Timed iterations per point (default: a tenth of osu_latency's rule for the ping-pong and
    /// the overheads, osu_bw's for the stream).
    pub iterations: Option<u64>,
    pub warmup: Option<u64>,
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
    /// The sizes measured, ascending.
    pub fn size_list(&self) -> Vec<u64> {
        if !self.sizes.is_empty() {
            return self.sizes.clone();
        }
        let min = self.min_size.unwrap_or(1).max(1);
        let max = self.max_size.unwrap_or(1 << 22);
        let mut out = Vec::new();
        let mut s = min;
        while s <= max {
            out.push(s);
            s *= 2;
        }
        out
    }

    pub fn from_args(args: &SuiteArgs) -> Result<LoggpParams, ParamError> {
        let usage = |m: String| ParamError(m);
        let (min_size, max_size) = match args.get("message-size") {
            None => (None, None),
            Some(m) => message_sizes(m)?,
        };
        let patterns = match args.get("pattern") {
            None => Pattern::ALL.to_vec(),
            Some(list) => {
                let mut out = Vec::new();
                for w in list.split(',').map(str::trim) {
                    let p = Pattern::parse(w)?;
                    if !out.contains(&p) {
                        out.push(p);
                    }
                }
                out
            }
        };
        let iterations = args.count("iterations").map_err(usage)?;
        if iterations == Some(0) {
            return Err(usage("-i 0: iterations must be at least 1".into()));
        }
        let window = args
            .count("window-size")
            .map_err(usage)?
            .unwrap_or(DEFAULT_WINDOW);
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
            warmup: args.count("warmup").map_err(usage)?,
            validate: args.flag("validation"),
        })
    }

    pub fn check(&self) -> Result<(), ParamError> {
        let sizes = self.size_list();
        if sizes.is_empty() || sizes.windows(2).any(|w| w[0] >= w[1]) || sizes[0] == 0 {
            return Err(ParamError(
                "loggp: sizes must be ascending, at least 1 byte, and not empty".into(),
            ));
        }
        if *sizes.last().expect("not empty") > MAX_MESSAGE_SIZE {
            return Err(ParamError(format!(
                "loggp: sizes are at most {MAX_MESSAGE_SIZE} bytes"
            )));
        }
        if self.patterns.is_empty() {
            return Err(ParamError(
                "loggp: at least one pattern (pingpong, stream, send, recv)".into(),
            ));
        }
        if !(1..=MAX_WINDOW).contains(&self.window) {
            return Err(ParamError(format!(
                "loggp: the window must be 1 to {MAX_WINDOW}"
            )));
        }
        Ok(())
    }
}

pub static OPTIONS: &[OptionDef] = &[
    OptionDef {
        long: "message-size",
        short: Some('m'),
        dash: Dash::Two,
        kind: OptionKind::Text,
        value_name: "[MIN:]MAX",
        help: "Message sizes: [MIN:]MAX or MIN: (bytes; 4K, 1M accepted), as OSU's -m",
    },
    OptionDef {
        long: "iterations",
        short: Some('i'),
        dash: Dash::Two,
        kind: OptionKind::Count,
        value_name: "N",
        help: "Timed iterations per size (default: OSU 7.4's rule for small and large messages)",
    },
    OptionDef {
        long: "warmup",
        short: Some('x'),
        dash: Dash::Two,
        kind: OptionKind::Count,
        value_name: "N",
        help: "Warm-up iterations per size (default: OSU 7.4's rule)",
    },
    OptionDef {
        long: "window-size",
        short: Some('W'),
        dash: Dash::Two,
        kind: OptionKind::Count,
        value_name: "N",
        help: "Window size for bw and bibw",
    },
    OptionDef {
        long: "validation",
        short: Some('c'),
        dash: Dash::Two,
        kind: OptionKind::Flag,
        value_name: "",
        help: "Check every received byte against a per-iteration pattern",
    },
    OptionDef {
        long: "pattern",
        short: None,
        dash: Dash::Two,
        kind: OptionKind::Text,
        value_name: "P[,P]",
        help: "loggp: patterns to measure, of pingpong, stream, send, recv (default all)",
    },
];
