//! `fabbench autotune`: its arguments, the command line as an autotune request, a progress
//! bar as its observer, the outcome written as a directory, and a few summary lines on stdout.

use std::io::IsTerminal;
use std::path::Path;
use std::time::Duration;

use autotune::exhaustive::threshold_sweep;
use autotune::outcome::Outcome;
use autotune::{Objective, Observer, Request, TuneError, Tuning};
use bench_core::size::{format_size, parse_size};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use results::run_dir::RunDir;

use crate::cli::groups::{OutArgs, TunableArgs};
use crate::fraction::{self, Fraction};
use crate::signals;

#[derive(Debug, Args)]
#[command(
    after_help = "Writes profile.toml (load it with `fabbench run --profile FILE`), autotune.json, \
                  report.md and, on an MPI fabric, mca-params.conf, ompi-tune.conf and \
                  autotune.env into a new directory under --out. Example: fabbench autotune \
                  --fabric rapidio --budget 2m",
    mut_arg("set", |a| a.help("Hold a tunable fixed, e.g. --set rapidio.copy_mbps=300 (repeatable)")),
    mut_arg("out", |a| a.help("Directory the autotune's directory is created in"))
)]
pub struct AutotuneArgs {
    /// Fabric to tune (see `fabbench list fabrics`); FABRIC@mpi tunes its MPI library's variables
    #[arg(short = 'f', long, default_value = "shm", value_name = "FABRIC")]
    pub fabric: String,

    /// Parameters to search, comma separated (default: the thresholds, fragment sizes and
    /// switches that matter on the fabric)
    #[arg(long, value_delimiter = ',', value_name = "NAME[,NAME]")]
    pub params: Option<Vec<String>>,

    /// Suites that judge the settings, comma separated: osu_latency, osu_bw, osu_bibw
    /// (default: the objective's)
    #[arg(long, value_delimiter = ',', value_name = "SUITE[,SUITE]")]
    pub workload: Option<Vec<String>>,

    /// latency (osu_latency), bandwidth (osu_bw) or balanced (both)
    #[arg(long, default_value = "latency", value_name = "OBJECTIVE")]
    pub objective: String,

    /// Wall time the search and verification may take (e.g. 90s, 10m); when it runs out,
    /// autotune decides with what it measured and says so
    #[arg(long, default_value = "10m", value_name = "DURATION")]
    pub budget: String,

    /// Message sizes measured, MIN:MAX (default 1:1M)
    #[arg(long, value_name = "MIN:MAX")]
    pub sizes: Option<String>,

    /// Values within this of the best are reported as near-equal winners (2% or 0.02)
    #[arg(long, default_value = "2%", value_name = "PERCENT", value_parser = fraction::parse)]
    pub tolerance: Fraction,

    #[command(flatten)]
    pub tunables: TunableArgs,

    /// Also run the exhaustive sweep of the threshold (every candidate at every size) and
    /// report what the search saved
    #[arg(long)]
    pub exhaustive: bool,

    /// The mpirun that starts MPI ranks
    #[arg(long, default_value = "mpirun", value_name = "PATH")]
    pub mpirun: String,

    #[command(flatten)]
    pub out: OutArgs,
}

pub fn run(args: AutotuneArgs) -> Result<(), TuneError> {
    tune(&args)
}

fn usage(msg: String) -> TuneError {
    TuneError::Usage(msg)
}

fn request(args: &AutotuneArgs) -> Result<Request, TuneError> {
    let mut r = Request::new(&args.fabric);
    r.params = args.params.clone();
    r.workloads = args.workload.clone();
    r.objective = Objective::parse(&args.objective)?;
    r.budget = humantime::parse_duration(&args.budget).map_err(|_| {
        usage(format!(
            "--budget {}: use a duration such as 90s, 10m or 1h",
            args.budget
        ))
    })?;
    r.sizes = args
        .sizes
        .as_deref()
        .map(autotune::request::parse_sizes)
        .transpose()?;
    r.tolerance = args.tolerance.value;
    r.sets = args.tunables.set.clone();
    r.mpirun = args.mpirun.clone();
    Ok(r)
}

