//! Unit tests of the segment fits and the breakpoints between them, on curves made with known
//! segments.

use super::*;

const KIB: u64 = 1024;

fn close(got: f64, want: f64, rel: f64) -> bool {
    (got - want).abs() <= rel * want.abs()
}

fn curve(sizes: impl IntoIterator<Item = u64>, time: impl Fn(u64) -> f64) -> Vec<(u64, f64)> {
    sizes.into_iter().map(|s| (s, time(s))).collect()
}

/// Every point in exactly one segment, in order: what every caller relies on.
fn assert_tiles(points: &[(u64, f64)], segments: &[Segment]) {
    let mut next = 0;
    for segment in segments {
        assert_eq!(segment.from, points[next].0);
        next += segment.points;
        assert_eq!(segment.to, points[next - 1].0);
    }
    assert_eq!(next, points.len());
}

/// 0, then 4, 8, 16, ... 1 MiB: the sizes an OSU-style sweep measures.
fn powers_of_two() -> Vec<u64> {
    std::iter::once(0).chain((2..=20).map(|k| 1 << k)).collect()
}

/// An eager protocol up to 4 KiB, then a rendezvous one with 2 us more latency and more
/// bandwidth (no copy through a bounce buffer).
fn eager_rendezvous(size: u64) -> f64 {
    let s = size as f64;
    if size <= 4 * KIB {
        1.0 + s / 5000.0
    } else {
        3.0 + s / 8000.0
    }
}

fn assert_eager_rendezvous(found: &[Breakpoint]) {
    assert_eq!(found.len(), 1, "{found:#?}");
    let b = &found[0];
    assert_eq!((b.after, b.before, b.kind), (4 * KIB, 8 * KIB, Kind::Jump));
    assert!(close(b.left.latency_us, 1.0, 0.05), "{b:#?}");
    assert!(close(b.left.bandwidth_mbs.unwrap(), 5000.0, 0.05), "{b:#?}");
    assert!(close(b.right.latency_us, 3.0, 0.05), "{b:#?}");
    assert!(
        close(b.right.bandwidth_mbs.unwrap(), 8000.0, 0.05),
        "{b:#?}"
    );
}

#[test]
fn single_line_is_one_segment_with_its_latency_and_bandwidth() {
    let points = curve((0..=64 * KIB).step_by(4096), |s| 2.0 + s as f64 / 1000.0);
    let found = segments(&points, Tolerance::default()).unwrap();
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_tiles(&points, &found);
    assert!(close(found[0].latency_us, 2.0, 1e-9), "{found:#?}");
    assert!(
        close(found[0].bandwidth_mbs.unwrap(), 1000.0, 1e-9),
        "{found:#?}"
    );
    assert!(found[0].max_rel_error < 1e-9);
    assert!(breakpoints(&points, Tolerance::default())
        .unwrap()
        .is_empty());
}

#[test]
fn eager_to_rendezvous_switch_is_one_jump() {
    let points = curve(powers_of_two(), eager_rendezvous);
    let found = breakpoints(&points, Tolerance::default()).unwrap();
    assert_eager_rendezvous(&found);
    assert!(close(
        found[0].step_us,
        3.0 - 1.0 + 8192.0 / 8000.0 - 8192.0 / 5000.0,
        1e-6
    ));
}

#[test]
fn eager_to_rendezvous_switch_survives_three_percent_noise() {
    // Alternating +3 % / -3 %: the worst a deterministic 3 % can do to a least-squares line.
    let points: Vec<(u64, f64)> = powers_of_two()
        .into_iter()
        .enumerate()
        .map(|(k, s)| {
            (
                s,
                eager_rendezvous(s) * if k % 2 == 0 { 1.03 } else { 0.97 },
            )
        })
        .collect();
    let found = breakpoints(&points, Tolerance::default()).unwrap();
    assert_eager_rendezvous(&found);
}

