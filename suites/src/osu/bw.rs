//! osu_bw: rank 0 streams a window of nonblocking sends, rank 1 answers each window with a
//! 1-byte acknowledgement; bandwidth is total bytes over total time.

use bench_core::measure::{Layout, Metric, Point};
use transports::comm::Comm;

use super::{check_pattern, prepare, sizes, Rule, DEFAULT_WINDOW, OSU_VERSION};
use crate::buffer::AlignedBuf;
use crate::{Emit, RankRule, RunOptions, Suite, SuiteError};

pub(super) const RULE: Rule = Rule {
    small_iters: 100,
    small_skip: 10,
    large_iters: 20,
    large_skip: 2,
};
const TAG: i32 = 100;
const ACK_TAG: i32 = 101;
const ACK_BYTES: usize = 1;

pub struct Bw;

impl Suite for Bw {
    fn name(&self) -> &'static str {
        "osu_bw"
    }

    fn summary(&self) -> &'static str {
        "unidirectional bandwidth with a window of nonblocking sends (OSU 7.4 osu_bw)"
    }

    fn ranks(&self) -> RankRule {
        RankRule::Exactly(2)
    }

    fn layout(&self) -> Layout {
        Layout {
            title: format!("OSU MPI Bandwidth Test {OSU_VERSION}"),
            column: "Bandwidth (MB/s)".into(),
        }
    }

    fn sizes(&self, opts: &RunOptions) -> Vec<u64> {
        sizes(1, opts)
    }

    fn run(&self, comm: &Comm, opts: &RunOptions, emit: &mut Emit<'_>) -> Result<(), SuiteError> {
        let sizes = self.sizes(opts);
        let window = opts.window.unwrap_or(DEFAULT_WINDOW) as usize;
        let max = *sizes.last().unwrap_or(&0) as usize;
        let mut sbuf = AlignedBuf::new(max.max(ACK_BYTES), b'a');
        let mut rbuf = AlignedBuf::new(max.max(ACK_BYTES), b'b');
        let me = comm.rank();
        for &size in &sizes {
            let (iters, skip) = RULE.for_size(size, opts);
            comm.set_stage(&format!("osu_bw size {size}"));
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
                    comm.isend_window(&sbuf.as_slice()[..n], window, 1, TAG)?
                        .wait()?;
                    comm.recv(&mut rbuf.as_mut_slice()[..ACK_BYTES], 1, ACK_TAG)?;
                } else {
                    comm.irecv_window(&mut rbuf.as_mut_slice()[..n], window, 0, TAG)?
                        .wait()?;
                    // Check before acknowledging: the ack releases the next window.
                    if opts.validate {
                        check_pattern(&rbuf.as_slice()[..n], i, size)?;
                    }
                    comm.send(&sbuf.as_slice()[..ACK_BYTES], 0, ACK_TAG)?;
                }
                if i >= skip {
                    let t = comm.now();
                    samples.push(t - prev);
                    prev = t;
                }
            }
            comm.barrier()?;
            if me == 0 {
                emit(Point {
                    size,
                    metric: Metric::Bandwidth {
                        bytes_per_sample: (size * window as u64) as f64,
                    },
                    samples_ns: samples,
                    validated: opts.validate.then_some(true),
                })?;
            }
        }
        Ok(())
    }
}
