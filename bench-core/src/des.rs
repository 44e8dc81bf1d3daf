//! A discrete-event scheduler for ranks that are threads: the engine of virtual time.
//!
//! Every rank has a virtual clock (picoseconds). Exactly one rank thread runs at a time: the
//! runnable rank with the smallest (clock, rank). A rank calls [`Scheduler::sync`] before
//! every operation that touches shared model state, so operations happen in virtual-time order
//! and contention for a shared resource is resolved exactly, whatever the host does. A rank
//! that has nothing to do [`Scheduler::block`]s until its next event (a frame arriving, a
//! credit coming back); its clock then moves to that event's time. When every unfinished rank
//! is blocked with no event pending, nothing can ever happen again: that is a deadlock, and
//! every rank is told so instead of hanging.
//!
//! Handing the turn to another thread spins briefly before parking, since on a small machine
//! the next rank is usually already waiting on another core; but only while every rank thread
//! of every scheduler in the process can have a core. Calibrate runs a trial per core, each an
//! emulated job of its own: four rank threads spinning on two cores spent 90 % of a
//! calibration waiting for a turn their own spinning kept from coming.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

/// Virtual time in picoseconds.
pub type Ps = u64;

/// Why a rank cannot continue.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DesError {
    #[error("deadlock: every rank is waiting and nothing is in flight ({0})")]
    Deadlock(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Runnable,
    Blocked,
    Finished,
}

struct RankState {
    status: Status,
    /// Times at which something happens to this rank (arrivals, credits).
    events: BinaryHeap<Reverse<Ps>>,
    /// What the rank is waiting for, for the deadlock report.
    waiting_for: String,
}

struct State {
    ranks: Vec<RankState>,
    deadlock: Option<String>,
}

const NONE: usize = usize::MAX;

/// The scheduler shared by one emulated job's rank threads.
pub struct Scheduler {
    state: Mutex<State>,
    turn: Vec<Condvar>,
    /// Which rank may run (NONE once everyone is finished or deadlocked).
    running: AtomicUsize,
    clocks: Vec<Arc<AtomicU64>>,
}

/// Rank threads of every scheduler alive in this process: whether a waiting rank may spin.
static RANKS_ALIVE: AtomicUsize = AtomicUsize::new(0);

/// How long a rank waiting for its turn spins before parking: long while every rank thread in
/// the process can have a core, not at all once they outnumber the cores (64 ranks spinning on
/// 2 cores, or two jobs of 2 ranks each, take the cores from the ranks whose turn it is).
fn spins() -> u32 {
    spins_for(RANKS_ALIVE.load(Ordering::Relaxed), cores())
}

fn spins_for(ranks_alive: usize, cores: usize) -> u32 {
    if ranks_alive <= cores {
        20_000
    } else {
        0
    }
}

impl Scheduler {
    /// A scheduler for `n` ranks, all runnable at time 0; rank 0 has the first turn.
    pub fn new(n: usize) -> Arc<Scheduler> {
        RANKS_ALIVE.fetch_add(n, Ordering::Relaxed);
        Arc::new(Scheduler {
            state: Mutex::new(State {
                ranks: (0..n)
                    .map(|_| RankState {
                        status: Status::Runnable,
                        events: BinaryHeap::new(),
                        waiting_for: String::new(),
                    })
                    .collect(),
                deadlock: None,
            }),
            turn: (0..n).map(|_| Condvar::new()).collect(),
            running: AtomicUsize::new(0),
            clocks: (0..n).map(|_| Arc::new(AtomicU64::new(0))).collect(),
        })
    }

    pub fn size(&self) -> usize {
        self.clocks.len()
    }

    /// A rank's clock, in picoseconds, as a shared atomic (read by `comm.now()`).
    pub fn clock(&self, rank: usize) -> Arc<AtomicU64> {
        self.clocks[rank].clone()
    }

    pub fn now(&self, rank: usize) -> Ps {
        self.clocks[rank].load(Ordering::Acquire)
    }

    /// Moves `rank`'s clock forward to `t` (never back). Only the running rank does this.
    pub fn advance_to(&self, rank: usize, t: Ps) {
        let c = &self.clocks[rank];
        if t > c.load(Ordering::Relaxed) {
            c.store(t, Ordering::Release);
        }
    }

    /// Tells the scheduler that something happens to `rank` at `t`.
    pub fn post(&self, rank: usize, t: Ps) {
        let mut st = self.state.lock().unwrap();
        st.ranks[rank].events.push(Reverse(t));
    }

    /// Waits for `rank`'s first turn.
    pub fn enter(&self, rank: usize) -> Result<(), DesError> {
        self.wait_turn(rank)
    }

