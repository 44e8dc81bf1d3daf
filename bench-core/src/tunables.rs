//! The typed registry of every knob fabbench has.
//!
//! Each tunable is declared once, next to the code that reads it, as a typed [`Key`]: name,
//! kind and valid range, default and a one-line meaning (its [`Def`]), and the Rust type it
//! reads as. The binary gathers those declarations into one [`Registry`]; `--set name=value`,
//! profile files and fabric presets all go through [`Settings::set`], so a value is validated
//! in exactly one place, and every result can record the full set in force together with
//! where each value came from. Code reads a value through its key ([`Settings::get`]), so a
//! misspelt name does not compile; only a name known at run time alone (a model card's
//! parameter, an `mpi.*` variable, a name the user gave) is read as text, through
//! [`Settings::get_by_runtime_name`].

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;
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

/// A tunable declared with the Rust type it reads as: `Key<u64>` a size in bytes, `Key<i64>` a
/// whole number, `Key<f64>` a real number, `Key<bool>` on/off, `Key<str>` a choice or free
/// text, `Key<Duration>` a duration, `Key<Option<i64>>` an optional whole number. Each type has
/// its own constructors, which build the matching [`Kind`], so the two cannot disagree.
///
/// ```
/// use bench_core::tunables::{Def, Key, Registry};
/// const EAGER_LIMIT: Key<u64> =
///     Key::size("eager_limit", 0, 1 << 20, "4K", "largest message sent eagerly");
/// const GROUP: &[Def] = &[EAGER_LIMIT.def()];
/// let settings = Registry::new(&[GROUP]).defaults();
/// assert_eq!(settings.get(EAGER_LIMIT), 4096);
/// ```
///
/// A value cannot be read by a name written out in code, so a misspelt one fails to compile:
///
/// ```compile_fail
/// # use bench_core::tunables::Registry;
/// let settings = Registry::new(&[]).defaults();
/// let limit = settings.size("eagr_limit");
/// ```
pub struct Key<T: ?Sized> {
    def: Def,
    reads_as: PhantomData<fn() -> *const T>,
}

impl<T: ?Sized> Clone for Key<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: ?Sized> Copy for Key<T> {}

impl<T: ?Sized> fmt::Debug for Key<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Key").field(&self.def).finish()
    }
}

impl<T: ?Sized> Key<T> {
    const fn declare(
        name: &'static str,
        kind: Kind,
        default: &'static str,
        help: &'static str,
    ) -> Key<T> {
        Key {
            def: Def {
                name,
                kind,
                default,
                help,
            },
            reads_as: PhantomData,
        }
    }

    /// The declaration the registry takes (groups of them are `&[Def]`).
    pub const fn def(self) -> Def {
        self.def
    }

    pub const fn name(self) -> &'static str {
        self.def.name
    }
}

impl Key<u64> {
    /// A byte count from `min` to `max`.
    pub const fn size(
        name: &'static str,
        min: u64,
        max: u64,
        default: &'static str,
        help: &'static str,
    ) -> Key<u64> {
        Key::declare(name, Kind::Size { min, max }, default, help)
    }
}

impl Key<i64> {
    /// A whole number from `min` to `max`.
    pub const fn int(
        name: &'static str,
        min: i64,
        max: i64,
        default: &'static str,
        help: &'static str,
    ) -> Key<i64> {
        Key::declare(name, Kind::Int { min, max }, default, help)
    }
}

impl Key<f64> {
    /// A real number from `min` to `max`.
    pub const fn float(
        name: &'static str,
        min: f64,
        max: f64,
        default: &'static str,
        help: &'static str,
    ) -> Key<f64> {
        Key::declare(name, Kind::Float { min, max }, default, help)
    }
}

impl Key<bool> {
    /// on or off.
    pub const fn flag(name: &'static str, default: &'static str, help: &'static str) -> Key<bool> {
        Key::declare(name, Kind::Bool, default, help)
    }
}

