//! The Transport over the MPI library itself (rsmpi's raw bindings): blocking calls map to
//! MPI_Send/MPI_Recv, nonblocking ones to MPI_Isend/MPI_Irecv with requests kept in a slab,
//! collectives to MPI's own (in `collectives`), so a suite makes the same calls OSU makes.
//!
//! A request handle is carried in the ReqId itself (it fits in 8 bytes), so nothing is looked up
//! or locked per message. MPI's blocking calls cannot be interrupted, so a watchdog thread bounds
//! them: each call stores what it waits for and bumps a sequence number (plain stores, no clock
//! read); a call the watchdog sees unchanged for `timeout` is reported (peer, call and stage, to
//! the frontend and stderr) and the process ends, which makes the launcher stop the other ranks.

use std::ffi::{c_int, c_void};
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bench_core::bootstrap::Bootstrap;
use bench_core::clock::{Clock, RealClock};
use mpi::ffi as m;

use crate::error::{Result, TransportError};
use crate::fabric::FabricContext;
use crate::transport::{Context, Counters, NativeCollectives, ReqId, Status, Tag, Transport};

/// The MPI library's own description, callable before MPI_Init.
pub fn library_version() -> String {
    let mut buf = vec![0 as std::ffi::c_char; 8192];
    let mut len: c_int = 0;
    // SAFETY: MPI_Get_library_version may be called before MPI_Init (MPI-3) and writes at
    // most MPI_MAX_LIBRARY_VERSION_STRING bytes, well under 8192.
    unsafe { m::MPI_Get_library_version(buf.as_mut_ptr(), &mut len) };
    let bytes: Vec<u8> = buf[..len.max(0) as usize]
        .iter()
        .map(|c| *c as u8)
        .collect();
    String::from_utf8_lossy(&bytes)
        .trim_end_matches('\0')
        .trim()
        .to_string()
}

fn first_line(lib: &str) -> &str {
    lib.lines().next().unwrap_or("").trim()
}

const _: () = assert!(std::mem::size_of::<m::MPI_Request>() <= 8);

/// The request handle's bits as a ReqId (never ReqId::DONE: not a valid handle).
fn id_of(r: m::MPI_Request) -> ReqId {
    let mut v = 0u64;
    // SAFETY: copying at most 8 bytes of a plain handle into a u64.
    unsafe {
        std::ptr::copy_nonoverlapping(
            &r as *const m::MPI_Request as *const u8,
            &mut v as *mut u64 as *mut u8,
            std::mem::size_of::<m::MPI_Request>(),
        )
    };
    ReqId(v)
}

fn handle_of(id: ReqId) -> m::MPI_Request {
    let mut r = MaybeUninit::<m::MPI_Request>::zeroed();
    // SAFETY: the inverse of id_of.
    unsafe {
        std::ptr::copy_nonoverlapping(
            &id.0 as *const u64 as *const u8,
            r.as_mut_ptr() as *mut u8,
            std::mem::size_of::<m::MPI_Request>(),
        );
        r.assume_init()
    }
}

pub(super) struct Handles(pub(super) Vec<m::MPI_Request>);
// SAFETY: request handles are only used by the thread that owns the transport (MPI runs
// FUNNELED); the buffer sits behind a lock only to satisfy the Transport bounds.
unsafe impl Send for Handles {}

#[derive(Clone, Copy)]
pub(super) struct CommH(pub(super) m::MPI_Comm);
// SAFETY: as for Req.
unsafe impl Send for CommH {}
unsafe impl Sync for CommH {}

/// What the rank is blocked in, for the watchdog: `what` is the call and peer (0: not in a
/// blocking call), `seq` changes with every call.
pub(super) struct Blocked {
    seq: AtomicU64,
    what: AtomicU64,
}

fn pack(call: u8, peer: i64) -> u64 {
    call as u64 | (((peer + 1).max(0) as u64) << 8)
}

