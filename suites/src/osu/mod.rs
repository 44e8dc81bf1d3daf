//! The OSU point-to-point trio with OSU Micro-Benchmarks 7.4's semantics: the same default
//! sizes, the same warm-up and iteration rule for small and large messages, a window of 64 for
//! bw and bibw, one-way latency as half the round trip, bandwidth in MB/s (10^6 bytes/s) as
//! total bytes over total time. Each timed iteration is also kept as a raw sample.

mod bibw;
mod bw;
mod latency;

pub use bibw::Bibw;
pub use bw::Bw;
pub use latency::Latency;

use crate::{RunOptions, SuiteError};

/// OSU's boundary between small and large messages: sizes above it use the large rule.
pub const LARGE_MESSAGE_SIZE: u64 = 8192;
/// OSU's default largest message.
pub const DEFAULT_MAX_SIZE: u64 = 1 << 22;
/// OSU's default bw/bibw window.
pub const DEFAULT_WINDOW: u64 = 64;
/// OSU prints this version in its headers; fabbench reproduces 7.4's semantics.
pub const OSU_VERSION: &str = "v7.4";

/// Iterations and warm-up for one size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    pub small_iters: u64,
    pub small_skip: u64,
    pub large_iters: u64,
    pub large_skip: u64,
}

impl Rule {
    /// (timed iterations, warm-up iterations) for `size`, with `-i`/`-x` overriding both.
    pub fn for_size(&self, size: u64, opts: &RunOptions) -> (u64, u64) {
        let (i, s) = if size > LARGE_MESSAGE_SIZE {
            (self.large_iters, self.large_skip)
        } else {
            (self.small_iters, self.small_skip)
        };
        (opts.iterations.unwrap_or(i), opts.warmup.unwrap_or(s))
    }
}

/// OSU's size sequence: from MIN, doubling (0 is followed by 1), up to MAX.
pub fn sizes(default_min: u64, opts: &RunOptions) -> Vec<u64> {
    let min = opts.min_size.unwrap_or(default_min);
    let max = opts.max_size.unwrap_or(DEFAULT_MAX_SIZE);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn osu_size_sequences() {
        let d = RunOptions::default();
        let lat = sizes(0, &d);
        assert_eq!(&lat[..4], &[0, 1, 2, 4]);
        assert_eq!(*lat.last().unwrap(), 4 << 20);
        assert_eq!(lat.len(), 24);
        assert_eq!(sizes(1, &d).len(), 23);
        let o = RunOptions {
            min_size: Some(3),
            max_size: Some(50),
            ..Default::default()
        };
        assert_eq!(sizes(0, &o), vec![3, 6, 12, 24, 48]);
    }

    #[test]
    fn small_and_large_rule_with_overrides() {
        let r = Rule {
            small_iters: 10_000,
            small_skip: 100,
            large_iters: 1000,
            large_skip: 10,
        };
        let d = RunOptions::default();
        assert_eq!(r.for_size(8192, &d), (10_000, 100));
        assert_eq!(r.for_size(8193, &d), (1000, 10));
        let o = RunOptions {
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
}
