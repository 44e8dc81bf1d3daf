//! One rank's part in the loggp patterns: buffers, the delay the overhead patterns need, and
//! each pattern's iteration. Only ranks 0 and 1 exchange data; every rank takes part in the
//! point's end (below) and the driver's barriers.
//!
//! Three things keep every sample exact (in virtual time, to the nanosecond) and free of
//! waiting that is not the pattern's:
//! - The delay of `send` and `recv` is sized before the point from a few untimed ping-pongs at
//!   its size, and timed around with `comm.now()` so the driver takes it off the sample.
//! - In `send`, rank 1 posts its receive and then says so; rank 0 waits for that (untimed)
//!   before it sends, so no message arrives unexpected: not the first after the driver's
//!   barrier, which rank 1 may leave later, nor one after a rendezvous, whose wait can end
//!   before rank 1 has taken its data.
//! - A point ends with rank 0 telling every other rank it is done, in its last iteration and
//!   outside the timed calls. Otherwise a rank that has finished its part enters the driver's
//!   closing barrier at once, and rank 0, still in its last timed call, takes that barrier's
//!   message and pays for it in the last sample (osu_latency's last sample carries it; a few
//!   iterations' mean would then be off by a share of a receive's cost).

use bench_core::measure::{Metric, PointKey};
use transports::comm::Comm;

use super::params::{LoggpParams, Pattern};
use crate::buffer::AlignedBuf;
use crate::osu::{check_pattern, prepare};
use crate::suite::{Bench, Measure, ParamError, SuiteError};

// Tags of the suite's own, apart from one another: a control message can never match a
// payload's receive.
const TAG_PINGPONG: i32 = 201;
const TAG_STREAM: i32 = 202;
const TAG_ACK: i32 = 203;
const TAG_SEND: i32 = 204;
const TAG_RECV: i32 = 205;
const TAG_GO: i32 = 206;
const TAG_PROBE: i32 = 207;
const TAG_READY: i32 = 208;
const TAG_DONE: i32 = 209;

/// osu_bw's acknowledgement of a window.
const ACK_BYTES: usize = 1;

/// Untimed ping-pongs that size the delay.
const PROBES: usize = 5;

/// The delay of the overhead patterns after a probe round trip of `rtt_ns` at the size: three
/// round trips and a microsecond, long enough for the message and its protocol to be done.
pub fn delay_ns(rtt_ns: u64) -> u64 {
    3 * rtt_ns + 1000
}

/// One rank's state for the loggp suite.
pub struct LoggpBench<'c> {
    comm: &'c Comm,
    params: &'c LoggpParams,
    sbuf: AlignedBuf,
    rbuf: AlignedBuf,
    me: usize,
    size: u64,
    /// `size` as a slice length.
    n: usize,
    pattern: Pattern,
    /// The delay of `send` and `recv` at this size.
    delay_ns: u64,
    /// Index of the point's last iteration (warm-up and timed).
    last: u64,
    /// Time of the current iteration not to count.
    excluded: u64,
}

