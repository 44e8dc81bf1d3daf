//! `fabbench run`: its arguments, the command line as a plan for the runner ([`plan`]), the
//! terminal as its sink, and the outcome for `main` to map to an exit status. `--resume
//! RUN_DIR` continues a kept partial run with the command line its manifest recorded; `-n
//! 1,2,4` is a scaling run ([`scaling`]).

mod buffers;
mod plan;
mod scaling;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use bench_core::bootstrap::discover::{self, Started};
use clap::parser::ValueSource;
use clap::{ArgMatches, Args, FromArgMatches};
use runner::sinks::Terminal;
use runner::Role;

use crate::cli::groups::{ModelArgs, OutArgs, TunableArgs};
use crate::commands::plot;
use crate::exit::Failure;
use crate::signals;
use crate::single_dash::{self, Given};
use plan::{list, plan};

#[derive(Debug, Args)]
#[command(mut_arg("out", |a| a
    .help("Directory the run's results directory is created in")))]
pub struct RunArgs {
    /// Suites to run, e.g. osu_latency osu_bw (see `fabbench list suites`); OSU's buffer
    /// locations may follow, as ReFrame's OSU test gives them: H H (host memory, what fabbench
    /// measures)
    #[arg(required_unless_present = "resume", value_name = "SUITE")]
    pub suites: Vec<String>,

    /// Continue a run that was kept incomplete (OUT/RUN_ID.partial) from its last measured
    /// point, with its own command line; give nothing else
    #[arg(long, value_name = "RUN_DIR")]
    pub resume: Option<PathBuf>,

    /// Fabric(s) to run on, comma separated; FABRIC@mpi runs a fabric through the MPI library
    /// (see `fabbench list fabrics`)
    #[arg(
        short = 'f',
        long,
        default_value = "shm",
        value_name = "FABRIC[,FABRIC]"
    )]
    pub fabric: String,

    /// Run every listed fabric through the MPI library (same as writing FABRIC@mpi)
    #[arg(long, value_name = "mpi")]
    pub via: Option<String>,

    /// The mpirun that starts MPI ranks
    #[arg(long, default_value = "mpirun", value_name = "PATH")]
    pub mpirun: String,

    /// Number of ranks (default 2; under mpirun or srun, the launcher's count). A list
    /// (`-n 1,2,4`) runs each count in turn and reports speedup and parallel efficiency
    #[arg(short = 'n', long = "ranks", value_name = "N[,N...]", value_parser = parse_rank_counts)]
    pub ranks: Option<RankCounts>,

    /// How ranks started by mpirun or srun meet: tcp://HOST:PORT (rank 0 serves it) or
    /// dir:PATH (a directory every rank can see)
    #[arg(long, value_name = "tcp://HOST:PORT|dir:PATH")]
    pub bootstrap: Option<String>,

    /// Let a tcp:// bootstrap reachable from other hosts run without a secret (no
    /// FABBENCH_TOKEN and no usable $HOME/.fabbench/key): any peer that guesses the job id can
    /// then join
    #[arg(long)]
    pub bootstrap_insecure: bool,

    #[command(flatten)]
    pub tunables: TunableArgs,

    /// A TOML profile of tunables (as `fabbench autotune` writes); --set wins over it
    #[arg(long, value_name = "FILE")]
    pub profile: Option<PathBuf>,

    #[command(flatten)]
    pub model: ModelArgs,

    #[command(flatten)]
    pub out: OutArgs,

    /// Also draw the suites' charts (SVG) into the run directory's plots/
    #[arg(long)]
    pub plot: bool,

    /// A first look: a tenth of the OSU tests' iterations and warm-up over their default
    /// sizes (1 B to 4 MiB); an explicit -m, -i or -x wins. Other suites run as given. The
    /// output and manifest say the run was quick
    #[arg(long)]
    pub quick: bool,

    /// On emulated fabrics, charge the compute stretches an earlier run of the same command
    /// recorded (its compute.csv) instead of timing them, so the host's load cannot move the
    /// kernel times; RUN_DIR is that run's directory, or its scaling directory. The output
    /// says the compute was replayed
    #[arg(long, value_name = "RUN_DIR")]
    pub compute_from: Option<PathBuf>,
}

/// `-n`'s rank counts: one, or several for a scaling run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankCounts(pub Vec<usize>);

/// The largest rank count `-n` takes (threads or processes on one host, or a launcher's job).
const MAX_RANKS: usize = 4096;

fn parse_rank_counts(text: &str) -> Result<RankCounts, String> {
    let mut counts = Vec::new();
    for part in text.split(',') {
        let n: usize = part
            .trim()
            .parse()
            .map_err(|_| format!("'{part}' is not a rank count; give N or a list such as 1,2,4"))?;
        if n == 0 || n > MAX_RANKS {
            return Err(format!("{n} ranks: give 1 to {MAX_RANKS}"));
        }
        if counts.contains(&n) {
            return Err(format!("{n} is listed twice; list each rank count once"));
        }
        counts.push(n);
    }
    counts.sort_unstable();
    Ok(RankCounts(counts))
}

