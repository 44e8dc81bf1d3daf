//! A view of the store: the chosen entries and, per series, its change points, latest value
//! and move since the entry before, and which changes are regressions given the metric's
//! direction. Formats ([`crate::format`]) and charts ([`crate::chart`]) read only this.

use bench_core::measure::Better;

use crate::changes::{self, Change, Found, Options};
use crate::entry::Entry;
use crate::error::HistoryError;
use crate::series::{self, Filter, Series};
use crate::store::Store;

/// One series and what was found in it.
#[derive(Debug, Clone, PartialEq)]
pub struct Trend {
    pub series: Series,
    pub found: Found,
}

impl Trend {
    pub fn latest(&self) -> f64 {
        self.series.values.last().map_or(f64::NAN, |v| v.value)
    }

    /// latest / previous - 1, when there is a previous value.
    pub fn since_previous(&self) -> Option<f64> {
        let v = &self.series.values;
        (v.len() >= 2).then(|| v[v.len() - 1].value / v[v.len() - 2].value - 1.0)
    }

    /// Whether `c` made the metric worse.
    pub fn is_regression(&self, c: &Change) -> bool {
        match self.series.better {
            Better::Lower => c.after > c.before,
            Better::Higher => c.after < c.before,
        }
    }

    /// The series sits on a worse level than before its last change point: its latest entry
    /// is at or after a regression that nothing has undone since.
    pub fn regressed(&self) -> bool {
        self.found
            .changes
            .last()
            .is_some_and(|c| self.is_regression(c))
    }

    /// The view's index of the entry where series value `index` comes from.
    pub fn entry_of(&self, index: usize) -> usize {
        self.series.values[index].entry
    }
}

/// The chosen entries, oldest first, and every series' trend.
#[derive(Debug, Clone)]
pub struct View {
    pub entries: Vec<Entry>,
    pub trends: Vec<Trend>,
    pub options: Options,
}

impl View {
    /// Whether any series shown has regressed (see [`Trend::regressed`]).
    pub fn regressed(&self) -> bool {
        self.trends.iter().any(Trend::regressed)
    }
}

/// The view of `store` that `filter` chooses, with change points found as `options` say.
pub fn view(store: &Store, filter: &Filter, options: &Options) -> Result<View, HistoryError> {
    let entries = store.entries()?;
    if entries.is_empty() {
        return Err(HistoryError::NoMatch(format!(
            "the store {} has no entries yet; add runs with 'fabbench history add RUN_DIR --store {}'",
            store.dir().display(),
            store.dir().display()
        )));
    }
    let (entries, series) = series::select(entries, filter)?;
    Ok(of(entries, series, options))
}

/// The trends of `series` over `entries`.
pub fn of(entries: Vec<Entry>, series: Vec<Series>, options: &Options) -> View {
    let trends = series
        .into_iter()
        .map(|s| {
            let found = changes::find(&s.numbers(), s.exact, options);
            Trend { series: s, found }
        })
        .collect();
    View {
        entries,
        trends,
        options: *options,
    }
}
