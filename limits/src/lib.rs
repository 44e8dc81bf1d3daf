//! limits measures what this machine's hardware allows, so that fabbench's own shm and tcp
//! figures can be stated as multiples of it: one cache line bounced between two processes
//! pinned to two CPUs ([`cacheline`]), memcpy's bandwidth at 64 KiB, 1 MiB and 16 MiB
//! ([`memcpy`]), the cost of one cross-memory-attach read ([`cma`]), and a plain loopback TCP
//! ping-pong, blocking and spinning ([`tcp`]). Each measurement becomes a series of a
//! [`results::Run`] ([`run`]), so the limits are written, read back, reported and compared as
//! any run is; [`figures`] gives their medians and bests as a table, and [`against`] states a
//! fabbench run's latency and bandwidth as multiples of them.
//!
//! The second process of a pair is a `fork` of this one ([`process`]): what it works on (the
//! shared line, the buffer CMA reads, the listening socket's address) is inherited, with no
//! launcher protocol to pass it. That is sound because fabbench runs `limits` from its single
//! main thread, before any other thread exists, and the child only spins on memory it
//! inherited, makes system calls, and leaves by `_exit`. Every wait on the other process is
//! bounded ([`wait`]) and names the process and the stage it was in.

pub mod against;
pub mod cacheline;
pub mod cma;
mod error;
pub mod figures;
pub mod memcpy;
pub mod process;
pub mod run;
pub mod tcp;
pub mod wait;
pub mod write;

pub use error::LimitsError;
pub use run::{measure, Request};