impl Key<str> {
    /// One of `words`; reads as the word chosen.
    pub const fn choice(
        name: &'static str,
        words: &'static [&'static str],
        default: &'static str,
        help: &'static str,
    ) -> Key<str> {
        Key::declare(name, Kind::Choice(words), default, help)
    }

    /// Free text, passed through.
    pub const fn text(name: &'static str, default: &'static str, help: &'static str) -> Key<str> {
        Key::declare(name, Kind::Text, default, help)
    }
}

impl Key<Duration> {
    /// A duration from `min_ms` to `max_ms` milliseconds.
    pub const fn duration(
        name: &'static str,
        min_ms: u64,
        max_ms: u64,
        default: &'static str,
        help: &'static str,
    ) -> Key<Duration> {
        Key::declare(name, Kind::Duration { min_ms, max_ms }, default, help)
    }
}

impl Key<Option<i64>> {
    /// Unset, or a whole number of `int` (a [`Kind::Int`]: anything else fails to compile
    /// where the key is a constant).
    pub const fn optional_int(
        name: &'static str,
        int: &'static Kind,
        default: &'static str,
        help: &'static str,
    ) -> Key<Option<i64>> {
        assert!(
            matches!(int, Kind::Int { .. }),
            "an optional whole number's kind is Kind::Int"
        );
        Key::declare(name, Kind::Optional(int), default, help)
    }
}

/// A Rust type tunables read as: which [`Kind`]s it reads, and how a validated [`Value`] of
/// such a kind becomes it.
pub trait TunableType {
    /// What a read gives: the value itself, or text borrowed from the settings.
    type Read<'a>;
    /// Whether a tunable of `kind` reads as this type.
    fn reads(kind: &Kind) -> bool;
    /// `None` for a value of another kind (a tunable read as the wrong type).
    fn from_value(value: &Value) -> Option<Self::Read<'_>>;
}

impl TunableType for u64 {
    type Read<'a> = u64;
    fn reads(kind: &Kind) -> bool {
        matches!(kind, Kind::Size { .. })
    }
    fn from_value(value: &Value) -> Option<u64> {
        match value {
            Value::Text(t) => parse_size(t).ok(),
            _ => None,
        }
    }
}

impl TunableType for i64 {
    type Read<'a> = i64;
    fn reads(kind: &Kind) -> bool {
        matches!(kind, Kind::Int { .. })
    }
    fn from_value(value: &Value) -> Option<i64> {
        match value {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }
}

impl TunableType for f64 {
    type Read<'a> = f64;
    fn reads(kind: &Kind) -> bool {
        matches!(kind, Kind::Float { .. })
    }
    fn from_value(value: &Value) -> Option<f64> {
        match value {
            Value::Float(x) => Some(*x),
            Value::Int(i) => Some(*i as f64),
            _ => None,
        }
    }
}

impl TunableType for bool {
    type Read<'a> = bool;
    fn reads(kind: &Kind) -> bool {
        matches!(kind, Kind::Bool)
    }
    fn from_value(value: &Value) -> Option<bool> {
        match value {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }
}

impl TunableType for str {
    type Read<'a> = &'a str;
    fn reads(kind: &Kind) -> bool {
        matches!(kind, Kind::Choice(_) | Kind::Text)
    }
    fn from_value(value: &Value) -> Option<&str> {
        match value {
            Value::Text(t) => Some(t),
            _ => None,
        }
    }
}

impl TunableType for Duration {
    type Read<'a> = Duration;
    fn reads(kind: &Kind) -> bool {
        matches!(kind, Kind::Duration { .. })
    }
    fn from_value(value: &Value) -> Option<Duration> {
        match value {
            Value::Text(t) => humantime::parse_duration(t).ok(),
            _ => None,
        }
    }
}

impl TunableType for Option<i64> {
    type Read<'a> = Option<i64>;
    fn reads(kind: &Kind) -> bool {
        matches!(kind, Kind::Optional(Kind::Int { .. }))
    }
    fn from_value(value: &Value) -> Option<Option<i64>> {
        match value {
            Value::Int(i) => Some(Some(*i)),
            Value::Text(t) if t.is_empty() => Some(None),
            _ => None,
        }
    }
}

/// Any tunable, as its validated value (to show it, as refusals do).
impl TunableType for Value {
    type Read<'a> = &'a Value;
    fn reads(_: &Kind) -> bool {
        true
    }
    fn from_value(value: &Value) -> Option<&Value> {
        Some(value)
    }
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

