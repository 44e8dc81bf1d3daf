//! Why a calibration was refused or failed.

#[derive(Debug, thiserror::Error)]
pub enum CalibrateError {
    /// Bad input: nothing was run or written.
    #[error("{0}")]
    Request(String),
    /// An emulated run failed at a trial's settings in a way that is not just a bad fit.
    #[error("running {fabric}: {why}")]
    Run { fabric: String, why: String },
    #[error("interrupted")]
    Interrupted,
    #[error("cannot write {path}: {why}")]
    Write { path: String, why: String },
}
