//! `fabbench run`: validates the plan, launches each fabric's job, prints OSU's layout as
//! points arrive, and writes the run directory once everything succeeded.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use bench_core::bootstrap::tcp::Server;
use bench_core::bootstrap::{random_hex, Bootstrap as _};
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
use crate::events::{JobSpec, RankEvent, SPEC_ENV};
use crate::plan::{self, FabricPlan, Plan};
use crate::signals;

/// Exit statuses.
pub const EXIT_OK: i32 = 0;
pub const EXIT_FAILED: i32 = 1;
pub const EXIT_USAGE: i32 = 2;
/// 128 + SIGINT, as shells report an interrupted command.
pub const EXIT_INTERRUPTED: i32 = 130;

pub fn run(args: RunArgs) -> i32 {
    let plan = match plan::plan(&args) {
        Ok(p) => p,
        Err(plan::UsageError(msg)) => {
            eprintln!("error: {msg}");
            return EXIT_USAGE;
        }
    };
    let start = SystemTime::now();
    let run_id = run_id(start, &plan);
    let dir = match RunDir::create(&plan.out, &run_id) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    signals::install();
    let mut printer = Printer::default();
    let mut series = Vec::new();
    let mut fabric_runs = Vec::new();
    for fp in &plan.fabrics {
        let outcome = match fp.def.kind {
            FabricKind::Native => run_native(fp, &plan, &mut printer),
            FabricKind::Emulated => run_emulated(fp, &plan, &mut printer),
            other => Err(format!(
                "fabric {} runs as {other:?}, which this build cannot launch",
                fp.def.name
            )),
        };
        match outcome {
            Ok((s, f)) => {
                series.extend(s);
                fabric_runs.push(f);
            }
            Err(msg) => {
                eprintln!("error: {msg}");
                return if signals::INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst) {
                    EXIT_INTERRUPTED
                } else {
                    EXIT_FAILED
                };
            }
        }
    }
    let manifest = Manifest {
        fabbench_version: env!("CARGO_PKG_VERSION").into(),
        git_revision: env!("FABBENCH_GIT_REVISION").into(),
        run_id: dir
            .final_path()
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or(run_id),
        command_line: std::env::args().collect(),
        start_time: humantime::format_rfc3339_seconds(start).to_string(),
        end_time: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
        host: HostInfo::collect(),
        suites: plan.suites.iter().map(|s| s.name().to_string()).collect(),
        options: serde_json::to_value(&plan.opts).expect("options serialise"),
        fabrics: fabric_runs,
    };
    let run = Run { manifest, series };
    match write_run(&dir, &run, &printer.text) {
        Ok(()) => {}
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_FAILED;
        }
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
    let fabrics: Vec<&str> = plan.fabrics.iter().map(|f| f.def.name).collect();
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

/// The comment line that names fabbench, the fabric and the tunables in force.
fn comment_line(suite: &str, fp: &FabricPlan, ranks: usize) -> String {
    let kind = match fp.def.kind {
        FabricKind::Native => "native",
        FabricKind::Emulated => "emulated, virtual time",
        FabricKind::Mpi => "mpi",
    };
    let prefix = format!("{}.", fp.def.name);
    let shown: Vec<String> = fp
        .settings
        .iter()
        .filter(|(name, _, _)| {
            // Placement and single copy mean nothing to an emulated fabric.
            let irrelevant = *name == "timeout"
                || (fp.def.kind == FabricKind::Emulated
                    && (*name == "bind" || *name == "single_copy"));
            let engine = ENGINE_TUNABLES.iter().any(|d| d.name == *name)
                && !irrelevant
                && !fp.def.replaces.iter().any(|(e, _)| e == name);
            engine || name.starts_with(&prefix)
        })
        .map(|(name, v, _)| format!("{name}={v}"))
        .collect();
    format!(
        "# fabbench {} {suite}: fabric {} ({kind}), {ranks} ranks; {}\n",
        env!("CARGO_PKG_VERSION"),
        fp.def.name,
        shown.join(" ")
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

/// Gathers one fabric's events into series, printing as it goes.
struct Collector<'a> {
    fp: &'a FabricPlan,
    ranks: usize,
    cols: Columns,
    series: Vec<Series>,
    done: Vec<Option<RankEvent>>,
    failures: BTreeMap<usize, (String, String)>,
    printer: &'a mut Printer,
}

impl Collector<'_> {
    fn on_event(&mut self, rank: usize, json: &str) {
        let ev: RankEvent = match serde_json::from_str(json) {
            Ok(e) => e,
            Err(e) => {
                tracing::warn!("rank {rank} sent an unreadable event: {e}");
                return;
            }
        };
        match ev {
            RankEvent::SuiteStart { suite, layout } => {
                let comment = comment_line(&suite, self.fp, self.ranks);
                self.printer
                    .print(&osu::header(&layout, self.cols, &comment));
                self.series.push(Series {
                    suite,
                    fabric: self.fp.def.name.to_string(),
                    emulated: self.fp.def.kind == FabricKind::Emulated,
                    ranks: self.ranks,
                    layout,
                    points: Vec::new(),
                });
            }
            RankEvent::Point { suite, point } => {
                if let Some(s) = self.series.iter_mut().rev().find(|s| s.suite == suite) {
                    self.printer.print(&osu::row(&point, self.cols));
                    s.points.push(point);
                }
            }
            ev @ RankEvent::Done { .. } => {
                if rank < self.done.len() {
                    self.done[rank] = Some(ev);
                }
            }
            RankEvent::Failed { stage, message } => {
                self.failures.insert(rank, (stage, message));
            }
        }
    }

    fn fabric_run(&self) -> FabricRun {
        let mut facts = BTreeMap::new();
        let mut counters = Vec::new();
        let mut virtual_time = false;
        for (rank, d) in self.done.iter().enumerate() {
            if let Some(RankEvent::Done {
                counters: c,
                facts: f,
                virtual_time: v,
            }) = d
            {
                counters.push(serde_json::json!({ "rank": rank, "counters": c }));
                virtual_time |= *v;
                for (k, val) in f {
                    facts.insert(format!("rank{rank}.{k}"), val.clone());
                }
            }
        }
        FabricRun {
            fabric: self.fp.def.name.to_string(),
            kind: format!("{:?}", self.fp.def.kind).to_lowercase(),
            emulated: self.fp.def.kind == FabricKind::Emulated,
            virtual_time,
            ranks: self.ranks,
            tunables: tunable_records(&self.fp.settings),
            counters,
            facts,
        }
    }
}

