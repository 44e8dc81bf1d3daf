//! A fabbench run stated against the limits: its shm and tcp osu_latency at 8 B (and 64 B on
//! tcp) as multiples of the cache line's or loopback TCP's one-way median, and its osu_bw at
//! the sizes nearest memcpy's (within a factor of four) as fractions of memcpy's median. The
//! run's figure is the one fabbench prints (OSU's: mean latency, total bytes over total time);
//! the limit's is its median.

use std::path::{Path, PathBuf};

use results::model::FabricKind;
use results::Run;

use crate::figures::{number, size_text, Figure};
use crate::{cacheline, memcpy, tcp, LimitsError};

/// The fabrics whose figures are stated, as their labels start.
const FABRICS: [&str; 2] = ["shm", "tcp"];
/// osu_bw's sizes are matched to memcpy's within this factor.
const NEAREST: u64 = 4;

/// One line of the comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    pub run: PathBuf,
    pub fabric: String,
    pub suite: String,
    pub size: u64,
    pub value: f64,
    pub unit: String,
    /// Each limit named and its figure, with the run's figure as a multiple of it.
    pub against: Vec<(String, f64, String, f64)>,
}

impl std::fmt::Display for Statement {
    /// "shm osu_latency 8B: 0.290 us = 1.45x the cache line one way (0.200 us, one for both)"
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let limits: Vec<String> = self
            .against
            .iter()
            .map(|(what, limit, unit, multiple)| {
                format!("{}x {what} ({} {unit})", times(*multiple), number(*limit))
            })
            .collect();
        write!(
            f,
            "{} {} {}: {} {} = {}",
            self.fabric,
            self.suite,
            size_text(self.size),
            number(self.value),
            self.unit,
            limits.join(", ")
        )
    }
}

/// A multiple to three significant digits, with two decimals at least: 3.29, 0.454, 0.0328.
fn times(x: f64) -> String {
    let magnitude = if x > 0.0 && x.is_finite() {
        x.log10().floor() as i32
    } else {
        0
    };
    let decimals = (2 - magnitude).clamp(2, 6) as usize;
    format!("{x:.decimals$}")
}

/// The run in `dir`, read and checked to hold something to state (bad input otherwise).
pub fn read(dir: &Path) -> Result<Run, LimitsError> {
    let run = results::read_run(dir).map_err(|source| LimitsError::Against {
        path: dir.to_path_buf(),
        source,
    })?;
    if comparable(&run).next().is_none() {
        return Err(LimitsError::NothingToCompare {
            path: dir.to_path_buf(),
        });
    }
    Ok(run)
}

/// The base fabric ("shm", "tcp") of a label ("shm", "shm-2", "tcp·x") if it is one stated.
fn base(label: &str) -> Option<&'static str> {
    FABRICS.into_iter().find(|f| {
        label
            .strip_prefix(f)
            .is_some_and(|rest| !rest.starts_with(|c: char| c.is_ascii_alphanumeric()))
    })
}

/// The records of `run` that can be stated: osu_latency and osu_bw on native shm or tcp.
fn comparable(run: &Run) -> impl Iterator<Item = (&'static str, results::model::Record)> + '_ {
    let native = |label: &str| {
        run.fabric(label)
            .is_some_and(|f| f.kind == FabricKind::Native)
    };
    run.records().into_iter().filter_map(move |r| {
        let fabric = base(&r.fabric)?;
        let wanted = matches!(
            (r.suite.as_str(), r.unit.as_str()),
            ("osu_latency", "us") | ("osu_bw", "MB/s")
        );
        (wanted && native(&r.fabric) && r.params.is_empty() && r.value.is_finite())
            .then_some((fabric, r))
    })
}

fn limit<'a>(limits: &'a [Figure], suite: &str, name: &str, value: &str) -> Option<&'a Figure> {
    limits.iter().find(|f| f.is(suite, name, value))
}

/// The statements of the run in `dir` against `limits`.
pub fn statements(limits: &[Figure], run: &Run, dir: &Path) -> Vec<Statement> {
    let records: Vec<_> = comparable(run).collect();
    let mut out = Vec::new();
    for (fabric, r) in &records {
        let size = r.size.unwrap_or(0);
        let mut against = Vec::new();
        let mut one = |what: String, f: Option<&Figure>, scale: f64| {
            if let Some(f) = f {
                let value = r.value * scale;
                against.push((what, f.median, f.unit.clone(), value / f.median));
            }
        };
        match (r.suite.as_str(), *fabric) {
            ("osu_latency", "shm") if size == 8 => {
                let line = limit(limits, cacheline::SUITE_ONE, "", "");
                one("the cache line one way".into(), line, 1.0);
            }
            ("osu_latency", "tcp") if size == 8 || size == 64 => {
                let spin = limit(limits, tcp::SUITE_SPIN, "", "");
                one("loopback TCP spinning".into(), spin, 1.0);
                let block = limit(limits, tcp::SUITE_BLOCK, "", "");
                one("loopback TCP blocking".into(), block, 1.0);
            }
            ("osu_bw", _) => {
                for copy in nearest_memcpy(limits, size, &records, &r.fabric, &r.suite) {
                    // MB/s against GB/s.
                    let what = format!("memcpy at {}", size_text(copy.size));
                    one(what, Some(copy), 1e-3);
                }
            }
            _ => {}
        }
        if !against.is_empty() {
            out.push(Statement {
                run: dir.to_path_buf(),
                fabric: r.fabric.clone(),
                suite: r.suite.clone(),
                size,
                value: r.value,
                unit: r.unit.clone(),
                against,
            });
        }
    }
    out
}

