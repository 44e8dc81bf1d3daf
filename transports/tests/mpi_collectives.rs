//! The shared collective checks (`checks/collectives.rs`, which `conformance.rs` runs on every
//! fabric as threads) on the mpi fabric, with ranks as processes under Open MPI's mpirun, so
//! MPI's own collectives (MPI_Gatherv, MPI_Comm_split, ...) meet the same expectations as every
//! other fabric's.
//!
//! One executable, two roles (`harness = false`):
//! - started by mpirun (`OMPI_COMM_WORLD_RANK`/`OMPI_COMM_WORLD_SIZE`, or MPICH's
//!   `PMI_RANK`/`PMI_SIZE`, are set) it is one rank: it connects the mpi fabric, runs every
//!   check, finishes the communicator and says so on stdout; a failed check panics and the
//!   process exits with status 101;
//! - otherwise it is the driver: it runs `mpirun -n N` of itself for each rank count, bounded
//!   in time, and reports like libtest. A missing mpirun is a failure, not a skip.

#[path = "checks/collectives.rs"]
mod collective_checks;

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bench_core::bootstrap::{Bootstrap, BootstrapError};
use bench_core::tunables::Source;
use transports::comm::Comm;
use transports::fabric::FabricContext;
use transports::registry;

/// The test's name, as filters match it.
const NAME: &str = "mpi_collectives";
/// The rank counts the conformance test runs on thread-ranks.
const COUNTS: [usize; 6] = [1, 2, 3, 4, 5, 8];
/// How long one mpirun may take before it is killed and the count fails.
const LIMIT: Duration = Duration::from_secs(120);
/// Set by the driver for the ranks: a process that has it but no rank variables was started
/// by something that is not Open MPI's (or MPICH's) mpirun.
const DRIVER_MARK: &str = "FABBENCH_MPI_COLLECTIVES_DRIVER";
/// What each rank prints on stdout once everything passed and MPI is finalised.
const PASSED: &str = "mpi collectives: passed on rank";

fn main() {
    match rank_from_env() {
        Some(Ok((rank, size))) => run_rank(rank, size),
        Some(Err(e)) => {
            eprintln!("error: {e}");
            std::process::exit(101);
        }
        None if std::env::var_os(DRIVER_MARK).is_some() => {
            eprintln!(
                "error: started by the mpi_collectives driver, but neither OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE nor PMI_RANK/PMI_SIZE is set: is `mpirun` Open MPI's or MPICH's?"
            );
            std::process::exit(101);
        }
        None => drive(),
    }
}

// ---------------------------------------------------------------------------------------------
// One rank.

/// This process's rank and world size when an MPI launcher started it.
fn rank_from_env() -> Option<Result<(usize, usize), String>> {
    let pairs = [
        ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
        ("PMI_RANK", "PMI_SIZE"),
    ];
    for (rank_var, size_var) in pairs {
        let (Ok(rank), Ok(size)) = (std::env::var(rank_var), std::env::var(size_var)) else {
            continue;
        };
        return Some(parse_rank(rank_var, &rank, size_var, &size));
    }
    None
}

fn parse_rank(
    rank_var: &str,
    rank: &str,
    size_var: &str,
    size: &str,
) -> Result<(usize, usize), String> {
    let parse = |var: &str, text: &str| {
        text.trim()
            .parse::<usize>()
            .map_err(|_| format!("{var}={text:?} is not a number"))
    };
    let (rank, size) = (parse(rank_var, rank)?, parse(size_var, size)?);
    if rank >= size {
        return Err(format!("{rank_var}={rank} is not below {size_var}={size}"));
    }
    Ok((rank, size))
}

/// The bootstrap of a rank mpirun started: rank and size from mpirun's variables, nothing
/// else. The mpi fabric reads rank and size (to check them against MPI's) and reports a stuck
/// call through `send_event`; it never uses the key-value store or fences, so those fail.
struct MpirunBoot {
    rank: usize,
    size: usize,
}

impl MpirunBoot {
    fn unsupported(&self, what: String) -> BootstrapError {
        BootstrapError::Server {
            addr: "none (ranks started by mpirun)".into(),
            reason: format!("the mpi_collectives test's bootstrap has no {what}"),
        }
    }
}

impl Bootstrap for MpirunBoot {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }
    fn token(&self) -> &str {
        "mpi-collectives-test-token"
    }
    fn job_id(&self) -> &str {
        "mpi-collectives-test"
    }
    fn put(&self, key: &str, _value: &str) -> Result<(), BootstrapError> {
        Err(self.unsupported(format!("key-value store (put {key})")))
    }
    fn get(&self, key: &str, _timeout: Duration) -> Result<String, BootstrapError> {
        Err(self.unsupported(format!("key-value store (get {key})")))
    }
    fn fence(&self, name: &str, _timeout: Duration) -> Result<(), BootstrapError> {
        Err(self.unsupported(format!("fences (fence {name})")))
    }
    fn report_stage(&self, _stage: &str) {}
    fn send_event(&self, json: &str) -> Result<(), BootstrapError> {
        eprintln!("rank {}: event {json}", self.rank);
        Ok(())
    }
}