fn tune(args: &AutotuneArgs) -> Result<(), TuneError> {
    let tuning = request(args)?.check()?;
    // The directory first: an unwritable --out stops before anything is measured.
    let id = format!(
        "{}-autotune-{}",
        results::run_dir::stamp(std::time::SystemTime::now()),
        tuning.label.replace(['@', '/'], "-")
    );
    let dir = RunDir::create(&args.out.out, &id).map_err(TuneError::Unwritable)?;
    if let Some(line) = tuning.estimate() {
        eprintln!("{line}");
    }
    signals::install();
    let mut bar = Bar::new(&tuning);
    let outcome = autotune::run(&tuning, &mut bar, &signals::INTERRUPTED);
    bar.finish();
    let mut outcome = outcome?;
    if args.exhaustive {
        compare_exhaustive(&tuning, &mut outcome)?;
    }
    for (path, bytes) in autotune::export::export_all(&outcome)? {
        dir.write(&path, &bytes).map_err(TuneError::Write)?;
    }
    let path = dir.commit().map_err(TuneError::Write)?;
    summary(&outcome, &path);
    Ok(())
}

/// Runs the exhaustive sweep of the threshold and records what the search saved.
fn compare_exhaustive(t: &Tuning, o: &mut Outcome) -> Result<(), TuneError> {
    let Some(p) = t.param(autotune::params::Role::Threshold).next() else {
        o.notes
            .push("--exhaustive: no threshold was tuned, nothing to sweep".into());
        return Ok(());
    };
    let mut quiet = autotune::Quiet;
    let sweep = threshold_sweep(t, &p.name, t.workloads[0], &mut quiet)?;
    let chosen = o
        .chosen
        .get(&p.name)
        .and_then(|v| parse_size(v).ok())
        .unwrap_or(0);
    let regret = sweep.regret(chosen);
    let best = regret.best;
    o.notes.push(format!(
        "exhaustive sweep of {} on {}: {} candidates x {} sizes, best {} by the grid's per-protocol medians ({} runs, {:.1} s wall, {:.4} s measured); autotune chose {} (per size against that best: median {:+.1} %, 90th percentile {:+.1} %, worst {:+.1} %) in {} runs, {:.1} s wall, {:.4} s measured ({:.1} % of the sweep's measured time)",
        p.name,
        sweep.workload,
        sweep.values.len(),
        sweep.sizes.len(),
        format_size(sweep.values[best]),
        sweep.runs,
        sweep.wall_s,
        sweep.measured_s,
        o.chosen.get(&p.name).cloned().unwrap_or_default(),
        regret.median * 100.0,
        regret.p90 * 100.0,
        regret.worst * 100.0,
        o.spent.runs,
        o.spent.wall_s,
        o.spent.measured_s,
        100.0 * o.spent.measured_s / sweep.measured_s.max(f64::MIN_POSITIVE)
    ));
    Ok(())
}

