//! The runner as a library, without the command line: runs on an emulated fabric happen in
//! this process (the rank program given does not even exist), runs on shm start rank
//! processes, and what a library caller gets back is what the CLI prints and what the run
//! directory holds.

use std::sync::atomic::AtomicBool;

use crate::common::*;
use bench_core::measure::Point;
use results::model::Run;
use runner::sink::{Discard, Event, Sink};
use runner::{PlanBuilder, RunError, SuiteSpec};
use suites::osu::{OsuParams, BW, LATENCY};

/// The names of the events a run passed to its sink, in order.
#[derive(Default)]
struct Recorder {
    seen: Vec<String>,
    planned: Option<usize>,
}

impl Sink for Recorder {
    fn event(&mut self, e: &Event<'_>) {
        self.seen.push(match e {
            Event::Started { planned, .. } => {
                self.planned = *planned;
                "started".into()
            }
            Event::SuiteStarted { series, .. } => format!("suite {}", series.suite),
            Event::PointStarted { key, .. } => format!("measuring {key}"),
            Event::Point { point, .. } => format!("point {}", point.key),
            Event::SuiteFinished { series, .. } => format!("suite {} done", series.suite),
            Event::Finished { .. } => "finished".into(),
            Event::Written { .. } => "written".into(),
        });
    }
}

fn latency_at(size: u64) -> SuiteSpec {
    SuiteSpec::new(
        &LATENCY,
        OsuParams {
            min_size: Some(size),
            max_size: Some(size),
            iterations: Some(50),
            warmup: Some(5),
            ..Default::default()
        },
    )
}

fn only_point(run: &Run) -> &Point {
    assert_eq!(run.series.len(), 1);
    assert_eq!(run.series[0].points.len(), 1);
    &run.series[0].points[0]
}

/// Sum of a protocol counter over the ranks of a run's first fabric.
fn counter(run: &Run, name: &str) -> u64 {
    run.manifest.fabrics[0]
        .counters
        .iter()
        .map(|r| r["counters"][name].as_u64().unwrap())
        .sum()
}

#[test]
fn emulated_runs_happen_in_this_process_with_the_tunables_asked_for() {
    let plan = |eager: &str| {
        PlanBuilder::new()
            .suite(latency_at(2048))
            .fabrics("rapidio")
            .set(&format!("eager_limit={eager}"))
            // Were a process started, this would fail the run.
            .rank_program("/nonexistent/not-fabbench")
            .build()
            .unwrap()
    };
    let mut rec = Recorder::default();
    let eager = runner::run(&plan("4K"), &mut rec).unwrap();
    let rendezvous = runner::run(&plan("1K"), &mut Discard).unwrap();
    assert_eq!(
        rec.seen,
        [
            "started",
            "suite osu_latency",
            "measuring size 2048",
            "point size 2048",
            "suite osu_latency done",
            "finished"
        ]
    );
    assert_eq!(rec.planned, Some(1));
    // Each run used the protocol its tunables say, and the results differ accordingly.
    assert!(counter(&eager, "eager_sends") > 0);
    assert_eq!(counter(&eager, "rendezvous_copy_sends"), 0);
    assert!(counter(&rendezvous, "rendezvous_copy_sends") > 0);
    let (e, r) = (
        only_point(&eager).headline(),
        only_point(&rendezvous).headline(),
    );
    assert!(
        r > e,
        "a rendezvous costs more than an eager send: {r} vs {e}"
    );
    // Exact in virtual time: the same plan again gives the same samples...
    let again = runner::run(&plan("4K"), &mut Discard).unwrap();
    assert_eq!(only_point(&again).samples_ns, only_point(&eager).samples_ns);
    // ...and the CLI prints the very same figure for it.
    let _g = serial();
    let cli = run(
        "library-vs-cli",
        &[
            "run",
            "osu_latency",
            "-m",
            "2K:2K",
            "-i",
            "50",
            "-x",
            "5",
            "--fabric",
            "rapidio",
        ],
    );
    let row = cli.summary();
    assert_eq!(row[0][8].parse::<f64>().unwrap(), e);
}

#[test]
fn shm_runs_start_rank_processes_and_read_back_from_disk() {
    let _g = serial();
    let out = scratch("library-shm");
    let plan = |eager: &str| {
        PlanBuilder::new()
            .suite(SuiteSpec::new(
                &BW,
                OsuParams {
                    min_size: Some(16 << 10),
                    max_size: Some(16 << 10),
                    iterations: Some(3),
                    warmup: Some(1),
                    window: Some(4),
                    validate: true,
                    ..Default::default()
                },
            ))
            .set(&format!("eager_limit={eager}"))
            // The copy path, not whatever the single-copy probe picks under this host's load
            // (it took CMA at 16 KiB while CI ran other jobs).
            .set("single_copy=off")
            .set("bind=none")
            .rank_program(bin())
            .out(&out)
            .build()
            .unwrap()
    };
    let eager = runner::run(&plan("64K"), &mut Discard).unwrap();
    let copied = runner::run(&plan("1K"), &mut Discard).unwrap();
    assert_ne!(eager.manifest.run_id, copied.manifest.run_id);
    for (run, protocol) in [(&eager, "eager_sends"), (&copied, "rendezvous_copy_sends")] {
        let dir = out.join(&run.manifest.run_id);
        let back = results::read_run(&dir).unwrap();
        assert_eq!(
            &back,
            run,
            "{} reads back as it was returned",
            dir.display()
        );
        // 4 data messages a window, (1 warm-up + 3 timed) windows.
        assert!(
            counter(&back, protocol) >= 16,
            "{protocol} in {}",
            dir.display()
        );
        assert_eq!(only_point(&back).validated, Some(true));
    }
    assert_eq!(counter(&eager, "rendezvous_copy_sends"), 0);
}

#[test]
fn a_stopped_run_ends_without_a_result() {
    let stop = AtomicBool::new(true);
    let plan = PlanBuilder::new()
        .suite(latency_at(8))
        .fabrics("hyperlink")
        .build()
        .unwrap();
    match runner::run_until(&plan, &mut Discard, &stop) {
        Err(RunError::Interrupted(_)) => {}
        other => panic!("expected an interruption, got {:?}", other.map(|_| ())),
    }
}
