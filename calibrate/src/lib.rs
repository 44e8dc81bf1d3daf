//! calibrate fits the parameters an emulated fabric's model card marks as assumptions ([A]) so
//! that the fabric's emulated results match a measured or published table (OSU text, or a CSV
//! of suite, size and value), within the ranges the card allows. It runs the emulated fabric
//! in process through the runner for every trial, minimises the relative error (a global
//! search by differential evolution, its trials in parallel, then argmin's Nelder-Mead),
//! reports the error per point and how well each fitted value is determined, and writes a card
//! `--model` takes. Only values change: every mechanism of the model stays as it is.

pub mod budget;
pub mod chart;
pub mod determined;
pub mod error;
pub mod evaluate;
pub mod evolve;
pub mod fit;
pub mod output;
pub mod params;
pub mod progress;
pub mod table;

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

pub use error::{CalibrateError, FitError};
use params::Free;
pub use progress::{Observer, Tally};
use table::Target;

/// A calibration as a caller states it.
#[derive(Debug, Clone)]
pub struct Request {
    pub fabric: String,
    pub tables: Vec<PathBuf>,
    /// Parameters to fit; None: every assumption.
    pub params: Option<Vec<String>>,
    /// `NAME=VALUE` settings held during the fit.
    pub sets: Vec<String>,
    /// `NAME=VALUE` starting estimates of fitted parameters.
    pub starts: Vec<String>,
    /// The global search's population (0: ten a coordinate, within 24..=96), its most
    /// generations, and its stop once it gains less than 0.1 % over `stall` generations.
    pub population: usize,
    pub generations: usize,
    pub stall: usize,
    /// Trials run at once (0: one per core).
    pub jobs: usize,
    /// Nelder-Mead rounds from the global search's best (each a restart from the best so
    /// far) and iterations per round.
    pub rounds: usize,
    pub iterations: u64,
    /// Iterations of each of the worst-point polish's three descents (0: no polish).
    pub polish: u64,
}

impl Request {
    /// The global search's population for `dims` coordinates.
    pub fn population_for(&self, dims: usize) -> usize {
        if self.population > 0 {
            self.population.max(4)
        } else {
            (10 * dims).clamp(24, 96)
        }
    }

    /// Trials run at once.
    pub fn jobs(&self) -> usize {
        if self.jobs > 0 {
            self.jobs
        } else {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        }
    }

    pub fn new(fabric: &str, tables: Vec<PathBuf>) -> Request {
        Request {
            fabric: fabric.into(),
            tables,
            params: None,
            sets: Vec::new(),
            starts: Vec::new(),
            population: 0,
            generations: 60,
            stall: 12,
            jobs: 0,
            rounds: 2,
            iterations: 200,
            polish: 300,
        }
    }
}

/// One point of the table beside the calibrated fabric.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct PointFit {
    pub suite: String,
    pub size: u64,
    pub measured: f64,
    /// What the calibrated card gives (None where the run refused).
    pub emulated: Option<f64>,
    /// What the card gave before.
    pub before: Option<f64>,
    /// (emulated - measured) / measured; None for values the fit could not use (0.00).
    pub error: Option<f64>,
}

/// One fitted parameter.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ParamFit {
    pub free: Free,
    pub value: f64,
    pub determination: determined::Determination,
}

/// What a calibration found.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Outcome {
    pub fabric: String,
    pub tables: Vec<String>,
    pub params: Vec<ParamFit>,
    pub points: Vec<PointFit>,
    /// Values left out of the fit: printed as 0.00, below OSU's two decimals.
    pub left_out: usize,
    pub cost_before: f64,
    pub cost: f64,
    pub trials: usize,
    pub seconds: f64,
    /// The settings held fixed.
    pub fixed: Vec<String>,
}

impl Outcome {
    /// The worst |error| over the fitted points.
    pub fn worst(&self) -> Option<&PointFit> {
        self.points
            .iter()
            .filter(|p| p.error.is_some())
            .max_by(|a, b| a.error.unwrap().abs().total_cmp(&b.error.unwrap().abs()))
    }
}

