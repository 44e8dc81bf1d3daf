//! Which card parameters a calibration fits, and the space it searches them in. A card marks
//! each value's source: [S] stated by a source, [D] derived, [A] an assumption; by default
//! every numeric [A] parameter is fitted except `compute_scale` (the OSU suites never compute).
//! The search runs in log space between the card's bounds, where a factor of two costs the same
//! at any magnitude, through a unit coordinate clamped to [0, 1] so no trial leaves the range.

use bench_core::size::parse_size;
use transports::emulated::card::{self, Card};

use crate::error::CalibrateError;

/// A parameter being fitted.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Free {
    /// The card's name ("send_overhead_ns"); the tunable is `FABRIC.NAME`.
    pub name: String,
    pub kind: String,
    /// The card's value.
    pub start: f64,
    /// Where the search starts when not at the card's value (`--start`).
    pub search_from: Option<f64>,
    pub min: f64,
    pub max: f64,
    /// The card's source line, kept after the fit's.
    pub source: String,
    /// Not an assumption on the card: fitting it overrides a stated or derived value.
    pub overrides_stated: bool,
    /// An engine tunable (the MPI stack's eager threshold), set without the fabric's prefix.
    pub engine: bool,
}

/// Below this a log-space bound of 0 is taken to be (ns, bytes and rates all are).
const FLOOR: f64 = 1e-3;

/// A float bound of 0 sits this far below the top in log space: a cost a millionth of the
/// largest the card allows (10 ns under a 10 ms top) moves nothing a table shows, and a
/// search across ten empty decades below it loses its way.
const DECADES: f64 = 1e-6;

impl Free {
    fn lo(&self) -> f64 {
        let floor = match self.kind.as_str() {
            "float" => (self.max * DECADES).max(FLOOR),
            _ => FLOOR,
        };
        self.min.max(floor).min(self.max)
    }

    /// The unit coordinate of `x`.
    pub fn to_unit(&self, x: f64) -> f64 {
        let (lo, hi) = (self.lo(), self.max);
        if hi <= lo {
            return 0.0;
        }
        ((x.max(lo).ln() - lo.ln()) / (hi.ln() - lo.ln())).clamp(0.0, 1.0)
    }

    /// The value at unit coordinate `u` (clamped), rounded as the kind needs.
    pub fn from_unit(&self, u: f64) -> f64 {
        let (lo, hi) = (self.lo(), self.max);
        let x = (lo.ln() + u.clamp(0.0, 1.0) * (hi.ln() - lo.ln())).exp();
        match self.kind.as_str() {
            "int" | "size" => x.round().max(self.min),
            _ => x,
        }
    }

    /// The tunable's full name.
    pub fn tunable(&self, fabric: &str) -> String {
        if self.engine {
            self.name.clone()
        } else {
            format!("{fabric}.{}", self.name)
        }
    }

    /// The value as the tunable takes it.
    pub fn text(&self, x: f64) -> String {
        match self.kind.as_str() {
            "int" | "size" => format!("{}", x.round() as u64),
            _ => format!("{x}"),
        }
    }
}

/// The built-in card of an emulated fabric calibrate can fit.
pub fn card_of(fabric: &str) -> Result<Card, CalibrateError> {
    let text = match fabric {
        "rapidio" => transports::emulated::rapidio::CARD,
        "bxi" => transports::emulated::bxi::CARD,
        "hyperlink" => transports::emulated::hyperlink::CARD,
        other => {
            let kind = transports::registry::find(other)
                .map(|d| format!(" ({} is not emulated: measure it instead)", d.name))
                .unwrap_or_default();
            return Err(CalibrateError::Request(format!(
                "--fabric {other}: calibrate fits an emulated fabric's card; valid fabrics: hyperlink, rapidio, bxi{kind}"
            )));
        }
    };
    Ok(card::parse(text).expect("built-in cards parse"))
}

fn number(kind: &str, text: &str) -> Option<f64> {
    match kind {
        "size" => parse_size(text).ok().map(|v| v as f64),
        "float" | "int" => text.parse().ok(),
        _ => None,
    }
}

