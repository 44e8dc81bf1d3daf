//! Emulated fabrics: hardware that is not on this machine, run in virtual time.
//!
//! The ranks of an emulated job are tasks of one thread (`bench_core::tasks`) under the
//! discrete-event scheduler of `bench_core::des`. Real bytes move through in-process queues; a [`Model`] of the
//! hardware decides when: what each frame costs the sender's CPU, when it arrives, when the
//! sender must wait for room (credits), what taking it costs the receiver. The model executes
//! the hardware's mechanics (segmenting, mailboxes, DMA versus CPU copies, queues, routing
//! through a neighbour's memory) on [`Resource`]s that are reserved in virtual-time order, so
//! contention is resolved exactly and every run gives the same numbers on any machine.
//!
//! The engine above is the same one every native wire uses; the wire receives a `FragKind`
//! with every frame, which is all a model needs to know what the frame is. A frame in flight
//! holds a copy of its bytes (see [`carried`]), except rendezvous data, which the wire places
//! straight into the receive buffer when it accepts the frame (see [`placing`]), so memory does
//! not grow with the data a model lets be in flight.

pub mod bxi;
pub mod card;
mod carried;
pub mod hyperlink;
pub mod loggp;
mod placing;
pub mod rapidio;
mod resources;
pub mod topology;

pub use resources::{Credits, Resource, World};

use std::cmp::Ordering as CmpOrdering;
use std::collections::{BTreeMap, BinaryHeap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use bench_core::clock::Clock;
use bench_core::des::{DesError, Ps, Scheduler};
use bench_core::tunables::{Settings, Value};

use crate::engine::Engine;
use crate::error::{Result, TransportError};
use crate::fabric::{engine_config, FabricContext};
use crate::transport::Transport;
use crate::wire::{FragKind, GetOutcome, Protocol, Wire, WireCaps};
use carried::{Carried, Copies};
use placing::Placements;

/// Picoseconds per nanosecond.
pub const PS_PER_NS: f64 = 1000.0;

/// The largest frame an emulated wire takes (models segment frames themselves).
pub const MAX_FRAME: usize = 1 << 30;

/// Refusals and retries in a row, over the whole job, with no frame carried or delivered in
/// between, after which the job is a livelock. A healthy run has at most a few per frame in
/// flight between two deliveries (every credit comes back through a delivery); this many take
/// well under a second of real time.
pub const LIVELOCK_FUTILE: u64 = 100_000;

/// Frames delivered between two passes in which the models forget credit history no query can
/// reach: often enough that the history stays short, seldom enough that its cost (a look at
/// every rank's clock and inbox, and at each credit pool) stays out of the per-message cost.
/// A job of n ranks may hold a pool per connection, n^2 of them, so it waits at least n^2
/// frames between passes: at 1024 ranks a pass every 1024 frames cost 95 % of the run.
const FORGET_EVERY: u64 = 1024;

/// Frames between two forgetting passes in a job of `ranks` ranks.
fn forget_every(ranks: usize) -> u64 {
    FORGET_EVERY.max((ranks as u64).saturating_mul(ranks as u64))
}

/// `NAME=VALUE` of a setting in force, as refusals name it.
pub(crate) fn shown(s: &Settings, name: &str) -> String {
    format!("{name}={}", s.get_by_runtime_name::<Value>(name))
}

/// The engine settings an emulated fabric runs with: the shared ones, then the fabric's own.
pub(crate) fn engine_for(
    s: &Settings,
    overrides: fn(&Settings, &mut crate::engine::EngineConfig),
) -> crate::engine::EngineConfig {
    let mut cfg = engine_config(s);
    overrides(s, &mut cfg);
    cfg
}

/// Nanoseconds (a model parameter) as picoseconds.
pub fn ns(x: f64) -> Ps {
    (x * PS_PER_NS).round().max(0.0) as Ps
}

/// The time `bytes` take at `mb_per_s` (10^6 bytes per second), in picoseconds.
pub fn transfer(bytes: u64, mb_per_s: f64) -> Ps {
    if bytes == 0 {
        return 0;
    }
    ((bytes as f64) * 1e6 / mb_per_s).round() as Ps
}

/// One frame as the model sees it.
#[derive(Debug, Clone, Copy)]
pub struct FrameInfo {
    pub src: usize,
    pub dst: usize,
    pub kind: FragKind,
    /// Header and payload.
    pub bytes: u64,
}

/// What offering a frame led to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Offer {
    /// Accepted: the sender is busy until `sender_free`; the frame arrives at `arrival`.
    Sent { sender_free: Ps, arrival: Ps },
    /// No room now; `why` names the resource for error reports. The model has arranged a
    /// wake-up (through [`World::wake`]) for when room may appear, unless it never will.
    Full { why: String },
}

