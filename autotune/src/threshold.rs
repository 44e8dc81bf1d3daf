//! The eager/rendezvous threshold. Each protocol is measured forced (the threshold at its
//! largest value: every size eager; at its smallest: every size rendezvous) across the coarse
//! sweep; a piecewise `t = a + size/b` model is fitted to each; the best coarse threshold
//! brackets the answer between two neighbouring sizes; the fitted lines' crossover gives the
//! first probe inside the bracket, and bisection refines it to an eighth of the gap; the
//! threshold chosen is then confirmed by a run at it.

use bench_core::size::format_size;

use crate::grid;
use crate::measure::{Bench, Halt};
use crate::outcome::{Decision, Evidence, Fit, Probe, ThresholdEvidence};
use crate::params::threshold_limits;
use crate::request::Param;

/// Per-size costs of the two protocols, scored over the workloads: each workload's cost
/// divided by its better protocol's at that size, averaged. A score of 1 is the best.
#[derive(Debug, Clone, Copy)]
struct Pair {
    size: u64,
    eager: f64,
    rendezvous: f64,
}

impl Pair {
    fn eager_wins(&self) -> bool {
        self.eager <= self.rendezvous
    }

    /// The cost under threshold `t`.
    fn under(&self, t: u64) -> f64 {
        if self.size <= t {
            self.eager
        } else {
            self.rendezvous
        }
    }
}

/// The value of `p` that sends every message up to `top` eagerly (as far as the library
/// allows), the one that sends every message by rendezvous, and the header the library counts
/// in the value.
fn forcing_values(p: &Param, top: u64) -> (u64, u64, u64) {
    let (min, max, header) = threshold_limits(&p.name, &p.kind);
    ((top.saturating_add(header)).min(max).max(min), min, header)
}

fn text(v: u64) -> String {
    format_size(v)
}

