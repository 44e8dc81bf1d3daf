//! The second process of a measured pair, and where each process runs: a `fork` of this
//! process pinned to its own CPU, running one closure and leaving by `_exit`; the pinning of
//! this process for the length of a measurement ([`Pinned`], which gives the CPUs back); the
//! two CPUs a pair uses ([`pair_cpus`]); and a shared anonymous mapping of separate cache
//! lines, made before the fork so both processes see the same memory ([`SharedLines`]).

use std::num::NonZeroUsize;
use std::ptr::NonNull;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

use bench_core::machine;
use nix::sched::CpuSet;
use nix::sys::mman::{mmap_anonymous, munmap, MapFlags, ProtFlags};
use nix::sys::signal::{kill, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::{fork, ForkResult, Pid};

use crate::LimitsError;

/// The child's exit statuses, and what they mean in an error line.
pub const GAVE_UP: i32 = 2;
pub const CALL_FAILED: i32 = 3;
const PIN_FAILED: i32 = 4;
const PANICKED: i32 = 101;

fn meaning(status: i32) -> String {
    let why = match status {
        GAVE_UP => " (it gave up waiting for this process)",
        CALL_FAILED => " (a system call failed in it)",
        PIN_FAILED => " (it could not pin itself to its CPU)",
        PANICKED => " (it panicked)",
        _ => "",
    };
    format!("exited with status {status}{why}")
}

/// The two CPUs a pair runs on: the first two this process may use.
pub fn pair_cpus() -> Result<(usize, usize), LimitsError> {
    match machine::allowed_cpus()[..] {
        [a, b, ..] => Ok((a, b)),
        [a] => Err(LimitsError::OneCpu(a)),
        [] => Err(LimitsError::OneCpu(0)),
    }
}

/// This process pinned to one CPU until dropped, when it may run where it could before.
pub struct Pinned {
    before: CpuSet,
}

impl Pinned {
    pub fn to(cpu: usize) -> Result<Pinned, LimitsError> {
        let me = Pid::from_raw(0);
        let pin = |source| LimitsError::Pin {
            who: "this process",
            cpu,
            source,
        };
        let before = nix::sched::sched_getaffinity(me).map_err(pin)?;
        machine::bind_to_cpu(cpu).map_err(pin)?;
        Ok(Pinned { before })
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        let _ = nix::sched::sched_setaffinity(Pid::from_raw(0), &self.before);
    }
}

/// A forked process running one closure, killed and reaped if dropped before it ended.
pub struct Child {
    pid: Pid,
    peer: &'static str,
    reaped: bool,
}

/// Forks a process pinned to `cpu` that runs `body` and exits with the status it returns.
/// `peer` names it in errors ("pong", "CMA target").
///
/// The child dies with this process (PR_SET_PDEATHSIG), never returns into the caller's code
/// (a panic becomes status 101), and leaves by `_exit`, so neither destructors nor buffered
/// output of the parent's run twice.
pub fn spawn(
    peer: &'static str,
    cpu: usize,
    body: impl FnOnce() -> i32,
) -> Result<Child, LimitsError> {
    // SAFETY: fabbench calls the limits from its one thread (see the crate's comment), so no
    // lock is held by a thread that does not exist in the child; the child only touches
    // memory it inherited, makes system calls and leaves by _exit.
    match unsafe { fork() } {
        Ok(ForkResult::Child) => {
            // SAFETY: prctl with an integer argument; _exit ends the process without
            // returning into the parent's stack frames.
            unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
            let status = if machine::bind_to_cpu(cpu).is_err() {
                PIN_FAILED
            } else {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)).unwrap_or(PANICKED)
            };
            unsafe { libc::_exit(status) }
        }
        Ok(ForkResult::Parent { child }) => Ok(Child {
            pid: child,
            peer,
            reaped: false,
        }),
        Err(source) => Err(LimitsError::Fork { peer, source }),
    }
}

impl Child {
    pub fn pid(&self) -> Pid {
        self.pid
    }

