//! Axis arithmetic: where a value lands on a scale, the range an axis spans, where its ticks
//! go and how they are written. Log axes are drawn as linear axes over the logarithm, so the
//! tick positions and labels are chosen here (powers of two for sizes, decades for times,
//! 90 %/99 %/99.9 % for percentiles) instead of by plotters' decimal tick rule.

use crate::figure::{Axis, Scale, Ticks};

/// The position of `v` on the drawn (linear) axis; None for a value the scale cannot show
/// (zero or less on a log axis, a percentile abscissa under 1, not a number).
pub fn place(scale: Scale, v: f64) -> Option<f64> {
    if !v.is_finite() {
        return None;
    }
    match scale {
        Scale::Linear => Some(v),
        Scale::Log10 => (v > 0.0).then(|| v.log10()),
        Scale::Log2 => (v > 0.0).then(|| v.log2()),
        Scale::Percentile => (v >= 1.0).then(|| v.log10()),
    }
}

/// The value at drawn position `t`.
pub fn value(scale: Scale, t: f64) -> f64 {
    match scale {
        Scale::Linear => t,
        Scale::Log10 | Scale::Percentile => 10f64.powf(t),
        Scale::Log2 => 2f64.powf(t),
    }
}

/// The drawn range an axis needs for positions `ts` (already placed), with a margin so no
/// point sits on the frame.
pub fn range(axis: &Axis, ts: &[f64]) -> (f64, f64) {
    let (mut lo, mut hi) = ts
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &t| {
            (lo.min(t), hi.max(t))
        });
    if !lo.is_finite() {
        // Nothing to show: any unit range keeps plotters and the ticks sane.
        return (0.0, 1.0);
    }
    if axis.scale == Scale::Linear && axis.from_zero {
        lo = lo.min(0.0);
        hi = hi.max(0.0);
    }
    if axis.scale == Scale::Percentile {
        // The distribution starts at the 0th percentile, drawn at 1.
        lo = 0.0;
    }
    let span = hi - lo;
    if span <= f64::EPSILON * hi.abs().max(1.0) {
        // One value (or all equal): show it in the middle of a range around it.
        let pad = match axis.scale {
            Scale::Linear => (hi.abs() * 0.1).max(1.0),
            _ => 0.5,
        };
        return (lo - pad, hi + pad);
    }
    let pad = span * 0.04;
    let lo = if axis.scale == Scale::Linear && axis.from_zero && lo == 0.0 {
        0.0
    } else if axis.scale == Scale::Percentile {
        lo
    } else {
        lo - pad
    };
    (lo, hi + pad)
}

/// Tick positions (drawn coordinates) inside `lo..=hi`.
pub fn ticks(scale: Scale, lo: f64, hi: f64) -> Vec<f64> {
    match scale {
        Scale::Linear => nice_steps(lo, hi, 8),
        Scale::Log2 => {
            // Whole powers of two, every 1, 2, 3 ... of them so at most about 12 show.
            let (a, b) = (lo.ceil() as i64, hi.floor() as i64);
            let every = ((b - a) / 12 + 1).max(1);
            (a..=b)
                .filter(|k| k.rem_euclid(every) == 0)
                .map(|k| k as f64)
                .collect()
        }
        Scale::Log10 => {
            let (a, b) = (lo.ceil() as i64, hi.floor() as i64);
            let decades: Vec<f64> = (a..=b).map(|k| k as f64).collect();
            if decades.len() >= 3 {
                return decades;
            }
            // Under three decades, 1-2-5 within each decade, and every digit if even that
            // leaves fewer than three labels (a range such as 30..65 us).
            let within = |mantissas: &[f64]| -> Vec<f64> {
                let mut v = Vec::new();
                for k in (lo.floor() as i64)..=(hi.ceil() as i64) {
                    for m in mantissas {
                        let t = (m * 10f64.powi(k as i32)).log10();
                        if t >= lo - 1e-9 && t <= hi + 1e-9 {
                            v.push(t);
                        }
                    }
                }
                v
            };
            let v = within(&[1.0, 2.0, 5.0]);
            if v.len() >= 3 {
                return v;
            }
            within(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0])
        }
        Scale::Percentile => {
            let (a, b) = (lo.ceil().max(0.0) as i64, hi.floor() as i64);
            (a..=b).map(|k| k as f64).collect()
        }
    }
}

