//! The rules a laid-out chart keeps, as a list of what breaks them: tests of every chart kind
//! (and of the crates that build figures: history, characterise, calibrate) assert it is empty.

use super::{Layout, Role};
use crate::rules;

impl Layout {
    /// What breaks the rules every chart keeps, one sentence each (empty when none does): a
    /// text outside the image, two texts that overlap, an axis whose tick labels repeat, a
    /// linear value axis over data that span more than a decade.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        for t in &self.texts {
            if !t.rect.inside(self.width, self.height) {
                out.push(format!(
                    "{:?} {:?} at {:?} leaves the {}x{} image",
                    t.role, t.text, t.rect, self.width, self.height
                ));
            }
        }
        for (i, a) in self.texts.iter().enumerate() {
            for b in &self.texts[i + 1..] {
                if a.rect.overlaps(&b.rect, 0.0) {
                    out.push(format!(
                        "{:?} {:?} overlaps {:?} {:?}",
                        a.role, a.text, b.role, b.text
                    ));
                }
            }
        }
        for (i, p) in self.panels.iter().enumerate() {
            for role in [Role::XTick(i), Role::YTick(i)] {
                let mut labels = self.tick_labels(role);
                labels.sort_unstable();
                if labels.windows(2).any(|w| w[0] == w[1]) {
                    out.push(format!("{role:?} labels repeat: {labels:?}"));
                }
            }
            if rules::spans_a_decade(&p.panel) {
                out.push(format!(
                    "panel {i}: linear y axis {:?} over values that span more than a decade",
                    p.panel.y.label
                ));
            }
        }
        out
    }
}
