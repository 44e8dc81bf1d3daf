//! osu_latency: ping-pong between ranks 0 and 1; latency is half the round trip.

use bench_core::measure::Metric;

use super::{Io, OsuTest, Rule};
use crate::suite::SuiteError;

const TAG: i32 = 1;

pub struct Latency;

impl OsuTest for Latency {
    const NAME: &'static str = "osu_latency";
    const SUMMARY: &'static str = "ping-pong latency between two ranks (OSU 7.4 osu_latency)";
    const TITLE: &'static str = "OSU MPI Latency Test";
    const COLUMN: &'static str = "Avg Latency(us)";
    const MIN_SIZE: u64 = 0;
    const RULE: Rule = Rule {
        small_iters: 10_000,
        small_skip: 100,
        large_iters: 1000,
        large_skip: 10,
    };
    const CHECK_AFTER: bool = true;
    const WINDOWED: bool = false;

    fn metric(_size: u64, _window: u64) -> Metric {
        Metric::latency_us(2.0)
    }

    fn traffic(size: u64, _window: u64) -> (u64, u64) {
        (2, 2 * size)
    }

    #[inline]
    fn iteration(io: &mut Io<'_>, _i: u64) -> Result<(), SuiteError> {
        let (comm, n, peer) = (io.comm, io.n, io.peer);
        if io.me == 0 {
            comm.send(&io.sbuf.as_slice()[..n], peer, TAG)?;
            comm.recv(&mut io.rbuf.as_mut_slice()[..n], peer, TAG)?;
        } else {
            comm.recv(&mut io.rbuf.as_mut_slice()[..n], peer, TAG)?;
            comm.send(&io.sbuf.as_slice()[..n], peer, TAG)?;
        }
        Ok(())
    }
}
