//! What a comparison is decided with: the noise band, the confidence level, the bootstrap's
//! resamples and the fewest samples a statistical verdict needs; each checked against its range
//! before anything is read.

use crate::CompareError;

/// How changes are judged. [`Settings::default`] is what `fabbench compare` uses unless told
/// otherwise.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// Half the width of the band around "no change", as a fraction (0.02: ±2 %): a change
    /// counts only if its whole confidence interval lies outside it.
    pub noise: f64,
    /// Confidence of the test and of the interval, in (0, 1): significant when the p-value is
    /// below `1 - confidence`.
    pub confidence: f64,
    /// Bootstrap resamples of the median ratio.
    pub resamples: usize,
    /// The fewest samples either side may have for a statistical verdict; fewer is `invalid`.
    pub min_samples: usize,
    /// With one run a side on a measured fabric, a change counts only when its whole interval
    /// lies beyond ±this (a fraction); None: only beyond a noise floor learned from history or
    /// replicates, and without one it is `inconclusive`.
    pub bound: Option<f64>,
}

/// Fewer resamples than this cannot place the ends of a 95 % interval with any stability.
pub const MIN_RESAMPLES: usize = 100;

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            noise: 0.02,
            confidence: 0.95,
            resamples: 2000,
            min_samples: 5,
            bound: None,
        }
    }
}

impl Settings {
    /// Every field in its range, or the first that is not, said in one line.
    pub fn check(&self) -> Result<(), CompareError> {
        let bad = |name, reason| Err(CompareError::Setting { name, reason });
        if !(0.0..1.0).contains(&self.noise) {
            return bad(
                "noise",
                format!(
                    "{} is not a percentage from 0% up to (not including) 100% (such as 2%)",
                    percent(self.noise)
                ),
            );
        }
        if !(self.confidence > 0.0 && self.confidence < 1.0) {
            return bad(
                "confidence",
                format!(
                    "{} is not a level between 0 and 1, both excluded (such as 0.95)",
                    self.confidence
                ),
            );
        }
        if self.resamples < MIN_RESAMPLES {
            return bad(
                "resamples",
                format!(
                    "{} is too few: give at least {MIN_RESAMPLES} (the default is 2000)",
                    self.resamples
                ),
            );
        }
        if self.min_samples < 2 {
            return bad(
                "min_samples",
                format!(
                    "{} is too few: give 2 or more (one sample has no spread)",
                    self.min_samples
                ),
            );
        }
        if let Some(b) = self.bound {
            if !(b > 0.0 && b < MAX_BOUND) {
                return bad(
                    "bound",
                    format!(
                        "{} is not a percentage above 0% and below {} (such as 10%)",
                        percent(b),
                        percent(MAX_BOUND)
                    ),
                );
            }
        }
        Ok(())
    }
}

/// A bound this large (tenfold) is no gate at all: surely a slip of the unit.
pub const MAX_BOUND: f64 = 10.0;

/// A bound as written: "10%" (a percentage) or "0.1" (a fraction), above 0 and below 1000 %.
pub fn parse_bound(text: &str) -> Result<f64, CompareError> {
    let t = text.trim();
    let value = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|x| x / 100.0),
        None => t.parse::<f64>(),
    };
    match value {
        Ok(v) if v > 0.0 && v < MAX_BOUND => Ok(v),
        _ => Err(CompareError::Setting {
            name: "bound",
            reason: format!(
                "'{text}' is not a percentage above 0% and below 1000% (such as 10%) or a \
                 fraction (such as 0.1)"
            ),
        }),
    }
}

/// A noise band as written: "2%" (a percentage) or "0.02" (a fraction). A bare number must be
/// a fraction below 1, so "2" is refused rather than read as 200 %.
pub fn parse_noise(text: &str) -> Result<f64, CompareError> {
    let t = text.trim();
    let value = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|x| x / 100.0),
        None => t.parse::<f64>(),
    };
    match value {
        Ok(v) if (0.0..1.0).contains(&v) => Ok(v),
        _ => Err(CompareError::Setting {
            name: "noise",
            reason: format!(
                "'{text}' is not a percentage from 0% up to (not including) 100% (such as 2%) \
                 or a fraction below 1 (such as 0.02)"
            ),
        }),
    }
}

/// A fraction as a percentage, without trailing zeros: 0.02 -> "2%", 0.025 -> "2.5%".
pub fn percent(fraction: f64) -> String {
    let p = format!("{:.4}", fraction * 100.0);
    let p = p.trim_end_matches('0').trim_end_matches('.');
    format!("{p}%")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noise_as_a_percentage_or_a_fraction() {
        assert_eq!(parse_noise("2%").unwrap(), 0.02);
        assert_eq!(parse_noise(" 5 % ").unwrap(), 0.05);
        assert_eq!(parse_noise("0.02").unwrap(), 0.02);
        assert_eq!(parse_noise("0%").unwrap(), 0.0);
        for bad in ["2", "100%", "-1%", "abc", "", "nan", "1"] {
            let e = parse_noise(bad).unwrap_err().to_string();
            assert!(e.contains("2%") && e.contains(bad), "{bad}: {e}");
        }
    }

    #[test]
    fn settings_out_of_range_are_refused() {
        assert!(Settings::default().check().is_ok());
        let with = |f: fn(&mut Settings)| {
            let mut s = Settings::default();
            f(&mut s);
            s.check().unwrap_err().to_string()
        };
        assert_eq!(
            with(|s| s.confidence = 1.0),
            "1 is not a level between 0 and 1, both excluded (such as 0.95)"
        );
        assert!(with(|s| s.confidence = 0.0).contains("between 0 and 1"));
        assert!(with(|s| s.confidence = f64::NAN).contains("between 0 and 1"));
        assert!(with(|s| s.noise = 1.0).starts_with("100% is not a percentage"));
        assert!(with(|s| s.resamples = 10).starts_with("10 is too few: give at least 100"));
        assert!(with(|s| s.min_samples = 1).starts_with("1 is too few: give 2 or more"));
    }

    #[test]
    fn bounds_as_a_percentage_or_a_fraction() {
        assert_eq!(parse_bound("10%").unwrap(), 0.1);
        assert_eq!(parse_bound("0.25").unwrap(), 0.25);
        assert_eq!(parse_bound("150%").unwrap(), 1.5);
        for bad in ["0%", "-5%", "1000%", "abc", "", "nan"] {
            let e = parse_bound(bad).unwrap_err().to_string();
            assert!(e.contains("10%") && e.contains(bad), "{bad}: {e}");
        }
        let s = Settings {
            bound: Some(0.0),
            ..Settings::default()
        };
        assert!(s.check().unwrap_err().to_string().contains("above 0%"));
    }

    #[test]
    fn percentages_print_without_trailing_zeros() {
        assert_eq!(percent(0.02), "2%");
        assert_eq!(percent(0.025), "2.5%");
        assert_eq!(percent(0.0), "0%");
    }
}
