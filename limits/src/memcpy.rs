//! memcpy's bandwidth in one thread, at 64 KiB (in L2), 1 MiB (L2 or L3) and 16 MiB (memory on
//! most machines): the most a copy-in, copy-out message can move. Buffers are allocated and
//! touched once and reused; small copies are repeated within a sample so the clock's own cost
//! stays under one percent of it.

use std::hint::black_box;
use std::time::Instant;

use bench_core::measure::{Better, Derivation, Metric, Point, PointKey};

use crate::process::Pinned;
use crate::LimitsError;

/// The suite name the series is recorded under.
pub const SUITE: &str = "limits_memcpy";
/// The sizes copied.
pub const SIZES: [u64; 3] = [64 << 10, 1 << 20, 16 << 20];
/// Bytes a sample copies at least (several copies of a small size).
const BYTES_PER_SAMPLE: u64 = 1 << 20;

/// How many samples per size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    pub samples: usize,
    /// Samples run first and not kept (caches and TLB filled).
    pub warmup: usize,
}

/// Bandwidth in GB/s (10^9 bytes per second) of samples that each copy `bytes`.
pub fn gbs(bytes: u64) -> Metric {
    Metric {
        name: "bandwidth".into(),
        unit: "GB/s".into(),
        better: Better::Higher,
        derive: Derivation::Rate {
            amount: bytes as f64,
            unit: 1e9,
        },
    }
}

/// One point per size in [`SIZES`], a sample per timed group of copies, on `cpu` (where the
/// pairs' first process runs, so the copies see the same caches).
pub fn measure(cpu: usize, c: Counts) -> Result<Vec<Point>, LimitsError> {
    let _pinned = Pinned::to(cpu)?;
    Ok(SIZES.iter().map(|&size| one(size as usize, c)).collect())
}

fn one(size: usize, c: Counts) -> Point {
    let src: Vec<u8> = (0..size).map(|i| i as u8).collect();
    let mut dst = vec![0u8; size];
    let copies = (BYTES_PER_SAMPLE as usize / size).max(1);
    let mut samples = Vec::with_capacity(c.samples);
    for n in 0..c.warmup + c.samples {
        let start = Instant::now();
        for _ in 0..copies {
            // black_box on both sides: the copy's source is unknown to the optimiser and its
            // result is used, so neither the copy nor its repetition can be elided.
            black_box(&mut dst[..]).copy_from_slice(black_box(&src[..]));
            black_box(&dst);
        }
        let ns = start.elapsed().as_nanos() as u64;
        if n >= c.warmup {
            samples.push(ns.max(1));
        }
    }
    assert_eq!(dst, src, "the copies copied");
    Point {
        key: PointKey::size(size as u64),
        metrics: vec![gbs((size * copies) as u64)],
        samples_ns: samples,
        validated: None,
        batches: Vec::new(),
        split: None,
        warmup: Some(c.warmup as u64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_point_per_size_with_positive_bandwidth() {
        let cpu = bench_core::machine::allowed_cpus()[0];
        let points = measure(
            cpu,
            Counts {
                samples: 3,
                warmup: 1,
            },
        )
        .unwrap();
        assert_eq!(points.len(), SIZES.len());
        for p in &points {
            assert_eq!(p.samples_ns.len(), 3);
            let bw = p.headline();
            assert!(bw.is_finite() && bw > 0.1, "{bw} GB/s at {}", p.size());
        }
    }
}