const CALLS: [&str; 15] = [
    "nothing",
    "MPI_Send",
    "MPI_Recv",
    "MPI_Wait",
    "MPI_Waitall",
    "MPI_Barrier",
    "MPI_Bcast",
    "MPI_Reduce/Allreduce",
    "MPI_Gather/Gatherv",
    "MPI_Scatter/Scatterv",
    "MPI_Allgather/Allgatherv",
    "MPI_Alltoall/Alltoallv",
    "MPI_Reduce_scatter",
    "MPI_Scan",
    "MPI_Comm_split",
];

pub struct MpiTransport {
    pub(super) rank: usize,
    pub(super) size: usize,
    /// The communicator: MPI_COMM_WORLD, or one MPI_Comm_split made.
    pub(super) world: CommH,
    pub(super) coll: CommH,
    /// Made by MPI_Comm_split: shutting it down frees the communicator, not MPI.
    pub(super) sub: bool,
    pub(super) handles: crate::spin::SpinLock<Handles>,
    pub(super) clock: RealClock,
    pub(super) stage: Arc<Mutex<String>>,
    pub(super) reporter: Arc<dyn Bootstrap>,
    pub(super) blocked: Arc<Blocked>,
    pub(super) stop: Arc<AtomicBool>,
    pub(super) library: String,
    pub(super) env: Vec<(String, String)>,
    pub(super) finalized: AtomicBool,
}

#[inline]
pub(super) fn check(code: c_int, what: &str) -> Result<()> {
    if code == 0 {
        return Ok(());
    }
    failed(code, what)
}

#[cold]
fn failed(code: c_int, what: &str) -> Result<()> {
    let mut buf = vec![0 as std::ffi::c_char; 1024];
    let mut len: c_int = 0;
    // SAFETY: MPI_Error_string writes at most MPI_MAX_ERROR_STRING (< 1024) bytes.
    unsafe { m::MPI_Error_string(code, buf.as_mut_ptr(), &mut len) };
    let text: Vec<u8> = buf[..len.max(0) as usize]
        .iter()
        .map(|c| *c as u8)
        .collect();
    Err(TransportError::Io(format!(
        "{what}: {}",
        String::from_utf8_lossy(&text)
    )))
}

pub fn connect(ctx: &FabricContext) -> Result<Box<dyn Transport>> {
    let boot = ctx.boot.clone();
    let mut init: c_int = 0;
    // SAFETY: MPI_Initialized may be called at any time.
    unsafe { m::MPI_Initialized(&mut init) };
    if init != 0 {
        return Err(TransportError::Config(
            "MPI is already initialised in this process: one MPI fabric per run under an external launcher".into(),
        ));
    }
    // Plain MPI_Init, as OSU does: asking for a thread level makes some MPIs take locks on
    // every call. Only the rank's own thread ever calls MPI (the watchdog does not).
    // SAFETY: first and only MPI initialisation of the process; no arguments are passed.
    let code = unsafe { m::MPI_Init(std::ptr::null_mut(), std::ptr::null_mut()) };
    check(code, "MPI_Init")?;
    // SAFETY: reading the predefined handle after initialisation.
    let world = unsafe { m::RSMPI_COMM_WORLD };
    // SAFETY: MPI is initialised; the handle is valid.
    unsafe { m::MPI_Comm_set_errhandler(world, m::RSMPI_ERRORS_RETURN) };
    let (mut rank, mut size): (c_int, c_int) = (0, 0);
    // SAFETY: valid communicator and out-pointers.
    unsafe {
        m::MPI_Comm_rank(world, &mut rank);
        m::MPI_Comm_size(world, &mut size);
    }
    let library = library_version();
    if size as usize != boot.size() || rank as usize != boot.rank() {
        let e = TransportError::Config(format!(
            "MPI sees rank {rank} of a world of {size}, but this process was started as rank {} of {}: this fabbench is built against {}; start it with that MPI's mpirun (another MPI's launcher gives every process a world of 1)",
            boot.rank(),
            boot.size(),
            first_line(&library)
        ));
        // SAFETY: leave MPI cleanly before failing.
        unsafe { m::MPI_Finalize() };
        return Err(e);
    }
    // MPI's own collectives never mix with point-to-point traffic, and fabbench's collective
    // context is only used when a transport has no native collectives: the world serves both.
    let coll = world;
    let t = MpiTransport {
        rank: rank as usize,
        size: size as usize,
        world: CommH(world),
        coll: CommH(coll),
        sub: false,
        handles: crate::spin::SpinLock::new(Handles(Vec::new())),
        clock: RealClock::new(),
        stage: Arc::new(Mutex::new("setup".into())),
        reporter: boot,
        blocked: Arc::new(Blocked {
            seq: AtomicU64::new(0),
            what: AtomicU64::new(0),
        }),
        stop: Arc::new(AtomicBool::new(false)),
        library,
        env: super::environment(ctx.settings),
        finalized: AtomicBool::new(false),
    };
    t.start_watchdog(ctx.settings.get(crate::fabric::TIMEOUT));
    Ok(Box::new(t))
}

