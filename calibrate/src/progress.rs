//! How a calibration's time is going: the trials the search makes report to a running tally
//! (trials done, best cost, time spent), which prices what is left of the budget and tells the
//! caller's observer. Kept apart from the budget's arithmetic, which reads the search's own
//! bounds: the search reports here, so the two in one file would import each other.

use std::cell::Cell;
use std::time::{Duration, Instant};

/// Where a calibration stands.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tally {
    pub done: usize,
    pub budget: usize,
    /// The lowest cost seen so far (infinite before the first).
    pub best: f64,
    pub elapsed: Duration,
}

impl Tally {
    /// The mean time of a trial so far.
    pub fn per_trial(&self) -> Option<Duration> {
        (self.done > 0).then(|| self.elapsed / self.done as u32)
    }

    /// At most this long is left, at the mean time per trial so far.
    pub fn left(&self) -> Option<Duration> {
        self.per_trial()
            .map(|t| t * self.budget.saturating_sub(self.done) as u32)
    }
}

/// What a calibration tells its caller as it goes.
pub trait Observer {
    /// A stage begins or ends (one line).
    fn stage(&self, what: &str);
    /// After every trial.
    fn trial(&self, _tally: &Tally) {}
    /// Once, after [`PRICED`] trials past the first have been timed: `tally` counts those
    /// trials and the budget left after the first (so its [`Tally::left`] is the most time
    /// left), `spent` is the time so far.
    fn estimate(&self, _tally: &Tally, _spent: Duration) {}
}

/// How many trials after the first price the estimate. The first is left out: it also builds
/// the fabric's card and warms the host's caches (three times a later trial's time, seen on
/// the RapidIO paper's table).
pub const PRICED: usize = 5;

/// The running count the search's trials report to.
pub struct Progress<'a> {
    observer: &'a dyn Observer,
    started: Instant,
    budget: Cell<usize>,
    done: Cell<usize>,
    best: Cell<f64>,
    /// When the first trial ended.
    first: Cell<Duration>,
}

impl<'a> Progress<'a> {
    pub fn new(observer: &'a dyn Observer, started: Instant) -> Progress<'a> {
        Progress {
            observer,
            started,
            budget: Cell::new(0),
            done: Cell::new(0),
            best: Cell::new(f64::INFINITY),
            first: Cell::new(Duration::ZERO),
        }
    }

    pub fn set_budget(&self, budget: usize) {
        self.budget.set(budget);
    }

    pub fn observer(&self) -> &dyn Observer {
        self.observer
    }

    pub fn tally(&self) -> Tally {
        Tally {
            done: self.done.get(),
            budget: self.budget.get(),
            best: self.best.get(),
            elapsed: self.started.elapsed(),
        }
    }

    /// Trials made so far.
    pub fn done(&self) -> usize {
        self.done.get()
    }

    /// A trial was made.
    pub fn tried(&self) {
        self.done.set(self.done.get() + 1);
        let t = self.tally();
        if t.done == 1 {
            self.first.set(t.elapsed);
        }
        if t.done == 1 + PRICED {
            let priced = Tally {
                done: PRICED,
                budget: t.budget.saturating_sub(1),
                best: t.best,
                elapsed: t.elapsed.saturating_sub(self.first.get()),
            };
            self.observer.estimate(&priced, t.elapsed);
        }
        self.observer.trial(&t);
    }

    /// A trial's cost was worked out.
    pub fn cost(&self, cost: f64) {
        if cost < self.best.get() {
            self.best.set(cost);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimate_comes_once_priced_by_the_trials_after_the_first() {
        // (trials reported before the estimate, the estimate's count, its budget)
        struct Heard(std::cell::RefCell<Vec<(usize, usize, usize)>>, Cell<usize>);
        impl Observer for Heard {
            fn stage(&self, _what: &str) {}
            fn trial(&self, _t: &Tally) {
                self.1.set(self.1.get() + 1);
            }
            fn estimate(&self, t: &Tally, spent: Duration) {
                assert!(t.elapsed <= spent);
                self.0.borrow_mut().push((self.1.get(), t.done, t.budget));
            }
        }
        let heard = Heard(Default::default(), Cell::new(0));
        let p = Progress::new(&heard, Instant::now());
        p.set_budget(100);
        for _ in 0..20 {
            p.tried();
        }
        assert_eq!(
            *heard.0.borrow(),
            [(PRICED, PRICED, 99)],
            "after the sixth trial"
        );
        p.cost(3.0);
        p.cost(2.0);
        p.cost(5.0);
        assert_eq!((p.tally().best, p.done()), (2.0, 20));
    }

    #[test]
    fn time_left_prices_the_trials_left_at_the_mean_so_far() {
        let t = Tally {
            done: 100,
            budget: 400,
            best: 1.0,
            elapsed: Duration::from_secs(20),
        };
        assert_eq!(t.per_trial(), Some(Duration::from_millis(200)));
        assert_eq!(t.left(), Some(Duration::from_secs(60)));
        let over = Tally { done: 500, ..t };
        assert_eq!(over.left(), Some(Duration::ZERO));
        assert_eq!(Tally { done: 0, ..t }.left(), None);
    }
}
