//! compute.csv read back into each fabric's [`FabricRun::compute`]: a run without the file
//! charged no compute (or was written before fabbench kept it).

use std::path::Path;

use crate::format::compute::{COMPUTE_COLUMNS, COMPUTE_CSV};
use crate::model::FabricRun;
use crate::read::source::{malformed, read_text};
use crate::ResultsError;

/// Fills `fabrics`' compute stretches from `dir`'s compute.csv, if it has one. The stretches of
/// a rank must be numbered 0, 1, 2 ... in order, every rank below the fabric's rank count.
pub(crate) fn read_compute(dir: &Path, fabrics: &mut [FabricRun]) -> Result<(), ResultsError> {
    let path = dir.join(COMPUTE_CSV);
    if !path.is_file() {
        return Ok(());
    }
    let text = read_text(&path)?;
    let mut lines = text.lines();
    let header = lines.next().unwrap_or_default();
    if header != COMPUTE_COLUMNS.join(",") {
        return Err(malformed(
            &path,
            format!(
                "the header is '{header}', not '{}'",
                COMPUTE_COLUMNS.join(",")
            ),
        ));
    }
    for (i, line) in lines.enumerate() {
        let row = i + 2;
        let bad = |why: String| malformed(&path, format!("line {row}: {why}"));
        let cells: Vec<&str> = line.split(',').collect();
        let [fabric, rank, stretch, ns] = cells[..] else {
            return Err(bad(format!("{} fields, not 4", cells.len())));
        };
        let number = |what: &str, cell: &str| -> Result<u64, ResultsError> {
            cell.parse()
                .map_err(|_| bad(format!("{what} '{cell}' is not a whole number")))
        };
        let (rank, stretch, ns) = (
            number("rank", rank)? as usize,
            number("stretch", stretch)? as usize,
            number("host_ns", ns)?,
        );
        let Some(f) = fabrics.iter_mut().find(|f| f.fabric == fabric) else {
            return Err(bad(format!("fabric '{fabric}' is not in manifest.json")));
        };
        if rank >= f.ranks {
            return Err(bad(format!(
                "rank {rank}, but {fabric} ran {} ranks",
                f.ranks
            )));
        }
        if f.compute.len() < f.ranks {
            f.compute.resize(f.ranks, Vec::new());
        }
        let kept = &mut f.compute[rank];
        if stretch != kept.len() {
            return Err(bad(format!(
                "stretch {stretch} of rank {rank} on {fabric} follows {} stretches; they count \
                 up from 0",
                kept.len()
            )));
        }
        kept.push(ns);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::compute::ComputeCsv;
    use crate::format::Exporter;
    use crate::model::FabricKind;
    use crate::testing::{fabric, RunBuilder};

    fn dir_with(text: &str) -> std::path::PathBuf {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let d = std::env::temp_dir().join(format!(
            "fabbench-compute-csv-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(COMPUTE_CSV), text).unwrap();
        d
    }

    fn fabrics() -> Vec<FabricRun> {
        vec![fabric("rapidio", FabricKind::Emulated, 2)]
    }

    #[test]
    fn what_the_exporter_writes_reads_back_the_same() {
        let run = RunBuilder::new("r")
            .fabric(FabricRun {
                compute: vec![vec![5, 7, 9], vec![11]],
                ..fabric("rapidio", FabricKind::Emulated, 2)
            })
            .build();
        let files = ComputeCsv.export(&run).unwrap();
        let text = String::from_utf8(files[0].1.clone()).unwrap();
        assert_eq!(
            text,
            "fabric,rank,stretch,host_ns\nrapidio,0,0,5\nrapidio,0,1,7\nrapidio,0,2,9\nrapidio,1,0,11\n"
        );
        let mut back = fabrics();
        read_compute(&dir_with(&text), &mut back).unwrap();
        assert_eq!(back[0].compute, run.manifest.fabrics[0].compute);
        // No compute, no file.
        let idle = RunBuilder::new("r").fabric(fabrics().remove(0)).build();
        assert!(ComputeCsv.export(&idle).unwrap().is_empty());
    }

    #[test]
    fn rows_that_do_not_fit_the_run_name_the_line_and_the_fault() {
        let header = "fabric,rank,stretch,host_ns\n";
        for (rows, says) in [
            (
                "rapidio,0,1,5\n",
                "line 2: stretch 1 of rank 0 on rapidio follows 0",
            ),
            ("rapidio,2,0,5\n", "line 2: rank 2, but rapidio ran 2 ranks"),
            (
                "bxi,0,0,5\n",
                "line 2: fabric 'bxi' is not in manifest.json",
            ),
            (
                "rapidio,0,0,x\n",
                "line 2: host_ns 'x' is not a whole number",
            ),
            ("rapidio,0,0\n", "line 2: 3 fields, not 4"),
        ] {
            let e = read_compute(&dir_with(&format!("{header}{rows}")), &mut fabrics())
                .unwrap_err()
                .to_string();
            assert!(e.contains(says), "{rows}: {e}");
        }
        let e = read_compute(&dir_with("rank,host_ns\n"), &mut fabrics())
            .unwrap_err()
            .to_string();
        assert!(e.contains("the header is 'rank,host_ns'"), "{e}");
    }
}
