//! A run described as data: which suites with which parameters, on which fabrics with which
//! tunables, on how many ranks, launched how, written where. [`PlanBuilder`] builds and
//! checks one without any command line; every refusal is one line that says what was wrong
//! and what is valid, before anything runs or is written.

use std::path::PathBuf;
use std::sync::Arc;

use bench_core::bootstrap::discover::{External, Started};
use bench_core::tunables::{Registry, Settings, Source};
use suites::{DynSuite, Suite, SuiteArgs};
use transports::fabric::{FabricDef, FabricKind};
use transports::order::ByteOrders;
use transports::registry;

use crate::error::{PlanError, ReplayError, ResumeError};
use crate::replay::{self, ComputeReplay};
pub use crate::resume::Resume;
use crate::resume::{DoneSuite, Expected};
pub use crate::secret::Secret;
use results::model::Run;

/// One suite and its parameters (as the suite's own type, carried as JSON).
#[derive(Clone)]
pub struct SuiteSpec {
    pub suite: &'static dyn DynSuite,
    pub params: serde_json::Value,
}

impl std::fmt::Debug for SuiteSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.suite.name(), self.params)
    }
}

impl SuiteSpec {
    /// `suite` with typed parameters.
    pub fn new<S: Suite>(suite: &'static S, params: S::Params) -> SuiteSpec {
        SuiteSpec {
            suite,
            params: suites::encode::<S>(&params),
        }
    }

    /// The registered suite `name`, with parameters from command-line style options.
    pub fn parse(name: &str, args: &SuiteArgs) -> Result<SuiteSpec, PlanError> {
        let suite = suites::find(name).ok_or_else(|| {
            PlanError::Refused(format!(
                "unknown suite '{name}'; valid suites: {}",
                suites::names().join(", ")
            ))
        })?;
        Ok(SuiteSpec {
            suite,
            params: suite.parse(args)?,
        })
    }

    pub fn name(&self) -> &'static str {
        self.suite.name()
    }
}

/// One fabric of a run and the tunables in force for it.
#[derive(Clone)]
pub struct FabricSpec {
    /// What the run calls this fabric: "shm", "tcp@mpi".
    pub label: String,
    pub def: &'static FabricDef,
    pub settings: Settings,
    /// An earlier run's compute to charge instead of timing it (`run --compute-from`).
    pub compute_replay: Option<Arc<ComputeReplay>>,
}

/// Where ranks of an externally launched job meet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BootSpec {
    /// `tcp://HOST:PORT`: rank 0 serves it on HOST:PORT, the others connect.
    Tcp(String),
    /// `dir:PATH`: a directory every rank sees.
    Dir(PathBuf),
}

impl BootSpec {
    /// Parses `tcp://HOST:PORT` or `dir:PATH`.
    pub fn parse(text: &str) -> Result<BootSpec, PlanError> {
        if let Some(hp) = text.strip_prefix("tcp://") {
            let ok = hp
                .rsplit_once(':')
                .is_some_and(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok());
            if ok {
                return Ok(BootSpec::Tcp(hp.to_string()));
            }
        } else if let Some(path) = text.strip_prefix("dir:") {
            if !path.is_empty() {
                return Ok(BootSpec::Dir(PathBuf::from(path)));
            }
        }
        Err(PlanError::Refused(format!(
            "--bootstrap {text}: use tcp://HOST:PORT (rank 0 serves it) or dir:PATH (a directory every rank sees)"
        )))
    }

    /// Refuses a `dir:PATH` this host cannot use: PATH must be a directory, or a new one in a
    /// directory that exists (fabbench creates that last level, never a whole tree: a missing
    /// parent is a mistyped or unmounted path, and ranks creating it would never meet).
    pub fn usable(self) -> Result<BootSpec, PlanError> {
        if let BootSpec::Dir(path) = &self {
            let shown = path.display();
            if path.exists() {
                if !path.is_dir() {
                    return Err(PlanError::Refused(format!(
                        "--bootstrap dir:{shown}: not a directory; give a directory every rank sees"
                    )));
                }
            } else {
                let parent = match path.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p,
                    _ => std::path::Path::new("."),
                };
                if !parent.is_dir() {
                    return Err(PlanError::Refused(format!(
                        "--bootstrap dir:{shown}: {} does not exist; give a directory every rank sees",
                        parent.display()
                    )));
                }
            }
        }
        Ok(self)
    }
}

