//! One cache line bounced between two processes pinned to two CPUs: the floor under any
//! shared-memory message. This process (ping) writes a counter value into the line; the other
//! (pong) waits to see it and writes it back plus one; ping waits for that. Round trips are
//! timed in batches, so the clock is read once per batch, and a batch's one-way time is its
//! time over twice its round trips. Two variants: ping and pong share one line, or each
//! writes its own line (the other only reads it), as a ring's head and tail do.

use std::sync::atomic::Ordering;
use std::time::Instant;

use bench_core::measure::{Metric, Point, PointKey};

use crate::process::{spawn, Pinned, SharedLines, GAVE_UP};
use crate::wait::{until_equal, PEER_TIMEOUT};
use crate::LimitsError;

/// The suites the two variants are recorded under: each its own series, so a chart draws them
/// as two lines (one series holding both put two points at one size, joined by a stroke).
pub const SUITE_ONE: &str = "limits_cacheline_one";
pub const SUITE_TWO: &str = "limits_cacheline_two";
/// The size a point is keyed by: one line.
pub const LINE: u64 = 64;
/// The point parameter that tells the variants apart.
pub const PARAM: &str = "lines";

/// How many round trips, in how many batches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    pub round_trips: u64,
    pub batches: usize,
    /// Batches run first and not kept (the line settles, both CPUs leave their idle states).
    pub warmup_batches: usize,
}

/// Where ping and pong write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lines {
    /// Both write the one line.
    Shared,
    /// Ping writes one line, pong another.
    Separate,
}

impl Lines {
    /// The point parameter's value.
    pub fn word(self) -> &'static str {
        match self {
            Lines::Shared => "one",
            Lines::Separate => "two",
        }
    }

    fn indices(self) -> (usize, usize) {
        match self {
            Lines::Shared => (0, 0),
            Lines::Separate => (0, 1),
        }
    }
}

/// Both variants, ping on `cpus.0` and pong on `cpus.1`: one point each, a sample per batch.
pub fn measure(cpus: (usize, usize), counts: Counts) -> Result<Vec<Point>, LimitsError> {
    [Lines::Shared, Lines::Separate]
        .into_iter()
        .map(|lines| one(lines, cpus, counts))
        .collect()
}

fn one(lines: Lines, cpus: (usize, usize), c: Counts) -> Result<Point, LimitsError> {
    let shared = SharedLines::new()?;
    let (ping_at, pong_at) = lines.indices();
    let (ping, pong) = (shared.line(ping_at), shared.line(pong_at));
    let total = (c.warmup_batches + c.batches) as u64 * c.round_trips;
    let _pinned = Pinned::to(cpus.0)?;
    let mut child = spawn("pong", cpus.1, || {
        for i in 0..total {
            // Ping writes 2i+1; pong answers 2i+2.
            if !until_equal(ping, 2 * i + 1, PEER_TIMEOUT) {
                return GAVE_UP;
            }
            pong.store(2 * i + 2, Ordering::Release);
        }
        0
    })?;
    let stage = format!("cache line round trips ({} line(s))", lines.word());
    let mut samples = Vec::with_capacity(c.batches);
    let mut value = 0u64;
    for batch in 0..c.warmup_batches + c.batches {
        let start = Instant::now();
        for _ in 0..c.round_trips {
            ping.store(value + 1, Ordering::Release);
            if !until_equal(pong, value + 2, PEER_TIMEOUT) {
                return Err(child.timeout(&stage, PEER_TIMEOUT));
            }
            value += 2;
        }
        let ns = start.elapsed().as_nanos() as u64;
        if batch >= c.warmup_batches {
            samples.push(ns);
        }
    }
    child.finish(&stage)?;
    Ok(Point {
        key: PointKey {
            size: Some(LINE),
            params: [(PARAM.to_string(), lines.word().to_string())].into(),
        },
        // A batch is 2 * round_trips one-way trips.
        metrics: vec![Metric::latency_us(2.0 * c.round_trips as f64)],
        samples_ns: samples,
        validated: None,
        batches: Vec::new(),
        split: None,
        warmup: Some((c.warmup_batches as u64) * c.round_trips),
    })
}
