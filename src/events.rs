//! What the frontend tells a rank (the job spec, through the environment) and what ranks tell
//! the frontend (events, one JSON line each, through the bootstrap connection).

use bench_core::measure::{Layout, Point};
use bench_core::tunables::Settings;
use serde::{Deserialize, Serialize};
use suites::RunOptions;
use transports::transport::Counters;

/// The environment variable carrying the job spec to each rank.
pub const SPEC_ENV: &str = "FABBENCH_SPEC";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JobSpec {
    pub suites: Vec<String>,
    pub fabric: String,
    pub opts: RunOptions,
    pub settings: Settings,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum RankEvent {
    /// Rank 0 begins a suite.
    SuiteStart { suite: String, layout: Layout },
    /// Rank 0 measured one size.
    Point { suite: String, point: Point },
    /// A rank finished; what its transport did.
    Done {
        counters: Counters,
        facts: Vec<(String, String)>,
        virtual_time: bool,
    },
    /// A rank failed.
    Failed { stage: String, message: String },
}
