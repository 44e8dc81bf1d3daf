//! MPICH's mpptest (its perftest package), the measurement fabric bring-up guides ask for:
//! `mpptest -size 0 1048576 128 -sync -quick -logscale`. Its options keep mpptest's spelling
//! and meaning ([`options`], [`params`]); its timing is the minimum over repeated averages,
//! with `-auto` placing sizes where the curve bends ([`sampler`]); its tests are round trips,
//! head-to-head exchanges, bisection and halo exchanges ([`pair`], [`halo`]) and collectives
//! ([`gop`]). What it prints — mpptest's data layout and gnuplot script, and the breakpoints
//! fabbench finds in the curve — lives with the other text formats, in `results`.

pub mod gop;
pub mod halo;
pub mod options;
pub mod pair;
pub mod params;
pub mod sampler;

pub use options::OPTIONS;
pub use params::{GopOp, MpptestParams, Pattern, Protocol, Sizes, Test};

use bench_core::measure::{Better, Derivation, Layout, Metric, MpptestLayout, PointKey};
use transports::comm::Comm;
use transports::transport::ReduceOp;

use crate::options::{OptionDef, SuiteArgs};
use crate::ranks::RankRule;
use crate::suite::{Bench, Measure, ParamError, Schedule, Suite, SuiteError};
use gop::GopBench;
use halo::HaloBench;
use pair::{bisect_roles, pair_role, PairBench};
use sampler::{MinOfAverages, N_AVG};

/// mpptest as a registered suite.
pub static MPPTEST: Mpptest = Mpptest;

pub struct Mpptest;

/// One rank's bench for whichever test the parameters chose.
pub enum MpptestBench<'c> {
    Pair {
        bench: PairBench<'c>,
        /// Bytes per iteration the rate counts, per byte of message (mpptest's RateScale).
        rate_scale: f64,
    },
    Halo {
        bench: HaloBench<'c>,
        rate_scale: f64,
    },
    Gop(GopBench<'c>),
}

fn time_metric(name: &str, divisor: f64) -> Metric {
    Metric {
        name: name.into(),
        unit: "us".into(),
        better: Better::Lower,
        derive: Derivation::Time {
            divisor,
            unit_ns: 1e3,
        },
    }
}

fn rate_metric(unit: &str, per_sample: f64) -> Metric {
    Metric {
        name: "rate".into(),
        unit: unit.into(),
        better: Better::Higher,
        derive: Derivation::Rate {
            amount: per_sample,
            unit: 1e6,
        },
    }
}

impl MpptestBench<'_> {
    /// What one sample of `size` reports: mpptest's time (half a round trip for pairs, one
    /// exchange for halos, one operation for collectives) and its rate.
    fn metrics(&self, size: u64) -> Vec<Metric> {
        let len = size as f64;
        match self {
            MpptestBench::Pair { rate_scale, .. } => vec![
                Metric::latency_us(2.0),
                rate_metric("MB/s", len * rate_scale),
            ],
            MpptestBench::Halo { rate_scale, .. } => vec![
                time_metric("time", 1.0),
                rate_metric("MB/s", len * rate_scale),
            ],
            MpptestBench::Gop(g) => {
                let unit = match g.op() {
                    GopOp::Dsum => "Mdoubles/s",
                    GopOp::Isum | GopOp::Colx => "Mints/s",
                    GopOp::Barrier | GopOp::Bcast => "MB/s",
                };
                vec![time_metric("time", 1.0), rate_metric(unit, len)]
            }
        }
    }

    fn set_size(&mut self, n: usize) {
        match self {
            MpptestBench::Pair { bench, .. } => bench.n = n,
            MpptestBench::Halo { bench, .. } => bench.n = n,
            MpptestBench::Gop(g) => g.n = n,
        }
    }
}

impl Bench for MpptestBench<'_> {
    fn at(&mut self, key: &PointKey) -> Result<Measure, SuiteError> {
        let size = key
            .size
            .ok_or_else(|| ParamError(format!("mpptest measures sizes; got {key}")))?;
        let n_avg = key
            .params
            .get(N_AVG)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| ParamError(format!("mpptest's test {key} has no {N_AVG}")))?;
        self.set_size(size as usize);
        Ok(Measure {
            iterations: n_avg,
            warmup: 0,
            validate: matches!(self, MpptestBench::Gop(g) if g.checks()),
            metrics: self.metrics(size),
            across_ranks: false,
        })
    }

    fn prepare(&mut self, i: u64) -> Result<(), SuiteError> {
        if let MpptestBench::Gop(g) = self {
            g.prepare(i);
        }
        Ok(())
    }

    #[inline]
    fn iteration(&mut self, i: u64) -> Result<(), SuiteError> {
        match self {
            MpptestBench::Pair { bench, .. } => bench.iteration(),
            MpptestBench::Halo { bench, .. } => bench.iteration(),
            MpptestBench::Gop(g) => g.iteration(i),
        }
    }

    fn check(&mut self, i: u64) -> Result<(), SuiteError> {
        match self {
            MpptestBench::Gop(g) => g.check(i),
            _ => Ok(()),
        }
    }
}

