//! The fragment size: a bounded search on large messages. The candidates are the powers of
//! two the parameter allows, from 4 KiB up to the largest message measured; each is judged at
//! the largest sizes of the sweep (where fragments matter) by the objective's workloads:
//! osu_bw for bandwidth, osu_latency for latency (a fragment that streams best can pipeline
//! worst), both for balanced. The search
//! narrows the candidate range by thirds, assuming one best region (too small a fragment
//! pays per-fragment costs, too large a one loses the pipelining), and measures what is left;
//! the default value is always measured too, so the gain is known. A change is made only
//! when it beats the default by more than the tolerance.

use std::collections::BTreeMap;

use bench_core::size::{format_size, parse_size};

use crate::grid;
use crate::measure::{Bench, Halt};
use crate::outcome::{Candidate, Decision, Evidence, FragmentEvidence};
use crate::params::{size_max, size_min};
use crate::request::Param;

/// Fragments smaller than this are never worth a search.
const SMALLEST: u64 = 4 << 10;
/// Below this largest size there is nothing for a fragment size to change.
const LARGE: u64 = 64 << 10;
/// How many of the largest sweep sizes judge a candidate.
const JUDGES: usize = 3;

/// What `tune` could not do, said in one line.
pub enum Skip {
    /// The size range has no message large enough.
    TooSmall(String),
}

pub fn tune(
    bench: &mut Bench<'_>,
    p: &Param,
    fixed: &[(String, String)],
    workloads: &[&'static str],
) -> Result<Result<Decision, Skip>, Halt> {
    let on = workloads.join(" and ");
    let (lo, hi) = bench.tuning.sizes;
    if hi < LARGE {
        return Ok(Err(Skip::TooSmall(format!(
            "{}: no search, the largest message ({}) is below {}; give --sizes up to 1M or more",
            p.name,
            format_size(hi),
            format_size(LARGE)
        ))));
    }
    let sweep = grid::coarse(lo, hi);
    let judges: Vec<u64> = sweep.iter().rev().take(JUDGES).rev().copied().collect();
    let min = size_min(&p.kind).unwrap_or(1).max(SMALLEST);
    let max = size_max(&p.kind).unwrap_or(hi).min(hi.next_power_of_two());
    let mut cands: Vec<u64> = Vec::new();
    let mut c = min.next_power_of_two();
    while c <= max {
        cands.push(c);
        c *= 2;
    }
    let default = parse_size(&p.default).ok();
    if cands.is_empty() {
        return Ok(Err(Skip::TooSmall(format!(
            "{}: no power-of-two candidate between {} and {}",
            p.name,
            format_size(min),
            format_size(max)
        ))));
    }
    let mut search = Search {
        p,
        fixed,
        judges: &judges,
        workloads,
        costs: BTreeMap::new(),
        order: Vec::new(),
    };
    let mut halted = None;
    if let Err(h) = search.narrow(bench, default, &cands) {
        if matches!(h, Halt::Interrupted(_)) {
            return Err(h);
        }
        halted = Some(h);
    }
    let Search { costs, order, .. } = search;
    let best = costs
        .iter()
        .filter(|(_, (c, _))| c.is_finite())
        .min_by(|a, b| a.1 .0.total_cmp(&b.1 .0))
        .map(|(v, (c, _))| (*v, *c));
    let Some((best_v, best_c)) = best else {
        return Err(halted.unwrap_or(Halt::Budget));
    };
    let tol = bench.tuning.tolerance;
    let default_c = default.and_then(|d| costs.get(&d)).map(|(c, _)| *c);
    let chosen = match (default, default_c) {
        (Some(d), Some(c)) if c <= best_c * (1.0 + tol) => d,
        _ => best_v,
    };
    let near: Vec<String> = costs
        .iter()
        .filter(|(_, (c, _))| *c <= best_c * (1.0 + tol))
        .map(|(v, _)| format_size(*v))
        .collect();
    let candidates = order
        .iter()
        .map(|v| {
            let (c, id) = costs[v];
            Candidate {
                value: format_size(*v),
                measurement: id,
                relative_cost: c.is_finite().then_some(c / best_c),
            }
        })
        .collect();
    let why = if Some(chosen) == default {
        format!(
            "the default {} is within {:.0} % of the best candidate ({}) on {on} at {}",
            format_size(chosen),
            tol * 100.0,
            format_size(best_v),
            judges
                .iter()
                .map(|s| format_size(*s))
                .collect::<Vec<_>>()
                .join(", ")
        )
    } else {
        format!(
            "{} moves large messages fastest on {on} at {}{}",
            format_size(chosen),
            judges
                .iter()
                .map(|s| format_size(*s))
                .collect::<Vec<_>>()
                .join(", "),
            default_c
                .map(|c| format!(
                    ", {:.1} % faster than the default",
                    (c / best_c - 1.0) * 100.0
                ))
                .unwrap_or_default()
        )
    };
    let why = if halted.is_some() {
        format!("{why}; the budget ran out before every candidate left was measured")
    } else {
        why
    };
    bench.decided(&format!("{}: {}", p.name, format_size(chosen)));
    Ok(Ok(Decision {
        param: p.name.clone(),
        role: "fragment".into(),
        default: p.default.clone(),
        chosen: format_size(chosen),
        near_equal: near,
        confidence: if bench.tuning.virtual_time() {
            "exact (virtual time)".into()
        } else {
            "measured once per candidate".into()
        },
        why,
        evidence: Evidence::Fragment(FragmentEvidence {
            workload: on.clone(),
            sizes: judges,
            candidates,
            of: cands.len(),
        }),
        withheld: None,
    }))
}

/// The candidates measured so far: value -> (geometric mean cost at the judging sizes,
/// measurement id), and the order they were measured in.
struct Search<'p> {
    p: &'p Param,
    fixed: &'p [(String, String)],
    judges: &'p [u64],
    workloads: &'p [&'static str],
    costs: BTreeMap<u64, (f64, usize)>,
    order: Vec<u64>,
}

