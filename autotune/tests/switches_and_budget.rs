//! On/off settings decided by the workload that matters, and the budget kept. Hyperlink's
//! drain thread (TI: about 10 % bandwidth, needed for bursts of non-blocking messages beyond
//! the window) must be chosen off for a blocking workload and on for non-blocking bursts whose
//! messages outgrow the window, with the reason said.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use autotune::outcome::Evidence;
use autotune::{Quiet, Request};

fn tune(req: Request) -> autotune::Outcome {
    autotune::autotune(&req, &mut Quiet, &AtomicBool::new(false)).expect("autotune")
}

fn rx_thread(workload: &str, sizes: (u64, u64)) -> autotune::outcome::Decision {
    let mut r = Request::new("hyperlink");
    r.params = Some(vec!["rx_thread".into()]);
    r.workloads = Some(vec![workload.into()]);
    r.sizes = Some(sizes);
    let o = tune(r);
    o.decisions
        .into_iter()
        .find(|d| d.param == "rx_thread")
        .expect("decided")
}

#[test]
fn hyperlink_drain_thread_off_for_blocking_messages() {
    let d = rx_thread("osu_latency", (1, 1 << 20));
    assert_eq!(d.default, "on");
    assert_eq!(d.chosen, "off", "{}", d.why);
    assert!(d.why.contains("off is faster by"), "{}", d.why);
    let Evidence::Switch(ev) = &d.evidence else {
        panic!("a switch's evidence")
    };
    // off wins at most sizes: the thread's share of the core is what it costs.
    let off_wins = ev
        .per_size
        .iter()
        .filter(|v| v.winner.as_deref() == Some("off"))
        .count();
    assert!(off_wins * 2 > ev.per_size.len(), "{:?}", ev.ranges);
}

#[test]
fn hyperlink_drain_thread_on_for_bursts_beyond_the_window() {
    let d = rx_thread("osu_bw", (1, 4 << 20));
    assert_eq!(d.chosen, "on", "{}", d.why);
    assert!(
        d.why.contains("rx_thread=off fails on osu_bw from 2MiB") && d.why.contains("window"),
        "{}",
        d.why
    );
}

#[test]
fn the_budget_stops_measuring_and_the_outcome_says_so() {
    let mut r = Request::new("rapidio");
    r.budget = Duration::from_secs(1);
    r.objective = autotune::Objective::Balanced;
    let o = tune(r);
    assert!(o.budget_exhausted, "{:?}", o.spent);
    assert!(!o.skipped.is_empty());
    // One run may overrun what was left; no more.
    let longest = o.measurements.iter().map(|m| m.wall_s).fold(0.0, f64::max);
    assert!(o.spent.wall_s <= 1.0 + longest + 0.5, "{:?}", o.spent);
}

/// A whole tuning with failing candidates in it (hyperlink with the drain thread off cannot
/// carry small fragments of large messages) still writes an autotune.json that reads back.
#[test]
fn an_outcome_with_failed_runs_reads_back_from_its_json() {
    let o = tune(Request::new("hyperlink"));
    assert!(
        o.measurements.iter().any(|m| m.failed.is_some()),
        "the case needs a failed run"
    );
    let files = autotune::export::export_all(&o).expect("exports");
    let (_, json) = files
        .iter()
        .find(|(p, _)| p.to_str() == Some("autotune.json"))
        .expect("autotune.json");
    let back: autotune::Outcome = serde_json::from_slice(json).expect("reads back");
    assert_eq!(back.chosen, o.chosen);
    assert_eq!(back.measurements.len(), o.measurements.len());
}
