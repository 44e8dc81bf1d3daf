//! An on/off setting, decided by an A/B on the workload that matters. Both values run the
//! coarse sweep; per size the two sides' raw samples are compared (on a real fabric with a
//! Mann-Whitney U test and a bootstrap interval of the ratio of medians; on virtual time,
//! which has no noise, by the values themselves), consecutive sizes with the same verdict
//! form ranges, and the geometric mean ratio over sizes decides. A value whose run fails
//! (hyperlink without its drain thread, beyond the window) cannot be deployed for that
//! workload and loses, with the fabric's reason.

use bench_core::size::format_size;

use crate::grid;
use crate::measure::{Bench, Halt};
use crate::outcome::{Decision, Evidence, SizeVerdict, SwitchEvidence};
use crate::params::switch_values;
use crate::request::Param;
use bench_core::stats::two_sample as stats;

/// Per-size significance on a real fabric.
const ALPHA: f64 = 0.05;
const RESAMPLES: usize = 2000;

/// One side of the A/B: its measurement, and where it failed.
struct Side {
    id: usize,
    /// The smallest size at which the value's run failed, and why.
    failure: Option<(u64, String)>,
}

/// Decides switch `p` on `workloads` (the first whose evidence decides is reported), with
/// `fixed` settings held.
pub fn tune(
    bench: &mut Bench<'_>,
    p: &Param,
    fixed: &[(String, String)],
    workloads: &[&'static str],
) -> Result<Decision, Halt> {
    let pair = switch_values(&p.name).expect("a switch");
    let (lo, hi) = bench.tuning.sizes;
    // Judged only where the switch's mechanism acts, as the fabric says under the settings in
    // force, and up to the largest size a deployed profile is verified to: a value that fails
    // there (hyperlink without its drain thread, beyond the window) must lose here, not later.
    let t = bench.tuning;
    let reach = (t.def.switch_reach)(&p.name, &t.settings_with(fixed));
    let swept = grid::coarse(lo, grid::verified_top(hi));
    let sizes: Vec<u64> = swept
        .iter()
        .copied()
        .filter(|s| reach.acts_at(*s))
        .collect();
    let not_applicable = swept
        .iter()
        .copied()
        .take_while(|s| !reach.acts_at(*s))
        .last()
        .map(|last| {
            format!(
                "{}-{}: not applicable ({})",
                format_size(swept[0]),
                format_size(last),
                reach.why
            )
        });
    if sizes.is_empty() {
        return Ok(inapplicable(
            p,
            &swept,
            &reach.why,
            not_applicable,
            workloads[0],
        ));
    }
    let mut sides: Vec<(&'static str, String, Side)> = Vec::new();
    // A default that is neither value (single_copy=auto: the engine decides per peer and
    // size) is itself the A side; it meets the fixed value that does best against it.
    let values: [&str; 2] = if !p.default.is_empty() && !pair.contains(&p.default.as_str()) {
        let w = workloads[0];
        let base = side(bench, p, fixed, w, &sizes, &p.default)?;
        let mut best: Option<(&str, f64)> = None;
        for v in pair {
            let other = side(bench, p, fixed, w, &sizes, v)?;
            let score = if other.failure.is_some() {
                f64::INFINITY
            } else {
                compare(bench, w, &base, &other, [&p.default, v]).mean_ratio
            };
            if best.is_none_or(|(_, b)| score < b) {
                best = Some((v, score));
            }
            sides.push((w, v.to_string(), other));
        }
        sides.push((w, p.default.clone(), base));
        [p.default.as_str(), best.expect("two values").0]
    } else {
        pair
    };
    let mut evidences = Vec::new();
    for w in workloads {
        let mut take = |bench: &mut Bench<'_>, v: &str| -> Result<Side, Halt> {
            match sides.iter().position(|(sw, sv, _)| sw == w && sv == v) {
                Some(i) => Ok(sides.swap_remove(i).2),
                None => side(bench, p, fixed, w, &sizes, v),
            }
        };
        let a = take(bench, values[0])?;
        let b = take(bench, values[1])?;
        let (a, b) = more_rounds(bench, p, fixed, w, &sizes, values, a, b)?;
        evidences.push((w, a, b));
    }
    // A value that fails on any workload loses; otherwise the workloads' ratios together.
    let failed = |i: usize| {
        evidences.iter().find_map(|(w, a, b)| {
            let s = if i == 0 { a } else { b };
            s.failure
                .as_ref()
                .map(|(size, why)| (w.to_string(), *size, why.clone()))
        })
    };
    let (fa, fb) = (failed(0), failed(1));
    let mut decisive = 0;
    let mut ratios = Vec::new();
    let mut per_workload = Vec::new();
    for (i, (w, a, b)) in evidences.iter().enumerate() {
        let ev = compare(bench, w, a, b, values);
        if fa.as_ref().is_some_and(|f| f.0 == **w) || fb.as_ref().is_some_and(|f| f.0 == **w) {
            decisive = i;
        }
        ratios.extend(ev.per_size.iter().map(|v| v.ratio));
        per_workload.push(ev);
    }
    let mean_ratio = geomean(&ratios);
    let tol = bench.tuning.tolerance;
    let (chosen, near, why) = match (&fa, &fb) {
        (Some(f), Some(g)) => {
            let mut ev = per_workload.swap_remove(decisive);
            ev.not_applicable = not_applicable;
            return Ok(kept(
                p,
                format!(
                    "both values fail: {}={} on {} from {} ({}); {}={} on {} from {} ({})",
                    p.name,
                    values[0],
                    f.0,
                    format_size(f.1),
                    f.2,
                    p.name,
                    values[1],
                    g.0,
                    format_size(g.1),
                    g.2
                ),
                ev,
            ));
        }
        (Some((w, size, why)), None) => (
            values[1].to_string(),
            vec![values[1].to_string()],
            format!(
                "{}={} fails on {w} from {} ({why}); {} works at every size",
                p.name,
                values[0],
                format_size(*size),
                values[1]
            ),
        ),
        (None, Some((w, size, why))) => (
            values[0].to_string(),
            vec![values[0].to_string()],
            format!(
                "{}={} fails on {w} from {} ({why}); {} works at every size",
                p.name,
                values[1],
                format_size(*size),
                values[0]
            ),
        ),
        (None, None) => {
            // Which side the per-size verdicts favour: on virtual time every difference is
            // real; on a real fabric only sizes whose test cleared the noise count.
            let wins = |v: &str| {
                per_workload
                    .iter()
                    .flat_map(|e| &e.per_size)
                    .filter(|x| x.winner.as_deref() == Some(v))
                    .count()
            };
            let (wa, wb) = (wins(values[0]), wins(values[1]));
            let of = if workloads.len() > 1 {
                workloads.join(" and ")
            } else {
                workloads[0].to_string()
            };
            let best_size = |better_is_b: bool| {
                per_workload
                    .iter()
                    .flat_map(|e| &e.per_size)
                    .map(|x| (x.size, if better_is_b { 1.0 / x.ratio } else { x.ratio }))
                    .max_by(|a, b| a.1.total_cmp(&b.1))
                    .map(|(size, r)| {
                        format!(
                            ", up to {:.1} % at {}",
                            (r - 1.0) * 100.0,
                            format_size(size)
                        )
                    })
                    .unwrap_or_default()
            };
            let pick_b = mean_ratio < 1.0 && wb > wa;
            let pick_a = mean_ratio > 1.0 && wa > wb;
            let near = if (mean_ratio - 1.0).abs() <= tol {
                vec![values[0].to_string(), values[1].to_string()]
            } else if mean_ratio < 1.0 {
                vec![values[1].to_string()]
            } else {
                vec![values[0].to_string()]
            };
            if pick_a || pick_b {
                let (v, r) = if pick_b {
                    (values[1], mean_ratio)
                } else {
                    (values[0], 1.0 / mean_ratio)
                };
                (
                    v.to_string(),
                    near,
                    format!(
                        "{v} is faster by {:.1} % (geometric mean over {} sizes of {of}{}); faster at {} sizes, slower at {}",
                        (1.0 - r) * 100.0,
                        ratios.len(),
                        best_size(pick_b),
                        wa.max(wb),
                        wa.min(wb)
                    ),
                )
            } else {
                // No side wins on the evidence: a change is not worth making.
                let keep = if p.default.is_empty() {
                    values[0].to_string()
                } else {
                    p.default.clone()
                };
                (
                    keep.clone(),
                    near,
                    format!(
                        "no difference between {} and {} clears the noise on {of} (ratio {:.3}, {} sizes favour {}, {} favour {}); kept {keep}",
                        values[0], values[1], mean_ratio, wa, values[0], wb, values[1]
                    ),
                )
            }
        }
    };
    let mut ev = per_workload.swap_remove(decisive);
    let mut why = why;
    if let Some(na) = &not_applicable {
        why.push_str(&format!("; not judged at {na}"));
    }
    ev.not_applicable = not_applicable;
    let confidence = confidence(bench, &ev, &fa.or(fb));
    bench.decided(&format!("{}: {chosen}", p.name));
    Ok(Decision {
        param: p.name.clone(),
        role: "switch".into(),
        default: p.default.clone(),
        chosen,
        near_equal: near,
        confidence,
        why,
        evidence: Evidence::Switch(ev),
        withheld: None,
    })
}

/// Runs one value over `sizes`, keeping every size it can carry when some fail.
fn side(
    bench: &mut Bench<'_>,
    p: &Param,
    fixed: &[(String, String)],
    workload: &'static str,
    sizes: &[u64],
    value: &str,
) -> Result<Side, Halt> {
    let mut settings = fixed.to_vec();
    settings.push((p.name.clone(), value.to_string()));
    let (id, failure) =
        bench.measure_carried(&format!("{}={value}", p.name), workload, sizes, &settings)?;
    Ok(Side { id, failure })
}

/// On a real fabric, further alternating rounds of two sides that both ran, pooled with
/// the first, so one run the machine slowed as a whole does not decide the A/B.
#[allow(clippy::too_many_arguments)]
fn more_rounds(
    bench: &mut Bench<'_>,
    p: &Param,
    fixed: &[(String, String)],
    workload: &'static str,
    sizes: &[u64],
    values: [&str; 2],
    a: Side,
    b: Side,
) -> Result<(Side, Side), Halt> {
    if a.failure.is_some() || b.failure.is_some() || bench.rounds() < 2 {
        return Ok((a, b));
    }
    let mut ids = (vec![a.id], vec![b.id]);
    for _ in 1..bench.rounds() {
        for (v, into) in [(values[0], &mut ids.0), (values[1], &mut ids.1)] {
            let mut settings = fixed.to_vec();
            settings.push((p.name.clone(), v.to_string()));
            into.push(bench.measure(&format!("{}={v}", p.name), workload, sizes, &settings)?);
        }
    }
    Ok((
        Side {
            id: bench.pool(&ids.0),
            failure: None,
        },
        Side {
            id: bench.pool(&ids.1),
            failure: None,
        },
    ))
}

fn compare(
    bench: &Bench<'_>,
    workload: &str,
    a: &Side,
    b: &Side,
    values: [&str; 2],
) -> SwitchEvidence {
    let (ma, mb) = (bench.get(a.id), bench.get(b.id));
    let exact = bench.tuning.virtual_time();
    let mut per_size = Vec::new();
    for pa in &ma.points {
        let Some(pb) = mb.point(pa.size) else {
            continue;
        };
        let v = if exact {
            let ratio = pb.cost_us / pa.cost_us;
            // Virtual time has no noise: any difference is real, but a hair's breadth is
            // rounding in the model, not a protocol.
            let winner = if ratio < 0.999 {
                Some(values[1].to_string())
            } else if ratio > 1.001 {
                Some(values[0].to_string())
            } else {
                None
            };
            SizeVerdict {
                size: pa.size,
                ratio,
                low: ratio,
                high: ratio,
                p_value: None,
                winner,
            }
        } else {
            let iv = stats::median_ratio_interval(
                &pa.samples_us,
                &pb.samples_us,
                RESAMPLES,
                pa.size,
                0.95,
            );
            let p = stats::mann_whitney_p(&pa.samples_us, &pb.samples_us);
            let winner = if p < ALPHA && iv.high < 1.0 {
                Some(values[1].to_string())
            } else if p < ALPHA && iv.low > 1.0 {
                Some(values[0].to_string())
            } else {
                None
            };
            SizeVerdict {
                size: pa.size,
                ratio: iv.estimate,
                low: iv.low,
                high: iv.high,
                p_value: Some(p),
                winner,
            }
        };
        per_size.push(v);
    }
    let ranges = ranges(&per_size);
    let ratios: Vec<f64> = per_size.iter().map(|v| v.ratio).collect();
    SwitchEvidence {
        workload: workload.to_string(),
        values: [values[0].to_string(), values[1].to_string()],
        measurements: [a.id, b.id],
        mean_ratio: geomean(&ratios),
        per_size,
        ranges,
        not_applicable: None,
    }
}

/// Consecutive sizes with one verdict: "1B-2KiB: off faster (ratio 1.08-1.11)".
fn ranges(v: &[SizeVerdict]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1].winner == v[i].winner {
            j += 1;
        }
        let (lo, hi) = v[i..=j].iter().fold((f64::MAX, f64::MIN), |(l, h), x| {
            (l.min(x.ratio), h.max(x.ratio))
        });
        let what = match &v[i].winner {
            Some(w) => format!("{w} faster"),
            None => "no difference".to_string(),
        };
        out.push(format!(
            "{}-{}: {what} (ratio {lo:.3}-{hi:.3})",
            format_size(v[i].size),
            format_size(v[j].size)
        ));
        i = j + 1;
    }
    out
}

