//! Warnings about a plan or a finished run whose numbers would mislead, each one line naming
//! the option that fixes it. Before a run: more ranks than cores on a fabric that runs in real
//! time, where ranks take turns on a core and the times include the waiting. Emulated fabrics
//! run in virtual time under one scheduler, so their results do not depend on the cores (only
//! their wall time does, which the estimate covers) and get no warning. After a run: points
//! whose timed section was too short to trust ([`results::short`]).

use results::model::Run;
use results::short::{short, Short};
use transports::fabric::FabricKind;

use crate::plan::Plan;

/// The cores this process may run on (1 when the host will not say).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The warning for `plan` when its ranks outnumber `cores` on a fabric that runs in real time.
pub fn oversubscribed(plan: &Plan, cores: usize) -> Option<String> {
    if plan.ranks <= cores {
        return None;
    }
    let real: Vec<&str> = plan
        .fabrics
        .iter()
        .filter(|f| f.def.kind != FabricKind::Emulated)
        .map(|f| f.label.as_str())
        .collect();
    if real.is_empty() {
        return None;
    }
    Some(format!(
        "warning: {} ranks on {cores} cores ({}): ranks share cores, so times include waiting for a core; use -n {cores} or fewer for timings",
        plan.ranks,
        real.join(", ")
    ))
}

/// One warning per series of `run` with points timed too briefly to trust.
pub fn short_points(run: &Run) -> Vec<String> {
    let mut out = Vec::new();
    for s in &run.series {
        let found: Vec<(String, Short)> = s
            .points
            .iter()
            .filter_map(|p| short(s, p).map(|x| (p.key.to_string(), x)))
            .collect();
        let Some((key, first)) = found.first() else {
            continue;
        };
        let fix = suites::find(&s.suite)
            .and_then(|x| x.longer())
            .unwrap_or("a longer measurement");
        let which = if found.len() == 1 {
            format!("{key}: {}", first.words())
        } else {
            format!(
                "{} points from {key} ({} there)",
                found.len(),
                first.words()
            )
        };
        out.push(format!(
            "warning: {} on {} at -n {}, {which}: too short to time on a real-time fabric, where timer resolution and the host's noise dominate; use {fix}",
            s.suite, s.fabric, s.ranks
        ));
    }
    out
}

/// The lines to print before running `plans` one after the other (a scaling run's counts, or
/// one plan): the estimate when the work is long, from earlier runs under `results` or the
/// cost model, and the warning of ranks outnumbering cores (once, for the largest count). A
/// resumed plan gets no estimate: what it has left is not what it planned.
pub fn before(plans: &[Plan], results: Option<&std::path::Path>) -> Vec<String> {
    let mut out = Vec::new();
    if plans.iter().all(|p| p.resume.is_none()) {
        let parts: Option<Vec<_>> = plans
            .iter()
            .map(|p| crate::estimate::estimate(p, results))
            .collect();
        if let Some(line) = parts
            .and_then(crate::estimate::Estimate::sum)
            .and_then(|e| e.line())
        {
            out.push(line);
        }
    }
    if let Some(w) = plans
        .iter()
        .max_by_key(|p| p.ranks)
        .and_then(|p| oversubscribed(p, cores()))
    {
        out.push(w);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PlanBuilder;
    use suites::SuiteArgs;

    fn npb(fabric: &str, ranks: usize) -> Plan {
        PlanBuilder::new()
            .suite_named("npb", SuiteArgs::new())
            .fabrics(fabric)
            .ranks(ranks)
            .build()
            .unwrap()
    }

    #[test]
    fn ranks_beyond_the_cores_are_warned_of_on_real_fabrics_only() {
        let w = oversubscribed(&npb("shm", 4), 2).expect("4 ranks on 2 cores");
        assert_eq!(
            w,
            "warning: 4 ranks on 2 cores (shm): ranks share cores, so times include waiting for a core; use -n 2 or fewer for timings"
        );
        assert_eq!(oversubscribed(&npb("shm", 4), 4), None);
        assert_eq!(oversubscribed(&npb("bxi", 4), 2), None, "virtual time");
        let mixed = oversubscribed(&npb("bxi,tcp", 4), 2).unwrap();
        assert!(mixed.contains("(tcp)"), "{mixed}");
    }

    #[test]
    fn short_points_name_the_suite_the_point_and_the_option() {
        let run = results::testing::npb_run("npb", "shm", 1, &[("mg", 0.0013), ("cg", 0.5)]);
        let w = short_points(&run);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].starts_with(
                "warning: npb on shm at -n 1, class=S kernel=mg: timed sections of 1.3 ms"
            ) && w[0].ends_with("use --class A (a larger problem; S < W < A < B < C)"),
            "{}",
            w[0]
        );
    }
}