/// Tick positions for `axis`: its named positions when it has names (every one, or every
/// second, third ... so at most about ten labels fit), otherwise [`ticks`] of its scale.
pub fn ticks_for(axis: &Axis, lo: f64, hi: f64) -> Vec<f64> {
    if axis.ticks != Ticks::Names {
        return ticks(axis.scale, lo, hi);
    }
    if axis.names.is_empty() || hi < 0.0 {
        return Vec::new();
    }
    let first = lo.ceil().max(0.0) as usize;
    let last = (hi.floor() as usize).min(axis.names.len() - 1);
    if first > last {
        return Vec::new();
    }
    let every = (last - first) / 10 + 1;
    // Counted back from the last position, so the newest entry is always labelled.
    let mut v: Vec<f64> = (first..=last)
        .rev()
        .step_by(every)
        .map(|k| k as f64)
        .collect();
    v.reverse();
    v
}

/// Steps of 1, 2 or 5 times a power of ten, at most about `want` of them.
fn nice_steps(lo: f64, hi: f64, want: usize) -> Vec<f64> {
    let raw = (hi - lo) / want as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| (hi - lo) / s <= want as f64)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

/// The labels of an axis's ticks at drawn positions `ts`, written in one format for the whole
/// axis and never two alike: a linear axis gives every label the decimals its step needs
/// (1.000, 1.005, 1.010, not 1, 1, 1.01), a log axis writes every tick plainly or every tick
/// as a power of ten (never 1000000 beside 1e8), and any labels still alike get more digits.
pub fn labels(axis: &Axis, ts: &[f64]) -> Vec<String> {
    let values: Vec<f64> = ts.iter().map(|&t| value(axis.scale, t)).collect();
    match axis.ticks {
        Ticks::Bytes => values.iter().map(|&v| bytes(v)).collect(),
        Ticks::Percent => ts.iter().map(|&t| percent(t)).collect(),
        Ticks::Names => ts
            .iter()
            .map(|&t| {
                let k = t.round();
                if (t - k).abs() > 1e-9 || k < 0.0 {
                    return String::new();
                }
                axis.names.get(k as usize).cloned().unwrap_or_default()
            })
            .collect(),
        Ticks::Number => numbers(axis.scale, &values),
    }
}

/// Number labels in one format, unique.
fn numbers(scale: Scale, values: &[f64]) -> Vec<String> {
    let big = values.iter().any(|v| v.abs() >= 1e6);
    let tiny = values.iter().any(|&v| v != 0.0 && v.abs() < 1e-3);
    let unique = |v: &Vec<String>| {
        let mut s = v.clone();
        s.sort();
        s.dedup();
        s.len() == v.len()
    };
    if big || tiny {
        // Powers of ten for the whole axis: 1e-4 ... 1e8, with a mantissa when ticks fall
        // between decades (2e6, 5e6).
        for digits in 0..6 {
            let v: Vec<String> = values.iter().map(|&x| exponent(x, digits)).collect();
            if unique(&v) {
                return v;
            }
        }
        return values.iter().map(|&x| exponent(x, 6)).collect();
    }
    match scale {
        Scale::Linear => {
            // The decimals the step needs, the same for every label.
            let step = values
                .windows(2)
                .map(|w| (w[1] - w[0]).abs())
                .filter(|d| *d > 0.0)
                .fold(f64::INFINITY, f64::min);
            let mut decimals = if step.is_finite() {
                (-step.log10() - 1e-9).ceil().max(0.0) as usize
            } else {
                0
            };
            loop {
                let v: Vec<String> = values.iter().map(|&x| fixed(x, decimals)).collect();
                if unique(&v) || decimals >= 9 {
                    return v;
                }
                decimals += 1;
            }
        }
        // Powers of two down to 1/8 are short decimals (0.5, 0.25, 0.125); below that every
        // fraction on the axis is written as one (1/16, not 0.0625 beside 0.5).
        Scale::Log2 if values.iter().all(|&v| v >= 0.125) => {
            values.iter().map(|&v| number(v)).collect()
        }
        Scale::Log2 => values.iter().map(|&v| power_of_two(v)).collect(),
        _ => {
            let v: Vec<String> = values.iter().map(|&x| number(x)).collect();
            if unique(&v) {
                v
            } else {
                values.iter().map(|&x| format!("{x}")).collect()
            }
        }
    }
}

