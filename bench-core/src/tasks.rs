//! Ranks as user-space tasks: one OS thread runs many stackful coroutines and switches between
//! them itself, a swap of stacks with no system call, instead of parking and waking threads
//! through the kernel (each a system call and a wait for a core, longer the busier the host).
//!
//! The discrete-event scheduler ([`crate::des`]) lets exactly one rank of an emulated job run
//! at a time, so nothing is lost by running them all on one thread; a switch then costs what
//! a function call does, rank count is limited by memory (each task's stack is reserved
//! address space, touched only as deep as the rank goes), and a rank that computes is the
//! only thing its thread does, so the thread's CPU clock times it alone.
//!
//! A task waits in one of two ways: [`park`] until another task [`unpark`]s it (the scheduler
//! hands the turn to a named rank), or [`yield_now`] to let every other ready task run once
//! and then look again (a bootstrap fence polled with a deadline). Code that is not in a task
//! (a unit test's threads, a real fabric's rank) keeps blocking its thread as before.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};

/// A task's index in the [`run`] that started it.
pub type TaskId = usize;

/// Address space reserved for each task's stack. Only the pages a rank touches become
/// memory; a thousand ranks reserve 4 GiB of address space and use a few MiB.
pub const STACK_BYTES: usize = 4 << 20;

/// Why a task did not return normally.
#[derive(Debug)]
pub enum TaskFailure {
    /// The task panicked; the payload as `std::thread::JoinHandle::join` gives it.
    Panicked(Box<dyn Any + Send>),
    /// The task parked and no task was left to wake it: a bug in whoever parked it.
    Stranded,
}

struct Executor {
    ready: VecDeque<TaskId>,
    parked: Vec<bool>,
    /// An unpark that came before its park: the park returns at once (as `thread::park`).
    token: Vec<bool>,
}

type Suspender = Yielder<(), ()>;

thread_local! {
    static EXECUTOR: RefCell<Option<Executor>> = const { RefCell::new(None) };
    /// The running task and the way back to the executor, while a task runs on this thread.
    static CURRENT: Cell<Option<(TaskId, *const Suspender)>> = const { Cell::new(None) };
}

/// Runs every body as a task on this thread until all have returned; what each returned, in
/// order (as joining threads would give it). Tasks start in order, each running until it
/// first waits. Bodies may borrow from the caller: no task outlives this call.
pub fn run<'a, T: 'a, F>(bodies: Vec<F>) -> Vec<Result<T, TaskFailure>>
where
    F: FnOnce() -> T + 'a,
{
    assert!(
        CURRENT.get().is_none(),
        "tasks::run inside a task: tasks do not nest"
    );
    let n = bodies.len();
    let mut coroutines: Vec<Option<Coroutine<(), (), T, DefaultStack>>> = bodies
        .into_iter()
        .enumerate()
        .map(|(id, body)| {
            let stack = DefaultStack::new(STACK_BYTES).expect("reserve a task's stack");
            let body = move |y: &Suspender, ()| {
                // From here on the task finds its way back through CURRENT; every later
                // resume continues inside `suspend`, which sets it again.
                CURRENT.set(Some((id, y as *const Suspender)));
                body()
            };
            // SAFETY: what a body borrows outlives this call, and every coroutine is driven
            // to its end or dropped (its stack unwound) before the call returns, panic or
            // not: `coroutines` is never moved out of this frame or forgotten.
            Some(unsafe { Coroutine::with_stack_unchecked(stack, body) })
        })
        .collect();
    let previous = EXECUTOR.replace(Some(Executor {
        ready: (0..n).collect(),
        parked: vec![false; n],
        token: vec![false; n],
    }));
    assert!(previous.is_none(), "one task executor per thread at a time");
    let _executor = ExecutorGuard;
    let mut results: Vec<Option<Result<T, TaskFailure>>> = (0..n).map(|_| None).collect();
    while let Some(id) =
        EXECUTOR.with_borrow_mut(|e| e.as_mut().expect("running").ready.pop_front())
    {
        let Some(co) = coroutines[id].as_mut() else {
            continue;
        };
        let outcome = catch_unwind(AssertUnwindSafe(|| co.resume(())));
        // A task that returned or panicked left its mark behind.
        CURRENT.set(None);
        match outcome {
            Ok(CoroutineResult::Yield(())) => {}
            Ok(CoroutineResult::Return(v)) => {
                results[id] = Some(Ok(v));
                coroutines[id] = None;
            }
            Err(payload) => {
                results[id] = Some(Err(TaskFailure::Panicked(payload)));
                coroutines[id] = None;
            }
        }
    }
    // Tasks still parked: dropping their coroutines unwinds their stacks, so what they hold
    // is released (under the executor still, for drops that unpark a peer).
    drop(coroutines);
    results
        .into_iter()
        .map(|r| r.unwrap_or(Err(TaskFailure::Stranded)))
        .collect()
}

/// Ends the executor when [`run`] ends, however it ends (a panic of the executor's own
/// included, when a stranded task's unwinding may still unpark: [`unpark`] then finds nobody).
struct ExecutorGuard;

impl Drop for ExecutorGuard {
    fn drop(&mut self) {
        EXECUTOR.set(None);
    }
}

