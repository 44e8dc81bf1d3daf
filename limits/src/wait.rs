//! Bounded waits on the other process of a pair. A spin on a shared word reads the clock only
//! every 2^16 turns, so a wait that the peer answers at once costs no clock read at all: the
//! bound is there to end a measurement whose peer died, not to be measured.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long any one wait on the other process may take before the measurement is given up.
pub const PEER_TIMEOUT: Duration = Duration::from_secs(10);

/// Turns of a spin between two reads of the clock.
const TURNS_PER_CLOCK_READ: u32 = 1 << 16;

/// Counts the turns of a spin and says when it has lasted longer than `limit`.
pub struct Spin {
    turns: u32,
    since: Option<Instant>,
    limit: Duration,
}

impl Spin {
    pub fn new(limit: Duration) -> Spin {
        Spin {
            turns: 0,
            since: None,
            limit,
        }
    }

    /// One more turn: false once the spin has lasted longer than its limit. The clock starts
    /// at the first read, so the bound is `limit` plus one stretch of 2^16 turns.
    #[inline]
    pub fn turn(&mut self) -> bool {
        self.turns = self.turns.wrapping_add(1);
        if !self.turns.is_multiple_of(TURNS_PER_CLOCK_READ) {
            std::hint::spin_loop();
            return true;
        }
        let now = Instant::now();
        match self.since {
            None => {
                self.since = Some(now);
                true
            }
            Some(start) => now.duration_since(start) <= self.limit,
        }
    }
}

/// Spins until `word` holds `want`; false if `limit` passed first.
#[inline]
pub fn until_equal(word: &AtomicU64, want: u64, limit: Duration) -> bool {
    let mut spin = Spin::new(limit);
    while word.load(Ordering::Acquire) != want {
        if !spin.turn() {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_already_set_is_seen_and_one_never_set_times_out() {
        let w = AtomicU64::new(7);
        assert!(until_equal(&w, 7, Duration::ZERO));
        let t = Instant::now();
        assert!(!until_equal(&w, 8, Duration::from_millis(20)));
        assert!(t.elapsed() >= Duration::from_millis(20));
    }
}
