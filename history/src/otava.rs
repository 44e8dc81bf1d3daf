//! A view as the CSV Apache Otava's `csv` test type reads: one row per history entry (one test
//! run in Otava's terms), a `time` column, the attributes Otava shows beside each change point
//! (`commit`, `run_id`, `host`), and one column per series. Otava analyses each metric column
//! on its own and groups the change points it finds by row, which is why the series are
//! spread into columns here rather than stacked as the per-series CSV stacks them.
//!
//! A series is named as `fabbench export` names a point and metric
//! ("osu_latency/rapidio/2 ranks/size 1024/latency"), so a column keeps its name however the
//! store grows. An entry with no value for a series leaves that cell empty: Otava's importer
//! refuses an empty cell in a metric it was asked for, which is right, since filling one in
//! would invent a measurement (choose the series every entry has with --suite, --fabric,
//! --metric or --last). An entry with no value in any series shown is left out.

use std::collections::BTreeSet;

use crate::trend::{Trend, View};

/// The header's first columns, before one per series.
pub const FIXED_COLUMNS: [&str; 4] = ["time", "commit", "run_id", "host"];

/// The view as Otava's CSV, ending with a newline.
pub fn render(view: &View) -> String {
    let with_host = hosts(view) > 1;
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = FIXED_COLUMNS.iter().map(|c| c.to_string()).collect();
    header.extend(view.trends.iter().map(|t| column_name(t, with_host)));
    let _ = w.write_record(&header);
    // Each series' values are in entry order, so one cursor per series walks them in step
    // with the entries.
    let mut next = vec![0usize; view.trends.len()];
    for (i, e) in view.entries.iter().enumerate() {
        let cells: Vec<String> = view
            .trends
            .iter()
            .zip(next.iter_mut())
            .map(|(t, at)| match t.series.values.get(*at) {
                Some(v) if v.entry == i => {
                    *at += 1;
                    v.value.to_string()
                }
                _ => String::new(),
            })
            .collect();
        if cells.iter().all(String::is_empty) {
            continue;
        }
        let mut row = vec![
            e.date.clone(),
            e.revision.clone(),
            e.run_id.clone(),
            e.host.hostname.clone(),
        ];
        row.extend(cells);
        let _ = w.write_record(&row);
    }
    String::from_utf8(w.into_inner().expect("writing to memory")).expect("CSV is UTF-8")
}

/// How many hosts the measured (not exact) series come from.
fn hosts(view: &View) -> usize {
    view.trends
        .iter()
        .filter_map(|t| t.series.key.host.as_ref())
        .collect::<BTreeSet<_>>()
        .len()
}

/// "osu_latency/rapidio/2 ranks/size 1024/latency"; a measured series gets " on HOST" when
/// the view holds more than one host, since the same point on two machines is two series.
pub fn column_name(t: &Trend, with_host: bool) -> String {
    let k = &t.series.key;
    let name = format!(
        "{}/{}/{} ranks/{}/{}",
        k.suite,
        k.fabric,
        k.ranks,
        k.point(),
        k.metric
    );
    match (&k.host, with_host) {
        (Some(h), true) => format!("{name} on {h}"),
        _ => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::view_of;

    #[test]
    fn one_row_per_entry_and_one_column_per_series() {
        let view = view_of(&[30.0, 30.0, 36.0]);
        let text = render(&view);
        let mut r = csv::Reader::from_reader(text.as_bytes());
        let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
        assert_eq!(
            header,
            [
                "time",
                "commit",
                "run_id",
                "host",
                "osu_latency/rapidio/2 ranks/size 1/latency",
                "osu_latency/rapidio/2 ranks/size 8/latency",
            ]
        );
        let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 3);
        assert_eq!(&rows[2][0], "2026-01-03T00:00:00Z");
        assert_eq!(&rows[2][1], "r2");
        assert_eq!(&rows[2][2], "run2");
        let latest: f64 = rows[2][4].parse().unwrap();
        assert!((latest - view.trends[0].latest()).abs() < 1e-9, "{text}");
    }

    #[test]
    fn an_entry_without_a_series_leaves_its_cell_empty() {
        let mut view = view_of(&[30.0, 31.0, 32.0]);
        // The first series was not measured by the middle entry.
        view.trends[0].series.values.remove(1);
        let text = render(&view);
        let rows: Vec<Vec<&str>> = text
            .lines()
            .skip(1)
            .map(|l| l.split(',').collect())
            .collect();
        assert_eq!(rows.len(), 3, "{text}");
        assert_eq!(rows[1][4], "", "{text}");
        assert_ne!(rows[1][5], "", "{text}");
        assert_ne!(rows[2][4], "", "the cursor moves on past the gap: {text}");
    }
}