/// What taking an arrived frame led to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Take {
    /// Hand it to the engine; the receiver's CPU is busy for `cost`.
    Deliver { cost: Ps },
    /// The hardware refused it on arrival (e.g. no receive buffer): it arrives again later.
    Retry { arrival: Ps },
}

/// A model of one fabric's hardware and its MPI transport's mechanics.
pub trait Model: Send {
    /// A frame from `f.src` to `f.dst` is offered at `now` (the sender's clock).
    fn offer(&mut self, w: &mut World, f: &FrameInfo, now: Ps) -> Result<Offer>;
    /// `f.dst` takes a frame that arrived at `arrival`, at `now >= arrival`.
    fn take(&mut self, w: &mut World, f: &FrameInfo, arrival: Ps, now: Ps) -> Result<Take>;
    /// Facts for the manifest (topology, rates derived from the card).
    fn describe(&self) -> Vec<(String, String)>;
    /// What the hardware is stuck on, added to a deadlock report.
    fn diagnose(&self) -> Option<String> {
        None
    }
    /// Nothing is asked at a time before `horizon` any more: no rank's clock and no frame in
    /// flight is earlier, and every time a model is asked at derives from one of them. A
    /// model drops history only earlier times could read ([`Credits::forget_before`]).
    fn forget_before(&mut self, _horizon: Ps) {}
}

struct InFlight {
    arrival: Ps,
    order: u64,
    info: FrameInfo,
    /// The frame as the engine sent it; a placed DATA frame's header alone.
    frame: Carried,
}

impl PartialEq for InFlight {
    fn eq(&self, o: &Self) -> bool {
        (self.arrival, self.order) == (o.arrival, o.order)
    }
}
impl Eq for InFlight {}
impl PartialOrd for InFlight {
    fn partial_cmp(&self, o: &Self) -> Option<CmpOrdering> {
        Some(self.cmp(o))
    }
}
impl Ord for InFlight {
    /// Reversed: the heap pops the earliest arrival first, ties in the order sent.
    fn cmp(&self, o: &Self) -> CmpOrdering {
        (o.arrival, o.order).cmp(&(self.arrival, self.order))
    }
}

struct State {
    inbox: Vec<BinaryHeap<InFlight>>,
    model: Box<dyn Model>,
    /// Receive buffers rendezvous data may be placed in.
    placements: Placements,
    /// Ranks whose wire is gone: nothing is placed in their memory, and their clocks no longer
    /// hold the horizon back.
    gone: Vec<bool>,
    /// Frames delivered since the models last forgot what no query can reach.
    since_forget: u64,
    /// How many frames go between two such passes ([`forget_every`]).
    forget_every: u64,
    /// Each rank's last large payload in flight, which the same bytes sent again share.
    copies: Copies,
    order: u64,
    /// Refusals and retries since a frame was last carried or delivered, anywhere in the job.
    futile: u64,
    /// Each rank's last futile attempt and the progress count it came in, for the livelock
    /// report: only attempts since the last progress are reported, so progress never has to
    /// clear them (a look at every rank per frame, at a thousand ranks).
    attempts: Vec<(u64, Option<Attempt>)>,
    /// Frames carried or delivered so far.
    progress: u64,
}

