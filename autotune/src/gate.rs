//! The gate between what the search chose and what the profile deploys. The search judges each
//! value on the workloads and sizes it was asked about; a profile is then run by whatever the
//! user runs, to OSU's default 4 MiB (`fabbench run osu_bw --profile ...`). So before a value
//! is written, the whole set of changed values runs against the defaults over the full default
//! size range of every workload named, and of osu_bw when a threshold, a fragment size or the
//! window's drain thread changed (they change how a stream of messages fills the fabric). A set
//! that fails at any size, or loses beyond the tolerance at any size (medians: the statistic
//! every verdict here is made on), is not deployed as a whole: values are taken back one at a
//! time, the set without each verified in turn, until a set passes or none is left. A value
//! its own step could not confirm is never deployed, and neither is one the budget left
//! unverified. Every value held back says why.

use std::collections::BTreeMap;

use bench_core::size::format_size;
use bench_core::stats::two_sample as stats;

use crate::grid;
use crate::measure::{Bench, Halt};
use crate::outcome::{Decision, Evidence, Gain, GateTrial, Verification};
use crate::request::Tuning;

/// What the gate decided.
pub struct Gated {
    /// Every comparison the gate measured, in order.
    pub verification: Vec<Verification>,
    pub trials: Vec<GateTrial>,
    /// The values deployed (those that differ from the defaults).
    pub deployed: Vec<(String, String)>,
    /// Values held back, and why.
    pub withheld: BTreeMap<String, String>,
    /// Whether the budget stopped the gate before a verdict.
    pub out_of_budget: bool,
}

impl Gated {
    /// No verdict: nothing deployed.
    pub fn nothing(out_of_budget: bool) -> Gated {
        Gated {
            verification: Vec::new(),
            trials: Vec::new(),
            deployed: Vec::new(),
            withheld: BTreeMap::new(),
            out_of_budget,
        }
    }
}

/// A trial's verdict: None when the set passed, else the first fault found.
type Verdict = Option<Fault>;

#[derive(Clone)]
struct Fault {
    /// "fails on osu_bw from 2MiB (...)", "loses 43.2 % on osu_bw at 1MiB (...)".
    what: String,
    /// How bad, for choosing which value to take back: the worst gain (-inf for a failure).
    worst: f64,
}

/// Checks the search's `chosen` values (NAME, VALUE) through the gate.
pub fn gate(
    bench: &mut Bench<'_>,
    decisions: &[Decision],
    chosen: &[(String, String)],
) -> Result<Gated, Halt> {
    let t = bench.tuning;
    let mut out = Gated::nothing(false);
    // Only values that change something need the gate; the unconfirmed ones never pass it.
    let mut candidates: Vec<(String, String)> = Vec::new();
    for (name, value) in chosen {
        let Some(d) = decisions.iter().find(|d| d.param == *name) else {
            continue;
        };
        if *value == d.default {
            continue;
        }
        if let Some(why) = unconfirmed(t, d) {
            out.withheld.insert(name.clone(), why);
            continue;
        }
        candidates.push((name.clone(), value.clone()));
    }
    if candidates.is_empty() {
        return Ok(out);
    }
    let mut workloads: Vec<&'static str> = t.workloads.clone();
    let streams = candidates.iter().any(|(name, _)| {
        decisions
            .iter()
            .find(|d| d.param == *name)
            .is_some_and(|d| d.role != "switch" || name.ends_with("rx_thread"))
    });
    if streams && !workloads.contains(&"osu_bw") {
        workloads.push("osu_bw");
    }
    let sizes = grid::coarse(1, grid::verified_top(t.sizes.1));
    let mut tried: BTreeMap<Vec<String>, Verdict> = BTreeMap::new();
    let mut current = candidates;
    loop {
        let verdict = match trial(bench, &mut out, &mut tried, &workloads, &sizes, &current) {
            Ok(v) => v,
            Err(Halt::Budget) => return Ok(out_of_budget(out, &current)),
            Err(h) => return Err(h),
        };
        let Some(fault) = verdict else {
            out.deployed = current;
            return Ok(out);
        };
        if current.len() == 1 {
            let (name, value) = &current[0];
            out.withheld.insert(
                name.clone(),
                format!("{value} not deployed: the profile with it {}", fault.what),
            );
            return Ok(out);
        }
        // Take back the value whose absence helps most: the first set without one that
        // passes, else the one whose worst size is least bad.
        let mut best: Option<(usize, f64)> = None;
        let mut passed = None;
        for i in (0..current.len()).rev() {
            let mut without = current.clone();
            without.remove(i);
            let v = match trial(bench, &mut out, &mut tried, &workloads, &sizes, &without) {
                Ok(v) => v,
                Err(Halt::Budget) => return Ok(out_of_budget(out, &current)),
                Err(h) => return Err(h),
            };
            match v {
                None => {
                    passed = Some(i);
                    break;
                }
                Some(f) => {
                    if best.is_none_or(|(_, w)| f.worst > w) {
                        best = Some((i, f.worst));
                    }
                }
            }
        }
        let i = passed.or(best.map(|b| b.0)).expect("two or more values");
        let (name, value) = current.remove(i);
        let others = describe(&current);
        out.withheld.insert(
            name.clone(),
            format!(
                "{value} not deployed: the profile with it (and {others}) {}",
                fault.what
            ),
        );
    }
}