fn run_rank(rank: usize, size: usize) -> ! {
    // A failed check panics. Leave at once with libtest's status rather than unwinding: the
    // unwinding would free the communicators of a split mid-collective while the other ranks
    // wait in MPI, and mpirun ends the job as soon as one rank exits non-zero.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        default_hook(info);
        let _ = std::io::stdout().flush();
        let _ = std::io::stderr().flush();
        std::process::exit(101);
    }));

    let registry = registry::registry(&[]);
    let mut settings = registry.defaults();
    let def = registry::find("mpi").expect("the mpi fabric is registered (feature mpi)");
    for (k, v) in def.defaults {
        settings
            .set(&registry, k, v, Source::Fabric)
            .unwrap_or_else(|e| panic!("mpi: fabric default {k}={v}: {e}"));
    }
    let boot: Arc<dyn Bootstrap> = Arc::new(MpirunBoot { rank, size });
    let ctx = FabricContext {
        boot,
        settings: &settings,
    };
    let t = (def.connect)(&ctx)
        .unwrap_or_else(|e| panic!("mpi, {size} ranks: connect failed on rank {rank}: {e}"));
    let comm = Comm::new(t);
    assert_eq!(
        (comm.rank(), comm.size()),
        (rank, size),
        "mpi, {size} ranks: the world communicator disagrees with mpirun's rank and size"
    );
    collective_checks::all(&comm, "mpi");
    comm.finish()
        .unwrap_or_else(|e| panic!("mpi, {size} ranks: finish failed on rank {rank}: {e}"));
    println!("{PASSED} {rank} of {size}");
    let _ = std::io::stdout().flush();
    std::process::exit(0);
}

// ---------------------------------------------------------------------------------------------
// The driver.

/// What libtest's command line asks of this test.
struct Args {
    filters: Vec<String>,
    skips: Vec<String>,
    exact: bool,
    ignored_only: bool,
    list: bool,
    terse: bool,
}

fn parse_args() -> Args {
    // libtest's options that take a value as the next argument.
    const WITH_VALUE: &[&str] = &[
        "--test-threads",
        "--logfile",
        "--skip",
        "--color",
        "--format",
        "--shuffle-seed",
        "-Z",
    ];
    let mut a = Args {
        filters: Vec::new(),
        skips: Vec::new(),
        exact: false,
        ignored_only: false,
        list: false,
        terse: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if WITH_VALUE.contains(&arg.as_str()) {
            let value = args.next().unwrap_or_default();
            match arg.as_str() {
                "--skip" => a.skips.push(value),
                "--format" => a.terse = value == "terse",
                _ => {}
            }
        } else if let Some(v) = arg.strip_prefix("--skip=") {
            a.skips.push(v.to_string());
        } else if let Some(v) = arg.strip_prefix("--format=") {
            a.terse = v == "terse";
        } else if arg == "--exact" {
            a.exact = true;
        } else if arg == "--ignored" {
            a.ignored_only = true;
        } else if arg == "--list" {
            a.list = true;
        } else if !arg.starts_with('-') {
            a.filters.push(arg);
        }
        // Every other option (--nocapture, --test-threads=N, --quiet, ...) changes nothing here.
    }
    a
}

impl Args {
    /// Whether this test is selected, with libtest's rules: some filter matches (a substring,
    /// or the whole name with --exact), no --skip matches, and it is not an ignored-only run
    /// (this test is not #[ignore]d).
    fn selected(&self) -> bool {
        let hits = |pattern: &String| {
            if self.exact {
                pattern == NAME
            } else {
                NAME.contains(pattern.as_str())
            }
        };
        (self.filters.is_empty() || self.filters.iter().any(hits))
            && !self.skips.iter().any(hits)
            && !self.ignored_only
    }
}

