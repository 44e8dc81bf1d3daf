//! How well the table pins each fitted value: holding the others, the factor the value can
//! move by (up or down) before the fit's cost rises by a tenth, or by 0.01 where the fit is
//! near exact. A narrow factor means the table sees the parameter clearly; a value that can
//! move tenfold without a change is one the table does not see at all.

use crate::fit::Problem;

/// Factors tried, from fine to coarse.
pub const FACTORS: &[f64] = &[1.01, 1.02, 1.05, 1.1, 1.2, 1.5, 2.0, 3.0, 5.0, 10.0];

#[derive(Debug, Clone, serde::Serialize)]
pub struct Determination {
    /// The largest factor (each way) that keeps the cost within the allowance; None when even
    /// tenfold does (the table does not see the parameter).
    pub within_factor: Option<f64>,
    pub verdict: &'static str,
}

/// Each free parameter's determination around the best unit point `best` of cost `cost`.
pub fn determine(p: &Problem, best: &[f64], cost: f64) -> Vec<Determination> {
    let allowed = cost * 1.1 + 0.01;
    (0..best.len())
        .map(|i| {
            let f = &p.free[i];
            let x = f.from_unit(best[i]);
            let mut within = None;
            for &k in FACTORS {
                let mut worst: f64 = 0.0;
                for y in [x * k, x / k] {
                    let mut u = best.to_vec();
                    u[i] = f.to_unit(y);
                    let c = p.values(&u).map(|v| p.cost_of(&v)).unwrap_or(f64::INFINITY);
                    worst = worst.max(c);
                }
                if worst > allowed {
                    break;
                }
                within = Some(k);
            }
            let verdict = match within {
                None => "well determined (1 % changes the fit)",
                Some(k) if k <= 1.1 => "well determined",
                Some(k) if k <= 2.0 => "loosely determined",
                Some(k) if k < 10.0 => "weakly determined",
                Some(_) => "not seen by the table",
            };
            Determination {
                within_factor: within,
                verdict,
            }
        })
        .collect()
}
