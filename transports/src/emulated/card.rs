//! Model cards: the parameters of an emulated fabric, as TOML, each with its value, valid
//! range, meaning and source ([S] stated by a source, [D] derived, [A] assumption to
//! calibrate; see ../shared/fabrics.md). The built-in cards become tunables named
//! `FABRIC.PARAM`, so `--set rapidio.link_mbps=100`, profile files and `--model FILE` all go
//! through the one registry.
//!
//! ```toml
//! fabric = "rapidio"
//! summary = "one line"
//! [[param]]
//! name = "link_mbps"
//! kind = "float"          # float | size | int | bool | choice
//! value = "192"
//! min = "1"
//! max = "100000"
//! meaning = "peak link bandwidth, MB/s"
//! source = "[S] ..."
//! ```

use std::sync::OnceLock;

use bench_core::size::parse_size;
use bench_core::tunables::{Def, Kind};
use serde::Deserialize;

/// A parsed card.
#[derive(Debug, Clone, Deserialize)]
pub struct Card {
    pub fabric: String,
    pub summary: String,
    #[serde(rename = "param")]
    pub params: Vec<Param>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Param {
    pub name: String,
    pub kind: String,
    pub value: String,
    pub min: Option<String>,
    pub max: Option<String>,
    pub choices: Option<Vec<String>>,
    pub meaning: String,
    pub source: String,
}

/// Why a card was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CardError {
    #[error("model card: {0}")]
    Syntax(String),
    #[error("model card parameter {name}: {why}")]
    Param { name: String, why: String },
}

pub fn parse(text: &str) -> Result<Card, CardError> {
    toml::from_str(text).map_err(|e| CardError::Syntax(e.message().to_string()))
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

impl Param {
    fn kind(&self) -> Result<Kind, CardError> {
        let bad = |why: &str| CardError::Param {
            name: self.name.clone(),
            why: why.to_string(),
        };
        let bound = |v: &Option<String>, what: &str| {
            v.as_ref()
                .ok_or_else(|| bad(&format!("needs {what}")))
                .cloned()
        };
        Ok(match self.kind.as_str() {
            "float" => Kind::Float {
                min: bound(&self.min, "min")?
                    .parse()
                    .map_err(|_| bad("min is not a number"))?,
                max: bound(&self.max, "max")?
                    .parse()
                    .map_err(|_| bad("max is not a number"))?,
            },
            "int" => Kind::Int {
                min: bound(&self.min, "min")?
                    .parse()
                    .map_err(|_| bad("min is not a whole number"))?,
                max: bound(&self.max, "max")?
                    .parse()
                    .map_err(|_| bad("max is not a whole number"))?,
            },
            "size" => Kind::Size {
                min: parse_size(&bound(&self.min, "min")?).map_err(|e| bad(&e.to_string()))?,
                max: parse_size(&bound(&self.max, "max")?).map_err(|e| bad(&e.to_string()))?,
            },
            "bool" => Kind::Bool,
            "choice" => {
                let words: Vec<&'static str> = self
                    .choices
                    .clone()
                    .ok_or_else(|| bad("needs choices"))?
                    .into_iter()
                    .map(leak)
                    .collect();
                Kind::Choice(Box::leak(words.into_boxed_slice()))
            }
            other => return Err(bad(&format!("unknown kind '{other}'"))),
        })
    }
}

impl Card {
    /// The card's parameters as registry declarations (names `FABRIC.PARAM`). The strings are
    /// leaked: cards are read once per process and live as long as it.
    pub fn defs(&self) -> Result<Vec<Def>, CardError> {
        self.params
            .iter()
            .map(|p| {
                let kind = p.kind()?;
                kind.parse(&p.value).map_err(|why| CardError::Param {
                    name: p.name.clone(),
                    why: format!("default {} is not {why}", p.value),
                })?;
                Ok(Def {
                    name: leak(format!("{}.{}", self.fabric, p.name)),
                    kind,
                    default: leak(p.value.clone()),
                    help: leak(p.meaning.clone()),
                    source: leak(p.source.clone()),
                })
            })
            .collect()
    }
}

/// A card compiled into the binary (an emulated fabric's own): parsed, and turned into
/// registry declarations, once per process on first use. A built-in card that does not parse
/// is a programming error, caught by the first test that builds the registry.
pub struct BuiltinCard {
    fabric: &'static str,
    text: &'static str,
    card: OnceLock<Card>,
    defs: OnceLock<Vec<Def>>,
}

impl BuiltinCard {
    pub const fn new(fabric: &'static str, text: &'static str) -> BuiltinCard {
        BuiltinCard {
            fabric,
            text,
            card: OnceLock::new(),
            defs: OnceLock::new(),
        }
    }

    pub fn card(&self) -> &Card {
        self.card.get_or_init(|| {
            parse(self.text).unwrap_or_else(|e| panic!("built-in {} card: {e}", self.fabric))
        })
    }

    /// The card's parameters as registry declarations (see [`Card::defs`]).
    pub fn defs(&self) -> &[Def] {
        self.defs.get_or_init(|| {
            self.card()
                .defs()
                .unwrap_or_else(|e| panic!("built-in {} card: {e}", self.fabric))
        })
    }

    pub fn summary(&self) -> &str {
        &self.card().summary
    }
}

/// The top-level keys of a card in the `[[param]]` form.
const CARD_KEYS: &[&str] = &["fabric", "summary", "param"];
/// The keys of one `[[param]]` (`interval`: a fitted value's confidence interval).
const PARAM_KEYS: &[&str] = &[
    "name", "kind", "value", "min", "max", "meaning", "source", "interval",
];

/// What a `--model FILE` says: the fabric it names (if any) and (name, value) pairs.
pub type Overrides = (Option<String>, Vec<(String, String)>);

/// Reads the values of a `--model FILE`: either a card (`[[param]]` with name and value) or a
/// table of `name = value`.
pub fn overrides(text: &str) -> Result<Overrides, CardError> {
    let doc: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| CardError::Syntax(e.message().to_string()))?;
    let fabric = doc.get("fabric").and_then(|v| v.as_str()).map(String::from);
    let mut out = Vec::new();
    if let Some(toml::Value::Array(params)) = doc.get("param") {
        // A key the card form does not have is a typo that would be silently ignored.
        if let Some(k) = doc.keys().find(|k| !CARD_KEYS.contains(&k.as_str())) {
            return Err(CardError::Syntax(format!(
                "unknown key '{k}' beside [[param]]; a card has {}",
                CARD_KEYS.join(", ")
            )));
        }
        for p in params {
            if let Some(k) = p
                .as_table()
                .and_then(|t| t.keys().find(|k| !PARAM_KEYS.contains(&k.as_str())))
            {
                return Err(CardError::Syntax(format!(
                    "unknown key '{k}' in a [[param]]; a param has {}",
                    PARAM_KEYS.join(", ")
                )));
            }
            let name = p.get("name").and_then(|v| v.as_str());
            let value = p.get("value");
            match (name, value) {
                (Some(n), Some(v)) => out.push((n.to_string(), scalar(v))),
                _ => {
                    return Err(CardError::Syntax(
                        "every [[param]] needs a name and a value".into(),
                    ))
                }
            }
        }
    } else {
        let table = match doc.get("params") {
            Some(toml::Value::Table(t)) => t.clone(),
            _ => doc.clone(),
        };
        for (k, v) in table {
            if k == "fabric" || k == "summary" {
                continue;
            }
            out.push((k, scalar(&v)));
        }
    }
    Ok((fabric, out))
}

