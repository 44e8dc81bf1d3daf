//! How many trials a calibration may take: the search's stages each have a bound (the scan's
//! points, Nelder-Mead's iterations, the polish's, the determination's probes), so their sum
//! bounds the whole. Descents usually stop before their bound, so it is an upper bound.

use crate::Request;

/// Trials per Nelder-Mead iteration counted in the budget: a reflection and then an expansion
/// or a contraction (a shrink, which costs one per dimension, is rare).
const TRIALS_PER_ITERATION: usize = 2;

/// The most trials a calibration of `free` parameters over `settings` on/off settings can make.
pub fn trials(req: &Request, free: usize, settings: usize) -> usize {
    let simplex = free + 1;
    let descent = |iters: u64| iters as usize * TRIALS_PER_ITERATION + simplex;
    // The card as it is, then per setting: the start, its scalings and the spread points.
    let scan = 1 + settings * (1 + crate::fit::SCALES.len() + req.scan);
    // Two starts, each descended up to `rounds` times.
    let refine = 2 * req.rounds * descent(req.iterations);
    // Three shrinking descents on the worst point.
    let polish = if req.polish > 0 {
        3 * descent(req.polish)
    } else {
        0
    };
    // Each parameter moved up and down by every factor; then the final evaluation.
    let determine = free * 2 * crate::determined::FACTORS.len();
    scan + refine + polish + determine + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_adds_each_stage_bound() {
        let req = Request::new("rapidio", Vec::new());
        // 8 parameters, one setting: 1 + (1 + 7 + 48) = 57 to scan; 2 x 2 x (400 + 9) = 1636
        // to refine; 3 x (600 + 9) = 1827 to polish; 8 x 2 x 10 = 160 probes; 1 evaluation.
        assert_eq!(trials(&req, 8, 1), 57 + 1636 + 1827 + 160 + 1);
        let no_polish = Request { polish: 0, ..req };
        assert_eq!(trials(&no_polish, 8, 1), 57 + 1636 + 160 + 1);
    }
}
