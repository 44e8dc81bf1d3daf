//! A discrete-event scheduler for the ranks of an emulated job: the engine of virtual time.
//!
//! Every rank has a virtual clock (picoseconds). Exactly one rank runs at a time: the runnable
//! rank with the smallest (clock, rank). A rank calls [`Scheduler::sync`] before every
//! operation that touches shared model state, so operations happen in virtual-time order and
//! contention for a shared resource is resolved exactly, whatever the host does. A rank that
//! has nothing to do [`Scheduler::block`]s until its next event (a frame arriving, a credit
//! coming back); its clock then moves to that event's time. When every unfinished rank is
//! blocked with no event pending, nothing can ever happen again: that is a deadlock, and every
//! rank is told so instead of hanging.
//!
//! Ranks are user-space tasks of one thread ([`crate::tasks`]): a rank waiting for its turn
//! parks its task, and handing the turn on unparks the task named: a swap of stacks in user
//! space, with no system call. The ranks in line are kept ordered by their key, so choosing the next costs
//! a logarithm of the rank count, not a look at every rank: a job of a thousand ranks pays
//! per event about what a job of two does.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::tasks::{self, TaskId};

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
    /// Its place in line: Some(key) while it is in [`State::line`] (never while it runs).
    key: Option<Ps>,
    /// The task the rank runs as, once it has waited for a turn.
    task: Option<TaskId>,
}

struct State {
    ranks: Vec<RankState>,
    /// (key, rank) of every rank that can run but is not running: a runnable rank by its
    /// clock, a blocked one by its earliest event (never before its clock). The running rank
    /// runs on while it is ahead of the first, and then takes its place in line: most calls
    /// leave the line untouched.
    line: BTreeSet<(Ps, usize)>,
    deadlock: Option<String>,
}