/// How a run's ranks start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Launch {
    /// fabbench starts them, as each fabric's registry entry says (processes, threads, or
    /// through a launcher such as mpirun).
    Local,
    /// mpirun or srun started this process as one rank; over a tcp bootstrap, ranks prove
    /// they hold `secret`.
    External {
        ext: External,
        boot: BootSpec,
        secret: Secret,
    },
}

/// Whether this process runs the run (and collects its results) or only serves as one rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Frontend,
    /// A rank other than 0 under an external launcher.
    Worker {
        rank: usize,
    },
}

/// A checked run description.
#[derive(Clone)]
pub struct Plan {
    pub suites: Vec<SuiteSpec>,
    pub fabrics: Vec<FabricSpec>,
    pub ranks: usize,
    pub launch: Launch,
    /// Where the run's directory is created; None writes nothing (the caller keeps the Run).
    pub out: Option<PathBuf>,
    /// The mpirun that starts MPI ranks.
    pub mpirun: String,
    /// The program a rank process runs, with `__rank` (fabbench itself); None: this
    /// executable.
    pub rank_program: Option<PathBuf>,
    /// What the manifest records as the command line.
    pub command_line: Vec<String>,
    /// Appended to the run id (`...-shm-n4`), to tell apart runs that differ in something the
    /// id does not name, such as the counts of a scaling run.
    pub tag: Option<String>,
    /// The kept partial run this plan continues (`fabbench run --resume DIR`).
    pub resume: Option<Resume>,
    /// A first look (`fabbench run --quick`): every suite's parameters are its quick ones
    /// (fewer iterations; what was set explicitly kept), and the manifest says so.
    pub quick: bool,
}

impl Plan {
    pub fn role(&self) -> Role {
        match &self.launch {
            Launch::External { ext, .. } if ext.rank != 0 => Role::Worker { rank: ext.rank },
            _ => Role::Frontend,
        }
    }

    /// Whether a suite's points are a fixed list, so a resumed run can leave out those it has.
    fn fixed(&self, suite: &str) -> bool {
        self.suites
            .iter()
            .find(|s| s.name() == suite)
            .is_some_and(|s| matches!(s.suite.planned(&s.params), Ok(Some(_))))
    }

    /// What of the resumed run a fabric's ranks leave out, by suite.
    pub fn done_on(&self, fabric: &str) -> Vec<DoneSuite> {
        self.resume
            .as_ref()
            .map(|r| r.done_on(fabric, |s| self.fixed(s)))
            .unwrap_or_default()
    }

    /// The directory `run` (this plan's result) was written to: `OUT/RUN_ID`, or beside the
    /// kept partial run it continued; None when the plan writes nothing. Callers that add
    /// files to the run (charts) find it here rather than rebuilding the path.
    pub fn run_dir(&self, run: &Run) -> Option<PathBuf> {
        let out = match (&self.resume, &self.out) {
            (Some(r), _) => r.dir.parent().unwrap_or(std::path::Path::new(".")),
            (None, Some(out)) => out.as_path(),
            (None, None) => return None,
        };
        Some(out.join(&run.manifest.run_id))
    }

    /// The part of the resumed run that stands (None when the plan resumes nothing).
    pub fn kept(&self) -> Option<Run> {
        self.resume.as_ref().map(|r| r.kept(|s| self.fixed(s)))
    }
}

/// A suite as given to the builder: ready, or by name with options still to parse.
enum Pending {
    Ready(SuiteSpec),
    Named(String, SuiteArgs),
}

