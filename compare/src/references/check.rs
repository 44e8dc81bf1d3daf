//! A run held to its references: each reference finds its series (suite, fabric and, when
//! given, rank count), its point and its metric, and the metric's headline (the figure
//! summary.csv reports) is checked against the allowed range. The first reference that cannot
//! be judged (its unit differs from the run's, or its metric is not one the point has) stops
//! the check with an error, so a misread file never reaches a verdict.

use bench_core::measure::PointKey;
use results::model::{Record, Series};
use results::Run;
use serde::Serialize;

use super::{Problem, Reference, ReferenceError};

/// What one reference came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Measured within the allowed range.
    Pass,
    /// Measured outside it.
    Fail,
    /// The run has no such point: a failure too.
    NotMeasured,
}

/// One reference with what the run measured there.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    /// 1 for the file's first `[[reference]]`.
    pub index: usize,
    pub suite: String,
    pub fabric: String,
    /// The series' rank count, or the reference's when the run has no such series.
    pub ranks: Option<usize>,
    /// "size 1024", "class=S kernel=cg".
    pub point: String,
    /// The metric checked (the headline's name when the reference names none; empty when
    /// neither the reference nor the run says).
    pub metric: String,
    pub unit: String,
    pub reference: f64,
    pub lower: Option<f64>,
    pub upper: Option<f64>,
    /// The allowed range; None on an unbounded side.
    pub min_allowed: Option<f64>,
    pub max_allowed: Option<f64>,
    /// The headline the run reports; None when not measured.
    pub measured: Option<f64>,
    pub verdict: Verdict,
}

/// Every reference's check, for one run and one file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    /// The run's id (its directory name).
    pub run: String,
    /// The reference file, as given.
    pub references: String,
    pub checks: Vec<Check>,
}

impl Outcome {
    /// How many checks came to `v`.
    pub fn count(&self, v: Verdict) -> usize {
        self.checks.iter().filter(|c| c.verdict == v).count()
    }

    /// Whether every reference passed.
    pub fn passed(&self) -> bool {
        self.checks.iter().all(|c| c.verdict == Verdict::Pass)
    }
}

/// Holds `run` to `refs`, read from `file` (named in errors).
pub fn check(run: &Run, refs: &[Reference], file: &str) -> Result<Outcome, ReferenceError> {
    let checks = refs
        .iter()
        .enumerate()
        .map(|(i, r)| check_one(run, r, i + 1, file))
        .collect::<Result<_, _>>()?;
    Ok(Outcome {
        run: run.manifest.run_id.clone(),
        references: file.into(),
        checks,
    })
}

fn check_one(run: &Run, r: &Reference, index: usize, file: &str) -> Result<Check, ReferenceError> {
    let (min_allowed, max_allowed) = r.allowed();
    let mut c = Check {
        index,
        suite: r.suite.clone(),
        fabric: r.fabric.clone(),
        ranks: r.ranks,
        point: r.point(),
        metric: r.metric.clone().unwrap_or_default(),
        unit: r.unit.clone(),
        reference: r.value,
        lower: r.lower,
        upper: r.upper,
        min_allowed,
        max_allowed,
        measured: None,
        verdict: Verdict::NotMeasured,
    };
    let Some(series) = series_of(run, r) else {
        return Ok(c);
    };
    c.ranks = Some(series.ranks);
    let key = PointKey {
        size: r.size,
        params: r.params.clone(),
    };
    let headline = |s: &Series| s.points.first().map(|p| p.metric().name.clone());
    let Some(point) = series.point(&key) else {
        if c.metric.is_empty() {
            c.metric = headline(series).unwrap_or_default();
        }
        return Ok(c);
    };
    if c.metric.is_empty() {
        c.metric = point.metric().name.clone();
    }
    let what = format!("{} on {}, {}, {}", r.suite, r.fabric, c.point, c.metric);
    let records: Vec<Record> = series
        .records()
        .into_iter()
        .filter(|x| x.size == key.size && x.params == key.params_text())
        .collect();
    let Some(record) = records.iter().find(|x| x.metric == c.metric) else {
        let valid: Vec<String> = records
            .iter()
            .map(|x| format!("\"{}\" ({})", x.metric, x.unit))
            .collect();
        return Err(ReferenceError::Unjudgeable {
            file: file.into(),
            index,
            what: format!("{} on {}, {}", r.suite, r.fabric, c.point),
            problem: Box::new(Problem::UnknownMetric {
                metric: c.metric,
                valid: valid.join(", "),
            }),
        });
    };
    if record.unit != r.unit {
        return Err(ReferenceError::Unjudgeable {
            file: file.into(),
            index,
            what,
            problem: Box::new(Problem::UnitMismatch {
                metric: record.metric.clone(),
                given: r.unit.clone(),
                measured: record.unit.clone(),
            }),
        });
    }
    c.measured = Some(record.value);
    c.verdict = if r.admits(record.value) {
        Verdict::Pass
    } else {
        Verdict::Fail
    };
    Ok(c)
}

