//! `fabbench characterise`: the request checked, the characterise crate run, what it wrote
//! printed, and the outcome mapped to an exit status.

use characterise::{Observer, Outcome, Pattern, Request};

use crate::characterise_args::CharacteriseArgs;
use crate::{exit, signals};

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
}

pub fn run(args: CharacteriseArgs) -> i32 {
    let mut req = Request::new(&args.fabric);
    req.ranks = args.ranks;
    req.sizes = args.sizes.clone();
    req.iterations = args.iterations;
    req.refine = args.refine;
    req.sets = args.sets.clone();
    req.model = args.model.clone();
    req.runs_out = Some(args.out.clone());
    req.command_line = std::env::args().collect();
    let checked = match req.check() {
        Ok(c) => c,
        Err(e) => return exit::report(&e),
    };
    signals::install();
    let mut steps = Steps { quiet: args.quiet };
    let outcome = match characterise::characterise(&checked, &mut steps, &signals::INTERRUPTED) {
        Ok(o) => o,
        Err(e) => return exit::report(&e),
    };
    match characterise::write::write(&outcome, &args.out) {
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
        "# {} as LogGP: {} segment(s){}",
        o.fabric,
        o.fit.segments.len(),
        if o.emulated {
            " (emulated fabric, virtual time)"
        } else {
            ""
        }
    );
    println!(
        "# {:>10} {:>10} {:>9} {:>9} {:>9} {:>9} {:>10} {:>12}",
        "from (B)",
        "L (ns)",
        "o_s (ns)",
        "o_r (ns)",
        "g (ns)",
        "G (ns/B)",
        "1-way (us)",
        "limit (MB/s)"
    );
    for s in &o.fit.segments {
        let p = &s.params;
        println!(
            "  {:>10} {:>10.1} {:>9.1} {:>9.1} {:>9.1} {:>9.5} {:>10.3} {:>12}",
            s.from,
            p.latency_ns,
            p.send_ns,
            p.recv_ns,
            p.gap_ns,
            p.gap_per_byte_ns,
            p.one_way(s.from) / 1e3,
            p.asymptotic_mbs()
                .map(|b| format!("{b:.0}"))
                .unwrap_or_else(|| "-".into())
        );
    }
    for s in &o.fit.switches {
        println!(
            "# switch between {} and {} B ({})",
            s.after, s.before, s.kind
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