/// Builds a [`Plan`]. Fabrics default to shm, ranks to 2, output to no directory.
pub struct PlanBuilder {
    suites: Vec<Pending>,
    fabrics: String,
    via: Option<String>,
    ranks: Option<usize>,
    started: Started,
    bootstrap: Option<String>,
    bootstrap_insecure: bool,
    sets: Vec<String>,
    profile: Option<PathBuf>,
    model: Option<PathBuf>,
    out: Option<PathBuf>,
    mpirun: String,
    rank_program: Option<PathBuf>,
    command_line: Vec<String>,
    tag: Option<String>,
    resume: Option<PathBuf>,
    quick: bool,
    compute_from: Option<PathBuf>,
}

impl Default for PlanBuilder {
    fn default() -> Self {
        PlanBuilder {
            suites: Vec::new(),
            fabrics: "shm".into(),
            via: None,
            ranks: None,
            started: Started::ByUser,
            bootstrap: None,
            bootstrap_insecure: false,
            sets: Vec::new(),
            profile: None,
            model: None,
            out: None,
            mpirun: "mpirun".into(),
            rank_program: None,
            command_line: std::env::args().collect(),
            tag: None,
            resume: None,
            quick: false,
            compute_from: None,
        }
    }
}

impl PlanBuilder {
    pub fn new() -> PlanBuilder {
        PlanBuilder::default()
    }

    pub fn suite(mut self, s: SuiteSpec) -> Self {
        self.suites.push(Pending::Ready(s));
        self
    }

    /// The registered suite `name` with command-line style options, checked in [`build`]
    /// (after the launch, so refusals come in the order a user fixes them).
    ///
    /// [`build`]: PlanBuilder::build
    pub fn suite_named(mut self, name: &str, args: SuiteArgs) -> Self {
        self.suites.push(Pending::Named(name.to_string(), args));
        self
    }

    /// Fabrics, comma separated as on the command line: `shm,tcp@mpi`.
    pub fn fabrics(mut self, labels: &str) -> Self {
        self.fabrics = labels.to_string();
        self
    }

    /// `Some("mpi")`: every fabric through the MPI library (`FABRIC@mpi`).
    pub fn via(mut self, via: Option<&str>) -> Self {
        self.via = via.map(String::from);
        self
    }

    pub fn ranks(mut self, n: usize) -> Self {
        self.ranks = Some(n);
        self
    }

    /// How this process was started (`bench_core::bootstrap::discover::detect()`); alone
    /// unless said otherwise.
    pub fn started(mut self, s: Started) -> Self {
        self.started = s;
        self
    }

    /// Where ranks started by mpirun or srun meet: `tcp://HOST:PORT` or `dir:PATH`.
    pub fn bootstrap(mut self, b: Option<&str>) -> Self {
        self.bootstrap = b.map(String::from);
        self
    }

    /// Lets a `tcp://` bootstrap reachable from other hosts go on without a secret
    /// (`--bootstrap-insecure`).
    pub fn bootstrap_insecure(mut self, yes: bool) -> Self {
        self.bootstrap_insecure = yes;
        self
    }

    /// A tunable, as `NAME=VALUE`; later ones win.
    pub fn set(mut self, assignment: &str) -> Self {
        self.sets.push(assignment.to_string());
        self
    }

    pub fn profile(mut self, path: impl Into<PathBuf>) -> Self {
        self.profile = Some(path.into());
        self
    }

    /// A model card overriding an emulated fabric's parameters.
    pub fn model(mut self, path: impl Into<PathBuf>) -> Self {
        self.model = Some(path.into());
        self
    }

    /// Write the run's directory under `dir`.
    pub fn out(mut self, dir: impl Into<PathBuf>) -> Self {
        self.out = Some(dir.into());
        self
    }

    /// A word appended to the run id (see [`Plan::tag`]).
    pub fn tag(mut self, tag: &str) -> Self {
        self.tag = Some(tag.to_string());
        self
    }

    pub fn mpirun(mut self, program: &str) -> Self {
        self.mpirun = program.to_string();
        self
    }

