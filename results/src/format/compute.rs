//! compute.csv: the host nanoseconds of every compute stretch each rank of an emulated fabric
//! charged to virtual time, one row per stretch in the order the rank computed them
//! (`fabric,rank,stretch,host_ns`). Written only when a run charged compute; `fabbench run
//! --compute-from` replays it, and [`crate::read`] reads it back.

use std::path::PathBuf;

use crate::format::Exporter;
use crate::model::Run;
use crate::ResultsError;

/// The file's name in a run directory.
pub const COMPUTE_CSV: &str = "compute.csv";

/// The fact (in the manifest's facts of a fabric) naming the run directory whose compute.csv
/// the run replayed (`run --compute-from`).
pub const COMPUTE_REPLAYED_FROM: &str = "compute_replayed_from";

/// Its header.
pub const COMPUTE_COLUMNS: [&str; 4] = ["fabric", "rank", "stretch", "host_ns"];

pub struct ComputeCsv;

impl Exporter for ComputeCsv {
    fn export(&self, run: &Run) -> Result<Vec<(PathBuf, Vec<u8>)>, ResultsError> {
        let fabrics = run
            .manifest
            .fabrics
            .iter()
            .filter(|f| !f.compute.is_empty());
        let mut out = String::new();
        for f in fabrics {
            for (rank, stretches) in f.compute.iter().enumerate() {
                for (k, ns) in stretches.iter().enumerate() {
                    out.push_str(&format!("{},{rank},{k},{ns}\n", f.fabric));
                }
            }
        }
        if out.is_empty() {
            return Ok(Vec::new());
        }
        let text = format!("{}\n{out}", COMPUTE_COLUMNS.join(","));
        Ok(vec![(COMPUTE_CSV.into(), text.into_bytes())])
    }
}
