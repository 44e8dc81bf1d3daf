//! The files an autotune run leaves in its output directory, made from its [`Outcome`] alone
//! (hyperfine's shape): one [`Exporter`] per format, each turning the outcome into named files
//! and knowing nothing of where they go. The profile to deploy, the MPI library's own
//! parameter files, `autotune.json` and the Markdown report all read the same outcome, so they
//! cannot disagree; writing them to disk is the caller's job.

mod json;
mod mpi;
mod profile;
mod report;

use std::borrow::Cow;
use std::path::PathBuf;

use crate::outcome::{Measurement, Outcome};

pub use json::Json;
pub use mpi::MpiFiles;
pub use profile::Profile;
pub use report::MarkdownReport;

/// A file to write: its path relative to the output directory, and its bytes.
pub type File = (PathBuf, Vec<u8>);

pub trait Exporter {
    /// Files (relative path, bytes) this format makes from an outcome; none when it does not
    /// apply.
    fn files(&self, o: &Outcome) -> Result<Vec<File>, ExportError>;
}

/// Why an outcome could not be exported. Each names the parameter or measurement at fault.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("cannot write profile.toml: {0}")]
    Profile(#[from] toml::ser::Error),
    #[error("cannot write autotune.json: {0}")]
    Json(#[from] serde_json::Error),
    #[error("{name}: '{value}' is not a size in bytes, which the MPI library needs")]
    MpiSize { name: String, value: String },
    #[error("{0} is not an MPI variable fabbench knows (`fabbench list tunables` shows them)")]
    UnknownMpiVariable(String),
    #[error("{context} refers to measurement {id}, which the outcome does not hold")]
    MissingMeasurement { id: usize, context: String },
}

/// Every format's files, in a fixed order.
pub fn export_all(o: &Outcome) -> Result<Vec<File>, ExportError> {
    let exporters: [&dyn Exporter; 4] = [&Profile, &MpiFiles, &Json, &MarkdownReport];
    let mut files = Vec::new();
    for e in exporters {
        files.extend(e.files(o)?);
    }
    Ok(files)
}

/// The measurement with this id; `context` says who asked, for the error.
fn measurement<'a>(
    o: &'a Outcome,
    id: usize,
    context: &str,
) -> Result<&'a Measurement, ExportError> {
    // Ids are indices by contract, but a lookup by id survives an outcome whose measurements
    // were filtered or reordered.
    o.measurements
        .iter()
        .find(|m| m.id == id)
        .ok_or_else(|| ExportError::MissingMeasurement {
            id,
            context: context.to_string(),
        })
}

/// A word the POSIX shell reads back as itself.
fn shell_quote(word: &str) -> Cow<'_, str> {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-./=:,@%+".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        Cow::Borrowed(word)
    } else {
        Cow::Owned(format!("'{}'", word.replace('\'', r"'\''")))
    }
}