fn summary(o: &Outcome, path: &Path) {
    println!(
        "# fabbench autotune: {} ({}), objective {}, {} over {}-{}",
        o.fabric,
        o.kind,
        o.objective,
        o.workloads.join(", "),
        format_size(o.sizes[0]),
        format_size(o.sizes[1])
    );
    // An MPI variable left unset is the library's own default.
    let shown = |v: &str| {
        if v.is_empty() {
            "(library default)".to_string()
        } else {
            v.to_string()
        }
    };
    // Each value as the profile holds it; one the gate held back says why beside it.
    let deployed = o.deployed_values();
    for d in &o.decisions {
        let value = deployed.get(&d.param).unwrap_or(&d.chosen);
        let held = d
            .withheld
            .as_ref()
            .map(|w| format!("; {w}"))
            .unwrap_or_default();
        let near = if d.near_equal.is_empty() {
            String::new()
        } else {
            format!(
                "; near-equal: {}",
                d.near_equal
                    .iter()
                    .map(|v| shown(v))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        println!(
            "{} = {} (was {}{held}{near}): {}",
            d.param,
            shown(value),
            shown(&d.default),
            d.why
        );
    }
    for line in o.interactions.iter().chain(&o.skipped).chain(&o.notes) {
        println!("# {line}");
    }
    for t in &o.gate {
        println!(
            "# gate: {}: {}",
            t.settings.join(", "),
            if t.passed {
                "passes".to_string()
            } else {
                format!("held back, {}", t.why)
            }
        );
    }
    // The comparisons of what is deployed: gains of medians, the gate's own statistic.
    for v in o
        .gate
        .iter()
        .filter(|t| t.passed)
        .flat_map(|t| &t.verifications)
        .filter_map(|i| o.verification.get(*i))
    {
        let worst = v.per_size.iter().min_by(|a, b| a.gain.total_cmp(&b.gain));
        let best = v.per_size.iter().max_by(|a, b| a.gain.total_cmp(&b.gain));
        if let (Some(lo), Some(hi)) = (worst, best) {
            println!(
                "# verified on {} (medians, {}-{}): gain over the defaults {} at {} to {} at {}",
                v.workload,
                format_size(v.per_size[0].size),
                format_size(v.per_size[v.per_size.len() - 1].size),
                signed_pct(lo.gain),
                format_size(lo.size),
                signed_pct(hi.gain),
                format_size(hi.size),
            );
        }
    }
    if o.gate.is_empty() {
        println!("# every value deployed is a default: nothing to verify");
    }
    println!(
        "# spent {:.1} s wall of a {} budget{}, {} runs, {:.3} s measured{}",
        o.spent.wall_s,
        humantime::format_duration(Duration::from_secs_f64(o.budget_s.round())),
        if o.budget_exhausted {
            " (ran out: decided with what was measured)"
        } else {
            ""
        },
        o.spent.runs,
        o.spent.measured_s,
        if o.virtual_time {
            " (virtual time)"
        } else {
            ""
        }
    );
    println!("# results: {}", path.display());
    println!(
        "# deploy: fabbench run osu_bw --fabric {} --profile {}",
        o.fabric,
        path.join("profile.toml").display()
    );
}

/// A fraction as a signed percentage; one that rounds to nothing reads "+0.0 %", not "-0.0 %".
fn signed_pct(fraction: f64) -> String {
    let p = (fraction * 1000.0).round() / 10.0;
    format!("{:+.1} %", if p == 0.0 { 0.0 } else { p })
}

/// The progress bar: what is being measured and the budget left; shown only on a terminal.
struct Bar {
    bar: ProgressBar,
}

impl Bar {
    fn new(t: &Tuning) -> Bar {
        let shown = std::io::stderr().is_terminal() && std::io::stdout().is_terminal();
        let bar = if shown {
            ProgressBar::with_draw_target(
                Some(t.budget.as_secs().max(1)),
                ProgressDrawTarget::stderr(),
            )
        } else {
            ProgressBar::hidden()
        };
        if let Ok(s) =
            ProgressStyle::with_template("{spinner} autotune {prefix} [{bar:16}] {wide_msg}")
        {
            bar.set_style(s.progress_chars("=> "));
        }
        bar.set_prefix(t.label.clone());
        bar.enable_steady_tick(Duration::from_millis(200));
        Bar { bar }
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Observer for Bar {
    fn measuring(&mut self, what: &str, elapsed: Duration, budget: Duration) {
        self.bar.set_position(elapsed.as_secs());
        let left = Duration::from_secs(budget.saturating_sub(elapsed).as_secs());
        self.bar.set_message(format!(
            "{} of the budget left; {what}",
            humantime::format_duration(left)
        ));
    }

    fn decided(&mut self, line: &str) {
        self.bar.println(format!("# {line}"));
    }
}