/// The memcpy figures `size` is stated against: those within [`NEAREST`] of it to which no
/// other size of the same series (fabric label and suite) is nearer, so each memcpy size is
/// stated once per series (a tie goes to the smaller size).
fn nearest_memcpy<'a>(
    limits: &'a [Figure],
    size: u64,
    records: &[(&str, results::model::Record)],
    fabric: &str,
    suite: &str,
) -> Vec<&'a Figure> {
    let distance = |a: u64, b: u64| (a.max(1) as f64 / b.max(1) as f64).log2().abs();
    let sizes: Vec<u64> = records
        .iter()
        .filter(|(_, r)| r.fabric == fabric && r.suite == suite)
        .filter_map(|(_, r)| r.size)
        .collect();
    limits
        .iter()
        .filter(|f| f.suite == memcpy::SUITE)
        .filter(|f| distance(size, f.size) <= (NEAREST as f64).log2())
        .filter(|f| {
            let nearest = sizes.iter().copied().min_by(|a, b| {
                distance(*a, f.size)
                    .total_cmp(&distance(*b, f.size))
                    .then(a.cmp(b))
            });
            nearest == Some(size)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_of_shm_and_tcp_are_stated_and_others_are_not() {
        assert_eq!(base("shm"), Some("shm"));
        assert_eq!(base("shm-2"), Some("shm"));
        assert_eq!(base("tcp@mpi"), Some("tcp"));
        assert_eq!(base("shmem"), None);
        assert_eq!(base("rapidio"), None);
    }

    fn bw(fabric: &str, size: u64) -> (&'static str, results::model::Record) {
        let r = results::model::Record {
            suite: "osu_bw".into(),
            fabric: fabric.into(),
            emulated: false,
            ranks: 2,
            size: Some(size),
            params: String::new(),
            metric: "bandwidth".into(),
            unit: "MB/s".into(),
            value: 1000.0,
            count: 1,
            min: 1000.0,
            mean: 1000.0,
            p50: 1000.0,
            p90: 1000.0,
            p99: 1000.0,
            p99_9: 1000.0,
            max: 1000.0,
            stddev: 0.0,
            validation: String::new(),
        };
        (base(fabric).unwrap(), r)
    }

    fn copy(size: u64) -> Figure {
        Figure {
            suite: memcpy::SUITE.into(),
            params: Default::default(),
            size,
            label: "memcpy".into(),
            unit: "GB/s".into(),
            median: 10.0,
            best: 11.0,
            samples: 1,
        }
    }

    #[test]
    fn each_memcpy_size_is_stated_against_the_nearest_size_of_a_series_within_4x() {
        let limits: Vec<Figure> = memcpy::SIZES.iter().map(|&s| copy(s)).collect();
        let records = vec![
            bw("shm", 32 << 10),
            bw("shm", 64 << 10),
            bw("shm", 512 << 10),
            bw("shm", 4 << 20),
            bw("tcp", 2 << 20),
        ];
        let against = |fabric: &str, size: u64| -> Vec<u64> {
            nearest_memcpy(&limits, size, &records, fabric, "osu_bw")
                .iter()
                .map(|f| f.size)
                .collect()
        };
        assert_eq!(against("shm", 64 << 10), [64 << 10]);
        assert!(against("shm", 32 << 10).is_empty(), "64 KiB is nearer");
        assert_eq!(against("shm", 512 << 10), [1 << 20]);
        // 4 MiB is as near 1 MiB as 16 MiB, but 512 KiB is nearer 1 MiB.
        assert_eq!(against("shm", 4 << 20), [16 << 20]);
        // tcp's only size: 1 MiB within 4x, 16 MiB beyond it.
        assert_eq!(against("tcp", 2 << 20), [1 << 20]);
    }

    #[test]
    fn multiples_keep_three_significant_digits() {
        assert_eq!(times(3.2912), "3.29");
        assert_eq!(times(0.45437), "0.454");
        assert_eq!(times(0.032841), "0.0328");
        assert_eq!(times(12.345), "12.35");
    }

    #[test]
    fn a_statement_gives_the_figure_and_each_multiple() {
        let s = Statement {
            run: PathBuf::from("r"),
            fabric: "tcp".into(),
            suite: "osu_latency".into(),
            size: 64,
            value: 6.0,
            unit: "us".into(),
            against: vec![
                (
                    "loopback TCP spinning".into(),
                    3.0,
                    "us one way".into(),
                    2.0,
                ),
                (
                    "loopback TCP blocking".into(),
                    24.0,
                    "us one way".into(),
                    0.25,
                ),
            ],
        };
        assert_eq!(
            s.to_string(),
            "tcp osu_latency 64B: 6.000 us = 2.00x loopback TCP spinning (3.000 us one way), \
             0.250x loopback TCP blocking (24.00 us one way)"
        );
    }
}
