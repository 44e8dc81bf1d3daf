//! The report's table, made with polars: every run's measurements as long records (one per
//! suite, metric, point and column), joined to the column labels, pivoted into a wide frame
//! with one value column per label, and given a ratio column per non-reference column. Runs
//! with different sizes need no special case: the pivot groups on suite, metric, unit, size and
//! params, and a column that did not measure a row's point has a null there.
//!
//! The wide frame's columns: `suite`, `metric`, `unit`, `size` (bytes; null for points without
//! a size), `params` (the point's other parameters as `name=value;...`, empty for OSU), one
//! value column per label in column order, then one `LABEL/REF` column per ratio. Rows are in
//! the order the suites first appear in the inputs, then by metric, size and params.

use std::collections::BTreeMap;

use polars::lazy::frame::pivot::pivot_stable;
use polars::prelude::{
    col, lit, when, Column as PlColumn, DataFrame, DataType, Expr, IntoLazy, JoinArgs, JoinType,
    JoinValidation, MaintainOrderJoin, PlSmallStr, SortMultipleOptions, NULL,
};

use bench_core::measure::Better;

use crate::columns::Column;
use crate::input::Inputs;
use crate::ReportError;

/// The wide frame's index columns, in order.
pub const INDEX: [&str; 5] = ["suite", "metric", "unit", "size", "params"];

/// A ratio column: the values of `column` over those of `against` (indices into the columns).
#[derive(Debug, Clone, PartialEq)]
pub struct Ratio {
    /// `LABEL/REF`.
    pub label: String,
    pub column: usize,
    pub against: usize,
}

/// One row of the table, as the exporters print it.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub suite: String,
    pub metric: String,
    pub unit: String,
    pub size: Option<u64>,
    pub params: String,
    /// One per column; `None` where the column did not measure the point.
    pub values: Vec<Option<f64>>,
    /// One per ratio; `None` where either value is missing (or the reference's is 0).
    pub ratios: Vec<Option<f64>>,
}

/// The table of a report.
#[derive(Debug, Clone)]
pub struct Table {
    pub columns: Vec<Column>,
    pub ratios: Vec<Ratio>,
    /// The input the ratios are against.
    pub reference: Option<usize>,
    /// Which way each suite's metric is better, as the runs recorded it: what a ratio's mark
    /// reads (lower for a time, higher for a rate).
    better: BTreeMap<(String, String), Better>,
    frame: DataFrame,
}

/// The ratio columns: each column outside the reference run against the reference run's
/// column of the same fabric, or its first column when it has none of that fabric.
pub fn ratios(columns: &[Column], reference: usize) -> Vec<Ratio> {
    let Some(first) = columns.iter().position(|c| c.input == reference) else {
        return Vec::new();
    };
    columns
        .iter()
        .enumerate()
        .filter(|(_, c)| c.input != reference)
        .map(|(i, c)| {
            let against = columns
                .iter()
                .position(|r| r.input == reference && r.fabric == c.fabric)
                .unwrap_or(first);
            Ratio {
                label: format!("{}/{}", c.label, columns[against].label),
                column: i,
                against,
            }
        })
        .collect()
}

/// A column of the frame by name. `col()` would read `^...$` or `*` in a label as a pattern.
fn named(name: &str) -> Expr {
    Expr::Column(PlSmallStr::from(name))
}

/// The long records: one per run, series, point (with samples) and metric.
struct Long {
    input: Vec<u32>,
    fabric: Vec<String>,
    suite: Vec<String>,
    /// Where the suite first appears among the inputs, to sort rows by.
    suite_order: Vec<u32>,
    metric: Vec<String>,
    unit: Vec<String>,
    size: Vec<Option<u64>>,
    params: Vec<String>,
    value: Vec<f64>,
}

impl Long {
    fn of(inputs: &Inputs) -> Long {
        let mut l = Long {
            input: vec![],
            fabric: vec![],
            suite: vec![],
            suite_order: vec![],
            metric: vec![],
            unit: vec![],
            size: vec![],
            params: vec![],
            value: vec![],
        };
        let mut suites: Vec<&str> = Vec::new();
        for (i, input) in inputs.iter().enumerate() {
            for s in &input.run.series {
                let order = match suites.iter().position(|x| *x == s.suite) {
                    Some(o) => o,
                    None => {
                        suites.push(&s.suite);
                        suites.len() - 1
                    }
                };
                // The cell is summary.csv's `value`: the same Point::headline_of that
                // results::model::Record uses, for the same points (those with samples). Run::
                // records() is not used because its records do not carry the point's params.
                for p in s.points.iter().filter(|p| !p.samples_ns.is_empty()) {
                    let params = p.key.params_text();
                    for m in &p.metrics {
                        l.input.push(i as u32);
                        l.fabric.push(s.fabric.clone());
                        l.suite.push(s.suite.clone());
                        l.suite_order.push(order as u32);
                        l.metric.push(m.name.clone());
                        l.unit.push(m.unit.clone());
                        l.size.push(p.key.size);
                        l.params.push(params.clone());
                        l.value.push(p.headline_of(m));
                    }
                }
            }
        }
        l
    }

