//! RFC 3339 dates as a history keys entries by them: parsed with any UTC offset (CI gives
//! commit dates such as `2026-03-01T12:00:00+01:00`), kept as UTC with whole seconds
//! (`2026-03-01T11:00:00Z`, the form run manifests use), so that entries sort by their text.

use crate::error::HistoryError;

/// A moment in UTC, whole seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Date {
    /// Seconds since 1970-01-01T00:00:00Z.
    pub unix: i64,
}

impl Date {
    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)` (`t` and a space are accepted
    /// for `T`, `z` for `Z`); a fraction of a second is dropped.
    pub fn parse(text: &str) -> Result<Date, HistoryError> {
        let bad = |why: &str| {
            HistoryError::Date(format!(
                "'{text}' is not an RFC 3339 date ({why}); give e.g. 2026-03-01T12:00:00Z or 2026-03-01T12:00:00+01:00"
            ))
        };
        let b = text.as_bytes();
        if b.len() < 20 {
            return Err(bad("too short"));
        }
        let digits = |from: usize, len: usize| -> Result<i64, HistoryError> {
            let s = text.get(from..from + len).ok_or_else(|| bad("not ASCII"))?;
            if !s.bytes().all(|c| c.is_ascii_digit()) {
                return Err(bad("a digit is missing"));
            }
            Ok(s.parse().expect("digits parse"))
        };
        let punct = [(4, b'-'), (7, b'-'), (13, b':'), (16, b':')];
        if punct.iter().any(|&(i, c)| b[i] != c) || !matches!(b[10], b'T' | b't' | b' ') {
            return Err(bad("expected YYYY-MM-DDTHH:MM:SS"));
        }
        let (year, month, day) = (digits(0, 4)?, digits(5, 2)?, digits(8, 2)?);
        let (hour, minute, second) = (digits(11, 2)?, digits(14, 2)?, digits(17, 2)?);
        if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
            return Err(bad("no such day"));
        }
        // 60 is a leap second; it is kept as the next second's start.
        if hour > 23 || minute > 59 || second > 60 {
            return Err(bad("no such time"));
        }
        let mut rest = &text[19..];
        if let Some(frac) = rest.strip_prefix('.') {
            let n = frac.bytes().take_while(u8::is_ascii_digit).count();
            if n == 0 {
                return Err(bad("a fraction of a second needs digits"));
            }
            rest = &frac[n..];
        }
        let offset = match rest {
            "Z" | "z" => 0,
            // Compared as bytes: the text may hold characters of several bytes (slicing it at
            // byte offsets could cut one), and the slices below then fall on ASCII bytes.
            _ if rest.len() == 6
                && matches!(rest.as_bytes()[0], b'+' | b'-')
                && rest.as_bytes()[3] == b':' =>
            {
                let sign = if rest.starts_with('-') { -1 } else { 1 };
                let h: i64 = rest[1..3].parse().map_err(|_| bad("bad offset"))?;
                let m: i64 = rest[4..6].parse().map_err(|_| bad("bad offset"))?;
                if h > 23 || m > 59 {
                    return Err(bad("bad offset"));
                }
                sign * (h * 3600 + m * 60)
            }
            _ => return Err(bad("the time zone must be Z or +HH:MM")),
        };
        let days = days_from_civil(year, month, day);
        Ok(Date {
            unix: days * 86_400 + hour * 3600 + minute * 60 + second - offset,
        })
    }

    /// `2026-03-01T11:00:00Z`
    pub fn rfc3339(self) -> String {
        let (y, mo, d, h, mi, s) = self.parts();
        format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
    }

    /// `20260301T110000Z`: as run ids stamp their start, for entry file names.
    pub fn compact(self) -> String {
        let (y, mo, d, h, mi, s) = self.parts();
        format!("{y:04}{mo:02}{d:02}T{h:02}{mi:02}{s:02}Z")
    }

    /// `2026-03-01`
    pub fn day(self) -> String {
        let (y, mo, d, ..) = self.parts();
        format!("{y:04}-{mo:02}-{d:02}")
    }

    fn parts(self) -> (i64, i64, i64, i64, i64, i64) {
        let days = self.unix.div_euclid(86_400);
        let secs = self.unix.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        (y, m, d, secs / 3600, secs % 3600 / 60, secs % 60)
    }
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

// Days since 1970-01-01 of a proleptic Gregorian date, and back: Howard Hinnant's algorithms
// (public domain, chrono-Compatible Low-Level Date Algorithms), over 400-year eras.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates_round_trip() {
        for text in [
            "1970-01-01T00:00:00Z",
            "2026-11-23T15:07:35Z",
            "2000-02-29T23:59:59Z",
            "2100-03-01T00:00:00Z",
        ] {
            assert_eq!(Date::parse(text).unwrap().rfc3339(), text);
        }
        assert_eq!(Date::parse("1970-01-02T00:00:01Z").unwrap().unix, 86_401);
        let d = Date::parse("2026-11-23T15:07:35Z").unwrap();
        assert_eq!(d.compact(), "20261123T150735Z");
        assert_eq!(d.day(), "2026-11-23");
    }

    #[test]
    fn offsets_and_fractions_become_utc_seconds() {
        let d = Date::parse("2026-03-01T00:30:00+01:00").unwrap();
        assert_eq!(d.rfc3339(), "2026-02-28T23:30:00Z");
        let d = Date::parse("2026-12-31T22:00:00.123456-03:30").unwrap();
        assert_eq!(d.rfc3339(), "2027-01-01T01:30:00Z");
        assert_eq!(
            Date::parse("2026-01-01 10:00:00z").unwrap().rfc3339(),
            "2026-01-01T10:00:00Z"
        );
    }

    #[test]
    fn malformed_dates_are_refused_with_an_example() {
        for bad in [
            "2026-02-29T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-01-01T24:00:00Z",
            "2026-01-01T00:00:00",
            "2026-01-01",
            "yesterday",
            "2026-01-01T00:00:00+0100",
            "2026-01-01T00:00:00.Z",
            // Six bytes of offset that are not six characters: slicing them at byte offsets
            // panicked (found while writing the history_entry fuzz target).
            "2026-03-01T12:00:00\u{e9}1:00",
            "2026-03-01T12:00:00+1\u{e9}00",
        ] {
            let e = Date::parse(bad).unwrap_err().to_string();
            assert!(
                e.contains("RFC 3339") && e.contains("2026-03-01T12:00:00Z"),
                "{bad}: {e}"
            );
        }
    }
}
