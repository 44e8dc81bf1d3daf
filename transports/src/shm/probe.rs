//! The single-copy probe behind `single_copy=auto`: which of copying through the rings and
//! reading in place with CMA is faster depends on the host (cache layout, whether the two
//! cores share a cache complex, how the hypervisor maps memory, the cost of the system call),
//! and it changes between machines of the same name: on one 2-vCPU EPYC VM copying won at every
//! size, on another CMA won by 1.6x from 64 KiB up. So at connect time ranks 0 and 1 time both
//! paths for a ladder of sizes, the way the engine uses them (rank 0's buffer, rank 1
//! receiving), and the crossover they find decides for every pair in the same socket class.
//!
//! The copy trial is a request frame to rank 0 (standing in for the CTS hop the copy protocol
//! pays) and `size` bytes streamed back in fragments; the CMA trial is one `process_vm_readv`,
//! or, from `SHARE_MIN` up with `single_copy_share` above 0, the engine's shared single copy:
//! a request to rank 0 to write the tail with `process_vm_writev` while rank 1 reads the head.
//! Each size is tried `REPS` times in alternating order and the fastest of each kept: the
//! floor is what the hardware allows, and a noisy neighbour only ever adds time.

use std::time::{Duration, Instant};

use bench_core::bootstrap::Bootstrap;
use bench_core::clock::RealClock;
use bench_core::size::format_size;

use super::cma::{self, CmaRead};
use super::ring::{Consumer, Producer};
use crate::engine::SHARE_MIN;
use crate::error::{Result, TransportError};

/// Sizes tried: from a rendezvous-sized message to well past the last-level cache.
pub const SIZES: &[u64] = &[8 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20];
const REPS: usize = 5;
const KEY_SRC: &str = "shm/probe/src";
const KEY_RESULT: &str = "shm/probe/result";

/// One size's fastest trial of each path, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trial {
    pub size: u64,
    pub copy_ns: u64,
    pub cma_ns: u64,
}

/// What the probe found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Single copy from this size up; copying below it (`None`: copying at every size).
    Measured {
        from: Option<u64>,
        trials: Vec<Trial>,
    },
    /// The kernel refused CMA (ptrace policy, no CMA): copying at every size.
    Refused(String),
}

impl Verdict {
    /// Whether a rendezvous transfer of `len` bytes should be read in place.
    pub fn single_copy(&self, len: u64) -> bool {
        matches!(self, Verdict::Measured { from: Some(f), .. } if len >= *f)
    }

    /// One line for the manifest and the run's closing comment.
    pub fn describe(&self) -> String {
        match self {
            Verdict::Refused(why) => format!("copy at every size: the kernel refused CMA ({why})"),
            Verdict::Measured { from, trials } => {
                let choice = match from {
                    Some(f) => format!("cma from {}, copy below", format_size(*f)),
                    None => "copy at every size".to_string(),
                };
                let table: Vec<String> = trials
                    .iter()
                    .map(|t| {
                        format!(
                            "{} copy {:.1} us cma {:.1} us",
                            format_size(t.size),
                            t.copy_ns as f64 / 1e3,
                            t.cma_ns as f64 / 1e3
                        )
                    })
                    .collect();
                format!("{choice} (probe, best of {REPS}: {})", table.join(", "))
            }
        }
    }

    /// The verdict as rank 1 publishes it through the bootstrap (`decode` reads it back on
    /// every rank; public, like `decode`, for the fuzz target `shm_segment`).
    pub fn encode(&self) -> String {
        match self {
            Verdict::Refused(why) => format!("refused {why}"),
            Verdict::Measured { trials, .. } => trials
                .iter()
                .map(|t| format!("{}/{}/{}", t.size, t.copy_ns, t.cma_ns))
                .collect::<Vec<_>>()
                .join(","),
        }
    }

