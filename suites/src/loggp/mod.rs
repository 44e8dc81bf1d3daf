//! loggp: the patterns a LogGP fit needs, between ranks 0 and 1 (other ranks only join the
//! driver's barriers). Per message size:
//!
//! - `pingpong`: osu_latency's iteration; half the round trip.
//! - `stream`: osu_bw's iteration (a window of nonblocking sends, a 1-byte acknowledgement);
//!   the time per message.
//! - `send`: rank 0's time in `isend` and `wait` with a delay between them long enough for the
//!   message and its protocol to finish (three round trips and a microsecond): the sender's
//!   overhead o_s, as Netgauge measures it.
//! - `recv`: rank 0 posts `irecv`, tells rank 1 to send, waits the delay, then `wait`s: its time
//!   in the two calls is the receiver's overhead o_r. A rendezvous without asynchronous
//!   progress still moves its data inside the wait, which the fit recognises.
//!
//! The delay is `Comm::delay` (spun on a real clock, exact in virtual time) and the driver
//! takes it off the sample (`Bench::excluded_ns`). Points are keyed by size and `pattern`.

mod params;

pub use params::{LoggpParams, Pattern, DEFAULT_WINDOW, OPTIONS};

use bench_core::measure::{Layout, Metric, PointKey};
use transports::comm::Comm;

use crate::buffer::AlignedBuf;
use crate::options::{OptionDef, SuiteArgs};
use crate::osu::{check_pattern, prepare, LARGE_MESSAGE_SIZE};
use crate::ranks::RankRule;
use crate::suite::{Bench, Measure, ParamError, Schedule, Suite, SuiteError};

pub struct Loggp;

pub static LOGGP: Loggp = Loggp;

const TAG_PINGPONG: i32 = 201;
const TAG_STREAM: i32 = 202;
const TAG_ACK: i32 = 203;
const TAG_SEND: i32 = 204;
const TAG_RECV: i32 = 205;
const TAG_GO: i32 = 206;
const TAG_PROBE: i32 = 207;

/// Untimed ping-pongs that size the delay.
const PROBES: u64 = 5;

/// A tenth of osu_latency's iterations for the ping-pong and the overheads (a fit needs means,
/// and four patterns with delays at every size would take minutes at OSU's counts), osu_bw's
/// for the stream, whose every iteration is a window of messages.
fn rule(pattern: Pattern, size: u64) -> (u64, u64) {
    let large = size > LARGE_MESSAGE_SIZE;
    match (pattern, large) {
        (Pattern::Stream, false) => (100, 10),
        (Pattern::Stream, true) => (20, 2),
        (_, false) => (1000, 100),
        (_, true) => (100, 10),
    }
}

pub struct LoggpBench<'c> {
    comm: &'c Comm,
    params: &'c LoggpParams,
    sbuf: AlignedBuf,
    rbuf: AlignedBuf,
    me: usize,
    size: u64,
    n: usize,
    pattern: Pattern,
    delay_ns: u64,
    excluded: u64,
}