/// A futile attempt as the livelock report names it; kept in parts and put into words only
/// if the report is made (a refusal happens about once a window on a busy link).
enum Attempt {
    /// An offer to `peer` found no room: the model's words for what it waits for.
    Send { peer: usize, why: String },
    /// A frame refused on arrival, in words.
    Retry(String),
}

impl std::fmt::Display for Attempt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Attempt::Send { peer, why } => write!(f, "waits to send to rank {peer}: {why}"),
            Attempt::Retry(what) => f.write_str(what),
        }
    }
}

impl State {
    /// A frame was delivered. Every [`forget_every`] frames, the model forgets what no query
    /// can reach any more.
    fn delivered(&mut self, sched: &Scheduler) {
        self.since_forget += 1;
        if self.since_forget < self.forget_every {
            return;
        }
        self.since_forget = 0;
        let h = self.horizon(sched);
        self.model.forget_before(h);
    }

    /// The earliest time anything can still be asked of the model at: the earliest clock of
    /// a rank still running (clocks never go back) and the earliest arrival of a frame in
    /// flight (a model may price a frame at its arrival; frames sent from now on arrive after
    /// their sender's clock). Called under the state lock, by the one rank that runs.
    fn horizon(&self, sched: &Scheduler) -> Ps {
        let clocks = (0..self.gone.len())
            .filter(|&r| !self.gone[r])
            .map(|r| sched.now(r));
        // A gone rank's inbox is never taken from.
        let arrivals = (0..self.gone.len())
            .filter(|&r| !self.gone[r])
            .filter_map(|r| self.inbox[r].peek().map(|f| f.arrival));
        clocks.chain(arrivals).min().unwrap_or(0)
    }

    /// A frame was carried or delivered: the job progresses.
    fn progressed(&mut self) {
        self.futile = 0;
        self.progress += 1;
    }

