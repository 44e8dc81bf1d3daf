//! bench-core holds what every other fabbench crate stands on and that knows nothing of
//! fabrics or suites: clocks, exact statistics and HdrHistograms of raw samples, byte sizes as
//! users write them, the typed registry of tunables, host facts and CPU topology, the
//! bootstrap service ranks use to find each other, and the local launcher that starts and
//! supervises rank processes.

pub mod bootstrap;
pub mod clock;
pub mod des;
pub mod launcher;
pub mod machine;
pub mod measure;
pub mod size;
pub mod stats;
pub mod tasks;
pub mod tunables;