/// The gate stopped by the budget before a verdict on `current`: none of it is deployed.
fn out_of_budget(mut out: Gated, current: &[(String, String)]) -> Gated {
    out.out_of_budget = true;
    for (name, value) in current {
        out.withheld.insert(
            name.clone(),
            format!("{value} not verified: the budget ran out before the gate's verdict; not deployed, the default stays"),
        );
    }
    out
}

/// Why a decision's value cannot be deployed before any verification: its own step did not
/// confirm it.
fn unconfirmed(t: &Tuning, d: &Decision) -> Option<String> {
    let Evidence::Threshold(ev) = &d.evidence else {
        return None;
    };
    match ev.confirmed {
        Some(true) => None,
        Some(false) => Some(format!(
            "{} not confirmed: the run at it disagreed with the forced-protocol runs beyond the tolerance; not deployed, the default stays",
            d.chosen
        )),
        // One protocol won at every size: the value is at an end, the gate checks it.
        None if ev.bracket[0] == ev.bracket[1] => None,
        None if t.virtual_time() => None,
        None => Some(format!(
            "{} not confirmed: the search ended before a run at it; not deployed, the default stays",
            d.chosen
        )),
    }
}

fn describe(settings: &[(String, String)]) -> String {
    settings
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Verifies one set of values on every workload, once (a set tried before is not run again).
fn trial(
    bench: &mut Bench<'_>,
    out: &mut Gated,
    tried: &mut BTreeMap<Vec<String>, Verdict>,
    workloads: &[&'static str],
    sizes: &[u64],
    settings: &[(String, String)],
) -> Result<Verdict, Halt> {
    let mut key: Vec<String> = settings.iter().map(|(k, v)| format!("{k}={v}")).collect();
    key.sort();
    if let Some(v) = tried.get(&key) {
        return Ok(v.clone());
    }
    let tol = bench.tuning.tolerance;
    let mut verdict: Verdict = None;
    let mut indices = Vec::new();
    for w in workloads {
        let v = verify(bench, w, sizes, settings)?;
        let fault = fault(&v, tol, bench.tuning.virtual_time());
        indices.push(out.verification.len());
        out.verification.push(v);
        if let Some(f) = fault {
            verdict = Some(f);
            // The first fault decides; the other workloads need not run.
            break;
        }
    }
    let why = match &verdict {
        None => format!(
            "no failure and no loss beyond {:.1} % at any size from 1 to {} on {}",
            tol * 100.0,
            format_size(*sizes.last().unwrap_or(&0)),
            workloads.join(", ")
        ),
        Some(f) => f.what.clone(),
    };
    bench.decided(&format!(
        "gate: {} {}",
        key.join(", "),
        if verdict.is_none() {
            "passes"
        } else {
            "held back"
        }
    ));
    out.trials.push(GateTrial {
        settings: key.clone(),
        passed: verdict.is_none(),
        why,
        verifications: indices,
    });
    tried.insert(key, verdict.clone());
    Ok(verdict)
}

/// The first fault of a comparison: a failed run, else the worst size that loses beyond the
/// tolerance. On a real fabric a loss counts only where the whole interval of the gain (the
/// samples' bootstrap, widened to every pairing of a default run with a tuned run, so it holds
/// the run-to-run variation of this host) lies beyond the tolerance: of 23 sizes from 1 B to
/// 4 MiB one always lands a few per cent apart on a shared machine, and a gate that took that
/// for a loss would never deploy anything.
fn fault(v: &Verification, tol: f64, exact: bool) -> Option<Fault> {
    if let Some(why) = &v.failed {
        return Some(Fault {
            what: format!("fails on {} {why}", v.workload),
            worst: f64::NEG_INFINITY,
        });
    }
    let bound = |g: &Gain| if exact { g.gain } else { g.high };
    let worst = v
        .per_size
        .iter()
        .filter(|g| bound(g) < -tol)
        .min_by(|a, b| a.gain.total_cmp(&b.gain))?;
    Some(Fault {
        what: format!(
            "loses {:.1} % on {} at {} (median {} against {} {} with the defaults; {}), beyond the {:.1} % tolerance",
            -worst.gain * 100.0,
            v.workload,
            format_size(worst.size),
            short(worst.tuned_value),
            short(worst.default_value),
            worst.unit,
            if exact {
                "exact, virtual time".to_string()
            } else {
                format!(
                    "the gain {:+.1} % to {:+.1} % over the runs' pairings and a 95 % interval",
                    worst.low * 100.0,
                    worst.high * 100.0
                )
            },
            tol * 100.0
        ),
        worst: worst.gain,
    })
}

/// A figure with the digits it needs.
fn short(x: f64) -> String {
    if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

/// The defaults and `settings` over `sizes` on `workload`, in alternating rounds on a real
/// fabric; the gain at each size is the ratio of median costs, and the values shown are the
/// same medians in the suite's unit. When the tuned run fails, the sizes before the failure
/// are kept and the failure is said with its first size.
pub fn verify(
    bench: &mut Bench<'_>,
    workload: &'static str,
    sizes: &[u64],
    settings: &[(String, String)],
) -> Result<Verification, Halt> {
    let mut d_ids = Vec::new();
    let mut t_ids = Vec::new();
    let mut failed = None;
    // One more round a side than the search's on a real fabric: a loss must hold over every
    // pairing of the runs, and with two a side this host's two modes line up against a value
    // once in a few verifications.
    let rounds = if bench.tuning.virtual_time() {
        1
    } else {
        bench.rounds() + 1
    };
    for round in 0..rounds {
        d_ids.push(bench.measure("verify: defaults", workload, sizes, &[])?);
        if round == 0 {
            let (id, failure) =
                bench.measure_carried("verify: tuned", workload, sizes, settings)?;
            t_ids.push(id);
            if let Some((size, why)) = failure {
                failed = Some(format!("from {} ({why})", format_size(size)));
                break;
            }
        } else {
            t_ids.push(bench.measure("verify: tuned", workload, sizes, settings)?);
        }
    }
    let (d, t) = (bench.pool(&d_ids), bench.pool(&t_ids));
    let exact = bench.tuning.virtual_time();
    let (md, mt) = (bench.get(d), bench.get(t));
    if failed.is_none() {
        failed = mt.failed.clone();
    }
    let mut per_size = Vec::new();
    for pd in &md.points {
        let Some(pt) = mt.point(pd.size) else {
            continue;
        };
        let gain = pd.cost_us / pt.cost_us - 1.0;
        let (low, high) = if exact {
            (gain, gain)
        } else {
            // The gain is cost(default)/cost(tuned) - 1: the interval of that ratio of medians,
            // widened to the gain of every pairing of one default run with one tuned run.
            let iv =
                stats::median_ratio_interval(&pt.samples_us, &pd.samples_us, 2000, pd.size, 0.95);
            let runs = |ids: &[usize]| -> Vec<f64> {
                ids.iter()
                    .filter_map(|&i| bench.get(i).point(pd.size).map(|p| p.cost_us))
                    .collect()
            };
            let (dr, tr) = (runs(&d_ids), runs(&t_ids));
            let pairings = dr.iter().flat_map(|d| tr.iter().map(move |t| d / t - 1.0));
            pairings.fold((iv.low - 1.0, iv.high - 1.0), |(lo, hi), g| {
                (lo.min(g), hi.max(g))
            })
        };
        per_size.push(Gain {
            size: pd.size,
            default_value: pd.median_value(),
            tuned_value: pt.median_value(),
            unit: pd.unit.clone(),
            gain,
            low,
            high,
        });
    }
    Ok(Verification {
        workload: workload.to_string(),
        settings: settings.iter().map(|(k, v)| format!("{k}={v}")).collect(),
        failed,
        default_measurement: d,
        tuned_measurement: t,
        per_size,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verification(gains: &[(u64, f64, f64, f64)], failed: Option<&str>) -> Verification {
        Verification {
            workload: "osu_bw".into(),
            settings: vec!["eager_limit=1MiB".into()],
            failed: failed.map(String::from),
            default_measurement: 0,
            tuned_measurement: 1,
            per_size: gains
                .iter()
                .map(|&(size, gain, low, high)| Gain {
                    size,
                    default_value: 775.0,
                    tuned_value: 775.0 / (1.0 + gain),
                    unit: "MB/s".into(),
                    gain,
                    low,
                    high,
                })
                .collect(),
        }
    }

    #[test]
    fn a_failure_or_the_worst_loss_beyond_the_tolerance_holds_a_set_back() {
        let ok = verification(&[(1, 0.1, 0.1, 0.1), (1 << 20, -0.01, -0.01, -0.01)], None);
        assert!(fault(&ok, 0.02, true).is_none(), "within the tolerance");
        let lost = verification(&[(1, 0.1, 0.1, 0.1), (1 << 20, -0.43, -0.43, -0.43)], None);
        let f = fault(&lost, 0.02, true).expect("a loss");
        assert!(
            f.what.starts_with("loses 43.0 % on osu_bw at 1MiB"),
            "{}",
            f.what
        );
        let failed = verification(&[(1, 0.1, 0.1, 0.1)], Some("from 2MiB (window stall)"));
        let f = fault(&failed, 0.02, true).expect("a failure");
        assert_eq!(f.what, "fails on osu_bw from 2MiB (window stall)");
        assert_eq!(f.worst, f64::NEG_INFINITY);
    }

    #[test]
    fn on_a_real_fabric_a_loss_counts_only_beyond_the_runs_variation() {
        // A median 10 % down whose interval over the runs reaches past the tolerance: no loss.
        let noisy = verification(
            &[(512, -0.10, -0.14, 0.002), (1024, -0.10, -0.14, -0.01)],
            None,
        );
        assert!(fault(&noisy, 0.02, false).is_none());
        let clear = verification(&[(512, -0.10, -0.14, -0.06)], None);
        assert!(fault(&clear, 0.02, false)
            .unwrap()
            .what
            .starts_with("loses 10.0 %"));
        // The same medians in virtual time, exact: a loss.
        assert!(fault(&noisy, 0.02, true).is_some());
    }
}
