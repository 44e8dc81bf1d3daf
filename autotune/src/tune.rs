//! One autotune from request to [`Outcome`]: the switches at the defaults first (they change
//! what the other settings are measured against), then the fragment size and the threshold
//! with the switches at their chosen values, then each switch re-checked at the tuned
//! threshold (the report says whether that changed anything), and last the gate: everything
//! chosen verified against the defaults over the full default size range, and only what
//! passes deployed ([`crate::gate`]). The search gets most of the budget and the gate the
//! rest; when the budget runs out a step decides with what it has and the outcome says so
//! (a value the gate could not verify is not deployed).

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;

use crate::error::TuneError;
use crate::fragment::{self, Skip};
use crate::measure::{Bench, Halt, Observer};
use crate::outcome::{Decision, Evidence, Outcome, SCHEMA_VERSION};
use crate::params::{self, Role};
use crate::request::{Param, Request, Tuning};
use crate::{gate, switch, threshold};

/// Share of the budget the search may use; the rest is kept for the verification.
const SEARCH_SHARE: f64 = 0.6;

/// Checks `req`, measures, decides, verifies. Nothing is written: see [`crate::export`].
pub fn autotune(
    req: &Request,
    observer: &mut dyn Observer,
    stop: &AtomicBool,
) -> Result<Outcome, TuneError> {
    let tuning = req.check()?;
    run(&tuning, observer, stop)
}

/// The measuring part of [`autotune`], for a checked request.
pub fn run(
    t: &Tuning,
    observer: &mut dyn Observer,
    stop: &AtomicBool,
) -> Result<Outcome, TuneError> {
    let start_time = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let mut bench = Bench::new(t, observer, stop);
    bench.limit = t.budget.mul_f64(SEARCH_SHARE);
    let mut skipped = Vec::new();
    let mut decisions: Vec<Decision> = Vec::new();
    let mut chosen: Vec<(String, String)> = Vec::new();
    let interrupted = |h: Halt| match h {
        Halt::Interrupted(why) => Some(TuneError::Interrupted(why)),
        Halt::Budget => None,
    };
    // Switches first, at the defaults; then the fragment size with the switches chosen; then
    // the threshold with everything before it held at its chosen value.
    for role in [Role::Switch, Role::Fragment, Role::Threshold] {
        for p in t.param(role) {
            // A parameter the settings chosen so far turn off is not measured: any difference
            // seen would be noise read as evidence.
            if let Some(why) = params::inert(t.def, &p.name, &t.settings_with(&chosen)) {
                let d = not_applicable(p, why);
                chosen.push((p.name.clone(), d.chosen.clone()));
                decisions.push(d);
                continue;
            }
            let step = match role {
                Role::Switch => switch::tune(&mut bench, p, &chosen, &t.workloads).map(Ok),
                Role::Fragment => fragment::tune(&mut bench, p, &chosen, &t.workloads)
                    .map(|r| r.map_err(|Skip::TooSmall(why)| why)),
                Role::Threshold => threshold::tune(&mut bench, p, &chosen, &t.workloads).map(Ok),
            };
            match step {
                Ok(Ok(d)) => {
                    chosen.push((p.name.clone(), d.chosen.clone()));
                    decisions.push(d);
                }
                Ok(Err(why)) => skipped.push(why),
                Err(h) => {
                    if let Some(e) = interrupted(h) {
                        return Err(e);
                    }
                    skipped.push(format!("{}: not measured, the budget ran out", p.name));
                }
            }
        }
    }
    // 4. Interactions: each switch again, at the tuned threshold and fragment size.
    let mut interactions = Vec::new();
    let retuned_any = decisions.iter().any(|d| d.role != "switch");
    for p in t.param(Role::Switch) {
        let Some(before) = decisions
            .iter()
            .find(|d| d.param == p.name)
            .map(|d| d.chosen.clone())
        else {
            continue;
        };
        if !retuned_any {
            break;
        }
        let others: Vec<(String, String)> = chosen
            .iter()
            .filter(|(k, _)| *k != p.name)
            .cloned()
            .collect();
        if let Some(why) = params::inert(t.def, &p.name, &t.settings_with(&others)) {
            interactions.push(format!("{}: not re-checked: {why}", p.name));
            continue;
        }
        match switch::tune(&mut bench, p, &others, &t.workloads) {
            Ok(d) if d.chosen == before => interactions.push(format!(
                "{}: re-checked with {} — still {before}",
                p.name,
                describe(&others)
            )),
            Ok(d) => {
                interactions.push(format!(
                    "{}: re-checked with {} — now {} (was {before}): {}",
                    p.name,
                    describe(&others),
                    d.chosen,
                    d.why
                ));
                if let Some(slot) = chosen.iter_mut().find(|(k, _)| *k == p.name) {
                    slot.1 = d.chosen.clone();
                }
                if let Some(old) = decisions.iter_mut().find(|x| x.param == p.name) {
                    *old = d;
                }
            }
            Err(h) => {
                if let Some(e) = interrupted(h) {
                    return Err(e);
                }
                interactions.push(format!("{}: not re-checked, the budget ran out", p.name));
            }
        }
    }
    settle_inert(t, &mut decisions, &mut chosen, &mut interactions);
    let search_exhausted = bench.exhausted;
    // 5. The gate: the chosen values against the defaults over the full default size range;
    // what fails, loses beyond the tolerance or is unconfirmed is not deployed.
    bench.limit = t.budget;
    bench.exhausted = false;
    let gated = match gate::gate(&mut bench, &decisions, &chosen) {
        Ok(g) => g,
        Err(h) => {
            if let Some(e) = interrupted(h) {
                return Err(e);
            }
            // The gate keeps its own account of the budget; were it to stop anyway, nothing
            // unverified is deployed.
            gate::Gated::nothing(true)
        }
    };
    if gated.out_of_budget {
        skipped.push("the gate: the budget ran out before every value was verified; those values are not deployed".into());
    }
    for d in &mut decisions {
        d.withheld = gated.withheld.get(&d.param).cloned();
    }
    let deployed: BTreeMap<String, String> = decisions
        .iter()
        .map(|d| {
            let v = gated
                .deployed
                .iter()
                .find(|(k, _)| *k == d.param)
                .map(|(_, v)| v.clone())
                .unwrap_or_else(|| d.default.clone());
            (d.param.clone(), v)
        })
        .collect();
    let defaults: BTreeMap<String, String> = t
        .params
        .iter()
        .map(|p| (p.name.clone(), p.default.clone()))
        .collect();
    let chosen_map: BTreeMap<String, String> = decisions
        .iter()
        .map(|d| (d.param.clone(), d.chosen.clone()))
        .collect();
    let exhausted = search_exhausted || bench.exhausted;
    let mut spent = bench.spent.clone();
    spent.wall_s = bench.elapsed().as_secs_f64();
    Ok(Outcome {
        schema_version: SCHEMA_VERSION,
        fabbench_version: env!("CARGO_PKG_VERSION").to_string(),
        fabric: t.label.clone(),
        kind: kind_words(t),
        virtual_time: t.virtual_time(),
        library: (t.def.library)(),
        command_line: t.command_line.clone(),
        start_time,
        objective: t.objective.word().to_string(),
        workloads: t.workloads.iter().map(|w| w.to_string()).collect(),
        sizes: [t.sizes.0, t.sizes.1],
        tolerance: t.tolerance,
        fixed: t.sets.clone(),
        budget_s: t.budget.as_secs_f64(),
        budget_exhausted: exhausted,
        skipped,
        defaults,
        chosen: chosen_map,
        deployed,
        gate: gated.trials,
        decisions,
        interactions,
        verification: gated.verification,
        measurements: std::mem::take(&mut bench.log),
        spent,
        notes: Vec::new(),
    })
}