/// Searches threshold `p` with `fixed` settings held, judged by `workloads`.
pub fn tune(
    bench: &mut Bench<'_>,
    p: &Param,
    fixed: &[(String, String)],
    workloads: &[&'static str],
) -> Result<Decision, Halt> {
    let t = bench.tuning;
    let (lo, hi) = t.sizes;
    let (eager_v, rndv_v, header) = forcing_values(p, hi);
    let sizes = grid::coarse(lo, hi.min(eager_v.saturating_sub(header).max(lo)));
    // The parameter value that makes messages up to `size` eager.
    let value_for = |size: u64| {
        if size == rndv_v {
            rndv_v
        } else {
            (size + header).min(eager_v)
        }
    };
    let with = |v: u64| {
        let mut s = fixed.to_vec();
        s.push((p.name.clone(), text(v)));
        s
    };
    // The coarse sweep of each protocol, forced, per workload. A size eager cannot carry
    // (a message larger than the fabric's queues) caps the search below it: the threshold
    // must send it by rendezvous anyway.
    let mut sizes = sizes;
    let mut eager_ids = Vec::new();
    let mut rndv_ids = Vec::new();
    let mut capped = None;
    for w in workloads {
        let (id, failure) = bench.measure_carried(
            &format!("{}: eager only", p.name),
            w,
            &sizes,
            &with(eager_v),
        )?;
        if let Some((size, why)) = failure {
            sizes.retain(|s| *s < size);
            capped = Some((size, why));
        }
        eager_ids.push(id);
    }
    if sizes.is_empty() {
        let why = capped.map(|c| c.1).unwrap_or_default();
        return Ok(failed_decision(p, &why));
    }
    for w in workloads {
        rndv_ids.push(bench.measure(
            &format!("{}: rendezvous only", p.name),
            w,
            &sizes,
            &with(rndv_v),
        )?);
    }
    for id in &rndv_ids {
        if let Some(why) = &bench.get(*id).failed {
            return Ok(failed_decision(p, why));
        }
    }
    // On a real fabric, more alternating rounds of both sweeps, pooled.
    for (i, w) in workloads.iter().enumerate() {
        let mut e = vec![eager_ids[i]];
        let mut r = vec![rndv_ids[i]];
        for _ in 1..bench.rounds() {
            e.push(bench.measure(
                &format!("{}: eager only", p.name),
                w,
                &sizes,
                &with(eager_v),
            )?);
            r.push(bench.measure(
                &format!("{}: rendezvous only", p.name),
                w,
                &sizes,
                &with(rndv_v),
            )?);
        }
        eager_ids[i] = bench.pool(&e);
        rndv_ids[i] = bench.pool(&r);
    }
    let score = |bench: &Bench<'_>, size: u64, e: &[usize], r: &[usize]| -> Option<Pair> {
        let mut pe = 0.0;
        let mut pr = 0.0;
        for (ei, ri) in e.iter().zip(r) {
            let ce = bench.get(*ei).cost(size)?;
            let cr = bench.get(*ri).cost(size)?;
            let best = ce.min(cr).max(f64::MIN_POSITIVE);
            pe += ce / best;
            pr += cr / best;
        }
        let n = e.len() as f64;
        Some(Pair {
            size,
            eager: pe / n,
            rendezvous: pr / n,
        })
    };
    let mut pairs: Vec<Pair> = sizes
        .iter()
        .filter_map(|s| score(bench, *s, &eager_ids, &rndv_ids))
        .collect();
    // The best coarse threshold: below every size (all rendezvous), or at one of them.
    let candidates: Vec<u64> = std::iter::once(rndv_v)
        .chain(sizes.iter().copied())
        .collect();
    let best_at = |pairs: &[Pair], cands: &[u64]| -> u64 {
        let total = |t: u64| pairs.iter().map(|q| q.under(t).ln()).sum::<f64>();
        *cands
            .iter()
            .min_by(|a, b| total(**a).total_cmp(&total(**b)))
            .expect("candidates")
    };
    let coarse_best = best_at(&pairs, &candidates);
    let (eager_fit, rndv_fit) = (fit(bench, eager_ids[0]), fit(bench, rndv_ids[0]));
    let mut evidence = ThresholdEvidence {
        workload: workloads.join("+"),
        eager_value: text(eager_v),
        rendezvous_value: text(rndv_v),
        eager_sweep: eager_ids[0],
        rendezvous_sweep: rndv_ids[0],
        eager_fit: eager_fit.clone(),
        rendezvous_fit: rndv_fit.clone(),
        model_crossover: None,
        bracket: [coarse_best, coarse_best],
        probes: Vec::new(),
        step: 0,
        confirmation: None,
        confirmed: None,
    };
    let next = sizes.iter().copied().find(|s| *s > coarse_best);
    let mut chosen = coarse_best;
    let mut halted = None;
    if let (Some(next), true) = (next, coarse_best >= lo && coarse_best != rndv_v) {
        evidence.bracket = [coarse_best, next];
        let fine = grid::fine(coarse_best, next);
        let (mut a, mut b) = (0usize, fine.len() - 1);
        let crossing = crossover(&eager_fit, &rndv_fit, coarse_best, next);
        evidence.model_crossover = crossing;
        let mut guess = crossing.map(|x| {
            let j = fine.iter().position(|s| *s as f64 >= x).unwrap_or(b);
            j.clamp(a + 1, b.saturating_sub(1).max(a + 1))
        });
        while b - a > 1 {
            let j = guess.take().unwrap_or((a + b) / 2);
            let size = fine[j];
            let mut e_ids = Vec::new();
            let mut r_ids = Vec::new();
            let mut probe = || -> Result<(), Halt> {
                for w in workloads {
                    let (e, r) = bench.ab(
                        w,
                        &[size],
                        (
                            &format!("{}: probe eager at {}", p.name, text(size)),
                            &with(eager_v),
                        ),
                        (
                            &format!("{}: probe rendezvous at {}", p.name, text(size)),
                            &with(rndv_v),
                        ),
                    )?;
                    e_ids.push(e);
                    r_ids.push(r);
                }
                Ok(())
            };
            if let Err(h) = probe() {
                halted = Some(h);
                break;
            }
            let Some(q) = score(bench, size, &e_ids, &r_ids) else {
                break;
            };
            evidence.probes.push(Probe {
                size,
                eager_us: bench.get(e_ids[0]).cost(size).unwrap_or(f64::NAN),
                rendezvous_us: bench.get(r_ids[0]).cost(size).unwrap_or(f64::NAN),
                eager_wins: q.eager_wins(),
            });
            pairs.push(q);
            if q.eager_wins() {
                a = j;
            } else {
                b = j;
            }
        }
        chosen = fine[a];
        evidence.step = fine[b] - fine[a];
        if halted.is_none() {
            match confirm(
                bench,
                p,
                &with(value_for(chosen)),
                workloads[0],
                [fine[a], fine[b]],
            ) {
                Ok(id) => {
                    evidence.confirmation = Some(id);
                    let m = bench.get(id);
                    let agree = |size: u64, want: f64| {
                        m.cost(size)
                            .is_some_and(|c| c <= want * (1.0 + t.tolerance.max(0.05)))
                    };
                    let e0 = bench.get(eager_ids[0]);
                    let r0 = bench.get(rndv_ids[0]);
                    let probe_cost = |size: u64, eager: bool| {
                        evidence
                            .probes
                            .iter()
                            .find(|q| q.size == size)
                            .map(|q| if eager { q.eager_us } else { q.rendezvous_us })
                            .or_else(|| if eager { e0.cost(size) } else { r0.cost(size) })
                    };
                    evidence.confirmed = Some(
                        m.failed.is_none()
                            && probe_cost(fine[a], true).is_some_and(|c| agree(fine[a], c))
                            && probe_cost(fine[b], false).is_some_and(|c| agree(fine[b], c)),
                    );
                }
                Err(h) => halted = Some(h),
            }
        }
    }
    pairs.sort_by_key(|q| q.size);
    // On a real fabric a change is made only when it clears the tolerance: a default that is
    // within it of the best at every size measured stays.
    let default_size = bench_core::size::parse_size(&p.default).ok().map(|v| {
        if v <= rndv_v {
            rndv_v
        } else {
            v.saturating_sub(header)
        }
    });
    let mut kept_default = false;
    let searched = chosen;
    if let Some(d) = default_size.filter(|_| !t.virtual_time() && halted.is_none()) {
        if d != chosen
            && pairs
                .iter()
                .all(|q| q.under(d) <= q.under(chosen) * (1.0 + t.tolerance))
        {
            chosen = d;
            kept_default = true;
        }
    }
    let near = near_equal(&pairs, chosen, rndv_v, t.tolerance);
    let mut why = explain(p, searched, rndv_v, &evidence, &pairs, halted.is_some());
    if kept_default {
        why = format!(
            "kept the default: at every size measured it is within {:.0} % of the best threshold found ({}); {why}",
            t.tolerance * 100.0,
            text(value_for(searched))
        );
    }
    if let Some((size, reason)) = &capped {
        why.push_str(&format!(
            "; eager cannot carry {} or more on this fabric ({reason}), so the search stopped below it",
            text(*size)
        ));
    }
    if header > 0 && chosen != rndv_v {
        why.push_str(&format!(
            "; the library counts a {header}-byte header in {}, so the value is {} bytes above the largest eager message",
            p.name, header
        ));
    }
    let confidence = if t.virtual_time() {
        "exact (virtual time)".to_string()
    } else {
        match evidence.confirmed {
            Some(true) => "confirmed by a run at the chosen value".to_string(),
            Some(false) => "not confirmed: the run at the chosen value disagreed with the forced-protocol runs beyond the tolerance".to_string(),
            None if evidence.bracket[0] == evidence.bracket[1] => format!(
                "one protocol was faster at every size measured ({} alternating rounds pooled); the verification checks the value",
                bench.rounds()
            ),
            None => "unconfirmed".to_string(),
        }
    };
    if let Some(h) = halted {
        bench.decided(&format!(
            "{}: {} (budget ran out while refining)",
            p.name,
            text(value_for(chosen))
        ));
        if matches!(h, Halt::Interrupted(_)) {
            return Err(h);
        }
    } else {
        bench.decided(&format!("{}: {}", p.name, text(value_for(chosen))));
    }
    Ok(Decision {
        param: p.name.clone(),
        role: "threshold".into(),
        default: p.default.clone(),
        chosen: text(value_for(chosen)),
        near_equal: near.iter().map(|v| text(value_for(*v))).collect(),
        confidence,
        why,
        evidence: Evidence::Threshold(evidence),
        withheld: None,
    })
}

