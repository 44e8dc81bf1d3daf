//! What an autotune run found, as data: every measurement, every model fit, every decision with
//! its evidence, the verification of the winner against the defaults, and the time spent.
//! `autotune.json` is this structure; the profile, the MPI files and the Markdown report are
//! all exported from it, so they cannot disagree.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The version of `autotune.json`'s layout.
/// 2: `deployed` (what the profile holds, after the gate) beside `chosen` (what the search
/// found), each decision's `withheld`, the gate's trials, a switch's `not_applicable`, and
/// the verification's values as medians.
pub const SCHEMA_VERSION: u32 = 2;

/// A whole autotune run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub schema_version: u32,
    pub fabbench_version: String,
    /// The fabric as the run named it: "rapidio", "shm@mpi".
    pub fabric: String,
    /// "native", "emulated, virtual time" or "mpi".
    pub kind: String,
    /// Whether times are virtual (an emulated fabric: exact and repeatable).
    pub virtual_time: bool,
    /// The MPI library underneath, on an MPI fabric.
    pub library: Option<String>,
    pub command_line: Vec<String>,
    pub start_time: String,
    pub objective: String,
    /// The suites measured for the threshold and switches ("osu_latency", "osu_bw").
    pub workloads: Vec<String>,
    /// Smallest and largest message size measured.
    pub sizes: [u64; 2],
    /// Near-equal: within this fraction of the best (0.02).
    pub tolerance: f64,
    /// Settings fixed by the user (`--set`), as NAME=VALUE.
    pub fixed: Vec<String>,
    pub budget_s: f64,
    /// The budget ran out before every step was measured: the decisions use what was.
    pub budget_exhausted: bool,
    /// Steps left out and why (budget, a size range too small for a fragment search ...).
    pub skipped: Vec<String>,
    /// Each tuned parameter's value before tuning (the default in force).
    pub defaults: BTreeMap<String, String>,
    /// Each tuned parameter's value as the search chose it.
    pub chosen: BTreeMap<String, String>,
    /// What the profile holds: each chosen value that passed the gate (the whole profile
    /// verified against the defaults over the full default size range, no failure and no loss
    /// beyond the tolerance at any size, and confirmed), else the default.
    #[serde(default)]
    pub deployed: BTreeMap<String, String>,
    /// Each set of values the gate verified, in order, and its verdict.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gate: Vec<GateTrial>,
    pub decisions: Vec<Decision>,
    /// What re-checking each switch at the tuned threshold and fragment size found.
    pub interactions: Vec<String>,
    pub verification: Vec<Verification>,
    pub measurements: Vec<Measurement>,
    pub spent: Spent,
    /// Anything else a reader should know (an exhaustive sweep's comparison).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Outcome {
    /// The values a profile holds: `deployed`, or for an outcome written before the gate
    /// existed (schema 1), `chosen`.
    pub fn deployed_values(&self) -> &BTreeMap<String, String> {
        if self.deployed.is_empty() {
            &self.chosen
        } else {
            &self.deployed
        }
    }
}

/// Time and runs an autotune used.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Spent {
    pub wall_s: f64,
    /// Sum of every timed iteration measured (virtual on an emulated fabric), seconds: the
    /// measured time a search is charged, comparable with an exhaustive sweep's.
    pub measured_s: f64,
    /// Runs of a suite (one launch of the ranks each).
    pub runs: usize,
    /// Message sizes measured, summed over runs.
    pub points: usize,
}

/// One run of a workload at one set of settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// Index in [`Outcome::measurements`]; decisions refer to measurements by it.
    pub id: usize,
    /// What it was for: "threshold: eager only", "rx_thread=on", "verify: defaults".
    pub purpose: String,
    pub workload: String,
    /// The settings that differ from the base (NAME=VALUE).
    pub settings: Vec<String>,
    pub points: Vec<MeasuredPoint>,
    /// Why the run failed (the fabric's diagnosis), when it did: its points are empty.
    pub failed: Option<String>,
    pub wall_s: f64,
    pub measured_s: f64,
}

/// One message size of a measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasuredPoint {
    pub size: u64,
    /// The figure the suite reports (us for latency, MB/s for bandwidth).
    pub value: f64,
    pub unit: String,
    /// The cost autotune compares, lower is better: the median over iterations of the
    /// microseconds per message (a bandwidth turned into the time one message of this size
    /// takes).
    pub cost_us: f64,
    /// Per-iteration costs, microseconds per message: what the statistical tests use.
    pub samples_us: Vec<f64>,
    /// Whether the suite reports a rate (MB/s, higher is better) rather than a time.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rate: bool,
}

impl MeasuredPoint {
    /// The median cost in the suite's own unit: the statistic every verdict is made on, as
    /// a table shows it beside the verdict.
    pub fn median_value(&self) -> f64 {
        if self.rate {
            self.size.max(1) as f64 / self.cost_us
        } else {
            self.cost_us
        }
    }
}

/// One parameter's decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    pub param: String,
    /// "threshold", "fragment" or "switch".
    pub role: String,
    pub default: String,
    pub chosen: String,
    /// Every value within the tolerance of the best, as measured (the chosen one included).
    pub near_equal: Vec<String>,
    /// How sure the verdict is: "exact (virtual time)", or the statistical evidence on a real
    /// fabric ("p = 0.003, median ratio 0.91 [0.89, 0.93]").
    pub confidence: String,
    /// One or two sentences a user reads: why this value.
    pub why: String,
    pub evidence: Evidence,
    /// Why the chosen value is not deployed (the profile keeps the default), when it is not:
    /// "not confirmed: ...", "fails on osu_bw from 2MiB ...", "loses 43.2 % on osu_bw at 1MiB".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub withheld: Option<String>,
}

