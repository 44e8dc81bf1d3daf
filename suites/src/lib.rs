//! suites holds fabbench's benchmarks and the framework they share. A suite declares typed
//! parameters and the options that set them, its rank rule, its text layout and the points it
//! measures (fixed, or chosen one at a time from the points so far); the shared driver runs
//! warm-up, timed iterations and validation for every suite the same way and hands rank 0's raw
//! samples over point by point. A suite drives a [`Comm`](transports::comm::Comm) and never
//! knows which fabric is underneath; it reads time only through `comm.now()` (enforced by this
//! crate's clippy.toml and a test). Adding a suite is one module plus one line in [`SUITES`].

pub mod buffer;
pub mod driver;
pub mod erased;
pub mod loggp;
pub mod mpptest;
pub mod nbody;
pub mod npb;
pub mod options;
pub mod osu;
pub mod ranks;
pub mod suite;
pub mod work;

pub use driver::{drive, drive_from, PointSink};
pub use erased::{encode, DynSuite};
pub use options::{Dash, OptionDef, OptionKind, SuiteArgs};
pub use ranks::RankRule;
pub use suite::{
    Adaptive, Bench, Measure, ParamError, Sampled, Sampler, Schedule, Suite, SuiteError,
};
pub use work::{PointWork, Work};

/// The largest message size a run may ask for.
pub const MAX_MESSAGE_SIZE: u64 = 1 << 30;

/// Every suite, in the order `fabbench list` shows them.
pub static SUITES: &[&dyn DynSuite] = &[
    &osu::LATENCY,
    &osu::BW,
    &osu::BIBW,
    &mpptest::MPPTEST,
    &npb::NPB,
    &nbody::NBODY,
    &loggp::LOGGP,
];

pub fn find(name: &str) -> Option<&'static dyn DynSuite> {
    SUITES.iter().copied().find(|s| s.name() == name)
}

pub fn names() -> Vec<&'static str> {
    SUITES.iter().map(|s| s.name()).collect()
}

/// Every option any suite takes, once each (suites that share an option declare it alike).
pub fn all_options() -> Vec<OptionDef> {
    let mut out: Vec<OptionDef> = Vec::new();
    for s in SUITES {
        for o in s.options() {
            if !out.iter().any(|x| x.long == o.long) {
                out.push(*o);
            }
        }
    }
    out
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
    fn names_are_unique_and_shared_options_are_declared_alike() {
        let mut n = names();
        n.sort();
        n.dedup();
        assert_eq!(n.len(), SUITES.len());
        for s in SUITES {
            for o in s.options() {
                let first = all_options()
                    .into_iter()
                    .find(|x| x.long == o.long)
                    .unwrap();
                assert_eq!(&first, o, "{} declares --{} differently", s.name(), o.long);
            }
        }
        let shorts: Vec<char> = all_options().iter().filter_map(|o| o.short).collect();
        let mut unique = shorts.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), shorts.len(), "a short option is taken twice");
    }
}
