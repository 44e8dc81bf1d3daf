//! report makes one table across stored runs: per suite, metric and size, a column per fabric,
//! run or tunable setting, and ratios against a reference run. Runs are read through the
//! results reader ([`input`]), `--by` decides the columns and their labels ([`columns`]),
//! polars joins and pivots the measurements into a wide frame ([`table`]), and one
//! [`export::Exporter`] per format prints it: an aligned text table, CSV, Markdown with the
//! figures linked, or a self-contained HTML page with the figures inlined. [`output`] writes a
//! report to a file whole or not at all. The crate never sees the command line.

pub mod columns;
pub mod error;
pub mod export;
pub mod input;
pub mod mark;
pub mod output;
pub mod table;
#[cfg(test)]
mod testing;

pub use columns::{By, Column};
pub use error::ReportError;
pub use export::{exporter, Exporter, Figure, Format};
pub use input::{Input, Inputs};
pub use table::{Ratio, Row, Table};

/// A report: its table and what the legend says of it.
#[derive(Debug, Clone)]
pub struct CrossRunReport {
    pub by: By,
    /// How many runs it is made of.
    pub runs: usize,
    /// The run id of the reference run, when there is one.
    pub reference: Option<String>,
    pub table: Table,
}

impl CrossRunReport {
    /// The report of `inputs`, with columns as `by` says and, when `reference` names one of
    /// the inputs (by path or run id), ratios against it.
    pub fn build(
        inputs: &Inputs,
        by: By,
        reference: Option<&str>,
    ) -> Result<CrossRunReport, ReportError> {
        let reference = reference
            .map(|given| {
                inputs.find(given).ok_or_else(|| {
                    let sharing = inputs.iter().filter(|i| i.run_id() == given).count();
                    if sharing > 1 {
                        ReportError::AmbiguousReference {
                            given: given.to_string(),
                            count: sharing,
                            paths: inputs.paths(),
                        }
                    } else {
                        ReportError::Reference {
                            given: given.to_string(),
                            run_ids: inputs.run_ids(),
                        }
                    }
                })
            })
            .transpose()?;
        let columns = columns::columns(inputs, by)?;
        let table = Table::build(inputs, columns, reference)?;
        Ok(CrossRunReport {
            by,
            runs: inputs.len(),
            reference: reference.map(|r| inputs.get(r).run_id().to_string()),
            table,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{at, run};

    fn inputs() -> Inputs {
        Inputs::new(vec![
            (
                "runs/a".into(),
                run("A", &["shm"], &[at("s", "shm", 8, 1.0)]),
            ),
            (
                "runs/b".into(),
                run("B", &["shm"], &[at("s", "shm", 8, 2.0)]),
            ),
        ])
        .unwrap()
    }

    #[test]
    fn the_reference_is_found_by_path_or_run_id() {
        let i = inputs();
        for given in ["runs/b", "B"] {
            let r = CrossRunReport::build(&i, By::Run, Some(given)).unwrap();
            assert_eq!(r.reference.as_deref(), Some("B"));
            assert_eq!(r.table.ratios[0].label, "A/B");
        }
    }

    #[test]
    fn a_reference_not_among_the_inputs_names_them() {
        let e = CrossRunReport::build(&inputs(), By::Run, Some("runs/c"))
            .unwrap_err()
            .to_string();
        assert_eq!(e, "--reference runs/c is not among the runs given (A, B)");
    }

    #[test]
    fn the_same_run_twice_is_refused() {
        let e = Inputs::new(vec![
            ("x/a".into(), run("A", &["shm"], &[])),
            ("y/a".into(), run("A", &["shm"], &[])),
        ])
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "x/a and y/a are copies of the same run, A: give each run once"
        );
        let e = Inputs::new(vec![
            ("x/a".into(), run("A", &["shm"], &[])),
            ("x/a".into(), run("A", &["shm"], &[])),
        ])
        .unwrap_err()
        .to_string();
        assert_eq!(e, "x/a (as x/a) is given twice: give each run once");
    }

    #[test]
    fn two_runs_sharing_an_id_are_both_kept_and_told_apart() {
        // Started in the same second into different --out directories: same id, other data.
        let mut b = run("A", &["shm"], &[at("osu_latency", "shm", 8, 2.0)]);
        b.manifest.start_time = "2026-11-23T10:00:01Z".into();
        let inputs = Inputs::new(vec![
            (
                "x/A".into(),
                run("A", &["shm"], &[at("osu_latency", "shm", 8, 1.0)]),
            ),
            ("y/A".into(), b),
        ])
        .unwrap();
        let cols = columns::columns(&inputs, By::Run).unwrap();
        assert_ne!(cols[0].label, cols[1].label);
        // The id alone is ambiguous as a reference; the path is not.
        let e = CrossRunReport::build(&inputs, By::Run, Some("A")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--reference A: 2 of the runs given have that id; give the run's directory (x/A, y/A)"
        );
        let r = CrossRunReport::build(&inputs, By::Run, Some("y/A")).unwrap();
        assert_eq!(r.table.reference, Some(1));
    }
}