    /// `rank` tried and got nowhere; a livelock once that has gone on too long.
    fn futile(&mut self, name: &str, rank: usize, attempt: Attempt) -> Result<()> {
        self.futile += 1;
        self.attempts[rank] = (self.progress, Some(attempt));
        if self.futile < LIVELOCK_FUTILE {
            return Ok(());
        }
        let who = self
            .attempts
            .iter()
            .enumerate()
            .filter_map(|(r, (when, a))| match a {
                Some(a) if *when == self.progress => Some(format!("rank {r} {a}")),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("; ");
        Err(TransportError::Livelock(format!(
            "{name}: {} refusals and retries in a row and no frame carried ({who})",
            self.futile
        )))
    }
}

/// What the rank threads of one emulated job share.
pub struct Shared {
    name: &'static str,
    sched: Arc<Scheduler>,
    state: Mutex<State>,
}

impl Shared {
    pub fn new(name: &'static str, ranks: usize, model: Box<dyn Model>) -> Arc<Shared> {
        Arc::new(Shared {
            name,
            sched: Scheduler::new(ranks),
            state: Mutex::new(State {
                inbox: (0..ranks).map(|_| BinaryHeap::new()).collect(),
                model,
                placements: Placements::new(),
                gone: vec![false; ranks],
                since_forget: 0,
                forget_every: forget_every(ranks),
                copies: Copies::new(ranks),
                order: 0,
                futile: 0,
                attempts: (0..ranks).map(|_| (0, None)).collect(),
                progress: 0,
            }),
        })
    }

    fn deadlock(&self, e: DesError) -> TransportError {
        let DesError::Deadlock(who) = e;
        let hint = self
            .state
            .lock()
            .ok()
            .and_then(|st| st.model.diagnose())
            .map(|h| format!("; {h}"))
            .unwrap_or_default();
        TransportError::Deadlock(format!("{}: {who}{hint}", self.name))
    }
}

/// One rank's end of an emulated fabric.
pub struct EmuWire {
    rank: usize,
    size: usize,
    shared: Arc<Shared>,
    clock: Arc<AtomicU64>,
    /// Why the last offer was refused, for the deadlock report.
    waiting: String,
    /// The emulated node's compute time per unit of host compute time (the card's
    /// `compute_scale`), and the tunable that set it.
    compute_scale: (f64, String),
}

impl EmuWire {
    /// Joins the job's scheduler; returns once it is this rank's turn.
    pub fn new(rank: usize, shared: Arc<Shared>) -> Result<EmuWire> {
        let clock = shared.sched.clock(rank);
        let size = shared.sched.size();
        shared.sched.enter(rank).map_err(|e| shared.deadlock(e))?;
        Ok(EmuWire {
            rank,
            size,
            shared,
            clock,
            waiting: String::new(),
            compute_scale: (1.0, String::new()),
        })
    }

    /// Scales host compute time by `factor` (set by the tunable `param`) in virtual time.
    pub fn with_compute_scale(mut self, factor: f64, param: String) -> EmuWire {
        self.compute_scale = (factor, param);
        self
    }

    fn now(&self) -> Ps {
        self.clock.load(Ordering::Acquire)
    }

    /// An engine asked to place data where no CTS said it may go: its bug, refused before a
    /// byte is written.
    fn misplaced(&self, what: String) -> TransportError {
        TransportError::Protocol {
            peer: format!("rank {} ({})", self.rank, self.shared.name),
            what: format!("refused to place rendezvous data: {what}"),
        }
    }

    fn sync(&self) -> Result<()> {
        self.shared
            .sched
            .sync(self.rank)
            .map_err(|e| self.shared.deadlock(e))
    }
}

impl Drop for EmuWire {
    fn drop(&mut self) {
        // Under the lock placing takes: nothing is written into this rank's memory after its
        // engine is gone (a panicking rank poisons the lock; the job is failing then anyway).
        if let Ok(mut st) = self.shared.state.lock() {
            st.gone[self.rank] = true;
            st.placements.forget(self.rank);
        }
        self.shared.sched.finish(self.rank);
    }
}

impl Wire for EmuWire {
    fn name(&self) -> &str {
        self.shared.name
    }

    fn caps(&self) -> WireCaps {
        WireCaps {
            // Models segment frames themselves; the engine may send frames of any size.
            max_frame: MAX_FRAME,
            single_copy: false,
            virtual_time: true,
            models_rx_thread: true,
            // The ranks are tasks of this process.
            places_data: true,
        }
    }

    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn clock(&self) -> Clock {
        Clock::Virtual(self.clock.clone())
    }

    fn peer_name(&self, peer: usize) -> String {
        format!("rank {peer} ({} node {peer})", self.shared.name)
    }

    fn try_send(
        &mut self,
        peer: usize,
        kind: FragKind,
        header: &[u8],
        payload: &[u8],
    ) -> Result<bool> {
        self.sync()?;
        let now = self.now();
        let info = FrameInfo {
            src: self.rank,
            dst: peer,
            kind,
            bytes: (header.len() + payload.len()) as u64,
        };
        let mut st = self.shared.state.lock().unwrap();
        let place = match kind {
            FragKind::Data {
                rndv,
                len,
                recv_addr,
                placed: true,
                ..
            } => {
                if len != payload.len() as u64 {
                    return Err(self.misplaced(format!(
                        "a DATA frame says {len} bytes but carries {}",
                        payload.len()
                    )));
                }
                if !st.gone[peer] {
                    st.placements
                        .check(peer, rndv, recv_addr, len)
                        .map_err(|e| self.misplaced(e))?;
                }
                Some((rndv, recv_addr))
            }
            _ => None,
        };
        let mut w = World {
            sched: &self.shared.sched,
        };
        match st.model.offer(&mut w, &info, now)? {
            Offer::Sent {
                sender_free,
                arrival,
            } => {
                let frame = match place {
                    Some((rndv, addr)) => {
                        // A gone receiver never reads it: the bytes go nowhere, as its frames.
                        if !st.gone[peer] {
                            st.placements.place(peer, rndv, addr, payload);
                        }
                        Carried::Whole(header.to_vec())
                    }
                    None => {
                        if let FragKind::Cts {
                            rndv,
                            len,
                            recv_addr,
                        } = kind
                        {
                            st.placements.announce(self.rank, rndv, recv_addr, len);
                        }
                        st.copies.carry(self.rank, header, payload)
                    }
                };
                let order = st.order;
                st.order += 1;
                st.inbox[peer].push(InFlight {
                    arrival,
                    order,
                    info,
                    frame,
                });
                st.progressed();
                drop(st);
                self.shared.sched.post(peer, arrival);
                self.shared.sched.advance_to(self.rank, sender_free);
                self.waiting.clear();
                Ok(true)
            }
            Offer::Full { why } => {
                self.waiting.clone_from(&why);
                st.futile(self.shared.name, self.rank, Attempt::Send { peer, why })?;
                Ok(false)
            }
        }
    }

    fn poll(&mut self, sink: &mut dyn FnMut(usize, &[u8]) -> Result<()>) -> Result<usize> {
        self.sync()?;
        let mut n = 0;
        loop {
            let now = self.now();
            let frame = {
                let mut st = self.shared.state.lock().unwrap();
                match st.inbox[self.rank].peek() {
                    Some(f) if f.arrival <= now => {}
                    _ => break,
                }
                let mut f = st.inbox[self.rank].pop().expect("peeked");
                let mut w = World {
                    sched: &self.shared.sched,
                };
                match st.model.take(&mut w, &f.info, f.arrival, now)? {
                    Take::Deliver { cost } => {
                        st.progressed();
                        st.delivered(&self.shared.sched);
                        self.shared.sched.advance_to(self.rank, now + cost);
                        f
                    }
                    Take::Retry { arrival } => {
                        let what = format!(
                            "has a frame from rank {} ({}, {} bytes) refused on arrival at {} ps, to arrive again at {arrival} ps",
                            f.info.src,
                            kind_name(&f.info.kind),
                            f.info.bytes,
                            f.arrival
                        );
                        if arrival <= f.arrival {
                            // Tried again at the same instant, it is refused again, for ever;
                            // without this the loop below would spin in real time.
                            return Err(TransportError::Livelock(format!(
                                "{}: rank {} {what}: no virtual time passes between tries",
                                self.shared.name, self.rank
                            )));
                        }
                        st.futile(self.shared.name, self.rank, Attempt::Retry(what))?;
                        f.arrival = arrival;
                        st.inbox[self.rank].push(f);
                        drop(st);
                        self.shared.sched.post(self.rank, arrival);
                        continue;
                    }
                }
            };
            let src = frame.info.src;
            frame.frame.deliver(|bytes| sink(src, bytes))?;
            n += 1;
        }
        Ok(n)
    }

    fn get(&mut self, _peer: usize, _remote: u64, _local: &mut [u8]) -> Result<GetOutcome> {
        Err(TransportError::Config(format!(
            "{} has no single copy",
            self.shared.name
        )))
    }

    fn preferred_protocol(&self, _peer: usize, _len: u64) -> Protocol {
        Protocol::Copy
    }

    fn idle(&mut self, _idle_rounds: u64) -> Result<()> {
        let what = if self.waiting.is_empty() {
            "a frame".to_string()
        } else {
            self.waiting.clone()
        };
        self.shared
            .sched
            .block(self.rank, &what)
            .map_err(|e| self.shared.deadlock(e))
    }

    fn check_peers(&mut self, _awaited: Option<usize>) -> Result<()> {
        // The scheduler reports waits that can never end as deadlocks.
        Ok(())
    }

    fn charge_compute(&mut self, host_ns: u64) -> Result<()> {
        // This rank held the turn while it computed (one rank thread runs at a time), so its
        // clock only moves forward from the smallest; the next operation's sync hands the
        // turn on in virtual-time order.
        let ps = (host_ns as f64 * self.compute_scale.0 * PS_PER_NS).round() as Ps;
        self.shared.sched.advance_to(self.rank, self.now() + ps);
        Ok(())
    }

    fn compute_scale(&self) -> Option<(f64, String)> {
        Some(self.compute_scale.clone())
    }

    fn delay(&mut self, ns: u64) -> Result<()> {
        // As for computing: this rank holds the turn, so its clock moves on from the
        // smallest; no frame is taken meanwhile.
        let ps = ns.saturating_mul(PS_PER_NS as u64);
        self.shared.sched.advance_to(self.rank, self.now() + ps);
        Ok(())
    }

    fn describe(&self) -> Vec<(String, String)> {
        let mut d = vec![(
            "time".to_string(),
            "virtual (discrete-event scheduler; ranks are tasks of one thread)".to_string(),
        )];
        d.extend(self.shared.state.lock().unwrap().model.describe());
        d
    }
}

/// A frame kind in words, for reports.
fn kind_name(k: &FragKind) -> &'static str {
    match k {
        FragKind::Eager { .. } => "eager",
        FragKind::Rts { .. } => "RTS",
        FragKind::Cts { .. } => "CTS",
        FragKind::Data { .. } => "rendezvous data",
        FragKind::Fin => "FIN",
        FragKind::Put { .. } => "put request",
        FragKind::PutFin => "put FIN",
    }
}

/// Jobs being set up, by job id: the first rank to arrive builds the shared state.
fn jobs() -> &'static Mutex<BTreeMap<String, Arc<Shared>>> {
    static JOBS: OnceLock<Mutex<BTreeMap<String, Arc<Shared>>>> = OnceLock::new();
    JOBS.get_or_init(|| Mutex::new(BTreeMap::new()))
}

