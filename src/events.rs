//! What the frontend tells a rank (the job spec, through the environment) and what ranks tell
//! the frontend (events, one JSON line each, through the bootstrap connection).

use bench_core::measure::{Layout, Point};
use bench_core::tunables::Settings;
use serde::{Deserialize, Serialize};
use suites::RunOptions;
use transports::transport::Counters;

/// The environment variable carrying the job spec to each rank.
pub const SPEC_ENV: &str = "FABBENCH_SPEC";

/// One fabric of a job and the tunables in force for it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FabricJob {
    /// The registry name of the fabric to connect ("mpi").
    pub fabric: String,
    /// What the run calls it in events and results ("shm@mpi").
    pub label: String,
    pub settings: Settings,
}

/// What every rank runs: each fabric in turn, each suite on it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JobSpec {
    pub suites: Vec<String>,
    pub fabrics: Vec<FabricJob>,
    pub opts: RunOptions,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum RankEvent {
    /// Rank 0 begins a suite.
    SuiteStart {
        fabric: String,
        suite: String,
        layout: Layout,
    },
    /// Rank 0 measured one size.
    Point {
        fabric: String,
        suite: String,
        point: Point,
    },
    /// A rank finished a fabric; what its transport did.
    Done {
        fabric: String,
        counters: Counters,
        facts: Vec<(String, String)>,
        virtual_time: bool,
    },
    /// A rank failed.
    Failed { stage: String, message: String },
}
