//! The frontend's side of a run: the [`Run`] being built from what the ranks report (series
//! and points from rank 0, counters and facts from every rank, failures from any), each step
//! passed on to the sink as it happens.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::SystemTime;

use bench_core::machine::HostInfo;
use bench_core::tunables::{Settings, Value};
use results::format::compute::COMPUTE_REPLAYED_FROM;
use results::format::json_csv::{samples_of_point, ManifestJson, SamplesCsv};
use results::format::Exporter;
use results::model::{
    EarlierPart, FabricKind, FabricRun, Manifest, Partial, Resumption, Run, Series, TunableRecord,
};
use results::run_dir::{RunDir, MANIFEST, SAMPLES};
use results::{ResultsError, SCHEMA_VERSION};
use transports::fabric::FabricKind as Kind;
use transports::transport::Counters;

use crate::error::JobError;
use crate::job::RankEvent;
use crate::plan::{FabricSpec, Plan};
use crate::sink::{Event, Sink};

/// What a rank reported when it failed.
pub(crate) struct Reported {
    pub stage: String,
    pub message: String,
    /// It only saw another rank's failure.
    pub secondary: bool,
}

/// What a rank reported when it finished a fabric.
struct Done {
    counters: Counters,
    facts: Vec<(String, String)>,
    virtual_time: bool,
    compute: Vec<u64>,
}

/// What a collector hands back when the run ends.
pub(crate) struct Ended<'a> {
    pub run: Run,
    pub sink: &'a mut dyn Sink,
    /// The run directory, still the working one.
    pub dir: Option<RunDir>,
    /// Per series, how many of its points the journal holds whole.
    pub journalled: Vec<usize>,
}

pub(crate) struct Collector<'a> {
    plan: &'a Plan,
    sink: &'a mut dyn Sink,
    run: Run,
    done: BTreeMap<(String, usize), Done>,
    /// The first failure each rank reported on the fabric running now.
    pub failures: BTreeMap<usize, Reported>,
    /// Where every point goes as it is measured (the run directory's journal), if anywhere.
    journal: Option<RunDir>,
    /// samples.csv in the journal has its header.
    journal_started: bool,
    /// The first journal write that failed: nothing more is measured or journalled, since
    /// the run could not keep it.
    pub journal_error: Option<ResultsError>,
    /// Raised with `journal_error`, for the launch loops to stop the ranks (they cannot
    /// borrow the collector while it takes their events).
    unwritable: &'a AtomicBool,
    /// Per series, how many of its points are whole on disk (samples and the manifest that
    /// lists them): what a run that could not write its final files keeps.
    journalled: Vec<usize>,
    /// Series carried over from a resumed run (their header and rows were replayed).
    resumed: Vec<(String, String)>,
}