impl State {
    fn blocked_report(&self) -> String {
        self.ranks
            .iter()
            .enumerate()
            .filter(|(_, r)| r.status == Status::Blocked)
            .map(|(i, r)| format!("rank {i} waits for {}", r.waiting_for))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// `running` once no rank may run (all finished, or deadlocked).
const NONE: usize = usize::MAX;

/// The scheduler shared by one emulated job's ranks.
pub struct Scheduler {
    state: Mutex<State>,
    /// The first in line as (key, rank), rank NONE when the line is empty: written under the
    /// lock whenever the line changes, read without it by the running rank to see whether it
    /// may run on. Only the running rank changes the line (the ranks are tasks of one thread),
    /// so the two halves never disagree when it reads them.
    first_key: AtomicU64,
    first_rank: AtomicUsize,
    /// Set with the deadlock report, so a rank that runs on sees it without the lock.
    dead: AtomicBool,
    /// Which rank may run (NONE once everyone is finished or deadlocked).
    running: AtomicUsize,
    clocks: Vec<Arc<AtomicU64>>,
}

impl Scheduler {
    /// A scheduler for `n` ranks, all runnable at time 0; rank 0 has the first turn.
    pub fn new(n: usize) -> Arc<Scheduler> {
        Arc::new(Scheduler {
            state: Mutex::new(State {
                ranks: (0..n)
                    .map(|r| RankState {
                        status: Status::Runnable,
                        events: BinaryHeap::new(),
                        waiting_for: String::new(),
                        key: (r > 0).then_some(0),
                        task: None,
                    })
                    .collect(),
                line: (1..n).map(|r| (0, r)).collect(),
                deadlock: None,
            }),
            first_key: AtomicU64::new(0),
            first_rank: AtomicUsize::new(if n > 1 { 1 } else { NONE }),
            dead: AtomicBool::new(false),
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

    /// Moves `rank`'s clock forward to `t` (never back). Only the running rank does this; it
    /// is out of line while it runs, so nothing else needs to know.
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
        if st.ranks[rank].status == Status::Blocked {
            let key = self.blocked_key(&st.ranks[rank], rank);
            self.set_key(&mut st, rank, key);
        }
    }

    /// Waits for `rank`'s first turn.
    pub fn enter(&self, rank: usize) -> Result<(), DesError> {
        self.wait_turn(rank)
    }

    /// Lets any rank that is behind `rank` in virtual time run first; returns when `rank` is
    /// the earliest again. Events of `rank` at or before its clock are consumed.
    pub fn sync(&self, rank: usize) -> Result<(), DesError> {
        // The usual case, without the lock: no one is earlier, so carry on. Events already
        // due stay in the heap until the rank next hands over or blocks, which drains them.
        if !self.dead.load(Ordering::Acquire) {
            let first = self.first_rank.load(Ordering::Acquire);
            if first == NONE
                || (self.first_key.load(Ordering::Acquire), first) > (self.now(rank), rank)
            {
                return Ok(());
            }
        }
        let task = {
            let mut st = self.state.lock().unwrap();
            if let Some(d) = &st.deadlock {
                return Err(DesError::Deadlock(d.clone()));
            }
            let now = self.now(rank);
            drain_until(&mut st.ranks[rank].events, now);
            match self.behind(&st, rank) {
                // Still the earliest: carry on without touching the line.
                None => return Ok(()),
                Some(next) => {
                    self.set_key(&mut st, rank, Some(now));
                    self.give_turn(&mut st, next)
                }
            }
        };
        wake(task);
        self.wait_turn(rank)
    }

    /// Blocks `rank` until its next event; its clock moves to that event's time. `waiting_for`
    /// names what it waits for, for the deadlock report.
    pub fn block(&self, rank: usize, waiting_for: &str) -> Result<(), DesError> {
        let task = {
            let mut st = self.state.lock().unwrap();
            if let Some(d) = &st.deadlock {
                return Err(DesError::Deadlock(d.clone()));
            }
            let now = self.now(rank);
            let r = &mut st.ranks[rank];
            drain_until(&mut r.events, now);
            match r.events.peek() {
                Some(&Reverse(t)) => {
                    // Something is due: become runnable at that time, and run on unless a
                    // rank is earlier.
                    self.advance_to(rank, t);
                    match self.behind(&st, rank) {
                        None => return Ok(()),
                        Some(next) => {
                            self.set_key(&mut st, rank, Some(t));
                            self.give_turn(&mut st, next)
                        }
                    }
                }
                None => {
                    r.status = Status::Blocked;
                    r.waiting_for.clear();
                    r.waiting_for.push_str(waiting_for);
                    match first(&st) {
                        Some(next) => self.give_turn(&mut st, next),
                        None => {
                            let report = st.blocked_report();
                            st.deadlock = Some(report.clone());
                            self.dead.store(true, Ordering::Release);
                            self.running.store(NONE, Ordering::Release);
                            wake_all(&st);
                            return Err(DesError::Deadlock(report));
                        }
                    }
                }
            }
        };
        wake(task);
        self.wait_turn(rank)
    }

    /// `rank` has finished; the turn passes on.
    pub fn finish(&self, rank: usize) {
        let task = {
            let mut st = self.state.lock().unwrap();
            st.ranks[rank].status = Status::Finished;
            self.set_key(&mut st, rank, None);
            if st.deadlock.is_some() {
                return;
            }
            match first(&st) {
                Some(next) => self.give_turn(&mut st, next),
                None => {
                    // Everyone else is finished or blocked forever: let blocked ranks see it.
                    if st.ranks.iter().any(|r| r.status == Status::Blocked) {
                        let report = format!("rank {rank} finished while {}", st.blocked_report());
                        st.deadlock = Some(report);
                        self.dead.store(true, Ordering::Release);
                    }
                    self.running.store(NONE, Ordering::Release);
                    wake_all(&st);
                    None
                }
            }
        };
        wake(task);
    }

    /// Puts `rank` in line at `key`, or takes it out (None), and publishes the first in line.
    fn set_key(&self, st: &mut State, rank: usize, key: Option<Ps>) {
        let r = &mut st.ranks[rank];
        if r.key == key {
            return;
        }
        if let Some(old) = r.key {
            st.line.remove(&(old, rank));
        }
        r.key = key;
        if let Some(k) = key {
            st.line.insert((k, rank));
        }
        let (k, r) = st.line.first().copied().unwrap_or((0, NONE));
        self.first_key.store(k, Ordering::Release);
        self.first_rank.store(r, Ordering::Release);
    }

    /// The rank that should run before the running `rank` (at its clock now), if any: the
    /// first in line when it is earlier, ties to the lower rank.
    fn behind(&self, st: &State, rank: usize) -> Option<usize> {
        let (k, r) = *st.line.first()?;
        ((k, r) < (self.now(rank), rank)).then_some(r)
    }

    /// A blocked rank's key: its earliest event, never before its clock; None with no event.
    fn blocked_key(&self, r: &RankState, rank: usize) -> Option<Ps> {
        r.events.peek().map(|Reverse(t)| (*t).max(self.now(rank)))
    }

    /// Makes `next` (in line) the running rank: out of line, runnable, its clock at its event
    /// if it was blocked. Returns its task, to unpark once the lock is released.
    fn give_turn(&self, st: &mut State, next: usize) -> Option<TaskId> {
        self.set_key(st, next, None);
        let r = &mut st.ranks[next];
        if r.status == Status::Blocked {
            r.status = Status::Runnable;
            if let Some(Reverse(t)) = r.events.peek().copied() {
                self.advance_to(next, t);
            }
        }
        self.running.store(next, Ordering::Release);
        r.task
    }

    fn wait_turn(&self, rank: usize) -> Result<(), DesError> {
        loop {
            {
                let mut st = self.state.lock().unwrap();
                if let Some(d) = &st.deadlock {
                    return Err(DesError::Deadlock(d.clone()));
                }
                if self.running.load(Ordering::Acquire) == rank {
                    return Ok(());
                }
                st.ranks[rank].task = Some(
                    tasks::current()
                        .expect("the ranks of an emulated job run as tasks (bench_core::tasks)"),
                );
            }
            tasks::park();
        }
    }
}

/// The rank first in line.
fn first(st: &State) -> Option<usize> {
    st.line.first().map(|&(_, r)| r)
}

/// Unparks the task given the turn; a rank that has not waited yet finds the turn its own
/// when it first looks.
fn wake(task: Option<TaskId>) {
    if let Some(t) = task {
        tasks::unpark(t);
    }
}

/// Every rank that waits for a turn looks again (and finds the deadlock).
fn wake_all(st: &State) {
    for t in st.ranks.iter().filter_map(|r| r.task) {
        tasks::unpark(t);
    }
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

    fn run_ranks<T>(bodies: Vec<Box<dyn FnOnce() -> T>>) -> Vec<T> {
        tasks::run_all(bodies)
    }

    /// Each rank advances its clock by `step[rank]` per tick; the order in which ticks run
    /// must be exactly the order of virtual time, ties to the lower rank.
    #[test]
    fn ranks_run_in_virtual_time_order() {
        let s = Scheduler::new(3);
        let log = Arc::new(StdMutex::new(Vec::new()));
        let bodies: Vec<Box<dyn FnOnce()>> = [3u64, 5, 7]
            .into_iter()
            .enumerate()
            .map(|(rank, step)| {
                let (s, log) = (s.clone(), log.clone());
                Box::new(move || {
                    s.enter(rank).unwrap();
                    for _ in 0..10 {
                        s.sync(rank).unwrap();
                        let t = s.now(rank);
                        log.lock().unwrap().push((t, rank));
                        s.advance_to(rank, t + step);
                    }
                    s.finish(rank);
                }) as Box<dyn FnOnce()>
            })
            .collect();
        run_ranks(bodies);
        let log = log.lock().unwrap().clone();
        assert_eq!(log.len(), 30);
        let mut sorted = log.clone();
        sorted.sort();
        assert_eq!(log, sorted, "operations ran out of virtual-time order");
    }

    /// A thousand ranks each take a hundred turns: one task switch per turn, so this is quick
    /// however many ranks there are, and still in virtual-time order.
    #[test]
    fn a_thousand_ranks_take_turns_in_order() {
        let n = 1000;
        let s = Scheduler::new(n);
        let last = Arc::new(StdMutex::new((0u64, 0usize, 0usize)));
        let bodies: Vec<Box<dyn FnOnce()>> = (0..n)
            .map(|rank| {
                let (s, last) = (s.clone(), last.clone());
                Box::new(move || {
                    s.enter(rank).unwrap();
                    for _ in 0..100 {
                        s.sync(rank).unwrap();
                        let t = s.now(rank);
                        let mut l = last.lock().unwrap();
                        assert!((t, rank) >= (l.0, l.1), "{rank} at {t} ran after {l:?}");
                        *l = (t, rank, l.2 + 1);
                        drop(l);
                        s.advance_to(rank, t + 1 + (rank as u64 * 7919) % 13);
                    }
                    s.finish(rank);
                }) as Box<dyn FnOnce()>
            })
            .collect();
        run_ranks(bodies);
        assert_eq!(last.lock().unwrap().2, n * 100);
    }

    #[test]
    fn blocking_moves_the_clock_to_the_next_event() {
        let s = Scheduler::new(2);
        let (s0, s1) = (s.clone(), s.clone());
        let bodies: Vec<Box<dyn FnOnce() -> Ps>> = vec![
            Box::new(move || {
                s0.enter(0).unwrap();
                s0.advance_to(0, 100);
                s0.post(1, 500);
                s0.sync(0).unwrap();
                s0.block(0, "nothing").unwrap_err();
                s0.now(0)
            }),
            Box::new(move || {
                s1.enter(1).unwrap();
                // nothing yet: wait; rank 0 posts an event at t=500
                s1.block(1, "a message").unwrap();
                let t = s1.now(1);
                s1.finish(1);
                t
            }),
        ];
        assert_eq!(run_ranks(bodies)[1], 500);
    }

    #[test]
    fn everyone_waiting_with_nothing_in_flight_is_a_deadlock() {
        let s = Scheduler::new(2);
        let bodies: Vec<Box<dyn FnOnce() -> String>> = (0..2)
            .map(|rank| {
                let s = s.clone();
                Box::new(move || {
                    s.enter(rank).unwrap();
                    s.block(rank, &format!("a message from rank {}", 1 - rank))
                        .unwrap_err()
                        .to_string()
                }) as Box<dyn FnOnce() -> String>
            })
            .collect();
        for e in run_ranks(bodies) {
            assert!(e.contains("deadlock"), "{e}");
            assert!(e.contains("rank 0 waits for a message from rank 1"), "{e}");
        }
    }

    #[test]
    fn a_rank_finishing_while_its_peer_waits_ends_the_wait() {
        let s = Scheduler::new(2);
        let (s0, s1) = (s.clone(), s.clone());
        let bodies: Vec<Box<dyn FnOnce() -> String>> = vec![
            Box::new(move || {
                s0.enter(0).unwrap();
                s0.sync(0).unwrap();
                s0.finish(0);
                String::new()
            }),
            Box::new(move || {
                s1.enter(1).unwrap();
                s1.block(1, "a reply").unwrap_err().to_string()
            }),
        ];
        let e = &run_ranks(bodies)[1];
        assert!(
            e.contains("deadlock") && e.contains("rank 1 waits for a reply"),
            "{e}"
        );
    }
}
