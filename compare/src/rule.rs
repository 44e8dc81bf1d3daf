//! The decision rule for one pair of sample sets: the baseline's values of a metric at a point,
//! and the candidate's.
//!
//! On an emulated fabric (virtual time, nothing timed by the host) a run's numbers are the same
//! on every machine, so any difference is a real change of the code or the model: the
//! headlines are compared [`exact`]ly. Anywhere else a difference of a few percent is the size
//! of run-to-run noise, so a change counts only when it is both significant (Mann-Whitney U on
//! the raw samples) and large (the bootstrap interval of the ratio of medians lies wholly
//! outside the noise band): [`statistical`]. One run a side cannot tell such a change from
//! run-to-run variation, which its samples do not show: unless it lies beyond a [`Limit`] (a
//! bound the user set, a noise floor learned from history or replicates) it is `inconclusive`,
//! which fails nothing. Several runs a side are decided over the runs: [`runs`]. Which way is
//! worse comes from the metric. The estimate a verdict rests on is the one the tables print
//! beside it, and a change needs it beyond the band too, so no row reads opposite to its verdict.

use bench_core::measure::Better;
use bench_core::stats::two_sample::{
    hodges_lehmann_ratio, interquartile_mean, mann_whitney_p, median, median_ratio_interval,
    Interval,
};
use serde::Serialize;

use crate::limit::{Limit, LimitSource};
use crate::placement;
use crate::settings::{percent, Settings};

/// What became of one suite, fabric, point and metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Regressed,
    Improved,
    Unchanged,
    /// One run a side moved by more than its samples' spread, but no more than run-to-run
    /// variation may (no limit was set, or the change lies within it): not a regression.
    Inconclusive,
    /// Could not be decided: missing on one side, too few samples, failed validation ...
    Invalid,
}

impl Verdict {
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Regressed => "regressed",
            Verdict::Improved => "improved",
            Verdict::Unchanged => "unchanged",
            Verdict::Inconclusive => "inconclusive",
            Verdict::Invalid => "invalid",
        }
    }
}

/// Which rule decided (or would decide) a verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// Emulated fabric in virtual time: headlines compared for equality.
    Exact,
    /// Measured time: a test and an interval on the raw samples.
    Statistical,
    /// Measured time, several runs a side: the same test and interval, on each run's value ([`run_value`]).
    Runs,
}

impl Rule {
    pub fn word(self) -> &'static str {
        match self {
            Rule::Exact => "exact",
            Rule::Statistical => "statistical",
            Rule::Runs => "runs",
        }
    }
}

/// A verdict and the numbers it was decided on.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub verdict: Verdict,
    pub rule: Rule,
    /// Candidate over baseline: of the headlines (exact) or of the medians (statistical).
    /// None when not computed or not finite.
    pub ratio: Option<f64>,
    /// The ratio's confidence interval (statistical only).
    pub low: Option<f64>,
    pub high: Option<f64>,
    /// Mann-Whitney U's two-sided p-value (statistical only).
    pub p: Option<f64>,
    /// With one run a side: the limit a change had to pass (None: no limit was set or learned).
    pub limit: Option<Limit>,
    /// Each side's value the decision rests on, when the rule chose it from some runs only
    /// (several runs a side, compared within one placement); None: the entry's own statistic.
    pub shown: Option<(f64, f64)>,
    /// Why, in a few words.
    pub reason: String,
}

impl Decision {
    /// A pair that could not be decided, and why.
    pub fn invalid(rule: Rule, reason: impl Into<String>) -> Decision {
        Decision {
            verdict: Verdict::Invalid,
            rule,
            ratio: None,
            low: None,
            high: None,
            p: None,
            limit: None,
            shown: None,
            reason: reason.into(),
        }
    }
}

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// Emulated fabrics: equal headlines are unchanged; any difference is a change, its direction
/// the metric's.
pub fn exact(baseline: f64, candidate: f64, better: Better) -> Decision {
    if baseline.is_nan() || candidate.is_nan() {
        return Decision::invalid(Rule::Exact, "no samples to compare");
    }
    let ratio = finite(candidate / baseline);
    let (verdict, reason) = if baseline == candidate {
        (Verdict::Unchanged, "exact: identical".to_string())
    } else {
        let worse = match better {
            Better::Lower => candidate > baseline,
            Better::Higher => candidate < baseline,
        };
        let verdict = if worse {
            Verdict::Regressed
        } else {
            Verdict::Improved
        };
        (
            verdict,
            "exact: virtual time, so any difference is real".to_string(),
        )
    };
    Decision {
        verdict,
        rule: Rule::Exact,
        ratio,
        low: None,
        high: None,
        p: None,
        limit: None,
        shown: None,
        reason,
    }
}

