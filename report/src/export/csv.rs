//! CSV (`--format csv`): the wide frame as it is, for scripts. Header `suite, metric, unit, size,
//! params`, a column per label, a column per ratio; no legend. A missing cell or ratio is an
//! empty field, and floats are written as the shortest text that reads back to the same double
//! (Rust's `{}` for f64), so a script computes with exactly the report's numbers.

use super::Exporter;
use crate::table::INDEX;
use crate::{CrossRunReport, Figure, ReportError};

pub struct Csv;

fn float(v: Option<f64>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

impl Exporter for Csv {
    fn export(&self, report: &CrossRunReport, _figures: &[Figure]) -> Result<Vec<u8>, ReportError> {
        let bad = |e: ::csv::Error| ReportError::Table(format!("writing CSV: {e}"));
        let mut w = ::csv::Writer::from_writer(Vec::new());
        let header: Vec<&str> = INDEX
            .iter()
            .copied()
            .chain(super::value_headers(report))
            .collect();
        w.write_record(&header).map_err(bad)?;
        for r in report.table.rows()? {
            let mut rec = vec![
                r.suite,
                r.metric,
                r.unit,
                r.size.map(|s| s.to_string()).unwrap_or_default(),
                r.params,
            ];
            rec.extend(r.values.into_iter().map(float));
            rec.extend(r.ratios.into_iter().map(float));
            w.write_record(&rec).map_err(bad)?;
        }
        w.into_inner()
            .map_err(|e| ReportError::Table(format!("writing CSV: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{export, figure};
    use super::*;

    #[test]
    fn the_wide_frame_with_empty_missing_cells() {
        let out = export(&Csv, &[figure()]);
        assert_eq!(
            out,
            "suite,metric,unit,size,params,A,B<&>,B<&>/A\n\
             osu_latency,latency,us,1,,2,,\n\
             osu_latency,latency,us,16,,4,5,1.25\n\
             osu_latency,latency,us,1024,,,9,\n"
        );
    }

    #[test]
    fn floats_read_back_to_the_same_double() {
        for v in [
            0.1 + 0.2,
            1.0 / 3.0,
            31.299400000000002,
            1e-7,
            123456789.123,
        ] {
            assert_eq!(float(Some(v)).parse::<f64>().unwrap(), v);
        }
        assert_eq!(float(None), "");
    }
}
