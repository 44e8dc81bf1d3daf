//! Blocking. A blocking call progresses the engine until its operations complete, and every so
//! often checks that the peer it waits on still lives and that it has not waited past `timeout`,
//! so a failure ends in an error naming the peer and the stage instead of a hang. The receive
//! thread is here too: the same progress loop, run while the application computes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::error::{Result, TransportError};
use crate::spin::SpinLock;
use crate::transport::ReqId;

use super::ops::req_index;
use super::state::{Core, State};
use super::state::{Op, RecvPhase, SendPhase};
use super::Engine;

/// How many idle progress passes go by between looks at the clock and at peers' liveness.
const CHECK_EVERY: u64 = 1024;

pub(super) struct RxThread {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<()>,
}

impl Engine {
    pub(super) fn start_rx_thread(&self) {
        let stop = Arc::new(AtomicBool::new(false));
        let core = self.core.clone();
        let flag = stop.clone();
        let handle = thread::Builder::new()
            .name(format!("rx-rank{}", self.rank))
            .spawn(move || rx_loop(core, flag))
            .expect("spawn receive thread");
        *self.rx.lock().unwrap() = Some(RxThread { stop, handle });
    }

    /// Waits until `done(core)` says so, progressing; errors name what was awaited.
    pub(super) fn block_on(
        &self,
        core: &mut Core,
        mut done: impl FnMut(&mut State) -> Result<bool>,
        what: impl Fn(&State) -> Pending,
    ) -> Result<()> {
        let mut w = Waiter::default();
        loop {
            if done(&mut core.st)? {
                return Ok(());
            }
            if core.progress()? {
                w.active();
                continue;
            }
            w.idle(core, self.timeout, &what)?;
        }
    }
}

/// Idle bookkeeping shared by every blocking wait: spin/yield through the wire, and every
/// CHECK_EVERY idle rounds check peers' liveness and the timeout.
#[derive(Default)]
pub(super) struct Waiter {
    idle: u64,
    since: Option<Instant>,
}

impl Waiter {
    #[inline]
    pub(super) fn active(&mut self) {
        self.idle = 0;
        self.since = None;
    }

    #[inline]
    pub(super) fn idle(
        &mut self,
        core: &mut Core,
        timeout: Duration,
        what: &dyn Fn(&State) -> Pending,
    ) -> Result<()> {
        self.idle += 1;
        core.wire.idle(self.idle)?;
        if !self.idle.is_multiple_of(CHECK_EVERY) {
            return Ok(());
        }
        let pending = what(&core.st);
        if let Err(e) = core.wire.check_peers(pending.rank) {
            // A peer may send its last frames and exit between our last poll and this check
            // (it leaves the final barrier first): take what it left before calling it gone.
            if core.progress()? {
                self.active();
                return Ok(());
            }
            return Err(e.with_stage(&core.st.stage));
        }
        // The clock starts at the first check, so the fast path never reads it.
        let start = *self.since.get_or_insert_with(Instant::now);
        if start.elapsed() >= timeout {
            let Pending { peer, what, .. } = pending;
            let e = TransportError::Timeout {
                peer,
                what,
                stage: core.st.stage.clone(),
                after: timeout,
            };
            core.st.fatal = Some(e.clone());
            return Err(e);
        }
        Ok(())
    }
}

fn rx_loop(core: Arc<SpinLock<Core>>, stop: Arc<AtomicBool>) {
    let mut idle = 0u32;
    while !stop.load(Ordering::Relaxed) {
        let active = match core.try_lock() {
            Some(mut c) if c.st.fatal.is_none() => match c.progress() {
                Ok(a) => a,
                Err(e) => {
                    c.st.fatal = Some(e);
                    false
                }
            },
            _ => false,
        };
        if active {
            idle = 0;
            continue;
        }
        idle = idle.saturating_add(1);
        // Spin briefly, then get out of the way: on a busy node the progress thread must not
        // steal the core the application runs on.
        if idle < 64 {
            std::hint::spin_loop();
        } else if idle < 256 {
            thread::yield_now();
        } else {
            thread::sleep(Duration::from_micros(50));
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        if let Some(rx) = self.rx.lock().unwrap().take() {
            rx.stop.store(true, Ordering::Relaxed);
            let _ = rx.handle.join();
        }
    }
}

/// What a wait is waiting for: the peer it depends on (None: any), and words for errors.
pub(super) struct Pending {
    pub(super) rank: Option<usize>,
    pub(super) peer: String,
    pub(super) what: String,
}

/// The first still-pending request among `reqs`, for liveness checks and timeout messages.
pub(super) fn describe_pending(st: &State, reqs: &[ReqId]) -> Pending {
    for r in reqs {
        if *r == ReqId::DONE {
            continue;
        }
        let (idx, gen) = req_index(r.0);
        let Some(slot) = st.slots.get(idx).filter(|s| s.gen == gen) else {
            continue;
        };
        match &slot.op {
            Op::Send(s) => {
                let what = match s.phase {
                    SendPhase::Queued => "room on the wire for a send",
                    SendPhase::WaitCts => "the receiver to accept a rendezvous send",
                    SendPhase::Streaming { .. } => "room on the wire for rendezvous data",
                    SendPhase::Sharing { .. } => {
                        "the receiver to finish reading a shared single copy"
                    }
                    SendPhase::Flushing => "room in the kernel for the last rendezvous data",
                };
                return Pending {
                    rank: Some(s.dst),
                    peer: format!("rank {}", s.dst),
                    what: format!("{what} of {} bytes with tag {}", s.len, s.tag),
                };
            }
            Op::Recv(rc) => {
                let rank = match (&rc.phase, rc.src) {
                    (RecvPhase::Receiving { from, .. }, _) => Some(*from),
                    (_, s) => s,
                };
                let peer = rank
                    .map(|r| format!("rank {r}"))
                    .unwrap_or_else(|| "any rank".into());
                let what = match rc.phase {
                    RecvPhase::Receiving { len, got, .. } => {
                        format!("rendezvous data ({got} of {len} bytes arrived)")
                    }
                    _ => format!(
                        "a message with tag {} ({} bytes of room)",
                        rc.tag
                            .map(|t| t.to_string())
                            .unwrap_or_else(|| "any".into()),
                        rc.cap
                    ),
                };
                return Pending { rank, peer, what };
            }
            _ => continue,
        }
    }
    Pending {
        rank: None,
        peer: "a peer".into(),
        what: "a request".into(),
    }
}
