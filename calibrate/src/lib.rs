//! calibrate fits the parameters an emulated fabric's model card marks as assumptions ([A]) so
//! that the fabric's emulated results match a measured or published table (OSU text, or a CSV
//! of suite, size and value), within the ranges the card allows. It runs the emulated fabric
//! in process through the runner for every trial, minimises the relative error with argmin,
//! reports the error per point and how well each fitted value is determined, and writes a card
//! `--model` takes. Only values change: every mechanism of the model stays as it is.

pub mod budget;
pub mod chart;
pub mod determined;
pub mod error;
pub mod evaluate;
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
    /// Points of the first look over the whole space, Nelder-Mead rounds (each a restart
    /// from the best so far) and iterations per round.
    pub scan: usize,
    pub rounds: usize,
    pub iterations: u64,
    /// Iterations of each of the worst-point polish's three descents (0: no polish).
    pub polish: u64,
}

impl Request {
    pub fn new(fabric: &str, tables: Vec<PathBuf>) -> Request {
        Request {
            fabric: fabric.into(),
            tables,
            params: None,
            sets: Vec::new(),
            starts: Vec::new(),
            scan: 48,
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
    // On/off assumptions of the card cannot be descended: each setting's landscape is scanned
    // and the descent runs in the better one.
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
    let combos: Vec<Vec<String>> = (0..1usize << switches.len())
        .map(|bits| {
            switches
                .iter()
                .enumerate()
                .map(|(i, n)| format!("{n}={}", if bits >> i & 1 == 1 { "on" } else { "off" }))
                .collect()
        })
        .collect();
    let start: Vec<f64> = free
        .iter()
        .map(|f| f.to_unit(f.search_from.unwrap_or(f.start)))
        .collect();
    tally.set_budget(budget::trials(req, free.len(), combos.len()));
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
    let mut before = None;
    let mut chosen: Option<(Vec<String>, fit::Seen)> = None;
    for combo in combos {
        let fixed: Vec<String> = req.sets.iter().cloned().chain(combo).collect();
        let problem = fit::Problem {
            fabric: &req.fabric,
            free: &free,
            fixed: &fixed,
            targets: &targets,
            stop,
            progress: &tally,
        };
        if before.is_none() {
            // The card as it is (its switches off): settings the fabric refuses are the user's.
            before = Some(
                problem
                    .values(&start)
                    .map_err(|source| CalibrateError::Run {
                        fabric: req.fabric.clone(),
                        source,
                    })?,
            );
        }
        progress(&format!(
            "scanning the start, {} scalings of it and {} points over {} parameters{}",
            fit::SCALES.len(),
            req.scan,
            free.len(),
            if fixed.is_empty() {
                String::new()
            } else {
                format!(" ({})", fixed.join(" "))
            }
        ));
        let seen = fit::scan(&problem, &start, req.scan).map_err(failed)?;
        progress(&format!(
            "best of the scan: cost {:.4} ({:.0} s so far)",
            seen[0].1,
            started.elapsed().as_secs_f64()
        ));
        if chosen.as_ref().is_none_or(|(_, s)| seen[0].1 < s[0].1) {
            chosen = Some((fixed, seen));
        }
    }
    let before = before.expect("at least one setting");
    let (fixed, seen) = chosen.expect("at least one setting");
    let problem = fit::Problem {
        fabric: &req.fabric,
        free: &free,
        fixed: &fixed,
        targets: &targets,
        stop,
        progress: &tally,
    };
    let cost_before = problem.cost_of(&before);
    progress("descending (Nelder-Mead) from the scan's two best points");
    let (mut best, mut cost) =
        fit::refine(&problem, &seen, req.rounds, req.iterations).map_err(failed)?;
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
        fixed,
    })
}
