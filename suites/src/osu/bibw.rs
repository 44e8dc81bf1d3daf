//! osu_bibw: both ranks post a window of receives and a window of sends at once; bandwidth
//! counts the bytes of both directions.

use bench_core::measure::Metric;

use super::{bw::Bw, Io, OsuTest, Rule};
use crate::suite::SuiteError;

/// OSU's tags: rank 0 sends with 100 and receives with 10.
const TAG_FROM_0: i32 = 100;
const TAG_FROM_1: i32 = 10;

pub struct Bibw;

impl OsuTest for Bibw {
    const NAME: &'static str = "osu_bibw";
    const SUMMARY: &'static str =
        "bidirectional bandwidth, both ranks sending a window at once (OSU 7.4 osu_bibw)";
    const TITLE: &'static str = "OSU MPI Bi-Directional Bandwidth Test";
    const COLUMN: &'static str = "Bandwidth (MB/s)";
    const MIN_SIZE: u64 = 1;
    const RULE: Rule = Bw::RULE;
    const CHECK_AFTER: bool = true;
    const WINDOWED: bool = true;

    fn metric(size: u64, window: u64) -> Metric {
        Metric::bandwidth_mbs((2 * size * window) as f64)
    }

    fn traffic(size: u64, window: u64) -> (u64, u64) {
        (2 * window, 2 * window * size)
    }

    #[inline]
    fn iteration(io: &mut Io<'_>, _i: u64) -> Result<(), SuiteError> {
        let (comm, n, window, peer) = (io.comm, io.n, io.window, io.peer);
        let (send_tag, recv_tag) = if io.me == 0 {
            (TAG_FROM_0, TAG_FROM_1)
        } else {
            (TAG_FROM_1, TAG_FROM_0)
        };
        let recvs = comm.irecv_window(&mut io.rbuf.as_mut_slice()[..n], window, peer, recv_tag)?;
        let sends = comm.isend_window(&io.sbuf.as_slice()[..n], window, peer, send_tag)?;
        if io.me == 0 {
            sends.wait()?;
            recvs.wait()?;
        } else {
            recvs.wait()?;
            sends.wait()?;
        }
        Ok(())
    }
}