/// The engine's eager threshold, where the fabric leaves it to the engine (on rapidio it is the
/// small/large switch): an assumption whenever the MPI library measured chose its own.
fn engine_params(fabric: &str) -> Vec<Free> {
    let replaced = transports::registry::find(fabric)
        .map(|d| d.replaces.iter().any(|(e, _)| *e == "eager_limit"))
        .unwrap_or(true);
    if replaced {
        return Vec::new();
    }
    transports::fabric::ENGINE_TUNABLES
        .iter()
        .filter(|d| d.name == "eager_limit")
        .filter_map(|d| match d.kind {
            bench_core::tunables::Kind::Size { min, max } => Some(Free {
                name: d.name.to_string(),
                kind: "size".into(),
                start: parse_size(d.default).ok()? as f64,
                min: (min as f64).max(1.0),
                max: max as f64,
                source: format!(
                    "[A] the engine's default; the MPI library measured chose its own ({})",
                    d.help
                ),
                overrides_stated: false,
                engine: true,
                search_from: None,
            }),
            _ => None,
        })
        .collect()
}

/// Parameters never worth fitting to OSU tables: compute (the OSU suites never compute), and
/// the machine's shape (how many ranks share a node, the switches' radix and levels), which
/// is what the user has, not a cost to fit; a fit of the RapidIO paper that freed
/// `ranks_per_node` put both ranks on one node and missed by 32 %. A hop beyond the first
/// switch is never crossed by the two ranks of an OSU table.
const NEVER: &[&str] = &[
    "compute_scale",
    "ranks_per_node",
    "switch_radix",
    "tree_levels",
    "hop_latency_ns",
];

/// The parameters to fit: `asked` (names, with or without the `FABRIC.` prefix), or every
/// numeric assumption. Unknown or non-numeric names are refused, listing the valid ones.
pub fn select(card: &Card, asked: Option<&[String]>) -> Result<Vec<Free>, CalibrateError> {
    let numeric: Vec<_> = card
        .params
        .iter()
        .filter(|p| matches!(p.kind.as_str(), "float" | "int" | "size"))
        .collect();
    let free = |p: &transports::emulated::card::Param| -> Free {
        let parse = |t: &Option<String>| t.as_deref().and_then(|t| number(&p.kind, t));
        Free {
            name: p.name.clone(),
            kind: p.kind.clone(),
            start: number(&p.kind, &p.value).expect("built-in card values parse"),
            min: parse(&p.min).unwrap_or(0.0),
            max: parse(&p.max).unwrap_or(f64::MAX),
            source: p.source.clone(),
            overrides_stated: !p.source.starts_with("[A]"),
            engine: false,
            search_from: None,
        }
    };
    let engine = engine_params(&card.fabric);
    match asked {
        None => Ok(numeric
            .iter()
            .filter(|p| p.source.starts_with("[A]") && !NEVER.contains(&p.name.as_str()))
            .map(|p| free(p))
            .chain(engine)
            .collect()),
        Some(names) => {
            let prefix = format!("{}.", card.fabric);
            let mut out: Vec<Free> = Vec::new();
            for n in names {
                let n = n.trim();
                let bare = n.strip_prefix(&prefix).unwrap_or(n);
                let found = numeric
                    .iter()
                    .find(|p| p.name == bare)
                    .map(|p| free(p))
                    .or_else(|| engine.iter().find(|f| f.name == bare).cloned())
                    .ok_or_else(|| {
                        CalibrateError::Request(format!(
                            "--params {n}: not a numeric parameter of the {} card; valid: {}",
                            card.fabric,
                            numeric
                                .iter()
                                .map(|p| p.name.as_str())
                                .chain(engine.iter().map(|f| f.name.as_str()))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ))
                    })?;
                if !out.iter().any(|f| f.name == found.name) {
                    out.push(found);
                }
            }
            Ok(out)
        }
    }
}