fn kind(k: Kind) -> FabricKind {
    match k {
        Kind::Native => FabricKind::Native,
        Kind::Emulated => FabricKind::Emulated,
        Kind::Mpi => FabricKind::Mpi,
    }
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

fn fabric_run(f: &FabricSpec, ranks: usize) -> FabricRun {
    // Known before anything runs, so the reports printed as each suite ends can say it.
    let facts = f
        .compute_replay
        .iter()
        .map(|r| (COMPUTE_REPLAYED_FROM.to_string(), r.source.clone()))
        .collect();
    FabricRun {
        fabric: f.label.clone(),
        kind: kind(f.def.kind),
        emulated: f.def.kind == Kind::Emulated,
        virtual_time: false,
        ranks,
        settings_line: f.def.settings_line(&f.settings),
        tunables: tunable_records(&f.settings),
        counters: Vec::new(),
        facts,
        compute: Vec::new(),
    }
}

/// The record of continuing the kept partial `run` (whose partial mark was `before`) at
/// `stamp`: this host and build, why the part before ended, the points it kept, and what its
/// ranks had reported per fabric (which the new part's reports replace).
fn resumption(run: &Run, before: Option<&Partial>, stamp: &str) -> Resumption {
    Resumption {
        at: stamp.to_string(),
        host: HostInfo::collect().hostname,
        fabbench_version: env!("CARGO_PKG_VERSION").into(),
        git_revision: env!("FABBENCH_GIT_REVISION").into(),
        after: before.map(|p| p.reason.clone()).unwrap_or_default(),
        points_kept: run.series.iter().map(|s| s.points.len()).sum(),
        reported: run
            .manifest
            .fabrics
            .iter()
            .filter(|f| !f.counters.is_empty() || !f.facts.is_empty())
            .map(|f| EarlierPart {
                fabric: f.fabric.clone(),
                counters: f.counters.clone(),
                facts: f.facts.clone(),
            })
            .collect(),
    }
}

/// The journal's manifest.json: the run so far, marked partial.
fn write_manifest(run: &Run, dir: &RunDir) -> Result<(), ResultsError> {
    for (path, bytes) in ManifestJson.export(run)? {
        dir.write_quick(&path, &bytes)?;
    }
    Ok(())
}

/// How many points a plan measures, when every suite knows up front.
pub(crate) fn planned(plan: &Plan) -> Option<usize> {
    let per_fabric: Option<usize> = plan
        .suites
        .iter()
        .map(|s| s.suite.planned(&s.params).ok().flatten())
        .sum();
    per_fabric.map(|n| n * plan.fabrics.len())
}

impl<'a> Collector<'a> {
    /// A collector for a new run, or (with `prior`) for the rest of a resumed one. With a
    /// `journal`, every point is on disk as soon as it is measured.
    pub fn new(
        plan: &'a Plan,
        run_id: String,
        start: SystemTime,
        sink: &'a mut dyn Sink,
        journal: Option<RunDir>,
        prior: Option<Run>,
        unwritable: &'a AtomicBool,
    ) -> Collector<'a> {
        let stamp = humantime::format_rfc3339_seconds(start).to_string();
        let in_progress = Partial {
            reason: format!(
                "in progress: pid {} on {}",
                std::process::id(),
                HostInfo::collect().hostname
            ),
            finished: Vec::new(),
        };
        let run = match prior {
            Some(mut run) => {
                let before = run.manifest.partial.take();
                let resumption = resumption(&run, before.as_ref(), &stamp);
                run.manifest.resumed.push(resumption);
                let finished = before.map(|p| p.finished).unwrap_or_default();
                run.manifest.partial = Some(Partial {
                    finished,
                    ..in_progress
                });
                run
            }
            None => Run {
                manifest: Manifest {
                    partial: Some(in_progress),
                    quick: plan.quick,
                    resumed: Vec::new(),
                    schema_version: SCHEMA_VERSION,
                    fabbench_version: env!("CARGO_PKG_VERSION").into(),
                    git_revision: env!("FABBENCH_GIT_REVISION").into(),
                    run_id,
                    command_line: plan.command_line.clone(),
                    start_time: stamp.clone(),
                    end_time: stamp,
                    host: HostInfo::collect(),
                    suites: plan.suites.iter().map(|s| s.name().to_string()).collect(),
                    params: plan
                        .suites
                        .iter()
                        .map(|s| (s.name().to_string(), s.params.clone()))
                        .collect(),
                    fabrics: plan
                        .fabrics
                        .iter()
                        .map(|f| fabric_run(f, plan.ranks))
                        .collect(),
                },
                series: Vec::new(),
            },
        };
        let mut c = Collector {
            plan,
            sink,
            run,
            done: BTreeMap::new(),
            failures: BTreeMap::new(),
            journal,
            journal_started: false,
            journal_error: None,
            unwritable,
            journalled: Vec::new(),
            resumed: Vec::new(),
        };
        c.sink.event(&Event::Started {
            run: &c.run,
            planned: planned(plan),
        });
        if !c.run.series.is_empty() {
            c.replay();
            c.rewrite_journal();
        }
        c
    }

    /// Shows a resumed run's points as if just measured, so its tables are whole.
    fn replay(&mut self) {
        let finished = self.finished().to_vec();
        for series in &self.run.series {
            self.sink.event(&Event::SuiteStarted {
                run: &self.run,
                series,
                planned: None,
            });
            for point in &series.points {
                self.sink.event(&Event::Point {
                    run: &self.run,
                    series,
                    point,
                });
            }
            let id = (series.suite.clone(), series.fabric.clone());
            if finished.contains(&id) {
                self.sink.event(&Event::SuiteFinished {
                    run: &self.run,
                    series,
                });
            }
            self.resumed.push(id);
        }
    }

    fn finished(&self) -> &[(String, String)] {
        self.run
            .manifest
            .partial
            .as_ref()
            .map(|p| p.finished.as_slice())
            .unwrap_or_default()
    }

    /// A resumed run's journal starts as the kept part of it: the series measured again are
    /// gone from samples.csv, so their new samples do not follow old ones. The kept part is
    /// replaced, never deleted first: samples.csv, then the manifest that lists its points, and
    /// only then the earlier part's exports (derived files the final write makes again), so a
    /// disk that refuses leaves the kept part as it was.
    fn rewrite_journal(&mut self) {
        let Some(dir) = self.journal.as_ref() else {
            return;
        };
        let written = SamplesCsv
            .export(&self.run)
            .and_then(|files| {
                for (path, bytes) in files {
                    dir.write_quick(&path, &bytes)?;
                }
                write_manifest(&self.run, dir)
            })
            .and_then(|()| dir.remove_except(&[SAMPLES, MANIFEST]));
        self.journal_started = self.run.series.iter().any(|s| !s.points.is_empty());
        if written.is_ok() {
            self.journalled = self.run.series.iter().map(|s| s.points.len()).collect();
        }
        self.note_journal(written);
    }

    fn note_journal(&mut self, r: Result<(), ResultsError>) {
        if let Err(e) = r {
            tracing::warn!("journal: {e}");
            self.journal_error.get_or_insert(e);
            self.unwritable.store(true, Ordering::SeqCst);
        }
    }

    /// The point just pushed onto series `i`, onto disk: its samples appended, then the
    /// manifest that lists it (a reader never sees a point without its samples). After a
    /// write failed nothing more is appended: a torn line must stay the journal's last.
    fn journal_point(&mut self, i: usize) {
        let Some(dir) = self.journal.as_ref() else {
            return;
        };
        if self.journal_error.is_some() {
            return;
        }
        let series = &self.run.series[i];
        let point = series.points.last().expect("just pushed");
        let header = !self.journal_started;
        let written = samples_of_point(series, point, header)
            .and_then(|rows| dir.append(std::path::Path::new(SAMPLES), &rows))
            .and_then(|()| write_manifest(&self.run, dir));
        self.journal_started = true;
        if written.is_ok() {
            self.journalled.resize(self.run.series.len(), 0);
            self.journalled[i] = self.run.series[i].points.len();
        }
        self.note_journal(written);
    }

    /// Takes one event a rank sent (a JSON line).
    pub fn on_event(&mut self, rank: usize, json: &str) {
        let ev: RankEvent = match serde_json::from_str(json) {
            Ok(e) => e,
            Err(e) => {
                tracing::warn!("rank {rank} sent an unreadable event: {e}");
                return;
            }
        };
        match ev {
            RankEvent::SuiteStart { fabric, suite } => self.suite_start(fabric, suite),
            RankEvent::PointStart { fabric, suite, key } => {
                if let Some(i) = self.series_index(&suite, &fabric) {
                    let series = &self.run.series[i];
                    self.sink.event(&Event::PointStarted {
                        run: &self.run,
                        series,
                        key: &key,
                    });
                }
            }
            RankEvent::Point {
                fabric,
                suite,
                point,
            } => {
                if let Some(i) = self.series_index(&suite, &fabric) {
                    self.run.series[i].points.push(point);
                    self.journal_point(i);
                    let series = &self.run.series[i];
                    self.sink.event(&Event::Point {
                        run: &self.run,
                        series,
                        point: series.points.last().expect("just pushed"),
                    });
                }
            }
            RankEvent::Note {
                fabric,
                suite,
                text,
            } => {
                if let Some(i) = self.series_index(&suite, &fabric) {
                    self.run.series[i].notes.push(text);
                }
            }
            RankEvent::SuiteEnd { fabric, suite } => {
                if let Some(p) = self.run.manifest.partial.as_mut() {
                    p.finished.push((suite.clone(), fabric.clone()));
                }
                if let (Some(dir), None) = (self.journal.as_ref(), &self.journal_error) {
                    let written = write_manifest(&self.run, dir);
                    self.note_journal(written);
                }
                if let Some(i) = self.series_index(&suite, &fabric) {
                    self.sink.event(&Event::SuiteFinished {
                        run: &self.run,
                        series: &self.run.series[i],
                    });
                }
            }
            RankEvent::Done {
                fabric,
                counters,
                facts,
                virtual_time,
                compute,
            } => {
                self.done.insert(
                    (fabric, rank),
                    Done {
                        counters,
                        facts,
                        virtual_time,
                        compute,
                    },
                );
            }
            RankEvent::Failed {
                stage,
                message,
                secondary,
            } => {
                self.failures.entry(rank).or_insert(Reported {
                    stage,
                    message,
                    secondary,
                });
            }
        }
    }

    fn series_index(&self, suite: &str, fabric: &str) -> Option<usize> {
        self.run
            .series
            .iter()
            .rposition(|s| s.suite == suite && s.fabric == fabric)
    }

    fn suite_start(&mut self, fabric: String, suite: String) {
        let Some(f) = self.plan.fabrics.iter().find(|f| f.label == fabric) else {
            return;
        };
        let Some(spec) = self.plan.suites.iter().find(|s| s.name() == suite) else {
            return;
        };
        let Ok(layout) = spec.suite.layout(&spec.params) else {
            return;
        };
        // A resumed series goes on where it stopped; its header is out already.
        if self.resumed.contains(&(suite.clone(), fabric.clone())) {
            return;
        }
        self.run.series.push(Series {
            suite,
            fabric,
            emulated: f.def.kind == Kind::Emulated,
            ranks: self.plan.ranks,
            layout,
            points: Vec::new(),
            notes: Vec::new(),
        });
        let series = self.run.series.last().expect("just pushed");
        self.sink.event(&Event::SuiteStarted {
            run: &self.run,
            series,
            planned: spec.suite.planned(&spec.params).ok().flatten(),
        });
    }

    /// The failure to report: a root cause rather than a rank that found its peer gone.
    pub fn root_failure(&self) -> Option<JobError> {
        self.failures
            .iter()
            .find(|(_, r)| !r.secondary)
            .or_else(|| self.failures.iter().next())
            .map(|(&rank, r)| JobError::RankFailed {
                rank,
                stage: r.stage.clone(),
                cause: r.message.clone(),
            })
    }

    /// The ranks that have not reported finishing `fabric`.
    pub fn missing(&self, fabric: &str) -> Vec<usize> {
        (0..self.plan.ranks)
            .filter(|r| !self.done.contains_key(&(fabric.to_string(), *r)))
            .collect()
    }

    pub fn all_done(&self, fabric: &str) -> bool {
        self.missing(fabric).is_empty()
    }

    /// A new fabric starts: failures reported on the one before are its own.
    pub fn begin_fabric(&mut self) {
        self.failures.clear();
    }

    /// The run as it ends: end time, and per fabric what every rank reported. It stays
    /// marked partial unless `complete`, with `reason` as the why.
    pub fn finish(mut self, complete: bool, reason: &str) -> Ended<'a> {
        self.run.manifest.end_time =
            humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
        if complete {
            self.run.manifest.partial = None;
        } else if let Some(p) = self.run.manifest.partial.as_mut() {
            p.reason = reason.to_string();
        }
        for f in &mut self.run.manifest.fabrics {
            if self.done.keys().any(|(label, _)| *label == f.fabric) {
                // Measured (again) in this process: a resumed run's earlier counters go.
                f.counters.clear();
                f.facts.retain(|k, _| !k.starts_with("rank"));
                f.compute.clear();
            }
            for rank in 0..self.plan.ranks {
                if let Some(d) = self.done.get(&(f.fabric.clone(), rank)) {
                    f.counters
                        .push(serde_json::json!({ "rank": rank, "counters": d.counters }));
                    f.virtual_time |= d.virtual_time;
                    for (k, v) in &d.facts {
                        f.facts.insert(format!("rank{rank}.{k}"), v.clone());
                    }
                }
            }
            // Every rank's stretches, or none: a rank without them would replay as idle; and
            // none from a resumed run, whose ranks left out the points it had.
            let stretches: Vec<Vec<u64>> = (0..self.plan.ranks)
                .map(|rank| {
                    let d = self.done.get(&(f.fabric.clone(), rank));
                    d.map(|d| d.compute.clone()).unwrap_or_default()
                })
                .collect();
            if complete && self.plan.resume.is_none() && stretches.iter().any(|s| !s.is_empty()) {
                f.compute = stretches;
            }
        }
        self.sink.event(&Event::Finished { run: &self.run });
        let mut journalled = self.journalled;
        journalled.resize(self.run.series.len(), 0);
        Ended {
            run: self.run,
            sink: self.sink,
            dir: self.journal,
            journalled,
        }
    }
}
