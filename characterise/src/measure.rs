//! Measuring the patterns through the runner as a library: one run of the `loggp` suite per
//! size list, written as an ordinary run directory (so `fabbench report`, `plot` and `compare`
//! read it like any other) when the request names an output directory, and read back into
//! [`Observations`].

use std::sync::atomic::AtomicBool;

use runner::sink::Discard;
use runner::sinks::Progress;
use runner::{PlanBuilder, RunError, SuiteSpec};

use crate::error::CharacteriseError;
use crate::observations::{Observations, Pattern};
use crate::request::Checked;
use crate::Observer;

/// The stream pattern's window (osu_bw's).
pub const WINDOW: u64 = 64;

/// Iterations on an emulated fabric when none are asked for: virtual time is exact, so a few
/// after the warm-up give the numbers OSU's thousands would.
const EMULATED_ITERATIONS: (u64, u64) = (20, 4);

/// One run's patterns at `sizes`; returns what it measured and the run's id.
pub fn measure(
    req: &Checked,
    sizes: &[u64],
    stop: &AtomicBool,
    observer: &mut dyn Observer,
) -> Result<(Observations, String, runner::Run), CharacteriseError> {
    let patterns: Vec<&str> = Pattern::ALL.iter().map(|p| p.name()).collect();
    let mut params = serde_json::json!({
        "sizes": sizes,
        "patterns": patterns,
        "window": WINDOW,
    });
    let iterations = req
        .iterations
        .map(|i| (i, (i / 10).max(2)))
        .or(req.emulated.then_some(EMULATED_ITERATIONS));
    if let Some((i, x)) = iterations {
        params["iterations"] = i.into();
        params["warmup"] = x.into();
    }
    let suite = suites::find("loggp")
        .ok_or_else(|| CharacteriseError::Request("this fabbench has no loggp suite".into()))?;
    let mut plan = PlanBuilder::new()
        .suite(SuiteSpec { suite, params })
        .fabrics(&req.fabric)
        .ranks(req.ranks)
        .command_line(req.command_line.clone());
    if let Some(p) = &req.rank_program {
        plan = plan.rank_program(p);
    }
    if let Some(m) = &req.model {
        plan = plan.model(m);
    }
    if let Some(o) = &req.runs_out {
        plan = plan.out(o);
    }
    for s in &req.sets {
        plan = plan.set(s);
    }
    let what = format!("{} sizes on {}", sizes.len(), req.fabric);
    let run = plan
        .build()
        .map_err(RunError::from)
        .and_then(|plan| {
            let estimate = runner::estimate::estimate(&plan, req.runs_out.as_deref());
            if let Some(line) = estimate.and_then(|e| e.line()) {
                observer.note(&line);
            }
            if observer.progress() {
                runner::run_until(&plan, &mut Progress::new(), stop)
            } else {
                runner::run_until(&plan, &mut Discard, stop)
            }
        })
        .map_err(|e| match e {
            RunError::Plan(p) => CharacteriseError::Plan(p),
            RunError::Unwritable(u) => CharacteriseError::Unwritable(u),
            RunError::Interrupted(why) => CharacteriseError::Interrupted(why),
            other => CharacteriseError::Run {
                what: what.clone(),
                source: other,
            },
        })?;
    let mut obs = Observations::new(WINDOW);
    for series in &run.series {
        for p in &series.points {
            let (Some(size), Some(pattern)) = (
                p.key.size,
                p.key
                    .params
                    .get("pattern")
                    .and_then(|w| Pattern::from_name(w)),
            ) else {
                continue;
            };
            if p.samples_ns.is_empty() {
                continue;
            }
            // The median time per message: on a real fabric one preempted iteration in a
            // thousand moves a mean, and the fit reads differences between sizes.
            let mut v = p.values();
            v.sort_by(f64::total_cmp);
            let median = if v.len() % 2 == 1 {
                v[v.len() / 2]
            } else {
                (v[v.len() / 2 - 1] + v[v.len() / 2]) / 2.0
            };
            obs.insert(pattern, size, median * 1e3);
        }
    }
    let id = run.manifest.run_id.clone();
    Ok((obs, id, run))
}