    fn frame(self) -> Result<DataFrame, ReportError> {
        Ok(DataFrame::new(vec![
            PlColumn::new("input".into(), self.input),
            PlColumn::new("fabric".into(), self.fabric),
            PlColumn::new("suite".into(), self.suite),
            PlColumn::new("suite_order".into(), self.suite_order),
            PlColumn::new("metric".into(), self.metric),
            PlColumn::new("unit".into(), self.unit),
            PlColumn::new("size".into(), self.size),
            PlColumn::new("params".into(), self.params),
            PlColumn::new("value".into(), self.value),
        ])?)
    }
}

impl Table {
    /// The table of `inputs` in `columns` (labels unique, see [`crate::columns`]), with ratios
    /// against the input `reference` when given.
    pub fn build(
        inputs: &Inputs,
        columns: Vec<Column>,
        reference: Option<usize>,
    ) -> Result<Table, ReportError> {
        let long = Long::of(inputs);
        let better = inputs
            .iter()
            .flat_map(|i| &i.run.series)
            .flat_map(|s| {
                s.points
                    .iter()
                    .flat_map(|p| &p.metrics)
                    .map(|m| ((s.suite.clone(), m.name.clone()), m.better))
            })
            .collect();
        if long.value.is_empty() {
            return Err(ReportError::Empty {
                paths: inputs.paths(),
            });
        }
        let labels = DataFrame::new(vec![
            PlColumn::new(
                "input".into(),
                columns.iter().map(|c| c.input as u32).collect::<Vec<_>>(),
            ),
            PlColumn::new(
                "fabric".into(),
                columns.iter().map(|c| c.fabric.clone()).collect::<Vec<_>>(),
            ),
            PlColumn::new(
                "label".into(),
                columns.iter().map(|c| c.label.clone()).collect::<Vec<_>>(),
            ),
        ])?;
        let ratios = reference.map(|r| ratios(&columns, r)).unwrap_or_default();
        let ratio_exprs: Vec<Expr> = ratios
            .iter()
            .map(|r| {
                let v = named(&columns[r.column].label);
                let against = named(&columns[r.against].label);
                // A ratio against 0 would be infinite or NaN: no ratio, like a missing value.
                when(against.clone().neq(lit(0.0)))
                    .then(v / against)
                    .otherwise(lit(NULL))
                    .cast(DataType::Float64)
                    .alias(r.label.as_str())
            })
            .collect();
        let mut index = vec!["suite_order"];
        index.extend(INDEX);
        let keys = [named("input"), named("fabric")];
        let mut join = JoinArgs::new(JoinType::Inner);
        // Each (run, fabric) has exactly one label: a second would duplicate measurements.
        join.validation = JoinValidation::ManyToOne;
        join.maintain_order = MaintainOrderJoin::Left;
        let joined = long
            .frame()?
            .lazy()
            .join(labels.lazy(), keys.clone(), keys, join)
            .collect()?;
        // One value column, so each label's column is named by the label itself. The pivot is
        // eager (polars cannot know a pivot's columns before it runs); `stable` keeps the
        // index groups in the order they first appear.
        let mut wide = pivot_stable(
            &joined,
            ["label"],
            Some(index.clone()),
            Some(["value"]),
            false,
            // One record per cell: a column's point is measured once per metric. In this
            // polars the pivot names its aggregated values column "" (`element()` is refused).
            Some(col("").first()),
            None,
        )?;
        // A label no record landed under has no column after the pivot: it gets one of nulls,
        // so every column of the report is there, in column order.
        let height = wide.height();
        for c in &columns {
            if wide.column(&c.label).is_err() {
                wide.with_column(PlColumn::full_null(
                    c.label.as_str().into(),
                    height,
                    &DataType::Float64,
                ))?;
            }
        }
        let order: Vec<Expr> = INDEX
            .iter()
            .map(|n| named(n))
            .chain(columns.iter().map(|c| named(&c.label)))
            .chain(ratios.iter().map(|r| named(&r.label)))
            .collect();
        let frame = wide
            .lazy()
            .sort(
                ["suite_order", "metric", "size", "params"],
                SortMultipleOptions::new()
                    .with_nulls_last(true)
                    .with_maintain_order(true),
            )
            .with_columns(ratio_exprs)
            .select(order)
            .collect()?;
        Ok(Table {
            columns,
            ratios,
            reference,
            better,
            frame,
        })
    }