#[test]
fn slope_change_without_jump_is_a_slope_breakpoint() {
    // 1000 MB/s up to 64 KiB, 4000 MB/s beyond, with no step where they meet.
    let knee = 64 * KIB;
    let points = curve((0..=256 * KIB).step_by(4096), |s| {
        let at_knee = 1.0 + knee as f64 / 1000.0;
        if s <= knee {
            1.0 + s as f64 / 1000.0
        } else {
            at_knee + (s - knee) as f64 / 4000.0
        }
    });
    let found = breakpoints(&points, Tolerance::default()).unwrap();
    assert_eq!(found.len(), 1, "{found:#?}");
    let b = &found[0];
    assert_eq!(b.kind, Kind::Slope, "{b:#?}");
    assert_eq!(b.before - b.after, 4096, "adjacent sizes: {b:#?}");
    // The knee lies on both lines, so either segment may hold it.
    assert!(b.after == knee || b.before == knee, "{b:#?}");
    assert!(close(b.left.bandwidth_mbs.unwrap(), 1000.0, 1e-6), "{b:#?}");
    assert!(
        close(b.right.bandwidth_mbs.unwrap(), 4000.0, 1e-6),
        "{b:#?}"
    );
}

/// mpptest's smoothing pass re-runs a point like this before its curve is analysed; here it
/// reaches the fit as measured, and the fit must not bend a whole line to it.
#[test]
fn isolated_outlier_is_its_own_segment_with_a_breakpoint_each_side() {
    let outlier = 30 * 4096;
    let points = curve((0..=256 * KIB).step_by(4096), |s| {
        let t = 2.0 + s as f64 / 1000.0;
        if s == outlier {
            10.0 * t
        } else {
            t
        }
    });
    let found = segments(&points, Tolerance::default()).unwrap();
    assert_tiles(&points, &found);
    assert_eq!(found.len(), 3, "{found:#?}");
    assert_eq!((found[1].from, found[1].to), (outlier, outlier));
    // read as protocols, it is a blip on one line, not two switches
    let a = analyse(&points, Tolerance::default()).unwrap();
    assert!(a.breakpoints.is_empty(), "{:#?}", a.breakpoints);
    assert_eq!(a.off_line, vec![outlier]);
    assert_eq!(a.segments.len(), 1);
    assert!(close(a.segments[0].bandwidth_mbs.unwrap(), 1000.0, 1e-9));
}

/// A staircase of notches every 256 bytes on one line (RapidIO's segments) is one protocol.
#[test]
fn a_saw_tooth_of_blips_is_not_a_hundred_switches() {
    // (a notch at either end has only one side to compare with, so it would stay a switch)
    let points = curve((0..8192).step_by(4), |s| {
        let t = 50.0 + s as f64 / 125.0;
        if s % 256 == 0 && s > 0 {
            t * 0.8
        } else {
            t
        }
    });
    let a = analyse(&points, Tolerance::default()).unwrap();
    assert!(a.breakpoints.is_empty(), "{:#?}", a.breakpoints);
    assert_eq!(a.off_line.len(), 31);
    // a genuine short regime between two different lines stays a switch on either side
    let found = analyse(&hyperlink_logscale(), Tolerance::default()).unwrap();
    assert_eq!(found.breakpoints.len(), 3);
    assert!(found.off_line.is_empty());
    assert!(found.lone.is_empty());
    // one size at an end of the curve fits any line: it is set aside, not a segment
    let mut leading = vec![(0u64, 40.0)];
    leading.extend(curve((1..=16).map(|k| k * 1024), |s| {
        1.0 + s as f64 / 1000.0
    }));
    let found = analyse(&leading, Tolerance::default()).unwrap();
    assert_eq!(found.lone, [0], "{found:#?}");
    assert!(found.breakpoints.is_empty(), "{found:#?}");
}

/// A 33-point line with its middle point `off` (a fraction) above it.
fn line_with_one_point_off(base_us: f64, off: f64) -> Vec<(u64, f64)> {
    curve((0..=32).map(|k| k * 1024), |s| {
        let t = base_us + s as f64 / 1e6;
        if s == 16 * 1024 {
            t * (1.0 + off)
        } else {
            t
        }
    })
}

#[test]
fn relative_tolerance_decides_whether_a_point_stays_on_the_line() {
    let tol = Tolerance::default();
    let inside = segments(&line_with_one_point_off(10.0, 0.04), tol).unwrap();
    assert_eq!(inside.len(), 1, "{inside:#?}");
    let outside = segments(&line_with_one_point_off(10.0, 0.06), tol).unwrap();
    // Split off one way or another: an end point can tilt a shorter line towards itself.
    assert!(outside.len() > 1, "{outside:#?}");
}