impl MpiTransport {
    /// Frees a sub-communicator once (MPI must still be running: after MPI_Finalize there is
    /// nothing left to free).
    pub(super) fn free(&self) -> Result<()> {
        if self.finalized.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let mut done: c_int = 0;
        // SAFETY: MPI_Finalized may be called at any time.
        unsafe { m::MPI_Finalized(&mut done) };
        if done != 0 {
            return Ok(());
        }
        let mut h = self.world.0;
        // SAFETY: a communicator this transport made and has not freed.
        check(unsafe { m::MPI_Comm_free(&mut h) }, "MPI_Comm_free")
    }

    fn start_watchdog(&self, timeout: Duration) {
        let blocked = self.blocked.clone();
        let stop = self.stop.clone();
        let stage = self.stage.clone();
        let reporter = self.reporter.clone();
        let rank = self.rank;
        let tick = Duration::from_millis(100);
        std::thread::Builder::new()
            .name("mpi-watchdog".into())
            .spawn(move || {
                let mut seen = (u64::MAX, 0u64);
                let mut stuck = Duration::ZERO;
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(tick);
                    let what = blocked.what.load(Ordering::Acquire);
                    let now = (blocked.seq.load(Ordering::Acquire), what);
                    if what == 0 || now != seen {
                        seen = now;
                        stuck = Duration::ZERO;
                        continue;
                    }
                    stuck += tick;
                    if stuck < timeout {
                        continue;
                    }
                    let call = CALLS[(what & 0xff) as usize % CALLS.len()];
                    let peer = match (what >> 8) as i64 - 1 {
                        p if p >= 0 => format!("rank {p}"),
                        _ => "the other ranks".to_string(),
                    };
                    let st = stage.lock().map(|s| s.clone()).unwrap_or_default();
                    let msg = format!(
                        "timed out after {} waiting for {peer} in {call} (stage: {st})",
                        humantime::format_duration(timeout)
                    );
                    let ev = format!(
                        "{{\"event\":\"failed\",\"stage\":{},\"message\":{}}}",
                        serde_json::to_string(&st).unwrap_or_default(),
                        serde_json::to_string(&msg).unwrap_or_default()
                    );
                    let _ = reporter.send_event(&ev);
                    eprintln!("error: rank {rank}: {msg}");
                    std::process::exit(1);
                }
            })
            .expect("spawn the MPI watchdog");
    }

    #[inline]
    pub(super) fn enter(&self, call: u8, peer: i64) {
        // One writer: a load and a store, no read-modify-write.
        let s = self.blocked.seq.load(Ordering::Relaxed);
        self.blocked.seq.store(s.wrapping_add(1), Ordering::Relaxed);
        self.blocked.what.store(pack(call, peer), Ordering::Release);
    }

    /// One blocking MPI call under the watchdog: `call` indexes what it reports (CALLS), `what`
    /// names the call in an error.
    #[inline]
    pub(super) fn watched(
        &self,
        call: u8,
        peer: i64,
        what: &str,
        f: impl FnOnce() -> c_int,
    ) -> Result<()> {
        self.enter(call, peer);
        let code = f();
        self.leave();
        check(code, what)
    }

    #[inline]
    pub(super) fn leave(&self) {
        self.blocked.what.store(0, Ordering::Release);
    }

    fn comm(&self, ctx: Context) -> m::MPI_Comm {
        // Sub-communicators are MPI's own (MPI_Comm_split), so only the world's pair occurs.
        if ctx == Context::COLLECTIVE {
            self.coll.0
        } else {
            self.world.0
        }
    }

    fn status(st: &m::MPI_Status) -> Status {
        let mut count: c_int = 0;
        // SAFETY: a status filled by MPI; byte count of a byte message.
        unsafe { m::MPI_Get_count(st, m::RSMPI_UINT8_T, &mut count) };
        Status {
            source: st.MPI_SOURCE.max(0) as usize,
            tag: st.MPI_TAG,
            len: count.max(0) as usize,
        }
    }
}

