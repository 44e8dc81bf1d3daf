//! results holds fabbench's result model and every way a run is written and read back: the
//! manifest (JSON), tidy summary records and raw samples (CSV), a JSON document of both,
//! HdrHistogram interval logs and percentile distributions, OSU's text layout, and mpptest's
//! data table and gnuplot script with the breakpoints of its curve. Writers sit behind one
//! [`format::Exporter`] trait and work from a [`model::Run`] alone, a run directory is only
//! ever seen complete ([`run_dir::RunDir`]), and [`read::read_run`] turns a directory back
//! into the `Run` it was written from (older layouts through [`read::legacy`]).

pub mod atomic;
pub mod error;
pub mod format;
pub mod hdr;
pub mod model;
pub mod naming;
pub mod printable;
pub mod read;
pub mod run_dir;
pub mod scaling;
pub mod short;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use error::ResultsError;
pub use model::{Run, SCHEMA_VERSION};
pub use read::{read_manifest, read_run};
