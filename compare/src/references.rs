//! Reference-file mode (ReFrame style): each metric of a run checked against a value with
//! lower and upper tolerances and a unit.
