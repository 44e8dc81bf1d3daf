//! `fabbench calibrate`: the request checked, the calibrate crate run, what it wrote printed,
//! and the outcome mapped to an exit status.

use calibrate::{Outcome, Request};

use crate::calibrate_args::CalibrateArgs;
use crate::{exit, signals};

pub fn run(args: CalibrateArgs) -> i32 {
    let mut req = Request::new(&args.fabric, args.from.clone());
    req.params = args.params.clone();
    req.sets = args.sets.clone();
    req.starts = args.starts.clone();
    signals::install();
    let quiet = args.quiet;
    let progress = |stage: &str| {
        if !quiet {
            eprintln!("calibrate: {stage}");
        }
    };
    let outcome = match calibrate::calibrate(&req, &signals::INTERRUPTED, &progress) {
        Ok(o) => o,
        Err(e) => return exit::report(&e),
    };
    match calibrate::output::write(&outcome, &args.out) {
        Ok(dir) => {
            if !args.quiet {
                summary(&outcome, &dir);
            }
            exit::OK
        }
        Err(e) => exit::report(&e),
    }
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