    /// The executable rank processes run (`PROGRAM __rank`); fabbench's own binary.
    pub fn rank_program(mut self, program: impl Into<PathBuf>) -> Self {
        self.rank_program = Some(program.into());
        self
    }

    pub fn command_line(mut self, args: Vec<String>) -> Self {
        self.command_line = args;
        self
    }

    /// Continues the kept partial run in `dir` (`OUT/RUN_ID.partial`): the plan must be the
    /// one that run was made from (its suites, fabrics and rank count), and what it measured
    /// is kept.
    pub fn resume(mut self, dir: impl Into<PathBuf>) -> Self {
        self.resume = Some(dir.into());
        self
    }

    /// Charge the compute stretches the run in `dir` recorded (its compute.csv) instead of
    /// timing them: `dir` must be a complete run of the same suites and parameters with this
    /// plan's rank count on every fabric of the plan (all emulated), or a scaling run's
    /// directory holding one.
    pub fn compute_from(mut self, dir: impl Into<PathBuf>) -> Self {
        self.compute_from = Some(dir.into());
        self
    }

    /// A first look: each suite with its quick parameters (see [`Plan::quick`]).
    pub fn quick(mut self, quick: bool) -> Self {
        self.quick = quick;
        self
    }

    /// Checks everything and returns the plan.
    pub fn build(self) -> Result<Plan, PlanError> {
        let (ranks, launch) = self.launch()?;
        if self.suites.is_empty() {
            return Err(PlanError::Refused(format!(
                "no suite to run; valid suites: {}",
                suites::names().join(", ")
            )));
        }
        let found = self
            .suites
            .iter()
            .map(|p| match p {
                Pending::Ready(s) => Ok(s.suite),
                Pending::Named(name, _) => suites::find(name).ok_or_else(|| {
                    PlanError::Refused(format!(
                        "unknown suite '{name}'; valid suites: {}",
                        suites::names().join(", ")
                    ))
                }),
            })
            .collect::<Result<Vec<_>, _>>()?;
        for (i, suite) in found.iter().enumerate() {
            if found[..i].iter().any(|s| s.name() == suite.name()) {
                // Its rows and histograms would be written twice under one name.
                return Err(PlanError::Refused(format!(
                    "{} is given twice; name each suite once (run it again for a second measurement)",
                    suite.name()
                )));
            }
            if !suite.ranks().allows(ranks) {
                return Err(PlanError::Refused(format!(
                    "{} needs {}, got -n {ranks}",
                    suite.name(),
                    suite.ranks().describe(),
                )));
            }
        }
        let mut specs = Vec::new();
        for (p, suite) in self.suites.iter().zip(found) {
            let params = match p {
                Pending::Ready(s) => s.params.clone(),
                Pending::Named(_, args) => suite.parse(args)?,
            };
            let params = match self.quick {
                true => suite.quick(&params)?.unwrap_or(params),
                false => params,
            };
            suite.check(&params, ranks)?;
            if matches!(suite.planned(&params), Ok(Some(0))) {
                return Err(PlanError::Refused(format!(
                    "{}: the options select no point to measure; see `fabbench run --help` for its ranges",
                    suite.name()
                )));
            }
            specs.push(SuiteSpec { suite, params });
        }
        let mut fabrics = self.fabric_specs(&launch, ranks)?;
        let resume = match &self.resume {
            None => None,
            Some(dir) => Some(resumable(dir, &specs, &fabrics, ranks, &launch)?),
        };
        if let Some(dir) = &self.compute_from {
            replayed(dir, &specs, &mut fabrics, ranks, resume.is_some())?;
        }
        let launch = self.with_secret(launch)?;
        Ok(Plan {
            suites: specs,
            fabrics,
            ranks,
            launch,
            out: self.out,
            mpirun: self.mpirun,
            rank_program: self.rank_program,
            command_line: self.command_line,
            tag: self.tag,
            resume,
            quick: self.quick,
        })
    }

