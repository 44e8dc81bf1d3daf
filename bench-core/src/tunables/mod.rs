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

mod key;
mod kind;

pub use key::{Key, TunableType};
pub use kind::{Def, Kind, Value};

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

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
        self.read::<T>(key.name())
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
    use std::time::Duration;

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
