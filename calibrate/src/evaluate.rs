//! One trial: the emulated fabric run in this process at a trial's settings over exactly the
//! table's suites and sizes, and what each gives, in as few iterations as virtual time needs.
//! Emulated time is exact, so one timed iteration gives what OSU's thousands would, but for
//! one end effect: a receive returns only once its rank has taken every frame that arrived
//! meanwhile (as a progress engine drains its queue), so a timed section's last receive also
//! pays for the first frame of what follows, one receive overhead per section (a one-way time
//! of N ping-pongs is the true one plus c/N, seen exactly at N = 1, 2, 20 on the RapidIO
//! paper's fit). osu_latency therefore times two ping-pongs and keeps the first, which no
//! later frame reaches: the value OSU's many iterations tend to. osu_bw's window of 64
//! messages spreads the effect over the window in one iteration. Warm-up moves nothing on
//! RapidIO and under 0.3 % on BXI and Hyperlink, so osu_bw, where a warm-up window at 4 MiB
//! is most of a trial's cost, has none.

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;

use runner::sink::Discard;
use runner::{PlanBuilder, RunError, SuiteSpec};
use suites::osu::OsuParams;

use crate::table::Target;

/// Timed and warm-up iterations of a trial, by suite, and how many of the timed samples (the
/// first) its value is taken over.
pub fn iterations(suite: &str) -> (u64, u64, usize) {
    match suite {
        "osu_latency" => (2, 1, 1),
        _ => (1, 0, 1),
    }
}

/// (suite, size) -> value in the suite's unit.
pub type Values = BTreeMap<(String, u64), f64>;

/// Runs `fabric` with `sets` (`FABRIC.NAME=VALUE`) over the targets' suites and sizes.
/// Err carries the fabric's own diagnosis (a setting it cannot carry).
pub fn evaluate(
    fabric: &str,
    sets: &[String],
    targets: &[Target],
    stop: &AtomicBool,
) -> Result<Values, RunError> {
    let mut by_suite: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for t in targets {
        by_suite.entry(&t.suite).or_default().push(t.size);
    }
    let mut plan = PlanBuilder::new().fabrics(fabric).ranks(2);
    for (suite, sizes) in &mut by_suite {
        sizes.sort_unstable();
        sizes.dedup();
        let (timed, warmup, _) = iterations(suite);
        let params = OsuParams {
            size_list: Some(sizes.clone()),
            iterations: Some(timed),
            warmup: Some(warmup),
            ..Default::default()
        };
        let s = suites::find(suite).expect("table suites are checked");
        plan = plan.suite(SuiteSpec {
            suite: s,
            params: serde_json::to_value(&params).expect("parameters serialise"),
        });
    }
    for s in sets {
        plan = plan.set(s);
    }
    let run = runner::run_until(&plan.build()?, &mut Discard, stop)?;
    let mut out = Values::new();
    for series in &run.series {
        for p in &series.points {
            if let Some(size) = p.key.size {
                let (_, _, kept) = iterations(&series.suite);
                let samples = &p.samples_ns[..kept.min(p.samples_ns.len())];
                out.insert((series.suite.clone(), size), p.metric().headline(samples));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The settings of the RapidIO paper's fit, where the end effect is largest: a receive
    /// overhead about half the one-way time.
    const PAPER: &[&str] = &[
        "rapidio.send_overhead_ns=300000",
        "rapidio.recv_overhead_ns=300000",
        "rapidio.copy_mbps=25",
    ];

    #[test]
    fn a_trial_gives_what_many_iterations_tend_to() {
        let sets: Vec<String> = PAPER.iter().map(|s| s.to_string()).collect();
        let targets: Vec<Target> = [8, 4096]
            .into_iter()
            .map(|size| Target {
                suite: "osu_latency".into(),
                size,
                value: 1.0,
            })
            .collect();
        let stop = AtomicBool::new(false);
        let trial = evaluate("rapidio", &sets, &targets, &stop).unwrap();
        // The mean of 400 ping-pongs carries a 400th of the end effect.
        let mut plan = PlanBuilder::new().fabrics("rapidio").ranks(2);
        plan = plan.suite(SuiteSpec {
            suite: suites::find("osu_latency").unwrap(),
            params: serde_json::to_value(OsuParams {
                size_list: Some(vec![8, 4096]),
                iterations: Some(400),
                warmup: Some(1),
                ..Default::default()
            })
            .unwrap(),
        });
        for s in &sets {
            plan = plan.set(s);
        }
        let run = runner::run_until(&plan.build().unwrap(), &mut Discard, &stop).unwrap();
        for p in &run.series[0].points {
            let long = p.headline();
            let short = trial[&("osu_latency".to_string(), p.size())];
            assert!(
                (short - long).abs() <= 0.002 * long,
                "{} B: a trial's {short} against 400 ping-pongs' {long}",
                p.size()
            );
        }
    }
}
