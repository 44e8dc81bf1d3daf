//! One trial: the emulated fabric run in this process at a trial's settings over exactly the
//! table's suites and sizes, and what each gives. Emulated time is exact, so a few timed
//! iterations give what OSU's thousands would, but for one end effect: a receive returns only
//! once its rank has taken every frame that arrived meanwhile (as a progress engine drains its
//! queue), so a timed section's last receive also pays for the first frame of what follows,
//! one receive overhead per section. Twenty ping-pongs make that a fortieth of a receive
//! overhead per one-way time (about 1 % where the overhead is half the latency, as on the
//! RapidIO paper's stack); osu_bw's window of 64 messages does the same in one iteration.

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;

use runner::sink::Discard;
use runner::{PlanBuilder, RunError, SuiteSpec};
use suites::osu::OsuParams;

use crate::table::Target;

/// Timed and warm-up iterations of a trial, by suite.
pub fn iterations(suite: &str) -> (u64, u64) {
    match suite {
        "osu_latency" => (20, 1),
        _ => (1, 1),
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
        let (timed, warmup) = iterations(suite);
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
                out.insert((series.suite.clone(), size), p.headline());
            }
        }
    }
    Ok(out)
}
