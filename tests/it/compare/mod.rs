//! `fabbench compare`: two runs (or two sides of replicates) decided point by point, and a
//! run checked against a file of reference values.

mod one_run;
mod references;
mod verdicts;
