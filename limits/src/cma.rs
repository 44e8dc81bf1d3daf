//! The cost of one cross-memory-attach read (`process_vm_readv`): what fabbench's shm wire
//! pays for each single copy from a peer, before the bytes. The other process holds a buffer
//! it inherited (so its address is known here) and sleeps until told to go; each sample is
//! one call reading 64 B, 4 KiB or 64 KiB of it. Where the kernel does not permit the call
//! (Yama's ptrace scope, a seccomp filter, no CMA), that is the result, not a failure.

use std::io::IoSliceMut;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use bench_core::measure::{Better, Derivation, Metric, Point, PointKey};
use nix::errno::Errno;
use nix::sys::uio::{process_vm_readv, RemoteIoVec};

use crate::process::{spawn, Pinned, SharedLines, GAVE_UP};
use crate::LimitsError;

/// The suite name the series is recorded under.
pub const SUITE: &str = "limits_cma";
/// The sizes read.
pub const SIZES: [u64; 3] = [64, 4 << 10, 64 << 10];
/// How long the other process waits to be told to go before it gives up.
const TARGET_LIFETIME: Duration = Duration::from_secs(60);

/// How many calls per size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    pub calls: usize,
    pub warmup: usize,
}

/// What the measurement found.
#[derive(Debug, Clone, PartialEq)]
pub enum Cma {
    /// A point per size in [`SIZES`], a sample per call.
    Measured(Vec<Point>),
    /// The kernel refused the call: why, in words.
    Refused(String),
}

/// Microseconds per call.
pub fn per_call_us() -> Metric {
    Metric {
        name: "time".into(),
        unit: "us".into(),
        better: Better::Lower,
        derive: Derivation::Time {
            divisor: 1.0,
            unit_ns: 1e3,
        },
    }
}

/// Reads from a child pinned to `cpus.1`, from this process pinned to `cpus.0`.
pub fn measure(cpus: (usize, usize), c: Counts) -> Result<Cma, LimitsError> {
    let largest = *SIZES.last().expect("sizes") as usize;
    let remote: Vec<u8> = (0..largest).map(|i| (i * 7) as u8).collect();
    let go = SharedLines::new()?;
    let _pinned = Pinned::to(cpus.0)?;
    let child = spawn("CMA target", cpus.1, || {
        // Sleeps rather than spins: the reads do not need this process on its CPU.
        let start = Instant::now();
        while go.line(0).load(Ordering::Acquire) == 0 {
            if start.elapsed() > TARGET_LIFETIME {
                return GAVE_UP;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        // Keeps the buffer alive in this process until the reads are done.
        std::hint::black_box(&remote);
        0
    })?;
    let pid = child.pid();
    let mut local = vec![0u8; largest];
    let read = |local: &mut [u8]| {
        let len = local.len();
        process_vm_readv(
            pid,
            &mut [IoSliceMut::new(local)],
            &[RemoteIoVec {
                base: remote.as_ptr() as usize,
                len,
            }],
        )
    };
    match read(&mut local[..]) {
        Ok(n) if n == largest && local == remote => {}
        Ok(n) => {
            return Err(LimitsError::Wrong(format!(
                "process_vm_readv of {largest} B read {n} B{}",
                if n == largest {
                    " that differ from the source"
                } else {
                    ""
                }
            )))
        }
        Err(e @ (Errno::EPERM | Errno::EACCES | Errno::ENOSYS)) => {
            go.line(0).store(1, Ordering::Release);
            child.finish("CMA's refusal")?;
            return Ok(Cma::Refused(refusal(e)));
        }
        Err(e) => {
            return Err(LimitsError::Wrong(format!(
                "process_vm_readv of {largest} B failed: {e}"
            )))
        }
    }
    let mut points = Vec::new();
    for &size in &SIZES {
        let buf = &mut local[..size as usize];
        let mut samples = Vec::with_capacity(c.calls);
        for n in 0..c.warmup + c.calls {
            let start = Instant::now();
            let got = read(buf);
            let ns = start.elapsed().as_nanos() as u64;
            match got {
                Ok(k) if k == buf.len() => {}
                other => {
                    return Err(LimitsError::Wrong(format!(
                        "process_vm_readv of {size} B gave {other:?}"
                    )))
                }
            }
            if n >= c.warmup {
                samples.push(ns.max(1));
            }
        }
        points.push(Point {
            key: PointKey::size(size),
            metrics: vec![per_call_us()],
            samples_ns: samples,
            validated: None,
            batches: Vec::new(),
            split: None,
            warmup: Some(c.warmup as u64),
        });
    }
    go.line(0).store(1, Ordering::Release);
    child.finish("CMA reads")?;
    Ok(Cma::Measured(points))
}

/// The refusal in words, with Yama's ptrace scope when it is the likely reason.
fn refusal(e: Errno) -> String {
    let scope = std::fs::read_to_string("/proc/sys/kernel/yama/ptrace_scope")
        .map(|s| format!("; kernel.yama.ptrace_scope = {}", s.trim()))
        .unwrap_or_default();
    format!("CMA not permitted here: process_vm_readv failed with {e}{scope}")
}
