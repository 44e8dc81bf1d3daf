//! What a user asks autotune for, and its check: the fabric, the parameters to search, the
//! workloads that judge them, the objective, the size range, the budget. Every refusal is one
//! line that says what is wrong and what is valid, before anything is measured.

use std::path::PathBuf;
use std::time::Duration;

use bench_core::size::format_size;
use bench_core::tunables::{Kind, Settings};
use runner::{PlanBuilder, SuiteSpec};
use suites::osu::{OsuParams, LATENCY};
use transports::fabric::{FabricDef, FabricKind};
use transports::registry;

use crate::error::TuneError;
use crate::params::{self, Role};

/// What the tuned settings should be best at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Objective {
    /// Small-message time: judged by osu_latency unless workloads are named.
    Latency,
    /// Large-message throughput: judged by osu_bw.
    Bandwidth,
    /// Both, weighted alike.
    Balanced,
}

impl Objective {
    pub fn parse(text: &str) -> Result<Objective, TuneError> {
        match text {
            "latency" => Ok(Objective::Latency),
            "bandwidth" => Ok(Objective::Bandwidth),
            "balanced" => Ok(Objective::Balanced),
            _ => Err(TuneError::Usage(format!(
                "--objective {text}: use latency, bandwidth or balanced"
            ))),
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            Objective::Latency => "latency",
            Objective::Bandwidth => "bandwidth",
            Objective::Balanced => "balanced",
        }
    }

    fn workloads(self) -> Vec<&'static str> {
        match self {
            Objective::Latency => vec!["osu_latency"],
            Objective::Bandwidth => vec!["osu_bw"],
            Objective::Balanced => vec!["osu_latency", "osu_bw"],
        }
    }
}

/// The suites autotune can judge settings by: point-to-point, one point per message size.
pub const WORKLOADS: &[&str] = &["osu_latency", "osu_bw", "osu_bibw"];

/// An autotune request as a caller gives it.
#[derive(Debug, Clone)]
pub struct Request {
    /// "rapidio", "shm", "shm@mpi".
    pub fabric: String,
    /// None: what the fabric's registry entry says matters ([`params::defaults_for`]).
    pub params: Option<Vec<String>>,
    /// None: the objective's.
    pub workloads: Option<Vec<String>>,
    pub objective: Objective,
    pub budget: Duration,
    /// Smallest and largest message size; None: 1 byte to 1 MiB.
    pub sizes: Option<(u64, u64)>,
    /// Settings held fixed, as `NAME=VALUE`.
    pub sets: Vec<String>,
    /// Near-equal: within this fraction of the best.
    pub tolerance: f64,
    /// Timed and warm-up iterations per size; None: 10 and 2 on virtual time (exact), 100
    /// and 10 on a real fabric (enough samples for the statistical tests).
    pub iterations: Option<(u64, u64)>,
    pub mpirun: String,
    /// The executable ranks run (fabbench itself); None: this one.
    pub rank_program: Option<PathBuf>,
    pub command_line: Vec<String>,
}

impl Request {
    pub fn new(fabric: &str) -> Request {
        Request {
            fabric: fabric.to_string(),
            params: None,
            workloads: None,
            objective: Objective::Latency,
            budget: Duration::from_secs(600),
            sizes: None,
            sets: Vec::new(),
            tolerance: 0.02,
            iterations: None,
            mpirun: "mpirun".into(),
            rank_program: None,
            command_line: std::env::args().collect(),
        }
    }
}

/// A parameter to search, with the value in force before tuning.
#[derive(Debug, Clone)]
pub struct Param {
    pub name: String,
    pub role: Role,
    pub kind: Kind,
    /// The value in force (text as the registry writes it; empty: the MPI library's own).
    pub default: String,
}

/// A checked request.
#[derive(Clone)]
pub struct Tuning {
    pub label: String,
    pub def: &'static FabricDef,
    pub params: Vec<Param>,
    pub workloads: Vec<&'static str>,
    pub objective: Objective,
    pub budget: Duration,
    pub sizes: (u64, u64),
    pub sets: Vec<String>,
    pub tolerance: f64,
    pub iterations: (u64, u64),
    pub mpirun: String,
    pub rank_program: Option<PathBuf>,
    pub command_line: Vec<String>,
    /// Every tunable in force before tuning.
    pub base: Settings,
}