/// Brings up an emulated fabric for the calling thread-rank: one shared model and scheduler
/// per job, built from the settings by the first rank to arrive.
pub fn connect(
    ctx: &FabricContext,
    name: &'static str,
    build: fn(&Settings, usize) -> Result<Box<dyn Model>>,
    engine_overrides: fn(&Settings, &mut crate::engine::EngineConfig),
) -> Result<Box<dyn Transport>> {
    let boot = &ctx.boot;
    if !boot.in_process() {
        return Err(TransportError::Config(format!(
            "{name} is emulated: its ranks run as threads of one fabbench process; start it with `fabbench run`, not an external launcher"
        )));
    }
    let rank = boot.rank();
    let n = boot.size();
    let shared = {
        let mut jobs = jobs().lock().unwrap();
        match jobs.get(boot.job_id()) {
            Some(s) => s.clone(),
            None => {
                let s = Shared::new(name, n, build(ctx.settings, n)?);
                jobs.insert(boot.job_id().to_string(), s.clone());
                s
            }
        }
    };
    boot.fence(
        &format!("{name}/joined"),
        crate::fabric::setup_timeout(ctx.settings),
    )?;
    if rank == 0 {
        jobs().lock().unwrap().remove(boot.job_id());
    }
    let cfg = engine_for(ctx.settings, engine_overrides);
    let scale = format!("{name}.compute_scale");
    let factor = ctx.settings.get_by_runtime_name::<f64>(&scale);
    let wire = EmuWire::new(rank, shared)?.with_compute_scale(factor, scale);
    Ok(Box::new(Engine::new(
        Box::new(wire),
        cfg,
        Some(boot.clone()),
    )?))
}

