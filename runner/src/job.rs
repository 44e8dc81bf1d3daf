//! What the frontend tells every rank (the job spec: through the environment for processes,
//! directly for threads) and what ranks tell the frontend (events, one JSON line each, through
//! the bootstrap; a point's samples packed inside it, see [`samples`]).

pub mod samples;

use bench_core::measure::{Point, PointKey};
use bench_core::tunables::Settings;
use serde::{Deserialize, Serialize};
use transports::fabric::TIMEOUT;
use transports::transport::Counters;

use crate::plan::Plan;

/// The environment variable carrying the job spec to each rank process.
pub const SPEC_ENV: &str = "FABBENCH_SPEC";

/// One suite of a job and its parameters.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SuiteJob {
    pub suite: String,
    pub params: serde_json::Value,
}

/// One fabric of a job and the tunables in force for it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FabricJob {
    /// The registry name of the fabric to connect ("mpi").
    pub fabric: String,
    /// What the run calls it in events and results ("shm@mpi").
    pub label: String,
    pub settings: Settings,
    /// What a resumed run already has on this fabric, by suite.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub done: Vec<DoneSuite>,
    /// An earlier run's compute stretches to charge instead of timing them (`run
    /// --compute-from`). Only ranks started as tasks of this process (emulated fabrics) get
    /// it, so it never travels in the environment.
    #[serde(skip)]
    pub compute_replay: Option<std::sync::Arc<ComputeReplay>>,
}

pub use crate::replay::ComputeReplay;

pub use crate::resume::DoneSuite;

/// What every rank runs: each fabric in turn, each suite on it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JobSpec {
    pub suites: Vec<SuiteJob>,
    pub fabrics: Vec<FabricJob>,
}

impl JobSpec {
    /// How long a rank waits to reach the bootstrap: the run's `timeout` (the longest of its
    /// fabrics'), as for any other wait on a peer.
    pub fn setup_timeout(&self) -> std::time::Duration {
        self.fabrics
            .iter()
            .map(|f| f.settings.get(TIMEOUT))
            .max()
            .unwrap_or(std::time::Duration::from_secs(30))
    }

    /// The spec of `plan`'s suites on `fabrics` (indexes into `plan.fabrics`).
    pub fn of(plan: &Plan, fabrics: &[usize]) -> JobSpec {
        JobSpec {
            suites: plan
                .suites
                .iter()
                .map(|s| SuiteJob {
                    suite: s.name().to_string(),
                    params: s.params.clone(),
                })
                .collect(),
            fabrics: fabrics
                .iter()
                .map(|&i| {
                    let f = &plan.fabrics[i];
                    FabricJob {
                        fabric: f.def.name.to_string(),
                        label: f.label.clone(),
                        settings: f.settings.clone(),
                        done: plan.done_on(&f.label),
                        compute_replay: f.compute_replay.clone(),
                    }
                })
                .collect(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum RankEvent {
    /// Rank 0 begins a suite.
    SuiteStart { fabric: String, suite: String },
    /// Rank 0 is about to measure a point.
    PointStart {
        fabric: String,
        suite: String,
        key: PointKey,
    },
    /// Rank 0 measured a point. Its samples travel packed ([`samples`]), not as JSON numbers.
    Point {
        fabric: String,
        suite: String,
        #[serde(with = "samples::point")]
        point: Point,
    },
    /// Rank 0's suite wrote a line for the user beside its table.
    Note {
        fabric: String,
        suite: String,
        text: String,
    },
    /// Rank 0 finished a suite.
    SuiteEnd { fabric: String, suite: String },
    /// A rank finished a fabric; what its transport did, and (in virtual time) the host
    /// nanoseconds of each compute stretch it charged.
    Done {
        fabric: String,
        counters: Counters,
        facts: Vec<(String, String)>,
        virtual_time: bool,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        compute: Vec<u64>,
    },
    /// A rank failed. `secondary` when it only saw another rank's failure (its peer gone,
    /// every rank waiting), so the frontend names a root cause first.
    Failed {
        stage: String,
        message: String,
        #[serde(default)]
        secondary: bool,
    },
}