impl Tuning {
    /// The line said before tuning starts on a real-time fabric when it may take ten seconds
    /// or more: the budget bounds the wall time (the search and its verification are fitted
    /// into it, and stop sooner when they settle), so it is the estimate.
    pub fn estimate(&self) -> Option<String> {
        // In virtual time the search takes about a second whatever the budget: nothing to say.
        (!self.virtual_time() && self.budget >= Duration::from_secs(10)).then(|| {
            format!(
                "estimate: at most {} (the --budget: the search and its verification fit in it, and stop sooner once they settle); --budget 2m for a first look",
                humantime::format_duration(Duration::from_secs(self.budget.as_secs()))
            )
        })
    }

    pub fn virtual_time(&self) -> bool {
        self.def.kind == FabricKind::Emulated
    }

    /// The settings in force with `pairs` (NAME, VALUE) over the base: what the fabric is
    /// asked about (where a switch acts). A value the registry refuses is left out; every
    /// value autotune sets came from the registry's own text.
    pub fn settings_with(&self, pairs: &[(String, String)]) -> Settings {
        let registry = registry::registry(&[]);
        let mut s = self.base.clone();
        for (k, v) in pairs {
            let _ = s.set(&registry, k, v, bench_core::tunables::Source::Cli);
        }
        s
    }

    pub fn param(&self, role: Role) -> impl Iterator<Item = &Param> {
        self.params.iter().filter(move |p| p.role == role)
    }
}

/// The shortest budget that measures anything on a fabric of this kind: a few runs of a
/// workload (an MPI run starts mpirun each time, a native run two processes).
fn shortest_budget(kind: FabricKind) -> Duration {
    match kind {
        FabricKind::Emulated => Duration::from_secs(1),
        FabricKind::Native => Duration::from_secs(5),
        FabricKind::Mpi => Duration::from_secs(30),
    }
}

const DEFAULT_SIZES: (u64, u64) = (1, 1 << 20);

fn usage(msg: impl Into<String>) -> TuneError {
    TuneError::Usage(msg.into())
}

impl Request {
    /// Checks everything a user can get wrong, in the order they would fix it.
    pub fn check(&self) -> Result<Tuning, TuneError> {
        let resolved = registry::resolve(&self.fabric).map_err(|r| usage(r.to_string()))?;
        let def = resolved.def;
        let label = self.fabric.clone();
        // A plan of the fabric with the fixed settings: the runner's own checks (usable here,
        // --set names and values) and the settings in force.
        let plan = PlanBuilder::new()
            .suite(SuiteSpec::new(&LATENCY, OsuParams::default()))
            .fabrics(&label)
            .ranks(2);
        let plan = self.sets.iter().fold(plan, |p, s| p.set(s)).build()?;
        let base = plan.fabrics[0].settings.clone();
        let params = self.params(def, &label, &base)?;
        let workloads = self.workloads()?;
        let sizes = self.sizes()?;
        let least = shortest_budget(def.kind);
        if self.budget < least {
            return Err(usage(format!(
                "--budget {}: too short to measure anything on {label}; give at least {}",
                humantime::format_duration(self.budget),
                humantime::format_duration(least)
            )));
        }
        if !(self.tolerance > 0.0 && self.tolerance < 0.5) {
            return Err(usage(format!(
                "--tolerance {}: use a fraction above 0 and below 0.5 (0.02 is 2 %)",
                self.tolerance
            )));
        }
        let iterations = self
            .iterations
            .unwrap_or(if def.kind == FabricKind::Emulated {
                (10, 2)
            } else {
                (100, 10)
            });
        Ok(Tuning {
            label,
            def,
            params,
            workloads,
            objective: self.objective,
            budget: self.budget,
            sizes,
            sets: self.sets.clone(),
            tolerance: self.tolerance,
            iterations,
            mpirun: self.mpirun.clone(),
            rank_program: self.rank_program.clone(),
            command_line: self.command_line.clone(),
            base,
        })
    }

