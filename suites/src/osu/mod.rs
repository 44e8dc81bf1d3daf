//! The OSU point-to-point trio with OSU Micro-Benchmarks 7.4's semantics: the same default
//! sizes, the same warm-up and iteration rule for small and large messages, a window of 64 for
//! bw and bibw, one-way latency as half the round trip, bandwidth in MB/s (10^6 bytes/s) as
//! total bytes over total time. Each timed iteration is also kept as a raw sample.
//!
//! The three share their options, parameters, buffers and validation; each test is only what
//! differs: its names, its rule, its metric and one iteration ([`OsuTest`]).

mod bibw;
mod bw;
mod latency;
mod params;

pub use bibw::Bibw;
pub use bw::Bw;
pub use latency::Latency;
pub use params::{
    check_counts, message_sizes, OsuParams, ITERATIONS, LATENCY_OPTIONS, MESSAGE_SIZE, OPTIONS,
    VALIDATION, WARMUP, WINDOW_SIZE,
};

use std::marker::PhantomData;

use bench_core::measure::{Layout, Metric, PointKey};
use bench_core::size::format_size;
use transports::comm::Comm;

use crate::buffer::AlignedBuf;
use crate::options::{OptionDef, SuiteArgs};
use crate::ranks::RankRule;
use crate::suite::{Bench, Measure, ParamError, Schedule, Suite, SuiteError};
use crate::work::{PointWork, Work};
use crate::MAX_MESSAGE_SIZE;

/// OSU's boundary between small and large messages: sizes above it use the large rule.
pub const LARGE_MESSAGE_SIZE: u64 = 8192;
/// OSU's default largest message.
pub const DEFAULT_MAX_SIZE: u64 = 1 << 22;
/// OSU's default bw/bibw window.
pub const DEFAULT_WINDOW: u64 = 64;
/// How much fewer iterations `--quick` runs: enough for a first look at a curve's shape, a
/// tenth of the time.
pub const QUICK_DIVISOR: u64 = 10;
/// OSU prints this version in its headers; fabbench reproduces 7.4's semantics.
pub const OSU_VERSION: &str = "v7.4";

/// osu_latency as a registered suite.
pub static LATENCY: Osu<Latency> = Osu(PhantomData);
/// osu_bw as a registered suite.
pub static BW: Osu<Bw> = Osu(PhantomData);
/// osu_bibw as a registered suite.
pub static BIBW: Osu<Bibw> = Osu(PhantomData);

/// Iterations and warm-up for one size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    pub small_iters: u64,
    pub small_skip: u64,
    pub large_iters: u64,
    pub large_skip: u64,
}

impl Rule {
    /// (timed iterations, warm-up iterations) for `size`, with `-i`/`-x` overriding both;
    /// `--quick` takes a tenth of the rule's counts (an explicit `-i`/`-x` still wins).
    pub fn for_size(&self, size: u64, p: &OsuParams) -> (u64, u64) {
        let (mut i, mut s) = if size > LARGE_MESSAGE_SIZE {
            (self.large_iters, self.large_skip)
        } else {
            (self.small_iters, self.small_skip)
        };
        if p.quick {
            i = (i / QUICK_DIVISOR).max(1);
            s /= QUICK_DIVISOR;
        }
        (p.iterations.unwrap_or(i), p.warmup.unwrap_or(s))
    }
}

/// OSU's size sequence: from MIN, doubling (0 is followed by 1), up to MAX; or the exact
/// list a library caller gave.
pub fn sizes(default_min: u64, p: &OsuParams) -> Vec<u64> {
    if let Some(list) = &p.size_list {
        return list.clone();
    }
    let min = p.min_size.unwrap_or(default_min);
    let max = p.max_size.unwrap_or(DEFAULT_MAX_SIZE);
    let mut out = Vec::new();
    let mut s = min;
    while s <= max {
        out.push(s);
        s = if s == 0 { 1 } else { s * 2 };
    }
    out
}

