//! characterise turns a fabric into the few numbers that explain it. It measures, through the
//! runner as a library, the patterns a LogGP fit needs (ping-pong, a stream of back-to-back
//! sends, and sends and receives with a known delay before their wait, which separate the
//! sender's and receiver's overheads from the latency, as Netgauge does); finds the protocol
//! switches with `curves` and refines them by measuring between; fits per segment the latency
//! `L`, the overheads `o_s` and `o_r` (each a fixed and a per-byte part), the gap `g` and the
//! gap per byte `G`, with residuals and confidence intervals; and writes a model card the
//! `loggp` fabric runs, and a report with the fitted curves over the measured ones. On a real
//! fabric it measures several rounds and fits their medians: a switch must stand out from the
//! rounds' spread, and the intervals are bootstrapped over them.

pub mod card;
pub mod chart;
pub mod error;
pub mod fit;
pub mod line;
pub mod measure;
pub mod model;
pub mod observations;
pub mod report;
pub mod request;
pub mod segments;
pub mod write;

use std::sync::atomic::AtomicBool;

pub use error::CharacteriseError;
pub use fit::{Fit, SegmentFit};
pub use model::{LogGp, Model};
pub use observations::{Observations, Pattern};
pub use report::Outcome;
pub use request::{Checked, Request};

/// Hears what a characterisation is doing, for a progress line.
pub trait Observer {
    fn step(&mut self, what: &str);
    /// A line to show as it is: the estimate of a measurement expected to be long.
    fn note(&mut self, _line: &str) {}
    /// Whether each measurement should draw the runner's progress bar (a terminal watches).
    fn progress(&self) -> bool {
        false
    }
}

/// An observer that ignores everything.
pub struct Quiet;

impl Observer for Quiet {
    fn step(&mut self, _what: &str) {}
}

/// Measures every size and pattern in each of the request's rounds, one round after the
/// other (so a slow spell of the host falls on every size of one round, not on every round of
/// a few sizes), and the rounds' observations together.
fn measure_rounds(
    req: &Checked,
    sizes: &[u64],
    what: &str,
    stop: &AtomicBool,
    observer: &mut dyn Observer,
) -> Result<(Observations, Vec<String>, runner::Run), CharacteriseError> {
    let mut obs = Observations::new(measure::WINDOW);
    let mut ids = Vec::new();
    let mut last = None;
    for round in 1..=req.rounds {
        if req.rounds > 1 {
            observer.step(&format!("{what}: round {round} of {}", req.rounds));
        }
        let (o, id, run) = measure::measure(req, sizes, stop, observer)?;
        obs.merge(&o);
        ids.push(id);
        last = Some(run);
    }
    Ok((obs, ids, last.expect("at least one round")))
}

/// Measures, refines the switches, fits.
pub fn characterise(
    req: &Checked,
    observer: &mut dyn Observer,
    stop: &AtomicBool,
) -> Result<Outcome, CharacteriseError> {
    let sweep = req.sweep();
    observer.step(&format!(
        "measuring ping-pong, stream, send and receive at {} sizes on {}, {} round(s)",
        sweep.len(),
        req.fabric,
        req.rounds
    ));
    let (mut obs, mut runs, run) = measure_rounds(req, &sweep, "sweep", stop, observer)?;
    let mut switches = segments::switches(&obs, req.tolerance)?;
    if req.refine > 0 && !switches.is_empty() {
        let extra = segments::refinement(&switches, req.refine, &obs.complete_sizes());
        if !extra.is_empty() {
            observer.step(&format!(
                "refining {} switch(es): {} more sizes",
                switches.len(),
                extra.len()
            ));
            let (more, ids, _) = measure_rounds(req, &extra, "refinement", stop, observer)?;
            runs.extend(ids);
            obs.merge(&more);
            switches = segments::switches(&obs, req.tolerance)?;
        }
    }
    let switches = segments::prune(switches, &obs.complete_sizes());
    observer.step("fitting");
    let mut fit = fit::fit(&obs, &switches)?;
    fit.within_spread = segments::candidates(&obs, req.tolerance)?
        .into_iter()
        .filter(|s| !s.significant())
        .collect();
    let series = run.series.first();
    Ok(Outcome {
        fabric: req.fabric.clone(),
        host: run.manifest.host.hostname.clone(),
        ranks: req.ranks,
        emulated: series.map(|s| s.emulated).unwrap_or(req.emulated),
        runs: if req.runs_out.is_some() {
            runs
        } else {
            Vec::new()
        },
        observations: obs,
        fit,
    })
}