#[test]
fn absolute_tolerance_covers_times_too_small_for_the_relative_one() {
    // 8 % of 0.1 us is 8 ns: over 5 %, under the 10 ns floor.
    let points = line_with_one_point_off(0.1, 0.08);
    let tol = Tolerance::default();
    assert_eq!(segments(&points, tol).unwrap().len(), 1);
    let no_floor = Tolerance {
        absolute_us: 0.0,
        ..tol
    };
    assert!(segments(&points, no_floor).unwrap().len() > 1);
}

#[test]
fn empty_curve_has_no_segments() {
    assert!(segments(&[], Tolerance::default()).unwrap().is_empty());
    assert!(breakpoints(&[], Tolerance::default()).unwrap().is_empty());
}

#[test]
fn one_point_is_flat_and_has_no_bandwidth() {
    let found = segments(&[(64, 1.5)], Tolerance::default()).unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].latency_us, 1.5);
    assert_eq!(found[0].bandwidth_mbs, None);
    assert_eq!(found[0].at(1 << 20), 1.5);
}

#[test]
fn falling_line_keeps_its_slope_without_a_bandwidth() {
    // Noise can tilt a latency-bound stretch downwards; at() must still follow the fit.
    let points = curve([0, 8, 16, 32], |s| 2.0 - s as f64 / 1000.0);
    let found = segments(&points, Tolerance::default()).unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].bandwidth_mbs, None);
    assert!(close(found[0].at(1000), 1.0, 1e-9), "{found:#?}");
}

#[test]
fn zero_times_with_zero_absolute_tolerance_still_tile() {
    // Weights of 1/max(t, absolute_us)^2 meet 1/0 here; the fit must stay finite.
    let tol = Tolerance {
        relative: 0.05,
        absolute_us: 0.0,
    };
    let points = curve((0..=40 * KIB).step_by(4096), |s| s as f64 / 1000.0);
    let found = segments(&points, tol).unwrap();
    assert_tiles(&points, &found);
    assert!(found.len() <= 2, "{found:#?}");
    assert!(found.iter().all(|s| s.latency_us.is_finite()));
}

#[test]
fn fifteen_hundred_points_find_both_switches() {
    // Eager to 64 KiB, rendezvous to 256 KiB, then a cheaper copy mode with no step; 1 % noise.
    let points: Vec<(u64, f64)> = (0..1500u64)
        .map(|k| {
            let s = k * 700;
            let x = s as f64;
            let t = if s <= 64 * KIB {
                1.0 + x / 5000.0
            } else if s <= 256 * KIB {
                3.0 + x / 8000.0
            } else {
                3.0 + 262144.0 / 8000.0 + (x - 262144.0) / 12000.0
            };
            (s, t * if k % 2 == 0 { 1.01 } else { 0.99 })
        })
        .collect();
    let found = breakpoints(&points, Tolerance::default()).unwrap();
    assert_eq!(found.len(), 2, "{found:#?}");
    assert_eq!((found[0].after, found[0].before), (65100, 65800));
    assert_eq!(found[0].kind, Kind::Jump);
    assert_eq!(found[1].kind, Kind::Slope);
    assert!(
        (200 * KIB..320 * KIB).contains(&found[1].before),
        "{found:#?}"
    );
}

#[test]
fn unsorted_sizes_are_rejected_naming_both() {
    let err = segments(&[(8, 1.0), (4, 1.0)], Tolerance::default()).unwrap_err();
    assert_eq!(
        err,
        CurveError::SizesNotIncreasing {
            previous: 8,
            size: 4
        }
    );
}

#[test]
fn duplicate_sizes_are_rejected() {
    let err = breakpoints(&[(0, 1.0), (8, 1.0), (8, 1.1)], Tolerance::default()).unwrap_err();
    assert_eq!(
        err,
        CurveError::SizesNotIncreasing {
            previous: 8,
            size: 8
        }
    );
}

#[test]
fn nan_time_is_rejected_naming_its_size() {
    let err = segments(&[(0, 1.0), (8, f64::NAN)], Tolerance::default()).unwrap_err();
    assert!(matches!(err, CurveError::BadTime { size: 8, time } if time.is_nan()));
}

#[test]
fn negative_time_is_rejected_naming_its_size() {
    let err = segments(&[(0, 1.0), (8, -0.5)], Tolerance::default()).unwrap_err();
    assert_eq!(
        err,
        CurveError::BadTime {
            size: 8,
            time: -0.5
        }
    );
    assert_eq!(
        err.to_string(),
        "time -0.5 us at size 8 is not usable: times must be finite and >= 0 us"
    );
}