/// `v` with `decimals` decimals; -0 written as 0.
fn fixed(v: f64, decimals: usize) -> String {
    let s = format!("{v:.decimals$}");
    if s.trim_start_matches('-')
        .chars()
        .all(|c| c == '0' || c == '.')
    {
        s.trim_start_matches('-').to_string()
    } else {
        s
    }
}

/// 1e6, 2.5e-4: a mantissa with up to `digits` decimals, trailing zeros dropped.
fn exponent(v: f64, digits: usize) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let s = format!("{v:.digits$e}");
    match s.split_once('e') {
        Some((m, e)) if m.contains('.') => {
            format!("{}e{e}", m.trim_end_matches('0').trim_end_matches('.'))
        }
        _ => s,
    }
}

/// A power of two as people write it: 1, 2, 64, and below one 1/2, 1/32 (not 0.0312).
fn power_of_two(v: f64) -> String {
    if v >= 1.0 || v <= 0.0 {
        return number(v);
    }
    let k = (1.0 / v).round();
    if ((1.0 / v) - k).abs() < 1e-6 {
        format!("1/{k}")
    } else {
        number(v)
    }
}

/// 1, 512, 4K, 1M, 2G: binary multiples, as OSU and mpptest users write sizes.
pub fn bytes(v: f64) -> String {
    let v = v.round();
    for (unit, div) in [("G", 1u64 << 30), ("M", 1 << 20), ("K", 1 << 10)] {
        let d = div as f64;
        if v >= d {
            let q = v / d;
            return if q.fract() == 0.0 {
                format!("{q}{unit}")
            } else {
                format!("{q:.1}{unit}")
            };
        }
    }
    format!("{v}")
}

/// The percentile at 10^t on HdrHistogram's axis: 0%, 90%, 99%, 99.9%.
fn percent(t: f64) -> String {
    let k = t.round() as i32;
    if k <= 0 {
        return "0%".into();
    }
    let p = 100.0 * (1.0 - 10f64.powi(-k));
    format!("{p:.*}%", (k - 2).max(0) as usize)
}