    /// What became of the child, for an error line, without waiting.
    pub fn state(&mut self) -> String {
        match waitpid(self.pid, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) => "it is still running".into(),
            Ok(s) => {
                self.reaped = true;
                format!("it {}", how(s))
            }
            Err(e) => format!("its state is unknown: {e}"),
        }
    }

    /// The error for a wait on this child that ran out during `stage`.
    pub fn timeout(&mut self, stage: &str, waited: Duration) -> LimitsError {
        LimitsError::Timeout {
            peer: self.peer,
            stage: stage.to_string(),
            waited,
            state: self.state(),
        }
    }

    /// Waits (bounded) for the child to exit after `stage`; an exit other than 0 is an error.
    pub fn finish(mut self, stage: &str) -> Result<(), LimitsError> {
        let start = Instant::now();
        loop {
            match waitpid(self.pid, Some(WaitPidFlag::WNOHANG)) {
                Ok(WaitStatus::StillAlive) => {}
                Ok(WaitStatus::Exited(_, 0)) => {
                    self.reaped = true;
                    return Ok(());
                }
                Ok(s) => {
                    self.reaped = true;
                    return Err(LimitsError::PeerFailed {
                        peer: self.peer,
                        how: how(s),
                        stage: stage.to_string(),
                    });
                }
                Err(e) => {
                    self.reaped = true;
                    return Err(LimitsError::PeerFailed {
                        peer: self.peer,
                        how: format!("could not be waited for ({e})"),
                        stage: stage.to_string(),
                    });
                }
            }
            if start.elapsed() > crate::wait::PEER_TIMEOUT {
                return Err(self.timeout(&format!("its exit after {stage}"), start.elapsed()));
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

fn how(s: WaitStatus) -> String {
    match s {
        WaitStatus::Exited(_, code) => meaning(code),
        WaitStatus::Signaled(_, sig, _) => format!("was killed by {}", sig.as_str()),
        other => format!("stopped ({other:?})"),
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if !self.reaped {
            let _ = kill(self.pid, Signal::SIGKILL);
            let _ = waitpid(self.pid, None);
        }
    }
}

/// Distance between two lines of a [`SharedLines`]: two cache lines, so the adjacent-line
/// prefetcher, which fetches 128-byte pairs, never couples them.
pub const LINE_STRIDE: usize = 128;
/// How many lines a mapping holds.
pub const LINES: usize = 4;

/// A shared anonymous mapping (MAP_SHARED, made before the fork, so the child writes the same
/// memory) holding [`LINES`] 64-bit words, each at the start of its own 64-byte line.
pub struct SharedLines {
    base: NonNull<libc::c_void>,
    len: usize,
}

impl SharedLines {
    pub fn new() -> Result<SharedLines, LimitsError> {
        let len = LINES * LINE_STRIDE;
        // SAFETY: a fresh anonymous mapping at an address the kernel picks; it is unmapped
        // only in drop, after every reference handed out (borrows of self) has ended.
        let base = unsafe {
            mmap_anonymous(
                None,
                NonZeroUsize::new(len).expect("not zero"),
                ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
                MapFlags::MAP_SHARED,
            )
        }
        .map_err(LimitsError::Map)?;
        Ok(SharedLines { base, len })
    }

    /// The word at the start of line `i` (page-aligned mapping, so 64-byte aligned).
    pub fn line(&self, i: usize) -> &AtomicU64 {
        assert!(i < LINES, "line {i} of {LINES}");
        // SAFETY: in bounds (checked above), aligned (page + multiple of 128), zeroed by the
        // kernel, and only ever accessed atomically.
        unsafe {
            &*self
                .base
                .as_ptr()
                .cast::<u8>()
                .add(i * LINE_STRIDE)
                .cast::<AtomicU64>()
        }
    }
}

impl Drop for SharedLines {
    fn drop(&mut self) {
        // SAFETY: the mapping made in new, unmapped once.
        let _ = unsafe { munmap(self.base, self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    #[test]
    fn a_child_writes_the_shared_line_and_its_status_is_reported() {
        let lines = SharedLines::new().unwrap();
        let cpu = machine::allowed_cpus()[0];
        let child = spawn("writer", cpu, || {
            lines.line(1).store(42, Ordering::Release);
            0
        })
        .unwrap();
        child.finish("the test").unwrap();
        assert_eq!(lines.line(1).load(Ordering::Acquire), 42);
        assert_eq!(lines.line(0).load(Ordering::Acquire), 0);
        let failing = spawn("failing", cpu, || GAVE_UP).unwrap();
        let e = failing.finish("the test").unwrap_err().to_string();
        assert!(e.contains("failing process exited with status 2"), "{e}");
    }
}
