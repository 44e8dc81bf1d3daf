//! How a point's samples cross from rank 0 to the frontend inside its `point` event: packed
//! binary in a base64 string rather than a JSON array of numbers.
//!
//! A small-message latency point carries 10,000 samples (`-i` allows ten million): as decimal
//! JSON each is formatted on the rank, then parsed and buffered (serde's internally tagged
//! enum holds every number of the event in memory once more before the point is built) on the
//! frontend. Packed, the event's text is a few bytes a sample that decode with one base64 pass:
//! on a 10,000-sample event the frontend spends about 33 instructions a sample instead of 333
//! (callgrind), rank 0 about 64 instead of 71.
//!
//! The packed form of a list of `u64` is one width byte `w` (1 to 8), then every value as a
//! `w`-byte unsigned integer in network order (big-endian), in list order. `w` is the fewest
//! bytes that hold the largest value (1 for a list of zeros or an empty list); a reader takes
//! any width from 1 to 8. The bytes travel as standard base64 with padding (RFC 4648 §4), so
//! the event stays one line of JSON through every bootstrap (TCP lines, directory files, an
//! in-process channel). Values are exact: what samples.csv holds is what the rank measured.

use std::borrow::Cow;
use std::fmt;
use std::ops::Deref;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use bench_core::measure::{Metric, Point, PointKey, Split};
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// Why a packed list does not decode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PackedError {
    #[error("not base64: {0}")]
    Base64(#[from] base64::DecodeError),
    #[error("no width byte (the packed list is empty)")]
    NoWidth,
    #[error("width byte {0} is not a width of 1 to 8 bytes")]
    BadWidth(u8),
    #[error("{len} bytes after the width byte are not whole {width}-byte values (truncated?)")]
    Ragged { width: usize, len: usize },
}

/// The fewest bytes that hold `max` (at least one).
fn width_of(max: u64) -> usize {
    let bits = 64 - max.leading_zeros() as usize;
    bits.div_ceil(8).max(1)
}

/// `values` packed: the width byte, then each value in that many big-endian bytes.
pub fn pack(values: &[u64]) -> Vec<u8> {
    let width = width_of(values.iter().copied().max().unwrap_or(0));
    let mut out = vec![0u8; 1 + values.len() * width];
    out[0] = width as u8;
    // One loop per width, so each value's bytes are a fixed-size copy, not a call to memcpy.
    fn put<const W: usize>(values: &[u64], out: &mut [u8]) {
        for (to, v) in out.chunks_exact_mut(W).zip(values) {
            to.copy_from_slice(&v.to_be_bytes()[8 - W..]);
        }
    }
    let body = &mut out[1..];
    match width {
        1 => put::<1>(values, body),
        2 => put::<2>(values, body),
        3 => put::<3>(values, body),
        4 => put::<4>(values, body),
        5 => put::<5>(values, body),
        6 => put::<6>(values, body),
        7 => put::<7>(values, body),
        _ => put::<8>(values, body),
    }
    out
}

/// The values a packed list holds.
pub fn unpack(bytes: &[u8]) -> Result<Vec<u64>, PackedError> {
    let (&w, body) = bytes.split_first().ok_or(PackedError::NoWidth)?;
    let width = usize::from(w);
    if !(1..=8).contains(&width) {
        return Err(PackedError::BadWidth(w));
    }
    if body.len() % width != 0 {
        return Err(PackedError::Ragged {
            width,
            len: body.len(),
        });
    }
    fn get<const W: usize>(body: &[u8]) -> Vec<u64> {
        body.chunks_exact(W)
            .map(|c| {
                let mut be = [0u8; 8];
                be[8 - W..].copy_from_slice(c);
                u64::from_be_bytes(be)
            })
            .collect()
    }
    Ok(match width {
        1 => get::<1>(body),
        2 => get::<2>(body),
        3 => get::<3>(body),
        4 => get::<4>(body),
        5 => get::<5>(body),
        6 => get::<6>(body),
        7 => get::<7>(body),
        _ => get::<8>(body),
    })
}

