//! The shared pieces of hardware every model is built from: a [`Resource`] used by one transfer
//! at a time, a pool of [`Credits`] taken and given back at known virtual times, and the
//! [`World`] through which giving back wakes a waiting rank. Reservations and queries are made
//! in virtual-time order, so contention resolves exactly as the hardware would.

use bench_core::des::{Ps, Scheduler};

/// A resource used by one transfer at a time (a link direction, a DMA engine, a memory port).
/// Reservations are made in virtual-time order, so they queue exactly as the hardware would.
#[derive(Debug, Clone, Copy, Default)]
pub struct Resource {
    free_at: Ps,
}

impl Resource {
    /// Reserves `dur` starting no earlier than `at`; returns (start, end).
    pub fn reserve(&mut self, at: Ps, dur: Ps) -> (Ps, Ps) {
        let start = at.max(self.free_at);
        self.free_at = start + dur;
        (start, start + dur)
    }

    /// Reserves several resources for the same interval (a transfer that needs them all).
    pub fn reserve_all(rs: &mut [&mut Resource], at: Ps, dur: Ps) -> (Ps, Ps) {
        let start = rs.iter().fold(at, |t, r| t.max(r.free_at));
        for r in rs.iter_mut() {
            r.free_at = start + dur;
        }
        (start, start + dur)
    }

    pub fn free_at(&self) -> Ps {
        self.free_at
    }
}

/// A pool of hardware slots (window fragments, mailbox entries, queue entries, receive
/// buffers) taken by senders and given back at known virtual times. A query at time `t` counts
/// only what was given back by `t`, so a receiver that runs ahead in virtual time never lends
/// a sender room early.
#[derive(Debug, Clone)]
pub struct Credits {
    cap: u64,
    taken: u64,
    /// (time, total given back up to and including this time), ascending in time; returns
    /// before the horizon are forgotten but for the last.
    returns: Vec<(Ps, u64)>,
    /// No query comes before this time any more (see [`Credits::forget_before`]).
    horizon: Ps,
    waiters: Vec<usize>,
}

impl Credits {
    pub fn new(cap: u64) -> Credits {
        Credits {
            cap,
            taken: 0,
            returns: Vec::new(),
            horizon: 0,
            waiters: Vec::new(),
        }
    }

    pub fn capacity(&self) -> u64 {
        self.cap
    }

    /// Forgets the returns no query can tell apart any more: every query from now on is at
    /// `horizon` or later (the wire's promise, see [`Model::forget_before`]), and the last
    /// return at or before it holds the total they need. Without this the history grows by a
    /// return per message for the whole run (hundreds of MiB over a 64-rank mpptest).
    pub fn forget_before(&mut self, horizon: Ps) {
        self.horizon = self.horizon.max(horizon);
        let i = self.returns.partition_point(|(at, _)| *at <= self.horizon);
        if i > 1 {
            self.returns.drain(..i - 1);
        }
    }

    /// A query at `t`: never before the horizon, or a forgotten return would be missed.
    fn asked_at(&self, t: Ps) {
        assert!(
            t >= self.horizon,
            "credits asked at {t} ps, before the horizon of {} ps the wire promised",
            self.horizon
        );
    }

    fn returned_by(&self, t: Ps) -> u64 {
        self.asked_at(t);
        let i = self.returns.partition_point(|(at, _)| *at <= t);
        if i == 0 {
            0
        } else {
            self.returns[i - 1].1
        }
    }

    /// Slots free at `t`.
    pub fn available(&self, t: Ps) -> u64 {
        (self.cap + self.returned_by(t)).saturating_sub(self.taken)
    }

    /// The first time from `t` on at which `n` slots are free, as far as the returns made so
    /// far say (None: not by any of them).
    pub fn free_from(&self, n: u64, t: Ps) -> Option<Ps> {
        self.asked_at(t);
        if self.available(t) >= n {
            return Some(t);
        }
        let i = self.returns.partition_point(|(at, _)| *at <= t);
        self.returns[i..]
            .iter()
            .find(|(_, back)| (self.cap + back).saturating_sub(self.taken) >= n)
            .map(|(at, _)| *at)
    }

    /// Slots in use at `t`.
    pub fn in_use(&self, t: Ps) -> u64 {
        self.cap - self.available(t).min(self.cap)
    }

    /// Takes `n` slots at `t` if they are free.
    pub fn take(&mut self, n: u64, t: Ps) -> bool {
        if self.available(t) >= n {
            self.taken += n;
            true
        } else {
            false
        }
    }