/// Measured time, one run a side (or too few runs to decide over them, their samples pooled):
/// invalid with fewer than `settings.min_samples` a side; otherwise the ratio of medians
/// (candidate over baseline) with its bootstrap interval at `settings.confidence` (`seed` makes
/// it reproducible) and Mann-Whitney U's p-value. The samples call it a change when p is below
/// `1 - confidence` and the whole interval lies beyond `1 ± noise` on one side; but the samples
/// show only the noise within a run, so such a change counts (regressed or improved) only when
/// it also lies beyond the limit: `settings.bound` when the user set one, else `floor` (learned
/// from history or replicates). Without a limit, or within it, it is `inconclusive`.
pub fn statistical(
    baseline: &[f64],
    candidate: &[f64],
    better: Better,
    settings: &Settings,
    seed: u64,
    floor: Option<Limit>,
) -> Decision {
    let (na, nb) = (baseline.len(), candidate.len());
    if na < settings.min_samples || nb < settings.min_samples {
        return Decision::invalid(
            Rule::Statistical,
            format!(
                "too few samples: {na} in the baseline, {nb} in the candidate; at least {} a \
                 side are needed",
                settings.min_samples
            ),
        );
    }
    let interval = median_ratio_interval(
        baseline,
        candidate,
        settings.resamples,
        seed,
        settings.confidence,
    );
    let samples = decide(
        Rule::Statistical,
        interval,
        mann_whitney_p(baseline, candidate),
        better,
        settings.noise,
        settings,
    );
    if !matches!(samples.verdict, Verdict::Regressed | Verdict::Improved) {
        return samples;
    }
    let limit = settings
        .bound
        .map(|fraction| Limit {
            fraction,
            source: LimitSource::Bound,
            runs: 0,
        })
        .or(floor);
    let change = change_words(&samples);
    let Some(limit) = limit else {
        return Decision {
            verdict: Verdict::Inconclusive,
            reason: format!(
                "{change} by its samples, but one run a side cannot separate a change from \
                 run-to-run variation: compare several runs a side, or set --bound"
            ),
            ..samples
        };
    };
    let beyond = decide(
        Rule::Statistical,
        interval,
        samples.p.unwrap_or(1.0),
        better,
        limit.fraction.max(settings.noise),
        settings,
    );
    if beyond.verdict == samples.verdict {
        Decision {
            limit: Some(limit),
            reason: format!("{change}, beyond {}", limit.text()),
            ..samples
        }
    } else {
        Decision {
            verdict: Verdict::Inconclusive,
            limit: Some(limit),
            reason: format!(
                "{change} by its samples, but within {}: one run a side cannot separate that \
                 from run-to-run variation",
                limit.text()
            ),
            ..samples
        }
    }
}

/// "+12.3% (worse)": the change a decision found, and which way it goes for the metric.
fn change_words(d: &Decision) -> String {
    let pct = (d.ratio.unwrap_or(1.0) - 1.0) * 100.0;
    let way = if d.verdict == Verdict::Regressed {
        "worse"
    } else {
        "better"
    };
    format!("{pct:+.1}% ({way})")
}

/// The verdict from a ratio's interval and the test's p-value: a change when significant and
/// the whole interval lies beyond `1 ± noise` on one side, its direction the metric's.
fn decide(
    rule: Rule,
    interval: Interval,
    p: f64,
    better: Better,
    band: f64,
    settings: &Settings,
) -> Decision {
    let (Some(ratio), Some(low), Some(high)) = (
        finite(interval.estimate),
        finite(interval.low),
        finite(interval.high),
    ) else {
        return Decision::invalid(rule, "no finite ratio (a median of 0, or infinite values)");
    };
    let alpha = 1.0 - settings.confidence;
    let significant = p < alpha;
    // The estimate beyond the band too: the percentile bootstrap of a median of quantised
    // timings can leave its estimate outside its interval, and the row would read opposite.
    let above = low > 1.0 + band && ratio > 1.0 + band;
    let below = high < 1.0 - band && ratio < 1.0 - band;
    let (worse, better_side) = match better {
        Better::Lower => (above, below),
        Better::Higher => (below, above),
    };
    let band = percent(band);
    let (verdict, reason) = if !significant {
        (
            Verdict::Unchanged,
            format!("not significant (p = {} >= {})", p_text(p), p_text(alpha)),
        )
    } else if worse || better_side {
        let verdict = if worse {
            Verdict::Regressed
        } else {
            Verdict::Improved
        };
        (
            verdict,
            format!("significant, and the interval lies outside ±{band}"),
        )
    } else {
        (
            Verdict::Unchanged,
            format!("significant, but the interval reaches into ±{band}"),
        )
    };
    Decision {
        verdict,
        rule,
        ratio: Some(ratio),
        low: Some(low),
        high: Some(high),
        p: Some(p),
        limit: None,
        shown: None,
        reason,
    }
}