/// `values` packed and in base64, as the event carries them.
pub fn encode(values: &[u64]) -> String {
    STANDARD.encode(pack(values))
}

/// The values of a packed list in base64.
pub fn decode(text: &str) -> Result<Vec<u64>, PackedError> {
    unpack(&STANDARD.decode(text)?)
}

fn no_values<V: Deref<Target = [u64]>>(v: &V) -> bool {
    v.is_empty()
}

/// A list of `u64` as [`encode`] writes it.
fn serialize_packed<S: Serializer>(values: &[u64], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&encode(values))
}

/// A list of `u64` through [`decode`]; an error names `field` and what is wrong with it.
fn deserialize_packed<'de, D: Deserializer<'de>>(
    d: D,
    field: &'static str,
) -> Result<Cow<'static, [u64]>, D::Error> {
    struct Packed(&'static str);
    impl Visitor<'_> for Packed {
        type Value = Vec<u64>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            write!(f, "{}: packed samples in base64", self.0)
        }
        fn visit_str<E: de::Error>(self, text: &str) -> Result<Vec<u64>, E> {
            decode(text).map_err(|e| E::custom(format_args!("{}: {e}", self.0)))
        }
    }
    d.deserialize_str(Packed(field)).map(Cow::Owned)
}

macro_rules! packed_field {
    ($name:ident) => {
        mod $name {
            use super::*;
            pub fn serialize<V: Deref<Target = [u64]>, S: Serializer>(
                v: &V,
                s: S,
            ) -> Result<S::Ok, S::Error> {
                serialize_packed(v, s)
            }
            pub fn deserialize<'de, 'a, D: Deserializer<'de>>(
                d: D,
            ) -> Result<Cow<'a, [u64]>, D::Error> {
                deserialize_packed(d, stringify!($name))
            }
        }
    };
}

packed_field!(samples_ns);
packed_field!(compute_ns);
packed_field!(comm_ns);

/// A [`Split`] in an event: both lists packed.
#[derive(Serialize, Deserialize)]
struct SplitOnWire<'a> {
    #[serde(with = "compute_ns")]
    compute_ns: Cow<'a, [u64]>,
    #[serde(with = "comm_ns")]
    comm_ns: Cow<'a, [u64]>,
}

/// A [`Point`] in an event: its fields as Point serialises them, the per-sample lists packed.
/// Sending borrows the point; receiving owns what it decoded.
#[derive(Serialize, Deserialize)]
struct PointOnWire<'a> {
    key: Cow<'a, PointKey>,
    metrics: Cow<'a, [Metric]>,
    #[serde(with = "samples_ns")]
    samples_ns: Cow<'a, [u64]>,
    validated: Option<bool>,
    #[serde(default, skip_serializing_if = "no_values")]
    batches: Cow<'a, [u64]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    split: Option<SplitOnWire<'a>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    warmup: Option<u64>,
}

impl<'a> From<&'a Point> for PointOnWire<'a> {
    fn from(p: &'a Point) -> Self {
        // Every field named: a field added to Point does not compile until it travels too.
        let Point {
            key,
            metrics,
            samples_ns,
            validated,
            batches,
            split,
            warmup,
        } = p;
        PointOnWire {
            key: Cow::Borrowed(key),
            metrics: Cow::Borrowed(metrics),
            samples_ns: Cow::Borrowed(samples_ns),
            validated: *validated,
            batches: Cow::Borrowed(batches),
            split: split.as_ref().map(|s| {
                let Split {
                    compute_ns,
                    comm_ns,
                } = s;
                SplitOnWire {
                    compute_ns: Cow::Borrowed(compute_ns),
                    comm_ns: Cow::Borrowed(comm_ns),
                }
            }),
            warmup: *warmup,
        }
    }
}

