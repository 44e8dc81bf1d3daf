//! One module per subcommand, each holding its arguments (a clap `Args` struct) and its `run`,
//! which returns `Result<(), Failure>` for `main` to map to an exit status through
//! [`crate::exit`]. A command turns its arguments into a library request, hands it over, and
//! prints what comes back; the work itself is in the library crates.

pub mod autotune;
pub mod calibrate;
pub mod characterise;
pub mod compare;
pub mod export;
pub mod history;
pub mod limits;
pub mod list;
pub mod plot;
pub mod report;
pub mod run;
