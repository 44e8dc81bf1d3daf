//! How a verdict is printed: an aligned table for a terminal, Markdown for a CI job's summary,
//! JSON for tools.

/// The output formats of `fabbench compare`, for comparisons and reference checks alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    Markdown,
    Json,
}
