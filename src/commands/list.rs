//! `fabbench list`: its argument, and the lists it prints: fabrics (and whether each can run here),
//! suites, tunables.

use transports::fabric::Availability;
use transports::registry;

use clap::Args;

use crate::exit::Failure;

#[derive(Debug, Args)]
pub struct ListArgs {
    /// What to list: fabrics, suites or tunables (default: all three)
    pub what: Option<String>,
}

pub fn run(args: ListArgs) -> Result<(), Failure> {
    let what = args.what.as_deref().unwrap_or("all");
    let mut out = String::new();
    let all = what == "all";
    match what {
        "all" | "fabrics" | "suites" | "tunables" => {}
        other => {
            return Err(Failure::Usage(format!(
                "unknown list '{other}'; use fabrics, suites or tunables"
            )));
        }
    }
    if all || what == "fabrics" {
        out.push_str("FABRICS\n");
        for f in registry::FABRICS {
            let (state, why) = match (f.availability)() {
                Availability::Usable => ("usable".to_string(), String::new()),
                Availability::Unusable(w) => ("unusable".to_string(), format!(" ({w})")),
            };
            let kind = format!("{:?}", f.kind).to_lowercase();
            out.push_str(&format!(
                "  {:<12} {:<9} {:<9} {}{}\n",
                f.name, kind, state, f.summary, why
            ));
        }
    }
    if all || what == "suites" {
        if all {
            out.push('\n');
        }
        out.push_str("SUITES\n");
        for s in suites::SUITES {
            out.push_str(&format!(
                "  {:<12} {:<17} {}\n",
                s.name(),
                s.ranks().describe(),
                s.summary()
            ));
        }
    }
    if all || what == "tunables" {
        if all {
            out.push('\n');
        }
        out.push_str("TUNABLES (set with --set NAME=VALUE or a --profile file)\n");
        out.push_str(&format!(
            "  {:<22} {:<8} {:<22} {}\n",
            "NAME", "DEFAULT", "RANGE", "MEANING"
        ));
        let registry = registry::registry(&[]);
        for d in registry.defs() {
            out.push_str(&format!(
                "  {:<22} {:<8} {:<22} {}\n",
                d.name,
                d.default,
                d.kind.range(),
                d.help
            ));
        }
    }
    print!("{out}");
    Ok(())
}
