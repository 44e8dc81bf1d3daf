//! `fabbench calibrate`: its arguments, the request checked, the calibrate crate run, and what
//! it wrote printed; its error goes to `main` for the exit status.

use std::path::PathBuf;

use calibrate::{CalibrateError, Outcome, Request};
use clap::Args;

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

    /// Start the search for a fitted parameter at this value instead of the card's, e.g. from
    /// a reading of the table (repeatable)
    #[arg(long = "start", value_name = "NAME=VALUE")]
    pub starts: Vec<String>,

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
    signals::install();
    let quiet = args.quiet;
    let progress = |stage: &str| {
        if !quiet {
            eprintln!("calibrate: {stage}");
        }
    };
    let outcome = calibrate::calibrate(&req, &signals::INTERRUPTED, &progress)?;
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