/// The command line as one pasteable shell line.
fn command_line(o: &Outcome) -> String {
    o.command_line
        .iter()
        .map(|a| shell_quote(a))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `text` as `#` comment lines: TOML, sh and Open MPI's files all take them, and none takes
/// control characters or a line break inside a comment, which user text could carry.
fn comment(text: &str) -> String {
    text.lines()
        .map(|l| {
            let clean: String = l
                .chars()
                .map(|c| if c.is_control() && c != '\t' { '?' } else { c })
                .collect();
            format!("# {clean}\n")
        })
        .collect()
}

/// Outcomes built by hand, for every format's tests.
#[cfg(test)]
pub(crate) mod sample {
    use std::collections::BTreeMap;

    use crate::outcome::*;

    fn point(size: u64, cost_us: f64) -> MeasuredPoint {
        MeasuredPoint {
            size,
            value: cost_us,
            unit: "us".into(),
            cost_us,
            samples_us: vec![cost_us],
            rate: false,
        }
    }

    fn measurement(id: usize, purpose: &str, setting: &str, costs: &[(u64, f64)]) -> Measurement {
        Measurement {
            id,
            purpose: purpose.into(),
            workload: "osu_latency".into(),
            settings: vec![setting.into()],
            points: costs.iter().map(|&(s, c)| point(s, c)).collect(),
            failed: None,
            wall_s: 0.5,
            measured_s: 0.01,
        }
    }

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn threshold() -> Decision {
        Decision {
            param: "eager_limit".into(),
            role: "threshold".into(),
            default: "4KiB".into(),
            chosen: "12KiB".into(),
            near_equal: vec!["12KiB".into(), "16KiB".into()],
            confidence: "exact (virtual time)".into(),
            why: "Eager is faster up to 12KiB, rendezvous above.".into(),
            evidence: Evidence::Threshold(ThresholdEvidence {
                workload: "osu_latency".into(),
                eager_value: "1MiB".into(),
                rendezvous_value: "0".into(),
                eager_sweep: 0,
                rendezvous_sweep: 1,
                eager_fit: vec![Fit {
                    from: 4096,
                    to: 32768,
                    latency_us: 1.5,
                    bandwidth_mbs: Some(7000.0),
                }],
                rendezvous_fit: vec![Fit {
                    from: 4096,
                    to: 32768,
                    latency_us: 3.0,
                    bandwidth_mbs: None,
                }],
                model_crossover: Some(11800.4),
                bracket: [8192, 16384],
                probes: vec![Probe {
                    size: 12288,
                    eager_us: 3.1,
                    rendezvous_us: 3.2,
                    eager_wins: true,
                }],
                step: 4096,
                confirmation: Some(2),
                confirmed: Some(true),
            }),
            withheld: None,
        }
    }

    fn switch() -> Decision {
        let verdict = |size, ratio, winner: Option<&str>| SizeVerdict {
            size,
            ratio,
            low: ratio,
            high: ratio,
            p_value: None,
            winner: winner.map(str::to_string),
        };
        Decision {
            param: "rx_thread".into(),
            role: "switch".into(),
            default: "off".into(),
            chosen: "on".into(),
            near_equal: vec!["on".into()],
            confidence: "exact (virtual time)".into(),
            why: "The receive thread saves 10 % on small messages.".into(),
            evidence: Evidence::Switch(SwitchEvidence {
                workload: "osu_latency".into(),
                values: ["off".into(), "on".into()],
                measurements: [3, 4],
                per_size: vec![verdict(1, 0.9, Some("on")), verdict(4096, 1.0, None)],
                ranges: vec![
                    "1-2KiB: on faster by 10.0 %".into(),
                    "4KiB-4MiB: no difference".into(),
                ],
                mean_ratio: 0.95,
                not_applicable: Some("1-4: not applicable (the sample says so)".into()),
            }),
            withheld: Some("with rx_thread=on the profile fails on osu_bw".into()),
        }
    }

    fn verification() -> Verification {
        // Gains as literals: serde_json reads back a 17-digit float such as 3.3 / 3.0 - 1.0
        // one ulp off unless its float_roundtrip feature is on.
        let gain = |size, default_value, tuned_value, gain| Gain {
            size,
            default_value,
            tuned_value,
            unit: "us".into(),
            gain,
            low: gain,
            high: gain,
        };
        Verification {
            workload: "osu_latency".into(),
            settings: vec!["eager_limit=12KiB".into()],
            failed: None,
            default_measurement: 5,
            tuned_measurement: 6,
            per_size: vec![
                gain(8192, 3.3, 3.0, 0.1),
                gain(16384, 3.15, 3.0, 0.05),
                gain(32768, 4.4, 4.4, 0.0),
            ],
        }
    }

    /// An emulated fabric: a threshold, a switch and one verification.
    pub(crate) fn outcome() -> Outcome {
        let sizes = [4096, 8192, 16384, 32768];
        let eager = [2.0, 2.6, 3.8, 6.2];
        let rendezvous = [3.0, 3.3, 3.6, 4.4];
        let zip = |c: [f64; 4]| -> Vec<(u64, f64)> { sizes.into_iter().zip(c).collect() };
        Outcome {
            schema_version: SCHEMA_VERSION,
            fabbench_version: "0.1.0".into(),
            fabric: "bxi".into(),
            kind: "emulated, virtual time".into(),
            virtual_time: true,
            library: None,
            command_line: ["fabbench", "autotune", "--fabric", "bxi", "--budget", "10m"]
                .map(String::from)
                .to_vec(),
            start_time: "2025-06-01T10:00:00Z".into(),
            objective: "latency and bandwidth".into(),
            workloads: vec!["osu_latency".into(), "osu_bw".into()],
            sizes: [1, 4 << 20],
            tolerance: 0.02,
            fixed: vec![],
            budget_s: 600.0,
            budget_exhausted: false,
            skipped: vec![],
            defaults: map(&[("eager_limit", "4KiB"), ("rx_thread", "off")]),
            chosen: map(&[("eager_limit", "12KiB"), ("rx_thread", "on")]),
            deployed: map(&[("eager_limit", "12KiB"), ("rx_thread", "off")]),
            gate: vec![
                GateTrial {
                    settings: vec!["eager_limit=12KiB".into(), "rx_thread=on".into()],
                    passed: false,
                    why: "fails on osu_bw from 4MiB (a stall)".into(),
                    verifications: vec![],
                },
                GateTrial {
                    settings: vec!["eager_limit=12KiB".into()],
                    passed: true,
                    why: "no failure".into(),
                    verifications: vec![0],
                },
            ],
            decisions: vec![threshold(), switch()],
            interactions: vec!["rx_thread at eager_limit=12KiB: still on".into()],
            verification: vec![verification()],
            measurements: vec![
                measurement(0, "threshold: eager only", "eager_limit=1MiB", &zip(eager)),
                measurement(
                    1,
                    "threshold: rendezvous only",
                    "eager_limit=0",
                    &zip(rendezvous),
                ),
                measurement(2, "threshold: confirm", "eager_limit=12KiB", &[]),
                measurement(3, "rx_thread=off", "rx_thread=off", &[]),
                measurement(4, "rx_thread=on", "rx_thread=on", &[]),
                measurement(5, "verify: defaults", "", &[]),
                measurement(6, "verify: tuned", "eager_limit=12KiB", &[]),
            ],
            spent: Spent {
                wall_s: 12.5,
                measured_s: 0.07,
                runs: 7,
                points: 8,
            },
            notes: vec!["exhaustive sweep of eager_limit: 82 runs".into()],
        }
    }

    /// Open MPI's shared memory, with an MCA parameter of each kind and a UCX variable.
    pub(crate) fn mpi_outcome() -> Outcome {
        Outcome {
            fabric: "shm@mpi".into(),
            kind: "mpi".into(),
            virtual_time: false,
            library: Some("Open MPI v4.1.4".into()),
            deployed: BTreeMap::new(),
            chosen: map(&[
                ("mpi.btl", "self,vader"),
                ("mpi.btl_vader_eager_limit", "16KiB"),
                ("mpi.btl_vader_rndv_eager_limit", ""),
                ("mpi.UCX_RNDV_THRESH", "auto"),
                ("rx_thread", "on"),
            ]),
            ..outcome()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn export_all_gives_every_format_in_order() {
        let names: Vec<String> = export_all(&sample::mpi_outcome())
            .unwrap()
            .into_iter()
            .map(|(p, _)| p.display().to_string())
            .collect();
        assert_eq!(
            names,
            [
                "profile.toml",
                "mca-params.conf",
                "ompi-tune.conf",
                "autotune.env",
                "autotune.json",
                "report.md"
            ]
        );
        assert_eq!(export_all(&sample::outcome()).unwrap().len(), 3);
    }

    #[test]
    fn shell_quoting_survives_the_shell() {
        assert_eq!(shell_quote("osu_bw"), "osu_bw");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote("^avx"), "'^avx'");
        assert_eq!(shell_quote(""), "''");
    }

    #[test]
    fn comments_stay_comments() {
        assert_eq!(comment("a\nb\u{1}c"), "# a\n# b?c\n");
    }

    #[test]
    fn a_missing_measurement_is_named() {
        let err = measurement(&sample::outcome(), 99, "verification of osu_bw").unwrap_err();
        assert_eq!(
            err.to_string(),
            "verification of osu_bw refers to measurement 99, which the outcome does not hold"
        );
    }
}
