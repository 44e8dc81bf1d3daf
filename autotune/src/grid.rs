//! The message sizes autotune measures at: a coarse logarithmic sweep (doubling, as OSU's),
//! and between two neighbouring sizes of it the finer steps a threshold is refined to (eighths
//! of the gap, so a threshold is resolved to 1/8 of an octave).

/// How many steps a gap between neighbouring coarse sizes is divided into.
pub const STEPS_PER_OCTAVE: u64 = 8;

/// The largest size a deployed profile is verified to: OSU's default largest message (the
/// suggested `fabbench run` goes that far), or the tuning's own when larger.
pub fn verified_top(hi: u64) -> u64 {
    hi.max(suites::osu::DEFAULT_MAX_SIZE)
}

/// `lo`, `2 lo`, `4 lo` ... up to `hi`.
pub fn coarse(lo: u64, hi: u64) -> Vec<u64> {
    let mut out = Vec::new();
    let mut s = lo.max(1);
    while s <= hi {
        out.push(s);
        s *= 2;
    }
    out
}

/// The sizes from `a` to `b` (`a < b`) in equal steps of `(b - a) / 8`, both ends included,
/// rounded to whole bytes (fewer when the gap is under 8 bytes).
pub fn fine(a: u64, b: u64) -> Vec<u64> {
    let mut out: Vec<u64> = (0..=STEPS_PER_OCTAVE)
        .map(|j| a + ((b - a) * j + STEPS_PER_OCTAVE / 2) / STEPS_PER_OCTAVE)
        .collect();
    out.dedup();
    out
}

/// Every coarse size and the fine steps between each pair: the grid an exhaustive search of a
/// threshold covers.
pub fn all_fine(lo: u64, hi: u64) -> Vec<u64> {
    let c = coarse(lo, hi);
    let mut out = vec![c[0]];
    for w in c.windows(2) {
        out.extend(fine(w[0], w[1]).into_iter().skip(1));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coarse_doubles_and_fine_divides_in_eighths() {
        assert_eq!(coarse(1, 16), vec![1, 2, 4, 8, 16]);
        assert_eq!(coarse(3, 20), vec![3, 6, 12]);
        assert_eq!(fine(8192, 16384).len(), 9);
        assert_eq!(fine(8192, 16384)[1], 9216);
        assert_eq!(fine(2, 4), vec![2, 3, 4]);
        let all = all_fine(1024, 4096);
        assert_eq!(all.len(), 17);
        assert!(all.windows(2).all(|w| w[0] < w[1]));
    }
}
