//! `fabbench run`: plans the run, starts the ranks (processes for native fabrics, threads for
//! emulated ones, or, under mpirun/srun, the launcher's processes with rank 0 as frontend),
//! prints OSU's layout as points arrive (one table with a column per fabric when several
//! fabrics run), and writes the run directory once everything succeeded.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use bench_core::bootstrap::discover::{self, External};
use bench_core::bootstrap::tcp::{Client, Server, ServerEvent};
use bench_core::bootstrap::{random_hex, Bootstrap};
use bench_core::launcher::{Job, LaunchError, Placement, RankCommand};
use bench_core::machine::HostInfo;
use bench_core::tunables::{Settings, Value};
use results::export::{Exporter, ManifestJson, ResultsJson, SamplesCsv, SummaryCsv};
use results::hist::Histograms;
use results::model::{FabricRun, Manifest, Run, Series, TunableRecord};
use results::osu::{self, Columns};
use results::run_dir::RunDir;
use transports::fabric::{FabricKind, ENGINE_TUNABLES};

use crate::cli::RunArgs;
use crate::events::{FabricJob, JobSpec, RankEvent, SPEC_ENV};
use crate::plan::{self, BootSpec, FabricPlan, Launch, Plan};
use crate::signals;

/// Exit statuses.
pub const EXIT_OK: i32 = 0;
pub const EXIT_FAILED: i32 = 1;
pub const EXIT_USAGE: i32 = 2;
/// 128 + SIGINT, as shells report an interrupted command.
pub const EXIT_INTERRUPTED: i32 = 130;

/// How long rank 0 waits for the other ranks' last reports once its own work is done.
const GRACE: Duration = Duration::from_secs(10);

pub fn run(args: RunArgs) -> i32 {
    let started = match discover::detect() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let plan = match plan::plan(&args, &started) {
        Ok(p) => p,
        Err(plan::UsageError(msg)) => {
            // Under a launcher every rank refuses; one line from rank 0 is enough.
            if !matches!(&started, discover::Started::External(e) if e.rank != 0) {
                eprintln!("error: {msg}");
            }
            return EXIT_USAGE;
        }
    };
    match plan.launch.clone() {
        Launch::Local => run_local(&plan),
        Launch::External { ext, boot } => run_external(&plan, &ext, &boot),
    }
}

fn job_spec(plan: &Plan, fabrics: &[&FabricPlan]) -> JobSpec {
    JobSpec {
        suites: plan.suites.iter().map(|s| s.name().to_string()).collect(),
        fabrics: fabrics
            .iter()
            .map(|fp| FabricJob {
                fabric: fp.def.name.to_string(),
                label: fp.label.clone(),
                settings: fp.settings.clone(),
            })
            .collect(),
        opts: plan.opts.clone(),
    }
}

fn run_local(plan: &Plan) -> i32 {
    let (dir, start) = match open_run(plan) {
        Ok(d) => d,
        Err(code) => return code,
    };
    let mut report = Report::new(plan);
    for fp in &plan.fabrics {
        let outcome = match fp.def.kind {
            FabricKind::Native => run_native(fp, plan, &mut report),
            FabricKind::Emulated => run_emulated(fp, plan, &mut report),
            FabricKind::Mpi => run_mpi(fp, plan, &mut report),
        };
        if let Err(msg) = outcome {
            return failed(&msg);
        }
    }
    finish(plan, report, dir, start)
}

/// Creates the run's directory (under a temporary name) and takes over Ctrl-C.
fn open_run(plan: &Plan) -> Result<(RunDir, SystemTime), i32> {
    let start = SystemTime::now();
    let dir = RunDir::create(&plan.out, &run_id(start, plan)).map_err(|e| {
        eprintln!("error: {e}");
        EXIT_USAGE
    })?;
    signals::install();
    Ok((dir, start))
}

/// Reports a failed run; the exit status says whether the user interrupted it.
fn failed(msg: &str) -> i32 {
    eprintln!("error: {msg}");
    if signals::INTERRUPTED.load(Ordering::SeqCst) {
        EXIT_INTERRUPTED
    } else {
        EXIT_FAILED
    }
}

