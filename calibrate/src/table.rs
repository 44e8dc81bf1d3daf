//! The table a fabric is calibrated to: (suite, message size, value) in the suite's unit,
//! read from OSU's text output (a fabbench or OSU run, one or several tests, each known by its
//! title line) or from a CSV with the header `suite,size,value`.

use std::path::Path;

use crate::error::CalibrateError;

/// One measured value to match.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Target {
    pub suite: String,
    pub size: u64,
    /// In the suite's unit: us for osu_latency, MB/s for osu_bw and osu_bibw.
    pub value: f64,
}

/// The suites a table may hold, with OSU's title for each.
pub const SUITES: &[(&str, &str)] = &[
    ("osu_latency", "OSU MPI Latency Test"),
    ("osu_bibw", "OSU MPI Bi-Directional Bandwidth Test"),
    ("osu_bw", "OSU MPI Bandwidth Test"),
];

fn suite_names() -> String {
    SUITES.iter().map(|s| s.0).collect::<Vec<_>>().join(", ")
}

/// Reads a table file: CSV when its first line is `suite,size,value`, OSU text otherwise.
pub fn read(path: &Path) -> Result<Vec<Target>, CalibrateError> {
    let text = results::read::read_regular(path).map_err(|e| {
        CalibrateError::Request(format!("--from {}: cannot read it: {e}", path.display()))
    })?;
    parse(&text, path)
}

/// A table file's text (what [`read`] reads the file with; public for the fuzz targets).
/// `path` only names the file in errors.
pub fn parse(text: &str, path: &Path) -> Result<Vec<Target>, CalibrateError> {
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let targets = if first.trim().replace(' ', "") == "suite,size,value" {
        csv_table(text, path)?
    } else {
        osu_text(text, path)?
    };
    if targets.is_empty() {
        return Err(CalibrateError::Request(format!(
            "--from {}: no values found (a CSV with suite,size,value or OSU text output of {})",
            path.display(),
            suite_names()
        )));
    }
    Ok(targets)
}

fn bad(path: &Path, line: usize, why: &str) -> CalibrateError {
    CalibrateError::Request(format!("{}:{line}: {why}", path.display()))
}

fn check_suite(name: &str, path: &Path, line: usize) -> Result<String, CalibrateError> {
    if SUITES.iter().any(|s| s.0 == name) {
        Ok(name.to_string())
    } else {
        Err(bad(
            path,
            line,
            &format!("unknown suite '{name}'; valid suites: {}", suite_names()),
        ))
    }
}

fn number(word: &str, what: &str, path: &Path, line: usize) -> Result<f64, CalibrateError> {
    word.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .ok_or_else(|| {
            bad(
                path,
                line,
                &format!("{what} '{}' is not a number >= 0", word.trim()),
            )
        })
}

fn csv_table(text: &str, path: &Path) -> Result<Vec<Target>, CalibrateError> {
    let mut out = Vec::new();
    let mut r = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    for (i, rec) in r.records().enumerate() {
        let line = i + 2;
        let rec = rec.map_err(|e| bad(path, line, &e.to_string()))?;
        if rec.len() != 3 {
            return Err(bad(path, line, "expected three fields: suite,size,value"));
        }
        let size = number(&rec[1], "size", path, line)?;
        if size.fract() != 0.0 {
            return Err(bad(path, line, "size must be a whole number of bytes"));
        }
        out.push(Target {
            suite: check_suite(&rec[0], path, line)?,
            size: size as u64,
            value: number(&rec[2], "value", path, line)?,
        });
    }
    Ok(out)
}

fn osu_text(text: &str, path: &Path) -> Result<Vec<Target>, CalibrateError> {
    let mut out = Vec::new();
    let mut suite: Option<String> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if let Some(comment) = line.strip_prefix('#') {
            if let Some((name, _)) = SUITES.iter().find(|(_, title)| comment.contains(title)) {
                suite = Some(name.to_string());
            }
            continue;
        }
        if line.is_empty() {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(s) = &suite else {
            return Err(bad(
                path,
                i + 1,
                &format!(
                    "a value before any OSU title line ({}); or use a CSV with suite,size,value",
                    SUITES.iter().map(|s| s.1).collect::<Vec<_>>().join(", ")
                ),
            ));
        };
        if words.len() < 2 {
            return Err(bad(path, i + 1, "expected a size and a value"));
        }
        let size = number(words[0], "size", path, i + 1)?;
        out.push(Target {
            suite: s.clone(),
            size: size as u64,
            value: number(words[1], "value", path, i + 1)?,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, text: &str) -> std::path::PathBuf {
        let p = std::env::temp_dir().join(format!("calibrate-{name}-{}", std::process::id()));
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn osu_text_of_two_tests_is_read_by_their_titles() {
        let p = file(
            "osu",
            "\n# OSU MPI Latency Test v7.4\n# Datatype: MPI_CHAR.\n# Size       Avg Latency(us)\n1                       1.63\n64                      1.64\n\n# OSU MPI Bandwidth Test v7.4\n# Datatype: MPI_CHAR.\n# Size      Bandwidth (MB/s)\n64                     98.85\n",
        );
        let t = read(&p).unwrap();
        assert_eq!(t.len(), 3);
        assert_eq!(
            (t[0].suite.as_str(), t[0].size, t[0].value),
            ("osu_latency", 1, 1.63)
        );
        assert_eq!(
            (t[2].suite.as_str(), t[2].size, t[2].value),
            ("osu_bw", 64, 98.85)
        );
    }

    #[test]
    fn csv_errors_name_the_line() {
        let p = file(
            "csv",
            "suite,size,value\nosu_latency,1,699.62\nosu_bw,64,fast\n",
        );
        let e = read(&p).unwrap_err().to_string();
        assert!(e.contains(":3:") && e.contains("'fast'"), "{e}");
        let p = file("csv2", "suite,size,value\nosu_alltoall,1,3\n");
        let e = read(&p).unwrap_err().to_string();
        assert!(e.contains("valid suites: osu_latency"), "{e}");
    }
}
