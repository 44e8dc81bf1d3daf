//! autotune's threshold search held to the exhaustive sweep, on each emulated fabric (virtual
//! time: deterministic) and two card settings of each, so the right answer differs between
//! them: the threshold must land within one refinement step of the exhaustive best, no size
//! may be more than 3 % slower than under that best, and the search (the gate's verification
//! after it left out) may use at most a quarter of the sweep's measured time.

use std::sync::atomic::AtomicBool;

use autotune::exhaustive::threshold_sweep;
use autotune::{Quiet, Request};
use bench_core::size::parse_size;

fn check(fabric: &str, param: &str, card: &[&str], sizes: (u64, u64)) {
    let mut req = Request::new(fabric);
    req.params = Some(vec![param.to_string()]);
    req.workloads = Some(vec!["osu_latency".into()]);
    req.sizes = Some(sizes);
    req.sets = card.iter().map(|s| s.to_string()).collect();
    req.budget = std::time::Duration::from_secs(300);
    let tuning = req.check().expect("a valid request");
    let outcome = autotune::run(&tuning, &mut Quiet, &AtomicBool::new(false)).expect("autotune");
    let sweep = threshold_sweep(&tuning, param, "osu_latency", &mut Quiet).expect("sweep");
    let chosen = parse_size(&outcome.chosen[param]).expect("a size");
    let at = sweep
        .values
        .iter()
        .rposition(|v| *v <= chosen)
        .expect("a candidate at or below the chosen value");
    let best = sweep.best;
    let what = format!(
        "{fabric} {card:?}: autotune chose {} (candidate {at}), the sweep's best is {} (candidate {best})",
        outcome.chosen[param], sweep.values[best]
    );
    assert!(at.abs_diff(best) <= 1, "{what}");
    let under = sweep.costs_under(chosen);
    for (j, size) in sweep.sizes.iter().enumerate() {
        let ratio = under[j] / sweep.costs[best][j];
        assert!(
            ratio <= 1.03,
            "{what}: {size} bytes is {ratio:.3}x the best"
        );
    }
    // The search's share: the gate's verification after it (the profile against the
    // defaults from 1 B to 4 MiB) is what the sweep would need too before a deployment.
    let search_s: f64 = outcome
        .measurements
        .iter()
        .filter(|m| !m.purpose.starts_with("verify:"))
        .map(|m| m.measured_s)
        .sum();
    assert!(search_s > 0.0 && search_s <= outcome.spent.measured_s);
    let share = search_s / sweep.measured_s;
    assert!(
        share <= 0.25,
        "{what}: autotune's search measured {search_s:.3}s, the sweep {:.3}s",
        sweep.measured_s
    );
    eprintln!(
        "{what}; the search measured {:.4}s of virtual time against {:.4}s ({:.1} %), {} runs in all against {}",
        search_s,
        sweep.measured_s,
        share * 100.0,
        outcome.spent.runs,
        sweep.runs
    );
}

#[test]
#[ignore = "takes minutes: .ci/run runs it by name (README.md, \"Tests that take minutes\")"]
fn rapidio_default_card() {
    check("rapidio", "eager_limit", &[], (256, 256 << 10));
}

#[test]
#[ignore = "takes minutes: .ci/run runs it by name (README.md, \"Tests that take minutes\")"]
fn rapidio_fast_copies() {
    check(
        "rapidio",
        "eager_limit",
        &["rapidio.copy_mbps=3000"],
        (256, 256 << 10),
    );
}

#[test]
#[ignore = "takes minutes: .ci/run runs it by name (README.md, \"Tests that take minutes\")"]
fn hyperlink_default_card() {
    check("hyperlink", "eager_limit", &[], (256, 256 << 10));
}

#[test]
#[ignore = "takes minutes: .ci/run runs it by name (README.md, \"Tests that take minutes\")"]
fn hyperlink_long_link_latency() {
    // Every rendezvous handshake crosses the link: a long time of flight moves the crossover
    // from 64-128 KiB to 128-256 KiB (cards that change the copy rate, the DMA threshold,
    // the software overheads or the window slot size all leave it at 64-128 KiB).
    check(
        "hyperlink",
        "eager_limit",
        &["hyperlink.latency_ns=50000"],
        (256, 256 << 10),
    );
}

#[test]
#[ignore = "takes minutes: .ci/run runs it by name (README.md, \"Tests that take minutes\")"]
fn bxi_default_card() {
    check("bxi", "bxi.rendezvous", &[], (256, 256 << 10));
}

#[test]
#[ignore = "takes minutes: .ci/run runs it by name (README.md, \"Tests that take minutes\")"]
fn bxi_slow_copies() {
    check(
        "bxi",
        "bxi.rendezvous",
        &["bxi.copy_mbps=500"],
        (256, 256 << 10),
    );
}