    fn params(
        &self,
        def: &'static FabricDef,
        label: &str,
        base: &Settings,
    ) -> Result<Vec<Param>, TuneError> {
        let registry = registry::registry(&[]);
        let names: Vec<String> = match &self.params {
            Some(list) => list.clone(),
            None => {
                let preset = label.strip_suffix("@mpi");
                let d = params::defaults_for(def, preset);
                if d.is_empty() {
                    return Err(usage(format!(
                        "{label} has no tunables autotune knows to search without being told: name its MPI library's variables, e.g. --params mpi.btl_vader_eager_limit (or use a preset such as shm@mpi); autotune searches {}",
                        params::describe_searchable()
                    )));
                }
                d.into_iter().map(String::from).collect()
            }
        };
        let mut out: Vec<Param> = Vec::new();
        for name in names {
            let name = name.trim().to_string();
            let Some(d) = registry.get(&name) else {
                // The registry's own refusal carries the did-you-mean.
                let mut probe = registry.defaults();
                let e = probe
                    .set(&registry, &name, "0", bench_core::tunables::Source::Cli)
                    .expect_err("an unknown name is refused");
                return Err(usage(format!("--params: {e}")));
            };
            let role = params::role_of(&name).ok_or_else(|| {
                usage(format!(
                    "--params {name}: autotune cannot search {name}; it searches {}",
                    params::describe_searchable()
                ))
            })?;
            if let Some(why) = params::refusal(&name, label, def) {
                return Err(usage(format!("--params {name}: {why}")));
            }
            if out.iter().any(|p| p.name == name) {
                return Err(usage(format!("--params lists {name} twice")));
            }
            if role != Role::Switch && out.iter().any(|p| p.role == role) {
                return Err(usage(format!(
                    "--params: one {} at a time (got {} and {name})",
                    role.word(),
                    out.iter().find(|p| p.role == role).expect("found").name
                )));
            }
            if base.source(&name) == bench_core::tunables::Source::Cli {
                return Err(usage(format!(
                    "{name} is both fixed by --set and to be tuned by --params; drop one"
                )));
            }
            out.push(Param {
                default: base
                    .get_by_runtime_name::<bench_core::tunables::Value>(&name)
                    .to_string(),
                name,
                role,
                kind: d.kind,
            });
        }
        if out.is_empty() {
            return Err(usage(
                "--params is empty; name at least one parameter to search",
            ));
        }
        Ok(out)
    }

    fn workloads(&self) -> Result<Vec<&'static str>, TuneError> {
        let Some(list) = &self.workloads else {
            return Ok(self.objective.workloads());
        };
        let mut out = Vec::new();
        for w in list {
            let w = w.trim();
            let found = WORKLOADS.iter().find(|k| **k == w).ok_or_else(|| {
                usage(format!(
                    "--workload {w}: autotune judges settings by {}",
                    WORKLOADS.join(", ")
                ))
            })?;
            if !out.contains(found) {
                out.push(*found);
            }
        }
        if out.is_empty() {
            return Err(usage(format!(
                "--workload is empty; use one or more of {}",
                WORKLOADS.join(", ")
            )));
        }
        Ok(out)
    }

    fn sizes(&self) -> Result<(u64, u64), TuneError> {
        let (lo, hi) = self.sizes.unwrap_or(DEFAULT_SIZES);
        let top = suites::MAX_MESSAGE_SIZE;
        if lo == 0 || lo > hi || hi > top {
            return Err(usage(format!(
                "--sizes {}:{}: use MIN:MAX with 1 <= MIN <= MAX <= {}",
                lo,
                hi,
                format_size(top)
            )));
        }
        Ok((lo, hi))
    }
}

/// `MIN:MAX` as `--sizes` takes it (4K, 1M accepted).
pub fn parse_sizes(text: &str) -> Result<(u64, u64), TuneError> {
    let bad = || usage(format!("--sizes {text}: use MIN:MAX, e.g. 1:1M or 4K:4M"));
    let (a, b) = text.split_once(':').ok_or_else(bad)?;
    let a = bench_core::size::parse_size(a.trim()).map_err(|_| bad())?;
    let b = bench_core::size::parse_size(b.trim()).map_err(|_| bad())?;
    Ok((a, b))
}
