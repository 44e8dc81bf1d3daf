//! How many ranks a suite runs on: OSU's pairs need exactly two, collectives any number, NPB
//! kernels powers of two or squares.

/// A suite's rank rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RankRule {
    Exactly(usize),
    AtLeast(usize),
    /// 1, 2, 4, 8, ...
    PowerOfTwo,
    /// 1, 4, 9, 16, ...
    Square,
}

impl RankRule {
    pub fn allows(&self, n: usize) -> bool {
        match *self {
            RankRule::Exactly(k) => n == k,
            RankRule::AtLeast(k) => n >= k,
            RankRule::PowerOfTwo => n.is_power_of_two(),
            RankRule::Square => n > 0 && n.isqrt() * n.isqrt() == n,
        }
    }

    pub fn describe(&self) -> String {
        match *self {
            RankRule::Exactly(k) => format!("exactly {k} ranks"),
            RankRule::AtLeast(k) => format!("at least {k} ranks"),
            RankRule::PowerOfTwo => "a power of two of ranks (1, 2, 4, 8, ...)".into(),
            RankRule::Square => "a square number of ranks (1, 4, 9, 16, ...)".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_rules() {
        assert!(RankRule::Exactly(2).allows(2));
        assert!(!RankRule::Exactly(2).allows(1));
        assert!(RankRule::AtLeast(2).allows(8));
        assert!(!RankRule::AtLeast(2).allows(1));
        assert_eq!(RankRule::Exactly(2).describe(), "exactly 2 ranks");
        let pow: Vec<usize> = (0..=17)
            .filter(|n| RankRule::PowerOfTwo.allows(*n))
            .collect();
        assert_eq!(pow, [1, 2, 4, 8, 16]);
        let sq: Vec<usize> = (0..=17).filter(|n| RankRule::Square.allows(*n)).collect();
        assert_eq!(sq, [1, 4, 9, 16]);
    }
}
