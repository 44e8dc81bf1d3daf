//! The plan of a `fabbench run` command line: the runner's `Plan` from the parsed arguments,
//! as given or at one rank count of a scaling run (shared by `run` and `scaling`).

use bench_core::bootstrap::discover::Started;
use clap::ArgMatches;
use runner::{Plan, PlanBuilder, PlanError};

use super::RunArgs;
use crate::cli::suite_options::suite_args;
use crate::single_dash::Given;

/// "1,2,4"
pub fn list(counts: &[usize]) -> String {
    counts
        .iter()
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// The plan of `fabbench run` as given, or at `ranks` ranks writing into `out` (one count of a
/// scaling run), or continuing the kept partial run `resume`.
pub fn plan(
    args: &RunArgs,
    matches: &ArgMatches,
    single: &Given,
    started: Started,
    count: Option<(usize, &std::path::Path)>,
    resume: Option<&std::path::Path>,
) -> Result<Plan, PlanError> {
    let mut b = PlanBuilder::new()
        .started(started)
        .fabrics(&args.fabric)
        .via(args.via.as_deref())
        .bootstrap(args.bootstrap.as_deref())
        .bootstrap_insecure(args.bootstrap_insecure)
        .mpirun(&args.mpirun)
        .out(&args.out.out)
        .quick(args.quick);
    match count {
        Some((n, out)) => b = b.ranks(n).out(out).tag(&format!("n{n}")),
        None => {
            if let Some(n) = args.ranks.as_ref().and_then(|c| c.0.first()) {
                b = b.ranks(*n);
            }
        }
    }
    for s in &args.tunables.set {
        b = b.set(s);
    }
    if let Some(p) = &args.profile {
        b = b.profile(p);
    }
    if let Some(m) = &args.model.model {
        b = b.model(m);
    }
    if let Some(dir) = resume {
        b = b.resume(dir);
    }
    if let Some(dir) = &args.compute_from {
        b = b.compute_from(dir);
    }
    for name in &args.suites {
        b = b.suite_named(
            name,
            suite_args(matches, single, name, &args.suites).map_err(PlanError::Refused)?,
        );
    }
    b.build()
}
