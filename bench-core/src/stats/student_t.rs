//! Student's t distribution, for the t-tests that confirm change points in a history.