/// A run at the chosen threshold, at the two sizes around it.
fn confirm(
    bench: &mut Bench<'_>,
    p: &Param,
    settings: &[(String, String)],
    workload: &'static str,
    sizes: [u64; 2],
) -> Result<usize, Halt> {
    bench.measure(&format!("{}: confirm", p.name), workload, &sizes, settings)
}

/// The piecewise fit of a measurement's costs.
fn fit(bench: &Bench<'_>, id: usize) -> Vec<Fit> {
    let pts: Vec<(u64, f64)> = bench
        .get(id)
        .points
        .iter()
        .map(|p| (p.size, p.cost_us))
        .collect();
    curves::analyse(&pts, curves::Tolerance::default())
        .map(|a| {
            a.segments
                .iter()
                .map(|s| Fit {
                    from: s.from,
                    to: s.to,
                    latency_us: s.latency_us,
                    bandwidth_mbs: s.bandwidth_mbs,
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The line of `fits` that covers `size` (the nearest one below it otherwise).
fn line_at(fits: &[Fit], size: u64) -> Option<&Fit> {
    fits.iter()
        .rev()
        .find(|f| f.from <= size)
        .or_else(|| fits.first())
}

fn slope(f: &Fit) -> f64 {
    f.bandwidth_mbs.map(|b| 1.0 / b).unwrap_or(0.0)
}

/// Where the eager and rendezvous lines in force over `a..b` cross, when inside it. The eager
/// line is the one through `a` (eager still wins there), the rendezvous one through `b`.
fn crossover(eager: &[Fit], rndv: &[Fit], a: u64, b: u64) -> Option<f64> {
    let e = line_at(eager, a)?;
    let r = line_at(rndv, b)?;
    let ds = slope(e) - slope(r);
    if ds.abs() < 1e-15 {
        return None;
    }
    let x = (r.latency_us - e.latency_us) / ds;
    (x > a as f64 && x < b as f64).then_some(x)
}

/// Every measured threshold candidate no size of which is more than `tol` worse than under
/// the chosen one.
fn near_equal(pairs: &[Pair], chosen: u64, rndv: u64, tol: f64) -> Vec<u64> {
    let mut cands: Vec<u64> = std::iter::once(rndv)
        .chain(pairs.iter().map(|q| q.size))
        .collect();
    cands.sort_unstable();
    cands.dedup();
    cands
        .into_iter()
        .filter(|c| {
            pairs
                .iter()
                .all(|q| q.under(*c) <= q.under(chosen) * (1.0 + tol))
        })
        .collect()
}

fn explain(
    p: &Param,
    chosen: u64,
    rndv: u64,
    ev: &ThresholdEvidence,
    pairs: &[Pair],
    halted: bool,
) -> String {
    let mut s = if chosen == rndv {
        format!(
            "rendezvous was as fast as or faster than eager at every size measured, so {} = {} sends everything by rendezvous",
            p.name,
            text(chosen)
        )
    } else if ev.bracket[0] == ev.bracket[1] {
        format!(
            "eager was as fast as or faster than rendezvous at every size measured up to {}",
            text(chosen)
        )
    } else {
        let last = pairs
            .iter()
            .rfind(|q| q.size <= chosen)
            .map(|q| q.size)
            .unwrap_or(chosen);
        format!(
            "eager is faster up to {} and rendezvous from {}; the fitted lines cross at {}, and {} probe(s) resolved the threshold to {} bytes",
            text(last),
            text(chosen + ev.step),
            ev.model_crossover
                .map(|x| format!("{x:.0} bytes"))
                .unwrap_or_else(|| "no point inside the bracket".into()),
            ev.probes.len(),
            ev.step
        )
    };
    if halted {
        s.push_str("; the budget ran out before the refinement finished");
    }
    s
}

fn failed_decision(p: &Param, why: &str) -> Decision {
    Decision {
        param: p.name.clone(),
        role: "threshold".into(),
        default: p.default.clone(),
        chosen: p.default.clone(),
        near_equal: vec![p.default.clone()],
        confidence: "none: a forced-protocol run failed".into(),
        why: format!("kept the default: forcing one protocol failed ({why})"),
        evidence: Evidence::Threshold(ThresholdEvidence {
            workload: String::new(),
            eager_value: String::new(),
            rendezvous_value: String::new(),
            eager_sweep: 0,
            rendezvous_sweep: 0,
            eager_fit: Vec::new(),
            rendezvous_fit: Vec::new(),
            model_crossover: None,
            bracket: [0, 0],
            probes: Vec::new(),
            step: 0,
            confirmation: None,
            confirmed: None,
        }),
        withheld: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fit(from: u64, to: u64, a: f64, mbs: Option<f64>) -> Fit {
        Fit {
            from,
            to,
            latency_us: a,
            bandwidth_mbs: mbs,
        }
    }

    #[test]
    fn the_fitted_lines_cross_inside_the_bracket_or_not_at_all() {
        // eager: 10 us + size/100 MB/s; rendezvous: 50 us + size/1000 MB/s. They meet where
        // 10 + x/100 = 50 + x/1000, x = 40 / (0.01 - 0.001) = 4444.4 bytes.
        let e = [fit(1, 8192, 10.0, Some(100.0))];
        let r = [fit(1, 8192, 50.0, Some(1000.0))];
        let x = crossover(&e, &r, 4096, 8192).unwrap();
        assert!((x - 4444.44).abs() < 0.01, "{x}");
        assert_eq!(crossover(&e, &r, 8192, 16384), None, "outside the bracket");
        let flat = [fit(1, 8192, 10.0, None)];
        assert_eq!(crossover(&flat, &flat, 4096, 8192), None, "parallel lines");
    }

    #[test]
    fn near_equal_thresholds_are_those_no_size_of_which_is_worse_than_the_tolerance() {
        let pairs = [
            Pair {
                size: 1024,
                eager: 1.0,
                rendezvous: 2.0,
            },
            Pair {
                size: 2048,
                eager: 1.0,
                rendezvous: 1.01,
            },
            Pair {
                size: 4096,
                eager: 1.5,
                rendezvous: 1.0,
            },
        ];
        // Chosen 2048: 1024 (rendezvous at 2048 costs 1 % more) is within 2 %, 4096 and 0 not.
        assert_eq!(near_equal(&pairs, 2048, 0, 0.02), vec![1024, 2048]);
        assert_eq!(near_equal(&pairs, 2048, 0, 0.005), vec![2048]);
    }

    #[test]
    fn forcing_values_respect_what_the_library_accepts() {
        use bench_core::tunables::Kind;
        let p = |name: &str, kind: Kind| Param {
            name: name.into(),
            role: crate::params::Role::Threshold,
            kind,
            default: String::new(),
        };
        let engine = p(
            "eager_limit",
            Kind::Size {
                min: 0,
                max: 1 << 20,
            },
        );
        assert_eq!(forcing_values(&engine, 256 << 10), (256 << 10, 0, 0));
        assert_eq!(forcing_values(&engine, 4 << 20), (1 << 20, 0, 0));
        // The registry's kind carries Open MPI's floor; the ceiling and header are autotune's.
        const EAGER: Kind = Kind::Size {
            min: 56,
            max: 1 << 40,
        };
        let vader = p("mpi.btl_vader_eager_limit", Kind::Optional(&EAGER));
        assert_eq!(forcing_values(&vader, 64 << 10), ((64 << 10) + 56, 56, 56));
        assert_eq!(forcing_values(&vader, 1 << 20), (448 << 10, 56, 56));
    }
}