/// Writes the run directory and renames it into place.
fn finish(plan: &Plan, mut report: Report, dir: RunDir, start: SystemTime) -> i32 {
    if plan.fabrics.len() > 1 {
        let tables = report.combined_tables();
        report.printer.print(&tables);
    }
    let decisions = report.decisions();
    report.printer.print(&decisions);
    let manifest = Manifest {
        fabbench_version: env!("CARGO_PKG_VERSION").into(),
        git_revision: env!("FABBENCH_GIT_REVISION").into(),
        run_id: dir
            .final_path()
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        command_line: std::env::args().collect(),
        start_time: humantime::format_rfc3339_seconds(start).to_string(),
        end_time: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
        host: HostInfo::collect(),
        suites: plan.suites.iter().map(|s| s.name().to_string()).collect(),
        options: serde_json::to_value(&plan.opts).expect("options serialise"),
        fabrics: plan
            .fabrics
            .iter()
            .map(|fp| report.fabric_run(fp))
            .collect(),
    };
    let run = Run {
        manifest,
        series: std::mem::take(&mut report.series),
    };
    if let Err(e) = write_run(&dir, &run, &report.printer.text) {
        eprintln!("error: {e}");
        return EXIT_FAILED;
    }
    match dir.commit() {
        Ok(path) => {
            eprintln!("# results: {}", path.display());
            EXIT_OK
        }
        Err(e) => {
            eprintln!("error: {e}");
            EXIT_FAILED
        }
    }
}

fn write_run(dir: &RunDir, run: &Run, osu_text: &str) -> Result<(), results::ResultsError> {
    let exporters: [&dyn Exporter; 5] = [
        &ManifestJson,
        &SummaryCsv,
        &SamplesCsv,
        &ResultsJson,
        &Histograms,
    ];
    for e in exporters {
        for (path, bytes) in e.export(run)? {
            dir.write(&path, &bytes)?;
        }
    }
    dir.write(&PathBuf::from("osu.txt"), osu_text.as_bytes())
}

/// `20261122T101530Z-osu_latency-shm`
fn run_id(start: SystemTime, plan: &Plan) -> String {
    let stamp: String = humantime::format_rfc3339_seconds(start)
        .to_string()
        .chars()
        .filter(|c| *c != '-' && *c != ':')
        .collect();
    let suites: Vec<&str> = plan.suites.iter().map(|s| s.name()).collect();
    let fabrics: Vec<&str> = plan.fabrics.iter().map(|f| f.label.as_str()).collect();
    format!("{stamp}-{}-{}", suites.join("+"), fabrics.join("+"))
}

/// Prints OSU text to stdout as it arrives and keeps a copy for osu.txt.
#[derive(Default)]
struct Printer {
    text: String,
}

impl Printer {
    fn print(&mut self, s: &str) {
        self.text.push_str(s);
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(s.as_bytes());
        let _ = out.flush();
    }
}

fn kind_words(fp: &FabricPlan) -> &'static str {
    match fp.def.kind {
        FabricKind::Native => "native",
        FabricKind::Emulated => "emulated, virtual time",
        FabricKind::Mpi => "mpi",
    }
}

/// The tunables worth naming for a fabric: the engine's (less those that mean nothing there)
/// and the fabric's own.
fn tunables_line(fp: &FabricPlan) -> String {
    let prefix = format!("{}.", fp.def.name);
    let mpi = fp.def.kind == FabricKind::Mpi;
    let library = if mpi {
        transports::mpi::library_version()
            .and_then(|l| l.split([',', '\n']).next().map(|s| s.trim().to_string()))
            .unwrap_or_default()
    } else {
        String::new()
    };
    let line = fp
        .settings
        .iter()
        .filter(|(name, v, _)| {
            let irrelevant = *name == "timeout" || fp.def.ignores.contains(name);
            // MPI runs its own protocols: only the MPI variables that are set matter.
            let engine = ENGINE_TUNABLES.iter().any(|d| d.name == *name)
                && !irrelevant
                && !mpi
                && !fp.def.replaces.iter().any(|(e, _)| e == name);
            engine || (name.starts_with(&prefix) && !(mpi && v.to_string().is_empty()))
        })
        .map(|(name, v, _)| format!("{name}={v}"))
        .collect::<Vec<_>>()
        .join(" ");
    match (library.is_empty(), line.is_empty()) {
        (false, false) => format!("{library}; {line}"),
        (false, true) => library,
        _ => line,
    }
}

