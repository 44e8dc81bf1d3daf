//! Byte sizes as users type them (`4096`, `4K`, `4KiB`, `1M`) and as fabbench prints them.
//!
//! Binary multiples throughout: HPC message sizes are powers of two, and OSU prints them as plain
//! byte counts, so `4K` means 4096 everywhere in fabbench.

use std::fmt;

/// Why a size string was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    #[error("'{0}' is not a size: use a byte count such as 4096, 64K, 4KiB or 1M")]
    Syntax(String),
    #[error("'{0}' is too large to represent")]
    Overflow(String),
}

/// Parses `4096`, `64k`, `64K`, `64KB`, `64KiB`, `1m`, `1G` into bytes (binary multiples).
pub fn parse_size(text: &str) -> Result<u64, SizeError> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, suffix) = t.split_at(split);
    if digits.is_empty() {
        return Err(SizeError::Syntax(text.to_string()));
    }
    let n: u64 = digits
        .parse()
        .map_err(|_| SizeError::Overflow(text.to_string()))?;
    let shift = match suffix.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        _ => return Err(SizeError::Syntax(text.to_string())),
    };
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| SizeError::Overflow(text.to_string()))
}

/// Formats a byte count compactly and exactly: 4096 -> "4KiB", 1000 -> "1000", 3145728 -> "3MiB".
pub fn format_size(bytes: u64) -> String {
    for (shift, unit) in [(30u32, "GiB"), (20, "MiB"), (10, "KiB")] {
        let m = 1u64 << shift;
        if bytes >= m && bytes.is_multiple_of(m) {
            return format!("{}{}", bytes / m, unit);
        }
    }
    bytes.to_string()
}

/// A byte count that prints in the compact form of [`format_size`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Bytes(pub u64);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_size(self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_plain_and_suffixed_sizes() {
        assert_eq!(parse_size("0"), Ok(0));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("4KiB"), Ok(4096));
        assert_eq!(parse_size("64KB"), Ok(65536));
        assert_eq!(parse_size("1M"), Ok(1 << 20));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
    }

    #[test]
    fn rejects_garbage_and_overflow() {
        assert!(matches!(parse_size("abc"), Err(SizeError::Syntax(_))));
        assert!(matches!(parse_size("4X"), Err(SizeError::Syntax(_))));
        assert!(matches!(parse_size("-1"), Err(SizeError::Syntax(_))));
        assert!(matches!(parse_size(""), Err(SizeError::Syntax(_))));
        assert!(matches!(
            parse_size("99999999999999999999"),
            Err(SizeError::Overflow(_))
        ));
        assert!(matches!(
            parse_size("17179869184G"),
            Err(SizeError::Overflow(_))
        ));
    }

    #[test]
    fn formats_exact_multiples_only() {
        assert_eq!(format_size(0), "0");
        assert_eq!(format_size(1000), "1000");
        assert_eq!(format_size(4096), "4KiB");
        assert_eq!(format_size(4097), "4097");
        assert_eq!(format_size(3 << 20), "3MiB");
        assert_eq!(format_size(1 << 30), "1GiB");
    }
}