/// OSU 7.4's validation byte for MPI_CHAR: `(7 * val) mod 256` with
/// `val = 7 * (offset + 1) + size + iteration`. It changes with offset, size and iteration, so
/// a stale buffer, a shifted copy or a message from another iteration all fail.
#[inline]
pub fn pattern_byte(iteration: u64, size: u64, offset: usize) -> u8 {
    let val = 7u64
        .wrapping_mul(offset as u64 + 1)
        .wrapping_add(size)
        .wrapping_add(iteration);
    val.wrapping_mul(7) as u8
}

/// Fills a send buffer with iteration `iteration`'s pattern, and zeroes the receive buffer so
/// nothing left from an earlier iteration can pass (as OSU's set_buffer_validation does).
pub fn prepare(send: &mut [u8], recv: &mut [u8], iteration: u64, size: u64) {
    for (i, b) in send.iter_mut().enumerate() {
        *b = pattern_byte(iteration, size, i);
    }
    recv.fill(0);
}

/// Checks every byte of `buf` against the pattern of `iteration`.
pub fn check_pattern(buf: &[u8], iteration: u64, size: u64) -> Result<(), SuiteError> {
    match buf
        .iter()
        .enumerate()
        .find(|(i, b)| **b != pattern_byte(iteration, size, *i))
    {
        None => Ok(()),
        Some((offset, got)) => Err(SuiteError::Validation {
            size,
            iteration,
            offset,
            expected: pattern_byte(iteration, size, offset),
            got: *got,
        }),
    }
}

/// What one OSU test is, beyond what the trio shares.
pub trait OsuTest: 'static {
    const NAME: &'static str;
    const SUMMARY: &'static str;
    /// The title without OSU's version: "OSU MPI Latency Test".
    const TITLE: &'static str;
    /// The metric column's header.
    const COLUMN: &'static str;
    /// The smallest default size (latency starts at 0 bytes, bandwidth at 1).
    const MIN_SIZE: u64;
    const RULE: Rule;
    /// Whether received data is checked after each timed iteration; otherwise the iteration
    /// checks it itself (osu_bw's receiver checks before it acknowledges the window).
    const CHECK_AFTER: bool;
    /// Whether the test sends a window of messages per iteration (`-W`).
    const WINDOWED: bool;
    /// The metric of one sample at `size` with `window` messages per iteration.
    fn metric(size: u64, window: u64) -> Metric;
    /// One timed iteration.
    fn iteration(io: &mut Io<'_>, i: u64) -> Result<(), SuiteError>;
    /// (messages, payload bytes) one iteration sends, over both ranks, at `size` with
    /// `window` messages per window (the runner's estimate).
    fn traffic(size: u64, window: u64) -> (u64, u64);
}

/// A registered OSU suite; `T` says which.
pub struct Osu<T>(PhantomData<fn() -> T>);

/// One rank's buffers and peer for an OSU test, at the size being measured.
pub struct Io<'c> {
    pub comm: &'c Comm,
    pub params: &'c OsuParams,
    pub sbuf: AlignedBuf,
    pub rbuf: AlignedBuf,
    pub size: u64,
    /// `size` as a slice length.
    pub n: usize,
    pub me: usize,
    pub peer: usize,
    pub window: usize,
}

/// The bench of an OSU test.
pub struct OsuBench<'c, T> {
    io: Io<'c>,
    _test: PhantomData<fn() -> T>,
}

impl<T: OsuTest> Bench for OsuBench<'_, T> {
    fn at(&mut self, key: &PointKey) -> Result<Measure, SuiteError> {
        let size = key
            .size
            .ok_or_else(|| ParamError(format!("{} measures message sizes; got {key}", T::NAME)))?;
        let io = &mut self.io;
        io.size = size;
        io.n = size as usize;
        let (iterations, warmup) = T::RULE.for_size(size, io.params);
        Ok(Measure {
            iterations,
            warmup,
            validate: io.params.validate,
            metrics: vec![T::metric(size, io.window as u64)],
            across_ranks: false,
        })
    }

    fn prepare(&mut self, i: u64) -> Result<(), SuiteError> {
        let io = &mut self.io;
        prepare(
            &mut io.sbuf.as_mut_slice()[..io.n],
            &mut io.rbuf.as_mut_slice()[..io.n],
            i,
            io.size,
        );
        Ok(())
    }

    #[inline]
    fn iteration(&mut self, i: u64) -> Result<(), SuiteError> {
        T::iteration(&mut self.io, i)
    }

    fn check(&mut self, i: u64) -> Result<(), SuiteError> {
        if T::CHECK_AFTER {
            check_pattern(&self.io.rbuf.as_slice()[..self.io.n], i, self.io.size)
        } else {
            Ok(())
        }
    }
}