fn drive() {
    let args = parse_args();
    if args.list {
        if args.selected() {
            println!("{NAME}: test");
        }
        if !args.terse {
            let n = usize::from(args.selected());
            println!("\n{n} test{}, 0 benchmarks", if n == 1 { "" } else { "s" });
        }
        return;
    }
    if !args.selected() {
        println!("\nrunning 0 tests\n");
        println!(
            "test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; {} filtered out; finished in 0.00s\n",
            COUNTS.len()
        );
        return;
    }

    let exe = std::env::current_exe().expect("the path of this test executable");
    let start = Instant::now();
    println!("\nrunning {} tests", COUNTS.len());
    let mut failures: Vec<(String, String)> = Vec::new();
    for n in COUNTS {
        let name = format!("mpi collectives at {n} ranks");
        print!("test {name} ... ");
        let _ = std::io::stdout().flush();
        match run_ranks(&exe, n) {
            Ok(()) => println!("ok"),
            Err(report) => {
                println!("FAILED");
                failures.push((name, report));
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let (failed, passed) = (failures.len(), COUNTS.len() - failures.len());
    if failures.is_empty() {
        println!(
            "\ntest result: ok. {passed} passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in {secs:.2}s\n"
        );
        return;
    }
    println!("\nfailures:\n");
    for (name, report) in &failures {
        println!("---- {name} ----\n{report}\n");
    }
    println!("failures:");
    for (name, _) in &failures {
        println!("    {name}");
    }
    println!(
        "\ntest result: FAILED. {passed} passed; {failed} failed; 0 ignored; 0 measured; 0 filtered out; finished in {secs:.2}s\n"
    );
    let _ = std::io::stdout().flush();
    std::process::exit(101);
}

/// Runs `n` ranks of `exe` under mpirun; on failure, a report naming the rank count with
/// mpirun's output.
fn run_ranks(exe: &Path, n: usize) -> Result<(), String> {
    use std::os::unix::process::CommandExt;

    let mut args = vec![
        "-n".to_string(),
        n.to_string(),
        "--oversubscribe".into(),
        "--bind-to".into(),
        "none".into(),
    ];
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        args.push("--allow-run-as-root".into());
    }
    let shown = format!("mpirun {} {}", args.join(" "), exe.display());
    let mut cmd = Command::new("mpirun");
    cmd.args(&args)
        .arg(exe)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env(DRIVER_MARK, "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group, so a timeout can stop mpirun and whatever it started.
        .process_group(0);
    let started = Instant::now();
    let mut child = cmd.spawn().map_err(|e| {
        format!(
            "{n} ranks: cannot run `mpirun`: {e}\n(the mpi fabric's tests need Open MPI's mpirun on PATH: install openmpi-bin)"
        )
    })?;
    let stdout = collect(child.stdout.take().expect("piped stdout"));
    let stderr = collect(child.stderr.take().expect("piped stderr"));
    let waited = wait_bounded(&mut child, LIMIT);
    let took = started.elapsed();
    let out = stdout.finish();
    let err = stderr.finish();
    let trouble = match waited {
        Err(e) => Some(format!("{n} ranks: waiting for mpirun failed: {e}")),
        Ok(None) => Some(format!(
            "{n} ranks: mpirun did not finish within {}s; killed it",
            LIMIT.as_secs()
        )),
        Ok(Some(st)) if !st.success() => Some(format!(
            "{n} ranks: mpirun exited with {} after {:.2}s",
            describe(st),
            took.as_secs_f64()
        )),
        Ok(Some(_)) => {
            let passed = out.lines().filter(|l| l.starts_with(PASSED)).count();
            (passed != n).then(|| {
                format!(
                    "{n} ranks: mpirun exited 0 but {passed} of {n} ranks reported passing ('{PASSED} R of {n}')"
                )
            })
        }
    };
    match trouble {
        None => Ok(()),
        Some(why) => Err(format!(
            "{why}\ncommand: {shown}\n--- stdout ({n} ranks) ---\n{}\n--- stderr ({n} ranks) ---\n{}",
            out.trim_end(),
            err.trim_end()
        )),
    }
}

fn describe(st: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (st.code(), st.signal()) {
        (Some(c), _) => format!("status {c}"),
        (None, Some(s)) => format!("signal {s}"),
        _ => st.to_string(),
    }
}

/// Waits up to `limit` for `child`; past it, stops its process group (SIGTERM, which mpirun
/// passes on to the ranks, then SIGKILL) and returns None.
fn wait_bounded(child: &mut Child, limit: Duration) -> std::io::Result<Option<ExitStatus>> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(st) = child.try_wait()? {
            return Ok(Some(st));
        }
        if Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let group = child.id() as libc::pid_t;
    // SAFETY: signalling the process group this driver made for mpirun.
    unsafe { libc::kill(-group, libc::SIGTERM) };
    let grace = Instant::now() + Duration::from_secs(5);
    while Instant::now() < grace {
        if child.try_wait()?.is_some() {
            // mpirun is gone; make sure nothing it started outlives it.
            // SAFETY: as above.
            unsafe { libc::kill(-group, libc::SIGKILL) };
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: as above.
    unsafe { libc::kill(-group, libc::SIGKILL) };
    child.wait()?;
    Ok(None)
}

/// A pipe read to its end on a thread, whatever has arrived readable at any time (a rank that
/// outlives a killed mpirun may hold the pipe open).
struct Collected {
    text: Arc<Mutex<Vec<u8>>>,
    reader: JoinHandle<()>,
}

fn collect(mut pipe: impl Read + Send + 'static) -> Collected {
    let text = Arc::new(Mutex::new(Vec::new()));
    let sink = text.clone();
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        loop {
            match pipe.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(k) => sink.lock().unwrap().extend_from_slice(&buf[..k]),
            }
        }
    });
    Collected { text, reader }
}

impl Collected {
    /// The text read, after waiting a little for the pipe to close.
    fn finish(self) -> String {
        let until = Instant::now() + Duration::from_secs(5);
        while !self.reader.is_finished() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(20));
        }
        let text = String::from_utf8_lossy(&self.text.lock().unwrap()).into_owned();
        if self.reader.is_finished() {
            text
        } else {
            format!("{text}\n(the pipe is still open: a process mpirun started may still run)")
        }
    }
}
