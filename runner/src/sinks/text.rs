//! Each suite's text layout as a run goes. OSU: a table's header when its suite starts and a
//! row per point on a run with one fabric; at the end the tables with a column per fabric
//! (several fabrics) and what each fabric decided. mpptest: the whole table (or the gnuplot
//! script and its data file) once the suite finished, appended to `-fname` or stdout as
//! mpptest does. Every line comes from `results::format::osu` and `results::format::mpptest`, the code osu.txt
//! and mpptest.txt are exported with, so what is printed and what is written are the same text.

use std::fs::OpenOptions;
use std::io::Write;

use bench_core::measure::{Layout, MpptestLayout};
use results::format::{mpptest, nbody, npb, osu};
use results::model::{Run, Series};

use crate::sink::{Event, Sink};

pub struct Text {
    out: Box<dyn Write>,
    notes: Box<dyn Write>,
}

impl Text {
    /// Suites' text to `out`, notes (which suite runs where, where results went) to `notes`.
    pub fn new(out: Box<dyn Write>, notes: Box<dyn Write>) -> Text {
        Text { out, notes }
    }

    fn print(&mut self, s: &str) {
        let _ = self.out.write_all(s.as_bytes());
        let _ = self.out.flush();
    }

    /// Appends `s` to the file `path` (created if missing, never truncated, as mpptest opens
    /// its files), or says on the notes stream why it could not.
    fn append(&mut self, path: &str, s: &str) {
        let written = OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .and_then(|mut f| f.write_all(s.as_bytes()));
        if let Err(e) = written {
            let _ = writeln!(self.notes, "# could not write {path}: {e}");
        }
    }

    /// Appends `s` to `-fname`, or prints it.
    fn emit(&mut self, l: &MpptestLayout, s: &str) {
        match &l.fname {
            Some(f) => self.append(f, s),
            None => self.print(s),
        }
    }

    /// A finished mpptest series: with `-gnuplot`, the data to its own file and the script
    /// that plots it; otherwise the table.
    fn mpptest_finished(&mut self, run: &Run, series: &Series, l: &MpptestLayout) {
        if l.gnuplot.is_some() {
            self.append(&mpptest::data_file_name(l), &mpptest::data_text(series));
            self.emit(l, &mpptest::script_text(run, series));
        } else {
            self.emit(l, &mpptest::text(run, series));
        }
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
            Event::SuiteFinished { run, series } => match &series.layout {
                Layout::Mpptest(l) => self.mpptest_finished(run, series, l),
                Layout::Npb(_) => self.print(&npb::text(run, series)),
                Layout::Nbody(_) => self.print(&nbody::text(run, series)),
                Layout::Osu { .. } => {}
            },
            Event::Finished { run } => {
                self.print(&osu::closing(run));
                self.print(&npb::summary_text(&npb::summary_rows(run)));
            }
            Event::Written { path } => {
                let _ = writeln!(self.notes, "# results: {}", path.display());
            }
            Event::Started { .. } | Event::PointStarted { .. } => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;

    use bench_core::measure::{GnuplotTerminal, Metric, PointKey};
    use results::model::FabricKind;
    use results::testing::{self, RunBuilder};

    /// A stream the test can read back after the sink wrote to it.
    #[derive(Clone, Default)]
    struct Shared(Rc<RefCell<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.borrow_mut().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Shared {
        fn text(&self) -> String {
            String::from_utf8(self.0.borrow().clone()).unwrap()
        }
    }

    fn layout(gnuplot: Option<GnuplotTerminal>, fname: Option<String>) -> MpptestLayout {
        MpptestLayout {
            protocol: "blocking".into(),
            units: "(bytes)".into(),
            gnuplot,
            givedy: false,
            rate: false,
            info: true,
            logscale: false,
            fname,
        }
    }

    fn run(l: MpptestLayout) -> Run {
        let points = (0..4u64)
            .map(|k| {
                testing::point(
                    PointKey::size(k * 1024),
                    vec![Metric::latency_us(2.0), Metric::bandwidth_mbs(k as f64)],
                    vec![1000 + k * 500],
                )
            })
            .collect();
        RunBuilder::new("r")
            .suites(&["mpptest"])
            .fabric(testing::fabric("shm", FabricKind::Native, 2))
            .series(Series {
                notes: vec!["# a note".into()],
                ..testing::series("mpptest", "shm", false, 2, Layout::Mpptest(l), points)
            })
            .build()
    }

    /// Feeds the sink a whole (one-series) run; returns what went to out and to notes.
    fn feed(run: &Run) -> (String, String) {
        let (out, notes) = (Shared::default(), Shared::default());
        let mut t = Text::new(Box::new(out.clone()), Box::new(notes.clone()));
        let series = &run.series[0];
        t.event(&Event::SuiteStarted {
            run,
            series,
            planned: None,
        });
        for point in &series.points {
            t.event(&Event::Point { run, series, point });
        }
        t.event(&Event::SuiteFinished { run, series });
        (out.text(), notes.text())
    }

    fn scratch_dir(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("fabbench-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn mpptest_prints_its_table_when_the_suite_finishes() {
        let r = run(layout(None, None));
        let (out, notes) = feed(&r);
        assert_eq!(out, mpptest::text(&r, &r.series[0]));
        assert_eq!(notes, "# running mpptest on shm (native)\n");
    }

    #[test]
    fn gnuplot_output_is_appended_to_fname_and_its_data_file() {
        let dir = scratch_dir("gnuplot");
        let fname = dir.join("res.txt").to_str().unwrap().to_string();
        let r = run(layout(Some(GnuplotTerminal::X11), Some(fname.clone())));
        for _ in 0..2 {
            let (out, _) = feed(&r);
            assert_eq!(out, "", "nothing on stdout with -fname");
        }
        let script = std::fs::read_to_string(&fname).unwrap();
        let once = mpptest::script_text(&r, &r.series[0]);
        assert!(once.contains(&format!(
            "plot '{}' using 4:5",
            dir.join("res.gpl").display()
        )));
        assert_eq!(script, once.repeat(2));
        let data = std::fs::read_to_string(dir.join("res.gpl")).unwrap();
        assert_eq!(data, mpptest::data_text(&r.series[0]).repeat(2));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_file_that_cannot_be_opened_is_a_note() {
        let dir = scratch_dir("unopenable");
        let fname = dir.join("missing/res.txt").to_str().unwrap().to_string();
        let r = run(layout(None, Some(fname.clone())));
        let (out, notes) = feed(&r);
        assert_eq!(out, "");
        let last = notes.lines().last().unwrap();
        assert!(
            last.starts_with(&format!("# could not write {fname}: ")),
            "{notes}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
