//! The command line: subcommands and options, parsed by clap. Everything here is parsing;
//! validation against the registries happens in `plan`, so every error is one line.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "fabbench",
    version,
    about = "Benchmark and characterise HPC interconnects",
    long_about = "fabbench runs the standard point-to-point benchmarks (OSU latency, bw, bibw) over \
                  each fabric backend: shared memory, TCP, emulated fabrics (Hyperlink, RapidIO, \
                  BXI/Portals 4) and MPI. It prints OSU's text layout and writes every raw sample, \
                  HdrHistograms, a CSV summary and a manifest to a results directory."
)]
pub struct Cli {
    /// More log output (-v info, -vv debug); RUST_LOG works too
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one or more suites on one or more fabrics
    Run(Box<RunArgs>),
    /// List fabrics (and whether each can run here), suites and tunables
    List(ListArgs),
    /// Internal: run as one rank of a job started by fabbench's launcher
    #[command(name = "__rank", hide = true)]
    Rank,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// What to list: fabrics, suites or tunables (default: all three)
    pub what: Option<String>,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Suites to run, e.g. osu_latency osu_bw (see `fabbench list suites`)
    #[arg(required = true, value_name = "SUITE")]
    pub suites: Vec<String>,

    /// Fabric(s) to run on, comma separated; FABRIC@mpi runs a fabric through the MPI library
    /// (see `fabbench list fabrics`)
    #[arg(
        short = 'f',
        long,
        default_value = "shm",
        value_name = "FABRIC[,FABRIC]"
    )]
    pub fabric: String,

    /// Run every listed fabric through the MPI library (same as writing FABRIC@mpi)
    #[arg(long, value_name = "mpi")]
    pub via: Option<String>,

    /// The mpirun that starts MPI ranks
    #[arg(long, default_value = "mpirun", value_name = "PATH")]
    pub mpirun: String,

    /// Number of ranks (default 2; under mpirun or srun, the launcher's count)
    #[arg(short = 'n', long = "ranks", value_name = "N")]
    pub ranks: Option<usize>,

    /// How ranks started by mpirun or srun meet: tcp://HOST:PORT (rank 0 serves it) or
    /// dir:PATH (a directory every rank can see)
    #[arg(long, value_name = "tcp://HOST:PORT|dir:PATH")]
    pub bootstrap: Option<String>,

    /// Set a tunable, e.g. --set eager_limit=8K (repeatable; see `fabbench list tunables`)
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,

    /// A TOML profile of tunables (as `fabbench autotune` writes); --set wins over it
    #[arg(long, value_name = "FILE")]
    pub profile: Option<PathBuf>,

    /// A model card (TOML) overriding an emulated fabric's parameters; --set wins over it
    #[arg(long, value_name = "FILE")]
    pub model: Option<PathBuf>,

    /// Message sizes: [MIN:]MAX or MIN: (bytes; 4K, 1M accepted), as OSU's -m
    #[arg(short = 'm', long = "message-size", value_name = "[MIN:]MAX")]
    pub message_size: Option<String>,

    /// Timed iterations per size (default: OSU 7.4's rule for small and large messages)
    #[arg(short = 'i', long = "iterations", value_name = "N")]
    pub iterations: Option<u64>,

    /// Warm-up iterations per size (default: OSU 7.4's rule)
    #[arg(short = 'x', long = "warmup", value_name = "N")]
    pub warmup: Option<u64>,

    /// Window size for bw and bibw
    #[arg(short = 'W', long = "window-size", value_name = "N")]
    pub window: Option<u64>,

    /// Check every received byte against a per-iteration pattern
    #[arg(short = 'c', long = "validation")]
    pub validation: bool,

    /// Print tail latency percentile columns (P50, P90, P99), as OSU's -z
    #[arg(short = 'z', long = "tail-lat")]
    pub tail_lat: bool,

    /// Directory the run's results directory is created in
    #[arg(long, default_value = "fabbench-results", value_name = "DIR")]
    pub out: PathBuf,
}