fn scalar(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CARD: &str = r#"
fabric = "demo"
summary = "a demo"
[[param]]
name = "rate"
kind = "float"
value = "192"
min = "1"
max = "1000"
meaning = "peak rate, MB/s"
source = "[S] a paper"
[[param]]
name = "queue"
kind = "size"
value = "4K"
min = "256"
max = "1M"
meaning = "queue bytes"
source = "[A] assumption"
"#;

    #[test]
    fn cards_become_registry_declarations() {
        let c = parse(CARD).unwrap();
        let defs = c.defs().unwrap();
        assert_eq!(defs[0].name, "demo.rate");
        assert_eq!(defs[0].default, "192");
        assert_eq!(defs[0].source, "[S] a paper");
        assert_eq!(
            defs[1].kind,
            Kind::Size {
                min: 256,
                max: 1 << 20
            }
        );
    }

    #[test]
    fn builtin_cards_are_read_once_under_their_fabric_name() {
        static DEMO: BuiltinCard = BuiltinCard::new("demo", CARD);
        assert_eq!(DEMO.summary(), "a demo");
        assert_eq!(DEMO.defs()[1].name, "demo.queue");
        assert!(std::ptr::eq(DEMO.defs(), DEMO.defs()));
    }

    #[test]
    #[should_panic(expected = "built-in broken card")]
    fn a_builtin_card_that_does_not_parse_names_its_fabric() {
        static BROKEN: BuiltinCard = BuiltinCard::new("broken", "fabric = 1");
        BROKEN.defs();
    }

    #[test]
    fn bad_defaults_and_kinds_are_refused() {
        let bad = CARD.replace("value = \"192\"", "value = \"5000\"");
        assert!(parse(&bad).unwrap().defs().is_err());
        let bad = CARD.replace("kind = \"float\"", "kind = \"complex\"");
        assert!(parse(&bad).unwrap().defs().is_err());
        assert!(parse("fabric = 1").is_err());
    }

    #[test]
    fn overrides_from_cards_and_plain_tables() {
        let (f, v) = overrides(CARD).unwrap();
        assert_eq!(f.as_deref(), Some("demo"));
        assert_eq!(v[0], ("rate".to_string(), "192".to_string()));
        let (f, v) = overrides("rate = 100\nqueue = \"8K\"\n").unwrap();
        assert_eq!(f, None);
        assert!(v.contains(&("rate".to_string(), "100".to_string())));
        assert!(v.contains(&("queue".to_string(), "8K".to_string())));
        let (_, v) = overrides("[params]\nrate = 7.5\n").unwrap();
        assert_eq!(v, vec![("rate".to_string(), "7.5".to_string())]);
    }

    #[test]
    fn unknown_keys_in_a_card_are_refused() {
        let typo = CARD.replace("fabric = \"demo\"", "fabrc = \"demo\"");
        let e = overrides(&typo).unwrap_err().to_string();
        assert!(
            e.contains("unknown key 'fabrc'") && e.contains("fabric, summary, param"),
            "{e}"
        );
        let typo = CARD.replace("value = \"192\"", "valu = \"192\"");
        let e = overrides(&typo).unwrap_err().to_string();
        assert!(e.contains("unknown key 'valu'"), "{e}");
    }
}