    /// What rank 1 published, or None when it is not a verdict.
    pub fn decode(s: &str) -> Option<Verdict> {
        if let Some(why) = s.strip_prefix("refused ") {
            return Some(Verdict::Refused(why.to_string()));
        }
        let trials = s
            .split(',')
            .map(|t| {
                let mut p = t.split('/').map(|x| x.parse::<u64>().ok());
                Some(Trial {
                    size: p.next()??,
                    copy_ns: p.next()??,
                    cma_ns: p.next()??,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Verdict::Measured {
            from: crossover(&trials),
            trials,
        })
    }
}

/// The smallest probed size from which single copy won at that size and every larger one;
/// a size where copying won above a CMA win keeps copying (no flapping on a noisy trial).
pub fn crossover(trials: &[Trial]) -> Option<u64> {
    let mut sorted = trials.to_vec();
    sorted.sort_by_key(|t| t.size);
    let mut from = None;
    for t in sorted.iter().rev() {
        if t.cma_ns < t.copy_ns {
            from = Some(t.size);
        } else {
            break;
        }
    }
    from
}

/// The pair that probes and the rings between them.
pub struct Link<'a> {
    pub boot: &'a dyn Bootstrap,
    pub rank: usize,
    /// The other rank of the probing pair and its pid.
    pub peer: usize,
    pub peer_pid: i32,
    pub tx: &'a mut Producer,
    pub rx: &'a mut Consumer,
    /// Largest payload one frame carries.
    pub chunk: usize,
    /// Percent of a single copy the sender writes (the engine's `single_copy_share`).
    pub share: u8,
    pub timeout: Duration,
}

/// Runs the probe on ranks 0 and 1 and returns what rank 1 measured, on every rank.
pub fn run(link: Option<Link<'_>>, boot: &dyn Bootstrap, timeout: Duration) -> Result<Verdict> {
    if let Some(mut l) = link {
        match l.rank {
            0 => serve(&mut l)?,
            _ => {
                let v = measure(&mut l)?;
                boot.put(KEY_RESULT, &v.encode())?;
            }
        }
    }
    let s = boot.get(KEY_RESULT, timeout)?;
    Verdict::decode(&s).ok_or_else(|| {
        TransportError::Setup(format!(
            "shm: rank 1 published a malformed probe result '{s}'"
        ))
    })
}

fn stalled(l: &Link<'_>, what: &str) -> TransportError {
    TransportError::Setup(format!(
        "shm: single-copy probe: rank {} (pid {}) did not {what} within {}",
        l.peer,
        l.peer_pid,
        humantime::format_duration(l.timeout)
    ))
}

/// Spins until `step` yields, failing with `what` rank 0 or 1 did not do once `timeout` has
/// passed. The clock is read every 1024 spins only: some of these waits are being timed.
fn spin_until<T>(
    l: &mut Link<'_>,
    what: &str,
    mut step: impl FnMut(&mut Link<'_>) -> Option<T>,
) -> Result<T> {
    let deadline = Instant::now() + l.timeout;
    let mut spins = 0u32;
    loop {
        if let Some(v) = step(l) {
            return Ok(v);
        }
        spins = spins.wrapping_add(1);
        if spins.is_multiple_of(1024) && Instant::now() > deadline {
            return Err(stalled(l, what));
        }
        std::hint::spin_loop();
    }
}

/// Rank 0: publishes its buffer and streams the requested sizes until told to stop.
fn serve(l: &mut Link<'_>) -> Result<()> {
    let max = *SIZES.last().unwrap_or(&0) as usize;
    let src = vec![0x5au8; max];
    l.boot.put(KEY_SRC, &(src.as_ptr() as u64).to_string())?;
    loop {
        let req = spin_until(l, "ask for the next trial", |l| {
            let req = Request::decode(l.rx.peek()?);
            l.rx.release();
            Some(req)
        })?;
        let want = (req.size as usize).min(max);
        if want == 0 {
            return Ok(());
        }
        if req.tail > 0 {
            // The sender's share of a shared single copy: write the tail, then say so.
            let tail = (req.tail as usize).min(want);
            let from = &src[want - tail..want];
            // Rank 1 learns whether the write worked; it decides what a refusal means.
            let wrote = matches!(cma::write(l.peer_pid, req.dst, from), Ok(CmaRead::Done));
            spin_until(l, "drain the ring", |l| {
                l.tx.try_push(&[wrote as u8], &[]).then_some(())
            })?;
            continue;
        }
        let mut sent = 0;
        while sent < want {
            let end = (sent + l.chunk).min(want);
            spin_until(l, "drain the ring", |l| {
                l.tx.try_push(&[], &src[sent..end]).then_some(())
            })?;
            sent = end;
        }
    }
}

/// Rank 1: times both paths at every size and tells rank 0 to stop.
fn measure(l: &mut Link<'_>) -> Result<Verdict> {
    let clock = RealClock::new();
    let src: u64 =
        l.boot.get(KEY_SRC, l.timeout)?.parse().map_err(|_| {
            TransportError::Setup("shm: rank 0 published a bad probe address".into())
        })?;
    let max = *SIZES.last().unwrap_or(&0) as usize;
    let mut dst = vec![0u8; max];
    let mut trials: Vec<Trial> = SIZES
        .iter()
        .map(|&size| Trial {
            size,
            copy_ns: u64::MAX,
            cma_ns: u64::MAX,
        })
        .collect();
    let mut refused = None;
    'reps: for rep in 0..REPS {
        for t in trials.iter_mut() {
            let n = t.size as usize;
            for path in 0..2 {
                // Alternate which path goes first so neither always finds the caches warm.
                if (path + rep) % 2 == 0 {
                    t.copy_ns = t.copy_ns.min(copy_trial(l, &clock, &mut dst[..n])?);
                } else {
                    let t0 = clock.now();
                    let share = if n >= SHARE_MIN {
                        (n * l.share as usize / 100) & !4095
                    } else {
                        0
                    };
                    if share > 0 {
                        let dst_tail = dst[n - share..].as_ptr() as u64;
                        push_request(
                            l,
                            Request {
                                size: n as u64,
                                tail: share as u64,
                                dst: dst_tail,
                            },
                        )?;
                    }
                    let mut read = cma::read(l.peer_pid, src, &mut dst[..n - share]);
                    // Rank 0 answers every request, so the rings are left empty either way.
                    if share > 0 && !await_write(l)? && matches!(read, Ok(CmaRead::Done)) {
                        read = Ok(CmaRead::Refused(nix::errno::Errno::EPERM));
                    }
                    match read {
                        Ok(CmaRead::Done) => t.cma_ns = t.cma_ns.min(clock.now() - t0),
                        Ok(CmaRead::Refused(e)) => {
                            refused = Some(e.desc().to_string());
                            break 'reps;
                        }
                        Err(e) => {
                            return Err(TransportError::Setup(format!(
                                "shm: single-copy probe: reading rank {}'s buffer failed: {e}",
                                l.peer
                            )))
                        }
                    }
                }
            }
        }
    }
    push_request(l, Request::default())?;
    Ok(match refused {
        Some(why) => Verdict::Refused(why),
        None => Verdict::Measured {
            from: crossover(&trials),
            trials,
        },
    })
}

/// What rank 1 asks of rank 0: stream `size` bytes, or (with `tail`) write the last `tail`
/// bytes of `size` at `dst`; a zero size ends the probe. Three u64 in network order, like
/// every header that crosses between ranks. Public for the fuzz target `shm_segment`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Request {
    pub size: u64,
    pub tail: u64,
    pub dst: u64,
}

impl Request {
    pub fn encode(&self) -> [u8; 24] {
        let mut b = [0u8; 24];
        b[..8].copy_from_slice(&self.size.to_be_bytes());
        b[8..16].copy_from_slice(&self.tail.to_be_bytes());
        b[16..].copy_from_slice(&self.dst.to_be_bytes());
        b
    }

