//! A progress bar for runs long enough to wonder about: suite, fabric, the point being
//! measured, points done and left, time so far. It stays hidden for the first two seconds (a
//! quick run prints nothing extra) and is only made when stdout and stderr are a terminal, so
//! OSU parsers reading a pipe never see it.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::sink::{Event, Sink};

/// How long a run goes before the bar appears.
const DELAY: Duration = Duration::from_secs(2);

pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    pub fn new() -> Progress {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
        let later = bar.clone();
        std::thread::spawn(move || {
            std::thread::sleep(DELAY);
            if !later.is_finished() {
                later.set_draw_target(ProgressDrawTarget::stderr());
                later.enable_steady_tick(Duration::from_millis(200));
            }
        });
        Progress { bar }
    }

    /// Runs `f` with the bar cleared, so what it prints is not mixed into the bar.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        self.bar.suspend(f)
    }
}

impl Default for Progress {
    fn default() -> Self {
        Progress::new()
    }
}

impl Sink for Progress {
    fn event(&mut self, event: &Event<'_>) {
        match *event {
            Event::Started { planned, .. } => {
                let style = match planned {
                    Some(n) => {
                        self.bar.set_length(n as u64);
                        ProgressStyle::with_template(
                            "{spinner} {msg} [{bar:24}] {pos}/{len} points, {elapsed}",
                        )
                    }
                    None => ProgressStyle::with_template("{spinner} {msg} {pos} points, {elapsed}"),
                };
                if let Ok(s) = style {
                    self.bar.set_style(s.progress_chars("=> "));
                }
            }
            Event::PointStarted { series, key, .. } => {
                self.bar
                    .set_message(format!("{} on {}, {key}", series.suite, series.fabric));
            }
            Event::Point { .. } => self.bar.inc(1),
            Event::Finished { .. } => self.bar.finish_and_clear(),
            Event::SuiteStarted { .. } | Event::SuiteFinished { .. } | Event::Written { .. } => {}
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        // A failed run ends without Finished: take the bar off the screen all the same.
        self.bar.finish_and_clear();
    }
}