/// Reads the tables and fits; `observer` hears each stage and trial, and the estimate once
/// the first trial is timed (a calibration takes minutes).
pub fn calibrate(
    req: &Request,
    stop: &AtomicBool,
    observer: &dyn Observer,
) -> Result<Outcome, CalibrateError> {
    let started = std::time::Instant::now();
    let tally = progress::Progress::new(observer, started);
    let progress = |what: &str| observer.stage(what);
    let card = params::card_of(&req.fabric)?;
    let mut free = params::select(&card, req.params.as_deref())?;
    params::start_at(&mut free, &req.fabric, &req.starts)?;
    if free.is_empty() {
        return Err(CalibrateError::Request(format!(
            "the {} card has no parameter to fit; name some with --params",
            req.fabric
        )));
    }
    let mut all: Vec<Target> = Vec::new();
    for t in &req.tables {
        all.extend(table::read(t)?);
    }
    let (targets, zero): (Vec<Target>, Vec<Target>) =
        all.iter().cloned().partition(|t| t.value > 0.0);
    if targets.is_empty() {
        return Err(CalibrateError::Request(
            "--from: every value is 0; nothing to fit".into(),
        ));
    }
    for s in &req.sets {
        let name = s.split('=').next().unwrap_or("");
        if free
            .iter()
            .any(|f| name == f.name || name == format!("{}.{}", req.fabric, f.name))
        {
            return Err(CalibrateError::Request(format!(
                "--set {s}: that parameter is being fitted; leave it out of --params to hold it"
            )));
        }
    }
    // On/off assumptions of the card cannot be descended: the global search takes each as a
    // coordinate (at or above one half: on), and the descents hold the best one's setting.
    let switches: Vec<String> = if req.params.is_some() {
        Vec::new()
    } else {
        card.params
            .iter()
            .filter(|p| p.kind == "bool" && p.source.starts_with("[A]"))
            .map(|p| format!("{}.{}", req.fabric, p.name))
            .filter(|n| !req.sets.iter().any(|s| s.starts_with(&format!("{n}="))))
            .take(2)
            .collect()
    };
    // `--start`'s hint (the card's value for a parameter it leaves out), then the card.
    let mut starts: Vec<Vec<f64>> = vec![free.iter().map(|f| f.to_unit(f.start)).collect()];
    if free.iter().any(|f| f.search_from.is_some()) {
        let hint = free
            .iter()
            .map(|f| f.to_unit(f.search_from.unwrap_or(f.start)))
            .collect();
        starts.insert(0, hint);
    }
    let dims = free.len() + switches.len();
    let population = req.population_for(dims);
    tally.set_budget(budget::trials(req, free.len(), population));
    let failed = |source: FitError| {
        if source.is_interrupted() {
            CalibrateError::Interrupted
        } else {
            CalibrateError::Run {
                fabric: req.fabric.clone(),
                source,
            }
        }
    };
    let everywhere = fit::Problem {
        fabric: &req.fabric,
        free: &free,
        fixed: &req.sets,
        targets: &targets,
        stop,
        progress: &tally,
        switches: &switches,
        jobs: req.jobs(),
    };
    // The card as it is (its switches off): settings the fabric refuses are the user's.
    let card_point: Vec<f64> = free
        .iter()
        .map(|f| f.to_unit(f.start))
        .chain(switches.iter().map(|_| 0.0))
        .collect();
    let before = everywhere
        .values(&card_point)
        .map_err(|source| CalibrateError::Run {
            fabric: req.fabric.clone(),
            source,
        })?;
    progress(&format!(
        "differential evolution over {} parameters{}: {population} points, at most {} generations, {} trials at once",
        free.len(),
        if switches.is_empty() {
            String::new()
        } else {
            format!(" and {}", switches.join(", "))
        },
        req.generations,
        everywhere.jobs,
    ));
    let settings = evolve::Settings {
        generations: req.generations,
        stall: req.stall,
        seed: 1,
    };
    let seeds = fit::seeds(&free, &starts, switches.len());
    let (found, found_cost) = fit::global(&everywhere, seeds, population, &settings, &mut |g| {
        if g.number % 10 == 0 {
            progress(&format!(
                "generation {}: best cost {:.4} ({} trials, {:.0} s)",
                g.number,
                g.best,
                tally.done(),
                started.elapsed().as_secs_f64()
            ))
        }
    })
    .map_err(failed)?;
    let fixed = everywhere.held(&found);
    let problem = everywhere.holding(&fixed);
    let cost_before = problem.cost_of(&before);
    progress(&format!(
        "descending (Nelder-Mead) from the global search's best (cost {found_cost:.4} after {} trials, {:.0} s){}",
        tally.done(),
        started.elapsed().as_secs_f64(),
        if switches.is_empty() { String::new() } else { format!(" with {}", fixed[req.sets.len()..].join(" ")) }
    ));
    let found = &found[..free.len()];
    let (mut best, mut cost) =
        fit::refine(&problem, found, req.rounds, req.iterations).map_err(failed)?;
    if found_cost < cost {
        (best, cost) = (found.to_vec(), found_cost);
    }
    if req.polish > 0 {
        progress(&format!(
            "polishing the worst point (cost {cost:.4} after {} trials, {:.0} s)",
            tally.done(),
            started.elapsed().as_secs_f64()
        ));
        best = fit::polish(&problem, &best, req.polish).map_err(failed)?;
        cost = problem.cost_of(&problem.values(&best).map_err(failed)?);
    }
    progress(&format!(
        "best: cost {cost:.4} after {} trials ({:.0} s); probing how well each value is determined",
        tally.done(),
        started.elapsed().as_secs_f64()
    ));
    let determination = determined::determine(&problem, &best, cost);
    let after = evaluate::evaluate(&req.fabric, &problem.sets(&best), &all, stop).map_err(|e| {
        CalibrateError::Run {
            fabric: req.fabric.clone(),
            source: e.into(),
        }
    })?;
    let points = all
        .iter()
        .map(|t| {
            let key = (t.suite.clone(), t.size);
            let emulated = after.get(&key).copied();
            PointFit {
                suite: t.suite.clone(),
                size: t.size,
                measured: t.value,
                emulated,
                before: before.get(&key).copied(),
                error: emulated
                    .filter(|_| t.value > 0.0)
                    .map(|e| (e - t.value) / t.value),
            }
        })
        .collect();
    let params = free
        .iter()
        .zip(&best)
        .zip(determination)
        .map(|((f, &u), d)| ParamFit {
            free: f.clone(),
            value: f.from_unit(u),
            determination: d,
        })
        .collect();
    let trials = tally.done();
    Ok(Outcome {
        fabric: req.fabric.clone(),
        tables: req.tables.iter().map(|p| p.display().to_string()).collect(),
        params,
        points,
        left_out: zero.len(),
        cost_before,
        cost,
        trials,
        seconds: started.elapsed().as_secs_f64(),
        fixed: fixed.clone(),
    })
}