    /// A tcp bootstrap's checks and secret, last of all the plan's checks: it may create the
    /// user's key file, which bad input elsewhere must not leave behind.
    fn with_secret(&self, launch: Launch) -> Result<Launch, PlanError> {
        match launch {
            Launch::External {
                ext,
                boot: BootSpec::Tcp(hp),
                ..
            } => {
                if ext.rank == 0 {
                    crate::secret::check_host_is_mine(&hp)?;
                }
                let secret = crate::secret::for_tcp(&ext, &hp, self.bootstrap_insecure)?;
                Ok(Launch::External {
                    ext,
                    boot: BootSpec::Tcp(hp),
                    secret,
                })
            }
            other => Ok(other),
        }
    }

    fn launch(&self) -> Result<(usize, Launch), PlanError> {
        match &self.started {
            Started::External(ext) => {
                if let Some(n) = self.ranks.filter(|n| *n != ext.size) {
                    return Err(PlanError::Refused(format!(
                        "-n {n} disagrees with {}, which started {} ranks; leave -n out under a launcher",
                        ext.launcher, ext.size
                    )));
                }
                let boot = match &self.bootstrap {
                    Some(b) => BootSpec::parse(b)?.usable()?,
                    None => {
                        return Err(PlanError::Refused(format!(
                            "started by {} as rank {} of {}: give --bootstrap tcp://HOST:PORT (rank 0 serves it) or --bootstrap dir:PATH",
                            ext.launcher, ext.rank, ext.size
                        )))
                    }
                };
                Ok((
                    ext.size,
                    Launch::External {
                        ext: ext.clone(),
                        boot,
                        // Found once everything else is checked (see `with_secret`).
                        secret: Secret::Unused,
                    },
                ))
            }
            _ => {
                if let Some(b) = &self.bootstrap {
                    return Err(PlanError::Refused(format!(
                        "--bootstrap {b} is for ranks started by mpirun or srun; fabbench starts its own ranks here"
                    )));
                }
                let n = self.ranks.unwrap_or(2);
                if n == 0 {
                    return Err(PlanError::Refused(
                        "-n 0: a run needs at least one rank".into(),
                    ));
                }
                Ok((n, Launch::Local))
            }
        }
    }

