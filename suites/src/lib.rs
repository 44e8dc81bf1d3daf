//! suites holds fabbench's benchmarks. A suite drives a [`Comm`] and never knows which fabric
//! is underneath; it reads time only through `comm.now()` (enforced by this crate's
//! clippy.toml and a test), and hands back one [`Point`] per message size with every raw
//! sample. Adding a suite is one module plus one line in [`SUITES`].

pub mod buffer;
pub mod osu;

use bench_core::measure::{Layout, Point};
use serde::{Deserialize, Serialize};
use transports::comm::Comm;
use transports::TransportError;

/// The largest message size a run may ask for.
pub const MAX_MESSAGE_SIZE: u64 = 1 << 30;

/// How many ranks a suite runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RankRule {
    Exactly(usize),
    AtLeast(usize),
}

impl RankRule {
    pub fn allows(&self, n: usize) -> bool {
        match *self {
            RankRule::Exactly(k) => n == k,
            RankRule::AtLeast(k) => n >= k,
        }
    }

    pub fn describe(&self) -> String {
        match *self {
            RankRule::Exactly(k) => format!("exactly {k} ranks"),
            RankRule::AtLeast(k) => format!("at least {k} ranks"),
        }
    }
}

/// Options shared by the point-to-point suites, with OSU's meaning. `None` means the suite's
/// own default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunOptions {
    pub min_size: Option<u64>,
    pub max_size: Option<u64>,
    pub iterations: Option<u64>,
    pub warmup: Option<u64>,
    pub window: Option<u64>,
    pub validate: bool,
    pub tail: bool,
}

/// Why a suite failed.
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    #[error(transparent)]
    Transport(#[from] TransportError),
    #[error("validation failed at size {size}, iteration {iteration}: byte {offset} is {got:#04x}, expected {expected:#04x}")]
    Validation {
        size: u64,
        iteration: u64,
        offset: usize,
        expected: u8,
        got: u8,
    },
    #[error("{0}")]
    Emit(String),
}

/// Where a suite hands each point as soon as it is measured (only rank 0's points are kept).
pub type Emit<'a> = dyn FnMut(Point) -> Result<(), SuiteError> + 'a;

pub trait Suite: Sync {
    fn name(&self) -> &'static str;
    fn summary(&self) -> &'static str;
    fn ranks(&self) -> RankRule;
    fn layout(&self) -> Layout;
    /// The message sizes this suite runs for `opts`, ascending.
    fn sizes(&self, opts: &RunOptions) -> Vec<u64>;
    /// Runs on every rank; `emit` receives rank 0's points in size order.
    fn run(&self, comm: &Comm, opts: &RunOptions, emit: &mut Emit<'_>) -> Result<(), SuiteError>;
}

/// Every suite, in the order `fabbench list` shows them.
pub static SUITES: &[&dyn Suite] = &[&osu::Latency, &osu::Bw, &osu::Bibw];

pub fn find(name: &str) -> Option<&'static dyn Suite> {
    SUITES.iter().copied().find(|s| s.name() == name)
}

pub fn names() -> Vec<&'static str> {
    SUITES.iter().map(|s| s.name()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suites_never_read_a_clock_other_than_comm_now() {
        // The clippy configuration forbids it at lint time; this catches it in `cargo test`.
        let forbidden = ["Instant::now", "SystemTime::now", "RealClock", ".elapsed()"];
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
        let mut stack = vec![std::path::PathBuf::from(dir)];
        let mut checked = 0;
        while let Some(p) = stack.pop() {
            for e in std::fs::read_dir(&p).unwrap().flatten() {
                let path = e.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|x| x == "rs") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
                        for f in forbidden {
                            if line.contains(f) && !line.contains("let forbidden") {
                                panic!("{} reads a clock directly: {line}", path.display());
                            }
                        }
                    }
                    checked += 1;
                }
            }
        }
        assert!(checked >= 2);
    }

    #[test]
    fn rank_rules() {
        assert!(RankRule::Exactly(2).allows(2));
        assert!(!RankRule::Exactly(2).allows(1));
        assert!(RankRule::AtLeast(2).allows(8));
        assert_eq!(RankRule::Exactly(2).describe(), "exactly 2 ranks");
    }
}
