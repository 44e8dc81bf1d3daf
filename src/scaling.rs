//! `fabbench run SUITE -n 1,2,4`: a strong-scaling run. Each rank count runs as an ordinary
//! run (its own run directory, under `OUT/STAMP-scaling/nN/`), one after the other; then the
//! speedup and parallel efficiency of every kernel point against the smallest count are
//! printed and written beside them as scaling.csv and scaling.txt (and charted with --plot).
//! Every count's plan is built first, so a count a suite refuses (IS at 3 ranks) stops the run
//! before anything is measured.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use bench_core::bootstrap::discover::Started;
use clap::ArgMatches;
use runner::sinks::Terminal;
use runner::Plan;

use crate::cli::RunArgs;
use crate::single_dash::Given;
use crate::{exit, signals};

/// A directory for this scaling run under `out`, claimed by creating it: `STAMP-scaling`, or
/// with a suffix when another run (another process, the same second) has that name.
fn fresh_dir(out: &Path) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(out)?;
    let base = format!("{}-scaling", results::run_dir::stamp(SystemTime::now()));
    for n in 1.. {
        let dir = match n {
            1 => out.join(&base),
            _ => out.join(format!("{base}-{n}")),
        };
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    unreachable!("the suffixes never run out")
}

pub fn run(args: &RunArgs, matches: &ArgMatches, single: &Given, counts: &[usize]) -> i32 {
    if args.resume.is_some() {
        eprintln!("error: --resume continues one run; resume each count's run directory (OUT/STAMP-scaling/nN/RUN_ID.partial) on its own");
        return exit::USAGE;
    }
    let mut plans: Vec<Plan> = Vec::new();
    // Checked against a directory not made yet: nothing is created for a refused plan.
    let planned = Path::new("scaling");
    for &n in counts {
        let out = planned.join(format!("n{n}"));
        match crate::run_plan::plan(
            args,
            matches,
            single,
            Started::ByUser,
            Some((n, &out)),
            None,
        ) {
            Ok(p) => plans.push(p),
            Err(e) => {
                eprintln!("error: {e}");
                return exit::USAGE;
            }
        }
    }
    let dir = match fresh_dir(&args.out) {
        Ok(d) => d,
        Err(e) => {
            eprintln!(
                "error: cannot write results to {}: {e}; pass --out DIR with a writable directory",
                args.out.display()
            );
            return exit::USAGE;
        }
    };
    for (plan, &n) in plans.iter_mut().zip(counts) {
        plan.out = Some(dir.join(format!("n{n}")));
    }
    signals::install();
    let mut runs = Vec::new();
    for plan in &plans {
        eprintln!("# scaling: {} ranks", plan.ranks);
        match runner::run_until(plan, &mut Terminal::new(), &signals::INTERRUPTED) {
            Ok(run) => runs.push(run),
            Err(e) => {
                if !runs.is_empty() {
                    eprintln!(
                        "# the runs that finished are in {}; no scaling table was made",
                        dir.display()
                    );
                }
                return exit::of(&e);
            }
        }
    }
    let refs: Vec<&results::Run> = runs.iter().collect();
    let rows = results::scaling::rows(&refs);
    let text = results::scaling::text(&rows);
    print!("{text}");
    if rows.is_empty() {
        eprintln!(
            "# no point was measured at two rank counts: scaling needs kernel points (npb, nbody)"
        );
    }
    let written = results::scaling::csv(&rows)
        .map_err(|e| e.to_string())
        .and_then(|csv| {
            for (name, bytes) in [("scaling.csv", csv), ("scaling.txt", text.into_bytes())] {
                results::run_dir::write_atomically(&dir.join(name), &bytes)
                    .map_err(|e| format!("writing {}: {e}", dir.join(name).display()))?;
            }
            Ok(())
        });
    if let Err(e) = written {
        eprintln!("error: the runs are written, the scaling table is not: {e}");
        return exit::FAILED;
    }
    eprintln!("# scaling: {}", dir.join("scaling.csv").display());
    if args.plot {
        match crate::plot::after_run(&dir, &refs) {
            Ok(files) => eprintln!(
                "# plots: {} charts in {}",
                files.len(),
                dir.join("plots").display()
            ),
            Err(e) => {
                eprintln!("error: the runs are written, their charts are not: {e}");
                return exit::FAILED;
            }
        }
    }
    exit::OK
}
