//! The cost of one in-process run on an emulated fabric through the runner (plan to `Run`,
//! nothing written): what autotune pays per measurement. The run is an osu_latency of one size
//! with 100 timed iterations (and 10 warm-up), in virtual time; the same with one iteration and
//! no warm-up shows what a run costs besides its messages.

use criterion::{criterion_group, criterion_main, Criterion};
use runner::sink::Discard;
use runner::{PlanBuilder, SuiteSpec};
use suites::osu::{OsuParams, LATENCY};

fn one_emulated_run(c: &mut Criterion) {
    let cases = [
        ("rapidio", 100, 10),
        ("hyperlink", 100, 10),
        ("bxi", 100, 10),
        ("rapidio", 1, 0),
    ];
    for (fabric, iterations, warmup) in cases {
        let params = OsuParams {
            min_size: Some(8),
            max_size: Some(8),
            iterations: Some(iterations),
            warmup: Some(warmup),
            ..Default::default()
        };
        let plan = PlanBuilder::new()
            .suite(SuiteSpec::new(&LATENCY, params))
            .fabrics(fabric)
            .build()
            .expect("a valid plan");
        c.bench_function(
            &format!("runner::run osu_latency 8 B x{iterations} on {fabric}"),
            |b| b.iter(|| runner::run(&plan, &mut Discard).expect("the run succeeds")),
        );
    }
}

criterion_group!(benches, one_emulated_run);
criterion_main!(benches);
