//! The limits as a run: what to measure and how much ([`Request`]), every measurement made in
//! turn ([`measure`]), and the [`Run`] that holds them, one series per measurement on the
//! fabric "host", so the results crate writes, reads back, reports and compares them as it
//! does any run (each series in OSU's text layout, its column naming what it holds).

use std::collections::BTreeMap;
use std::time::SystemTime;

use bench_core::machine::HostInfo;
use bench_core::measure::{Layout, Point};
use results::model::{FabricKind, FabricRun, Manifest, Series};
use results::{Run, SCHEMA_VERSION};
use serde_json::json;

use crate::cma::Cma;
use crate::process::pair_cpus;
use crate::{cacheline, cma, memcpy, tcp, LimitsError};

/// The fabric label every series of the limits is recorded on.
pub const FABRIC: &str = "host";

/// What to measure: how much, and what the manifest records about the build and command.
#[derive(Debug, Clone)]
pub struct Request {
    /// Tiny counts: a first look (and the tests'), finished in a few seconds.
    pub quick: bool,
    pub command_line: Vec<String>,
    pub fabbench_version: String,
    pub git_revision: String,
}

/// Every count, by how much is measured.
#[derive(Debug, Clone, Copy)]
pub struct Counts {
    pub cacheline: cacheline::Counts,
    pub memcpy: memcpy::Counts,
    pub cma: cma::Counts,
    pub tcp: tcp::Counts,
}

impl Counts {
    /// A full measurement takes a few seconds here; a quick one well under two.
    pub fn of(quick: bool) -> Counts {
        if quick {
            Counts {
                cacheline: cacheline::Counts {
                    round_trips: 1_000,
                    batches: 10,
                    warmup_batches: 1,
                },
                memcpy: memcpy::Counts {
                    samples: 5,
                    warmup: 1,
                },
                cma: cma::Counts {
                    calls: 50,
                    warmup: 5,
                },
                tcp: tcp::Counts {
                    blocking: 50,
                    spinning: 50,
                    warmup: 5,
                },
            }
        } else {
            Counts {
                cacheline: cacheline::Counts {
                    round_trips: 10_000,
                    batches: 100,
                    warmup_batches: 5,
                },
                memcpy: memcpy::Counts {
                    samples: 100,
                    warmup: 5,
                },
                cma: cma::Counts {
                    calls: 2_000,
                    warmup: 50,
                },
                tcp: tcp::Counts {
                    blocking: 2_000,
                    spinning: 5_000,
                    warmup: 50,
                },
            }
        }
    }
}

