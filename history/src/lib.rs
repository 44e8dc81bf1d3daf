//! history keeps runs over time in an append-only store keyed by git revision, date, host and
//! fabric, turns them into one series per metric and point, and finds change points in each
//! series. The crate never sees the command line: [`store`] adds runs and reads entries back,
//! [`series`] regroups entries into series, [`changes`] finds where each series moved to a new
//! level ([`edivisive`] proposes, [`confirm`] tests), [`trend`] puts that together as a view,
//! and [`format`] and [`chart`] show it as text or charts ([`otava`]: as the CSV Apache
//! Otava reads).

pub mod changes;
pub mod chart;
pub mod confirm;
pub mod date;
pub mod edivisive;
pub mod entry;
pub mod error;
pub mod format;
pub mod otava;
pub mod series;
pub mod store;
#[cfg(test)]
mod testing;
pub mod trend;

pub use changes::Options;
pub use entry::Overrides;
pub use error::HistoryError;
pub use series::Filter;
pub use store::Store;
pub use trend::View;