fn geomean(xs: &[f64]) -> f64 {
    let v: Vec<f64> = xs
        .iter()
        .copied()
        .filter(|x| x.is_finite() && *x > 0.0)
        .collect();
    if v.is_empty() {
        return 1.0;
    }
    (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp()
}

fn confidence(
    bench: &Bench<'_>,
    ev: &SwitchEvidence,
    failure: &Option<(String, u64, String)>,
) -> String {
    if failure.is_some() {
        return "certain: the other value's run fails".into();
    }
    if bench.tuning.virtual_time() {
        return "exact (virtual time)".into();
    }
    let decided = ev.per_size.iter().filter(|v| v.winner.is_some()).count();
    format!(
        "{decided} of {} sizes differ (Mann-Whitney p < {ALPHA}, 95 % bootstrap interval of the median ratio clear of 1)",
        ev.per_size.len()
    )
}

/// A switch whose mechanism acts at none of the sizes swept: nothing to judge, the default
/// stays.
fn inapplicable(
    p: &Param,
    swept: &[u64],
    why: &str,
    not_applicable: Option<String>,
    workload: &str,
) -> Decision {
    let pair = switch_values(&p.name).expect("a switch");
    let keep = if p.default.is_empty() {
        pair[0].to_string()
    } else {
        p.default.clone()
    };
    Decision {
        param: p.name.clone(),
        role: "switch".into(),
        default: p.default.clone(),
        chosen: keep.clone(),
        near_equal: Vec::new(),
        confidence: "not applicable".into(),
        why: format!(
            "not applicable at any size from {} to {} ({why}); kept {keep}",
            format_size(swept.first().copied().unwrap_or(0)),
            format_size(swept.last().copied().unwrap_or(0))
        ),
        evidence: Evidence::Switch(SwitchEvidence {
            workload: workload.to_string(),
            values: [pair[0].to_string(), pair[1].to_string()],
            measurements: [0, 0],
            per_size: Vec::new(),
            ranges: Vec::new(),
            mean_ratio: 1.0,
            not_applicable,
        }),
        withheld: None,
    }
}

fn kept(p: &Param, why: String, ev: SwitchEvidence) -> Decision {
    Decision {
        param: p.name.clone(),
        role: "switch".into(),
        default: p.default.clone(),
        chosen: p.default.clone(),
        near_equal: Vec::new(),
        confidence: "none".into(),
        why,
        evidence: Evidence::Switch(ev),
        withheld: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(size: u64, ratio: f64, winner: Option<&str>) -> SizeVerdict {
        SizeVerdict {
            size,
            ratio,
            low: ratio,
            high: ratio,
            p_value: None,
            winner: winner.map(String::from),
        }
    }

    #[test]
    fn sizes_with_one_verdict_form_a_range() {
        let r = ranges(&[
            v(1, 0.9, Some("on")),
            v(2, 0.92, Some("on")),
            v(4, 1.0, None),
            v(8, 1.2, Some("off")),
        ]);
        assert_eq!(r.len(), 3);
        assert!(
            r[0].starts_with("1-2: on faster (ratio 0.900-0.920)"),
            "{}",
            r[0]
        );
        assert!(r[1].contains("no difference"));
        assert!(r[2].contains("off faster"));
        assert!((geomean(&[0.5, 2.0]) - 1.0).abs() < 1e-12);
    }
}
