//! osu_bibw: both ranks post a window of receives and a window of sends at once; bandwidth
//! counts the bytes of both directions.

use bench_core::measure::{Layout, Metric, Point};
use transports::comm::Comm;

use super::{check_pattern, prepare, sizes, DEFAULT_WINDOW, OSU_VERSION};
use crate::buffer::AlignedBuf;
use crate::{Emit, RankRule, RunOptions, Suite, SuiteError};

/// OSU's tags: rank 0 sends with 100 and receives with 10.
const TAG_FROM_0: i32 = 100;
const TAG_FROM_1: i32 = 10;

pub struct Bibw;

impl Suite for Bibw {
    fn name(&self) -> &'static str {
        "osu_bibw"
    }

    fn summary(&self) -> &'static str {
        "bidirectional bandwidth, both ranks sending a window at once (OSU 7.4 osu_bibw)"
    }

    fn ranks(&self) -> RankRule {
        RankRule::Exactly(2)
    }

    fn layout(&self) -> Layout {
        Layout {
            title: format!("OSU MPI Bi-Directional Bandwidth Test {OSU_VERSION}"),
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
        let mut sbuf = AlignedBuf::new(max, b'a');
        let mut rbuf = AlignedBuf::new(max, b'b');
        let me = comm.rank();
        let peer = 1 - me;
        let (send_tag, recv_tag) = if me == 0 {
            (TAG_FROM_0, TAG_FROM_1)
        } else {
            (TAG_FROM_1, TAG_FROM_0)
        };
        for &size in &sizes {
            let (iters, skip) = super::bw::RULE.for_size(size, opts);
            comm.set_stage(&format!("osu_bibw size {size}"));
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
                {
                    let recvs =
                        comm.irecv_window(&mut rbuf.as_mut_slice()[..n], window, peer, recv_tag)?;
                    let sends = comm.isend_window(&sbuf.as_slice()[..n], window, peer, send_tag)?;
                    if me == 0 {
                        sends.wait()?;
                        recvs.wait()?;
                    } else {
                        recvs.wait()?;
                        sends.wait()?;
                    }
                }
                if i >= skip {
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
                    metric: Metric::Bandwidth {
                        bytes_per_sample: (2 * size * window as u64) as f64,
                    },
                    samples_ns: samples,
                    validated: opts.validate.then_some(true),
                })?;
            }
        }
        Ok(())
    }
}