/// One verification of a set of values against the defaults, as the gate ran it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateTrial {
    /// The values that differ from the defaults (NAME=VALUE).
    pub settings: Vec<String>,
    pub passed: bool,
    /// What decided: "no failure, no loss beyond 2.0 % at any size", or the first fault.
    pub why: String,
    /// Indices into [`Outcome::verification`] of this trial's per-workload comparisons.
    pub verifications: Vec<usize>,
}

/// The measurements and fits behind a decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Evidence {
    Threshold(ThresholdEvidence),
    Switch(SwitchEvidence),
    Fragment(FragmentEvidence),
    /// Not searched: another setting in force turns the parameter's mechanism off (on ofi,
    /// the engine's parameters under provider matching), so nothing was measured and the
    /// default stays; `because` says which setting and why.
    NotApplicable {
        because: String,
    },
}

/// A line `t = latency_us + size / bandwidth_mbs` over sizes `from..=to`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fit {
    pub from: u64,
    pub to: u64,
    pub latency_us: f64,
    pub bandwidth_mbs: Option<f64>,
}

/// How a threshold was found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThresholdEvidence {
    pub workload: String,
    /// The parameter value that forced every size eager, and the one that forced rendezvous.
    pub eager_value: String,
    pub rendezvous_value: String,
    /// Measurement ids of the coarse sweeps.
    pub eager_sweep: usize,
    pub rendezvous_sweep: usize,
    pub eager_fit: Vec<Fit>,
    pub rendezvous_fit: Vec<Fit>,
    /// Where the fitted lines cross (bytes), when they do inside the bracket.
    pub model_crossover: Option<f64>,
    /// The coarse sizes between which the best threshold lies.
    pub bracket: [u64; 2],
    /// Each refinement: the size probed, the two costs, which protocol won.
    pub probes: Vec<Probe>,
    /// The size between two neighbouring candidates: how finely the threshold was resolved.
    pub step: u64,
    /// Measurement id of the confirmation at the chosen value, and whether it agreed.
    pub confirmation: Option<usize>,
    pub confirmed: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    pub size: u64,
    pub eager_us: f64,
    pub rendezvous_us: f64,
    pub eager_wins: bool,
}

/// An A/B of an on/off setting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SwitchEvidence {
    pub workload: String,
    pub values: [String; 2],
    /// Measurement ids of the two sides.
    pub measurements: [usize; 2],
    pub per_size: Vec<SizeVerdict>,
    /// Consecutive sizes with the same verdict: "1B-2KiB: off faster by 9.8 %".
    pub ranges: Vec<String>,
    /// Geometric mean over sizes of cost(second) / cost(first).
    pub mean_ratio: f64,
    /// The sizes the switch was not judged at, because its mechanism does not act there (the
    /// fabric says where it does), and why: "1-4KiB: not applicable (single copy moves
    /// rendezvous messages only, those above eager_limit=4KiB)".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_applicable: Option<String>,
}

/// The A/B at one size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SizeVerdict {
    pub size: u64,
    /// Median cost of the second value over the first.
    pub ratio: f64,
    /// 95 % bootstrap interval of that ratio (equal to it on virtual time).
    pub low: f64,
    pub high: f64,
    /// Mann-Whitney U two-sided p-value (None on virtual time, where there is no noise).
    pub p_value: Option<f64>,
    /// The value that wins here, or None for no difference beyond the noise or tolerance;
    /// "failed: ..." sides are never winners.
    pub winner: Option<String>,
}

/// A fragment-size search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FragmentEvidence {
    pub workload: String,
    /// The large sizes the candidates were compared at.
    pub sizes: Vec<u64>,
    /// Each candidate measured (in search order): value, measurement id, geometric mean cost
    /// relative to the best candidate.
    pub candidates: Vec<Candidate>,
    /// How many candidates an exhaustive search would have measured.
    pub of: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    pub value: String,
    pub measurement: usize,
    /// None: the candidate's run failed (the measurement says why).
    pub relative_cost: Option<f64>,
}

/// The tuned settings against the defaults on the full size sweep, per workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verification {
    pub workload: String,
    /// The values verified (NAME=VALUE, those that differ from the defaults).
    #[serde(default)]
    pub settings: Vec<String>,
    /// Why a side's run failed, when one did: the sizes past it have no gain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
    pub default_measurement: usize,
    pub tuned_measurement: usize,
    pub per_size: Vec<Gain>,
}

/// The expected gain at one size: `cost(default) / cost(tuned) - 1` (0.10 is 10 % faster),
/// the costs being medians over iterations: the values shown are the same medians in the
/// suite's unit, so a row never reads opposite to its gain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Gain {
    pub size: u64,
    /// Median, in the suite's unit (us, MB/s).
    pub default_value: f64,
    /// Median, in the suite's unit.
    pub tuned_value: f64,
    pub unit: String,
    pub gain: f64,
    /// The samples' 95 % bootstrap interval, widened on a real fabric to the gain of every
    /// pairing of a default run with a tuned run (equal to the gain on virtual time).
    pub low: f64,
    pub high: f64,
}