    fn fabric_specs(&self, launch: &Launch, ranks: usize) -> Result<Vec<FabricSpec>, PlanError> {
        let registry = registry::registry(&[]);
        let profile = match &self.profile {
            None => None,
            Some(p) => Some(results::read::read_regular(p).map_err(|source| {
                PlanError::ProfileUnreadable {
                    path: p.clone(),
                    source,
                }
            })?),
        };
        let model = match &self.model {
            None => None,
            Some(p) => {
                let text = results::read::read_regular(p).map_err(|source| {
                    PlanError::ModelCardUnreadable {
                        path: p.clone(),
                        source,
                    }
                })?;
                Some(
                    registry::read_model_card(&text).map_err(|source| PlanError::ModelCard {
                        path: p.clone(),
                        source: Box::new(source),
                    })?,
                )
            }
        };
        let via_mpi = match self.via.as_deref() {
            None => false,
            Some("mpi") => true,
            Some(other) => {
                return Err(PlanError::Refused(format!(
                    "--via {other}: the only way through is mpi (--via mpi, or FABRIC@mpi)"
                )))
            }
        };
        let requested: Vec<String> = self
            .fabrics
            .split(',')
            .map(|f| {
                let f = f.trim();
                if via_mpi && !f.ends_with("@mpi") && f != "mpi" {
                    format!("{f}@mpi")
                } else {
                    f.to_string()
                }
            })
            .collect();
        let model_target = match &model {
            None => None,
            Some(registry::ModelCard {
                fabric: Some(f), ..
            }) => Some(f.clone()),
            Some(registry::ModelCard { fabric: None, .. }) => {
                let emulated: Vec<&str> = requested
                    .iter()
                    .map(String::as_str)
                    .filter(|n| registry::find(n).is_some_and(|d| d.kind == FabricKind::Emulated))
                    .collect();
                match emulated.as_slice() {
                    [one] => Some(one.to_string()),
                    _ => {
                        return Err(PlanError::Refused(format!(
                            "--model {}: say which fabric the card is for (fabric = \"rapidio\"); the run has emulated fabrics {:?}",
                            self.model.as_ref().expect("model given").display(),
                            emulated
                        )))
                    }
                }
            }
        };
        if let Some(t) = &model_target {
            if !requested.contains(t) {
                return Err(PlanError::Refused(format!(
                    "--model is for fabric {t}, which this run does not use (--fabric {})",
                    self.fabrics
                )));
            }
        }
        self.check_sets_belong(&requested)?;
        let mut fabrics: Vec<FabricSpec> = Vec::new();
        for label in &requested {
            let resolved = registry::resolve(label)?;
            let def = resolved.def;
            if fabrics.iter().any(|f| &f.label == label) {
                return Err(PlanError::Refused(format!(
                    "fabric '{label}' is listed twice in --fabric"
                )));
            }
            if def.kind == FabricKind::Mpi
                && *launch != Launch::Local
                && fabrics.iter().any(|f| f.def.kind == FabricKind::Mpi)
            {
                return Err(PlanError::Refused(
                    "under an external launcher a run can use one MPI fabric (MPI starts once per process)".into(),
                ));
            }
            if def.kind == FabricKind::Emulated && *launch != Launch::Local {
                return Err(PlanError::Refused(format!(
                    "fabric {} is emulated: its ranks run as threads of one fabbench process; run it without mpirun or srun",
                    def.name
                )));
            }
            let card = match (&model, &model_target) {
                (Some(card), Some(t)) if t == label => Some(card.values.as_slice()),
                _ => None,
            };
            let mut settings = self.settings_for(&registry, def, profile.as_deref(), card)?;
            for (k, v) in resolved.preset {
                settings.set(&registry, k, v, Source::Fabric)?;
            }
            (def.check_settings)(&settings).map_err(|source| PlanError::FabricSettings {
                label: label.clone(),
                source: Box::new(source),
            })?;
            (def.check_ranks)(&settings, ranks)?;
            if let Some(r) = ByteOrders::from_settings(&settings).only_rank {
                if r >= ranks {
                    return Err(PlanError::Refused(format!(
                        "--set wire.byte_order_rank={r}: the job has ranks 0..{}; name one of them or leave it unset (every rank)",
                        ranks - 1
                    )));
                }
            }
            fabrics.push(FabricSpec {
                label: label.clone(),
                def,
                settings,
                compute_replay: None,
            });
        }
        Ok(fabrics)
    }

    /// Refuses a `--set` of a tunable only fabrics outside this run have: it would do
    /// nothing, yet be recorded as set.
    fn check_sets_belong(&self, requested: &[String]) -> Result<(), PlanError> {
        let in_run: Vec<&str> = requested
            .iter()
            .filter_map(|l| registry::resolve(l).ok().map(|r| r.def.name))
            .collect();
        for a in &self.sets {
            let Some(owned_by) = owners(a) else { continue };
            if !owned_by.iter().any(|f| in_run.contains(f)) {
                let name = a.split_once('=').map_or(a.as_str(), |(n, _)| n);
                return Err(PlanError::Refused(format!(
                    "--set {a}: {name} is a tunable of {}, which this run does not use (fabrics: {}); add the fabric to --fabric or leave the setting out",
                    owned_by.join(", "),
                    in_run.join(", ")
                )));
            }
        }
        Ok(())
    }