    /// Gives `n` slots back at `t`, waking whoever waits for them. `t` may be before the
    /// horizon: the totals after it, the only ones still read, are right either way.
    pub fn give_back(&mut self, w: &mut World, n: u64, t: Ps) {
        let i = self.returns.partition_point(|(at, _)| *at <= t);
        let before = if i == 0 { 0 } else { self.returns[i - 1].1 };
        if i < self.returns.len() {
            // Rare: a return earlier than one already recorded; shift the later totals.
            for r in &mut self.returns[i..] {
                r.1 += n;
            }
            self.returns.insert(i, (t, before + n));
        } else if i > 0 && self.returns[i - 1].0 == t {
            self.returns[i - 1].1 += n;
        } else {
            self.returns.push((t, before + n));
        }
        for r in self.waiters.drain(..) {
            w.wake(r, t);
        }
    }

    /// `rank` waits for room from `t`: wake it at the next known return, or when one is made.
    pub fn wait(&mut self, w: &mut World, rank: usize, t: Ps) {
        self.asked_at(t);
        if let Some((at, _)) = self.returns.iter().find(|(at, _)| *at > t) {
            w.wake(rank, *at);
        }
        if !self.waiters.contains(&rank) {
            self.waiters.push(rank);
        }
    }
}

/// What a model can do to the world besides its own state.
pub struct World<'a> {
    pub(super) sched: &'a Scheduler,
}

impl World<'_> {
    /// Something happens to `rank` at `t` (a credit returns): it may retry then.
    pub fn wake(&mut self, rank: usize, t: Ps) {
        self.sched.post(rank, t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_queue_reservations() {
        let mut r = Resource::default();
        assert_eq!(r.reserve(100, 50), (100, 150));
        assert_eq!(r.reserve(120, 10), (150, 160));
        assert_eq!(r.reserve(500, 10), (500, 510));
        let mut a = Resource::default();
        let mut b = Resource::default();
        b.reserve(0, 300);
        assert_eq!(
            Resource::reserve_all(&mut [&mut a, &mut b], 100, 10),
            (300, 310)
        );
        assert_eq!(a.free_at(), 310);
    }

    #[test]
    fn credits_count_returns_only_up_to_the_query_time() {
        let sched = Scheduler::new(2);
        let mut w = World { sched: &sched };
        let mut c = Credits::new(2);
        assert!(c.take(2, 0));
        assert!(!c.take(1, 10));
        c.give_back(&mut w, 1, 100);
        assert!(!c.take(1, 50), "returned at 100, not free at 50");
        assert_eq!(c.available(100), 1);
        c.give_back(&mut w, 1, 80);
        assert_eq!(c.available(90), 1);
        assert_eq!(c.available(100), 2);
        assert!(c.take(2, 100));
        assert_eq!(c.in_use(100), 2);
    }

    #[test]
    fn forgetting_before_the_horizon_changes_no_answer_from_it_on() {
        let sched = Scheduler::new(1);
        let mut w = World { sched: &sched };
        let (mut all, mut short) = (Credits::new(4), Credits::new(4));
        // Returns out of order (some before the horizon that follows), takes, and a forget
        // every few steps; both pools must answer alike at and after each horizon.
        let mut horizon = 0;
        for step in 0..400u64 {
            let t = horizon + (step * 7919) % 500;
            for c in [&mut all, &mut short] {
                c.take(1, t.max(horizon));
                c.give_back(&mut w, 1, t.saturating_sub(300));
            }
            if step % 5 == 4 {
                horizon += 37;
                short.forget_before(horizon);
            }
            for q in [horizon, horizon + 1, horizon + 250, horizon + 1000] {
                assert_eq!(all.available(q), short.available(q), "step {step} at {q}");
                for n in 1..4 {
                    assert_eq!(all.free_from(n, q), short.free_from(n, q));
                }
            }
        }
        assert!(short.returns.len() < all.returns.len() / 4, "it forgets");
    }

    #[test]
    #[should_panic(expected = "before the horizon")]
    fn a_query_before_the_horizon_is_refused() {
        let mut c = Credits::new(1);
        c.forget_before(100);
        c.available(99);
    }

    #[test]
    fn free_from_finds_the_first_return_that_makes_room() {
        let sched = Scheduler::new(1);
        let mut w = World { sched: &sched };
        let mut c = Credits::new(2);
        assert_eq!(c.free_from(2, 0), Some(0));
        assert!(c.take(2, 0));
        c.give_back(&mut w, 1, 100);
        c.give_back(&mut w, 1, 300);
        assert_eq!(c.free_from(1, 0), Some(100));
        assert_eq!(c.free_from(2, 0), Some(300));
        assert_eq!(c.free_from(2, 150), Some(300));
        assert_eq!(c.free_from(1, 200), Some(200));
        assert_eq!(c.free_from(3, 0), None);
    }
}