/// The comment line that names fabbench, the fabric and the tunables in force.
fn comment_line(suite: &str, fp: &FabricPlan, ranks: usize) -> String {
    format!(
        "# fabbench {} {suite}: fabric {} ({}), {ranks} ranks; {}\n",
        env!("CARGO_PKG_VERSION"),
        fp.label,
        kind_words(fp),
        tunables_line(fp)
    )
}

fn tunable_records(s: &Settings) -> BTreeMap<String, TunableRecord> {
    s.iter()
        .map(|(name, v, src)| {
            let value = match v {
                Value::Bool(b) => serde_json::Value::Bool(*b),
                Value::Int(i) => serde_json::Value::from(*i),
                Value::Float(x) => serde_json::Value::from(*x),
                Value::Text(t) => serde_json::Value::String(t.clone()),
            };
            let source = serde_json::to_value(src)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default();
            (name.to_string(), TunableRecord { value, source })
        })
        .collect()
}

/// Everything the ranks report, gathered; prints OSU text live when one fabric runs.
struct Report<'a> {
    plan: &'a Plan,
    live: bool,
    cols: Columns,
    printer: Printer,
    series: Vec<Series>,
    done: BTreeMap<(String, usize), RankEvent>,
    failures: BTreeMap<usize, (String, String)>,
}

impl<'a> Report<'a> {
    fn new(plan: &'a Plan) -> Report<'a> {
        Report {
            plan,
            live: plan.fabrics.len() == 1,
            cols: Columns {
                tail: plan.opts.tail,
                validation: plan.opts.validate,
            },
            printer: Printer::default(),
            series: Vec::new(),
            done: BTreeMap::new(),
            failures: BTreeMap::new(),
        }
    }

    fn fabric(&self, name: &str) -> Option<&'a FabricPlan> {
        self.plan.fabrics.iter().find(|f| f.label == name)
    }

    fn on_event(&mut self, rank: usize, json: &str) {
        let ev: RankEvent = match serde_json::from_str(json) {
            Ok(e) => e,
            Err(e) => {
                tracing::warn!("rank {rank} sent an unreadable event: {e}");
                return;
            }
        };
        match ev {
            RankEvent::SuiteStart {
                fabric,
                suite,
                layout,
            } => {
                let Some(fp) = self.fabric(&fabric) else {
                    return;
                };
                if self.live {
                    let comment = comment_line(&suite, fp, self.plan.ranks);
                    self.printer
                        .print(&osu::header(&layout, self.cols, &comment));
                } else {
                    eprintln!("# running {suite} on {fabric} ({})", kind_words(fp));
                }
                self.series.push(Series {
                    suite,
                    fabric,
                    emulated: fp.def.kind == FabricKind::Emulated,
                    ranks: self.plan.ranks,
                    layout,
                    points: Vec::new(),
                });
            }
            RankEvent::Point {
                fabric,
                suite,
                point,
            } => {
                if let Some(s) = self
                    .series
                    .iter_mut()
                    .rev()
                    .find(|s| s.suite == suite && s.fabric == fabric)
                {
                    if self.live {
                        self.printer.print(&osu::row(&point, self.cols));
                    }
                    s.points.push(point);
                }
            }
            ev @ RankEvent::Done { .. } => {
                let RankEvent::Done { fabric, .. } = &ev else {
                    unreachable!()
                };
                self.done.insert((fabric.clone(), rank), ev);
            }
            RankEvent::Failed { stage, message } => {
                self.failures.entry(rank).or_insert((stage, message));
            }
        }
    }

    /// The failure to report: a root cause rather than a rank that found its peer gone.
    fn root_failure(&self) -> Option<String> {
        let secondary = |m: &str| m.starts_with("deadlock") || m.contains(" is gone (");
        self.failures
            .iter()
            .find(|(_, (_, m))| !secondary(m))
            .or_else(|| self.failures.iter().next())
            .map(|(rank, (stage, msg))| format!("rank {rank} failed during stage '{stage}': {msg}"))
    }

