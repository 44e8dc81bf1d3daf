//! Typed keys: a tunable declared together with the Rust type it reads as, and the mapping from
//! a validated [`Value`] to that type, so code reads a tunable through its key and a misspelt
//! name cannot compile.

use std::fmt;
use std::marker::PhantomData;
use std::time::Duration;

use super::kind::{Def, Kind, Value};
use crate::size::parse_size;

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
                source: "",
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
