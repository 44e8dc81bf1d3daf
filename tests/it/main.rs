//! fabbench's integration tests, in one binary so cargo links the workspace once rather than
//! once per file. They are filed by what a user does: one module per `fabbench` command (`run`,
//! `plot`, `compare`, `history`, `export`, `autotune`, `characterise`, `calibrate`, `report`,
//! `limits`, `list`), `options` for the spellings every command shares, and `failures` for what
//! a user meets when a job goes wrong (a killed rank, bad input, a stopped run). Most start the
//! real `fabbench` binary; those of `run::library` and `run::read_back` call the libraries it is
//! built from. Tests that start jobs take turns through `common::serial()`, as the jobs spin on
//! their cores.
//!
//! Some need what a plain `cargo test` does not have: `run::mpi` is built with `--features mpi`
//! only, and `run::hdrhistogram_java` is ignored unless asked for
//! (`cargo test --release --test it -- --ignored hdrhistogram_java`).

mod common;

mod autotune;
mod calibrate;
mod characterise;
mod compare;
mod export;
mod failures;
mod history;
mod limits;
mod list;
mod options;
mod plot;
mod report;
mod report_page;
mod run;