    /// What the fabrics decided at run time (facts named `decided.*`, from rank 0, which
    /// agrees with the others by construction), as comment lines after the tables.
    fn decisions(&self) -> String {
        let mut out = String::new();
        for fp in &self.plan.fabrics {
            if let Some(RankEvent::Done { facts, .. }) = self.done.get(&(fp.label.clone(), 0)) {
                for (k, v) in facts {
                    if let Some(what) = k.strip_prefix("decided.") {
                        out.push_str(&format!("# {}: {what}: {v}\n", fp.label));
                    }
                }
            }
        }
        out
    }

    fn all_done(&self, fabric: &str) -> bool {
        (0..self.plan.ranks).all(|r| self.done.contains_key(&(fabric.to_string(), r)))
    }

    fn fabric_run(&self, fp: &FabricPlan) -> FabricRun {
        let mut facts = BTreeMap::new();
        let mut counters = Vec::new();
        let mut virtual_time = false;
        for rank in 0..self.plan.ranks {
            if let Some(RankEvent::Done {
                counters: c,
                facts: f,
                virtual_time: v,
                ..
            }) = self.done.get(&(fp.label.clone(), rank))
            {
                counters.push(serde_json::json!({ "rank": rank, "counters": c }));
                virtual_time |= *v;
                for (k, val) in f {
                    facts.insert(format!("rank{rank}.{k}"), val.clone());
                }
            }
        }
        FabricRun {
            fabric: fp.label.clone(),
            kind: format!("{:?}", fp.def.kind).to_lowercase(),
            emulated: fp.def.kind == FabricKind::Emulated,
            virtual_time,
            ranks: self.plan.ranks,
            tunables: tunable_records(&fp.settings),
            counters,
            facts,
        }
    }

    /// One OSU-style table per suite with a column per fabric (runs with several fabrics).
    fn combined_tables(&self) -> String {
        let mut out = String::new();
        for suite in &self.plan.suites {
            let per: Vec<&Series> = self
                .plan
                .fabrics
                .iter()
                .filter_map(|fp| {
                    self.series
                        .iter()
                        .find(|s| s.suite == suite.name() && s.fabric == fp.label)
                })
                .collect();
            let Some(first) = per.first() else { continue };
            let mut comment = format!(
                "# fabbench {} {}: {} ranks; a column per fabric\n",
                env!("CARGO_PKG_VERSION"),
                suite.name(),
                self.plan.ranks
            );
            for fp in &self.plan.fabrics {
                comment.push_str(&format!(
                    "# {} ({}): {}\n",
                    fp.label,
                    kind_words(fp),
                    tunables_line(fp)
                ));
            }
            let columns: Vec<String> = per
                .iter()
                .map(|s| format!("{} {}", s.fabric, s.layout.column))
                .collect();
            out.push_str(&osu::header_multi(
                &first.layout,
                &columns,
                self.cols.validation,
                &comment,
            ));
            let sizes: Vec<u64> = first.points.iter().map(|p| p.size).collect();
            for size in sizes {
                let points: Vec<Option<&bench_core::measure::Point>> = per
                    .iter()
                    .map(|s| s.points.iter().find(|p| p.size == size))
                    .collect();
                out.push_str(&osu::row_multi(
                    size,
                    &points,
                    &columns,
                    self.cols.validation,
                ));
            }
        }
        out
    }
}

