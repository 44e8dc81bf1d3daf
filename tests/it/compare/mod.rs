//! `fabbench compare`: two runs (or two sides of replicates) decided point by point, and a
//! run checked against a file of reference values.

mod references;
mod verdicts;