/// The series the reference is about: its suite on its fabric, at its rank count if it names
/// one.
fn series_of<'a>(run: &'a Run, r: &Reference) -> Option<&'a Series> {
    run.series.iter().find(|s| {
        s.suite == r.suite && s.fabric == r.fabric && r.ranks.is_none_or(|n| n == s.ranks)
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use bench_core::measure::Metric;
    use results::model::FabricKind;
    use results::testing::{self, RunBuilder};

    /// A run of osu_latency on rapidio, 2 ranks: size 8 at 1.0, 1.5 and 2.0 us (headline 1.5),
    /// size 64 at 3 us.
    pub(crate) fn run() -> Run {
        let point = |size: u64, samples_ns: Vec<u64>| {
            testing::point(
                PointKey::size(size),
                vec![Metric::latency_us(2.0)],
                samples_ns,
            )
        };
        RunBuilder::new("20261123T000000Z-osu_latency-rapidio")
            .suites(&["osu_latency"])
            .fabric(testing::fabric("rapidio", FabricKind::Emulated, 2))
            .series(testing::series(
                "osu_latency",
                "rapidio",
                true,
                2,
                testing::osu_layout("t", "c"),
                vec![point(8, vec![2000, 3000, 4000]), point(64, vec![6000])],
            ))
            .build()
    }

    pub(crate) fn reference(size: u64, value: f64, tol: Option<f64>) -> Reference {
        Reference {
            suite: "osu_latency".into(),
            fabric: "rapidio".into(),
            ranks: None,
            size: Some(size),
            params: Default::default(),
            metric: None,
            value,
            lower: tol.map(|t| -t),
            upper: tol,
            unit: "us".into(),
        }
    }

    #[test]
    fn each_reference_passes_or_fails_on_the_headline() {
        let refs = [
            reference(8, 1.5, Some(0.0)),
            reference(8, 1.4, Some(0.05)),
            reference(64, 3.1, Some(0.05)),
            reference(64, 3.0, None),
        ];
        let o = check(&run(), &refs, "refs.toml").unwrap();
        let verdicts: Vec<Verdict> = o.checks.iter().map(|c| c.verdict).collect();
        use Verdict::*;
        assert_eq!(verdicts, [Pass, Fail, Pass, Pass]);
        let c = &o.checks[1];
        assert_eq!((c.measured, c.metric.as_str()), (Some(1.5), "latency"));
        assert_eq!(c.ranks, Some(2));
        assert!((c.min_allowed.unwrap() - 1.33).abs() < 1e-12);
        assert!((c.max_allowed.unwrap() - 1.47).abs() < 1e-12);
        assert_eq!((o.count(Pass), o.count(Fail)), (3, 1));
        assert!(!o.passed());
    }

    #[test]
    fn a_point_series_or_rank_count_not_measured_fails() {
        let mut other_ranks = reference(8, 1.5, None);
        other_ranks.ranks = Some(4);
        let mut other_fabric = reference(8, 1.5, None);
        other_fabric.fabric = "bxi".into();
        let refs = [reference(16, 1.5, None), other_ranks, other_fabric];
        let o = check(&run(), &refs, "refs.toml").unwrap();
        for c in &o.checks {
            assert_eq!(
                (c.verdict, c.measured),
                (Verdict::NotMeasured, None),
                "{c:?}"
            );
        }
        // the series was there: its headline metric is named
        assert_eq!(o.checks[0].metric, "latency");
        assert_eq!(o.count(Verdict::NotMeasured), 3);
        assert!(!o.passed());
    }

    #[test]
    fn a_unit_mismatch_or_unknown_metric_is_an_error_naming_both() {
        let mut ms = reference(8, 0.0015, Some(0.1));
        ms.unit = "ms".into();
        let e = check(&run(), &[reference(8, 1.5, None), ms], "refs.toml").unwrap_err();
        assert_eq!(
            e.to_string(),
            "refs.toml: reference 2 (osu_latency on rapidio, size 8, latency): unit \"ms\" but \
             the run measures latency in \"us\"; a unit mismatch is an error, not a pass: give \
             the value in us"
        );
        let mut bw = reference(8, 1.0, None);
        bw.metric = Some("bandwidth".into());
        let e = check(&run(), &[bw], "refs.toml").unwrap_err().to_string();
        assert_eq!(
            e,
            "refs.toml: reference 1 (osu_latency on rapidio, size 8): the run has no metric \
             \"bandwidth\" at this point; it has \"latency\" (us)"
        );
    }
}
