//! Every exporter a run directory is written with, in one list: the files of a run all come
//! from here, so a run read back ([`crate::read`]) exports to the same bytes.

use std::path::PathBuf;

use crate::exporter::Exporter;
use crate::files::{ManifestJson, ResultsJson, SamplesCsv, SummaryCsv};
use crate::hist::Histograms;
use crate::model::Run;
use crate::mpptest::MpptestFiles;
use crate::nbody::NbodyText;
use crate::npb::NpbText;
use crate::osu::OsuText;
use crate::ResultsError;

/// Every exporter a run directory is written with.
pub static EXPORTERS: &[&dyn Exporter] = &[
    &ManifestJson,
    &SummaryCsv,
    &SamplesCsv,
    &ResultsJson,
    &Histograms,
    &OsuText,
    &MpptestFiles,
    &NpbText,
    &NbodyText,
];

/// Every file of a run directory, in the order written.
pub fn export_all(run: &Run) -> Result<Vec<(PathBuf, Vec<u8>)>, ResultsError> {
    let mut files = Vec::new();
    for e in EXPORTERS {
        files.extend(e.export(run)?);
    }
    Ok(files)
}
