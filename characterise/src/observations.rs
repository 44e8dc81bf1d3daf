//! What characterise measured: for each pattern and message size, the time per message. The
//! patterns are the `loggp` suite's; this is the fit's view of them, kept apart from how they
//! were measured so the fit can be tested on numbers written down by hand.

use std::collections::BTreeMap;

use serde::Serialize;

/// The measured patterns: the `loggp` suite's own.
pub use suites::loggp::Pattern;

/// Times per message in nanoseconds, by pattern and size.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Observations {
    /// Messages per acknowledgement in the stream pattern.
    pub window: u64,
    times: BTreeMap<Pattern, BTreeMap<u64, f64>>,
}

impl Observations {
    pub fn new(window: u64) -> Observations {
        Observations {
            window,
            times: BTreeMap::new(),
        }
    }

    /// Records a time; a size measured again replaces the earlier value.
    pub fn insert(&mut self, pattern: Pattern, size: u64, ns: f64) {
        self.times.entry(pattern).or_default().insert(size, ns);
    }

    pub fn get(&self, pattern: Pattern, size: u64) -> Option<f64> {
        self.times.get(&pattern)?.get(&size).copied()
    }

    /// (size, ns) ascending in size.
    pub fn series(&self, pattern: Pattern) -> Vec<(u64, f64)> {
        self.times
            .get(&pattern)
            .map(|m| m.iter().map(|(&s, &t)| (s, t)).collect())
            .unwrap_or_default()
    }

    /// Sizes every pattern was measured at, ascending.
    pub fn complete_sizes(&self) -> Vec<u64> {
        let mut sizes: Vec<u64> = self.series(Pattern::Pingpong).iter().map(|p| p.0).collect();
        sizes.retain(|&s| Pattern::ALL.iter().all(|&p| self.get(p, s).is_some()));
        sizes
    }
}