impl<'c> LoggpBench<'c> {
    /// Buffers for the largest size.
    pub fn new(comm: &'c Comm, params: &'c LoggpParams) -> Result<LoggpBench<'c>, SuiteError> {
        let max = params.size_list().into_iter().max().unwrap_or(0) as usize;
        Ok(LoggpBench {
            comm,
            params,
            // At least a byte: the stream's acknowledgement uses one.
            sbuf: AlignedBuf::new(max.max(ACK_BYTES), b'a')?,
            rbuf: AlignedBuf::new(max.max(ACK_BYTES), b'b')?,
            me: comm.rank(),
            size: 0,
            n: 0,
            pattern: Pattern::Pingpong,
            delay_ns: 0,
            last: 0,
            excluded: 0,
        })
    }

    /// The delay for this size from untimed ping-pongs between ranks 0 and 1 (the others have
    /// no part and no delay). The median round trip: on a loaded host one probe that lost the
    /// CPU would otherwise stretch every iteration's delay, and a long spin invites the
    /// scheduler to take the CPU again while the peer is needed.
    fn size_delay(&mut self) -> Result<u64, SuiteError> {
        if self.me > 1 {
            return Ok(0);
        }
        let (comm, n) = (self.comm, self.n);
        let mut trips = Vec::with_capacity(PROBES);
        for _ in 0..PROBES {
            let t = comm.now();
            if self.me == 0 {
                comm.send(&self.sbuf.as_slice()[..n], 1, TAG_PROBE)?;
                comm.recv(&mut self.rbuf.as_mut_slice()[..n], 1, TAG_PROBE)?;
            } else {
                comm.recv(&mut self.rbuf.as_mut_slice()[..n], 0, TAG_PROBE)?;
                comm.send(&self.sbuf.as_slice()[..n], 0, TAG_PROBE)?;
            }
            trips.push(comm.now() - t);
        }
        trips.sort_unstable();
        Ok(delay_ns(trips[PROBES / 2]))
    }

    /// The point's end, in its last iteration: rank 0 (outside its timed calls) tells every
    /// other rank it is done, and they wait for it before they leave for the driver's barrier.
    fn end_point(&mut self) -> Result<(), SuiteError> {
        let comm = self.comm;
        if self.me == 0 {
            let t = comm.now();
            for r in 1..comm.size() {
                comm.send(&[], r, TAG_DONE)?;
            }
            self.excluded += comm.now() - t;
        } else {
            comm.recv(&mut [], 0, TAG_DONE)?;
        }
        Ok(())
    }

    /// Ranks 0 and 1's part of one iteration.
    fn pattern_iteration(&mut self, i: u64) -> Result<(), SuiteError> {
        let (comm, n, me) = (self.comm, self.n, self.me);
        match (self.pattern, me) {
            (Pattern::Pingpong, 0) => {
                comm.send(&self.sbuf.as_slice()[..n], 1, TAG_PINGPONG)?;
                comm.recv(&mut self.rbuf.as_mut_slice()[..n], 1, TAG_PINGPONG)?;
            }
            (Pattern::Pingpong, _) => {
                comm.recv(&mut self.rbuf.as_mut_slice()[..n], 0, TAG_PINGPONG)?;
                comm.send(&self.sbuf.as_slice()[..n], 0, TAG_PINGPONG)?;
            }
            (Pattern::Stream, 0) => {
                let w = self.params.window as usize;
                comm.isend_window(&self.sbuf.as_slice()[..n], w, 1, TAG_STREAM)?
                    .wait()?;
                comm.recv(&mut self.rbuf.as_mut_slice()[..ACK_BYTES], 1, TAG_ACK)?;
            }
            (Pattern::Stream, _) => {
                let w = self.params.window as usize;
                comm.irecv_window(&mut self.rbuf.as_mut_slice()[..n], w, 0, TAG_STREAM)?
                    .wait()?;
                // As osu_bw: check before acknowledging, since the ack releases the next window.
                if self.params.validate {
                    check_pattern(&self.rbuf.as_slice()[..n], i, self.size)?;
                }
                comm.send(&self.sbuf.as_slice()[..ACK_BYTES], 0, TAG_ACK)?;
            }
            (Pattern::Send, 0) => {
                // Untimed: rank 1 has posted its receive.
                let t = comm.now();
                comm.recv(&mut [], 1, TAG_READY)?;
                self.excluded += comm.now() - t;
                let req = comm.isend(&self.sbuf.as_slice()[..n], 1, TAG_SEND)?;
                let t = comm.now();
                comm.delay(self.delay_ns)?;
                self.excluded += comm.now() - t;
                req.wait()?;
            }
            (Pattern::Send, _) => {
                let req = comm.irecv(&mut self.rbuf.as_mut_slice()[..n], 0, TAG_SEND)?;
                comm.send(&[], 0, TAG_READY)?;
                req.wait()?;
            }
            (Pattern::Recv, 0) => {
                let req = comm.irecv(&mut self.rbuf.as_mut_slice()[..n], 1, TAG_RECV)?;
                // The message cannot come before rank 1 is told to send it, after the receive
                // is posted; the telling and the delay are not counted.
                let t = comm.now();
                comm.send(&[], 1, TAG_GO)?;
                comm.delay(self.delay_ns)?;
                self.excluded += comm.now() - t;
                req.wait()?;
            }
            (Pattern::Recv, _) => {
                comm.recv(&mut [], 0, TAG_GO)?;
                comm.send(&self.sbuf.as_slice()[..n], 0, TAG_RECV)?;
            }
        }
        Ok(())
    }

    /// Which ranks check received data after an iteration (the stream's receiver checks
    /// inside it, as osu_bw's does).
    fn checks_after(&self) -> bool {
        match self.pattern {
            Pattern::Pingpong => self.me < 2,
            Pattern::Stream => false,
            Pattern::Send => self.me == 1,
            Pattern::Recv => self.me == 0,
        }
    }
}

