//! The shared driver's two services for application kernels: each sample as the longest any
//! rank took (`Measure::across_ranks`, NPB's timing) or as rank 0's own, and each sample's
//! compute time reduced over the ranks into `Point::split`. Rank 1 computes ten times what rank
//! 0 does, in the virtual time of an emulated fabric, so the longest rank, rank 0 and the mean
//! are far apart.

use std::sync::Arc;
use std::thread;

use bench_core::bootstrap::{local, Bootstrap};
use bench_core::measure::{Layout, Metric, NbodyLayout, Point, PointKey};
use suites::npb::Meter;
use suites::{
    drive, Bench, Measure, OptionDef, ParamError, RankRule, Report, Schedule, Suite, SuiteArgs,
    SuiteError,
};
use transports::comm::Comm;
use transports::fabric::FabricContext;
use transports::registry;

/// Arithmetic that takes time proportional to `n`.
fn work(n: u64) -> u64 {
    let mut x = 1u64;
    for i in 0..n {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
    }
    x
}

struct Uneven {
    across_ranks: bool,
}

struct UnevenBench<'c> {
    comm: &'c Comm,
    across_ranks: bool,
    compute_ns: u64,
}

impl Bench for UnevenBench<'_> {
    fn at(&mut self, _key: &PointKey) -> Result<Measure, SuiteError> {
        Ok(Measure {
            iterations: 3,
            warmup: 0,
            validate: false,
            metrics: vec![Metric::latency_us(1.0)],
            across_ranks: self.across_ranks,
        })
    }

    fn iteration(&mut self, _i: u64) -> Result<(), SuiteError> {
        let mut meter = Meter::new(self.comm);
        let n = if self.comm.rank() == 1 {
            20_000_000
        } else {
            2_000_000
        };
        std::hint::black_box(meter.compute(|| work(n))?);
        self.compute_ns = meter.compute_ns();
        Ok(())
    }

    fn compute_ns(&self) -> Option<u64> {
        Some(self.compute_ns)
    }
}

impl Suite for Uneven {
    type Params = ();
    type Bench<'c> = UnevenBench<'c>;
    fn name(&self) -> &'static str {
        "uneven"
    }
    fn summary(&self) -> &'static str {
        "rank 1 computes ten times what rank 0 does"
    }
    fn ranks(&self) -> RankRule {
        RankRule::Exactly(2)
    }
    fn options(&self) -> &'static [OptionDef] {
        &[]
    }
    fn params(&self, _args: &SuiteArgs) -> Result<(), ParamError> {
        Ok(())
    }
    fn layout(&self, _p: &()) -> Layout {
        Layout::Nbody(NbodyLayout {
            bodies: 0,
            steps: 0,
            exchange: String::new(),
            dt: 0.0,
            softening: 0.0,
        })
    }
    fn schedule(&self, _p: &()) -> Schedule {
        Schedule::Fixed(vec![PointKey::params([("kernel", "uneven".to_string())])])
    }
    fn start<'c>(&'c self, comm: &'c Comm, _p: &'c ()) -> Result<UnevenBench<'c>, SuiteError> {
        Ok(UnevenBench {
            comm,
            across_ranks: self.across_ranks,
            compute_ns: 0,
        })
    }
}

#[derive(Default)]
struct Points(Vec<Point>);

impl Report for Points {
    fn starting(&mut self, _key: &PointKey) -> Result<(), SuiteError> {
        Ok(())
    }
    fn measured(&mut self, point: Point) -> Result<(), SuiteError> {
        self.0.push(point);
        Ok(())
    }
    fn note(&mut self, _text: &str) -> Result<(), SuiteError> {
        Ok(())
    }
}

/// Rank 0's point from a run of `suite` on two rapidio ranks.
fn point(suite: &Uneven) -> Point {
    let registry = registry::registry(&[]);
    let settings = registry.defaults();
    let def = registry::find("rapidio").unwrap();
    let (boots, _events) = local::group(2);
    let mut reports: Vec<Points> = thread::scope(|s| {
        let hs: Vec<_> = boots
            .into_iter()
            .map(|b| {
                let settings = &settings;
                s.spawn(move || {
                    let boot: Arc<dyn Bootstrap> = Arc::new(b);
                    let ctx = FabricContext { boot, settings };
                    let comm = Comm::new((def.connect)(&ctx).unwrap());
                    let mut report = Points::default();
                    drive(suite, &comm, &(), &mut report).unwrap();
                    comm.finish().unwrap();
                    report
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(reports[1].0.is_empty(), "only rank 0 hands points over");
    reports.swap_remove(0).0.pop().expect("one point")
}

#[test]
fn samples_are_the_longest_rank_or_rank_0_and_the_split_is_the_mean_over_ranks() {
    for across_ranks in [true, false] {
        let p = point(&Uneven { across_ranks });
        let split = p.split.clone().expect("the bench splits its time");
        assert_eq!(split.compute_ns.len(), 3);
        assert_eq!(split.comm_ns.len(), 3);
        for i in 0..3 {
            let (sample, mean) = (p.samples_ns[i] as f64, split.compute_ns[i] as f64);
            // Rank 1 computes 10 units, rank 0 one: the mean is 5.5, the longest 10.
            if across_ranks {
                assert!(sample > 1.5 * mean, "longest {sample} vs mean {mean}");
            } else {
                assert!(sample < 0.5 * mean, "rank 0's {sample} vs mean {mean}");
            }
            // Nothing but computing happens in an iteration.
            assert!(split.comm_ns[i] as f64 <= 0.05 * mean, "{split:?}");
        }
    }
}
