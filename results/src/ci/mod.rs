//! Exports for the CI tools users already have: github-action-benchmark's custom JSON and the
//! Bencher Metric Format.