impl Bench for LoggpBench<'_> {
    fn at(&mut self, key: &PointKey) -> Result<Measure, SuiteError> {
        let size = key
            .size
            .ok_or_else(|| ParamError(format!("loggp measures message sizes; got {key}")))?;
        let pattern = key
            .params
            .get("pattern")
            .and_then(|w| Pattern::from_name(w))
            .ok_or_else(|| ParamError(format!("loggp needs a pattern; got {key}")))?;
        self.size = size;
        self.n = size as usize;
        self.pattern = pattern;
        self.excluded = 0;
        self.delay_ns = match pattern {
            Pattern::Send | Pattern::Recv => self.size_delay()?,
            Pattern::Pingpong | Pattern::Stream => 0,
        };
        let (iterations, warmup) = self.params.counts(pattern, size);
        self.last = iterations + warmup - 1;
        let per_sample = match pattern {
            Pattern::Pingpong => 2.0,
            Pattern::Stream => self.params.window as f64,
            Pattern::Send | Pattern::Recv => 1.0,
        };
        Ok(Measure {
            iterations,
            warmup,
            validate: self.params.validate,
            metrics: vec![Metric::latency_us(per_sample)],
            across_ranks: false,
        })
    }

    fn prepare(&mut self, i: u64) -> Result<(), SuiteError> {
        let n = self.n;
        prepare(
            &mut self.sbuf.as_mut_slice()[..n],
            &mut self.rbuf.as_mut_slice()[..n],
            i,
            self.size,
        );
        Ok(())
    }

    fn iteration(&mut self, i: u64) -> Result<(), SuiteError> {
        self.excluded = 0;
        if self.me < 2 {
            self.pattern_iteration(i)?;
        }
        if i == self.last {
            self.end_point()?;
        }
        Ok(())
    }

    fn excluded_ns(&self) -> u64 {
        self.excluded
    }

    fn check(&mut self, i: u64) -> Result<(), SuiteError> {
        if self.checks_after() {
            check_pattern(&self.rbuf.as_slice()[..self.n], i, self.size)
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_delay_is_three_round_trips_and_a_microsecond() {
        assert_eq!(delay_ns(0), 1000);
        assert_eq!(delay_ns(3527), 11_581);
    }

    #[test]
    fn control_tags_differ_from_every_payload_tag() {
        let tags = [
            TAG_PINGPONG,
            TAG_STREAM,
            TAG_ACK,
            TAG_SEND,
            TAG_RECV,
            TAG_GO,
            TAG_PROBE,
            TAG_READY,
            TAG_DONE,
        ];
        let mut unique = tags.to_vec();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), tags.len());
    }
}