impl Search<'_> {
    /// The cost of candidate `v` (infinite when its run fails), measured once.
    fn cost(&mut self, bench: &mut Bench<'_>, v: u64) -> Result<f64, Halt> {
        if let Some((c, _)) = self.costs.get(&v) {
            return Ok(*c);
        }
        let mut s = self.fixed.to_vec();
        s.push((self.p.name.clone(), format_size(v)));
        // The geometric mean over workloads and judging sizes; a failed run rules it out.
        let mut logs = Vec::new();
        let mut id = 0;
        for w in self.workloads {
            let m = bench.measure(
                &format!("{} = {}", self.p.name, format_size(v)),
                w,
                self.judges,
                &s,
            )?;
            id = m;
            let m = bench.get(m);
            if m.failed.is_some() {
                logs.push(f64::INFINITY);
                break;
            }
            logs.extend(self.judges.iter().filter_map(|s| m.cost(*s)).map(f64::ln));
        }
        let c = (logs.iter().sum::<f64>() / logs.len().max(1) as f64).exp();
        self.costs.insert(v, (c, id));
        self.order.push(v);
        Ok(c)
    }

    /// The default, then thirds of the candidate range until three are left, then those.
    fn narrow(
        &mut self,
        bench: &mut Bench<'_>,
        default: Option<u64>,
        cands: &[u64],
    ) -> Result<(), Halt> {
        if let Some(d) = default {
            self.cost(bench, d)?;
        }
        let (mut a, mut b) = (0usize, cands.len() - 1);
        while b - a > 2 {
            let m1 = a + (b - a) / 3;
            let m2 = b - (b - a) / 3;
            if self.cost(bench, cands[m1])? <= self.cost(bench, cands[m2])? {
                b = m2;
            } else {
                a = m1;
            }
        }
        for c in &cands[a..=b] {
            self.cost(bench, *c)?;
        }
        Ok(())
    }
}
