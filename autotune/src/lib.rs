//! autotune finds the protocol settings a fabric runs best with, by measurement, and hands
//! back a configuration to deploy with the evidence. It drives suites through the runner
//! library (in this process on emulated fabrics), never through the command line.
//!
//! The search beats a grid: a threshold (eager/rendezvous) is found by measuring each
//! protocol forced across a coarse logarithmic sweep, fitting a piecewise `t = a + size/b`
//! model per protocol (the `curves` crate), taking the crossover, refining by bisection
//! between neighbouring sizes and confirming by measurement; an on/off setting by an A/B with
//! a statistical test on the raw samples; a fragment size by a bounded search on
//! large-message bandwidth. Every value within a tolerance of the best is reported, and the
//! winners pass a gate before a profile holds them: verified together against the defaults
//! over the full default size range (failing or losing beyond the tolerance at any size, or
//! unconfirmed, keeps the default; see [`gate`]). A switch is judged only at the sizes where
//! the fabric says its mechanism acts. What was found is an
//! [`Outcome`]; the profile, the MPI library's own files, `autotune.json` and a Markdown
//! report are exported from it.

pub mod error;
pub mod exhaustive;
pub mod export;
mod fragment;
pub mod gate;
pub mod grid;
pub mod measure;
pub mod outcome;
pub mod params;
pub mod request;
mod switch;
mod threshold;
mod tune;

pub use error::TuneError;
pub use measure::{Observer, Quiet};
pub use outcome::Outcome;
pub use request::{Objective, Request, Tuning};
pub use tune::{autotune, run};
