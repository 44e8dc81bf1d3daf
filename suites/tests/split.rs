//! The shared driver's two services for application kernels: each sample as the longest any
//! rank took (`Measure::across_ranks`, NPB's timing) or as rank 0's own, and each sample's
//! compute time reduced over the ranks into `Point::split`. Rank 1 computes ten times what rank
//! 0 does, in the virtual time of an emulated fabric, so the longest rank, rank 0 and the mean
//! are far apart.

mod common;

use common::run_on_rapidio;

use bench_core::measure::{Layout, Metric, NbodyLayout, Point, PointKey};
use suites::npb::Meter;
use suites::{
    Bench, Measure, OptionDef, ParamError, RankRule, Schedule, Suite, SuiteArgs, SuiteError,
};
use transports::comm::Comm;

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

/// Rank 0's point from a run of `suite` on two rapidio ranks.
fn point(suite: &Uneven) -> Point {
    run_on_rapidio(suite).measured.pop().expect("one point")
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
