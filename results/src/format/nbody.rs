//! The nbody code's report, one block per run in NPB's `name = value` layout: what was
//! simulated, the time, time per step, interactions per second, how the time divides between
//! computing and communicating, and the checks (energy drift, agreement with a one-rank run)
//! from the suite's notes.

use bench_core::measure::{Layout, NbodyLayout};

use crate::format::npb::headline;
use crate::model::{Run, Series};

fn layout(series: &Series) -> Option<&NbodyLayout> {
    match &series.layout {
        Layout::Nbody(l) => Some(l),
        _ => None,
    }
}

fn field(name: &str, value: impl std::fmt::Display) -> String {
    format!(" {name:<22}= {value:>24}\n")
}

/// The report of an nbody series; empty for a series of another layout.
pub fn text(run: &Run, series: &Series) -> String {
    let Some(l) = layout(series) else {
        return String::new();
    };
    let mut out = String::new();
    let kind = run
        .fabric(&series.fabric)
        .map(|f| f.kind.words())
        .unwrap_or("");
    for p in &series.points {
        out.push_str(&format!(
            "\n nbody Benchmark Completed: {} bodies, {} steps, {} exchange, on {} ({kind})\n",
            l.bodies, l.steps, l.exchange, series.fabric
        ));
        out.push_str(&field("Ranks", series.ranks));
        out.push_str(&field(
            "dt, softening",
            format!("{}, {}", l.dt, l.softening),
        ));
        if let Some(t) = headline(p, "time") {
            out.push_str(&field("Time in seconds", format!("{t:.4}")));
        }
        if let Some(t) = headline(p, "step") {
            out.push_str(&field("Time per step (ms)", format!("{t:.4}")));
        }
        if let Some(r) = headline(p, "interactions") {
            out.push_str(&field("Interactions/s", format!("{:.4e}", r * 1e6)));
        }
        if let Some(split) = &p.split {
            let share = split.comm_share();
            out.push_str(&field(
                "Share communicating",
                format!("{:.1}%", share * 100.0),
            ));
        }
        out.push_str(&field(
            "Verification",
            match p.validated {
                Some(true) => "SUCCESSFUL",
                Some(false) => "UNSUCCESSFUL",
                None => "NOT PERFORMED",
            },
        ));
        out.push_str(&field("Runs", p.samples_ns.len()));
        if let Some(line) = crate::format::npb::compute_line(run, series) {
            out.push_str(&line);
        }
    }
    for n in &series.notes {
        out.push_str(&format!(" {n}\n"));
    }
    out
}

/// nbody.txt: what the run printed for its nbody series.
pub struct NbodyText;

impl crate::format::Exporter for NbodyText {
    fn export(&self, run: &Run) -> Result<Vec<(std::path::PathBuf, Vec<u8>)>, crate::ResultsError> {
        if !run.series.iter().any(|s| layout(s).is_some()) {
            return Ok(Vec::new());
        }
        let txt: String = run.series.iter().map(|s| text(run, s)).collect();
        Ok(vec![("nbody.txt".into(), txt.into_bytes())])
    }
}
