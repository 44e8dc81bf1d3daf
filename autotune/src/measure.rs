//! Measuring one workload at one set of settings through the runner library, and keeping the
//! account: every measurement goes into the log autotune.json is made of, its wall and
//! measured time are charged, and the budget is checked before each run. A run that fails
//! (a setting the fabric cannot carry, such as hyperlink without its drain thread beyond the
//! window) is a result, recorded with the fabric's diagnosis, not an error.

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use bench_core::measure::{Derivation, Point};
use runner::sink::Discard;
use runner::{Interruption, PlanBuilder, RunError, SuiteSpec};
use suites::osu::OsuParams;

use crate::outcome::{MeasuredPoint, Measurement, Spent};
use crate::request::Tuning;

/// Why measuring stopped.
#[derive(Debug)]
pub enum Halt {
    /// The budget is spent: decide with what was measured.
    Budget,
    /// The caller asked to stop.
    Interrupted(Box<Interruption>),
}

/// Hears what autotune is doing, for a progress bar.
pub trait Observer {
    /// About to measure `what`; `elapsed` of `budget` is spent.
    fn measuring(&mut self, what: &str, elapsed: Duration, budget: Duration);
    /// A step's conclusion, one line ("eager_limit: 12KiB").
    fn decided(&mut self, line: &str);
}

/// An observer that ignores everything.
pub struct Quiet;

impl Observer for Quiet {
    fn measuring(&mut self, _what: &str, _elapsed: Duration, _budget: Duration) {}
    fn decided(&mut self, _line: &str) {}
}

/// The measuring side of an autotune: runs, the log, the clock.
pub struct Bench<'a> {
    pub tuning: &'a Tuning,
    started: Instant,
    pub log: Vec<Measurement>,
    pub spent: Spent,
    /// Set once the budget stopped a measurement.
    pub exhausted: bool,
    /// Runs start only while they are likely to end before this (the search leaves part of
    /// the budget to the verification).
    pub limit: Duration,
    observer: &'a mut dyn Observer,
    stop: &'a AtomicBool,
    /// Wall time of the longest run so far: a run is not started when it would likely end
    /// past the budget.
    longest: Duration,
    /// Whether the warm-up run has been made.
    warmed: bool,
}

impl<'a> Bench<'a> {
    pub fn new(tuning: &'a Tuning, observer: &'a mut dyn Observer, stop: &'a AtomicBool) -> Self {
        Bench {
            tuning,
            started: Instant::now(),
            log: Vec::new(),
            spent: Spent::default(),
            exhausted: false,
            limit: tuning.budget,
            observer,
            stop,
            longest: Duration::ZERO,
            warmed: false,
        }
    }

    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    pub fn decided(&mut self, line: &str) {
        self.observer.decided(line);
    }

    /// Whether another run like the longest so far still fits the budget.
    pub fn has_time(&self) -> bool {
        !self.exhausted && self.elapsed() + self.longest <= self.limit
    }

    /// Measures `workload` at `sizes` with `settings` (NAME, VALUE) over the fixed ones, and
    /// returns the measurement's id. A failed run is logged with its reason.
    pub fn measure(
        &mut self,
        purpose: &str,
        workload: &'static str,
        sizes: &[u64],
        settings: &[(String, String)],
    ) -> Result<usize, Halt> {
        if !self.has_time() {
            self.exhausted = true;
            return Err(Halt::Budget);
        }
        let t = self.tuning;
        if !t.virtual_time() && !self.warmed {
            // The first run on a real fabric is slower as a whole (caches, page faults, the
            // CPU's clock rising): run one and keep nothing, so it decides nothing.
            self.warmed = true;
            self.measure("warm-up (not used)", workload, sizes, &[])?;
        }
        self.observer
            .measuring(&format!("{purpose} ({workload})"), self.elapsed(), t.budget);
        let suite = suites::find(workload).expect("workloads are checked");
        let params = OsuParams {
            size_list: Some(sizes.to_vec()),
            iterations: Some(t.iterations.0),
            warmup: Some(t.iterations.1),
            ..Default::default()
        };
        let mut plan = PlanBuilder::new()
            .suite(SuiteSpec {
                suite,
                params: serde_json::to_value(&params).expect("parameters serialise"),
            })
            .fabrics(&t.label)
            .ranks(2)
            .mpirun(&t.mpirun)
            .command_line(t.command_line.clone());
        if let Some(p) = &t.rank_program {
            plan = plan.rank_program(p);
        }
        for s in &t.sets {
            plan = plan.set(s);
        }
        for (k, v) in settings {
            plan = plan.set(&format!("{k}={v}"));
        }
        let begun = Instant::now();
        let outcome = plan
            .build()
            .map_err(RunError::from)
            .and_then(|plan| runner::run_until(&plan, &mut Discard, self.stop));
        let wall = begun.elapsed();
        self.longest = self.longest.max(wall);
        let id = self.log.len();
        let mut m = Measurement {
            id,
            purpose: purpose.to_string(),
            workload: workload.to_string(),
            settings: settings.iter().map(|(k, v)| format!("{k}={v}")).collect(),
            points: Vec::new(),
            failed: None,
            wall_s: wall.as_secs_f64(),
            measured_s: 0.0,
        };
        match outcome {
            Ok(run) => {
                let points = run
                    .series
                    .first()
                    .map(|s| s.points.as_slice())
                    .unwrap_or(&[]);
                let ns: u128 = points
                    .iter()
                    .flat_map(|p| p.samples_ns.iter())
                    .map(|&s| s as u128)
                    .sum();
                m.measured_s = ns as f64 / 1e9;
                m.points = points.iter().map(measured_point).collect();
            }
            Err(RunError::Interrupted(why)) => return Err(Halt::Interrupted(why)),
            Err(e) => m.failed = Some(e.to_string()),
        }
        self.spent.runs += 1;
        self.spent.points += m.points.len();
        self.spent.measured_s += m.measured_s;
        self.spent.wall_s = self.elapsed().as_secs_f64();
        self.log.push(m);
        Ok(id)
    }