pub use crate::placement::MIN_RUNS;

/// The one value a run contributes when a side is decided over its runs: the interquartile
/// mean of its samples. Not their median: samples are whole nanoseconds from a clock that
/// ticks coarser than that on some hosts (10 ns on the VM fabbench is developed on), so at
/// 0.2 us a run's median can only move in steps of 5 %, and two builds that differ in nothing
/// showed whole steps between the shares of their runs landing on each, one step the size of
/// the noise band. The mean of a run's middle half keeps the median's indifference to a tail
/// of interrupts and moves smoothly.
pub fn run_value(samples: &[f64]) -> f64 {
    interquartile_mean(samples)
}

/// Measured time, several runs a side. Between-run noise (where the kernel and the hypervisor
/// put the ranks, what else ran meanwhile) is larger than the within-run noise the samples
/// show, and whole runs can land on a slower placement; so each run's value ([`run_value`]) is one
/// observation. Significance is Mann-Whitney U's over them; the ratio is the Hodges-Lehmann
/// estimate (the median of every candidate-run over baseline-run ratio) with its
/// distribution-free interval, which compare like with like when both sides mix fast and slow
/// runs in different shares, where a ratio of medians would jump between the modes. A change
/// must show across the runs, and one disturbed run cannot decide. Invalid with fewer than
/// [`MIN_RUNS`] a side.
pub fn runs(
    baseline: &[Vec<f64>],
    candidate: &[Vec<f64>],
    better: Better,
    settings: &Settings,
) -> Decision {
    let (na, nb) = (baseline.len(), candidate.len());
    if na < MIN_RUNS || nb < MIN_RUNS {
        return Decision::invalid(
            Rule::Runs,
            format!(
                "too few runs: {na} in the baseline, {nb} in the candidate; with several runs a \
                 side each run is one observation, and at least {MIN_RUNS} a side are needed"
            ),
        );
    }
    let values = |runs: &[Vec<f64>]| -> Vec<f64> { runs.iter().map(|r| run_value(r)).collect() };
    let (a, b) = (values(baseline), values(candidate));
    if a.iter().chain(&b).any(|&x| !(x > 0.0 && x.is_finite())) {
        return Decision::invalid(Rule::Runs, "a run's value is not a positive number");
    }
    // Runs that fall into placements far apart are compared within the one both sides share.
    let (a, b, within) = match placement::common(&a, &b) {
        Some(p) => {
            let said = format!(
                "; runs fell into {} placements, decided on the {} and {} runs of the one both \
                 sides share most",
                p.placements,
                p.baseline.len(),
                p.candidate.len()
            );
            (p.baseline, p.candidate, said)
        }
        None => (a, b, String::new()),
    };
    let interval = hodges_lehmann_ratio(&a, &b, settings.confidence);
    let d = decide(
        Rule::Runs,
        interval,
        mann_whitney_p(&a, &b),
        better,
        settings.noise,
        settings,
    );
    // The tables print each side's median of run values: a change they show the other way
    // (possible when the sides mix fast and slow runs in different shares) is not called one.
    let shown = median(&b) / median(&a);
    let agrees = match d.ratio {
        Some(r) if r > 1.0 => shown > 1.0,
        Some(r) if r < 1.0 => shown < 1.0,
        _ => true,
    };
    let d = Decision {
        shown: Some((median(&a), median(&b))),
        reason: d.reason.clone() + &within,
        ..d
    };
    if matches!(d.verdict, Verdict::Regressed | Verdict::Improved) && !agrees {
        return Decision {
            verdict: Verdict::Unchanged,
            reason: format!(
                "the Hodges-Lehmann ratio and the medians of the runs disagree on the \
                 direction{within}"
            ),
            ..d
        };
    }
    d
}

