//! One trial: the emulated fabric run in this process at a trial's settings over exactly the
//! table's suites and sizes, and what each gives. Emulated time is exact, so one timed
//! iteration after one warm-up gives the numbers OSU's defaults would (checked by a test).

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;

use runner::sink::Discard;
use runner::{PlanBuilder, RunError, SuiteSpec};
use suites::osu::OsuParams;

use crate::table::Target;

/// Timed and warm-up iterations of a trial.
pub const ITERATIONS: (u64, u64) = (1, 1);

/// (suite, size) -> value in the suite's unit.
pub type Values = BTreeMap<(String, u64), f64>;

/// Runs `fabric` with `sets` (`FABRIC.NAME=VALUE`) over the targets' suites and sizes.
/// Err carries the fabric's own diagnosis (a setting it cannot carry).
pub fn evaluate(
    fabric: &str,
    sets: &[String],
    targets: &[Target],
    iterations: (u64, u64),
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
        let params = OsuParams {
            size_list: Some(sizes.clone()),
            iterations: Some(iterations.0),
            warmup: Some(iterations.1),
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
