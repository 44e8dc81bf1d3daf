//! The shm wire: ranks on one host exchange frames through per-pair rings in one shared
//! segment, and read large buffers in place with CMA when that pays.
//!
//! Which protocol pays depends on the host. Across sockets single copy wins (Open MPI's sm
//! transport gained 36 % choosing it there); within one, it depends on the cache layout and the
//! cost of the system call, and machines of the same name disagree (one 2-vCPU EPYC VM copied
//! faster at every size, the next read in place 1.6x faster from 64 KiB up). So with
//! `single_copy=auto` ranks 0 and 1 time both paths at connect (`probe`), and the crossover
//! they find decides for every pair in their socket class; pairs in the other class (the wire
//! learns each rank's socket from sysfs `physical_package_id`) keep the topology rule.

pub mod cma;
pub mod probe;
pub mod ring;
pub mod segment;

use std::time::Duration;

use bench_core::bootstrap::Bootstrap;
use bench_core::clock::{Clock, RealClock};
use bench_core::tunables::{Def, Key};

use crate::engine::{Engine, SingleCopy};
use crate::error::{Result, TransportError};
use crate::fabric::{
    engine_config, no_library, Availability, FabricContext, FabricDef, FabricKind, Launch,
};
use crate::transport::Transport;
use crate::wire::{FragKind, GetOutcome, Protocol, Wire, WireCaps};
use ring::{Consumer, Producer};
use segment::{segment_path, Segment};

/// The byte area of each shm ring.
pub const RING_BYTES: Key<u64> = Key::size(
    "shm.ring_bytes",
    64 << 10,
    1 << 30,
    "1M",
    "byte area of each shm ring (one per ordered rank pair); raised to hold 4 frames of eager_limit or frag_size",
);

/// The shm wire's tunables.
pub const TUNABLES: &[Def] = &[RING_BYTES.def()];

const MAGIC: &[u8; 8] = b"FABBSHM1";
const HEADER_BYTES: usize = 4096;
/// Bytes of the segment header: the magic, the rank count and each ring's byte area.
pub const SEGMENT_HEADER_LEN: usize = 24;

/// The segment's header, as rank 0 writes it for the others to check: the magic, then the
/// rank count and each ring's byte area as u64 in network order. Only ranks of one host map a
/// segment, but it is encoded like every other header, so nothing depends on that.
pub fn segment_header(size: usize, data_cap: usize) -> [u8; SEGMENT_HEADER_LEN] {
    let mut h = [0u8; SEGMENT_HEADER_LEN];
    h[..8].copy_from_slice(MAGIC);
    h[8..16].copy_from_slice(&(size as u64).to_be_bytes());
    h[16..24].copy_from_slice(&(data_cap as u64).to_be_bytes());
    h
}

/// The rank count and byte area the header at the start of `h` gives, or None without the
/// magic or with fewer than [`SEGMENT_HEADER_LEN`] bytes. What every rank but 0 reads from the
/// segment rank 0 made (public for the fuzz target `shm_segment`).
pub fn read_segment_header(h: &[u8]) -> Option<(u64, u64)> {
    let h = h.get(..SEGMENT_HEADER_LEN)?;
    let at = |o: usize| u64::from_be_bytes(h[o..o + 8].try_into().expect("8 bytes"));
    (&h[..8] == MAGIC).then(|| (at(8), at(16)))
}

/// Frames one poll takes from one peer before looking at the next (fairness).
const POLL_BATCH: usize = 32;

/// The registry line's target.
pub const FABRIC: FabricDef = FabricDef {
    name: "shm",
    kind: FabricKind::Native,
    summary: "shared memory between processes on one host: per-pair rings, CMA single copy",
    availability,
    tunables: shm_tunables,
    defaults: &[],
    replaces: &[],
    ignores: &[],
    check_ranks: crate::fabric::any_ranks,
    check_settings: crate::fabric::settings_independent,
    switch_reach: crate::reach::engine_reach,
    launch: Launch::Processes,
    // Whatever happened to a job, none of its segments may outlive it.
    cleanup: |job| {
        segment::cleanup_job(job);
    },
    library: no_library,
    connect,
};

