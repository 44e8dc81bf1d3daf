//! The option groups several subcommands flatten in, so each is spelled and parsed one way:
//! `--set NAME=VALUE` ([`TunableArgs`]), `--model FILE` ([`ModelArgs`]) and `-o/--out DIR`
//! ([`OutArgs`]). A command that words an option's help its own way says so with
//! `#[command(mut_arg(..))]`; the flag, its value and its default stay the group's.

use std::path::PathBuf;

use clap::Args;

/// `--set NAME=VALUE`: tunables, as `run`, `autotune`, `characterise` and `calibrate` take
/// them. Each command words the help for what the settings do there (`mut_arg("set", ..)`).
#[derive(Debug, Args)]
pub struct TunableArgs {
    /// Set a tunable, e.g. --set eager_limit=8K (repeatable; see `fabbench list tunables`)
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
}

/// `--model FILE`: a model card for an emulated fabric (`run`, `characterise`).
#[derive(Debug, Args)]
pub struct ModelArgs {
    /// A model card (TOML) overriding an emulated fabric's parameters; --set wins over it
    #[arg(long, value_name = "FILE")]
    pub model: Option<PathBuf>,
}

/// `-o/--out DIR`: where a command's new directory is made (`run`, `autotune`, `characterise`,
/// `calibrate`). Every option naming where a command writes is spelled `-o/--out` (plot's and
/// export's directories, fabbench-report's file too), so one spelling works everywhere.
#[derive(Debug, Args)]
pub struct OutArgs {
    /// Directory the command's results directory is created in
    #[arg(
        short = 'o',
        long,
        default_value = "fabbench-results",
        value_name = "DIR"
    )]
    pub out: PathBuf,
}
