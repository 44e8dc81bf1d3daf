//! `fabbench list`: its arguments, and the lists it prints: fabrics (and whether each can run here),
//! suites, tunables. The tunables' selection (a fabric, or a prefix of names) and their table,
//! fitted to the terminal, are in [`tunables`].

mod tunables;

use transports::fabric::Availability;
use transports::registry;

use clap::Args;

use crate::exit::Failure;

#[derive(Debug, Args)]
#[command(
    after_help = "Examples: fabbench list tunables hyperlink (the tunables a hyperlink run \
                        honours, with hyperlink's defaults); fabbench list tunables tcp. (names \
                        starting with tcp.); fabbench list tunables rapidio --sources (where each \
                        model card value comes from). Meanings wrap to COLUMNS or the terminal's \
                        width (100 when not a terminal)."
)]
pub struct ListArgs {
    /// What to list: fabrics, suites or tunables (default: all three)
    pub what: Option<String>,

    /// With tunables: a fabric (the tunables it honours, at its defaults) or the start of
    /// tunable names (eager, tcp.)
    #[arg(value_name = "FABRIC|PREFIX")]
    pub filter: Option<String>,

    /// With tunables: also say where each default comes from (a model card's [S] stated by a
    /// source, [D] derived, [A] assumption; a fabric's own default; fabbench's)
    #[arg(long)]
    pub sources: bool,
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
    if let Some(f) = args.filter.as_deref().filter(|_| what != "tunables") {
        return Err(Failure::Usage(format!(
            "'{f}': only `fabbench list tunables` takes a filter (a fabric or the start of tunable names)"
        )));
    }
    // Selected first, so a filter that matches nothing prints nothing.
    let table = if all || what == "tunables" {
        let rows = tunables::select(args.filter.as_deref()).map_err(Failure::Usage)?;
        Some(tunables::render(&rows, tunables::width(), args.sources))
    } else {
        None
    };
    if all || what == "fabrics" {
        out.push_str("FABRICS\n");
        for f in registry::FABRICS {
            let (state, why) = match (f.availability)() {
                // What a usable fabric runs on (ofi: libfabric's version and providers).
                Availability::Usable => match (f.library)() {
                    Some(lib) if f.kind == transports::fabric::FabricKind::Native => (
                        "usable".to_string(),
                        format!(" ({})", lib.replace('\n', "; ")),
                    ),
                    _ => ("usable".to_string(), String::new()),
                },
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
    if let Some(table) = table {
        if all {
            out.push('\n');
        }
        out.push_str(&table);
    }
    print!("{out}");
    Ok(())
}