    /// Lets any rank that is behind `rank` in virtual time run first; returns when `rank` is
    /// the earliest again. Events of `rank` at or before its clock are consumed.
    pub fn sync(&self, rank: usize) -> Result<(), DesError> {
        let next = {
            let mut st = self.state.lock().unwrap();
            if let Some(d) = &st.deadlock {
                return Err(DesError::Deadlock(d.clone()));
            }
            let now = self.now(rank);
            drain_until(&mut st.ranks[rank].events, now);
            self.pick(&st)
        };
        if next == rank {
            return Ok(());
        }
        self.hand_over(next);
        self.wait_turn(rank)
    }

    /// Blocks `rank` until its next event; its clock moves to that event's time. `waiting_for`
    /// names what it waits for, for the deadlock report.
    pub fn block(&self, rank: usize, waiting_for: &str) -> Result<(), DesError> {
        let next = {
            let mut st = self.state.lock().unwrap();
            if let Some(d) = &st.deadlock {
                return Err(DesError::Deadlock(d.clone()));
            }
            let now = self.now(rank);
            let r = &mut st.ranks[rank];
            drain_until(&mut r.events, now);
            if r.events.is_empty() {
                r.status = Status::Blocked;
                r.waiting_for.clear();
                r.waiting_for.push_str(waiting_for);
            } else {
                // Something is due: become runnable at that time.
                let Reverse(t) = *r.events.peek().expect("not empty");
                self.advance_to(rank, t);
            }
            let next = self.pick(&st);
            if next == NONE {
                let report = st
                    .ranks
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| r.status == Status::Blocked)
                    .map(|(i, r)| format!("rank {i} waits for {}", r.waiting_for))
                    .collect::<Vec<_>>()
                    .join("; ");
                st.deadlock = Some(report.clone());
                drop(st);
                self.running.store(NONE, Ordering::Release);
                self.wake_all();
                return Err(DesError::Deadlock(report));
            }
            next
        };
        if next != rank {
            self.hand_over(next);
        }
        self.wait_turn(rank)
    }

    /// `rank` has finished; the turn passes on.
    pub fn finish(&self, rank: usize) {
        let next = {
            let mut st = self.state.lock().unwrap();
            st.ranks[rank].status = Status::Finished;
            if st.deadlock.is_some() {
                return;
            }
            self.pick(&st)
        };
        if next == NONE {
            // Everyone else is finished or blocked forever: let blocked ranks see it.
            let mut st = self.state.lock().unwrap();
            if st.ranks.iter().any(|r| r.status == Status::Blocked) && st.deadlock.is_none() {
                st.deadlock = Some(format!(
                    "rank {rank} finished while {}",
                    st.ranks
                        .iter()
                        .enumerate()
                        .filter(|(_, r)| r.status == Status::Blocked)
                        .map(|(i, r)| format!("rank {i} waits for {}", r.waiting_for))
                        .collect::<Vec<_>>()
                        .join("; ")
                ));
            }
            drop(st);
            self.running.store(NONE, Ordering::Release);
            self.wake_all();
        } else {
            self.hand_over(next);
        }
    }

    /// The rank that should run: smallest key (clock for runnable ranks, earliest event for
    /// blocked ones), ties to the lower rank. Blocked ranks it picks become runnable.
    fn pick(&self, st: &State) -> usize {
        let mut best = (u64::MAX, NONE);
        for (i, r) in st.ranks.iter().enumerate() {
            let key = match r.status {
                Status::Finished => continue,
                Status::Runnable => self.now(i),
                Status::Blocked => match r.events.peek() {
                    Some(Reverse(t)) => (*t).max(self.now(i)),
                    None => continue,
                },
            };
            if (key, i) < best {
                best = (key, i);
            }
        }
        best.1
    }

    fn hand_over(&self, next: usize) {
        {
            let mut st = self.state.lock().unwrap();
            if st.ranks[next].status == Status::Blocked {
                st.ranks[next].status = Status::Runnable;
                if let Some(Reverse(t)) = st.ranks[next].events.peek().copied() {
                    self.advance_to(next, t);
                }
            }
            self.running.store(next, Ordering::Release);
        }
        self.turn[next].notify_one();
    }

    fn wake_all(&self) {
        for c in &self.turn {
            c.notify_all();
        }
    }

    fn wait_turn(&self, rank: usize) -> Result<(), DesError> {
        // Spin first: the hand-over usually comes within microseconds.
        for i in 0..spins() {
            let r = self.running.load(Ordering::Acquire);
            if r == rank {
                return Ok(());
            }
            if r == NONE {
                break;
            }
            if i > 2000 {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
        let mut st = self.state.lock().unwrap();
        loop {
            if let Some(d) = &st.deadlock {
                return Err(DesError::Deadlock(d.clone()));
            }
            if self.running.load(Ordering::Acquire) == rank {
                return Ok(());
            }
            st = self.turn[rank].wait(st).unwrap();
        }
    }
}

impl Drop for Scheduler {
    fn drop(&mut self) {
        RANKS_ALIVE.fetch_sub(self.clocks.len(), Ordering::Relaxed);
    }
}

/// This host's cores, read once.
fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

fn drain_until(events: &mut BinaryHeap<Reverse<Ps>>, now: Ps) {
    while let Some(Reverse(t)) = events.peek() {
        if *t > now {
            break;
        }
        events.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex as StdMutex;
    use std::thread;

    /// Each rank advances its clock by `step[rank]` per tick; the order in which ticks run
    /// must be exactly the order of virtual time, ties to the lower rank.
    #[test]
    fn a_waiting_rank_spins_only_while_every_rank_thread_has_a_core() {
        assert!(spins_for(2, 2) > 0);
        // Two jobs of two ranks on two cores (calibrate's parallel trials): park at once.
        assert_eq!(spins_for(4, 2), 0);
        assert_eq!(spins_for(64, 2), 0);
        let before = RANKS_ALIVE.load(Ordering::Relaxed);
        let s = Scheduler::new(1000);
        // Other tests' schedulers come and go meanwhile, but none holds a thousand ranks.
        assert!(RANKS_ALIVE.load(Ordering::Relaxed) >= 1000);
        assert_eq!(spins(), 0);
        drop(s);
        assert!(RANKS_ALIVE.load(Ordering::Relaxed) < before + 1000);
    }

    #[test]
    fn ranks_run_in_virtual_time_order() {
        let s = Scheduler::new(3);
        let log = StdMutex::new(Vec::new());
        let steps = [3u64, 5, 7];
        thread::scope(|sc| {
            for (rank, step) in steps.iter().copied().enumerate() {
                let s = &s;
                let log = &log;
                sc.spawn(move || {
                    s.enter(rank).unwrap();
                    for _ in 0..10 {
                        s.sync(rank).unwrap();
                        let t = s.now(rank);
                        log.lock().unwrap().push((t, rank));
                        s.advance_to(rank, t + step);
                    }
                    s.finish(rank);
                });
            }
        });
        let log = log.into_inner().unwrap();
        assert_eq!(log.len(), 30);
        let mut sorted = log.clone();
        sorted.sort();
        assert_eq!(log, sorted, "operations ran out of virtual-time order");
    }

    #[test]
    fn blocking_moves_the_clock_to_the_next_event() {
        let s = Scheduler::new(2);
        thread::scope(|sc| {
            let s1 = &s;
            sc.spawn(move || {
                s1.enter(1).unwrap();
                // nothing yet: wait; rank 0 posts an event at t=500
                s1.block(1, "a message").unwrap();
                assert_eq!(s1.now(1), 500);
                s1.finish(1);
            });
            s.enter(0).unwrap();
            s.advance_to(0, 100);
            s.post(1, 500);
            s.sync(0).unwrap();
            s.block(0, "nothing").unwrap_err();
        });
    }

    #[test]
    fn everyone_waiting_with_nothing_in_flight_is_a_deadlock() {
        let s = Scheduler::new(2);
        let errs: Vec<String> = thread::scope(|sc| {
            let hs: Vec<_> = (0..2)
                .map(|rank| {
                    let s = &s;
                    sc.spawn(move || {
                        s.enter(rank).unwrap();
                        s.block(rank, &format!("a message from rank {}", 1 - rank))
                            .unwrap_err()
                            .to_string()
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for e in errs {
            assert!(e.contains("deadlock"), "{e}");
            assert!(e.contains("rank 0 waits for a message from rank 1"), "{e}");
        }
    }

    #[test]
    fn a_rank_finishing_while_its_peer_waits_ends_the_wait() {
        let s = Scheduler::new(2);
        thread::scope(|sc| {
            let s1 = &s;
            let h = sc.spawn(move || {
                s1.enter(1).unwrap();
                s1.block(1, "a reply").unwrap_err().to_string()
            });
            s.enter(0).unwrap();
            s.sync(0).unwrap();
            s.finish(0);
            let e = h.join().unwrap();
            assert!(
                e.contains("deadlock") && e.contains("rank 1 waits for a reply"),
                "{e}"
            );
        });
    }
}
