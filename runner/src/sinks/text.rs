//! OSU's text layout as a run goes: a table's header when its suite starts and a row per point
//! on a run with one fabric; at the end the tables with a column per fabric (several fabrics)
//! and what each fabric decided. Every line comes from `results::osu`, the code osu.txt is
//! exported with, so what is printed and what is written are the same text.

use std::io::Write;

use results::osu;

use crate::sink::{Event, Sink};

pub struct Text {
    out: Box<dyn Write>,
    notes: Box<dyn Write>,
}

impl Text {
    /// OSU text to `out`, notes (which suite runs where, where results went) to `notes`.
    pub fn new(out: Box<dyn Write>, notes: Box<dyn Write>) -> Text {
        Text { out, notes }
    }

    fn print(&mut self, s: &str) {
        let _ = self.out.write_all(s.as_bytes());
        let _ = self.out.flush();
    }
}

impl Sink for Text {
    fn event(&mut self, event: &Event<'_>) {
        match *event {
            Event::SuiteStarted { run, series, .. } => match osu::series_header(run, series) {
                Some(h) => self.print(&h),
                None => {
                    let kind = run
                        .fabric(&series.fabric)
                        .map(|f| f.kind.words())
                        .unwrap_or_default();
                    let _ = writeln!(
                        self.notes,
                        "# running {} on {} ({kind})",
                        series.suite, series.fabric
                    );
                }
            },
            Event::Point { run, series, point } => {
                if let Some(r) = osu::series_row(run, series, point) {
                    self.print(&r);
                }
            }
            Event::Finished { run } => self.print(&osu::closing(run)),
            Event::Written { path } => {
                let _ = writeln!(self.notes, "# results: {}", path.display());
            }
            Event::Started { .. } | Event::PointStarted { .. } => {}
        }
    }
}
