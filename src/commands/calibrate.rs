//! `fabbench calibrate`: its arguments, the request checked, the calibrate crate run, and what
//! it wrote printed; its error goes to `main` for the exit status.

use std::path::PathBuf;

use std::io::IsTerminal;
use std::time::Duration;

use calibrate::{CalibrateError, Observer, Outcome, Request, Tally};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::cli::groups::{OutArgs, TunableArgs};
use crate::signals;

#[derive(Debug, Args)]
#[command(
    after_help = "Writes card.toml (run it with `fabbench run SUITE --fabric FABRIC --model \
                  card.toml`), calibration.json and report.md into a new directory under --out. \
                  Example: fabbench calibrate --fabric rapidio --from paper.csv",
    mut_arg("set", |a| a.help("Tunable settings held fixed during the fit (repeatable)")),
    mut_arg("out", |a| a.help("Where the calibration directory is made"))
)]
pub struct CalibrateArgs {
    /// Emulated fabric whose card is fitted: hyperlink, rapidio or bxi
    #[arg(short = 'f', long, value_name = "FABRIC")]
    pub fabric: String,

    /// The table to match: OSU text output (one or several tests), or a CSV with columns
    /// suite,size,value (repeatable)
    #[arg(long = "from", value_name = "TABLE", required = true)]
    pub from: Vec<PathBuf>,

    /// Card parameters to fit, comma separated (default: every parameter the card marks as an
    /// assumption [A] that the suites in the table can see)
    #[arg(long, value_delimiter = ',', value_name = "NAME[,NAME]")]
    pub params: Option<Vec<String>>,

    #[command(flatten)]
    pub tunables: TunableArgs,

    /// A hint for the search: a fitted parameter's estimate, e.g. from a reading of the table,
    /// which the global search starts from beside the card's values (repeatable)
    #[arg(long = "start", value_name = "NAME=VALUE")]
    pub starts: Vec<String>,

    /// Trials run at once (default: one per core; each trial is one emulated run)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,

    #[command(flatten)]
    pub out: OutArgs,

    /// Print nothing but errors
    #[arg(short = 'q', long)]
    pub quiet: bool,
}

pub fn run(args: CalibrateArgs) -> Result<(), CalibrateError> {
    let mut req = Request::new(&args.fabric, args.from.clone());
    req.params = args.params.clone();
    req.sets = args.tunables.set.clone();
    req.starts = args.starts.clone();
    req.jobs = args.jobs.map_or(0, usize::from);
    signals::install();
    let progress = Progress::new(args.quiet);
    let outcome = calibrate::calibrate(&req, &signals::INTERRUPTED, &progress);
    progress.bar.finish_and_clear();
    let outcome = outcome?;
    let dir = calibrate::output::write(&outcome, &args.out.out)?;
    if !args.quiet {
        summary(&outcome, &dir);
    }
    Ok(())
}

fn summary(o: &Outcome, dir: &std::path::Path) {
    println!(
        "# {} calibrated to {} ({} trials, {:.0} s)",
        o.fabric,
        o.tables.join(", "),
        o.trials,
        o.seconds
    );
    println!(
        "# {:<12} {:>10} {:>14} {:>14} {:>8}",
        "suite", "size", "measured", "calibrated", "error"
    );
    for p in &o.points {
        println!(
            "  {:<12} {:>10} {:>14.2} {:>14} {:>8}",
            p.suite,
            p.size,
            p.measured,
            p.emulated
                .map(|v| format!("{v:.2}"))
                .unwrap_or_else(|| "-".into()),
            p.error
                .map(|e| format!("{:+.1}%", e * 100.0))
                .unwrap_or_else(|| "left out".into())
        );
    }
    for p in &o.params {
        let from = p
            .free
            .search_from
            .map(|x| format!(", search from {x}"))
            .unwrap_or_default();
        println!(
            "# {} = {:.6} (card {}{from}): {}",
            p.free.name, p.value, p.free.start, p.determination.verdict
        );
    }
    if let Some(w) = o.worst() {
        println!(
            "# worst error {:+.1} % ({} at {} B)",
            w.error.unwrap_or(0.0) * 100.0,
            w.suite,
            w.size
        );
    }
    println!("# written to {}", dir.display());
}

/// Stages as lines on stderr, the estimate once the first trial is timed, and on a terminal a
/// bar of the trial budget with the best cost so far and the time left at most.
struct Progress {
    quiet: bool,
    bar: ProgressBar,
}

impl Progress {
    fn new(quiet: bool) -> Progress {
        let bar = if !quiet && std::io::stderr().is_terminal() {
            ProgressBar::with_draw_target(Some(1), ProgressDrawTarget::stderr())
        } else {
            ProgressBar::hidden()
        };
        if let Ok(s) = ProgressStyle::with_template("{spinner} [{bar:12}] {wide_msg}") {
            bar.set_style(s.progress_chars("=> "));
        }
        bar.enable_steady_tick(Duration::from_millis(200));
        Progress { quiet, bar }
    }
}

/// "4 min 10 s": whole seconds, as a person reads a time left.
fn seconds(d: Duration) -> String {
    humantime::format_duration(Duration::from_secs(d.as_secs())).to_string()
}

impl Observer for Progress {
    fn stage(&self, what: &str) {
        if !self.quiet {
            self.bar.suspend(|| eprintln!("calibrate: {what}"));
        }
    }

    fn trial(&self, t: &Tally) {
        self.bar.set_length(t.budget.max(t.done) as u64);
        self.bar.set_position(t.done as u64);
        let best = if t.best.is_finite() {
            format!("best cost {:.4}", t.best)
        } else {
            "no cost yet".into()
        };
        let left = t.left().map(seconds).unwrap_or_default();
        self.bar.set_message(format!(
            "trial {}/{} (budget), {best}, at most {left} left",
            t.done, t.budget
        ));
    }

    fn estimate(&self, t: &Tally, spent: Duration) {
        let (Some(per), Some(left)) = (t.per_trial(), t.left()) else {
            return;
        };
        if self.quiet || left < Duration::from_secs(10) {
            return;
        }
        self.bar.suspend(|| {
            eprintln!(
                "estimate: at most {} (a budget of {} trials at {:.2} s, the mean of trials 2 to {}); most calibrations end well before their budget",
                seconds(left + spent),
                t.budget + 1,
                per.as_secs_f64(),
                t.done + 1
            )
        });
    }
}
