//! Turns the command line into a validated plan. Every refusal is one line that says what was
//! wrong and what is valid; the caller exits with status 2 before anything runs or is written.

use std::path::PathBuf;

use bench_core::bootstrap::discover::{External, Started};
use bench_core::size::{format_size, parse_size};
use bench_core::tunables::{Registry, Settings, Source};
use suites::{RunOptions, Suite, MAX_MESSAGE_SIZE};
use transports::fabric::{self, FabricDef};

use crate::cli::RunArgs;

/// A refusal of the user's input (exit status 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String);

pub struct FabricPlan {
    /// What the run calls this fabric: "shm", "tcp@mpi".
    pub label: String,
    pub def: &'static FabricDef,
    pub settings: Settings,
}

/// Where ranks of an externally launched job meet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BootSpec {
    /// `tcp://HOST:PORT`: rank 0 serves it on HOST:PORT, the others connect.
    Tcp(String),
    /// `dir:PATH`: a directory every rank sees.
    Dir(PathBuf),
}

/// How this run's ranks start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Launch {
    /// fabbench starts them (processes for native fabrics, threads for emulated ones).
    Local,
    /// mpirun or srun started this process as one rank.
    External { ext: External, boot: BootSpec },
}

pub struct Plan {
    pub suites: Vec<&'static dyn Suite>,
    pub fabrics: Vec<FabricPlan>,
    pub ranks: usize,
    pub opts: RunOptions,
    pub out: PathBuf,
    pub launch: Launch,
    pub mpirun: String,
}

fn boot_spec(text: &str) -> Result<BootSpec, UsageError> {
    if let Some(hp) = text.strip_prefix("tcp://") {
        let ok = hp
            .rsplit_once(':')
            .is_some_and(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok());
        if ok {
            return Ok(BootSpec::Tcp(hp.to_string()));
        }
    } else if let Some(path) = text.strip_prefix("dir:") {
        if !path.is_empty() {
            return Ok(BootSpec::Dir(PathBuf::from(path)));
        }
    }
    Err(usage(format!(
        "--bootstrap {text}: use tcp://HOST:PORT (rank 0 serves it) or dir:PATH (a directory every rank sees)"
    )))
}

const MAX_WINDOW: u64 = 1024;

fn usage(msg: impl Into<String>) -> UsageError {
    UsageError(msg.into())
}

