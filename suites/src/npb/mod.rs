//! The NAS Parallel Benchmarks' kernels EP, IS, CG, MG and FT, as NPB 3.4 specifies them:
//! problem sizes and iterations per class, NPB's random numbers, verification against the
//! published reference values, NPB's Mop/s and its report.

pub mod cg;
pub mod class;
pub mod ep;
pub mod ft;
pub mod is;
pub mod kernel;
pub mod mg;
pub mod random;
pub mod suite;
#[cfg(test)]
pub mod testing;

pub use class::Class;
pub use kernel::{Kernel, Meter, Problem, Verification};
pub use suite::{NpbParams, KERNELS, NPB};
