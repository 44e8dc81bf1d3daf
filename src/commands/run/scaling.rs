//! `fabbench run SUITE -n 1,2,4`: a strong-scaling run. Each rank count runs as an ordinary
//! run (its own run directory, under `OUT/STAMP-scaling/nN/`), one after the other, by
//! `runner::scaling`; then the speedup and parallel efficiency of every kernel point against
//! the smallest count are printed and written beside them as scaling.csv and scaling.txt (and
//! charted with --plot). Every count's plan is built first, so a count a suite refuses (IS at
//! 3 ranks) stops the run before anything is measured.

use std::path::Path;

use bench_core::bootstrap::discover::Started;
use clap::ArgMatches;
use runner::sinks::Terminal;
use runner::Plan;

use super::RunArgs;
use crate::commands::plot;
use crate::exit::Failure;
use crate::signals;
use crate::single_dash::Given;

pub fn run(
    args: &RunArgs,
    matches: &ArgMatches,
    single: &Given,
    counts: &[usize],
) -> Result<(), Failure> {
    if args.resume.is_some() {
        return Err(Failure::Usage("--resume continues one run; resume each count's run directory (OUT/STAMP-scaling/nN/RUN_ID.partial) on its own".into()));
    }
    // Checked against a directory not made yet: nothing is created for a refused plan; the
    // runner puts each count into the directory it claims.
    let planned = Path::new("scaling");
    let plans = counts
        .iter()
        .map(|&n| {
            let out = planned.join(format!("n{n}"));
            super::plan::plan(
                args,
                matches,
                single,
                Started::ByUser,
                Some((n, &out)),
                None,
            )
        })
        .collect::<Result<Vec<Plan>, _>>()
        .map_err(|e| Failure::Usage(e.to_string()))?;
    for line in runner::advice::before(&plans, Some(&args.out.out)) {
        eprintln!("{line}");
    }
    signals::install();
    let announce = |plan: &Plan| {
        eprintln!("# scaling: {} ranks", plan.ranks);
        Terminal::new()
    };
    let scaling =
        runner::scaling::run_counts(plans, &args.out.out, announce, &signals::INTERRUPTED)
            .map_err(|e| {
                if let Some(dir) = &e.finished_in {
                    eprintln!(
                        "# the runs that finished are in {}; no scaling table was made",
                        dir.display()
                    );
                }
                Failure::from(e.error)
            })?;
    let dir = &scaling.dir;
    for line in scaling.runs.iter().flat_map(runner::advice::short_points) {
        eprintln!("{line}");
    }
    let refs: Vec<&results::Run> = scaling.runs.iter().collect();
    let rows = results::scaling::rows(&refs);
    let text = results::scaling::text(&rows);
    print!("{text}");
    if rows.is_empty() {
        eprintln!(
            "# no point was measured at two rank counts: scaling needs kernel points (npb, nbody)"
        );
    }
    results::scaling::csv(&rows)
        .map_err(|e| e.to_string())
        .and_then(|csv| {
            for (name, bytes) in [("scaling.csv", csv), ("scaling.txt", text.into_bytes())] {
                results::run_dir::write_atomically(&dir.join(name), &bytes)
                    .map_err(|e| format!("writing {}: {e}", dir.join(name).display()))?;
            }
            Ok(())
        })
        .map_err(|e| {
            Failure::Unwritten(format!(
                "the runs are written, the scaling table is not: {e}"
            ))
        })?;
    eprintln!("# scaling: {}", dir.join("scaling.csv").display());
    if args.plot {
        let files = plot::after_run(dir, &refs).map_err(|e| {
            crate::exit::charts_failed(e, "the runs are written, their charts are not")
        })?;
        eprintln!(
            "# plots: {} charts in {}",
            files.len(),
            dir.join("plots").display()
        );
    }
    Ok(())
}
