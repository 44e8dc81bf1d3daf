//! `fabbench limits`: its arguments; the runs given to `--against` read and checked first (bad
//! input stops before anything is measured), the run directory claimed, the limits crate's
//! measurements made and written, and its table and statements printed.

use std::path::PathBuf;

use clap::Args;
use limits::{against, figures, LimitsError, Request};

use crate::cli::groups::OutArgs;

#[derive(Debug, Args)]
#[command(
    after_help = "Measures, on two CPUs this process may use: one cache line bounced between two \
                  pinned processes (one line for both, and one each), memcpy at 64 KiB, 1 MiB \
                  and 16 MiB, one process_vm_readv call at 64 B, 4 KiB and 64 KiB, and a 64 B \
                  loopback TCP ping-pong (blocking and spinning). Prints the median and best of \
                  each and writes a run directory (summary.csv, samples.csv, manifest.json) \
                  under --out. Measure the limits and the runs they are compared with in one \
                  session: on a VM the two CPUs may move between runs. Example: fabbench \
                  limits --against fabbench-results/20261123T150735Z-osu_latency-shm",
    mut_arg("out", |a| a.help("Where the limits' run directory is made"))
)]
pub struct LimitsArgs {
    /// Tiny repetition counts: a first look in a few seconds, not a measurement
    #[arg(long)]
    pub quick: bool,

    /// fabbench run directories whose shm and tcp osu_latency (8 B; 64 B on tcp) and osu_bw
    /// (near 64 KiB, 1 MiB and 16 MiB) are stated as multiples of the limits
    #[arg(long, value_name = "RUN_DIR", num_args = 1..)]
    pub against: Vec<PathBuf>,

    #[command(flatten)]
    pub out: OutArgs,
}

pub fn run(args: LimitsArgs) -> Result<(), LimitsError> {
    let runs = args
        .against
        .iter()
        .map(|dir| against::read(dir).map(|run| (dir, run)))
        .collect::<Result<Vec<_>, _>>()?;
    let dir = limits::write::claim(&args.out.out)?;
    let req = Request {
        quick: args.quick,
        command_line: std::env::args().collect(),
        fabbench_version: env!("CARGO_PKG_VERSION").into(),
        git_revision: runner::GIT_REVISION.into(),
    };
    let mut run = match limits::measure(&req) {
        Ok(run) => run,
        Err(e) => {
            dir.discard();
            return Err(e);
        }
    };
    let path = limits::write::write(dir, &mut run)?;
    let f = run.manifest.fabrics.first();
    println!(
        "# fabbench limits on {}, {}{}: median and best of each measurement",
        run.manifest.host.hostname,
        f.map(|f| f.settings_line.as_str()).unwrap_or(""),
        if run.manifest.quick {
            " (--quick: a first look)"
        } else {
            ""
        }
    );
    print!("{}", figures::table(&run));
    let limits = figures::figures(&run);
    for (dir, other) in &runs {
        println!("# against {}", dir.display());
        let statements = against::statements(&limits, other, dir);
        for s in &statements {
            println!("{s}");
        }
        if statements.is_empty() {
            println!(
                "# nothing in it at the limits' sizes (osu_latency at 8 B, or 64 B on tcp; \
                 osu_bw within 4x of 64KiB, 1MiB or 16MiB)"
            );
        }
    }
    println!("# written to {}", path.display());
    Ok(())
}
