//! The one reading of a relative amount on the command line, "5%" or "0.05", as a clap value
//! parser: autotune's `--tolerance`, history's `--min-magnitude` and export's `--tolerance`
//! all take it. A value that is not a number fails in clap, naming the option; the range an
//! option allows (export's 0 to 1, history's not negative) is that command's check, with its
//! own message, since each says what its option means.

use std::fmt;

/// A relative amount and the words it was given as (messages quote what the user wrote).
#[derive(Debug, Clone, PartialEq)]
pub struct Fraction {
    pub value: f64,
    text: String,
}

impl fmt::Display for Fraction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// `value_parser = fraction::parse`: "5%" (spaces allowed around the number) or "0.05", as
/// 0.05; anything else, NaN and infinities included, is refused.
pub fn parse(text: &str) -> Result<Fraction, String> {
    let t = text.trim();
    let (number, scale) = match t.strip_suffix('%') {
        Some(n) => (n.trim(), 0.01),
        None => (t, 1.0),
    };
    match number.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(Fraction {
            value: v * scale,
            text: text.to_string(),
        }),
        _ => Err("give a percentage such as 5% or a fraction such as 0.05".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(text: &str) -> Option<f64> {
        parse(text).ok().map(|f| f.value)
    }

    #[test]
    fn percentages_and_fractions_read_alike() {
        assert_eq!(value("5%"), Some(0.05));
        assert_eq!(value("0.05"), Some(0.05));
        assert_eq!(value(" 0 % "), Some(0.0));
        assert_eq!(value("100%"), Some(1.0));
        assert_eq!(value("150%"), Some(1.5));
        assert_eq!(value("-5%"), Some(-0.05));
        assert_eq!(parse("150%").unwrap().to_string(), "150%");
        for bad in ["five", "NaN", "inf", "%", ""] {
            assert!(parse(bad).unwrap_err().contains("5%"), "{bad}");
        }
    }
}