fn run_native(fp: &FabricPlan, plan: &Plan, report: &mut Report) -> Result<(), String> {
    let token = random_hex(16);
    let job_id = random_hex(6);
    let server = Server::start("127.0.0.1:0", plan.ranks, &token).map_err(|e| e.to_string())?;
    let spec = job_spec(plan, &[fp]);
    let program =
        std::env::current_exe().map_err(|e| format!("cannot find my own executable: {e}"))?;
    let cmd = RankCommand {
        program,
        args: vec!["__rank".into()],
        env: vec![(
            SPEC_ENV.to_string(),
            serde_json::to_string(&spec).expect("spec serialises"),
        )],
    };
    let placement = Placement {
        ranks: plan.ranks,
        bind_to_core: fp.settings.text("bind") == "core",
        grace: Duration::from_secs(2),
    };
    let outcome = Job::spawn(&cmd, &placement, server, &token, &job_id)
        .and_then(|job| job.supervise(&mut |r, j| report.on_event(r, j), &signals::INTERRUPTED));
    // Whatever happened, no segment of this job may outlive it.
    transports::shm::segment::cleanup_job(&job_id);
    match outcome {
        Ok(()) => {
            if let Some(msg) = report.root_failure() {
                return Err(msg);
            }
            if !report.all_done(&fp.label) {
                return Err(format!(
                    "a rank of {} ended without reporting its results",
                    fp.label
                ));
            }
            Ok(())
        }
        Err(LaunchError::RankFailed { rank, how, stage }) => {
            let detail = report
                .failures
                .get(&rank)
                .map(|(_, m)| format!(": {m}"))
                .unwrap_or_default();
            let stage = stage
                .or_else(|| report.failures.get(&rank).map(|(s, _)| s.clone()))
                .map(|s| format!(" during stage '{s}'"))
                .unwrap_or_default();
            Err(format!(
                "rank {rank} {how}{stage}{detail}; the other ranks were stopped"
            ))
        }
        Err(e) => Err(e.to_string()),
    }
}

/// An MPI fabric's ranks are started by mpirun; they report to this frontend's bootstrap
/// server as any rank does, and get the MPI variables in their environment.
fn run_mpi(fp: &FabricPlan, plan: &Plan, report: &mut Report) -> Result<(), String> {
    let flavor = transports::mpi::mpirun_flavor(&plan.mpirun)?;
    let token = random_hex(16);
    let job_id = random_hex(6);
    let server = Server::start("127.0.0.1:0", plan.ranks, &token).map_err(|e| e.to_string())?;
    let spec = job_spec(plan, &[fp]);
    let program =
        std::env::current_exe().map_err(|e| format!("cannot find my own executable: {e}"))?;
    let mut env: Vec<(String, String)> = vec![
        (
            SPEC_ENV.to_string(),
            serde_json::to_string(&spec).expect("spec serialises"),
        ),
        (
            bench_core::bootstrap::env::SIZE.into(),
            plan.ranks.to_string(),
        ),
        (bench_core::bootstrap::env::BOOTSTRAP.into(), server.url()),
        (bench_core::bootstrap::env::TOKEN.into(), token.clone()),
        (bench_core::bootstrap::env::JOB_ID.into(), job_id.clone()),
    ];
    env.extend(transports::mpi::environment(&fp.settings));
    let mut args =
        transports::mpi::mpirun_args(flavor, plan.ranks, fp.settings.text("bind") == "core", &env);
    args.push(program.display().to_string());
    args.push("__rank".into());
    let cmd = RankCommand {
        program: PathBuf::from(&plan.mpirun),
        args: args.into_iter().map(Into::into).collect(),
        env,
    };
    let outcome = Job::spawn_launcher(&cmd, plan.ranks, server, &token, &job_id)
        .and_then(|job| job.supervise(&mut |r, j| report.on_event(r, j), &signals::INTERRUPTED));
    if let Some(msg) = report.root_failure() {
        return Err(msg);
    }
    match outcome {
        Ok(()) if report.all_done(&fp.label) => Ok(()),
        Ok(()) => Err(format!(
            "{} ended without every rank of {} reporting its results",
            plan.mpirun, fp.label
        )),
        Err(e) => Err(e.to_string()),
    }
}

