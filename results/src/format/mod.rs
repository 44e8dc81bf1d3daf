//! Every format a run is written in, in one place: the [`Exporter`] trait (hyperfine's shape:
//! an exporter turns a [`Run`] into named files and knows nothing of where they go), the list
//! of exporters a run directory is written with, and the writers themselves: manifest.json,
//! summary.csv, samples.csv and results.json ([`json_csv`]), HdrHistogram's `.hlog` and `.hgrm`
//! ([`histograms`]), OSU's text ([`osu`]), mpptest's table and gnuplot script ([`mpptest`]),
//! NPB's and nbody's reports ([`npb`], [`nbody`]), the compute stretches an emulated run
//! charged ([`compute`]), the CI tools' JSON ([`ci`]), and the aligned-text and Markdown
//! [`table::Table`] every crate's printed tables go through. Reading a run directory back is
//! [`crate::read`]'s job, kept apart: all the files of a run come from here, so a run read
//! back exports to the same bytes.

pub mod ci;
pub mod compute;
pub mod histograms;
pub mod json_csv;
pub mod mpptest;
pub mod nbody;
pub mod npb;
pub mod osu;
pub mod table;

use std::path::PathBuf;

use crate::model::Run;
use crate::ResultsError;
use compute::ComputeCsv;
use histograms::Histograms;
use json_csv::{ManifestJson, ResultsJson, SamplesCsv, SummaryCsv};
use mpptest::MpptestFiles;
use nbody::NbodyText;
use npb::NpbText;
use osu::OsuText;

pub trait Exporter: Sync {
    /// The files this exporter makes, as (path inside the run directory, bytes).
    fn export(&self, run: &Run) -> Result<Vec<(PathBuf, Vec<u8>)>, ResultsError>;
}

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
    &ComputeCsv,
];

/// Every file of a run directory, in the order written.
pub fn export_all(run: &Run) -> Result<Vec<(PathBuf, Vec<u8>)>, ResultsError> {
    let mut files = Vec::new();
    for e in EXPORTERS {
        files.extend(e.export(run)?);
    }
    Ok(files)
}