fn connect(ctx: &FabricContext) -> Result<Box<dyn Transport>> {
    let cfg = engine_config(ctx.settings);
    let scfg = ShmConfig::new(
        ctx.settings.get(RING_BYTES) as usize,
        cfg.eager_limit,
        cfg.frag_size,
        cfg.timeout,
    )
    .with_probe(cfg.single_copy == SingleCopy::Auto, cfg.single_copy_share);
    let wire = ShmWire::connect(ctx.boot.as_ref(), scfg)?;
    Ok(Box::new(Engine::new(
        Box::new(wire),
        cfg,
        Some(ctx.boot.clone()),
    )?))
}

fn availability() -> Availability {
    let dir = segment::segment_path("probe", "probe");
    match dir.parent() {
        Some(p) if p.is_dir() => Availability::Usable,
        _ => Availability::Unusable("no /dev/shm or temporary directory".into()),
    }
}

fn shm_tunables() -> &'static [Def] {
    TUNABLES
}

/// Shm wire settings, derived from the tunables.
#[derive(Debug, Clone, Copy)]
pub struct ShmConfig {
    /// Byte area per ring.
    pub data_cap: usize,
    pub timeout: Duration,
    /// Largest payload a frame carries (the engine's fragment size, within the ring's limit).
    pub chunk: usize,
    /// Time copying against single copy at connect (`single_copy=auto`).
    pub probe: bool,
    /// The engine's `single_copy_share`, which the probe's single copy trials use.
    pub share: u8,
}

impl ShmConfig {
    /// A ring area of at least `ring_bytes` that holds four of the largest frames the engine
    /// will send (eager messages or rendezvous fragments), rounded to 64 bytes.
    pub fn new(ring_bytes: usize, eager_limit: usize, frag_size: usize, timeout: Duration) -> Self {
        let largest = (eager_limit + crate::header::MAX_HEADER_LEN)
            .max(frag_size + crate::header::MAX_HEADER_LEN);
        let data_cap = ring_bytes.max(4 * largest).div_ceil(64) * 64;
        ShmConfig {
            data_cap,
            timeout,
            chunk: frag_size.clamp(1, ring::max_frame(data_cap)),
            probe: false,
            share: 0,
        }
    }

