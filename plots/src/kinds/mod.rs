//! The chart kinds. Each module turns the inputs into the charts of its kind and nothing
//! else; adding a kind is one module plus one line in [`all`].

pub mod autotune;
pub mod bars;
pub mod distribution;
pub mod kernels;
pub mod mpptest;
pub mod percentiles;
pub mod scaling;
pub mod sweep;

use bench_core::measure::{Layout, Metric};
use results::model::Series;

use crate::error::PlotError;
use ::autotune::Outcome;
use results::Run;

use crate::label::Curve;
use crate::{Chart, Options};

/// Every chart of every kind, kind by kind, from runs and autotune outcomes.
pub fn all(runs: &[&Run], outcomes: &[&Outcome], opts: &Options) -> Result<Vec<Chart>, PlotError> {
    let curves = curves(runs);
    let mut out = Vec::new();
    out.extend(sweep::charts(&curves));
    out.extend(percentiles::charts(&curves));
    out.extend(distribution::charts(&curves, opts.hist_size)?);
    out.extend(mpptest::charts(&curves));
    out.extend(scaling::charts(&curves));
    out.extend(kernels::charts(&curves));
    for o in outcomes {
        out.extend(autotune::charts(o));
    }
    Ok(out)
}

/// Every series of every run, in order.
pub fn curves<'a>(runs: &[&'a Run]) -> Vec<Curve<'a>> {
    runs.iter()
        .flat_map(|&run| run.series.iter().map(move |series| Curve { run, series }))
        .collect()
}

/// The suites of `curves` in order of first appearance.
pub(crate) fn suites<'a>(curves: &[Curve<'a>]) -> Vec<&'a str> {
    let mut v: Vec<&str> = Vec::new();
    for c in curves {
        if !v.contains(&c.series.suite.as_str()) {
            v.push(&c.series.suite);
        }
    }
    v
}

/// The curves of `suite` whose series `keep` accepts, in order.
pub(crate) fn of_suite<'a>(
    curves: &[Curve<'a>],
    suite: &str,
    keep: impl Fn(&Series) -> bool,
) -> Vec<Curve<'a>> {
    curves
        .iter()
        .copied()
        .filter(|c| c.series.suite == suite && keep(c.series))
        .collect()
}

/// The headline metric of a series' points (the first metric of its first point).
pub(crate) fn metric(s: &Series) -> Option<&Metric> {
    s.points.first().and_then(|p| p.metrics.first())
}

/// A series whose points are message sizes in OSU's sense (not mpptest's own chart).
pub(crate) fn is_size_sweep(s: &Series) -> bool {
    matches!(s.layout, Layout::Osu { .. })
        && !s.points.is_empty()
        && s.points.iter().all(|p| p.key.size.is_some())
}

/// "latency (us)".
pub(crate) fn metric_label(m: &Metric) -> String {
    format!("{} ({})", m.name, m.unit)
}