pub fn plan(args: &RunArgs, started: &Started) -> Result<Plan, UsageError> {
    let (ranks, launch) = match started {
        Started::External(ext) => {
            if let Some(n) = args.ranks.filter(|n| *n != ext.size) {
                return Err(usage(format!(
                    "-n {n} disagrees with {}, which started {} ranks; leave -n out under a launcher",
                    ext.launcher, ext.size
                )));
            }
            let boot = match &args.bootstrap {
                Some(b) => boot_spec(b)?,
                None => {
                    return Err(usage(format!(
                        "started by {} as rank {} of {}: give --bootstrap tcp://HOST:PORT (rank 0 serves it) or --bootstrap dir:PATH",
                        ext.launcher, ext.rank, ext.size
                    )))
                }
            };
            (
                ext.size,
                Launch::External {
                    ext: ext.clone(),
                    boot,
                },
            )
        }
        _ => {
            if let Some(b) = &args.bootstrap {
                return Err(usage(format!(
                    "--bootstrap {b} is for ranks started by mpirun or srun; fabbench starts its own ranks here"
                )));
            }
            (args.ranks.unwrap_or(2), Launch::Local)
        }
    };
    let suites = args
        .suites
        .iter()
        .map(|name| {
            suites::find(name).ok_or_else(|| {
                usage(format!(
                    "unknown suite '{name}'; valid suites: {}",
                    suites::names().join(", ")
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    for s in &suites {
        if !s.ranks().allows(ranks) {
            return Err(usage(format!(
                "{} needs {}, got -n {ranks}",
                s.name(),
                s.ranks().describe(),
            )));
        }
    }
    let opts = options(args)?;
    let registry = fabric::registry(&[]);
    let profile = match &args.profile {
        None => None,
        Some(p) => Some(
            std::fs::read_to_string(p)
                .map_err(|e| usage(format!("cannot read profile {}: {e}", p.display())))?,
        ),
    };
    let model = match &args.model {
        None => None,
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .map_err(|e| usage(format!("cannot read model card {}: {e}", p.display())))?;
            let (fabric, values) = transports::emulated::card::overrides(&text)
                .map_err(|e| usage(format!("{}: {e}", p.display())))?;
            Some((fabric, values))
        }
    };
    let via_mpi = match args.via.as_deref() {
        None => false,
        Some("mpi") => true,
        Some(other) => {
            return Err(usage(format!(
                "--via {other}: the only way through is mpi (--via mpi, or FABRIC@mpi)"
            )))
        }
    };
    let requested: Vec<String> = args
        .fabric
        .split(',')
        .map(|f| {
            let f = f.trim();
            if via_mpi && !f.ends_with("@mpi") && f != "mpi" {
                format!("{f}@mpi")
            } else {
                f.to_string()
            }
        })
        .collect();
    let requested: Vec<&str> = requested.iter().map(String::as_str).collect();
    let model_target = match &model {
        None => None,
        Some((Some(f), _)) => Some(f.clone()),
        Some((None, _)) => {
            let emulated: Vec<&str> = requested
                .iter()
                .copied()
                .filter(|n| fabric::find(n).is_some_and(|d| d.kind == fabric::FabricKind::Emulated))
                .collect();
            match emulated.as_slice() {
                [one] => Some(one.to_string()),
                _ => {
                    return Err(usage(format!(
                        "--model {}: say which fabric the card is for (fabric = \"rapidio\"); the run has emulated fabrics {:?}",
                        args.model.as_ref().expect("model given").display(),
                        emulated
                    )))
                }
            }
        }
    };
    if let Some(t) = &model_target {
        if !requested.contains(&t.as_str()) {
            return Err(usage(format!(
                "--model is for fabric {t}, which this run does not use (--fabric {})",
                args.fabric
            )));
        }
    }
    let mut fabrics = Vec::new();
    for label in requested {
        let (name, preset) = match label.strip_suffix("@mpi") {
            Some(base) => {
                let p = transports::mpi::preset(base).ok_or_else(|| {
                    usage(format!(
                        "no MPI preset for '{base}'; presets: {}",
                        transports::mpi::PRESETS
                            .iter()
                            .map(|p| format!("{}@mpi", p.fabric))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))
                })?;
                ("mpi", Some(p))
            }
            None => (label, None),
        };
        let def = fabric::find(name).ok_or_else(|| {
            usage(format!(
                "unknown fabric '{name}'; valid fabrics: {} (see `fabbench list fabrics`)",
                fabric::names().join(", ")
            ))
        })?;
        if fabrics.iter().any(|f: &FabricPlan| f.label == label) {
            return Err(usage(format!(
                "fabric '{label}' is listed twice in --fabric"
            )));
        }
        fabric::check_usable(def).map_err(|e| usage(e.to_string()))?;
        if let Some(p) = preset {
            transports::mpi::check_preset(p).map_err(usage)?;
        }
        if def.kind == fabric::FabricKind::Mpi
            && launch != Launch::Local
            && fabrics
                .iter()
                .any(|f: &FabricPlan| f.def.kind == fabric::FabricKind::Mpi)
        {
            return Err(usage(
                "under an external launcher a run can use one MPI fabric (MPI starts once per process)",
            ));
        }
        if def.kind == fabric::FabricKind::Emulated && launch != Launch::Local {
            return Err(usage(format!(
                "fabric {name} is emulated: its ranks run as threads of one fabbench process; run it without mpirun or srun"
            )));
        }
        let card = match (&model, &model_target) {
            (Some((_, values)), Some(t)) if t == label => Some(values.as_slice()),
            _ => None,
        };
        let mut settings = settings_for(&registry, def, profile.as_deref(), card, args)?;
        if let Some(p) = preset {
            for (k, v) in p.settings {
                settings
                    .set(&registry, k, v, Source::Fabric)
                    .map_err(|e| usage(e.to_string()))?;
            }
        }
        fabrics.push(FabricPlan {
            label: label.to_string(),
            def,
            settings,
        });
    }
    Ok(Plan {
        suites,
        fabrics,
        ranks,
        opts,
        out: args.out.clone(),
        launch,
        mpirun: args.mpirun.clone(),
    })
}

/// Registry defaults, then the fabric's defaults, then the profile, then the model card, then
/// --set.
fn settings_for(
    registry: &Registry,
    def: &FabricDef,
    profile: Option<&str>,
    card: Option<&[(String, String)]>,
    args: &RunArgs,
) -> Result<Settings, UsageError> {
    let mut s = registry.defaults();
    for (k, v) in def.defaults {
        s.set(registry, k, v, Source::Fabric)
            .map_err(|e| usage(e.to_string()))?;
    }
    if let Some(text) = profile {
        s.apply_profile(registry, text).map_err(|e| {
            usage(format!(
                "profile {}: {e}",
                args.profile.as_ref().expect("profile given").display()
            ))
        })?;
    }
    if let Some(values) = card {
        let prefix = format!("{}.", def.name);
        for (k, v) in values {
            let name = if k.starts_with(&prefix) {
                k.clone()
            } else {
                format!("{prefix}{k}")
            };
            s.set(registry, &name, v, Source::Model)
                .map_err(|e| usage(format!("--model: {e}")))?;
        }
    }
    for a in &args.set {
        s.set_assignment(registry, a, Source::Cli)
            .map_err(|e| usage(format!("--set: {e}")))?;
    }
    for (engine, own) in def.replaces {
        if s.source(engine) >= Source::Profile {
            return Err(usage(format!(
                "on {}, {engine} is set through {own}; use --set {own}=VALUE",
                def.name
            )));
        }
    }
    Ok(s)
}

fn options(args: &RunArgs) -> Result<RunOptions, UsageError> {
    let (min_size, max_size) = match &args.message_size {
        None => (None, None),
        Some(m) => message_sizes(m)?,
    };
    if args.iterations == Some(0) {
        return Err(usage("-i 0: iterations must be at least 1"));
    }
    if let Some(w) = args.window.filter(|w| !(1..=MAX_WINDOW).contains(w)) {
        return Err(usage(format!(
            "-W {w}: the window must be 1 to {MAX_WINDOW}"
        )));
    }
    Ok(RunOptions {
        min_size,
        max_size,
        iterations: args.iterations,
        warmup: args.warmup,
        window: args.window,
        validate: args.validation,
        tail: args.tail_lat,
    })
}

/// OSU's `-m [MIN:]MAX` (and `MIN:`), with sizes such as 4K accepted.
pub fn message_sizes(text: &str) -> Result<(Option<u64>, Option<u64>), UsageError> {
    let limit = format_size(MAX_MESSAGE_SIZE);
    let valid = format!("use -m [MIN:]MAX or -m MIN: with MIN <= MAX <= {limit}");
    let one = |part: &str| -> Result<u64, UsageError> {
        let v = parse_size(part).map_err(|e| usage(format!("-m {text}: {e}")))?;
        if v > MAX_MESSAGE_SIZE {
            return Err(usage(format!(
                "-m {text}: {} exceeds the largest message size, {limit}; {valid}",
                format_size(v)
            )));
        }
        Ok(v)
    };
    let (min, max) = match text.split_once(':') {
        None => (None, Some(one(text)?)),
        Some((a, "")) => (Some(one(a)?), None),
        Some(("", b)) => (None, Some(one(b)?)),
        Some((a, b)) => (Some(one(a)?), Some(one(b)?)),
    };
    if let (Some(a), Some(b)) = (min, max) {
        if a > b {
            return Err(usage(format!(
                "-m {text}: MIN ({a}) is larger than MAX ({b}); {valid}"
            )));
        }
    }
    Ok((min, max))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bootstrap_addresses() {
        assert_eq!(
            boot_spec("tcp://node1:7000"),
            Ok(BootSpec::Tcp("node1:7000".into()))
        );
        assert_eq!(
            boot_spec("dir:/shared/x"),
            Ok(BootSpec::Dir("/shared/x".into()))
        );
        for bad in [
            "tcp://node1",
            "tcp://:7",
            "tcp://h:99999",
            "dir:",
            "udp://h:1",
            "h:1",
        ] {
            assert!(
                boot_spec(bad).unwrap_err().0.contains("tcp://HOST:PORT"),
                "{bad}"
            );
        }
    }

    #[test]
    fn message_size_forms() {
        assert_eq!(message_sizes("128"), Ok((None, Some(128))));
        assert_eq!(message_sizes("2:128"), Ok((Some(2), Some(128))));
        assert_eq!(message_sizes("2:"), Ok((Some(2), None)));
        assert_eq!(message_sizes("4K:1M"), Ok((Some(4096), Some(1 << 20))));
    }

    #[test]
    fn message_size_errors_say_what_is_valid() {
        let e = message_sizes("8:4").unwrap_err().0;
        assert!(
            e.contains("MIN (8) is larger than MAX (4)") && e.contains("[MIN:]MAX"),
            "{e}"
        );
        let e = message_sizes("1:abc").unwrap_err().0;
        assert!(e.contains("'abc' is not a size"), "{e}");
        let e = message_sizes("2G").unwrap_err().0;
        assert!(e.contains("exceeds the largest message size, 1GiB"), "{e}");
        assert!(message_sizes(":").is_err());
    }
}