    /// The same, probing single copy at connect as the engine will use it (`share`: the
    /// engine's `single_copy_share`).
    pub fn with_probe(self, probe: bool, share: u8) -> Self {
        ShmConfig {
            probe,
            share,
            ..self
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Peer {
    pid: i32,
    package: Option<u32>,
}

/// How single copy has fared, for the manifest.
#[derive(Debug, Clone, PartialEq)]
enum CmaState {
    Unused,
    Worked,
    Refused(String),
}

pub struct ShmWire {
    rank: usize,
    size: usize,
    _seg: Segment,
    tx: Vec<Option<Producer>>,
    rx: Vec<Option<Consumer>>,
    peers: Vec<Peer>,
    my_package: Option<u32>,
    clock: RealClock,
    data_cap: usize,
    next_peer: usize,
    cma: CmaState,
    /// What the connect-time probe found, and whether ranks 0 and 1 sit on different sockets
    /// (the class of pairs it speaks for).
    probe: Option<(probe::Verdict, bool)>,
    /// More ranks than the CPUs the job's ranks may run on, put together: idle waits yield.
    oversubscribed: bool,
}

/// CPUs as the bootstrap carries them: "0,1,5".
fn cpu_list(cpus: &[usize]) -> String {
    cpus.iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// The CPUs of [`cpu_list`]; an empty or unreadable entry counts none.
fn parse_cpu_list(s: &str) -> impl Iterator<Item = usize> + '_ {
    s.split(',').filter_map(|c| c.parse().ok())
}

fn ring_index(src: usize, dst: usize, size: usize) -> usize {
    src * (size - 1) + if dst < src { dst } else { dst - 1 }
}

impl ShmWire {
    /// Sets up the job's segment through `boot`: rank 0 creates and later unlinks it, every
    /// rank maps it, and all learn each other's pid and socket.
    pub fn connect(boot: &dyn Bootstrap, cfg: ShmConfig) -> Result<ShmWire> {
        let rank = boot.rank();
        let size = boot.size();
        let my_package = bench_core::machine::my_package();
        boot.put(&format!("shm/{rank}/pid"), &std::process::id().to_string())?;
        boot.put(
            &format!("shm/{rank}/pkg"),
            &my_package.map(|p| p.to_string()).unwrap_or_default(),
        )?;
        boot.put(
            &format!("shm/{rank}/cpus"),
            &cpu_list(&bench_core::machine::allowed_cpus()),
        )?;
        let rings = size * size.saturating_sub(1);
        let ring_len = ring::ring_bytes(cfg.data_cap);
        let total = HEADER_BYTES + rings * ring_len;
        let path = segment_path(boot.job_id(), "shm");
        let setup_err = |what: String| TransportError::Setup(format!("shm: {what}"));
        let seg = if rank == 0 {
            let seg = Segment::create(&path, total)
                .map_err(|e| setup_err(format!("cannot create {}: {e}", path.display())))?;
            let h = segment_header(size, cfg.data_cap);
            // SAFETY: the header area is HEADER_BYTES long and freshly zeroed.
            unsafe { std::ptr::copy_nonoverlapping(h.as_ptr(), seg.base(), h.len()) };
            boot.put("shm/segment", &path.display().to_string())?;
            seg
        } else {
            let p = boot.get("shm/segment", cfg.timeout)?;
            let seg = Segment::open(std::path::Path::new(&p), total)
                .map_err(|e| setup_err(format!("cannot map {p}: {e}")))?;
            let mut h = [0u8; SEGMENT_HEADER_LEN];
            // SAFETY: the header was written by rank 0 before it published the path.
            unsafe { std::ptr::copy_nonoverlapping(seg.base(), h.as_mut_ptr(), h.len()) };
            let (n, cap) = read_segment_header(&h).ok_or_else(|| {
                setup_err(format!("{p} is not a fabbench shm segment (no magic)"))
            })?;
            if n != size as u64 || cap != cfg.data_cap as u64 {
                return Err(setup_err(format!(
                    "segment {p} was made for {n} ranks with {cap}-byte rings; this rank expects {size} and {}",
                    cfg.data_cap
                )));
            }
            seg
        };
        let fenced = boot.fence("shm/mapped", cfg.timeout);
        if rank == 0 {
            // Whatever happens next, the name must go: the mappings keep the memory alive.
            let _ = seg.unlink();
        }
        fenced?;
        let mut peers = Vec::with_capacity(size);
        let mut job_cpus = std::collections::BTreeSet::new();
        for r in 0..size {
            let pid = boot.get(&format!("shm/{r}/pid"), cfg.timeout)?;
            let pkg = boot.get(&format!("shm/{r}/pkg"), cfg.timeout)?;
            job_cpus.extend(parse_cpu_list(
                &boot.get(&format!("shm/{r}/cpus"), cfg.timeout)?,
            ));
            peers.push(Peer {
                pid: pid
                    .parse()
                    .map_err(|_| setup_err(format!("rank {r} published pid '{pid}'")))?,
                package: pkg.parse().ok(),
            });
        }
        let ring_base = |i: usize| {
            // SAFETY: ring i lies inside the segment: HEADER_BYTES + i * ring_len + ring_len <= total.
            unsafe { seg.base().add(HEADER_BYTES + i * ring_len) }
        };
        let mut tx = Vec::with_capacity(size);
        let mut rx = Vec::with_capacity(size);
        for p in 0..size {
            if p == rank {
                tx.push(None);
                rx.push(None);
                continue;
            }
            // SAFETY: each ring has exactly one producer (its src rank) and one consumer.
            unsafe {
                tx.push(Some(Producer::new(
                    ring_base(ring_index(rank, p, size)),
                    cfg.data_cap,
                )));
                rx.push(Some(Consumer::new(
                    ring_base(ring_index(p, rank, size)),
                    cfg.data_cap,
                )));
            }
        }
        let probe = if cfg.probe && size >= 2 {
            let link = match rank {
                0 | 1 => {
                    let peer = 1 - rank;
                    Some(probe::Link {
                        boot,
                        rank,
                        peer,
                        peer_pid: peers[peer].pid,
                        tx: tx[peer].as_mut().expect("a ring to the other probing rank"),
                        rx: rx[peer]
                            .as_mut()
                            .expect("a ring from the other probing rank"),
                        chunk: cfg.chunk,
                        share: cfg.share,
                        timeout: cfg.timeout,
                    })
                }
                _ => None,
            };
            let verdict = probe::run(link, boot, cfg.timeout)?;
            let cross = match (peers[0].package, peers[1].package) {
                (Some(a), Some(b)) => a != b,
                _ => false,
            };
            Some((verdict, cross))
        } else {
            None
        };
        Ok(ShmWire {
            rank,
            size,
            _seg: seg,
            tx,
            rx,
            peers,
            my_package,
            clock: RealClock::new(),
            data_cap: cfg.data_cap,
            next_peer: 0,
            cma: CmaState::Unused,
            probe,
            oversubscribed: size > job_cpus.len().max(1),
        })
    }
}

impl ShmWire {
    /// A CMA call's result as the engine sees it; a vanished peer or a bad address is an error
    /// naming the peer.
    fn single_copy_outcome(
        &self,
        peer: usize,
        r: std::result::Result<cma::CmaRead, nix::errno::Errno>,
        what: &str,
        len: usize,
    ) -> Result<GetOutcome> {
        match r {
            Ok(cma::CmaRead::Done) => Ok(GetOutcome::Done),
            Ok(cma::CmaRead::Refused(_)) => Ok(GetOutcome::Refused),
            Err(nix::errno::Errno::ESRCH) => Err(TransportError::PeerGone {
                peer: self.peer_name(peer),
                why: "process no longer exists".into(),
                stage: String::new(),
            }),
            Err(e) => Err(TransportError::Protocol {
                peer: self.peer_name(peer),
                what: format!("single-copy {what} of {len} bytes failed: {e}"),
            }),
        }
    }
}

impl Wire for ShmWire {
    fn name(&self) -> &str {
        "shm"
    }

    fn caps(&self) -> WireCaps {
        WireCaps {
            max_frame: ring::max_frame(self.data_cap),
            single_copy: true,
            virtual_time: false,
            models_rx_thread: false,
            places_data: false,
        }
    }

    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn clock(&self) -> Clock {
        Clock::Real(self.clock)
    }

    fn peer_name(&self, peer: usize) -> String {
        format!("rank {peer} (pid {})", self.peers[peer].pid)
    }

    #[inline]
    fn try_send(
        &mut self,
        peer: usize,
        _kind: FragKind,
        header: &[u8],
        payload: &[u8],
    ) -> Result<bool> {
        let p = self.tx[peer]
            .as_mut()
            .ok_or_else(|| TransportError::Config(format!("no shm ring to rank {peer}")))?;
        Ok(p.try_push(header, payload))
    }

    #[inline]
    fn poll(&mut self, sink: &mut dyn FnMut(usize, &[u8]) -> Result<()>) -> Result<usize> {
        let mut n = 0;
        // Start at a different peer each call so no sender is starved.
        let mut peer = self.next_peer;
        for _ in 0..self.size {
            if let Some(c) = self.rx[peer].as_mut() {
                for _ in 0..POLL_BATCH {
                    let Some(frame) = c.peek() else { break };
                    let r = sink(peer, frame);
                    c.release();
                    r?;
                    n += 1;
                }
            }
            peer += 1;
            if peer == self.size {
                peer = 0;
            }
        }
        self.next_peer = if self.next_peer + 1 == self.size {
            0
        } else {
            self.next_peer + 1
        };
        Ok(n)
    }

    fn get(&mut self, peer: usize, remote_addr: u64, local: &mut [u8]) -> Result<GetOutcome> {
        let len = local.len();
        let r = cma::read(self.peers[peer].pid, remote_addr, local);
        let out = self.single_copy_outcome(peer, r, "read", len)?;
        self.cma = match out {
            GetOutcome::Done => CmaState::Worked,
            GetOutcome::Refused => CmaState::Refused(match r {
                Ok(cma::CmaRead::Refused(e)) => e.desc().to_string(),
                _ => String::new(),
            }),
        };
        Ok(out)
    }

    fn put(&mut self, peer: usize, remote_addr: u64, local: &[u8]) -> Result<GetOutcome> {
        let r = cma::write(self.peers[peer].pid, remote_addr, local);
        self.single_copy_outcome(peer, r, "write", local.len())
    }

    fn preferred_protocol(&self, peer: usize, len: u64) -> Protocol {
        let cross = matches!(
            (self.my_package, self.peers[peer].package),
            (Some(a), Some(b)) if a != b
        );
        let single = match &self.probe {
            Some((verdict, probed_cross)) if *probed_cross == cross => verdict.single_copy(len),
            _ => cross,
        };
        if single {
            Protocol::SingleCopy
        } else {
            Protocol::Copy
        }
    }

    #[inline]
    fn idle(&mut self, idle_rounds: u64) -> Result<()> {
        // Spin while a reply is likely imminent; then give the core away each round. With more
        // ranks than CPUs the peer we wait for may be waiting for our core: give it away at
        // once (Open MPI's mpi_yield_when_idle, which it turns on when oversubscribed).
        if idle_rounds < 4096 && !self.oversubscribed {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
        Ok(())
    }

    fn check_peers(&mut self, awaited: Option<usize>) -> Result<()> {
        for (r, p) in self.peers.iter().enumerate() {
            if r == self.rank || awaited.is_some_and(|a| a != r) {
                continue;
            }
            // SAFETY: signal 0 only checks that the process exists.
            if unsafe { libc::kill(p.pid, 0) } != 0
                && nix::errno::Errno::last() == nix::errno::Errno::ESRCH
            {
                return Err(TransportError::PeerGone {
                    peer: self.peer_name(r),
                    why: "process exited".into(),
                    stage: String::new(),
                });
            }
        }
        Ok(())
    }

    fn describe(&self) -> Vec<(String, String)> {
        let mech = match &self.cma {
            CmaState::Unused => "none used (copy through rings)".to_string(),
            CmaState::Worked => "cma (process_vm_readv)".to_string(),
            CmaState::Refused(why) => format!("cma refused ({why}); copied instead"),
        };
        let pkgs: Vec<String> = self
            .peers
            .iter()
            .map(|p| {
                p.package
                    .map(|x| x.to_string())
                    .unwrap_or_else(|| "?".into())
            })
            .collect();
        let mut facts = vec![
            ("single_copy_mechanism".into(), mech),
            ("shm_ring_bytes".into(), self.data_cap.to_string()),
            ("rank_sockets".into(), pkgs.join(",")),
            (
                "idle_wait".into(),
                if self.oversubscribed {
                    "yield at once (more ranks than CPUs)".into()
                } else {
                    "spin, then yield".into()
                },
            ),
        ];
        if let Some((verdict, _)) = &self.probe {
            facts.push(("decided.single_copy=auto".into(), verdict.describe()));
        }
        facts
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comm::{Comm, ReduceOp};

    use crate::engine::{Engine, EngineConfig, Schedule, SingleCopy};
    use crate::order::{ByteOrders, HostOrder};
    use std::sync::Arc;
    use std::thread;

    #[test]
    fn cpu_lists_go_through_the_bootstrap_and_back() {
        let l = cpu_list(&[0, 1, 5]);
        assert_eq!(l, "0,1,5");
        assert_eq!(parse_cpu_list(&l).collect::<Vec<_>>(), [0, 1, 5]);
        assert_eq!(parse_cpu_list("").count(), 0);
    }

    #[test]
    fn the_segment_header_has_its_golden_bytes() {
        let h = segment_header(3, 0x0010_0000);
        assert_eq!(
            h,
            [
                b'F', b'A', b'B', b'B', b'S', b'H', b'M', b'1', // magic
                0, 0, 0, 0, 0, 0, 0, 3, // ranks
                0, 0, 0, 0, 0, 0x10, 0, 0, // ring byte area
            ]
        );
        assert_eq!(read_segment_header(&h), Some((3, 0x0010_0000)));
        let mut bad = h;
        bad[7] = b'0';
        assert_eq!(read_segment_header(&bad), None);
    }

    fn with_comms(size: usize, single: SingleCopy, f: impl Fn(Comm) + Sync) {
        with_comms_probing(size, single, false, f)
    }

    fn with_comms_probing(size: usize, single: SingleCopy, probe: bool, f: impl Fn(Comm) + Sync) {
        with_comms_ordered(size, single, probe, ByteOrders::default(), f)
    }

    fn with_comms_ordered(
        size: usize,
        single: SingleCopy,
        probe: bool,
        byte_orders: ByteOrders,
        f: impl Fn(Comm) + Sync,
    ) {
        let (boots, _events) = bench_core::bootstrap::local::group(size);
        let cfg = EngineConfig {
            eager_limit: 4096,
            frag_size: 16384,
            single_copy: single,
            single_copy_share: 50,
            rx_thread: false,
            schedule: Schedule::RoundRobin,
            timeout: Duration::from_secs(20),
            inject_delay_ns: 0,
            byte_orders,
        };
        let scfg = ShmConfig::new(64 << 10, cfg.eager_limit, cfg.frag_size, cfg.timeout)
            .with_probe(probe, cfg.single_copy_share);
        thread::scope(|s| {
            for b in boots {
                let f = &f;
                s.spawn(move || {
                    let b: Arc<dyn Bootstrap> = Arc::new(b);
                    let wire = ShmWire::connect(b.as_ref(), scfg).unwrap();
                    let comm = Comm::new(Box::new(Engine::new(Box::new(wire), cfg, None).unwrap()));
                    f(comm);
                });
            }
        });
    }

    /// One rank taking a big-endian host's path and native ones agree on every message and
    /// collective: headers of every frame type (eager, rendezvous by copy and single copy)
    /// and typed elements of every kind.
    #[test]
    fn a_big_endian_rank_and_native_ones_agree() {
        let orders = ByteOrders {
            order: HostOrder::Big,
            only_rank: Some(1),
        };
        for single in [SingleCopy::Off, SingleCopy::On] {
            with_comms_ordered(3, single, false, orders, |c| {
                let me = c.rank();
                for size in [0usize, 100, 4097, 100_000] {
                    let out: Vec<u8> = (0..size).map(|i| (i * 7 + me) as u8).collect();
                    let mut inb = vec![0u8; size];
                    let (to, from) = ((me + 1) % 3, (me + 2) % 3);
                    let s = c.isend(&out, to, -5).unwrap();
                    let st = c.recv(&mut inb, from, -5).unwrap();
                    s.wait().unwrap();
                    assert_eq!((st.source, st.tag, st.len), (from, -5, size));
                    assert!(inb
                        .iter()
                        .enumerate()
                        .all(|(i, b)| *b == (i * 7 + from) as u8));
                }
                let x = [me as f64 + 0.25, -(me as f64)];
                let mut sum = [0.0; 2];
                c.allreduce(&x, &mut sum, ReduceOp::Sum).unwrap();
                assert_eq!(sum, [3.75, -3.0]);
                let big = [0x0102_0304_0506_0708u64 + me as u64];
                let mut most = [0u64];
                c.allreduce(&big, &mut most, ReduceOp::Max).unwrap();
                assert_eq!(most, [0x0102_0304_0506_070a]);
                let z = [crate::comm::Complex64::new(1.0, me as f64)];
                let mut zs = [crate::comm::Complex64::default()];
                c.allreduce(&z, &mut zs, ReduceOp::Sum).unwrap();
                assert_eq!(zs[0], crate::comm::Complex64::new(3.0, 3.0));
                let mine = [-(me as i32) - 1, 1000 * me as i32];
                let mut all = [0i32; 6];
                c.allgather(&mine, &mut all).unwrap();
                assert_eq!(all, [-1, 0, -2, 1000, -3, 2000]);
                let mut prefix = [0u32];
                c.scan(&[me as u32 + 1], &mut prefix, ReduceOp::Sum)
                    .unwrap();
                assert_eq!(prefix[0], [1, 3, 6][me]);
                let send = [me as f32 * 0.5; 4];
                let mut got = [0f32; 4];
                c.sendrecv_values(&send, (me + 1) % 3, 9, &mut got, (me + 2) % 3, 9)
                    .unwrap();
                assert_eq!(got, [((me + 2) % 3) as f32 * 0.5; 4]);
                c.finish().unwrap();
            });
        }
    }

    #[test]
    fn ring_indices_cover_every_ordered_pair_once() {
        for n in 2..6 {
            let mut seen = vec![false; n * (n - 1)];
            for s in 0..n {
                for d in 0..n {
                    if s != d {
                        let i = ring_index(s, d, n);
                        assert!(!seen[i]);
                        seen[i] = true;
                    }
                }
            }
            assert!(seen.iter().all(|x| *x));
        }
    }

    #[test]
    fn eager_and_rendezvous_messages_cross_between_four_ranks() {
        for single in [SingleCopy::Off, SingleCopy::On] {
            with_comms(4, single, |c| {
                let me = c.rank();
                for size in [0usize, 1, 100, 4096, 4097, 100_000, 1 << 20] {
                    let to = (me + 1) % 4;
                    let from = (me + 3) % 4;
                    let out: Vec<u8> = (0..size).map(|i| (i * 7 + me) as u8).collect();
                    let mut inb = vec![0u8; size];
                    let s = c.isend(&out, to, 1).unwrap();
                    c.recv(&mut inb, from, 1).unwrap();
                    s.wait().unwrap();
                    assert!(inb
                        .iter()
                        .enumerate()
                        .all(|(i, b)| *b == (i * 7 + from) as u8));
                }
                c.finish().unwrap();
            });
        }
    }

    #[test]
    fn the_single_copy_probe_gives_every_rank_one_verdict_and_leaves_the_rings_clean() {
        let verdicts = std::sync::Mutex::new(Vec::new());
        with_comms_probing(3, SingleCopy::Auto, true, |c| {
            let me = c.rank();
            let fact = c
                .describe()
                .into_iter()
                .find(|(k, _)| k == "decided.single_copy=auto")
                .map(|(_, v)| v)
                .expect("the probe's verdict is reported");
            verdicts.lock().unwrap().push(fact);
            // Nothing of the probe is left in the rings: a message of every protocol crosses.
            for size in [8usize, 5000, 300_000] {
                let out: Vec<u8> = (0..size).map(|i| (i + me) as u8).collect();
                let mut inb = vec![0u8; size];
                let s = c.isend(&out, (me + 1) % 3, 7).unwrap();
                c.recv(&mut inb, (me + 2) % 3, 7).unwrap();
                s.wait().unwrap();
                assert!(inb
                    .iter()
                    .enumerate()
                    .all(|(i, b)| *b == (i + (me + 2) % 3) as u8));
            }
            c.finish().unwrap();
        });
        let v = verdicts.into_inner().unwrap();
        assert_eq!(v.len(), 3);
        assert!(v.iter().all(|x| x == &v[0]), "ranks disagree: {v:?}");
        assert!(
            v[0].starts_with("copy at every size") || v[0].starts_with("cma from"),
            "{}",
            v[0]
        );
    }

    #[test]
    fn collectives_agree_on_every_rank() {
        with_comms(3, SingleCopy::Auto, |c| {
            let me = c.rank();
            c.barrier().unwrap();
            let mut b = if me == 2 {
                b"hello".to_vec()
            } else {
                vec![0; 5]
            };
            c.bcast(&mut b, 2).unwrap();
            assert_eq!(b, b"hello");
            let mut sum = [0f64; 2];
            c.allreduce(&[me as f64, 1.0], &mut sum, ReduceOp::Sum)
                .unwrap();
            assert_eq!(sum, [3.0, 3.0]);
            let mut max = [0u64];
            c.allreduce(&[me as u64 * 10], &mut max, ReduceOp::Max)
                .unwrap();
            assert_eq!(max, [20]);
            for _ in 0..10 {
                c.barrier().unwrap();
            }
            c.finish().unwrap();
        });
    }
}