/// Measures every limit, one after the other, and returns them as a run.
pub fn measure(req: &Request) -> Result<Run, LimitsError> {
    let start = SystemTime::now();
    let cpus = pair_cpus()?;
    let counts = Counts::of(req.quick);
    let cacheline = cacheline::measure(cpus, counts.cacheline)?;
    let memcpy = memcpy::measure(cpus.0, counts.memcpy)?;
    let cma = cma::measure(cpus, counts.cma)?;
    let tcp = tcp::measure(cpus, counts.tcp)?;
    let (cma_points, cma_notes, cma_fact) = match cma {
        Cma::Measured(p) => (p, Vec::new(), "permitted".to_string()),
        Cma::Refused(why) => (Vec::new(), vec![why.clone()], why),
    };
    let (line_one, line_two) = variants(cacheline, cacheline::PARAM, "one");
    let (tcp_block, tcp_spin) = variants(tcp, tcp::PARAM, "block");
    let series = vec![
        series(
            cacheline::SUITE_ONE,
            2,
            "fabbench limits: one cache line between two pinned processes, one for both",
            "One way(us)",
            line_one,
            Vec::new(),
        ),
        series(
            cacheline::SUITE_TWO,
            2,
            "fabbench limits: cache lines between two pinned processes, one each",
            "One way(us)",
            line_two,
            Vec::new(),
        ),
        series(
            memcpy::SUITE,
            1,
            "fabbench limits: memcpy, one thread, buffers reused",
            "Bandwidth(GB/s)",
            memcpy,
            Vec::new(),
        ),
        series(
            cma::SUITE,
            2,
            "fabbench limits: one process_vm_readv call",
            "Per call(us)",
            cma_points,
            cma_notes,
        ),
        series(
            tcp::SUITE_BLOCK,
            2,
            "fabbench limits: TCP ping-pong over loopback, TCP_NODELAY, blocking reads",
            "One way(us)",
            tcp_block,
            Vec::new(),
        ),
        series(
            tcp::SUITE_SPIN,
            2,
            "fabbench limits: TCP ping-pong over loopback, TCP_NODELAY, spinning reads",
            "One way(us)",
            tcp_spin,
            Vec::new(),
        ),
    ];
    let stamp = results::run_dir::stamp(start);
    let c = counts;
    let params: BTreeMap<String, serde_json::Value> = [
        (
            cacheline::SUITE_ONE,
            json!({"round_trips": c.cacheline.round_trips, "batches": c.cacheline.batches,
                   "warmup_batches": c.cacheline.warmup_batches}),
        ),
        (
            cacheline::SUITE_TWO,
            json!({"round_trips": c.cacheline.round_trips, "batches": c.cacheline.batches,
                   "warmup_batches": c.cacheline.warmup_batches}),
        ),
        (
            memcpy::SUITE,
            json!({"samples": c.memcpy.samples, "warmup": c.memcpy.warmup}),
        ),
        (
            cma::SUITE,
            json!({"calls": c.cma.calls, "warmup": c.cma.warmup}),
        ),
        (
            tcp::SUITE_BLOCK,
            json!({"round_trips": c.tcp.blocking, "warmup": c.tcp.warmup}),
        ),
        (
            tcp::SUITE_SPIN,
            json!({"round_trips": c.tcp.spinning, "warmup": c.tcp.warmup}),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let host = FabricRun {
        fabric: FABRIC.into(),
        kind: FabricKind::Native,
        emulated: false,
        virtual_time: false,
        ranks: 2,
        settings_line: format!("pairs on CPUs {} and {}", cpus.0, cpus.1),
        tunables: BTreeMap::new(),
        counters: Vec::new(),
        facts: [
            ("cpus".to_string(), format!("{},{}", cpus.0, cpus.1)),
            ("cma".to_string(), cma_fact),
        ]
        .into(),
        compute: Vec::new(),
    };
    Ok(Run {
        manifest: Manifest {
            schema_version: SCHEMA_VERSION,
            fabbench_version: req.fabbench_version.clone(),
            git_revision: req.git_revision.clone(),
            run_id: format!("{stamp}-limits-{FABRIC}"),
            command_line: req.command_line.clone(),
            start_time: humantime::format_rfc3339_seconds(start).to_string(),
            end_time: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
            host: HostInfo::collect(),
            suites: series.iter().map(|s| s.suite.clone()).collect(),
            params,
            fabrics: vec![host],
            partial: None,
            quick: req.quick,
            resumed: Vec::new(),
        },
        series,
    })
}

/// `points` split by their parameter `name`: those where it is `first`, then the others.
fn variants(points: Vec<Point>, name: &str, first: &str) -> (Vec<Point>, Vec<Point>) {
    points
        .into_iter()
        .partition(|p| p.key.params.get(name).map(String::as_str) == Some(first))
}

fn series(
    suite: &str,
    ranks: usize,
    title: &str,
    column: &str,
    points: Vec<Point>,
    notes: Vec<String>,
) -> Series {
    Series {
        suite: suite.into(),
        fabric: FABRIC.into(),
        emulated: false,
        ranks,
        layout: Layout::Osu {
            title: title.into(),
            column: column.into(),
            tail: false,
            tail_at: Vec::new(),
            validation: false,
        },
        points,
        notes,
    }
}