    /// Which way `metric` of `suite` is better; `None` for one no run measured.
    pub fn better(&self, suite: &str, metric: &str) -> Option<Better> {
        self.better
            .get(&(suite.to_string(), metric.to_string()))
            .copied()
    }

    /// The wide frame (see the module's documentation for its columns).
    pub fn frame(&self) -> &DataFrame {
        &self.frame
    }

    /// The frame's rows, for printing.
    pub fn rows(&self) -> Result<Vec<Row>, ReportError> {
        let f = &self.frame;
        let text = |name: &str| -> Result<Vec<String>, ReportError> {
            Ok(f.column(name)?
                .str()?
                .iter()
                .map(|s| s.unwrap_or_default().to_string())
                .collect())
        };
        let floats = |name: &str| -> Result<Vec<Option<f64>>, ReportError> {
            Ok(f.column(name)?.f64()?.iter().collect())
        };
        let suite = text("suite")?;
        let metric = text("metric")?;
        let unit = text("unit")?;
        let params = text("params")?;
        let size: Vec<Option<u64>> = f.column("size")?.u64()?.iter().collect();
        let values = self
            .columns
            .iter()
            .map(|c| floats(&c.label))
            .collect::<Result<Vec<_>, _>>()?;
        let ratios = self
            .ratios
            .iter()
            .map(|r| floats(&r.label))
            .collect::<Result<Vec<_>, _>>()?;
        Ok((0..f.height())
            .map(|i| Row {
                suite: suite[i].clone(),
                metric: metric[i].clone(),
                unit: unit[i].clone(),
                size: size[i],
                params: params[i].clone(),
                values: values.iter().map(|v| v[i]).collect(),
                ratios: ratios.iter().map(|r| r[i]).collect(),
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use bench_core::measure::PointKey;

    use super::*;
    use crate::columns::{columns, By};
    use crate::testing::{at, run};

    fn table(inputs: &Inputs, by: By, reference: Option<usize>) -> Table {
        Table::build(inputs, columns(inputs, by).unwrap(), reference).unwrap()
    }

    #[test]
    fn different_size_sets_join_with_missing_cells_and_ratios_by_hand() {
        let a = run(
            "A",
            &["rapidio"],
            &[
                at("osu_latency", "rapidio", 1, 2.0),
                at("osu_latency", "rapidio", 16, 4.0),
            ],
        );
        let b = run(
            "B",
            &["rapidio"],
            &[
                at("osu_latency", "rapidio", 16, 5.0),
                at("osu_latency", "rapidio", 1024, 9.0),
            ],
        );
        let inputs = Inputs::new(vec![("a".into(), a), ("b".into(), b)]).unwrap();
        let t = table(&inputs, By::Run, Some(0));
        let names: Vec<String> = t
            .frame()
            .get_column_names()
            .iter()
            .map(|n| n.to_string())
            .collect();
        assert_eq!(
            names,
            ["suite", "metric", "unit", "size", "params", "A", "B", "B/A"]
        );
        let rows = t.rows().unwrap();
        // Per row: size, then the values of A and B, then the ratio B/A.
        type Cells = (Option<u64>, Vec<Option<f64>>, Vec<Option<f64>>);
        let got: Vec<Cells> = rows
            .iter()
            .map(|r| (r.size, r.values.clone(), r.ratios.clone()))
            .collect();
        assert_eq!(
            got,
            [
                (Some(1), vec![Some(2.0), None], vec![None]),
                (Some(16), vec![Some(4.0), Some(5.0)], vec![Some(1.25)]),
                (Some(1024), vec![None, Some(9.0)], vec![None]),
            ]
        );
        assert!(rows
            .iter()
            .all(|r| r.suite == "osu_latency" && r.metric == "latency" && r.unit == "us"));
    }

    #[test]
    fn ratios_are_against_the_reference_runs_column_of_the_same_fabric() {
        let a = run(
            "A",
            &["shm", "tcp"],
            &[at("s", "shm", 8, 1.0), at("s", "tcp", 8, 10.0)],
        );
        let b = run(
            "B",
            &["tcp", "shm", "bxi"],
            &[
                at("s", "tcp", 8, 20.0),
                at("s", "shm", 8, 3.0),
                at("s", "bxi", 8, 4.0),
            ],
        );
        let inputs = Inputs::new(vec![("a".into(), a), ("b".into(), b)]).unwrap();
        let t = table(&inputs, By::Fabric, Some(0));
        let labels: Vec<&str> = t.ratios.iter().map(|r| r.label.as_str()).collect();
        // bxi is not in the reference run: against its first column.
        assert_eq!(
            labels,
            ["tcp · B/tcp · A", "shm · B/shm · A", "bxi/shm · A"]
        );
        let rows = t.rows().unwrap();
        assert_eq!(rows[0].ratios, [Some(2.0), Some(3.0), Some(4.0)]);
        // The reference may be any input, not only the first.
        let t = table(&inputs, By::Fabric, Some(1));
        let labels: Vec<&str> = t.ratios.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels, ["shm · A/shm · B", "tcp · A/tcp · B"]);
        assert_eq!(t.rows().unwrap()[0].ratios, [Some(1.0 / 3.0), Some(0.5)]);
    }

    #[test]
    fn without_a_reference_there_are_no_ratio_columns() {
        let inputs = Inputs::new(vec![
            ("a".into(), run("A", &["shm"], &[at("s", "shm", 8, 1.0)])),
            ("b".into(), run("B", &["shm"], &[at("s", "shm", 8, 2.0)])),
        ])
        .unwrap();
        let t = table(&inputs, By::Run, None);
        assert_eq!(t.frame().width(), INDEX.len() + 2);
        assert!(t.rows().unwrap()[0].ratios.is_empty());
    }

    #[test]
    fn a_zero_reference_gives_no_ratio() {
        let inputs = Inputs::new(vec![
            ("a".into(), run("A", &["shm"], &[at("s", "shm", 8, 0.0)])),
            ("b".into(), run("B", &["shm"], &[at("s", "shm", 8, 2.0)])),
        ])
        .unwrap();
        let t = table(&inputs, By::Run, Some(0));
        assert_eq!(t.rows().unwrap()[0].ratios, [None]);
    }

    #[test]
    fn rows_follow_suite_order_then_metric_and_size() {
        let a = run(
            "A",
            &["shm"],
            &[
                at("zeta", "shm", 64, 1.0),
                at("zeta", "shm", 8, 1.0),
                at("alpha", "shm", 2, 1.0),
            ],
        );
        let b = run(
            "B",
            &["shm"],
            &[at("alpha", "shm", 1, 1.0), at("zeta", "shm", 16, 1.0)],
        );
        let inputs = Inputs::new(vec![("a".into(), a), ("b".into(), b)]).unwrap();
        let rows = table(&inputs, By::Run, None).rows().unwrap();
        let order: Vec<(&str, Option<u64>)> =
            rows.iter().map(|r| (r.suite.as_str(), r.size)).collect();
        assert_eq!(
            order,
            [
                ("zeta", Some(8)),
                ("zeta", Some(16)),
                ("zeta", Some(64)),
                ("alpha", Some(1)),
                ("alpha", Some(2)),
            ]
        );
    }

    #[test]
    fn points_without_a_size_keep_their_params() {
        let key = |class: &str| PointKey::params([("class", class.to_string())]);
        let a = run(
            "A",
            &["shm"],
            &[("npb", "shm", key("B"), 3.0), ("npb", "shm", key("A"), 1.0)],
        );
        let inputs = Inputs::new(vec![("a".into(), a)]).unwrap();
        let rows = table(&inputs, By::Run, None).rows().unwrap();
        let got: Vec<(Option<u64>, &str, Option<f64>)> = rows
            .iter()
            .map(|r| (r.size, r.params.as_str(), r.values[0]))
            .collect();
        assert_eq!(
            got,
            [(None, "class=A", Some(1.0)), (None, "class=B", Some(3.0))]
        );
    }

    #[test]
    fn a_cell_is_summary_csvs_value() {
        let a = run(
            "A",
            &["shm"],
            &[at("s", "shm", 1, 1.5), at("s", "shm", 2, 2.25)],
        );
        let want: Vec<f64> = a.records().iter().map(|r| r.value).collect();
        let inputs = Inputs::new(vec![("a".into(), a)]).unwrap();
        let got: Vec<f64> = table(&inputs, By::Run, None)
            .rows()
            .unwrap()
            .iter()
            .map(|r| r.values[0].unwrap())
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn runs_without_points_are_an_error() {
        let inputs = Inputs::new(vec![("dir/a".into(), run("A", &["shm"], &[]))]).unwrap();
        let e = Table::build(&inputs, columns(&inputs, By::Run).unwrap(), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("dir/a"), "{e}");
    }

    #[test]
    fn labels_that_look_like_patterns_are_plain_names() {
        let inputs = Inputs::new(vec![
            ("a".into(), run("^A$", &["shm"], &[at("s", "shm", 8, 1.0)])),
            ("b".into(), run("*", &["shm"], &[at("s", "shm", 8, 2.0)])),
        ])
        .unwrap();
        let t = table(&inputs, By::Run, Some(0));
        assert_eq!(t.rows().unwrap()[0].ratios, [Some(2.0)]);
    }
}