    /// Registry defaults, then the fabric's defaults, then the profile, then the model card,
    /// then each `set`.
    fn settings_for(
        &self,
        registry: &Registry,
        def: &FabricDef,
        profile: Option<&str>,
        card: Option<&[(String, String)]>,
    ) -> Result<Settings, PlanError> {
        let mut s = registry.defaults();
        for (k, v) in def.defaults {
            s.set(registry, k, v, Source::Fabric)?;
        }
        if let Some(text) = profile {
            s.apply_profile(registry, text)
                .map_err(|source| PlanError::Profile {
                    path: self.profile.clone().expect("profile given"),
                    source,
                })?;
        }
        if let Some(values) = card {
            let prefix = format!("{}.", def.name);
            for (k, v) in values {
                // A card's own values are named without the fabric's prefix; a name the
                // registry knows as it stands is an engine tunable (the eager threshold of the
                // MPI stack the card describes), set as such.
                let name = if k.starts_with(&prefix) || registry.get(k).is_some() {
                    k.clone()
                } else {
                    format!("{prefix}{k}")
                };
                s.set(registry, &name, v, Source::Model)
                    .map_err(|source| PlanError::Option {
                        option: "--model",
                        source,
                    })?;
            }
        }
        for a in &self.sets {
            // Another fabric's own tunable (the run has both) is that fabric's, not this one's.
            if owners(a).is_some_and(|o| !o.contains(&def.name)) {
                continue;
            }
            s.set_assignment(registry, a, Source::Cli)
                .map_err(|source| PlanError::Option {
                    option: "--set",
                    source,
                })?;
        }
        for (engine, own) in def.replaces {
            if s.source(engine) >= Source::Profile {
                return Err(PlanError::Refused(format!(
                    "on {}, {engine} is set through {own}; use --set {own}=VALUE",
                    def.name
                )));
            }
        }
        Ok(s)
    }
}

/// The fabrics whose own tunable an assignment `NAME=VALUE` sets, or None for a tunable of
/// the engine or the run (eager_limit, timeout) that every fabric takes.
fn owners(assignment: &str) -> Option<Vec<&'static str>> {
    let name = assignment
        .split_once('=')
        .map_or(assignment, |(n, _)| n)
        .trim();
    let owned_by: Vec<&'static str> = registry::FABRICS
        .iter()
        .filter(|f| (f.tunables)().iter().any(|d| d.name == name))
        .map(|f| f.name)
        .collect();
    (!owned_by.is_empty()).then_some(owned_by)
}

/// The kept partial run in `dir`, checked against the plan that is to continue it.
fn resumable(
    dir: &std::path::Path,
    suites: &[SuiteSpec],
    fabrics: &[FabricSpec],
    ranks: usize,
    launch: &Launch,
) -> Result<Resume, PlanError> {
    let refuse = |source: ResumeError| PlanError::Resume {
        dir: dir.to_path_buf(),
        source: Box::new(source),
    };
    if *launch != Launch::Local {
        // Every rank under a launcher builds its own plan; only rank 0 could read the run.
        return Err(refuse(ResumeError::UnderLauncher));
    }
    let expected = Expected {
        suites: suites.iter().map(|s| (s.name(), &s.params)).collect(),
        fabrics: fabrics.iter().map(|f| f.label.as_str()).collect(),
        ranks,
    };
    Resume::read(dir, &expected).map_err(refuse)
}

