//! `fabbench characterise`: its arguments, the request checked, the characterise crate run,
//! and what it wrote printed; its error goes to `main` for the exit status.

use std::io::IsTerminal;

use characterise::{CharacteriseError, Observer, Outcome, Pattern, Request};
use clap::Args;

use crate::cli::groups::{ModelArgs, OutArgs, TunableArgs};
use crate::signals;

#[derive(Debug, Args)]
#[command(
    after_help = "Writes card.toml (run it with `fabbench run SUITE --fabric loggp --model \
                  card.toml`), fit.json, fit.csv, report.md and plots of the fitted curves over \
                  the measured ones into a new directory under --out, beside the runs measured. \
                  Example: fabbench characterise --fabric bxi --sizes 1:4M",
    mut_arg("set", |a| a.help("Tunable settings for the fabric measured (repeatable)")),
    mut_arg("model", |a| a.help("A model card for the fabric measured (emulated fabrics)")),
    mut_arg("out", |a| a.help("Where the characterisation directory is made"))
)]
pub struct CharacteriseArgs {
    /// Fabric to characterise (see `fabbench list fabrics`)
    #[arg(short = 'f', long, default_value = "shm", value_name = "FABRIC")]
    pub fabric: String,

    /// Ranks (the patterns run between ranks 0 and 1; the others wait)
    #[arg(short = 'n', long, default_value_t = 2, value_name = "N")]
    pub ranks: usize,

    /// Message sizes, MIN:MAX (powers of two between, then sizes between the two around each
    /// protocol switch)
    #[arg(long, default_value = "1:4M", value_name = "MIN:MAX")]
    pub sizes: String,

    /// Timed iterations per size and pattern (default: OSU's, fewer on emulated fabrics)
    #[arg(short = 'i', long, value_name = "N")]
    pub iterations: Option<u64>,

    /// Sizes measured between the two around a switch, to pin it down (0: no refinement)
    #[arg(long, default_value_t = 7, value_name = "N")]
    pub refine: u64,

    /// Rounds, each measuring every size and pattern once, one after the other; the fit is of
    /// each size's median (default: 5 on a real fabric, 1 on an emulated one, which is exact)
    #[arg(long, value_name = "N")]
    pub rounds: Option<usize>,

    #[command(flatten)]
    pub tunables: TunableArgs,

    #[command(flatten)]
    pub model: ModelArgs,

    #[command(flatten)]
    pub out: OutArgs,

    /// Print nothing but errors
    #[arg(short = 'q', long)]
    pub quiet: bool,
}

/// Progress on stderr, one line per step.
struct Steps {
    quiet: bool,
}

impl Observer for Steps {
    fn step(&mut self, what: &str) {
        if !self.quiet {
            eprintln!("characterise: {what}");
        }
    }

    fn note(&mut self, line: &str) {
        if !self.quiet {
            eprintln!("{line}");
        }
    }

    fn progress(&self) -> bool {
        !self.quiet && std::io::stderr().is_terminal()
    }
}

pub fn run(args: CharacteriseArgs) -> Result<(), CharacteriseError> {
    let mut req = Request::new(&args.fabric);
    req.ranks = args.ranks;
    req.sizes = args.sizes.clone();
    req.iterations = args.iterations;
    req.refine = args.refine;
    req.rounds = args.rounds;
    req.sets = args.tunables.set.clone();
    req.model = args.model.model.clone();
    req.runs_out = Some(args.out.out.clone());
    req.command_line = std::env::args().collect();
    let checked = req.check()?;
    signals::install();
    let mut steps = Steps { quiet: args.quiet };
    let outcome = characterise::characterise(&checked, &mut steps, &signals::INTERRUPTED)?;
    let dir = characterise::write::write(&outcome, &args.out.out)?;
    if !args.quiet {
        summary(&outcome, &dir);
        // Last, so it is the line a reader sees when the run ends.
        if let Some(w) = outcome.warning() {
            eprintln!("{w}");
        }
    }
    Ok(())
}

fn summary(o: &Outcome, dir: &std::path::Path) {
    println!(
        "# {} as LogGP: {} segment(s), the medians of {} round(s){}",
        o.fabric,
        o.fit.segments.len(),
        o.fit.rounds,
        if o.emulated {
            " (emulated fabric, virtual time)"
        } else {
            ""
        }
    );
    println!(
        "# {:>10} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10} {:>12}",
        "from (B)",
        "L (ns)",
        "o_s (ns)",
        "o_r (ns)",
        "g (ns)",
        "G (ns/B)",
        "G+ (ns/B)",
        "1-way (us)",
        "limit (MB/s)"
    );
    for s in &o.fit.segments {
        let p = &s.params;
        println!(
            "  {:>10} {:>10.1} {:>9.1} {:>9.1} {:>9.1} {:>9.5} {:>9.5} {:>10.3} {:>12}",
            s.from,
            p.latency_ns,
            p.send_ns,
            p.recv_ns,
            p.gap_ns,
            p.gap_per_byte_ns,
            p.extra_gap_per_byte_ns,
            p.one_way(s.from) / 1e3,
            p.asymptotic_mbs()
                .map(|b| format!("{b:.0}"))
                .unwrap_or_else(|| "-".into())
        );
    }
    for s in &o.fit.switches {
        println!(
            "# switch between {} and {} B ({}; {:.1} % off the line before per round (median), the rounds' interquartile range {:.1} %)",
            s.after, s.before, s.kind, s.effect * 100.0, s.spread * 100.0
        );
    }
    if !o.fit.within_spread.is_empty() {
        println!(
            "# not switches (within the rounds' spread): {}",
            o.fit
                .within_spread
                .iter()
                .map(|s| format!("{}..{} B", s.after, s.before))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    for p in [Pattern::Pingpong, Pattern::Stream] {
        if let Some(r) = o.fit.worst(p, 0) {
            println!(
                "# worst {} error {:+.1} % at {} B",
                p.name(),
                r.error() * 100.0,
                r.size
            );
        }
    }
    println!("# written to {}", dir.display());
    println!(
        "# run it: fabbench run osu_latency --fabric loggp --model {}",
        dir.join("card.toml").display()
    );
}
