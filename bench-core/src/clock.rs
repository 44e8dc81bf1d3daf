//! Clocks a suite may read through `comm.now()`.
//!
//! Real fabrics use [`RealClock`], monotonic nanoseconds since the clock was made. Emulated
//! fabrics keep a per-rank virtual clock instead (see the `des` module); both hand out `u64`
//! nanoseconds so suites never know which one they are reading.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// CPU time the calling thread has used, in nanoseconds (CLOCK_THREAD_CPUTIME_ID): what a
/// stretch of computing cost this thread, however long the host kept it waiting for a core
/// meanwhile. An emulated node's compute is charged from it (see `Comm::compute`).
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given; this clock exists on every
    // Linux since 2.6.12.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Monotonic nanoseconds since the clock was made.
///
/// Where the CPU has an invariant TSC (`constant_tsc` and `nonstop_tsc`), the clock reads it
/// directly (a few nanoseconds) and converts with a ratio calibrated once per process against
/// CLOCK_MONOTONIC over 20 ms (relative error around 1e-6); elsewhere, or with
/// `FABBENCH_CLOCK=monotonic`, it calls clock_gettime (tens of nanoseconds through the vDSO).
/// A latency sample includes one clock read, so a cheap clock is a more truthful one.
#[derive(Debug, Clone, Copy)]
pub struct RealClock {
    base_ticks: u64,
    /// Nanoseconds per tick in 32.32 fixed point; 0 means "ticks are already nanoseconds".
    scale: u64,
}

#[derive(Debug, Clone, Copy)]
struct Calibration {
    tsc: bool,
    scale: u64,
}

fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec we pass.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn tsc() -> u64 {
    // SAFETY: rdtsc is available on every x86_64 CPU.
    unsafe { core::arch::x86_64::_rdtsc() }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn tsc() -> u64 {
    monotonic_ns()
}

fn invariant_tsc() -> bool {
    if !cfg!(target_arch = "x86_64")
        || std::env::var("FABBENCH_CLOCK").is_ok_and(|v| v == "monotonic")
    {
        return false;
    }
    let Ok(info) = std::fs::read_to_string("/proc/cpuinfo") else {
        return false;
    };
    let flags = info
        .lines()
        .find(|l| l.starts_with("flags"))
        .unwrap_or_default();
    flags.split_whitespace().any(|f| f == "constant_tsc")
        && flags.split_whitespace().any(|f| f == "nonstop_tsc")
}

fn calibration() -> Calibration {
    static CAL: std::sync::OnceLock<Calibration> = std::sync::OnceLock::new();
    *CAL.get_or_init(|| {
        if !invariant_tsc() {
            return Calibration {
                tsc: false,
                scale: 0,
            };
        }
        let (t0, c0) = (monotonic_ns(), tsc());
        std::thread::sleep(std::time::Duration::from_millis(20));
        let (t1, c1) = (monotonic_ns(), tsc());
        if c1 <= c0 || t1 <= t0 {
            return Calibration {
                tsc: false,
                scale: 0,
            };
        }
        let scale = (((t1 - t0) as u128) << 32) / (c1 - c0) as u128;
        Calibration {
            tsc: true,
            scale: scale as u64,
        }
    })
}

impl RealClock {
    pub fn new() -> Self {
        let cal = calibration();
        if cal.tsc {
            RealClock {
                base_ticks: tsc(),
                scale: cal.scale,
            }
        } else {
            RealClock {
                base_ticks: monotonic_ns(),
                scale: 0,
            }
        }
    }

    #[inline]
    pub fn now(&self) -> u64 {
        if self.scale == 0 {
            monotonic_ns() - self.base_ticks
        } else {
            (((tsc() - self.base_ticks) as u128 * self.scale as u128) >> 32) as u64
        }
    }

    /// "tsc" or "clock_gettime", for the manifest.
    pub fn source(&self) -> &'static str {
        if self.scale == 0 {
            "clock_gettime(CLOCK_MONOTONIC)"
        } else {
            "tsc (calibrated against CLOCK_MONOTONIC)"
        }
    }
}

impl Default for RealClock {
    fn default() -> Self {
        Self::new()
    }
}

/// A rank's clock as handed to suites: real, or a virtual clock an emulated wire advances.
#[derive(Debug, Clone)]
pub enum Clock {
    Real(RealClock),
    /// Picoseconds of virtual time (the discrete-event scheduler's unit).
    Virtual(Arc<AtomicU64>),
}

impl Clock {
    /// Nanoseconds.
    #[inline]
    pub fn now(&self) -> u64 {
        match self {
            Clock::Real(c) => c.now(),
            Clock::Virtual(v) => v.load(Ordering::Acquire) / 1000,
        }
    }

    pub fn is_virtual(&self) -> bool {
        matches!(self, Clock::Virtual(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A thread that sleeps uses no CPU time, and one that works never more than the wall
    /// clock saw pass.
    #[test]
    fn thread_cpu_time_counts_only_this_threads_work() {
        let (c0, w0) = (thread_cpu_ns(), monotonic_ns());
        std::thread::sleep(std::time::Duration::from_millis(50));
        let slept = thread_cpu_ns() - c0;
        assert!(slept < 5_000_000, "sleeping used {slept} ns of CPU");
        let mut x = 1u64;
        while monotonic_ns() - w0 < 80_000_000 {
            x = std::hint::black_box(x.wrapping_mul(3).wrapping_add(1));
        }
        let (worked, wall) = (thread_cpu_ns() - c0, monotonic_ns() - w0);
        assert!(
            worked > slept && worked <= wall,
            "cpu {worked} ns, wall {wall} ns"
        );
    }

    #[test]
    fn real_clock_is_monotonic_and_advances() {
        let c = RealClock::new();
        let a = c.now();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = c.now();
        assert!(b >= a + 1_000_000, "clock advanced only {} ns", b - a);
    }

    #[test]
    fn real_clock_agrees_with_the_monotonic_clock() {
        let c = RealClock::new();
        let (a, m0) = (c.now(), monotonic_ns());
        std::thread::sleep(std::time::Duration::from_millis(50));
        let (b, m1) = (c.now(), monotonic_ns());
        let ours = (b - a) as f64;
        let theirs = (m1 - m0) as f64;
        // within 0.1 % plus a few microseconds of scheduling between the two reads
        assert!(
            (ours - theirs).abs() < theirs * 1e-3 + 20_000.0,
            "{ours} vs {theirs} ({})",
            c.source()
        );
    }

    #[test]
    fn virtual_clock_reads_what_the_model_set() {
        let v = Arc::new(AtomicU64::new(5_000));
        let c = Clock::Virtual(v.clone());
        assert!(c.is_virtual());
        assert_eq!(c.now(), 5);
        v.store(1_234_999, Ordering::Release);
        assert_eq!(c.now(), 1234);
        assert!(!Clock::Real(RealClock::new()).is_virtual());
    }
}