impl<T: OsuTest> Suite for Osu<T> {
    type Params = OsuParams;
    type Bench<'c> = OsuBench<'c, T>;

    fn name(&self) -> &'static str {
        T::NAME
    }

    fn summary(&self) -> &'static str {
        T::SUMMARY
    }

    fn ranks(&self) -> RankRule {
        RankRule::Exactly(2)
    }

    fn options(&self) -> &'static [OptionDef] {
        if T::WINDOWED {
            OPTIONS
        } else {
            LATENCY_OPTIONS
        }
    }

    fn check(&self, p: &OsuParams, _ranks: usize) -> Result<(), ParamError> {
        if let Some(list) = &p.size_list {
            let ascending = list.windows(2).all(|w| w[0] < w[1]);
            if list.is_empty() || !ascending || list.iter().any(|s| *s > MAX_MESSAGE_SIZE) {
                return Err(ParamError(format!(
                    "{}: a size list must be ascending, not empty, and at most {} bytes",
                    T::NAME,
                    MAX_MESSAGE_SIZE
                )));
            }
        }
        if sizes(T::MIN_SIZE, p).is_empty() {
            let min = p.min_size.unwrap_or(T::MIN_SIZE);
            let max = p.max_size.unwrap_or(DEFAULT_MAX_SIZE);
            return Err(ParamError(format!(
                "{}: -m selects no message size (from {} to {}); {} measures {} up to MAX (default {}): give -m [MIN:]MAX with {} <= MIN <= MAX",
                T::NAME,
                format_size(min),
                format_size(max),
                T::NAME,
                format_size(T::MIN_SIZE),
                format_size(DEFAULT_MAX_SIZE),
                format_size(T::MIN_SIZE),
            )));
        }
        Ok(())
    }

    fn params(&self, args: &SuiteArgs) -> Result<OsuParams, ParamError> {
        let mut p = OsuParams::from_args(args)?;
        // The window in force is recorded, not left for a reader to know OSU's default.
        if T::WINDOWED {
            p.window.get_or_insert(DEFAULT_WINDOW);
        }
        Ok(p)
    }

    fn layout(&self, p: &OsuParams) -> Layout {
        Layout::Osu {
            title: format!("{} {OSU_VERSION}", T::TITLE),
            column: T::COLUMN.into(),
            tail: p.tail,
            tail_at: p.tail_at.clone(),
            validation: p.validate,
        }
    }

    fn schedule(&self, p: &OsuParams) -> Schedule {
        Schedule::Fixed(
            sizes(T::MIN_SIZE, p)
                .into_iter()
                .map(PointKey::size)
                .collect(),
        )
    }

    fn quick(&self, p: &OsuParams) -> Option<OsuParams> {
        Some(OsuParams {
            quick: true,
            ..p.clone()
        })
    }

    fn work(&self, p: &OsuParams, _ranks: usize) -> Option<Work> {
        let window = p.window.unwrap_or(DEFAULT_WINDOW);
        let points = sizes(T::MIN_SIZE, p)
            .into_iter()
            .map(|size| {
                let (timed, warmup) = T::RULE.for_size(size, p);
                let n = timed + warmup;
                let (messages, bytes) = T::traffic(size, window);
                PointWork::repeated(n, messages, bytes)
            })
            .collect();
        Some(Work { points })
    }

    fn longer(&self) -> Option<&'static str> {
        Some("-i N (more timed iterations)")
    }

    fn start<'c>(
        &'c self,
        comm: &'c Comm,
        params: &'c OsuParams,
    ) -> Result<OsuBench<'c, T>, SuiteError> {
        let max = sizes(T::MIN_SIZE, params).into_iter().max().unwrap_or(0) as usize;
        let me = comm.rank();
        Ok(OsuBench {
            io: Io {
                comm,
                params,
                // At least a byte: osu_bw's acknowledgement uses one.
                sbuf: AlignedBuf::new(max.max(1), b'a')?,
                rbuf: AlignedBuf::new(max.max(1), b'b')?,
                size: 0,
                n: 0,
                me,
                peer: 1 - me.min(1),
                window: params.window.unwrap_or(DEFAULT_WINDOW) as usize,
            },
            _test: PhantomData,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn osu_size_sequences() {
        let d = OsuParams::default();
        let lat = sizes(0, &d);
        assert_eq!(&lat[..4], &[0, 1, 2, 4]);
        assert_eq!(*lat.last().unwrap(), 4 << 20);
        assert_eq!(lat.len(), 24);
        assert_eq!(sizes(1, &d).len(), 23);
        let o = OsuParams {
            min_size: Some(3),
            max_size: Some(50),
            ..Default::default()
        };
        assert_eq!(sizes(0, &o), vec![3, 6, 12, 24, 48]);
    }

    #[test]
    fn a_size_list_replaces_the_doubling_sequence_and_is_checked() {
        let p = OsuParams {
            size_list: Some(vec![9216, 10240]),
            ..Default::default()
        };
        assert_eq!(sizes(0, &p), vec![9216, 10240]);
        assert!(Suite::check(&LATENCY, &p, 2).is_ok());
        for bad in [vec![], vec![8, 4], vec![MAX_MESSAGE_SIZE + 1]] {
            let p = OsuParams {
                size_list: Some(bad.clone()),
                ..Default::default()
            };
            assert!(
                Suite::check(&LATENCY, &p, 2).is_err(),
                "{bad:?} should be refused"
            );
        }
    }

    #[test]
    fn small_and_large_rule_with_overrides() {
        let r = Rule {
            small_iters: 10_000,
            small_skip: 100,
            large_iters: 1000,
            large_skip: 10,
        };
        let d = OsuParams::default();
        assert_eq!(r.for_size(8192, &d), (10_000, 100));
        assert_eq!(r.for_size(8193, &d), (1000, 10));
        let o = OsuParams {
            iterations: Some(5),
            warmup: Some(1),
            ..Default::default()
        };
        assert_eq!(r.for_size(1 << 20, &o), (5, 1));
    }

    #[test]
    fn patterns_match_osu_and_are_checked() {
        // OSU 7.4, MPI_CHAR, size 8, iteration 0: 105 154 203 252 45 ...
        let first: Vec<u8> = (0..5).map(|k| pattern_byte(0, 8, k)).collect();
        assert_eq!(first, vec![105, 154, 203, 252, 45]);
        let mut b = vec![0u8; 300];
        let mut r = vec![9u8; 300];
        prepare(&mut b, &mut r, 4, 300);
        assert!(r.iter().all(|x| *x == 0));
        assert!(check_pattern(&b, 4, 300).is_ok());
        assert!(check_pattern(&b, 5, 300).is_err());
        b[123] ^= 1;
        match check_pattern(&b, 4, 300) {
            Err(SuiteError::Validation { offset: 123, .. }) => {}
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_trio_lays_out_as_osu_does() {
        let p = OsuParams {
            tail: true,
            ..Default::default()
        };
        assert_eq!(
            Suite::layout(&LATENCY, &p),
            Layout::Osu {
                title: "OSU MPI Latency Test v7.4".into(),
                column: "Avg Latency(us)".into(),
                tail: true,
                tail_at: Vec::new(),
                validation: false
            }
        );
        let Layout::Osu { title, column, .. } = Suite::layout(&BIBW, &p) else {
            panic!("OSU suites use OSU's layout")
        };
        assert_eq!(title, "OSU MPI Bi-Directional Bandwidth Test v7.4");
        assert_eq!(column, "Bandwidth (MB/s)");
        assert_eq!(
            Suite::schedule(&BW, &p).planned(),
            Some(23),
            "bw starts at 1 byte"
        );
    }
}
