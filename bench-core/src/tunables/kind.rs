//! What a tunable is, whatever reads it: its declaration ([`Def`]), the type and range of
//! values it takes ([`Kind`]: parsing, range checks, and how `fabbench list` and error
//! messages describe it) and a validated value ([`Value`]).

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::size::{format_size, parse_size};

/// The type and valid range of a tunable.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// A byte count (accepts 4096, 4K, 4KiB, 1M).
    Size { min: u64, max: u64 },
    /// A whole number.
    Int { min: i64, max: i64 },
    /// A real number.
    Float { min: f64, max: f64 },
    /// on/off (also true/false, yes/no, 1/0).
    Bool,
    /// One of a fixed list of words.
    Choice(&'static [&'static str]),
    /// A duration (accepts 30s, 500ms, 2m).
    Duration { min_ms: u64, max_ms: u64 },
    /// Free text passed through (interface names, MPI variable values).
    Text,
    /// Unset (the empty default: nothing is passed on), or a value of the inner kind.
    Optional(&'static Kind),
}

/// A value of a tunable, already validated against its [`Kind`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Value {
    Bool(bool),
    Int(i64),
    Float(f64),
    /// Sizes and durations serialise as their canonical text, so a manifest reads like the CLI.
    Text(String),
}

/// One tunable's declaration.
#[derive(Debug, Clone, Copy)]
pub struct Def {
    pub name: &'static str,
    pub kind: Kind,
    /// Parsed with the same rules as user input; a unit test checks every default is valid.
    pub default: &'static str,
    pub help: &'static str,
    /// Where the default comes from, when that is more than fabbench's own choice: a model
    /// card's `[S] stated`, `[D] derived` or `[A] assumption` with its reference. Empty for the
    /// tunables declared in code. Kept apart from `help` so a listing shows it on demand.
    pub source: &'static str,
}

impl Kind {
    /// What a valid value looks like, for error messages and `fabbench list`.
    pub fn describe(&self) -> String {
        match *self {
            Kind::Size { min, max } => format!(
                "a size from {} to {} (e.g. 4096, 64K, 1M)",
                format_size(min),
                format_size(max)
            ),
            Kind::Int { min, max } => format!("a whole number from {min} to {max}"),
            Kind::Float { min, max } => format!("a number from {min} to {max}"),
            Kind::Bool => "on or off".to_string(),
            Kind::Choice(words) => format!("one of {}", words.join(", ")),
            Kind::Duration { min_ms, max_ms } => format!(
                "a duration from {} to {} (e.g. 500ms, 30s)",
                humantime::format_duration(Duration::from_millis(min_ms)),
                humantime::format_duration(Duration::from_millis(max_ms))
            ),
            Kind::Text => "any text".to_string(),
            Kind::Optional(inner) => format!("{} (or empty: unset)", inner.describe()),
        }
    }

    /// The range column of `fabbench list tunables`.
    pub fn range(&self) -> String {
        match *self {
            Kind::Size { min, max } => format!("{}..{}", format_size(min), format_size(max)),
            Kind::Int { min, max } => format!("{min}..{max}"),
            Kind::Float { min, max } => format!("{min}..{max}"),
            Kind::Bool => "on|off".to_string(),
            Kind::Choice(words) => words.join("|"),
            Kind::Duration { min_ms, max_ms } => format!(
                "{}..{}",
                humantime::format_duration(Duration::from_millis(min_ms)),
                humantime::format_duration(Duration::from_millis(max_ms))
            ),
            Kind::Text => "text".to_string(),
            Kind::Optional(inner) => format!("unset|{}", inner.range()),
        }
    }

    /// Parses and range-checks user text; `Err` carries [`Kind::describe`].
    pub fn parse(&self, text: &str) -> Result<Value, String> {
        let t = text.trim();
        match *self {
            Kind::Size { min, max } => match parse_size(t) {
                Ok(v) if (min..=max).contains(&v) => Ok(Value::Text(format_size(v))),
                _ => Err(self.describe()),
            },
            Kind::Int { min, max } => match t.parse::<i64>() {
                Ok(v) if (min..=max).contains(&v) => Ok(Value::Int(v)),
                _ => Err(self.describe()),
            },
            Kind::Float { min, max } => match t.parse::<f64>() {
                Ok(v) if v.is_finite() && v >= min && v <= max => Ok(Value::Float(v)),
                _ => Err(self.describe()),
            },
            Kind::Bool => match t.to_ascii_lowercase().as_str() {
                "on" | "true" | "yes" | "1" => Ok(Value::Bool(true)),
                "off" | "false" | "no" | "0" => Ok(Value::Bool(false)),
                _ => Err(self.describe()),
            },
            Kind::Choice(words) => {
                let lower = t.to_ascii_lowercase();
                words
                    .iter()
                    .find(|w| **w == lower)
                    .map(|w| Value::Text(w.to_string()))
                    .ok_or_else(|| self.describe())
            }
            Kind::Duration { min_ms, max_ms } => match humantime::parse_duration(t) {
                Ok(d) if (min_ms as u128..=max_ms as u128).contains(&d.as_millis()) => {
                    Ok(Value::Text(humantime::format_duration(d).to_string()))
                }
                _ => Err(self.describe()),
            },
            Kind::Text => Ok(Value::Text(t.to_string())),
            Kind::Optional(_) if t.is_empty() => Ok(Value::Text(String::new())),
            Kind::Optional(inner) => inner.parse(t).map_err(|_| self.describe()),
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Bool(b) => f.write_str(if *b { "on" } else { "off" }),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{x}"),
            Value::Text(s) => f.write_str(s),
        }
    }
}
