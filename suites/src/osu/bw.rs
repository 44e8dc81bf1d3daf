//! osu_bw: rank 0 streams a window of nonblocking sends, rank 1 answers each window with a
//! 1-byte acknowledgement; bandwidth is total bytes over total time.

use bench_core::measure::Metric;

use super::{check_pattern, Io, OsuTest, Rule};
use crate::suite::SuiteError;

const TAG: i32 = 100;
const ACK_TAG: i32 = 101;
const ACK_BYTES: usize = 1;

pub struct Bw;

impl OsuTest for Bw {
    const NAME: &'static str = "osu_bw";
    const SUMMARY: &'static str =
        "unidirectional bandwidth with a window of nonblocking sends (OSU 7.4 osu_bw)";
    const TITLE: &'static str = "OSU MPI Bandwidth Test";
    const COLUMN: &'static str = "Bandwidth (MB/s)";
    const MIN_SIZE: u64 = 1;
    const RULE: Rule = Rule {
        small_iters: 100,
        small_skip: 10,
        large_iters: 20,
        large_skip: 2,
    };
    const CHECK_AFTER: bool = false;
    const WINDOWED: bool = true;

    fn metric(size: u64, window: u64) -> Metric {
        Metric::bandwidth_mbs((size * window) as f64)
    }

    fn traffic(size: u64, window: u64) -> (u64, u64) {
        (window + 1, window * size + 1)
    }

    #[inline]
    fn iteration(io: &mut Io<'_>, i: u64) -> Result<(), SuiteError> {
        let (comm, n, window) = (io.comm, io.n, io.window);
        if io.me == 0 {
            comm.isend_window(&io.sbuf.as_slice()[..n], window, 1, TAG)?
                .wait()?;
            comm.recv(&mut io.rbuf.as_mut_slice()[..ACK_BYTES], 1, ACK_TAG)?;
        } else {
            comm.irecv_window(&mut io.rbuf.as_mut_slice()[..n], window, 0, TAG)?
                .wait()?;
            // Check before acknowledging: the ack releases the next window.
            if io.params.validate {
                check_pattern(&io.rbuf.as_slice()[..n], i, io.size)?;
            }
            comm.send(&io.sbuf.as_slice()[..ACK_BYTES], 0, ACK_TAG)?;
        }
        Ok(())
    }
}
