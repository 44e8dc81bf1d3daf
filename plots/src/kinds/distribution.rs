//! HdrHistogram's percentile-distribution chart at one message size: latency against
//! 1/(1-percentile), so the tail from 90 % to 99.99 % gets as much room as the body, with a
//! line per run and fabric of each latency suite. The values come from the same histograms
//! as the run's .hgrm files, so the chart and HdrHistogram's own plotter agree.

use hdrhistogram::Histogram;

use crate::error::PlotError;
use crate::figure::{Axis, Corner, Figure, Line, Panel, Scale, Stroke, Ticks};
use crate::kinds::{is_size_sweep, metric, of_suite, suites};
use crate::label::{self, Curve};
use crate::Chart;

/// Steps per halving of the distance to 100 %, as HdrHistogram's percentile output takes.
const TICKS_PER_HALF_DISTANCE: u32 = 5;

pub fn charts(curves: &[Curve<'_>], size: Option<u64>) -> Result<Vec<Chart>, PlotError> {
    let mut out = Vec::new();
    let mut any_latency = false;
    for suite in suites(curves) {
        let mine = of_suite(curves, suite, |s| {
            is_size_sweep(s) && metric(s).is_some_and(|m| m.is_time())
        });
        if mine.is_empty() {
            continue;
        }
        any_latency = true;
        // The size asked for, or the smallest every series measured (each its own smallest
        // if they share none).
        let at = size.or_else(|| common_smallest(&mine));
        let names = label::names(&mine);
        let mut panel = Panel::new(
            Axis::new("percentile", Scale::Percentile, Ticks::Percent),
            Axis::new("one-way latency (us)", Scale::Linear, Ticks::Number).starting_at_zero(),
        );
        panel.legend = Corner::UpperLeft;
        let mut sizes = Vec::new();
        for (i, (c, name)) in mine.iter().zip(names).enumerate() {
            let want = at.or_else(|| c.series.points.iter().filter_map(|p| p.key.size).min());
            let Some(p) = c
                .series
                .points
                .iter()
                .find(|p| p.key.size == want && !p.samples_ns.is_empty())
            else {
                continue;
            };
            sizes.push(p.size());
            let h = results::format::histograms::histogram_of(p);
            panel.lines.push(Line {
                name: format!("{name} ({} samples)", p.samples_ns.len()),
                points: distribution(&h),
                stroke: Stroke::Solid,
                colour: i,
            });
        }
        if panel.lines.is_empty() {
            continue;
        }
        // HdrHistogram's plotter has a linear latency axis; where the values span more than
        // a decade (fabrics apart, or one series' tail over its body) the renderer's rule
        // turns it log, so the body does not lie flat on zero.
        sizes.sort_unstable();
        sizes.dedup();
        let size_words: Vec<String> = sizes.iter().map(|s| format!("{s} bytes")).collect();
        out.push(Chart {
            name: format!("distribution-{suite}-{}", sizes[0]),
            figure: Figure::new(
                format!(
                    "{suite}: latency by percentile at {}, {}",
                    size_words.join("/"),
                    label::fabrics(&mine)
                ),
                label::context(&mine),
                vec![panel],
            ),
        });
    }
    if let (Some(s), true) = (size, out.is_empty()) {
        if any_latency {
            return Err(PlotError::Usage(format!(
                "--hist-size {s}: no latency series measured {s} bytes"
            )));
        }
    }
    Ok(out)
}

/// The smallest size every curve measured.
fn common_smallest(curves: &[Curve<'_>]) -> Option<u64> {
    let mut sets = curves.iter().map(|c| {
        c.series
            .points
            .iter()
            .filter(|p| !p.samples_ns.is_empty())
            .filter_map(|p| p.key.size)
            .collect::<std::collections::BTreeSet<u64>>()
    });
    let first = sets.next()?;
    let common = sets.fold(first, |acc, s| acc.intersection(&s).copied().collect());
    common.into_iter().next()
}

/// (1/(1-percentile), microseconds) at HdrHistogram's percentile steps below 100 %, then
/// the maximum (1/(1-1) has no place on the axis).
pub fn distribution(h: &Histogram<u64>) -> Vec<(f64, f64)> {
    let rows = results::format::histograms::percentile_distribution(h, TICKS_PER_HALF_DISTANCE);
    let mut v: Vec<(f64, f64)> = rows
        .iter()
        .filter(|r| !r.last)
        .map(|r| (1.0 / (1.0 - r.percentile / 100.0), r.value as f64 / 1000.0))
        .collect();
    // n samples resolve percentiles up to 1 - 1/n, which the axis places at n: the maximum
    // is drawn there (or just beyond the last step, if the steps went further).
    let max = h.highest_equivalent(h.max()) as f64 / 1000.0;
    let last_x = v.last().map_or(1.0, |&(x, _)| x);
    v.push((last_x.max(h.len() as f64), max));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_distribution_rises_to_the_maximum() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
        for v in 1..=1000u64 {
            h.record(v * 1000).unwrap();
        }
        let d = distribution(&h);
        assert_eq!(d[0].0, 1.0, "starts at the 0th percentile");
        assert!(d.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1));
        let (_, top) = *d.last().unwrap();
        assert!((top - 1000.0).abs() < 1.0, "{top}");
        // The median is near 500 us.
        let mid = d.iter().find(|&&(x, _)| x >= 2.0).unwrap().1;
        assert!((mid - 500.0).abs() < 5.0, "{mid}");
    }
}
