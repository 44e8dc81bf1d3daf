//! The table beside the calibrated card, as a plots `Figure`: per suite of the table, its
//! values against message size as markers, the calibrated card's prediction as a line and
//! the card's before the fit dashed; and a last panel with each point's error in percent
//! against a zero level. calibrate writes it beside its report; `fabbench plot` draws it
//! again from a calibration directory's calibration.json ([`read`]).

use std::path::Path;

use plots::figure::{Axis, Corner, Figure, Level, Line, Panel, Scale, Stroke, Ticks};
use plots::Chart;

use crate::error::CalibrateError;
use crate::{Outcome, PointFit};

/// Palette entries: the card before the fit in grey, apart from the suites' colours.
const BEFORE: usize = 9;

/// What the chart needs of a calibration, as calibration.json holds it.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Drawn {
    pub fabric: String,
    pub tables: Vec<String>,
    pub points: Vec<PointFit>,
}

impl From<&Outcome> for Drawn {
    fn from(o: &Outcome) -> Drawn {
        Drawn {
            fabric: o.fabric.clone(),
            tables: o.tables.clone(),
            points: o.points.clone(),
        }
    }
}

/// The chart of a calibration directory: None when `dir` has no calibration.json.
pub fn read(dir: &Path) -> Result<Option<Chart>, CalibrateError> {
    let path = dir.join("calibration.json");
    if !path.is_file() {
        return Ok(None);
    }
    let bad = |why: String| CalibrateError::Request(format!("{}: {why}", path.display()));
    let text = results::read::read_regular(&path).map_err(|e| bad(e.to_string()))?;
    let d: Drawn = serde_json::from_str(&text)
        .map_err(|e| bad(format!("not a calibration's calibration.json: {e}")))?;
    Ok(Some(chart(&d)))
}

fn unit(suite: &str) -> &'static str {
    if suite == "osu_latency" {
        "us"
    } else {
        "MB/s"
    }
}

/// Points with a positive size and value: the only ones a log axis shows.
fn positive(v: impl Iterator<Item = (u64, Option<f64>)>) -> Vec<(f64, f64)> {
    v.filter_map(|(s, y)| Some((s as f64, y?)))
        .filter(|&(s, y)| s > 0.0 && y > 0.0 && y.is_finite())
        .collect()
}

/// The chart `calibrate-FABRIC`.
pub fn chart(d: &Drawn) -> Chart {
    let mut suites: Vec<&str> = Vec::new();
    for p in &d.points {
        if !suites.contains(&p.suite.as_str()) {
            suites.push(&p.suite);
        }
    }
    let mut panels = Vec::new();
    let mut errors = Panel::new(
        Axis::sizes(),
        Axis::new("error (%)", Scale::Linear, Ticks::Number),
    );
    errors.levels.push(Level {
        y: 0.0,
        label: String::new(),
    });
    for (i, suite) in suites.iter().enumerate() {
        let mine: Vec<&PointFit> = d.points.iter().filter(|p| p.suite == *suite).collect();
        let measured = positive(mine.iter().map(|p| (p.size, Some(p.measured))));
        let calibrated = positive(mine.iter().map(|p| (p.size, p.emulated)));
        let before = positive(mine.iter().map(|p| (p.size, p.before)));
        let values: Vec<f64> = measured
            .iter()
            .chain(&calibrated)
            .chain(&before)
            .map(|p| p.1)
            .collect();
        let (lo, hi) = values.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
        let label = format!("{suite} ({})", unit(suite));
        // Latencies from 1 B to MiB span decades; a bandwidth within one reads best linear.
        let y = if hi >= 10.0 * lo {
            Axis::new(label, Scale::Log10, Ticks::Number)
        } else {
            Axis::new(label, Scale::Linear, Ticks::Number).starting_at_zero()
        };
        let mut panel = Panel::new(Axis::sizes(), y);
        panel.legend = if *suite == "osu_latency" {
            Corner::UpperLeft
        } else {
            Corner::LowerRight
        };
        panel.lines.push(Line {
            name: "table".into(),
            points: measured,
            stroke: Stroke::Markers,
            colour: i,
        });
        panel.lines.push(Line {
            name: "calibrated card".into(),
            points: calibrated,
            stroke: Stroke::Solid,
            colour: i,
        });
        panel.lines.push(Line {
            name: "card before".into(),
            points: before,
            stroke: Stroke::Dashed,
            colour: BEFORE,
        });
        panels.push(panel);
        errors.lines.push(Line {
            name: suite.to_string(),
            points: mine
                .iter()
                .filter(|p| p.size > 0)
                .filter_map(|p| Some((p.size as f64, 100.0 * p.error?)))
                .collect(),
            stroke: Stroke::SolidMarked,
            colour: i,
        });
    }
    errors.legend = Corner::UpperRight;
    panels.push(errors);
    let worst = d
        .points
        .iter()
        .filter_map(|p| p.error)
        .map(f64::abs)
        .fold(None, |w: Option<f64>, e| Some(w.map_or(e, |w| w.max(e))));
    Chart {
        name: format!("calibrate-{}", d.fabric),
        figure: Figure::new(
            format!(
                "{}: the calibrated card against {}",
                d.fabric,
                d.tables.join(", ")
            ),
            format!(
                "markers the table, lines the calibrated card, dashed the card before{}",
                worst
                    .map(|w| format!(" · worst error {:.1} %", 100.0 * w))
                    .unwrap_or_default()
            ),
            panels,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(suite: &str, size: u64, measured: f64, emulated: f64) -> PointFit {
        PointFit {
            suite: suite.into(),
            size,
            measured,
            emulated: Some(emulated),
            before: Some(measured * 2.0),
            error: (measured > 0.0).then(|| (emulated - measured) / measured),
        }
    }

    #[test]
    fn a_panel_per_suite_and_the_errors_in_percent_around_zero() {
        let d = Drawn {
            fabric: "rapidio".into(),
            tables: vec!["paper.csv".into()],
            points: vec![
                point("osu_latency", 1, 10.0, 11.0),
                point("osu_latency", 4096, 100.0, 90.0),
                point("osu_bw", 1, 0.0, 0.02),
                point("osu_bw", 4096, 50.0, 55.0),
            ],
        };
        let c = chart(&d);
        assert_eq!(c.name, "calibrate-rapidio");
        let p = &c.figure.panels;
        assert_eq!(p.len(), 3);
        assert_eq!(p[0].y.label, "osu_latency (us)");
        assert_eq!(p[0].lines[0].points, [(1.0, 10.0), (4096.0, 100.0)]);
        assert_eq!(p[0].lines[1].points, [(1.0, 11.0), (4096.0, 90.0)]);
        // bw's 0.00 at 1 B is off the log axis and out of the fit: no marker, no error.
        assert_eq!(p[1].lines[0].points, [(4096.0, 50.0)]);
        let e = &p[2];
        assert_eq!(e.levels[0].y, 0.0);
        let lat: Vec<(f64, f64)> = e.lines[0].points.clone();
        assert_eq!(lat.len(), 2);
        assert!((lat[0].1 - 10.0).abs() < 1e-9 && (lat[1].1 + 10.0).abs() < 1e-9);
        assert_eq!(e.lines[1].points.len(), 1);
        assert!(c.figure.subtitle.contains("worst error 10.0 %"));
        assert!(c.svg().unwrap().contains("error (%)"));
        let layout = plots::layout::layout(&c.figure);
        assert!(layout.problems().is_empty(), "{:#?}", layout.problems());
    }
}