    /// The value of the tunable `key` declares, as its type.
    pub fn get<T: TunableType + ?Sized>(&self, key: Key<T>) -> T::Read<'_> {
        self.read::<T>(key.def.name)
    }

    /// The one read by name, for names known at run time alone: a model card's parameters
    /// (`rapidio.link_mbps`, `loggp.s2.gap_ns`, `FABRIC.compute_scale`), declared when the
    /// card is read, the `mpi.*` variables, and names the user gave (`autotune --params`).
    /// Every other tunable is read through its [`Key`]. Panics on a name not registered or a
    /// tunable of another type: a programming error.
    pub fn get_by_runtime_name<T: TunableType + ?Sized>(&self, name: &str) -> T::Read<'_> {
        self.read::<T>(name)
    }

    fn read<T: TunableType + ?Sized>(&self, name: &str) -> T::Read<'_> {
        let value = self.value(name);
        T::from_value(value).unwrap_or_else(|| {
            panic!(
                "tunable {name} is not read as {}: {value:?}",
                std::any::type_name::<T>()
            )
        })
    }

    fn value(&self, name: &str) -> &Value {
        &self
            .values
            .get(name)
            .unwrap_or_else(|| panic!("tunable {name} is not registered"))
            .0
    }

    /// Where the value of `name` came from (names from tables, such as the engine tunables a
    /// fabric's own replace).
    pub fn source(&self, name: &str) -> Source {
        self.values
            .get(name)
            .unwrap_or_else(|| panic!("tunable {name} is not registered"))
            .1
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

    const EAGER_LIMIT: Key<u64> = Key::size(
        "eager_limit",
        0,
        1 << 20,
        "4K",
        "largest message sent eagerly",
    );
    const RX_THREAD: Key<bool> = Key::flag("rx_thread", "off", "progress thread");
    const SINGLE_COPY: Key<str> =
        Key::choice("single_copy", &["auto", "on", "off"], "auto", "single copy");
    const TIMEOUT: Key<Duration> = Key::duration("timeout", 10, 3_600_000, "30s", "wait bound");
    const LINK_MBPS: Key<f64> = Key::float("rapidio.link_mbps", 1.0, 1e6, "192", "link peak");

    const DEFS: &[Def] = &[
        EAGER_LIMIT.def(),
        RX_THREAD.def(),
        SINGLE_COPY.def(),
        TIMEOUT.def(),
        LINK_MBPS.def(),
    ];

    fn reg() -> Registry {
        Registry::new(&[DEFS])
    }

    #[test]
    fn defaults_parse_and_read_back() {
        let s = reg().defaults();
        assert_eq!(s.get(EAGER_LIMIT), 4096);
        assert!(!s.get(RX_THREAD));
        assert_eq!(s.get(SINGLE_COPY), "auto");
        assert_eq!(s.get(TIMEOUT), Duration::from_secs(30));
        assert_eq!(s.get(LINK_MBPS), 192.0);
        assert!(s.iter().all(|(_, _, src)| src == Source::Default));
    }

    #[test]
    fn set_validates_type_and_range() {
        let r = reg();
        let mut s = r.defaults();
        s.set_assignment(&r, "eager_limit=64K", Source::Cli)
            .unwrap();
        assert_eq!(s.get(EAGER_LIMIT), 65536);
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
        assert_eq!(s.get(EAGER_LIMIT), 65536);
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
        assert!(s.get(RX_THREAD));
        s.set(&r, "eager_limit", "8K", Source::Fabric).unwrap();
        assert_eq!(s.get(EAGER_LIMIT), 8192);
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
        assert_eq!(s.get(EAGER_LIMIT), 16384);
        assert!(s.get(RX_THREAD));
        assert_eq!(s.get(LINK_MBPS), 100.5);
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
    fn the_declarations_keys_build_are_the_ones_written_out() {
        assert_eq!(EAGER_LIMIT.name(), "eager_limit");
        assert_eq!(
            EAGER_LIMIT.def().kind,
            Kind::Size {
                min: 0,
                max: 1 << 20
            }
        );
        assert_eq!(EAGER_LIMIT.def().default, "4K");
        assert_eq!(EAGER_LIMIT.def().help, "largest message sent eagerly");
        assert_eq!(SINGLE_COPY.def().kind, Kind::Choice(&["auto", "on", "off"]));
        assert_eq!(
            TIMEOUT.def().kind,
            Kind::Duration {
                min_ms: 10,
                max_ms: 3_600_000
            }
        );
    }

    const COUNT: Key<i64> = Key::int("count", -5, 5, "1", "a count");
    const IFACE: Key<str> = Key::text("iface", "auto", "an interface");
    const ONLY_RANK: Key<Option<i64>> =
        Key::optional_int("only_rank", &Kind::Int { min: 0, max: 9 }, "", "one rank");

    #[test]
    fn each_key_reads_as_the_type_of_its_kind() {
        // The kind a constructor builds is one its Rust type reads, and no other type does.
        fn only<T: TunableType + ?Sized>(kind: &Kind) {
            let readers = [
                u64::reads(kind),
                i64::reads(kind),
                f64::reads(kind),
                bool::reads(kind),
                str::reads(kind),
                Duration::reads(kind),
                Option::<i64>::reads(kind),
            ];
            assert!(T::reads(kind), "{kind:?}");
            assert_eq!(readers.iter().filter(|r| **r).count(), 1, "{kind:?}");
        }
        only::<u64>(&EAGER_LIMIT.def().kind);
        only::<i64>(&COUNT.def().kind);
        only::<f64>(&LINK_MBPS.def().kind);
        only::<bool>(&RX_THREAD.def().kind);
        only::<str>(&SINGLE_COPY.def().kind);
        only::<str>(&IFACE.def().kind);
        only::<Duration>(&TIMEOUT.def().kind);
        only::<Option<i64>>(&ONLY_RANK.def().kind);
    }

    #[test]
    fn reading_through_a_key_gives_the_parsed_value() {
        let r = Registry::new(&[DEFS, &[COUNT.def(), IFACE.def(), ONLY_RANK.def()]]);
        let mut s = r.defaults();
        assert_eq!(s.get(ONLY_RANK), None);
        for a in [
            "eager_limit=64KiB",
            "rx_thread=yes",
            "single_copy=ON",
            "timeout=1m 30s",
            "rapidio.link_mbps=100.5",
            "count=-3",
            "iface= ib0 ",
            "only_rank=7",
        ] {
            s.set_assignment(&r, a, Source::Cli).unwrap();
        }
        assert_eq!(s.get(EAGER_LIMIT), 65536);
        assert!(s.get(RX_THREAD));
        assert_eq!(s.get(SINGLE_COPY), "on");
        assert_eq!(s.get(TIMEOUT), Duration::from_secs(90));
        assert_eq!(s.get(LINK_MBPS), 100.5);
        assert_eq!(s.get(COUNT), -3);
        assert_eq!(s.get(IFACE), "ib0");
        assert_eq!(s.get(ONLY_RANK), Some(7));
        assert_eq!(s.get_by_runtime_name::<f64>("rapidio.link_mbps"), 100.5);
        assert_eq!(s.get_by_runtime_name::<Value>("count").to_string(), "-3");
    }

    #[test]
    #[should_panic(expected = "tunable eager_limit is not read as bool")]
    fn a_run_time_name_read_as_another_type_is_refused() {
        reg().defaults().get_by_runtime_name::<bool>("eager_limit");
    }

    #[test]
    #[should_panic(expected = "declared twice")]
    fn duplicate_declarations_are_refused() {
        Registry::new(&[DEFS, DEFS]);
    }
}
