//! What the fits refuse, checked once up front so the fitting code can assume clean input.

use crate::Tolerance;

/// Why a curve could not be fitted. Each message says what is wrong and what would be valid,
/// because these reach users who fed a hand-edited or merged result file.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CurveError {
    #[error("sizes must be strictly increasing, but size {size} follows size {previous}")]
    SizesNotIncreasing { previous: u64, size: u64 },
    #[error("time {time} us at size {size} is not usable: times must be finite and >= 0 us")]
    BadTime { size: u64, time: f64 },
    #[error("tolerance relative {relative}, absolute_us {absolute_us} is out of range: relative must be in [0, 1) and absolute_us finite and >= 0")]
    BadTolerance { relative: f64, absolute_us: f64 },
}

/// A relative tolerance of 1 or more would let a line of time 0 fit any point, and NaN compares
/// false everywhere, so both would silently turn every curve into one segment.
pub(crate) fn check_tolerance(tol: Tolerance) -> Result<(), CurveError> {
    let relative_ok = (0.0..1.0).contains(&tol.relative);
    let absolute_ok = tol.absolute_us.is_finite() && tol.absolute_us >= 0.0;
    if relative_ok && absolute_ok {
        Ok(())
    } else {
        Err(CurveError::BadTolerance {
            relative: tol.relative,
            absolute_us: tol.absolute_us,
        })
    }
}

/// Strictly increasing sizes keep every two-point line defined (no vertical lines) and make a
/// segment's `from..=to` a range of sizes; finite non-negative times keep the weights finite.
pub(crate) fn check_points(points: &[(u64, f64)]) -> Result<(), CurveError> {
    for pair in points.windows(2) {
        let (previous, size) = (pair[0].0, pair[1].0);
        if size <= previous {
            return Err(CurveError::SizesNotIncreasing { previous, size });
        }
    }
    match points.iter().find(|(_, t)| !t.is_finite() || *t < 0.0) {
        Some(&(size, time)) => Err(CurveError::BadTime { size, time }),
        None => Ok(()),
    }
}