impl LoggpBench<'_> {
    /// Untimed ping-pongs at this size; the delay is three of rank 0's round trips and 1 us.
    fn size_delay(&mut self) -> Result<u64, SuiteError> {
        if self.me > 1 {
            return Ok(0);
        }
        let n = self.n;
        let mut longest = 0;
        for _ in 0..PROBES {
            let t = self.comm.now();
            if self.me == 0 {
                self.comm.send(&self.sbuf.as_slice()[..n], 1, TAG_PROBE)?;
                self.comm
                    .recv(&mut self.rbuf.as_mut_slice()[..n], 1, TAG_PROBE)?;
            } else {
                self.comm
                    .recv(&mut self.rbuf.as_mut_slice()[..n], 0, TAG_PROBE)?;
                self.comm.send(&self.sbuf.as_slice()[..n], 0, TAG_PROBE)?;
            }
            longest = longest.max(self.comm.now() - t);
        }
        Ok(3 * longest + 1000)
    }

    /// Which rank receives the pattern's data (the one that checks it).
    fn receiver(&self) -> Option<usize> {
        match self.pattern {
            Pattern::Pingpong => Some(self.me).filter(|&m| m < 2),
            Pattern::Stream | Pattern::Send => Some(1),
            Pattern::Recv => Some(0),
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
            .and_then(|w| Pattern::ALL.into_iter().find(|p| p.name() == w))
            .ok_or_else(|| ParamError(format!("loggp needs a pattern; got {key}")))?;
        self.size = size;
        self.n = size as usize;
        self.pattern = pattern;
        self.excluded = 0;
        self.delay_ns = match pattern {
            Pattern::Send | Pattern::Recv => self.size_delay()?,
            Pattern::Pingpong | Pattern::Stream => 0,
        };
        let (i, x) = rule(pattern, size);
        let divisor = match pattern {
            Pattern::Pingpong => 2.0,
            Pattern::Stream => self.params.window as f64,
            Pattern::Send | Pattern::Recv => 1.0,
        };
        Ok(Measure {
            iterations: self.params.iterations.unwrap_or(i),
            warmup: self.params.warmup.unwrap_or(x),
            validate: self.params.validate,
            metrics: vec![Metric::latency_us(divisor)],
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

    fn iteration(&mut self, _i: u64) -> Result<(), SuiteError> {
        let (comm, n, me) = (self.comm, self.n, self.me);
        if me > 1 {
            return Ok(());
        }
        let sbuf = &self.sbuf.as_slice()[..n];
        let rbuf = &mut self.rbuf.as_mut_slice()[..n];
        match (self.pattern, me) {
            (Pattern::Pingpong, 0) => {
                comm.send(sbuf, 1, TAG_PINGPONG)?;
                comm.recv(rbuf, 1, TAG_PINGPONG)?;
            }
            (Pattern::Pingpong, _) => {
                comm.recv(rbuf, 0, TAG_PINGPONG)?;
                comm.send(sbuf, 0, TAG_PINGPONG)?;
            }
            (Pattern::Stream, 0) => {
                let w = self.params.window as usize;
                comm.isend_window(sbuf, w, 1, TAG_STREAM)?.wait()?;
                comm.recv(&mut rbuf[..n.min(1)], 1, TAG_ACK)?;
            }
            (Pattern::Stream, _) => {
                let w = self.params.window as usize;
                comm.irecv_window(rbuf, w, 0, TAG_STREAM)?.wait()?;
                comm.send(&sbuf[..n.min(1)], 0, TAG_ACK)?;
            }
            (Pattern::Send, 0) => {
                let req = comm.isend(sbuf, 1, TAG_SEND)?;
                let t = comm.now();
                comm.delay(self.delay_ns)?;
                self.excluded = comm.now() - t;
                req.wait()?;
            }
            (Pattern::Send, _) => {
                comm.recv(rbuf, 0, TAG_SEND)?;
            }
            (Pattern::Recv, 0) => {
                let req = comm.irecv(rbuf, 1, TAG_RECV)?;
                let t = comm.now();
                comm.send(&[], 1, TAG_GO)?;
                comm.delay(self.delay_ns)?;
                self.excluded = comm.now() - t;
                req.wait()?;
            }
            (Pattern::Recv, _) => {
                comm.recv(&mut [], 0, TAG_GO)?;
                comm.send(sbuf, 0, TAG_RECV)?;
            }
        }
        Ok(())
    }

    fn excluded_ns(&self) -> u64 {
        self.excluded
    }

    fn check(&mut self, i: u64) -> Result<(), SuiteError> {
        if self.receiver() == Some(self.me) {
            check_pattern(&self.rbuf.as_slice()[..self.n], i, self.size)
        } else {
            Ok(())
        }
    }
}

impl Suite for Loggp {
    type Params = LoggpParams;
    type Bench<'c> = LoggpBench<'c>;

    fn name(&self) -> &'static str {
        "loggp"
    }

    fn summary(&self) -> &'static str {
        "the patterns a LogGP fit needs: ping-pong, stream, send and receive overheads (fabbench characterise runs it)"
    }

    fn ranks(&self) -> RankRule {
        RankRule::AtLeast(2)
    }

    fn options(&self) -> &'static [OptionDef] {
        OPTIONS
    }

    fn params(&self, args: &SuiteArgs) -> Result<LoggpParams, ParamError> {
        LoggpParams::from_args(args)
    }

    fn check(&self, p: &LoggpParams, _ranks: usize) -> Result<(), ParamError> {
        p.check()
    }

    fn layout(&self, p: &LoggpParams) -> Layout {
        let order: Vec<&str> = p.patterns.iter().map(|p| p.name()).collect();
        Layout::Osu {
            title: format!(
                "fabbench LogGP patterns: time per message, one block of sizes per pattern ({})",
                order.join(", ")
            ),
            column: "Time(us)".into(),
            tail: false,
            validation: p.validate,
        }
    }

    fn schedule(&self, p: &LoggpParams) -> Schedule {
        let sizes = p.size_list();
        Schedule::Fixed(
            p.patterns
                .iter()
                .flat_map(|pat| {
                    sizes.iter().map(move |&s| {
                        let mut k = PointKey::size(s);
                        k.params.insert("pattern".into(), pat.name().into());
                        k
                    })
                })
                .collect(),
        )
    }

    fn start<'c>(
        &'c self,
        comm: &'c Comm,
        params: &'c LoggpParams,
    ) -> Result<LoggpBench<'c>, SuiteError> {
        let max = params.size_list().into_iter().max().unwrap_or(1) as usize;
        Ok(LoggpBench {
            comm,
            params,
            sbuf: AlignedBuf::new(max.max(1), b'a'),
            rbuf: AlignedBuf::new(max.max(1), b'b'),
            me: comm.rank(),
            size: 0,
            n: 0,
            pattern: Pattern::Pingpong,
            delay_ns: 0,
            excluded: 0,
        })
    }
}
