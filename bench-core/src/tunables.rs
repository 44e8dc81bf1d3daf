//! The typed registry of every knob fabbench has.
//!
//! Each tunable is declared once, next to the code that reads it, as a [`Def`]: name, type,
//! default, valid range and a one-line meaning. The binary gathers those declarations into one
//! [`Registry`]; `--set name=value`, profile files and fabric presets all go through
//! [`Settings::set`], so a value is validated in exactly one place, and every result can record
//! the full set in force together with where each value came from.

use std::collections::BTreeMap;
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
}

/// Where a value in force came from, lowest precedence first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    Default,
    Fabric,
    Profile,
    /// A model card given with `--model FILE`.
    Model,
    Cli,
}

/// Why a name or value was refused. Every message says what is valid.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TunableError {
    #[error("unknown tunable '{name}'{}; `fabbench list tunables` shows them all", suggestion.as_ref().map(|s| format!(" (did you mean '{s}'?)")).unwrap_or_default())]
    Unknown {
        name: String,
        suggestion: Option<String>,
    },
    #[error("{name}={value}: expected {expected}")]
    BadValue {
        name: String,
        value: String,
        expected: String,
    },
    #[error("'{0}' is not NAME=VALUE (e.g. --set eager_limit=8K)")]
    Syntax(String),
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

/// Every declared tunable, in declaration order.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    defs: Vec<Def>,
}

impl Registry {
    /// Gathers groups of declarations (engine, each wire, each model card, MPI variables).
    /// Panics on a duplicate name: that is a programming error caught by the first test run.
    pub fn new(groups: &[&[Def]]) -> Registry {
        let mut defs: Vec<Def> = Vec::new();
        for group in groups {
            for d in group.iter() {
                assert!(
                    !defs.iter().any(|e| e.name == d.name),
                    "tunable {} declared twice",
                    d.name
                );
                defs.push(*d);
            }
        }
        Registry { defs }
    }

    pub fn defs(&self) -> &[Def] {
        &self.defs
    }

    pub fn get(&self, name: &str) -> Option<&Def> {
        self.defs.iter().find(|d| d.name == name)
    }

    /// Every tunable at its declared default.
    pub fn defaults(&self) -> Settings {
        let mut values = BTreeMap::new();
        for d in &self.defs {
            let v = d
                .kind
                .parse(d.default)
                .unwrap_or_else(|e| panic!("default of {} is invalid: {e}", d.name));
            values.insert(d.name.to_string(), (v, Source::Default));
        }
        Settings { values }
    }

    fn lookup(&self, name: &str) -> Result<&Def, TunableError> {
        self.get(name).ok_or_else(|| TunableError::Unknown {
            name: name.to_string(),
            suggestion: self.closest(name),
        })
    }

    fn closest(&self, name: &str) -> Option<String> {
        let len = name.chars().count();
        self.defs
            .iter()
            // The distance is at least the difference in length: a name far longer than any
            // tunable (a whole file given as one) is not compared character by character
            // with each of them.
            .filter(|d| len.abs_diff(d.name.len()) <= 3.max(d.name.len() / 4))
            .map(|d| (edit_distance(name, d.name), d.name))
            .filter(|(dist, cand)| *dist <= 3.max(cand.len() / 4))
            .min()
            .map(|(_, n)| n.to_string())
    }
}

/// The values in force for one run, each with its [`Source`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    values: BTreeMap<String, (Value, Source)>,
}

impl Settings {
    /// Sets `name` to `text` if `source` has at least the precedence of the current value's.
    pub fn set(
        &mut self,
        registry: &Registry,
        name: &str,
        text: &str,
        source: Source,
    ) -> Result<(), TunableError> {
        let def = registry.lookup(name.trim())?;
        let value = def
            .kind
            .parse(text)
            .map_err(|expected| TunableError::BadValue {
                name: def.name.to_string(),
                value: text.to_string(),
                expected,
            })?;
        let slot = self
            .values
            .get_mut(def.name)
            .expect("settings made from this registry");
        if source >= slot.1 {
            *slot = (value, source);
        }
        Ok(())
    }

    /// Parses `NAME=VALUE` as given to `--set`.
    pub fn set_assignment(
        &mut self,
        registry: &Registry,
        assignment: &str,
        source: Source,
    ) -> Result<(), TunableError> {
        let (name, value) = assignment
            .split_once('=')
            .filter(|(n, _)| !n.trim().is_empty())
            .ok_or_else(|| TunableError::Syntax(assignment.to_string()))?;
        self.set(registry, name, value, source)
    }

