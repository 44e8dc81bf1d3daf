//! How many trials a calibration may take: the search's stages each have a bound (the global
//! search's population times its generations, Nelder-Mead's iterations, the polish's, the
//! determination's probes), so their sum bounds the whole. The global search stops once it
//! stalls and descents usually stop before their bound, so it is an upper bound.

use crate::Request;

/// Trials per Nelder-Mead iteration counted in the budget: a reflection and then an expansion
/// or a contraction (a shrink, which costs one per dimension, is rare).
const TRIALS_PER_ITERATION: usize = 2;

/// The most trials a calibration of `free` parameters with a global population of
/// `population` can make.
pub fn trials(req: &Request, free: usize, population: usize) -> usize {
    let simplex = free + 1;
    let descent = |iters: u64| iters as usize * TRIALS_PER_ITERATION + simplex;
    // The card as it is, then the first population and each generation's.
    let global = 1 + population * (req.generations + 1);
    // One start, descended up to `rounds` times.
    let refine = req.rounds * descent(req.iterations);
    // Three shrinking descents on the worst point.
    let polish = if req.polish > 0 {
        3 * descent(req.polish)
    } else {
        0
    };
    // Each parameter moved up and down by every factor; then the final evaluation.
    let determine = free * 2 * crate::determined::FACTORS.len();
    global + refine + polish + determine + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_adds_each_stage_bound() {
        let req = Request::new("rapidio", Vec::new());
        // 8 parameters, 80 points: 1 + 80 x 61 = 4881 for the global search; 2 x (400 + 9)
        // = 818 to refine; 3 x (600 + 9) = 1827 to polish; 8 x 2 x 10 = 160 probes; 1
        // evaluation.
        assert_eq!(trials(&req, 8, 80), 4881 + 818 + 1827 + 160 + 1);
        let no_polish = Request { polish: 0, ..req };
        assert_eq!(trials(&no_polish, 8, 80), 4881 + 818 + 160 + 1);
    }
}