/// [`run`], re-raising the first task's panic: for tests and tools whose ranks must all
/// succeed.
pub fn run_all<'a, T: 'a, F>(bodies: Vec<F>) -> Vec<T>
where
    F: FnOnce() -> T + 'a,
{
    run(bodies)
        .into_iter()
        .enumerate()
        .map(|(i, r)| match r {
            Ok(v) => v,
            Err(TaskFailure::Panicked(p)) => std::panic::resume_unwind(p),
            Err(TaskFailure::Stranded) => panic!("task {i} parked and nobody woke it"),
        })
        .collect()
}

/// The task running on this thread, if any.
pub fn current() -> Option<TaskId> {
    CURRENT.get().map(|(id, _)| id)
}

/// Suspends the running task until [`unpark`]ed (at once if an unpark came first).
///
/// # Panics
/// Outside a task.
pub fn park() {
    let (id, _) = CURRENT.get().expect("tasks::park outside a task");
    let woken = EXECUTOR.with_borrow_mut(|e| {
        let e = e.as_mut().expect("a task runs under an executor");
        if std::mem::take(&mut e.token[id]) {
            true
        } else {
            e.parked[id] = true;
            false
        }
    });
    if !woken {
        suspend();
    }
}

/// Makes task `id` ready; it runs before the tasks that are merely polling, so a hand-over
/// goes straight to the task it names. Outside an executor there is nobody to wake.
pub fn unpark(id: TaskId) {
    EXECUTOR.with_borrow_mut(|e| {
        let Some(e) = e.as_mut() else {
            return;
        };
        if std::mem::take(&mut e.parked[id]) {
            e.ready.push_front(id);
        } else {
            e.token[id] = true;
        }
    });
}

/// Lets every other ready task run once, then continues; outside a task, yields the thread.
pub fn yield_now() {
    let Some((id, _)) = CURRENT.get() else {
        std::thread::yield_now();
        return;
    };
    EXECUTOR.with_borrow_mut(|e| e.as_mut().expect("running").ready.push_back(id));
    suspend();
}

fn suspend() {
    let (id, yielder) = CURRENT.get().expect("suspend outside a task");
    CURRENT.set(None);
    // SAFETY: the pointer was taken from the Yielder of the coroutine running now, which
    // lives on that coroutine's stack for as long as the coroutine does; we are on it.
    unsafe { (*yielder).suspend(()) };
    CURRENT.set(Some((id, yielder)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::rc::Rc;

    #[test]
    fn tasks_run_in_order_until_they_wait_and_return_their_values() {
        let log = RefCell::new(Vec::new());
        let out = run_all(
            (0..3)
                .map(|i| {
                    let log = &log;
                    move || {
                        log.borrow_mut().push((i, 'a'));
                        yield_now();
                        log.borrow_mut().push((i, 'b'));
                        i * 10
                    }
                })
                .collect(),
        );
        assert_eq!(out, vec![0, 10, 20]);
        let order: Vec<_> = log.into_inner();
        assert_eq!(
            order,
            vec![(0, 'a'), (1, 'a'), (2, 'a'), (0, 'b'), (1, 'b'), (2, 'b')]
        );
    }

    /// An unpark goes to the front of the line, and one that comes before the park is kept.
    #[test]
    fn unpark_wakes_a_parked_task_first_and_is_remembered_before_a_park() {
        let log = Rc::new(RefCell::new(Vec::new()));
        let (l0, l1, l2) = (log.clone(), log.clone(), log.clone());
        let bodies: Vec<Box<dyn FnOnce()>> = vec![
            Box::new(move || {
                unpark(2); // before task 2 parks: its park returns at once
                park(); // until task 1 wakes it
                l0.borrow_mut().push("0 woken");
            }),
            Box::new(move || {
                unpark(0);
                l1.borrow_mut().push("1 unparked 0");
                yield_now();
                l1.borrow_mut().push("1 again");
            }),
            Box::new(move || {
                park();
                l2.borrow_mut().push("2 passed its park");
            }),
        ];
        run_all(bodies);
        assert_eq!(
            *log.borrow(),
            vec!["1 unparked 0", "0 woken", "2 passed its park", "1 again"]
        );
    }

    #[test]
    fn a_panicking_task_is_reported_and_the_others_finish() {
        let r = run::<u32, Box<dyn FnOnce() -> u32>>(vec![
            Box::new(|| panic!("rank 0 fails")),
            Box::new(|| {
                yield_now();
                7
            }),
            Box::new(|| {
                park();
                1
            }),
        ]);
        assert!(
            matches!(&r[0], Err(TaskFailure::Panicked(p)) if p.downcast_ref::<&str>() == Some(&"rank 0 fails"))
        );
        assert!(matches!(r[1], Ok(7)));
        assert!(matches!(r[2], Err(TaskFailure::Stranded)));
        // The thread can run tasks again.
        assert_eq!(run_all(vec![|| 1]), vec![1]);
    }

    #[test]
    fn a_thousand_tasks_fit() {
        let n = 1000;
        let sum: usize = run_all(
            (0..n)
                .map(|i| {
                    move || {
                        // Some stack in use across a switch.
                        let buf = [i as u8; 4096];
                        yield_now();
                        std::hint::black_box(&buf)[17] as usize
                    }
                })
                .collect(),
        )
        .into_iter()
        .sum();
        assert_eq!(sum, (0..n).map(|i| i % 256).sum::<usize>());
    }
}