    /// Applies a profile file: a TOML table of `name = value` (strings, numbers or booleans),
    /// optionally under a `[tunables]` table, as `fabbench autotune` writes it.
    pub fn apply_profile(
        &mut self,
        registry: &Registry,
        toml_text: &str,
    ) -> Result<(), ProfileError> {
        let doc: toml::Table = toml_text
            .parse()
            .map_err(|e: toml::de::Error| ProfileError::Syntax(e.message().to_string()))?;
        let table = match doc.get("tunables") {
            Some(toml::Value::Table(t)) => t.clone(),
            Some(_) => return Err(ProfileError::Syntax("[tunables] must be a table".into())),
            None => doc,
        };
        let mut flat = Vec::new();
        flatten("", &table, &mut flat);
        for (name, value) in flat {
            self.set(registry, &name, &value, Source::Profile)?;
        }
        Ok(())
    }

    pub fn value(&self, name: &str) -> &Value {
        &self
            .values
            .get(name)
            .unwrap_or_else(|| panic!("tunable {name} is not registered"))
            .0
    }

    pub fn source(&self, name: &str) -> Source {
        self.values
            .get(name)
            .unwrap_or_else(|| panic!("tunable {name} is not registered"))
            .1
    }

    pub fn size(&self, name: &str) -> u64 {
        match self.value(name) {
            Value::Text(t) => parse_size(t).expect("validated size"),
            v => panic!("tunable {name} is not a size: {v:?}"),
        }
    }

    pub fn flag(&self, name: &str) -> bool {
        match self.value(name) {
            Value::Bool(b) => *b,
            v => panic!("tunable {name} is not on/off: {v:?}"),
        }
    }

    pub fn int(&self, name: &str) -> i64 {
        match self.value(name) {
            Value::Int(i) => *i,
            v => panic!("tunable {name} is not a whole number: {v:?}"),
        }
    }

    pub fn float(&self, name: &str) -> f64 {
        match self.value(name) {
            Value::Float(x) => *x,
            Value::Int(i) => *i as f64,
            v => panic!("tunable {name} is not a number: {v:?}"),
        }
    }

    pub fn text(&self, name: &str) -> &str {
        match self.value(name) {
            Value::Text(t) => t,
            v => panic!("tunable {name} is not text: {v:?}"),
        }
    }

    pub fn duration(&self, name: &str) -> Duration {
        humantime::parse_duration(self.text(name)).expect("validated duration")
    }

    /// (name, value, source) for every tunable, in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value, Source)> {
        self.values.iter().map(|(k, (v, s))| (k.as_str(), v, *s))
    }

    /// Only the tunables whose names start with `prefix` (e.g. "rapidio.").
    pub fn with_prefix<'a>(
        &'a self,
        prefix: &'a str,
    ) -> impl Iterator<Item = (&'a str, &'a Value, Source)> + 'a {
        self.iter().filter(move |(k, _, _)| k.starts_with(prefix))
    }
}

/// Why a profile file was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProfileError {
    #[error("not a valid profile (TOML of name = value): {0}")]
    Syntax(String),
    #[error(transparent)]
    Tunable(#[from] TunableError),
}

fn flatten(prefix: &str, table: &toml::Table, out: &mut Vec<(String, String)>) {
    for (k, v) in table {
        let name = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            toml::Value::Table(t) => flatten(&name, t, out),
            toml::Value::String(s) => out.push((name, s.clone())),
            other => out.push((name, other.to_string())),
        }
    }
}