/// The decision for a parameter that `why` says does nothing under the settings in force:
/// not measured, the default kept.
fn not_applicable(p: &Param, why: String) -> Decision {
    Decision {
        param: p.name.clone(),
        role: p.role.word().into(),
        default: p.default.clone(),
        chosen: p.default.clone(),
        near_equal: Vec::new(),
        confidence: "not applicable".into(),
        why: format!("not searched: {why}; kept {}", p.default),
        evidence: Evidence::NotApplicable { because: why },
        withheld: None,
    }
}

/// After the re-checks, a switch may have turned another parameter's mechanism off (ofi's
/// matching moved to provider) or on: a value chosen while it acted is not deployed where it
/// no longer does, and one that was not searched is said to be so.
fn settle_inert(
    t: &Tuning,
    decisions: &mut [Decision],
    chosen: &mut [(String, String)],
    interactions: &mut Vec<String>,
) {
    for p in &t.params {
        let others: Vec<(String, String)> = chosen
            .iter()
            .filter(|(k, _)| *k != p.name)
            .cloned()
            .collect();
        let Some(d) = decisions.iter_mut().find(|d| d.param == p.name) else {
            continue;
        };
        let skipped = matches!(d.evidence, Evidence::NotApplicable { .. });
        match params::inert(t.def, &p.name, &t.settings_with(&others)) {
            Some(why) if !skipped => {
                interactions.push(format!(
                    "{}: {} was chosen where it acted, but now {why}; kept {}",
                    p.name, d.chosen, p.default
                ));
                *d = not_applicable(p, why);
                if let Some(slot) = chosen.iter_mut().find(|(k, _)| *k == p.name) {
                    slot.1 = p.default.clone();
                }
            }
            None if skipped => interactions.push(format!(
                "{}: acts under the settings chosen last, but was not searched when its step ran; kept {}",
                p.name, p.default
            )),
            _ => {}
        }
    }
}

fn kind_words(t: &Tuning) -> String {
    use transports::fabric::FabricKind;
    match t.def.kind {
        FabricKind::Native => "native",
        FabricKind::Emulated => "emulated, virtual time",
        FabricKind::Mpi => "mpi",
    }
    .to_string()
}

fn describe(settings: &[(String, String)]) -> String {
    if settings.is_empty() {
        return "the defaults".into();
    }
    settings
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}