/// Default settings with `pairs` set, for the models' tests.
#[cfg(test)]
pub(crate) fn test_settings(pairs: &[(&str, &str)]) -> Settings {
    let r = crate::registry::registry(&[]);
    let mut s = r.defaults();
    for (k, v) in pairs {
        s.set(&r, k, v, bench_core::tunables::Source::Cli).unwrap();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A model that never lets a frame through: every take is refused and retried `every`
    /// later (0: at the same instant), or every offer finds no room and wakes the sender
    /// `every` later. What no check of the settings can see.
    struct Stuck {
        every: Ps,
        refuse_offers: bool,
    }

    impl Model for Stuck {
        fn offer(&mut self, w: &mut World, f: &FrameInfo, now: Ps) -> Result<Offer> {
            if self.refuse_offers {
                w.wake(f.src, now + self.every);
                return Ok(Offer::Full {
                    why: "room that never comes".into(),
                });
            }
            Ok(Offer::Sent {
                sender_free: now + 1000,
                arrival: now + 5000,
            })
        }
        fn take(&mut self, _w: &mut World, _f: &FrameInfo, arrival: Ps, _now: Ps) -> Result<Take> {
            Ok(Take::Retry {
                arrival: arrival + self.every,
            })
        }
        fn describe(&self) -> Vec<(String, String)> {
            Vec::new()
        }
    }

    /// Rank 0 sends one frame to rank 1, which waits for it; both wait as the engine does
    /// (poll, then idle) until an error. Returns each rank's error; panics if there is none
    /// after a minute (the livelock went unseen: without a bound the ranks would spin on).
    fn run_stuck(model: Stuck) -> Vec<String> {
        let shared = Shared::new("stuck", 2, Box::new(model));
        let (tx, rx) = std::sync::mpsc::channel();
        let ranks: Vec<_> = (0..2)
            .map(|rank| {
                let shared = shared.clone();
                let tx = tx.clone();
                move || {
                    let mut wire = EmuWire::new(rank, shared).unwrap();
                    let mut sent = rank == 1;
                    let e = loop {
                        if !sent {
                            match wire.try_send(1, FragKind::Eager { len: 8 }, &[0; 24], &[0; 8]) {
                                Ok(ok) => sent = ok,
                                Err(e) => break e,
                            }
                        }
                        if let Err(e) = wire.poll(&mut |_, _| Ok(())) {
                            break e;
                        }
                        if let Err(e) = wire.idle(1) {
                            break e;
                        }
                    };
                    drop(wire);
                    let _ = tx.send((rank, e.to_string()));
                }
            })
            .collect();
        std::thread::spawn(move || bench_core::tasks::run(ranks));
        let mut errs = vec![String::new(); 2];
        for _ in 0..2 {
            let (rank, e) = rx
                .recv_timeout(std::time::Duration::from_secs(60))
                .expect("no error after a minute: the livelock went unseen");
            errs[rank] = e;
        }
        errs
    }

    #[test]
    fn a_retry_at_the_same_instant_is_a_livelock_at_once() {
        let errs = run_stuck(Stuck {
            every: 0,
            refuse_offers: false,
        });
        assert!(
            errs[1].starts_with(
                "livelock: stuck: rank 1 has a frame from rank 0 (eager, 32 bytes) refused"
            ) && errs[1].contains("no virtual time passes between tries"),
            "{errs:?}"
        );
    }

    #[test]
    fn retries_for_ever_in_virtual_time_are_a_livelock() {
        let errs = run_stuck(Stuck {
            every: 1000,
            refuse_offers: false,
        });
        assert!(
            errs[1].starts_with(&format!(
                "livelock: stuck: {LIVELOCK_FUTILE} refusals and retries in a row and no frame carried (rank 1 has a frame from rank 0"
            )),
            "{errs:?}"
        );
    }

    #[test]
    fn refusals_for_ever_are_a_livelock() {
        let errs = run_stuck(Stuck {
            every: 1000,
            refuse_offers: true,
        });
        assert!(
            errs[0].contains("refusals and retries in a row and no frame carried (rank 0 waits to send to rank 1: room that never comes)"),
            "{errs:?}"
        );
    }

    #[test]
    fn a_larger_job_forgets_less_often() {
        assert_eq!(forget_every(2), FORGET_EVERY);
        assert_eq!(forget_every(32), FORGET_EVERY);
        assert_eq!(forget_every(1024), 1 << 20);
    }

    #[test]
    fn unit_conversions() {
        assert_eq!(ns(1.5), 1500);
        // 1 MB at 1000 MB/s is 1 ms
        assert_eq!(transfer(1_000_000, 1000.0), 1_000_000_000);
        assert_eq!(transfer(0, 1.0), 0);
    }
}
