//! `fabbench run`: the command line as a plan for the runner, the terminal as its sink, and
//! the outcome as an exit status.

use bench_core::bootstrap::discover::{self, Started};
use clap::ArgMatches;
use runner::sinks::Terminal;
use runner::Role;

use crate::cli::RunArgs;
use crate::run_plan::{list, plan};
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
                    match crate::plot::after_run(&dir, &[&run]) {
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
