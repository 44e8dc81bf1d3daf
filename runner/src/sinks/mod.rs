//! The sinks fabbench's own command line uses: [`Text`] prints OSU's layout as points arrive
//! (and notes on stderr), [`Progress`] draws a progress bar on a terminal, and [`Terminal`]
//! puts the two together so the bar never garbles the table.

mod progress;
mod text;

pub use progress::Progress;
pub use text::Text;

use std::io::IsTerminal;

use crate::sink::{Event, Sink};

/// OSU text on stdout, notes on stderr, and a progress bar when both are a terminal.
pub struct Terminal {
    text: Text,
    progress: Option<Progress>,
}

impl Terminal {
    pub fn new() -> Terminal {
        let tty = std::io::stdout().is_terminal() && std::io::stderr().is_terminal();
        Terminal {
            text: Text::new(Box::new(std::io::stdout()), Box::new(std::io::stderr())),
            progress: tty.then(Progress::new),
        }
    }
}

impl Default for Terminal {
    fn default() -> Self {
        Terminal::new()
    }
}

impl Sink for Terminal {
    fn event(&mut self, event: &Event<'_>) {
        match &mut self.progress {
            Some(p) => {
                p.event(event);
                let text = &mut self.text;
                p.suspend(|| text.event(event));
            }
            None => self.text.event(event),
        }
    }
}
