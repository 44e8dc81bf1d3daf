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
    let plan = match plan(&args, matches, single, started) {
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

fn plan(
    args: &RunArgs,
    matches: &ArgMatches,
    single: &Given,
    started: Started,
) -> Result<Plan, PlanError> {
    let mut b = PlanBuilder::new()
        .started(started)
        .fabrics(&args.fabric)
        .via(args.via.as_deref())
        .bootstrap(args.bootstrap.as_deref())
        .mpirun(&args.mpirun)
        .out(&args.out);
    if let Some(n) = args.ranks {
        b = b.ranks(n);
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