impl Transport for MpiTransport {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }
    #[inline]
    fn now(&self) -> u64 {
        Clock::Real(self.clock).now()
    }
    fn virtual_time(&self) -> bool {
        false
    }

    unsafe fn isend(
        &self,
        buf: *const u8,
        len: usize,
        dst: usize,
        tag: Tag,
        ctx: Context,
    ) -> Result<ReqId> {
        let mut r = MaybeUninit::<m::MPI_Request>::uninit();
        let code = m::MPI_Isend(
            buf as *const c_void,
            len as c_int,
            m::RSMPI_UINT8_T,
            dst as c_int,
            tag,
            self.comm(ctx),
            r.as_mut_ptr(),
        );
        check(code, "MPI_Isend")?;
        Ok(id_of(r.assume_init()))
    }

    unsafe fn irecv(
        &self,
        buf: *mut u8,
        cap: usize,
        src: Option<usize>,
        tag: Option<Tag>,
        ctx: Context,
    ) -> Result<ReqId> {
        let mut r = MaybeUninit::<m::MPI_Request>::uninit();
        let code = m::MPI_Irecv(
            buf as *mut c_void,
            cap as c_int,
            m::RSMPI_UINT8_T,
            src.map(|s| s as c_int).unwrap_or(m::RSMPI_ANY_SOURCE),
            tag.unwrap_or(m::RSMPI_ANY_TAG),
            self.comm(ctx),
            r.as_mut_ptr(),
        );
        check(code, "MPI_Irecv")?;
        Ok(id_of(r.assume_init()))
    }

    unsafe fn send(
        &self,
        buf: *const u8,
        len: usize,
        dst: usize,
        tag: Tag,
        ctx: Context,
    ) -> Result<()> {
        self.enter(1, dst as i64);
        let code = m::MPI_Send(
            buf as *const c_void,
            len as c_int,
            m::RSMPI_UINT8_T,
            dst as c_int,
            tag,
            self.comm(ctx),
        );
        self.leave();
        check(code, "MPI_Send")
    }

    unsafe fn recv(
        &self,
        buf: *mut u8,
        cap: usize,
        src: Option<usize>,
        tag: Option<Tag>,
        ctx: Context,
    ) -> Result<Status> {
        let mut st = MaybeUninit::<m::MPI_Status>::uninit();
        self.enter(2, src.map(|s| s as i64).unwrap_or(-1));
        let code = m::MPI_Recv(
            buf as *mut c_void,
            cap as c_int,
            m::RSMPI_UINT8_T,
            src.map(|s| s as c_int).unwrap_or(m::RSMPI_ANY_SOURCE),
            tag.unwrap_or(m::RSMPI_ANY_TAG),
            self.comm(ctx),
            st.as_mut_ptr(),
        );
        self.leave();
        check(code, "MPI_Recv")?;
        Ok(Self::status(&st.assume_init()))
    }

    fn test(&self, req: ReqId) -> Result<Option<Status>> {
        if req == ReqId::DONE {
            return Ok(Some(Status::default()));
        }
        let mut r = handle_of(req);
        let mut flag: c_int = 0;
        let mut st = MaybeUninit::<m::MPI_Status>::uninit();
        // SAFETY: a live request from this transport.
        check(
            unsafe { m::MPI_Test(&mut r, &mut flag, st.as_mut_ptr()) },
            "MPI_Test",
        )?;
        if flag == 0 {
            return Ok(None);
        }
        // SAFETY: MPI_Test filled the status because the request completed.
        Ok(Some(Self::status(unsafe { &st.assume_init() })))
    }

    fn wait(&self, req: ReqId) -> Result<Status> {
        if req == ReqId::DONE {
            return Ok(Status::default());
        }
        let mut r = handle_of(req);
        let mut st = MaybeUninit::<m::MPI_Status>::uninit();
        self.enter(3, -1);
        // SAFETY: a live request.
        let code = unsafe { m::MPI_Wait(&mut r, st.as_mut_ptr()) };
        self.leave();
        check(code, "MPI_Wait")?;
        // SAFETY: filled by MPI_Wait.
        Ok(Self::status(unsafe { &st.assume_init() }))
    }

    fn waitall(&self, reqs: &mut [ReqId], statuses: Option<&mut [Status]>) -> Result<()> {
        // Ids that came back at once have no MPI request: make them null handles.
        // SAFETY: reading a predefined handle.
        let null = id_of(unsafe { m::RSMPI_REQUEST_NULL });
        for r in reqs.iter_mut().filter(|r| **r == ReqId::DONE) {
            *r = null;
        }
        // With 8-byte handles (Open MPI) the ids are the handle array itself; otherwise copy.
        let direct = std::mem::size_of::<m::MPI_Request>() == 8;
        let mut h = self.handles.lock();
        let array: *mut m::MPI_Request = if direct {
            reqs.as_mut_ptr() as *mut m::MPI_Request
        } else {
            h.0.clear();
            h.0.extend(reqs.iter().map(|&r| handle_of(r)));
            h.0.as_mut_ptr()
        };
        self.enter(4, -1);
        let code = match statuses {
            // SAFETY: `array` holds reqs.len() live or null requests; statuses ignored.
            None => unsafe { m::MPI_Waitall(reqs.len() as c_int, array, m::RSMPI_STATUSES_IGNORE) },
            Some(out) => {
                let mut sts: Vec<MaybeUninit<m::MPI_Status>> =
                    (0..reqs.len()).map(|_| MaybeUninit::uninit()).collect();
                // SAFETY: live or null requests and room for their statuses.
                let code = unsafe {
                    m::MPI_Waitall(
                        reqs.len() as c_int,
                        array,
                        sts.as_mut_ptr() as *mut m::MPI_Status,
                    )
                };
                if code == 0 {
                    for (i, st) in sts.iter().enumerate() {
                        // SAFETY: MPI_Waitall fills every status (empty ones for null requests).
                        out[i] = Self::status(unsafe { st.assume_init_ref() });
                    }
                }
                code
            }
        };
        self.leave();
        check(code, "MPI_Waitall")
    }

    fn progress(&self) -> Result<()> {
        Ok(())
    }

    fn set_stage(&self, stage: &str) {
        if let Ok(mut s) = self.stage.lock() {
            s.clear();
            s.push_str(stage);
        }
        self.reporter.report_stage(stage);
    }

    fn stage(&self) -> String {
        self.stage.lock().map(|s| s.clone()).unwrap_or_default()
    }

    fn counters(&self) -> Counters {
        Counters::default()
    }

    fn describe(&self) -> Vec<(String, String)> {
        let mut d = vec![("mpi_library_version".to_string(), self.library.clone())];
        for (k, v) in &self.env {
            d.push((format!("mpi_env.{k}"), v.clone()));
        }
        d
    }

    fn shutdown(&self) -> Result<()> {
        if self.sub {
            return self.free();
        }
        self.stop.store(true, Ordering::Relaxed);
        if !self.finalized.swap(true, Ordering::SeqCst) {
            // SAFETY: every request was completed by the suites; MPI is finalised once.
            check(unsafe { m::MPI_Finalize() }, "MPI_Finalize")?;
        }
        Ok(())
    }

    fn native_collectives(&self) -> Option<&dyn NativeCollectives> {
        Some(self)
    }
}

impl Drop for MpiTransport {
    fn drop(&mut self) {
        if self.sub {
            let _ = self.free();
        }
    }
}