/// `fabbench run` as parsed: `args` read from `matches` (the run subcommand's), with the
/// single-dash suite options in `single`; `command` is the whole command line's parser, which
/// `--resume` reads the recorded command line with.
pub fn run(
    args: RunArgs,
    matches: &ArgMatches,
    single: &Given,
    command: clap::Command,
) -> Result<(), Failure> {
    match args.resume.clone() {
        Some(dir) => resume(&dir, matches, command),
        None => execute(args, matches, single, None),
    }
}

/// `fabbench run --resume DIR`: the run's own command line, parsed again, continuing in DIR.
fn resume(dir: &Path, matches: &ArgMatches, command: clap::Command) -> Result<(), Failure> {
    let usage = |why: String| Failure::Usage(format!("--resume {}: {why}", dir.display()));
    let others: Vec<String> = command
        .find_subcommand("run")
        .expect("run is a subcommand")
        .get_arguments()
        .map(|a| a.get_id().as_str().to_string())
        .filter(|id| id != "resume" && matches.value_source(id) == Some(ValueSource::CommandLine))
        .collect();
    if !others.is_empty() {
        return Err(usage(format!(
            "give nothing else (also given: {}); the run continues with the options it was started with",
            others.join(", ")
        )));
    }
    let (argv, ranks) = match results::read_manifest(dir) {
        Ok(m) => (m.command_line, m.fabrics.first().map(|f| f.ranks)),
        Err(e) => return Err(usage(e.to_string())),
    };
    if argv.get(1).map(String::as_str) != Some("run") {
        return Err(usage(format!(
            "its manifest records no fabbench run command line ({:?})",
            argv.join(" ")
        )));
    }
    let shorts = single_dash::run_shorts(&command);
    let parsed = single_dash::split(argv.iter().map(OsString::from).collect(), &shorts).and_then(
        |(words, single)| {
            let m = command
                .try_get_matches_from(words)
                .map_err(|e| e.to_string())?;
            Ok((m, single))
        },
    );
    let (m, single) =
        parsed.map_err(|e| usage(format!("its recorded command line no longer parses: {e}")))?;
    let Some(run_m) = m.subcommand_matches("run") else {
        return Err(usage(
            "its manifest records no fabbench run command line".into(),
        ));
    };
    let mut args = RunArgs::from_arg_matches(run_m)
        .map_err(|e| usage(format!("its recorded command line no longer parses: {e}")))?;
    if args.resume.is_some() {
        return Err(usage(
            "its recorded command line is itself a --resume".into(),
        ));
    }
    // One count of a scaling run (-n 1,2,4) continues at its own count.
    if args.ranks.as_ref().is_some_and(|c| c.0.len() > 1) {
        args.ranks = ranks.map(|n| RankCounts(vec![n]));
    }
    execute(args, run_m, &single, Some(dir))
}

fn execute(
    mut args: RunArgs,
    matches: &ArgMatches,
    single: &Given,
    resume: Option<&Path>,
) -> Result<(), Failure> {
    let started = discover::detect().map_err(|e| Failure::Usage(e.to_string()))?;
    // Under a launcher every rank refuses bad input with the same line, prefixed by its rank
    // where that is not 0, since a launcher may show only some ranks' output.
    let prefix = match &started {
        Started::External(e) if e.rank != 0 => format!("rank {}: ", e.rank),
        _ => String::new(),
    };
    buffers::take(&mut args.suites).map_err(|e| Failure::Usage(format!("{prefix}{e}")))?;
    if let Some(counts) = args.ranks.as_ref().filter(|c| c.0.len() > 1) {
        if matches!(started, Started::External(_)) {
            return Err(Failure::Usage(format!(
                "{prefix}-n {}: under mpirun or srun the launcher fixes the rank count; run once per count (give one -n or none)",
                list(&counts.0)
            )));
        }
        return scaling::run(&args, matches, single, &counts.0);
    }
    let plan = plan(&args, matches, single, started, None, resume)
        .map_err(|e| Failure::Usage(format!("{prefix}{e}")))?;
    match plan.role() {
        Role::Worker { .. } => Ok(runner::run_worker(&plan)?),
        Role::Frontend => {
            for line in runner::advice::before(std::slice::from_ref(&plan), Some(&args.out.out)) {
                eprintln!("{line}");
            }
            signals::install();
            let run = runner::run_until(&plan, &mut Terminal::new(), &signals::INTERRUPTED)?;
            for line in runner::advice::short_points(&run) {
                eprintln!("{line}");
            }
            if !args.plot {
                return Ok(());
            }
            let dir: PathBuf = plan
                .run_dir(&run)
                .expect("a run from the command line is written to a directory");
            let files = plot::after_run(&dir, &[&run]).map_err(|e| {
                crate::exit::charts_failed(e, "the run is written, its charts are not")
            })?;
            eprintln!(
                "# plots: {} charts in {}",
                files.len(),
                dir.join("plots").display()
            );
            Ok(())
        }
    }
}