fn job_spec(fp: &FabricPlan, plan: &Plan) -> JobSpec {
    JobSpec {
        suites: plan.suites.iter().map(|s| s.name().to_string()).collect(),
        fabric: fp.def.name.to_string(),
        opts: plan.opts.clone(),
        settings: fp.settings.clone(),
    }
}

/// An emulated fabric's ranks are threads of this process under the discrete-event
/// scheduler; their events arrive on an in-process channel.
fn run_emulated(
    fp: &FabricPlan,
    plan: &Plan,
    printer: &mut Printer,
) -> Result<(Vec<Series>, FabricRun), String> {
    let (boots, events) = bench_core::bootstrap::local::group(plan.ranks);
    let spec = std::sync::Arc::new(job_spec(fp, plan));
    let mut collector = Collector {
        fp,
        ranks: plan.ranks,
        cols: Columns {
            tail: plan.opts.tail,
            validation: plan.opts.validate,
        },
        series: Vec::new(),
        done: vec![None; plan.ranks],
        failures: BTreeMap::new(),
        printer,
    };
    let mut threads = Vec::new();
    for b in boots {
        let spec = spec.clone();
        let rank = b.rank();
        let h = std::thread::Builder::new()
            .name(format!("{}-rank{rank}", fp.def.name))
            .spawn(move || {
                let boot: std::sync::Arc<dyn bench_core::bootstrap::Bootstrap> =
                    std::sync::Arc::new(b);
                crate::rank::run_reporting(&spec, boot)
            })
            .map_err(|e| format!("cannot start rank threads: {e}"))?;
        threads.push(h);
    }
    // Events flow until every rank thread has dropped its end of the channel.
    loop {
        if signals::INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst) {
            return Err("interrupted".into());
        }
        match events.recv_timeout(Duration::from_millis(20)) {
            Ok((rank, json)) => collector.on_event(rank, &json),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    for (rank, h) in threads.into_iter().enumerate() {
        if h.join().is_err() {
            collector
                .failures
                .entry(rank)
                .or_insert_with(|| ("unknown".into(), "the rank thread panicked".into()));
        }
    }
    // The root cause, not the ranks that then found their peer gone.
    let root = collector
        .failures
        .iter()
        .find(|(_, (_, m))| !m.starts_with("deadlock"))
        .or_else(|| collector.failures.iter().next());
    if let Some((rank, (stage, msg))) = root {
        return Err(format!("rank {rank} failed during stage '{stage}': {msg}"));
    }
    let fr = collector.fabric_run();
    Ok((collector.series, fr))
}

fn run_native(
    fp: &FabricPlan,
    plan: &Plan,
    printer: &mut Printer,
) -> Result<(Vec<Series>, FabricRun), String> {
    let token = random_hex(16);
    let job_id = random_hex(6);
    let server = Server::start("127.0.0.1:0", plan.ranks, &token).map_err(|e| e.to_string())?;
    let spec = job_spec(fp, plan);
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
    let mut collector = Collector {
        fp,
        ranks: plan.ranks,
        cols: Columns {
            tail: plan.opts.tail,
            validation: plan.opts.validate,
        },
        series: Vec::new(),
        done: vec![None; plan.ranks],
        failures: BTreeMap::new(),
        printer,
    };
    let outcome = Job::spawn(&cmd, &placement, server, &token, &job_id)
        .and_then(|job| job.supervise(&mut |r, j| collector.on_event(r, j), &signals::INTERRUPTED));
    // Whatever happened, no segment of this job may outlive it.
    transports::shm::segment::cleanup_job(&job_id);
    match outcome {
        Ok(()) => {
            if let Some((rank, (stage, msg))) = collector.failures.iter().next() {
                return Err(format!("rank {rank} failed during stage '{stage}': {msg}"));
            }
            let missing: Vec<String> = collector
                .done
                .iter()
                .enumerate()
                .filter(|(_, d)| d.is_none())
                .map(|(r, _)| r.to_string())
                .collect();
            if !missing.is_empty() {
                return Err(format!(
                    "rank {} ended without reporting its results",
                    missing.join(", ")
                ));
            }
            let fr = collector.fabric_run();
            Ok((collector.series, fr))
        }
        Err(LaunchError::RankFailed { rank, how, stage }) => {
            let detail = collector
                .failures
                .get(&rank)
                .map(|(_, m)| format!(": {m}"))
                .unwrap_or_default();
            let stage = stage
                .or_else(|| collector.failures.get(&rank).map(|(s, _)| s.clone()))
                .map(|s| format!(" during stage '{s}'"))
                .unwrap_or_default();
            Err(format!(
                "rank {rank} {how}{stage}{detail}; the other ranks were stopped"
            ))
        }
        Err(e) => Err(e.to_string()),
    }
}
