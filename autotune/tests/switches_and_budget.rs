//! On/off settings decided where their mechanism acts, the gate before the profile, and the
//! budget kept. Hyperlink's drain thread (TI: about 10 % bandwidth, needed for messages beyond
//! the window) is judged only beyond the window, where off fails, and kept on with the reason
//! said; a value that breaks the profile is not deployed.

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

/// The drain thread's mechanism is what lets a message larger than the window complete: it
/// is judged there (to OSU's 4 MiB, the size a deployed profile is run to), and the sizes the
/// window holds whole are "not applicable", not wins for off.
#[test]
fn hyperlink_drain_thread_is_judged_only_beyond_the_window() {
    let d = rx_thread("osu_latency", (1, 1 << 20));
    assert_eq!(d.default, "on");
    assert_eq!(d.chosen, "on", "{}", d.why);
    assert!(
        d.why
            .contains("rx_thread=off fails on osu_latency from 2MiB"),
        "{}",
        d.why
    );
    let Evidence::Switch(ev) = &d.evidence else {
        panic!("a switch's evidence")
    };
    // Off fails at the first size beyond the window, so no size is compared; none at or
    // below the window is either.
    let window = 32 * 65472;
    assert!(
        ev.per_size.iter().all(|v| v.size > window),
        "{:?}",
        ev.per_size
    );
    let na = ev.not_applicable.as_deref().unwrap_or_default();
    assert!(
        na.starts_with("1-1MiB: not applicable") && na.contains("window holds"),
        "{na}"
    );
}

/// A value the search chose on the sizes it was asked about but that breaks the profile beyond
/// them (hyperlink without its drain thread: a large eager limit wins osu_latency up to 1 MiB,
/// and the profile stalls from 2 MiB) is held back by the gate; the profile keeps the default.
#[test]
fn the_gate_holds_back_a_value_that_breaks_the_profile() {
    let mut r = Request::new("hyperlink");
    r.params = Some(vec!["eager_limit".into()]);
    r.sets = vec!["rx_thread=off".into()];
    let o = tune(r);
    let d = &o.decisions[0];
    assert_ne!(d.chosen, d.default, "the case needs a change: {}", d.why);
    let why = d.withheld.as_deref().expect("held back");
    assert!(
        why.contains("not deployed") && why.contains("fails on osu_latency from 2MiB"),
        "{why}"
    );
    assert_eq!(o.deployed["eager_limit"], d.default);
    assert!(o.gate.iter().all(|t| !t.passed), "{:?}", o.gate);
    let profile = autotune::export::export_all(&o).expect("exports");
    let (_, text) = profile
        .iter()
        .find(|(p, _)| p.to_str() == Some("profile.toml"))
        .expect("profile.toml");
    let text = String::from_utf8_lossy(text);
    assert!(
        text.contains(&format!("eager_limit = \"{}\"", d.default)),
        "{text}"
    );
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