#[test]
fn relative_tolerance_of_one_and_a_half_is_rejected() {
    let tol = Tolerance {
        relative: 1.5,
        ..Tolerance::default()
    };
    let err = segments(&[(0, 1.0)], tol).unwrap_err();
    assert!(matches!(err, CurveError::BadTolerance { relative, .. } if relative == 1.5));
}

#[test]
fn bad_absolute_tolerance_is_rejected() {
    for absolute_us in [-0.01, f64::INFINITY, f64::NAN] {
        let tol = Tolerance {
            absolute_us,
            ..Tolerance::default()
        };
        assert!(matches!(
            segments(&[], tol),
            Err(CurveError::BadTolerance { .. })
        ));
    }
}

#[test]
fn kind_displays_as_lowercase_words() {
    assert_eq!(Kind::Jump.to_string(), "jump");
    assert_eq!(Kind::Slope.to_string(), "slope");
}

/// The curve fabbench measured on the emulated Hyperlink with TI's mpptest line (`-logscale`,
/// eager limit 4 KiB, DMA from 16 KiB, 64 KiB fragments): only one size, 8192, is sent by
/// rendezvous without DMA.
fn hyperlink_logscale() -> Vec<(u64, f64)> {
    let mut p: Vec<(u64, f64)> = powers_of_two()
        .into_iter()
        .filter(|&s| s <= 4096)
        .map(|s| (s, 3.15 + s as f64 / 177.0))
        .collect();
    p.extend([
        (8192, 54.99),
        (16384, 52.14),
        (32768, 92.80),
        (65536, 173.97),
        (131072, 268.51),
        (262144, 455.31),
        (524288, 828.74),
        (1048576, 1575.77),
    ]);
    p
}

#[test]
fn a_boundary_point_joins_the_segment_that_predicts_it() {
    let found = breakpoints(&hyperlink_logscale(), Tolerance::default()).unwrap();
    let ranges: Vec<(u64, u64)> = found.iter().map(|b| (b.after, b.before)).collect();
    // eager to rendezvous, rendezvous to DMA (8192 alone between them), then fragmenting
    assert_eq!(ranges, vec![(4096, 8192), (8192, 16384), (65536, 131072)]);
    assert_eq!(found[0].kind, Kind::Jump);
    // 11.5 us + size/403 MB/s and 81.8 us + size/702 MB/s cross at about 66 KB, inside
    // (65536, 131072]: the time need not step there, though the lines are 68 us apart at
    // 131072
    assert_eq!(found[2].kind, Kind::Slope, "{:#?}", found[2]);
    assert!(found[2].step_us < -60.0, "{:#?}", found[2]);
    assert!(close(found[0].left.latency_us, 3.15, 1e-6));
    assert!(close(found[0].left.bandwidth_mbs.unwrap(), 177.0, 1e-6));
}

/// Two lines that cross between the last size of one and the first of the other are a slope
/// change, however far apart they are at either size; lines that stay apart over the whole
/// interval are a jump.
#[test]
fn lines_that_cross_between_the_sizes_are_a_slope_change() {
    // 1 us + size/1000 MB/s up to 8 KiB, then a2 us + size/4000 MB/s from 16 KiB.
    let crossing = |a2: f64| {
        let mut p: Vec<(u64, f64)> = (0..=8)
            .map(|k| (k * 1024, 1.0 + (k * 1024) as f64 / 1000.0))
            .collect();
        p.extend((1..=6).map(|k| {
            let s = 8192 * (1u64 << k);
            (s, a2 + s as f64 / 4000.0)
        }));
        breakpoints(&p, Tolerance::default()).unwrap()
    };
    // 1 + x/1000 = a2 + x/4000 at x = (a2 - 1) * 4000/3: 12 KB for a2 = 10.2
    let found = crossing(10.2);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!((found[0].after, found[0].before), (8192, 16384));
    assert_eq!(found[0].kind, Kind::Slope, "{found:#?}");
    assert_eq!(Kind::Slope.words(), "slope change");
    // a2 = 30: the second line is above the first over all of (8192, 16384]
    let found = crossing(30.0);
    assert_eq!(found[0].kind, Kind::Jump, "{found:#?}");
    assert_eq!(Kind::Jump.words(), "jump");
}
