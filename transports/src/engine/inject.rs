//! A slowdown of known size (`inject_delay_ns`), for checking that a regression gate catches
//! one. Shared-memory latencies here are tens of nanoseconds, finer than what a loop that reads
//! the clock can wait (each read costs about as much as the wait), so the delay is counted in
//! steps of dependent additions, converted from nanoseconds once at start-up by timing a long
//! run of them.

use std::hint::black_box;

use bench_core::clock::Clock;

/// Steps timed to convert nanoseconds to steps: long enough (about a millisecond) that the
/// clock's grain and one interruption are small beside it.
const CALIBRATION_STEPS: u64 = 2_000_000;

/// `steps` dependent additions, which the optimiser cannot fold away.
pub(super) fn busy_steps(steps: u64) {
    let mut acc = 0u64;
    for i in 0..steps {
        acc = black_box(acc.wrapping_add(i));
    }
    black_box(acc);
}

/// The steps that take `delay_ns` on this core: the fastest of three timings, as the others
/// were interrupted.
pub(super) fn steps_for(delay_ns: u64, clock: &Clock) -> u64 {
    let best_ns = (0..3)
        .map(|_| {
            let start = clock.now();
            busy_steps(CALIBRATION_STEPS);
            clock.now().saturating_sub(start).max(1)
        })
        .min()
        .unwrap_or(1);
    let steps_per_ns = CALIBRATION_STEPS as f64 / best_ns as f64;
    ((delay_ns as f64 * steps_per_ns).round() as u64).max(1)
}