/// Gives each fabric the compute `dir` recorded for it, or says why it cannot.
fn replayed(
    dir: &std::path::Path,
    suites: &[SuiteSpec],
    fabrics: &mut [FabricSpec],
    ranks: usize,
    resumed: bool,
) -> Result<(), PlanError> {
    let refuse = |source: ReplayError| PlanError::Replay {
        dir: dir.to_path_buf(),
        source: Box::new(source),
    };
    if resumed {
        return Err(refuse(ReplayError::Resumed));
    }
    if let Some(f) = fabrics.iter().find(|f| f.def.kind != FabricKind::Emulated) {
        return Err(refuse(ReplayError::NotEmulated {
            fabric: f.label.clone(),
        }));
    }
    let expected = replay::Expected {
        suites: suites.iter().map(|s| (s.name(), &s.params)).collect(),
        fabrics: fabrics.iter().map(|f| f.label.as_str()).collect(),
        ranks,
    };
    let mut found = replay::read(dir, &expected).map_err(refuse)?;
    for f in fabrics {
        f.compute_replay = found.remove(&f.label);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use suites::osu::{OsuParams, LATENCY};

    fn latency() -> SuiteSpec {
        SuiteSpec::new(&LATENCY, OsuParams::default())
    }

    #[test]
    fn bootstrap_addresses() {
        assert_eq!(
            BootSpec::parse("tcp://node1:7000").unwrap(),
            BootSpec::Tcp("node1:7000".into())
        );
        assert_eq!(
            BootSpec::parse("dir:/shared/x").unwrap(),
            BootSpec::Dir("/shared/x".into())
        );
        for bad in [
            "tcp://node1",
            "tcp://:7",
            "tcp://h:99999",
            "dir:",
            "udp://h:1",
            "h:1",
        ] {
            assert!(
                BootSpec::parse(bad)
                    .unwrap_err()
                    .to_string()
                    .contains("tcp://HOST:PORT"),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_plan_knows_where_its_run_is_written() {
        let mut p = PlanBuilder::new()
            .suite(latency())
            .fabrics("rapidio")
            .build()
            .unwrap();
        let run = results::testing::RunBuilder::new("20261122T101530Z-osu_latency-rapidio").build();
        p.out = None;
        assert_eq!(p.run_dir(&run), None);
        p.out = Some(PathBuf::from("res"));
        assert_eq!(
            p.run_dir(&run),
            Some(PathBuf::from("res/20261122T101530Z-osu_latency-rapidio"))
        );
        p.resume = Some(Resume {
            dir: PathBuf::from("old/20261122T101530Z-osu_latency-rapidio.partial"),
            prior: run.clone(),
        });
        assert_eq!(
            p.run_dir(&run),
            Some(PathBuf::from("old/20261122T101530Z-osu_latency-rapidio"))
        );
    }

    #[test]
    fn a_plan_without_a_command_line() {
        let p = PlanBuilder::new()
            .suite(latency())
            .fabrics("rapidio,hyperlink")
            .set("eager_limit=8K")
            .build()
            .unwrap();
        assert_eq!(p.ranks, 2);
        assert_eq!(p.fabrics.len(), 2);
        assert_eq!(
            p.fabrics[0].settings.get(transports::fabric::EAGER_LIMIT),
            8192
        );
        assert_eq!(p.role(), Role::Frontend);
        assert!(p.out.is_none());
    }

    #[test]
    fn refusals_say_what_is_valid() {
        let e = |b: PlanBuilder| b.build().err().unwrap().to_string();
        assert!(e(PlanBuilder::new()).contains("no suite to run"));
        assert!(e(PlanBuilder::new().suite(latency()).ranks(3))
            .contains("osu_latency needs exactly 2 ranks, got -n 3"));
        assert!(e(PlanBuilder::new().suite(latency()).fabrics("infiniband"))
            .contains("valid fabrics: shm"));
        assert!(e(PlanBuilder::new().suite(latency()).set("eagr_limit=1K"))
            .contains("did you mean 'eager_limit'"));
        assert!(e(PlanBuilder::new().suite(latency()).fabrics("shm,shm")).contains("listed twice"));
        assert!(e(PlanBuilder::new()
            .suite(latency())
            .fabrics("bxi")
            .set("eager_limit=1K"))
        .contains("use --set bxi.rendezvous=VALUE"));
        assert!(e(PlanBuilder::new()
            .suite(latency())
            .fabrics("bxi")
            .set("bxi.rendezvous=1G"))
        .starts_with("on bxi, bxi.rendezvous=1GiB: "));
        assert!(e(PlanBuilder::new()
            .suite(latency())
            .fabrics("shm,hyperlink")
            .set("hyperlink.frag_bytes=1K"))
        .contains("use frag_size <= 30720"));
        assert!(e(PlanBuilder::new()
            .suite(latency())
            .bootstrap(Some("dir:/x")))
        .contains("fabbench starts its own ranks here"));
        let e = SuiteSpec::parse("osu_nope", &SuiteArgs::new())
            .err()
            .unwrap();
        assert!(e
            .to_string()
            .contains("valid suites: osu_latency, osu_bw, osu_bibw"));
    }
}