impl From<PointOnWire<'_>> for Point {
    fn from(w: PointOnWire<'_>) -> Self {
        let PointOnWire {
            key,
            metrics,
            samples_ns,
            validated,
            batches,
            split,
            warmup,
        } = w;
        Point {
            key: key.into_owned(),
            metrics: metrics.into_owned(),
            samples_ns: samples_ns.into_owned(),
            validated,
            batches: batches.into_owned(),
            split: split.map(|s| Split {
                compute_ns: s.compute_ns.into_owned(),
                comm_ns: s.comm_ns.into_owned(),
            }),
            warmup,
        }
    }
}

/// `#[serde(with = "samples::point")]`: a [`Point`] with its samples packed.
pub mod point {
    use super::*;

    pub fn serialize<S: Serializer>(p: &Point, s: S) -> Result<S::Ok, S::Error> {
        PointOnWire::from(p).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Point, D::Error> {
        PointOnWire::deserialize(d).map(Point::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_are_the_fewest_bytes_that_hold_the_largest_value() {
        for (max, w) in [
            (0, 1),
            (255, 1),
            (256, 2),
            (65_535, 2),
            (65_536, 3),
            (u32::MAX as u64, 4),
            (1 << 32, 5),
            (u64::MAX >> 8, 7),
            (u64::MAX, 8),
        ] {
            assert_eq!(width_of(max), w, "{max}");
            assert_eq!(pack(&[0, max])[0] as usize, w, "{max}");
        }
    }

    #[test]
    fn lists_round_trip_exactly() {
        let lists: [&[u64]; 7] = [
            &[],
            &[0],
            &[0, 0, 0],
            &[1, 255, 256, 1200],
            &[612, 1_000_000_007, 3],
            &[u64::MAX, 0, 1, u64::MAX - 1],
            &[1 << 56, (1 << 56) - 1],
        ];
        for list in lists {
            assert_eq!(unpack(&pack(list)).unwrap(), list);
            assert_eq!(decode(&encode(list)).unwrap(), list);
        }
        let many: Vec<u64> = (0..10_000u64).map(|i| 500 + i * 7919 % 100_000).collect();
        assert_eq!(decode(&encode(&many)).unwrap(), many);
    }

    /// The packed bytes are pinned: a width byte, then big-endian values.
    #[test]
    fn the_packed_form_has_its_golden_bytes() {
        assert_eq!(pack(&[]), [1]);
        assert_eq!(pack(&[0, 7]), [1, 0, 7]);
        assert_eq!(pack(&[1, 258, 65_536]), [3, 0, 0, 1, 0, 1, 2, 1, 0, 0]);
        assert_eq!(pack(&[0x0102_0304_0506_0708]), [8, 1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(encode(&[1, 258, 65_536]), "AwAAAQABAgEAAA==");
        assert_eq!(encode(&[]), "AQ==");
        // A reader takes any width, not only the fewest bytes.
        assert_eq!(unpack(&[2, 0, 7, 1, 0]).unwrap(), [7, 256]);
    }

    #[test]
    fn malformed_lists_are_errors_that_say_what_is_wrong() {
        assert_eq!(unpack(&[]), Err(PackedError::NoWidth));
        assert_eq!(unpack(&[0, 1]), Err(PackedError::BadWidth(0)));
        assert_eq!(unpack(&[9; 10]), Err(PackedError::BadWidth(9)));
        assert_eq!(
            unpack(&[3, 0, 0, 1, 0, 1]),
            Err(PackedError::Ragged { width: 3, len: 5 })
        );
        assert!(matches!(decode("AwAAAQ=!"), Err(PackedError::Base64(_))));
        assert!(matches!(decode("[1,2]"), Err(PackedError::Base64(_))));
        let e = decode("AwAAAQAB").unwrap_err().to_string();
        assert!(e.contains("5 bytes") && e.contains("3-byte"), "{e}");
    }

    fn point() -> Point {
        Point {
            key: PointKey::size(8),
            metrics: vec![Metric {
                name: "latency".into(),
                unit: "us".into(),
                better: bench_core::measure::Better::Lower,
                derive: bench_core::measure::Derivation::Time {
                    divisor: 2.0,
                    unit_ns: 1000.0,
                },
            }],
            samples_ns: vec![1200, 1180, 70_000],
            validated: None,
            batches: Vec::new(),
            split: None,
            warmup: Some(10),
        }
    }

    fn event(point: Point) -> RankEvent {
        RankEvent::Point {
            fabric: "shm".into(),
            suite: "osu_latency".into(),
            point,
        }
    }

    fn point_of(ev: RankEvent) -> Point {
        match ev {
            RankEvent::Point { point, .. } => point,
            other => panic!("{other:?}"),
        }
    }

    use crate::job::RankEvent;

    #[test]
    fn a_point_event_round_trips_every_field() {
        let plain = point();
        let full = Point {
            validated: Some(true),
            batches: vec![2, 1],
            split: Some(Split {
                compute_ns: vec![0, 1 << 40, 3],
                comm_ns: vec![1200, 1180, 66_997],
            }),
            warmup: None,
            ..point()
        };
        for p in [plain, full] {
            let line = serde_json::to_string(&event(p.clone())).unwrap();
            assert!(!line.contains('\n'), "{line}");
            let back: RankEvent = serde_json::from_str(&line).unwrap();
            assert_eq!(point_of(back), p);
        }
    }

    /// The whole line a rank sends for a point: the samples are the one packed field.
    #[test]
    fn a_point_event_has_its_golden_line() {
        let line = serde_json::to_string(&event(point())).unwrap();
        assert_eq!(
            line,
            concat!(
                r#"{"event":"point","fabric":"shm","suite":"osu_latency","point":{"key":{"size":8},"#,
                r#""metrics":[{"name":"latency","unit":"us","better":"lower","#,
                r#""derive":{"kind":"time","divisor":2.0,"unit_ns":1000.0}}],"#,
                r#""samples_ns":"AwAEsAAEnAERcA==","validated":null,"warmup":10}}"#
            )
        );
        assert_eq!(
            pack(&[1200, 1180, 70_000]),
            [3, 0, 4, 0xb0, 0, 4, 0x9c, 1, 0x11, 0x70]
        );
    }

    #[test]
    fn a_malformed_point_event_is_an_error_naming_the_field() {
        let good = serde_json::to_string(&event(Point {
            split: Some(Split {
                compute_ns: vec![1, 2, 3],
                comm_ns: vec![4, 5, 6],
            }),
            ..point()
        }))
        .unwrap();
        let cases = [
            // Truncated: one byte short of the third sample.
            (
                good.replace("AwAEsAAEnAERcA==", "AwAEsAAEnAER"),
                &["samples_ns", "8 bytes", "3-byte"][..],
            ),
            (
                good.replace("AwAEsAAEnAERcA==", ""),
                &["samples_ns", "no width"][..],
            ),
            (
                good.replace("AwAEsAAEnAERcA==", "CQ=="),
                &["samples_ns", "width byte 9"][..],
            ),
            (
                good.replace("AwAEsAAEnAERcA==", "not base64!"),
                &["samples_ns", "base64"][..],
            ),
            // The array form of older ranks is refused, not misread.
            (
                good.replace(r#""AwAEsAAEnAERcA==""#, "[1200,1180,70000]"),
                &["samples_ns", "packed samples"][..],
            ),
            (
                good.replace(r#""comm_ns":"AQQFBg==""#, r#""comm_ns":"AQQF=""#),
                &["comm_ns", "base64"][..],
            ),
        ];
        for (line, words) in cases {
            assert_ne!(line, good, "the case changes the line");
            let err = serde_json::from_str::<RankEvent>(&line)
                .expect_err(&line)
                .to_string();
            for w in words {
                assert!(err.contains(w), "{err:?} lacks {w:?}");
            }
        }
    }
}
