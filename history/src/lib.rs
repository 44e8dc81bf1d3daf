//! history keeps runs over time in an append-only store keyed by git revision, date, host and
//! fabric, turns them into one series per metric and point, and finds change points in each
//! series. The crate never sees the command line.