    /// As [`Bench::measure`]; when the run fails, finds the first size that fails by halving
    /// the list, so the measurement returned keeps every size the settings can carry. Returns
    /// that measurement's id and, when some size failed, the first such size and why.
    pub fn measure_carried(
        &mut self,
        purpose: &str,
        workload: &'static str,
        sizes: &[u64],
        settings: &[(String, String)],
    ) -> Result<(usize, Option<(u64, String)>), Halt> {
        let id = self.measure(purpose, workload, sizes, settings)?;
        let Some(mut reason) = self.log[id].failed.clone() else {
            return Ok((id, None));
        };
        // sizes[..ok] run, sizes[..bad] do not.
        let (mut ok, mut bad) = (0usize, sizes.len());
        let mut carried = id;
        while bad - ok > 1 {
            let mid = (ok + bad) / 2;
            let probe = self.measure(
                &format!("{purpose}: where it fails"),
                workload,
                &sizes[..mid],
                settings,
            )?;
            match self.log[probe].failed.clone() {
                None => {
                    ok = mid;
                    carried = probe;
                }
                Some(why) => {
                    bad = mid;
                    reason = why;
                }
            }
        }
        Ok((carried, Some((sizes[bad - 1], reason))))
    }

    /// How many alternating rounds an A/B takes: one on virtual time (exact), two on a real
    /// fabric, so a run the machine slowed as a whole does not decide alone.
    pub fn rounds(&self) -> usize {
        if self.tuning.virtual_time() {
            1
        } else {
            2
        }
    }

    /// Measures `a` and `b` in alternating rounds (a, b, a, b ...) and returns the two
    /// pooled measurements. A side whose run fails is returned as that failed run.
    pub fn ab(
        &mut self,
        workload: &'static str,
        sizes: &[u64],
        a: (&str, &[(String, String)]),
        b: (&str, &[(String, String)]),
    ) -> Result<(usize, usize), Halt> {
        let mut ids = (Vec::new(), Vec::new());
        for _ in 0..self.rounds() {
            ids.0.push(self.measure(a.0, workload, sizes, a.1)?);
            ids.1.push(self.measure(b.0, workload, sizes, b.1)?);
        }
        Ok((self.pool(&ids.0), self.pool(&ids.1)))
    }

    /// One measurement of the samples of several runs of the same settings (already charged),
    /// logged as its own entry; a single run, or one that failed, is returned as it is.
    pub fn pool(&mut self, ids: &[usize]) -> usize {
        if ids.len() == 1 {
            return ids[0];
        }
        if let Some(failed) = ids.iter().find(|i| self.log[**i].failed.is_some()) {
            return *failed;
        }
        let first = &self.log[ids[0]];
        let points = first
            .points
            .iter()
            .map(|p0| {
                let runs: Vec<&MeasuredPoint> = ids
                    .iter()
                    .filter_map(|i| self.log[*i].point(p0.size))
                    .collect();
                let samples_us: Vec<f64> = runs
                    .iter()
                    .flat_map(|p| p.samples_us.iter().copied())
                    .collect();
                let values: Vec<f64> = runs.iter().map(|p| p.value).collect();
                MeasuredPoint {
                    size: p0.size,
                    value: bench_core::stats::two_sample::median(&values),
                    unit: p0.unit.clone(),
                    cost_us: bench_core::stats::two_sample::median(&samples_us),
                    samples_us,
                    rate: p0.rate,
                }
            })
            .collect();
        let pooled = Measurement {
            id: self.log.len(),
            purpose: format!(
                "{} (pooled: measurements {})",
                first.purpose,
                ids.iter()
                    .map(|i| i.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            workload: first.workload.clone(),
            settings: first.settings.clone(),
            points,
            failed: None,
            wall_s: 0.0,
            measured_s: 0.0,
        };
        self.log.push(pooled);
        self.log.len() - 1
    }

    pub fn get(&self, id: usize) -> &Measurement {
        &self.log[id]
    }
}

/// A point as autotune compares it: the cost of one message in microseconds, whatever the
/// suite reports (a bandwidth becomes the time one message of its size takes).
fn measured_point(p: &Point) -> MeasuredPoint {
    let metric = p.metric();
    let size = p.size();
    let cost = |value: f64| match metric.derive {
        Derivation::Time { .. } => value,
        Derivation::Rate { .. } => size.max(1) as f64 / value,
    };
    let samples_us: Vec<f64> = p
        .samples_ns
        .iter()
        .map(|&ns| cost(metric.of_sample(ns)))
        .collect();
    // The median, not the suite's mean: one iteration the system interrupted should not
    // move a decision (on virtual time the two agree).
    let median = bench_core::stats::two_sample::median(&samples_us);
    MeasuredPoint {
        size,
        value: p.headline(),
        unit: metric.unit.clone(),
        cost_us: if median.is_finite() {
            median
        } else {
            cost(p.headline())
        },
        samples_us,
        rate: matches!(metric.derive, Derivation::Rate { .. }),
    }
}

impl Measurement {
    /// The cost at `size`, when measured.
    pub fn cost(&self, size: u64) -> Option<f64> {
        self.points
            .iter()
            .find(|p| p.size == size)
            .map(|p| p.cost_us)
    }

    pub fn point(&self, size: u64) -> Option<&MeasuredPoint> {
        self.points.iter().find(|p| p.size == size)
    }
}