/// Moves each named parameter's start to the given value (`NAME=VALUE`, the card's units): an
/// engineer's reading of the table puts the search in the right valley, which a search from
/// the card's own values, often orders of magnitude off, may not find.
pub fn start_at(free: &mut [Free], fabric: &str, starts: &[String]) -> Result<(), CalibrateError> {
    for s in starts {
        let (name, text) = s
            .split_once('=')
            .ok_or_else(|| CalibrateError::Request(format!("--start {s}: give NAME=VALUE")))?;
        let bare = name.strip_prefix(&format!("{fabric}.")).unwrap_or(name);
        let fitted: Vec<&str> = free.iter().map(|f| f.name.as_str()).collect();
        let valid = fitted.join(", ");
        let f = free.iter_mut().find(|f| f.name == bare).ok_or_else(|| {
            CalibrateError::Request(format!(
                "--start {s}: {name} is not being fitted; fitted: {valid}"
            ))
        })?;
        let x = number(&f.kind, text)
            .filter(|x| x.is_finite() && *x >= f.min && *x <= f.max)
            .ok_or_else(|| {
                CalibrateError::Request(format!(
                    "--start {s}: {text} is not a {} within {}..{}",
                    f.kind, f.min, f.max
                ))
            })?;
        f.search_from = Some(x);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assumptions_are_the_default_and_names_are_checked() {
        let card = card_of("rapidio").unwrap();
        let all = select(&card, None).unwrap();
        let names: Vec<&str> = all.iter().map(|f| f.name.as_str()).collect();
        assert!(names.contains(&"recv_overhead_ns"), "{names:?}");
        assert!(!names.contains(&"link_mbps"), "a stated value: {names:?}");
        assert!(!names.contains(&"compute_scale"));
        assert!(
            !names.contains(&"ranks_per_node"),
            "the machine's shape: {names:?}"
        );
        let bxi = select(&card_of("bxi").unwrap(), None).unwrap();
        assert!(
            bxi.iter()
                .all(|f| !["switch_radix", "tree_levels", "hop_latency_ns"]
                    .contains(&f.name.as_str())),
            "the tree's shape is not fitted"
        );
        let one = select(&card, Some(&["rapidio.link_mbps".into()])).unwrap();
        assert!(one[0].overrides_stated);
        let e = select(&card, Some(&["warp".into()]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("valid: link_mbps"), "{e}");
        assert!(card_of("shm")
            .unwrap_err()
            .to_string()
            .contains("not emulated"));
    }

    #[test]
    fn a_start_moves_the_search_not_the_card_and_bad_ones_are_refused() {
        let card = card_of("rapidio").unwrap();
        let mut free = select(&card, None).unwrap();
        start_at(
            &mut free,
            "rapidio",
            &[
                "rapidio.recv_overhead_ns=300000".into(),
                "eager_limit=32K".into(),
            ],
        )
        .unwrap();
        let recv = free.iter().find(|f| f.name == "recv_overhead_ns").unwrap();
        assert_eq!((recv.start, recv.search_from), (10_000.0, Some(300_000.0)));
        let eager = free.iter().find(|f| f.name == "eager_limit").unwrap();
        assert_eq!(eager.search_from, Some(32_768.0));
        for (bad, says) in [
            ("link_mbps=100", "not being fitted; fitted: "),
            ("copy_mbps=0", "not a float within 1..1000000"),
            ("copy_mbps", "give NAME=VALUE"),
        ] {
            let e = start_at(&mut free, "rapidio", &[bad.into()])
                .unwrap_err()
                .to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn the_unit_coordinate_round_trips_inside_the_bounds() {
        let f = Free {
            name: "x".into(),
            kind: "float".into(),
            start: 20_000.0,
            min: 0.0,
            max: 1e7,
            source: "[A]".into(),
            overrides_stated: false,
            engine: false,
            search_from: None,
        };
        for x in [20.0, 20_000.0, 9e6] {
            assert!((f.from_unit(f.to_unit(x)) - x).abs() < 1e-6 * x);
        }
        // Past the ends clamps to the bounds (exp(ln) is within an ulp or so of them); a float
        // bound of 0 is a millionth of the top.
        assert!((f.from_unit(2.0) - 1e7).abs() < 1e-6);
        assert!((f.from_unit(-1.0) - 10.0).abs() < 1e-9);
        assert_eq!(f.to_unit(0.5), 0.0);
        let n = Free {
            kind: "int".into(),
            min: 1.0,
            max: 65536.0,
            ..f
        };
        assert_eq!(n.from_unit(n.to_unit(128.0)), 128.0);
    }
}