/// An emulated fabric's ranks are threads of this process under the discrete-event
/// scheduler; their events arrive on an in-process channel.
fn run_emulated(fp: &FabricPlan, plan: &Plan, report: &mut Report) -> Result<(), String> {
    let (boots, events) = bench_core::bootstrap::local::group(plan.ranks);
    let spec = Arc::new(job_spec(plan, &[fp]));
    let mut threads = Vec::new();
    for b in boots {
        let spec = spec.clone();
        let rank = b.rank();
        let h = std::thread::Builder::new()
            .name(format!("{}-rank{rank}", fp.def.name))
            .spawn(move || {
                let boot: Arc<dyn Bootstrap> = Arc::new(b);
                crate::rank::run_reporting(&spec, boot)
            })
            .map_err(|e| format!("cannot start rank threads: {e}"))?;
        threads.push(h);
    }
    // Events flow until every rank thread has dropped its end of the channel.
    loop {
        if signals::INTERRUPTED.load(Ordering::SeqCst) {
            return Err("interrupted".into());
        }
        match events.recv_timeout(Duration::from_millis(20)) {
            Ok((rank, json)) => report.on_event(rank, &json),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    for (rank, h) in threads.into_iter().enumerate() {
        if h.join().is_err() {
            report
                .failures
                .entry(rank)
                .or_insert_with(|| ("unknown".into(), "the rank thread panicked".into()));
        }
    }
    match report.root_failure() {
        Some(msg) => Err(msg),
        None => Ok(()),
    }
}

/// The token ranks of an externally launched job present to rank 0's bootstrap server: the
/// same for all of them without any exchange (the launcher's job id), or FABBENCH_TOKEN.
fn external_token(ext: &External) -> String {
    std::env::var("FABBENCH_TOKEN").unwrap_or_else(|_| {
        format!(
            "{}-{}",
            ext.launcher.replace(' ', "_"),
            ext.job.as_deref().unwrap_or("job")
        )
    })
}

fn external_job(ext: &External) -> String {
    ext.job
        .clone()
        .unwrap_or_else(|| "job".into())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Under mpirun or srun: every process is one rank; rank 0 is also the frontend.
fn run_external(plan: &Plan, ext: &External, boot: &BootSpec) -> i32 {
    let spec = job_spec(plan, &plan.fabrics.iter().collect::<Vec<_>>());
    let token = external_token(ext);
    let job = external_job(ext);
    if ext.rank != 0 {
        let b: Arc<dyn Bootstrap> = match boot {
            BootSpec::Tcp(hp) => {
                match Client::connect(&format!("tcp://{hp}"), ext.rank, ext.size, &token, &job) {
                    Ok(c) => Arc::new(c),
                    Err(e) => {
                        eprintln!("error: rank {}: {e}", ext.rank);
                        return EXIT_FAILED;
                    }
                }
            }
            BootSpec::Dir(path) => {
                match bench_core::bootstrap::dir::Dir::new(path, &job, ext.rank, ext.size) {
                    Ok(d) => Arc::new(d),
                    Err(e) => {
                        eprintln!("error: rank {}: {e}", ext.rank);
                        return EXIT_FAILED;
                    }
                }
            }
        };
        return if crate::rank::run_reporting(&spec, b) {
            EXIT_OK
        } else {
            EXIT_FAILED
        };
    }
    // Rank 0: the frontend.
    let (dir, start) = match open_run(plan) {
        Ok(d) => d,
        Err(code) => return code,
    };
    let mut report = Report::new(plan);
    let outcome = match boot {
        BootSpec::Tcp(hp) => external_tcp(plan, ext, hp, &token, &job, spec, &mut report),
        BootSpec::Dir(path) => external_dir(plan, ext, path, &job, spec, &mut report),
    };
    if let Err(msg) = outcome {
        return failed(&msg);
    }
    finish(plan, report, dir, start)
}

/// Rank 0 serves the bootstrap on HOST:PORT and runs its own rank in a thread.
fn external_tcp(
    plan: &Plan,
    ext: &External,
    hostport: &str,
    token: &str,
    job: &str,
    spec: JobSpec,
    report: &mut Report,
) -> Result<(), String> {
    let port = hostport.rsplit_once(':').map(|(_, p)| p).unwrap_or("0");
    let server = Server::start(hostport, ext.size, token)
        .or_else(|_| Server::start(&format!("0.0.0.0:{port}"), ext.size, token))
        .map_err(|e| format!("rank 0 cannot serve the bootstrap: {e}"))?;
    // Through the address the other ranks use, so rank 0's fabric traffic picks the interface
    // that reaches them (tcp.if=auto), not loopback.
    let client = Client::connect(&format!("tcp://{hostport}"), 0, ext.size, token, job)
        .or_else(|_| {
            let local = format!("tcp://127.0.0.1:{}", server.addr().port());
            Client::connect(&local, 0, ext.size, token, job)
        })
        .map_err(|e| e.to_string())?;
    let me = std::thread::spawn(move || crate::rank::run_reporting(&spec, Arc::new(client)));
    let mut stages: BTreeMap<usize, String> = BTreeMap::new();
    let mut connected = vec![false; ext.size];
    let mut closed = vec![false; ext.size];
    let mut finished_at: Option<Instant> = None;
    loop {
        if signals::INTERRUPTED.load(Ordering::SeqCst) {
            return Err("interrupted".into());
        }
        if let Some(ev) = server.next_event(Duration::from_millis(20)) {
            match ev {
                ServerEvent::Hello { rank } => connected[rank] = true,
                ServerEvent::Closed { rank } => closed[rank] = true,
                ServerEvent::Stage { rank, text } => {
                    stages.insert(rank, text);
                }
                ServerEvent::Event { rank, json } => report.on_event(rank, &json),
                ServerEvent::Rejected { peer, reason } => {
                    tracing::warn!("bootstrap refused a connection from {peer}: {reason}")
                }
            }
            continue;
        }
        if me.is_finished() && finished_at.is_none() {
            finished_at = Some(Instant::now());
        }
        if let Some(t) = finished_at {
            let everyone_closed = (0..ext.size).all(|r| !connected[r] || closed[r]);
            if everyone_closed || t.elapsed() > GRACE {
                break;
            }
        }
    }
    let ok = me.join().unwrap_or(false);
    everyone_reported(plan, report, ok, |r| stages.get(&r).cloned())
}

/// After rank 0's own work: the root failure if any, else an error naming the ranks (and the
/// stage each was last in) that did not report results for some fabric.
fn everyone_reported(
    plan: &Plan,
    report: &Report,
    rank0_ok: bool,
    stage_of: impl Fn(usize) -> Option<String>,
) -> Result<(), String> {
    if let Some(msg) = report.root_failure() {
        return Err(msg);
    }
    if !rank0_ok {
        return Err("rank 0 failed".into());
    }
    for fp in &plan.fabrics {
        if !report.all_done(&fp.label) {
            let missing: Vec<String> = (0..plan.ranks)
                .filter(|r| !report.done.contains_key(&(fp.label.clone(), *r)))
                .map(|r| match stage_of(r) {
                    Some(s) => format!("rank {r} (last stage '{s}')"),
                    None => format!("rank {r}"),
                })
                .collect();
            return Err(format!(
                "{} did not report results for fabric {}",
                missing.join(", "),
                fp.label
            ));
        }
    }
    Ok(())
}

/// Rank 0 meets the others through a shared directory and runs its own rank in a thread.
fn external_dir(
    plan: &Plan,
    ext: &External,
    path: &std::path::Path,
    job: &str,
    spec: JobSpec,
    report: &mut Report,
) -> Result<(), String> {
    use bench_core::bootstrap::dir::Dir;
    let watcher = Dir::new(path, job, 0, ext.size).map_err(|e| e.to_string())?;
    let mine = Dir::new(path, job, 0, ext.size).map_err(|e| e.to_string())?;
    let me = std::thread::spawn(move || crate::rank::run_reporting(&spec, Arc::new(mine)));
    let mut finished_at: Option<Instant> = None;
    let result = loop {
        if signals::INTERRUPTED.load(Ordering::SeqCst) {
            break Err("interrupted".to_string());
        }
        let events = watcher.take_events();
        let quiet = events.is_empty();
        for (rank, json) in events {
            report.on_event(rank, &json);
        }
        if me.is_finished() && finished_at.is_none() {
            finished_at = Some(Instant::now());
        }
        if let Some(t) = finished_at {
            let all = plan.fabrics.iter().all(|fp| report.all_done(&fp.label));
            if all || !report.failures.is_empty() || t.elapsed() > GRACE {
                break Ok(());
            }
        }
        if quiet {
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    let ok = me.join().unwrap_or(false);
    let outcome = result.and_then(|_| everyone_reported(plan, report, ok, |r| watcher.stage_of(r)));
    watcher.remove();
    outcome
}