/// Levenshtein distance, for "did you mean" suggestions.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEFS: &[Def] = &[
        Def {
            name: "eager_limit",
            kind: Kind::Size {
                min: 0,
                max: 1 << 20,
            },
            default: "4K",
            help: "largest message sent eagerly",
        },
        Def {
            name: "rx_thread",
            kind: Kind::Bool,
            default: "off",
            help: "progress thread",
        },
        Def {
            name: "single_copy",
            kind: Kind::Choice(&["auto", "on", "off"]),
            default: "auto",
            help: "single copy",
        },
        Def {
            name: "timeout",
            kind: Kind::Duration {
                min_ms: 10,
                max_ms: 3_600_000,
            },
            default: "30s",
            help: "wait bound",
        },
        Def {
            name: "rapidio.link_mbps",
            kind: Kind::Float { min: 1.0, max: 1e6 },
            default: "192",
            help: "link peak",
        },
    ];

    fn reg() -> Registry {
        Registry::new(&[DEFS])
    }

    #[test]
    fn defaults_parse_and_read_back() {
        let s = reg().defaults();
        assert_eq!(s.size("eager_limit"), 4096);
        assert!(!s.flag("rx_thread"));
        assert_eq!(s.text("single_copy"), "auto");
        assert_eq!(s.duration("timeout"), Duration::from_secs(30));
        assert_eq!(s.float("rapidio.link_mbps"), 192.0);
        assert!(s.iter().all(|(_, _, src)| src == Source::Default));
    }

    #[test]
    fn set_validates_type_and_range() {
        let r = reg();
        let mut s = r.defaults();
        s.set_assignment(&r, "eager_limit=64K", Source::Cli)
            .unwrap();
        assert_eq!(s.size("eager_limit"), 65536);
        assert_eq!(s.source("eager_limit"), Source::Cli);
        let err = s
            .set_assignment(&r, "eager_limit=2M", Source::Cli)
            .unwrap_err();
        assert!(err.to_string().contains("from 0 to 1MiB"), "{err}");
        let err = s
            .set_assignment(&r, "rx_thread=maybe", Source::Cli)
            .unwrap_err();
        assert!(err.to_string().contains("on or off"), "{err}");
        let err = s
            .set_assignment(&r, "single_copy=cma", Source::Cli)
            .unwrap_err();
        assert!(err.to_string().contains("auto, on, off"), "{err}");
        assert!(matches!(
            s.set_assignment(&r, "noequals", Source::Cli),
            Err(TunableError::Syntax(_))
        ));
        // a refused value leaves the old one in force
        assert_eq!(s.size("eager_limit"), 65536);
    }

    #[test]
    fn unknown_names_get_a_suggestion() {
        let r = reg();
        let mut s = r.defaults();
        let err = s
            .set_assignment(&r, "eagr_limit=1", Source::Cli)
            .unwrap_err();
        assert_eq!(
            err,
            TunableError::Unknown {
                name: "eagr_limit".into(),
                suggestion: Some("eager_limit".into())
            }
        );
        let err = s
            .set_assignment(&r, "zzzzzzzzzzzz=1", Source::Cli)
            .unwrap_err();
        assert!(matches!(
            err,
            TunableError::Unknown {
                suggestion: None,
                ..
            }
        ));
    }

    #[test]
    fn lower_precedence_does_not_override_cli() {
        let r = reg();
        let mut s = r.defaults();
        s.set(&r, "rx_thread", "on", Source::Cli).unwrap();
        s.set(&r, "rx_thread", "off", Source::Fabric).unwrap();
        assert!(s.flag("rx_thread"));
        s.set(&r, "eager_limit", "8K", Source::Fabric).unwrap();
        assert_eq!(s.size("eager_limit"), 8192);
        assert_eq!(s.source("eager_limit"), Source::Fabric);
    }

    #[test]
    fn profiles_accept_flat_nested_and_tunables_table() {
        let r = reg();
        let mut s = r.defaults();
        s.apply_profile(
            &r,
            "[tunables]\neager_limit = \"16K\"\nrx_thread = true\n[tunables.rapidio]\nlink_mbps = 100.5\n",
        )
        .unwrap();
        assert_eq!(s.size("eager_limit"), 16384);
        assert!(s.flag("rx_thread"));
        assert_eq!(s.float("rapidio.link_mbps"), 100.5);
        assert_eq!(s.source("rx_thread"), Source::Profile);
        let err = s.apply_profile(&r, "bogus = 1").unwrap_err();
        assert!(matches!(
            err,
            ProfileError::Tunable(TunableError::Unknown { .. })
        ));
        assert!(matches!(
            s.apply_profile(&r, "= ="),
            Err(ProfileError::Syntax(_))
        ));
    }

    #[test]
    fn optional_values_are_unset_or_valid() {
        const SIZE: Kind = Kind::Size {
            min: 0,
            max: 1 << 20,
        };
        let k = Kind::Optional(&SIZE);
        assert_eq!(k.parse(""), Ok(Value::Text(String::new())));
        assert_eq!(k.parse("4K"), Ok(Value::Text("4KiB".into())));
        assert!(k.parse("lots").unwrap_err().contains("or empty: unset"));
        assert_eq!(k.range(), "unset|0..1MiB");
    }

    #[test]
    #[should_panic(expected = "declared twice")]
    fn duplicate_declarations_are_refused() {
        Registry::new(&[DEFS, DEFS]);
    }
}