    /// The request in frame `f` as rank 0 reads it: a short frame's missing bytes are zero,
    /// bytes past 24 are not read.
    pub fn decode(f: &[u8]) -> Request {
        let mut b = [0u8; 24];
        let n = f.len().min(24);
        b[..n].copy_from_slice(&f[..n]);
        let at = |o: usize| u64::from_be_bytes(b[o..o + 8].try_into().expect("8 bytes"));
        Request {
            size: at(0),
            tail: at(8),
            dst: at(16),
        }
    }
}

/// Waits for rank 0's note on its share: whether the write worked.
fn await_write(l: &mut Link<'_>) -> Result<bool> {
    spin_until(l, "write its share", |l| {
        let wrote = l.rx.peek()?.first() == Some(&1);
        l.rx.release();
        Some(wrote)
    })
}

fn push_request(l: &mut Link<'_>, req: Request) -> Result<()> {
    spin_until(l, "take a probe request", |l| {
        l.tx.try_push(&req.encode(), &[]).then_some(())
    })
}

/// Asks for `dst.len()` bytes through the ring and copies them out as the engine does.
fn copy_trial(l: &mut Link<'_>, clock: &RealClock, dst: &mut [u8]) -> Result<u64> {
    let t0 = clock.now();
    push_request(
        l,
        Request {
            size: dst.len() as u64,
            ..Request::default()
        },
    )?;
    let mut got = 0;
    while got < dst.len() {
        got += spin_until(l, "stream the probe bytes", |l| {
            let f = l.rx.peek()?;
            let n = f.len().min(dst.len() - got);
            dst[got..got + n].copy_from_slice(&f[..n]);
            l.rx.release();
            Some(n)
        })?;
    }
    Ok(clock.now() - t0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(size: u64, copy_ns: u64, cma_ns: u64) -> Trial {
        Trial {
            size,
            copy_ns,
            cma_ns,
        }
    }

    #[test]
    fn crossover_is_where_single_copy_starts_winning_for_good() {
        assert_eq!(
            crossover(&[t(8, 10, 20), t(64, 30, 20), t(1024, 300, 100)]),
            Some(64)
        );
        assert_eq!(crossover(&[t(8, 10, 5), t(64, 30, 20)]), Some(8));
        assert_eq!(crossover(&[t(8, 10, 20), t(64, 30, 40)]), None);
        // A copy win above a CMA win keeps copying up to it.
        assert_eq!(
            crossover(&[t(8, 10, 5), t(64, 30, 40), t(1024, 300, 100)]),
            Some(1024)
        );
        // Order of the trials does not matter; ties go to copying.
        assert_eq!(crossover(&[t(1024, 300, 100), t(64, 30, 30)]), Some(1024));
    }

    #[test]
    fn requests_round_trip() {
        let r = Request {
            size: 1 << 20,
            tail: 1 << 19,
            dst: 0xdead_beef,
        };
        assert_eq!(Request::decode(&r.encode()), r);
        assert_eq!(Request::decode(&[]), Request::default());
        assert_eq!(
            r.encode(),
            [
                0, 0, 0, 0, 0, 0x10, 0, 0, // size
                0, 0, 0, 0, 0, 0x08, 0, 0, // tail
                0, 0, 0, 0, 0xde, 0xad, 0xbe, 0xef, // dst
            ],
            "network order"
        );
    }

    #[test]
    fn verdicts_cross_the_bootstrap_intact() {
        let v = Verdict::Measured {
            from: Some(65536),
            trials: vec![t(16384, 3000, 4000), t(65536, 17000, 8000)],
        };
        assert_eq!(Verdict::decode(&v.encode()), Some(v.clone()));
        assert!(v.single_copy(65536) && !v.single_copy(65535));
        let r = Verdict::Refused("Operation not permitted".into());
        assert_eq!(Verdict::decode(&r.encode()), Some(r.clone()));
        assert!(!r.single_copy(1 << 30));
        assert_eq!(Verdict::decode("1/2"), None);
    }
}
