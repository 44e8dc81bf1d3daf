//! compare decides whether a candidate run regressed against a baseline: every suite, fabric,
//! point and metric the two share gets a verdict (improved, regressed, unchanged or invalid)
//! from the raw samples, exact on emulated fabrics and statistical elsewhere; and a run can be
//! checked against reference values with tolerances ([`references`]). The crate never sees the
//! command line.
//!
//! The parts, in the order data flows: [`input`] finds and reads the run a directory stands
//! for, [`pairs`] matches the two runs' series, points and metrics and hands each pair to
//! [`rule`], which decides it; [`render`] prints the [`Comparison`] as a table, Markdown or
//! JSON, and [`write`] puts exports in place whole.

pub mod error;
pub mod format;
pub mod input;
pub mod limit;
pub mod model;
pub mod pairs;
pub mod placement;
pub mod references;
pub mod render;
pub mod rule;
pub mod settings;
pub mod write;

pub use error::CompareError;
pub use format::Format;
pub use limit::{Floors, Limit, LimitSource};
pub use model::{Comparison, Entry, RunInfo, Statistic, Summary};
pub use pairs::{compare, compare_with};
pub use rule::{Decision, Rule, Verdict};
pub use settings::Settings;
