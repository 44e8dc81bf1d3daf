//! compare decides whether a candidate run regressed against a baseline: every suite, fabric,
//! point and metric the two share gets a verdict (improved, regressed, unchanged or invalid)
//! from the raw samples, exact on emulated fabrics and statistical elsewhere; and a run can be
//! checked against reference values with tolerances ([`references`]). The crate never sees the
//! command line.

pub mod format;
pub mod references;

pub use format::Format;
