//! osu_latency: ping-pong between ranks 0 and 1; latency is half the round trip.

use bench_core::measure::{Layout, Metric, Point};
use transports::comm::Comm;

use super::{check_pattern, prepare, sizes, Rule, OSU_VERSION};
use crate::buffer::AlignedBuf;
use crate::{Emit, RankRule, RunOptions, Suite, SuiteError};

const RULE: Rule = Rule {
    small_iters: 10_000,
    small_skip: 100,
    large_iters: 1000,
    large_skip: 10,
};
const TAG: i32 = 1;

pub struct Latency;

impl Suite for Latency {
    fn name(&self) -> &'static str {
        "osu_latency"
    }

    fn summary(&self) -> &'static str {
        "ping-pong latency between two ranks (OSU 7.4 osu_latency)"
    }

    fn ranks(&self) -> RankRule {
        RankRule::Exactly(2)
    }

    fn layout(&self) -> Layout {
        Layout {
            title: format!("OSU MPI Latency Test {OSU_VERSION}"),
            column: "Avg Latency(us)".into(),
        }
    }

    fn sizes(&self, opts: &RunOptions) -> Vec<u64> {
        sizes(0, opts)
    }

    fn run(&self, comm: &Comm, opts: &RunOptions, emit: &mut Emit<'_>) -> Result<(), SuiteError> {
        let sizes = self.sizes(opts);
        let max = *sizes.last().unwrap_or(&0) as usize;
        let mut sbuf = AlignedBuf::new(max, b'a');
        let mut rbuf = AlignedBuf::new(max, b'b');
        let me = comm.rank();
        let peer = 1 - me;
        for &size in &sizes {
            let (iters, skip) = RULE.for_size(size, opts);
            comm.set_stage(&format!("osu_latency size {size}"));
            let n = size as usize;
            let mut samples = Vec::with_capacity(iters as usize);
            comm.barrier()?;
            let mut prev = 0;
            for i in 0..iters + skip {
                if opts.validate {
                    prepare(
                        &mut sbuf.as_mut_slice()[..n],
                        &mut rbuf.as_mut_slice()[..n],
                        i,
                        size,
                    );
                }
                if i == skip || (opts.validate && i > skip) {
                    prev = comm.now();
                }
                if me == 0 {
                    comm.send(&sbuf.as_slice()[..n], peer, TAG)?;
                    comm.recv(&mut rbuf.as_mut_slice()[..n], peer, TAG)?;
                } else {
                    comm.recv(&mut rbuf.as_mut_slice()[..n], peer, TAG)?;
                    comm.send(&sbuf.as_slice()[..n], peer, TAG)?;
                }
                if i >= skip {
                    // One clock read per iteration when not validating: the end of one
                    // round trip is the start of the next.
                    let t = comm.now();
                    samples.push(t - prev);
                    prev = t;
                }
                if opts.validate {
                    check_pattern(&rbuf.as_slice()[..n], i, size)?;
                }
            }
            comm.barrier()?;
            if me == 0 {
                emit(Point {
                    size,
                    metric: Metric::Latency { divisor: 2.0 },
                    samples_ns: samples,
                    validated: opts.validate.then_some(true),
                })?;
            }
        }
        Ok(())
    }
}
