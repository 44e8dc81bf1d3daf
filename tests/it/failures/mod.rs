//! What a user meets when a job goes wrong: a rank killed, bad input refused before anything
//! runs, runs stopped midway, whose measured points are kept and resumed, results that cannot
//! be written, and strangers at a job's listeners.

mod bad_input;
mod killed_rank;
mod robustness;
mod strangers;
mod unwritten;
