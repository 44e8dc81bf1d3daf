//! `fabbench run`: the command line as a plan for the runner, the terminal as its sink, and
//! the outcome as an exit status. `--resume RUN_DIR` continues a kept partial run with the
//! command line its manifest recorded.

use std::ffi::OsString;
use std::path::Path;

use bench_core::bootstrap::discover::{self, Started};
use clap::parser::ValueSource;
use clap::{ArgMatches, FromArgMatches};
use runner::sinks::Terminal;
use runner::Role;

use crate::cli::{self, Cli, Command, RankCounts, RunArgs};
use crate::run_plan::{list, plan};
use crate::single_dash::{self, Given};
use crate::{exit, signals};

pub fn run(args: RunArgs, matches: &ArgMatches, single: &Given) -> i32 {
    match args.resume.clone() {
        Some(dir) => resume(&dir, matches),
        None => execute(args, matches, single, None),
    }
}

/// `fabbench run --resume DIR`: the run's own command line, parsed again, continuing in DIR.
fn resume(dir: &Path, matches: &ArgMatches) -> i32 {
    let usage = |why: String| {
        eprintln!("error: --resume {}: {why}", dir.display());
        exit::USAGE
    };
    let command = cli::command();
    let others: Vec<String> = command
        .find_subcommand("run")
        .expect("run is a subcommand")
        .get_arguments()
        .map(|a| a.get_id().as_str().to_string())
        .filter(|id| id != "resume" && matches.value_source(id) == Some(ValueSource::CommandLine))
        .collect();
    if !others.is_empty() {
        return usage(format!(
            "give nothing else (also given: {}); the run continues with the options it was started with",
            others.join(", ")
        ));
    }
    let (argv, ranks) = match results::read_manifest(dir) {
        Ok(m) => (m.command_line, m.fabrics.first().map(|f| f.ranks)),
        Err(e) => return usage(e.to_string()),
    };
    if argv.get(1).map(String::as_str) != Some("run") {
        return usage(format!(
            "its manifest records no fabbench run command line ({:?})",
            argv.join(" ")
        ));
    }
    let shorts = single_dash::run_shorts(&command);
    let parsed = single_dash::split(argv.iter().map(OsString::from).collect(), &shorts).and_then(
        |(words, single)| {
            let m = command
                .try_get_matches_from(words)
                .map_err(|e| e.to_string())?;
            let cli = Cli::from_arg_matches(&m).map_err(|e| e.to_string())?;
            Ok((cli, m, single))
        },
    );
    let (cli, m, single) = match parsed {
        Ok(p) => p,
        Err(e) => return usage(format!("its recorded command line no longer parses: {e}")),
    };
    let Command::Run(mut args) = cli.command else {
        return usage("its manifest records no fabbench run command line".into());
    };
    if args.resume.is_some() {
        return usage("its recorded command line is itself a --resume".into());
    }
    // One count of a scaling run (-n 1,2,4) continues at its own count.
    if args.ranks.as_ref().is_some_and(|c| c.0.len() > 1) {
        args.ranks = ranks.map(|n| RankCounts(vec![n]));
    }
    let run_m = m.subcommand_matches("run").expect("a run command line");
    execute(*args, run_m, &single, Some(dir))
}

fn execute(args: RunArgs, matches: &ArgMatches, single: &Given, resume: Option<&Path>) -> i32 {
    let started = match discover::detect() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::USAGE;
        }
    };
    // Under a launcher every rank refuses bad input with the same line, prefixed by its rank
    // where that is not 0, since a launcher may show only some ranks' output.
    let prefix = match &started {
        Started::External(e) if e.rank != 0 => format!("rank {}: ", e.rank),
        _ => String::new(),
    };
    if let Some(counts) = args.ranks.as_ref().filter(|c| c.0.len() > 1) {
        if matches!(started, Started::External(_)) {
            eprintln!(
                "error: {prefix}-n {}: under mpirun or srun the launcher fixes the rank count; run once per count (give one -n or none)",
                list(&counts.0)
            );
            return exit::USAGE;
        }
        return crate::scaling::run(&args, matches, single, &counts.0);
    }
    let plan = match plan(&args, matches, single, started, None, resume) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {prefix}{e}");
            return exit::USAGE;
        }
    };
    match plan.role() {
        Role::Worker { .. } => exit::rank(runner::run_worker(&plan)),
        Role::Frontend => {
            signals::install();
            let out = match resume {
                Some(dir) => dir.parent().unwrap_or(Path::new(".")).to_path_buf(),
                None => args.out.clone(),
            };
            match runner::run_until(&plan, &mut Terminal::new(), &signals::INTERRUPTED) {
                Ok(run) if args.plot => {
                    let dir = out.join(&run.manifest.run_id);
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