/// A number with the decimals its size needs: 1500, 12.5, 0.25, 0.012, 1e-5.
pub fn number(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        return "0".into();
    }
    if !(1e-4..1e7).contains(&a) {
        return format!("{v:.0e}");
    }
    let decimals = if a >= 100.0 {
        0
    } else {
        // Enough decimals for three significant digits (a 2.5 step's 12.5 keeps its half),
        // trailing zeros trimmed.
        (2 - a.log10().floor() as i32).max(0) as usize
    };
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_positions_are_labelled_by_name_newest_always() {
        let names: Vec<String> = (0..24).map(|i| format!("r{i}")).collect();
        let a = Axis::named("revision", names);
        let t = ticks_for(&a, -0.5, 23.5);
        assert!(t.len() <= 11, "{t:?}");
        assert_eq!(*t.last().unwrap(), 23.0);
        assert_eq!(labels(&a, &[23.0, 3.5]), ["r23", ""]);
        let few = Axis::named("revision", vec!["a".into(), "b".into(), "c".into()]);
        assert_eq!(ticks_for(&few, -0.1, 2.1), [0.0, 1.0, 2.0]);
        assert_eq!(labels(&few, &[1.0]), ["b"]);
        // Other axes keep their scale's rule.
        let lin = Axis::new("", Scale::Linear, Ticks::Number);
        assert_eq!(ticks_for(&lin, 0.0, 10.0), ticks(Scale::Linear, 0.0, 10.0));
    }

    #[test]
    fn sizes_read_as_users_write_them() {
        assert_eq!(bytes(1.0), "1");
        assert_eq!(bytes(512.0), "512");
        assert_eq!(bytes(4096.0), "4K");
        assert_eq!(bytes(1536.0), "1.5K");
        assert_eq!(bytes(4194304.0), "4M");
    }

    #[test]
    fn percentile_ticks_are_nines() {
        let a = Axis::new("", Scale::Percentile, Ticks::Percent);
        let l = labels(&a, &ticks(Scale::Percentile, 0.0, 3.2));
        assert_eq!(l, ["0%", "90%", "99%", "99.9%"]);
    }

    #[test]
    fn log2_ticks_thin_out_over_wide_ranges() {
        let t = ticks(Scale::Log2, -0.3, 22.3);
        assert!(t.len() <= 13, "{t:?}");
        assert_eq!(t[0], 0.0);
        assert!(t.iter().all(|k| k.fract() == 0.0));
        assert_eq!(ticks(Scale::Log2, -0.3, 6.3).len(), 7);
    }

    #[test]
    fn a_short_log10_range_gets_one_two_five_ticks() {
        // 0.15 .. 4 us: one whole decade inside, labelled at 1-2-5.
        let t = ticks(Scale::Log10, 0.15f64.log10(), 4f64.log10());
        let v: Vec<String> = t.iter().map(|&t| number(10f64.powf(t))).collect();
        assert_eq!(v, ["0.2", "0.5", "1", "2"]);
    }

    #[test]
    fn a_range_inside_one_decade_gets_every_digit() {
        let t = ticks(Scale::Log10, 30f64.log10(), 65f64.log10());
        let v: Vec<String> = t.iter().map(|&t| number(10f64.powf(t))).collect();
        assert_eq!(v, ["30", "40", "50", "60"]);
    }

    #[test]
    fn numbers_keep_up_to_three_significant_digits() {
        assert_eq!(number(1500.0), "1500");
        assert_eq!(number(12.5), "12.5");
        assert_eq!(number(0.25), "0.25");
        assert_eq!(number(2.0), "2");
    }

    #[test]
    fn values_a_scale_cannot_show_are_left_out() {
        assert_eq!(place(Scale::Log2, 0.0), None);
        assert_eq!(place(Scale::Percentile, 0.5), None);
        assert_eq!(place(Scale::Linear, f64::NAN), None);
        assert_eq!(place(Scale::Log2, 8.0), Some(3.0));
    }

    #[test]
    fn a_linear_axis_from_zero_includes_zero() {
        let a = Axis::new("", Scale::Linear, Ticks::Number).starting_at_zero();
        let (lo, hi) = range(&a, &[5.0, 10.0]);
        assert_eq!(lo, 0.0);
        assert!(hi > 10.0);
        let steps = ticks(Scale::Linear, lo, hi);
        assert_eq!(steps[0], 0.0);
        assert!(steps.len() <= 9);
    }

    #[test]
    fn a_linear_axis_writes_every_label_with_the_decimals_its_step_needs() {
        let a = Axis::new("", Scale::Linear, Ticks::Number);
        let t = ticks(Scale::Linear, 0.9995, 1.0125);
        let l = labels(&a, &t);
        assert_eq!(l[0], "1.000", "{l:?}");
        assert!(l.iter().all(|s| s.len() == 5), "{l:?}");
        let mut u = l.clone();
        u.dedup();
        assert_eq!(u, l);
        assert_eq!(labels(&a, &[0.0, 500.0, 1000.0]), ["0", "500", "1000"]);
    }

    #[test]
    fn a_log_axis_over_a_million_writes_every_tick_as_a_power_of_ten() {
        let a = Axis::new("", Scale::Log10, Ticks::Number);
        let l = labels(&a, &[-1.0, 0.0, 3.0, 6.0, 8.0]);
        assert_eq!(l, ["1e-1", "1e0", "1e3", "1e6", "1e8"]);
        let l = labels(&a, &[-1.0, 0.0, 1.0, 2.0]);
        assert_eq!(l, ["0.1", "1", "10", "100"]);
    }

    #[test]
    fn powers_of_two_below_one_read_as_fractions() {
        let a = Axis::new("", Scale::Log2, Ticks::Number);
        assert_eq!(
            labels(&a, &[-5.0, -1.0, 0.0, 3.0]),
            ["1/32", "1/2", "1", "8"]
        );
    }
}
