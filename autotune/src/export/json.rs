//! `autotune.json`: the whole [`Outcome`], every measurement and fit included, for tools and
//! for a later look at why a value was chosen. Pretty-printed so that two runs diff line by
//! line.

use std::path::PathBuf;

use super::{ExportError, Exporter, File};
use crate::outcome::Outcome;

/// Writes `autotune.json`, always.
pub struct Json;

impl Exporter for Json {
    fn files(&self, o: &Outcome) -> Result<Vec<File>, ExportError> {
        let mut bytes = serde_json::to_vec_pretty(o)?;
        // A text file ends with a newline: `cat` and diffs stay tidy.
        bytes.push(b'\n');
        Ok(vec![(PathBuf::from("autotune.json"), bytes)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::sample;

    #[test]
    fn reads_back_equal() {
        for o in [sample::outcome(), sample::mpi_outcome()] {
            let files = Json.files(&o).unwrap();
            assert_eq!(files.len(), 1);
            let (path, bytes) = &files[0];
            assert_eq!(path, &PathBuf::from("autotune.json"));
            assert!(bytes.ends_with(b"}\n"));
            assert!(bytes.starts_with(b"{\n  \"schema_version\": 2,\n"));
            let back: Outcome = serde_json::from_slice(bytes).unwrap();
            assert_eq!(back, o);
        }
    }
}