/// A p-value in a few characters: "0.031", "<0.001".
pub fn p_text(p: f64) -> String {
    if p < 0.001 {
        "<0.001".into()
    } else {
        format!("{p:.3}")
    }
}

/// A seed from text naming the pair (suite, fabric, ranks, point, metric): FNV-1a, which unlike
/// std's hasher is fixed, so the same runs give the same intervals on any build.
pub fn seed_of(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Timing-like samples around `centre`: uniform noise of ±`spread` (a fraction), from a
    /// fixed generator (SplitMix64) so every run of the test sees the same values.
    fn noisy(n: usize, centre: f64, spread: f64, seed: u64) -> Vec<f64> {
        let mut state = seed;
        (0..n)
            .map(|_| {
                state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
                let mut z = state;
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                z ^= z >> 31;
                let uniform = (z >> 11) as f64 / (1u64 << 53) as f64;
                centre * (1.0 + spread * (2.0 * uniform - 1.0))
            })
            .collect()
    }

    /// The samples' own verdict: a bound no wider than the noise band changes nothing.
    fn by_samples() -> Settings {
        Settings {
            bound: Some(1e-9),
            ..Settings::default()
        }
    }

    fn decide(a: &[f64], b: &[f64], better: Better) -> Decision {
        statistical(a, b, better, &by_samples(), 7, None)
    }

    #[test]
    fn one_run_a_side_cannot_call_a_change_without_a_limit() {
        let a = noisy(200, 10.0, 0.01, 3);
        let up = noisy(200, 11.0, 0.01, 4);
        // No bound, no floor: a clear 10 % by the samples is inconclusive, and says why.
        let d = statistical(&a, &up, Better::Lower, &Settings::default(), 7, None);
        assert_eq!(d.verdict, Verdict::Inconclusive, "{d:?}");
        assert!(d
            .reason
            .contains("cannot separate a change from run-to-run variation"));
        assert!(d.reason.starts_with("+10."), "{}", d.reason);
        assert!(d.ratio.unwrap() > 1.09 && d.limit.is_none());
        // Unchanged stays unchanged: nothing to separate.
        let same = statistical(&a, &a, Better::Lower, &Settings::default(), 7, None);
        assert_eq!(same.verdict, Verdict::Unchanged);
        // A bound of 5 % is passed by a 10 % change, one of 15 % is not.
        let bound = |b| Settings {
            bound: Some(b),
            ..Settings::default()
        };
        let d = statistical(&a, &up, Better::Lower, &bound(0.05), 7, None);
        assert_eq!(d.verdict, Verdict::Regressed, "{d:?}");
        assert_eq!(d.limit.unwrap().source, LimitSource::Bound);
        assert!(d.reason.contains("beyond the bound ±5%"), "{}", d.reason);
        let d = statistical(&a, &up, Better::Lower, &bound(0.15), 7, None);
        assert_eq!(d.verdict, Verdict::Inconclusive, "{d:?}");
        assert!(d.reason.contains("within the bound ±15%"), "{}", d.reason);
        // A learned floor decides when no bound is set, and a bound wins over it.
        let floor = |f| Limit {
            fraction: f,
            source: LimitSource::History,
            runs: 5,
        };
        let d = statistical(
            &a,
            &up,
            Better::Lower,
            &Settings::default(),
            7,
            Some(floor(0.04)),
        );
        assert_eq!(d.verdict, Verdict::Regressed, "{d:?}");
        let d = statistical(
            &a,
            &up,
            Better::Higher,
            &Settings::default(),
            7,
            Some(floor(0.2)),
        );
        assert_eq!(d.verdict, Verdict::Inconclusive, "{d:?}");
        let d = statistical(&a, &up, Better::Lower, &bound(0.2), 7, Some(floor(0.04)));
        assert_eq!(d.verdict, Verdict::Inconclusive, "{d:?}");
        // A faster candidate against a bound is an improvement, in the metric's direction.
        let down = noisy(200, 9.0, 0.01, 5);
        let d = statistical(&a, &down, Better::Lower, &bound(0.05), 7, None);
        assert_eq!(d.verdict, Verdict::Improved, "{d:?}");
    }

    #[test]
    fn a_change_needs_its_estimate_beyond_the_band_too() {
        // An interval wholly above the band with the estimate inside it cannot occur from a
        // bootstrap of spread samples, so it is built: the rows would read opposite.
        let i = Interval {
            estimate: 1.0,
            low: 1.05,
            high: 1.2,
        };
        let d = super::decide(
            Rule::Statistical,
            i,
            1e-6,
            Better::Lower,
            0.02,
            &Settings::default(),
        );
        assert_eq!(d.verdict, Verdict::Unchanged, "{d:?}");
        let i = Interval { estimate: 1.1, ..i };
        let d = super::decide(
            Rule::Statistical,
            i,
            1e-6,
            Better::Lower,
            0.02,
            &Settings::default(),
        );
        assert_eq!(d.verdict, Verdict::Regressed, "{d:?}");
    }

    #[test]
    fn identical_noisy_samples_are_unchanged() {
        let a = noisy(200, 10.0, 0.05, 1);
        for better in [Better::Lower, Better::Higher] {
            let d = decide(&a, &a, better);
            assert_eq!(d.verdict, Verdict::Unchanged, "{d:?}");
            assert_eq!(d.ratio, Some(1.0));
            assert_eq!(d.p, Some(1.0));
        }
        // Two draws of the same distribution: no significant difference either.
        let b = noisy(200, 10.0, 0.05, 2);
        assert_eq!(decide(&a, &b, Better::Lower).verdict, Verdict::Unchanged);
    }

    #[test]
    fn a_ten_percent_shift_is_a_change_in_the_metrics_direction() {
        let a = noisy(100, 10.0, 0.01, 3);
        let up = noisy(100, 11.0, 0.01, 4);
        let down = noisy(100, 9.0, 0.01, 5);
        // Latency: up is worse.
        let d = decide(&a, &up, Better::Lower);
        assert_eq!(d.verdict, Verdict::Regressed, "{d:?}");
        assert!(d.low.unwrap() > 1.02 && (d.ratio.unwrap() - 1.1).abs() < 0.01);
        assert!(d.p.unwrap() < 0.05);
        assert_eq!(decide(&a, &down, Better::Lower).verdict, Verdict::Improved);
        // Bandwidth: up is better.
        assert_eq!(decide(&a, &up, Better::Higher).verdict, Verdict::Improved);
        let d = decide(&a, &down, Better::Higher);
        assert_eq!(d.verdict, Verdict::Regressed, "{d:?}");
        assert!(d.high.unwrap() < 0.98);
    }

    #[test]
    fn a_significant_shift_inside_the_band_is_unchanged() {
        // 1 % slower with 0.1 % noise: certainly real, but inside ±2 %.
        let a = noisy(200, 10.0, 0.001, 6);
        let b = noisy(200, 10.1, 0.001, 7);
        let d = decide(&a, &b, Better::Lower);
        assert!(d.p.unwrap() < 1e-6, "{d:?}");
        assert_eq!(d.verdict, Verdict::Unchanged, "{d:?}");
        assert!(d.reason.contains("reaches into ±2%"), "{}", d.reason);
        // With a band of 0.5 % the same shift counts.
        let narrow = Settings {
            noise: 0.005,
            ..by_samples()
        };
        let d = statistical(&a, &b, Better::Lower, &narrow, 7, None);
        assert_eq!(d.verdict, Verdict::Regressed, "{d:?}");
    }

    #[test]
    fn a_large_shift_without_significance_is_unchanged() {
        // 5 samples a side spread over ±50 %: a 10 % shift of the median proves nothing.
        let a = noisy(5, 10.0, 0.5, 8);
        let b: Vec<f64> = a.iter().map(|x| x * 1.1).collect();
        let d = decide(&a, &b, Better::Lower);
        assert_eq!(d.verdict, Verdict::Unchanged, "{d:?}");
        assert!(d.reason.starts_with("not significant"), "{}", d.reason);
    }

    #[test]
    fn too_few_samples_are_invalid() {
        let a = noisy(4, 10.0, 0.01, 9);
        let b = noisy(50, 20.0, 0.01, 10);
        for (x, y) in [(&a, &b), (&b, &a)] {
            let d = decide(x, y, Better::Lower);
            assert_eq!(d.verdict, Verdict::Invalid, "{d:?}");
            assert!(d.reason.contains("at least 5"), "{}", d.reason);
            assert_eq!((d.ratio, d.p), (None, None));
        }
        assert_eq!(decide(&b, &b[..5], Better::Lower).rule, Rule::Statistical);
        assert_ne!(decide(&b, &b[..5], Better::Lower).verdict, Verdict::Invalid);
    }

    #[test]
    fn zero_medians_are_invalid_not_a_change() {
        let zeros = vec![0.0; 10];
        let d = decide(&zeros, &noisy(10, 1.0, 0.1, 11), Better::Lower);
        assert_eq!(d.verdict, Verdict::Invalid, "{d:?}");
    }

    #[test]
    fn exact_compares_headlines_in_the_metrics_direction() {
        let same = exact(31.29, 31.29, Better::Lower);
        assert_eq!((same.verdict, same.rule), (Verdict::Unchanged, Rule::Exact));
        assert_eq!(same.ratio, Some(1.0));
        assert_eq!(exact(10.0, 10.5, Better::Lower).verdict, Verdict::Regressed);
        assert_eq!(exact(10.0, 9.5, Better::Lower).verdict, Verdict::Improved);
        assert_eq!(exact(10.0, 10.5, Better::Higher).verdict, Verdict::Improved);
        assert_eq!(exact(10.0, 9.5, Better::Higher).verdict, Verdict::Regressed);
        // No noise band: a difference in the last digit is a change.
        let tiny = exact(1.0, 1.0 + 1e-12, Better::Lower);
        assert_eq!(tiny.verdict, Verdict::Regressed);
        assert!(tiny.p.is_none() && tiny.low.is_none());
        assert_eq!(
            exact(f64::NAN, 1.0, Better::Lower).verdict,
            Verdict::Invalid
        );
    }

    #[test]
    fn seeds_are_fixed_and_differ_by_name() {
        assert_eq!(seed_of(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(seed_of("a"), 0xaf63_dc4c_8601_ec8c);
        assert_ne!(seed_of("osu_bw/8"), seed_of("osu_bw/16"));
    }

    /// `k` runs of 200 samples around `centre`, each run's level offset by `levels[i]` (a
    /// fraction): between-run noise on top of within-run noise.
    fn runs_of(centre: f64, levels: &[f64], seed: u64) -> Vec<Vec<f64>> {
        levels
            .iter()
            .enumerate()
            .map(|(i, l)| noisy(200, centre * (1.0 + l), 0.02, seed + i as u64))
            .collect()
    }

    /// A run of 1000 samples on a 10 ns grid: `share` of them at `low`, the rest 10 ns above.
    fn on_a_grid(low: f64, share: f64) -> Vec<f64> {
        let at_low = (1000.0 * share) as usize;
        (0..1000)
            .map(|i| if i < at_low { low } else { low + 10.0 })
            .collect()
    }

    #[test]
    fn over_runs_a_timer_tick_between_the_sides_is_not_a_change() {
        // The same build twice on a clock that ticks in 10 ns, at 190 ns: every run holds
        // about half its samples on each tick, so its median falls on either; the baseline's
        // runs happened to land 25 on the upper tick and 5 on the lower, the candidate's the
        // other way. Their medians differ by a whole tick, 5.3 %, beyond the 5 % band; the
        // runs themselves by 1 % of their samples, a fraction of a nanosecond.
        let s = Settings {
            noise: 0.05,
            ..Settings::default()
        };
        let side = |upper: usize| -> Vec<Vec<f64>> {
            (0..30)
                .map(|i| on_a_grid(180.0, if i < upper { 0.495 } else { 0.505 }))
                .collect()
        };
        let (base, cand) = (side(25), side(5));
        let medians = |r: &[Vec<f64>]| r.iter().map(|x| median(x)).collect::<Vec<_>>();
        assert_eq!(median(&medians(&base)), 190.0);
        assert_eq!(median(&medians(&cand)), 180.0);
        let d = runs(&base, &cand, Better::Lower, &s);
        assert_eq!(d.verdict, Verdict::Unchanged, "{d:?}");
        assert!((d.ratio.unwrap() - 1.0).abs() < 0.01, "{d:?}");
    }

    #[test]
    fn over_runs_one_disturbed_run_cannot_decide() {
        // A narrow band, so that only the unit of observation decides.
        let s = Settings {
            noise: 0.005,
            ..by_samples()
        };
        let base = runs_of(10.0, &[0.0, 0.01, -0.01, 0.0, 0.005], 10);
        // Two candidate runs disturbed (one 8 % slower, one three times slower: a busy
        // machine), the rest as before.
        let cand = runs_of(10.0, &[0.0, 0.08, -0.005, 2.0, 0.0], 20);
        let d = runs(&base, &cand, Better::Lower, &s);
        assert_eq!(d.verdict, Verdict::Unchanged, "{d:?}");
        assert_eq!(d.rule, Rule::Runs);
        // The samples pooled would call it a regression: the disturbed runs' samples move the
        // pooled median, and every sample counts as independent.
        let pool = |r: &[Vec<f64>]| r.concat();
        let pooled = statistical(&pool(&base), &pool(&cand), Better::Lower, &s, 3, None);
        assert_eq!(pooled.verdict, Verdict::Regressed, "{pooled:?}");
    }

    #[test]
    fn over_runs_a_shift_in_every_run_is_a_change_in_the_metrics_direction() {
        let s = Settings::default();
        let levels = [0.0, 0.01, -0.01, 0.0, 0.005];
        let base = runs_of(10.0, &levels, 10);
        let slower = runs_of(11.0, &levels, 20);
        let d = runs(&base, &slower, Better::Lower, &s);
        assert_eq!(d.verdict, Verdict::Regressed, "{d:?}");
        assert!(d.low.unwrap() > 1.05 && d.high.unwrap() < 1.15, "{d:?}");
        // Bandwidth: a larger value is better, so the same shift is an improvement.
        assert_eq!(
            runs(&base, &slower, Better::Higher, &s).verdict,
            Verdict::Improved
        );
    }

    #[test]
    fn over_runs_a_shift_is_found_within_the_placement_both_sides_share() {
        // Ten runs a side on two placements 3.5 times apart, in different shares (6 and 4
        // fast, 3 and 7 ... ), the candidate 10 % slower on both: over all the runs the medians
        // overlap across the modes, within the slow placement (4 and 7 runs) the shift is
        // plain.
        let levels = |slow: usize, n: usize| -> Vec<f64> {
            (0..n)
                .map(|i| if i < slow { 2.5 } else { 0.0 } + 0.005 * (i % 3) as f64)
                .collect()
        };
        let base = runs_of(10.0, &levels(4, 10), 10);
        let slower = runs_of(11.0, &levels(7, 10), 20);
        let d = runs(&base, &slower, Better::Lower, &Settings::default());
        assert_eq!(d.verdict, Verdict::Regressed, "{d:?}");
        assert!(
            d.reason
                .contains("2 placements, decided on the 4 and 7 runs"),
            "{d:?}"
        );
        let (x, y) = d.shown.unwrap();
        assert!(
            x > 30.0 && (y / x - 1.1).abs() < 0.02,
            "the slow placement's: {d:?}"
        );
        // The same runs, nothing changed: unchanged.
        let same = runs_of(10.0, &levels(7, 10), 30);
        let d = runs(&base, &same, Better::Lower, &Settings::default());
        assert_eq!(d.verdict, Verdict::Unchanged, "{d:?}");
    }

    #[test]
    fn over_runs_too_few_runs_are_invalid() {
        let base = runs_of(10.0, &[0.0, 0.0, 0.0], 10);
        let slower = runs_of(20.0, &[0.0, 0.0, 0.0], 20);
        let d = runs(&base, &slower, Better::Lower, &Settings::default());
        assert_eq!(d.verdict, Verdict::Invalid, "{d:?}");
        assert!(
            d.reason.contains("too few runs: 3 in the baseline, 3"),
            "{}",
            d.reason
        );
    }

    #[test]
    fn over_runs_a_shift_is_found_when_both_sides_mix_fast_and_slow_runs() {
        // Some runs of each side landed on a placement 3.5 times slower, in different shares;
        // the candidate is 10 % slower in both modes.
        let levels = |slow: usize| -> Vec<f64> {
            (0..30)
                .map(|i| if i < slow { 2.5 } else { 0.0 } + 0.01 * (i % 3) as f64)
                .collect()
        };
        let base = runs_of(10.0, &levels(14), 10);
        let slower = runs_of(11.0, &levels(16), 20);
        let d = runs(&base, &slower, Better::Lower, &Settings::default());
        assert_eq!(d.verdict, Verdict::Regressed, "{d:?}");
        assert!(d.low.unwrap() > 1.05 && d.high.unwrap() < 1.15, "{d:?}");
    }
}
