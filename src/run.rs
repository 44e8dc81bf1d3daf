//! `fabbench run`: the command line as a plan for the runner, the terminal as its sink, and
//! the outcome as an exit status.

use bench_core::bootstrap::discover::{self, Started};
use clap::ArgMatches;
use runner::sinks::Terminal;
use runner::{Plan, PlanBuilder, PlanError, Role};

use crate::cli::{self, RunArgs};
use crate::single_dash::Given;
use crate::{exit, signals};

pub fn run(args: RunArgs, matches: &ArgMatches, single: &Given) -> i32 {
    let started = match discover::detect() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::USAGE;
        }
    };
    let worker = matches!(&started, Started::External(e) if e.rank != 0);
    if let Some(counts) = args.ranks.as_ref().filter(|c| c.0.len() > 1) {
        if matches!(started, Started::External(_)) {
            if !worker {
                eprintln!(
                    "error: -n {}: under mpirun or srun the launcher fixes the rank count; run once per count (give one -n or none)",
                    list(&counts.0)
                );
            }
            return exit::USAGE;
        }
        return crate::scaling::run(&args, matches, single, &counts.0);
    }
    let plan = match plan(&args, matches, single, started, None) {
        Ok(p) => p,
        Err(e) => {
            // Under a launcher every rank refuses; one line from rank 0 is enough.
            if !worker {
                eprintln!("error: {e}");
            }
            return exit::USAGE;
        }
    };
    match plan.role() {
        Role::Worker { .. } => exit::rank(runner::run_worker(&plan)),
        Role::Frontend => {
            signals::install();
            match runner::run_until(&plan, &mut Terminal::new(), &signals::INTERRUPTED) {
                Ok(run) if args.plot => {
                    let dir = args.out.join(&run.manifest.run_id);
                    match crate::plot::after_run(&dir, &run) {
                        Ok(files) => {
                            eprintln!(
                                "# plots: {} charts in {}",
                                files.len(),
                                dir.join("plots").display()
                            );
                            exit::OK
                        }
                        Err(e) => {
                            eprintln!("error: the run is written, its charts are not: {e}");
                            exit::FAILED
                        }
                    }
                }
                Ok(_) => exit::OK,
                Err(e) => exit::of(&e),
            }
        }
    }
}

/// "1,2,4"
pub fn list(counts: &[usize]) -> String {
    counts
        .iter()
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// The plan of `fabbench run` as given, or at `ranks` ranks writing into `out` (one count of a
/// scaling run).
pub fn plan(
    args: &RunArgs,
    matches: &ArgMatches,
    single: &Given,
    started: Started,
    count: Option<(usize, &std::path::Path)>,
) -> Result<Plan, PlanError> {
    let mut b = PlanBuilder::new()
        .started(started)
        .fabrics(&args.fabric)
        .via(args.via.as_deref())
        .bootstrap(args.bootstrap.as_deref())
        .mpirun(&args.mpirun)
        .out(&args.out);
    match count {
        Some((n, out)) => b = b.ranks(n).out(out).tag(&format!("n{n}")),
        None => {
            if let Some(n) = args.ranks.as_ref().and_then(|c| c.0.first()) {
                b = b.ranks(*n);
            }
        }
    }
    for s in &args.set {
        b = b.set(s);
    }
    if let Some(p) = &args.profile {
        b = b.profile(p);
    }
    if let Some(m) = &args.model {
        b = b.model(m);
    }
    for name in &args.suites {
        b = b.suite_named(
            name,
            cli::suite_args(matches, single, name, &args.suites).map_err(PlanError)?,
        );
    }
    b.build()
}