/// The largest size a run may measure (buffers are allocated once, at that size).
fn max_size(p: &MpptestParams) -> u64 {
    match &p.sizes {
        Sizes::Listed { list } => list.iter().copied().max().unwrap_or(0),
        Sizes::Auto { last, .. } => *last,
    }
}

/// mpptest's name for the test, as its title prints it.
fn protocol_name(test: &Test) -> String {
    let blocking = |p: &Protocol| match p {
        Protocol::Sync => "blocking",
        Protocol::Async => "nonblocking",
    };
    match test {
        Test::Pair { protocol, .. } => blocking(protocol).into(),
        Test::Bisect { protocol, .. } => format!("{}-bisect", blocking(protocol)),
        Test::Halo { partners } => format!("halo exchange ({partners}) - waitall"),
        Test::Gop { op } => op.name().into(),
    }
}

impl Suite for Mpptest {
    type Params = MpptestParams;
    type Bench<'c> = MpptestBench<'c>;

    fn name(&self) -> &'static str {
        "mpptest"
    }

    fn summary(&self) -> &'static str {
        "MPICH's mpptest: minimum of repeated averages, -auto sizes, breakpoints found"
    }

    fn ranks(&self) -> RankRule {
        RankRule::AtLeast(2)
    }

    fn options(&self) -> &'static [OptionDef] {
        OPTIONS
    }

    fn params(&self, args: &SuiteArgs) -> Result<MpptestParams, ParamError> {
        MpptestParams::from_args(args)
    }

    fn check(&self, p: &MpptestParams, ranks: usize) -> Result<(), ParamError> {
        if let Test::Bisect {
            distance: Some(d), ..
        } = p.test
        {
            if d >= ranks {
                return Err(ParamError(format!(
                    "-bisectdist {d}: must be below the rank count ({ranks})"
                )));
            }
        }
        Ok(())
    }

    fn layout(&self, p: &MpptestParams) -> Layout {
        let units = match p.test {
            Test::Gop { op } => op.units(),
            _ => "(bytes)",
        };
        Layout::Mpptest(MpptestLayout {
            protocol: protocol_name(&p.test),
            units: units.into(),
            gnuplot: p.output.gnuplot,
            givedy: p.output.givedy,
            rate: p.output.rate,
            info: p.output.info,
            logscale: p.output.logscale,
            fname: p.output.fname.clone(),
        })
    }

    fn schedule(&self, p: &MpptestParams) -> Schedule {
        Schedule::Sampled(Box::new(MinOfAverages::new(
            p.timing.clone(),
            &p.sizes,
            p.initial_sizes(),
        )))
    }

    fn start<'c>(
        &'c self,
        comm: &'c Comm,
        p: &'c MpptestParams,
    ) -> Result<MpptestBench<'c>, SuiteError> {
        let max = max_size(p) as usize;
        Ok(match p.test {
            Test::Pair { pattern, protocol } => MpptestBench::Pair {
                bench: PairBench::new(comm, pair_role(comm.rank()), pattern, protocol, max)?,
                rate_scale: 2.0,
            },
            Test::Bisect {
                pattern,
                protocol,
                distance,
            } => {
                let d = distance.unwrap_or((comm.size() / 2).max(1));
                let role = bisect_roles(comm.size(), d)[comm.rank()];
                MpptestBench::Pair {
                    bench: PairBench::new(comm, role, pattern, protocol, max)?,
                    rate_scale: comm.size() as f64,
                }
            }
            Test::Halo { partners } => {
                let bench = HaloBench::new(comm, partners, max)?;
                // The rate counts the most partners any rank has, as mpptest does.
                let mut most = [0u64];
                comm.allreduce(&[bench.partner_count() as u64], &mut most, ReduceOp::Max)?;
                MpptestBench::Halo {
                    bench,
                    rate_scale: most[0] as f64,
                }
            }
            Test::Gop { op } => MpptestBench::Gop(GopBench::new(comm, op, max)),
        })
    }
}
