//! Emulated fabrics through the real binary: exact and reproducible results, and the
//! signature each modelled mechanism leaves in the OSU curves. Virtual time is exact, so a few
//! iterations suffice and comparisons can be strict.

use std::collections::BTreeMap;

use crate::common::*;

/// size -> value of the printed OSU rows.
fn curve(r: &Run) -> BTreeMap<u64, f64> {
    r.stdout()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f[0].parse().unwrap(), f[1].parse().unwrap())
        })
        .collect()
}

fn osu(name: &str, args: &[&str]) -> Run {
    let mut full = vec!["run"];
    full.extend_from_slice(args);
    full.extend_from_slice(&["-i", "4", "-x", "1"]);
    let r = run(name, &full);
    r.ok();
    r
}

#[test]
fn the_same_command_twice_gives_identical_numbers() {
    let _g = serial();
    for fabric in ["hyperlink", "rapidio", "bxi"] {
        let args = ["osu_latency", "osu_bw", "--fabric", fabric, "-m", "1:1M"];
        let a = osu("det-a", &args);
        let b = osu("det-b", &args);
        for f in ["summary.csv", "samples.csv"] {
            let x = std::fs::read(a.ok().join(f)).unwrap();
            let y = std::fs::read(b.ok().join(f)).unwrap();
            assert!(x == y, "{fabric}: {f} differs between two identical runs");
        }
        assert_eq!(a.stdout(), b.stdout(), "{fabric}: printed numbers differ");
    }
}

#[test]
fn osu_host_buffer_arguments_measure_what_no_arguments_do() {
    // ReFrame's OSU test appends OSU's buffer locations after the options.
    let _g = serial();
    let base = ["osu_latency", "-f", "rapidio", "-m", "8", "-c"];
    let plain = osu("buf-none", &base);
    let mut given = base.to_vec();
    given.extend(["H", "H"]);
    let host = osu("buf-hh", &given);
    assert_eq!(curve(&host), curve(&plain));
    assert_eq!(curve(&host).len(), 5, "{}", host.stdout());
}

#[test]
fn emulated_runs_say_so_in_output_manifest_and_csv() {
    let _g = serial();
    let r = osu("says", &["osu_latency", "--fabric", "rapidio", "-m", "8:8"]);
    assert!(
        r.stdout()
            .contains("fabric rapidio (emulated, virtual time)"),
        "{}",
        r.stdout()
    );
    let m = r.manifest();
    assert_eq!(m["fabrics"][0]["emulated"], true);
    assert_eq!(m["fabrics"][0]["kind"], "emulated");
    assert_eq!(m["fabrics"][0]["virtual_time"], true);
    assert_eq!(
        m["fabrics"][0]["tunables"]["rapidio.link_mbps"]["value"],
        192.0
    );
    let rows = r.summary();
    assert_eq!(&rows[0][2], "true", "emulated column");
}

#[test]
fn validation_passes_on_every_emulated_fabric() {
    let _g = serial();
    for fabric in ["hyperlink", "rapidio", "bxi"] {
        for suite in ["osu_latency", "osu_bw", "osu_bibw"] {
            let r = osu("valid", &[suite, "--fabric", fabric, "-m", "1:256K", "-c"]);
            let rows: Vec<&str> = r
                .stdout()
                .lines()
                .filter(|l| !l.starts_with('#') && !l.is_empty())
                .map(|l| l.split_whitespace().nth(2).unwrap_or(""))
                .collect::<Vec<_>>()
                .into_iter()
                .map(|s| if s == "Pass" { "Pass" } else { "other" })
                .collect();
            assert!(
                !rows.is_empty() && rows.iter().all(|s| *s == "Pass"),
                "{fabric} {suite}"
            );
        }
    }
}

#[test]
fn hyperlink_bandwidth_changes_slope_at_the_dma_threshold() {
    let _g = serial();
    let bw = curve(&osu(
        "hl-dma",
        &["osu_bw", "--fabric", "hyperlink", "-m", "4K:64K"],
    ));
    // CPU memcpy below 16 KB: flat; EDMA from 16 KB: a step up.
    assert!(bw[&8192] / bw[&4096] < 1.1, "{bw:?}");
    assert!(bw[&16384] / bw[&8192] > 1.5, "{bw:?}");
    // Moving the threshold moves the step.
    let moved = curve(&osu(
        "hl-dma32",
        &[
            "osu_bw",
            "--fabric",
            "hyperlink",
            "-m",
            "4K:64K",
            "--set",
            "hyperlink.dma_threshold=32K",
        ],
    ));
    assert!(moved[&16384] / moved[&8192] < 1.1, "{moved:?}");
    assert!(moved[&32768] / moved[&16384] > 1.5, "{moved:?}");
}

#[test]
fn hyperlink_receive_thread_costs_about_ten_percent() {
    let _g = serial();
    let on = curve(&osu(
        "hl-on",
        &["osu_bw", "--fabric", "hyperlink", "-m", "1M:1M"],
    ));
    let off = curve(&osu(
        "hl-off",
        &[
            "osu_bw",
            "--fabric",
            "hyperlink",
            "-m",
            "1M:1M",
            "--set",
            "rx_thread=off",
        ],
    ));
    let gain = off[&1048576] / on[&1048576];
    assert!((1.05..=1.15).contains(&gain), "off/on = {gain}");
}

#[test]
fn hyperlink_without_receive_thread_a_2mb_burst_fails_naming_the_limit() {
    let _g = serial();
    let start = std::time::Instant::now();
    let r = run(
        "hl-stall",
        &[
            "run",
            "osu_bw",
            "--fabric",
            "hyperlink",
            "--set",
            "rx_thread=off",
            "-m",
            "2M:2M",
            "-i",
            "2",
        ],
    );
    assert_eq!(r.code(), 1, "{}", r.stderr());
    let err = r.stderr();
    assert!(err.contains("hyperlink window stall"), "{err}");
    assert!(err.contains("the window holds 32"), "{err}");
    assert!(err.contains("at most 2095104 bytes"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(start.elapsed() < std::time::Duration::from_secs(20));
    assert!(r.dir.is_none(), "no results for a failed run");
    // With the thread on, the same burst completes.
    osu(
        "hl-burst-on",
        &["osu_bw", "--fabric", "hyperlink", "-m", "2M:2M"],
    );
}

#[test]
fn hyperlink_calibration_point_matches_ti() {
    let _g = serial();
    // 4 lanes x 3.125 Gbaud: TI reports about 500 MB/s at the MPI level.
    let bw = curve(&osu(
        "hl-cal",
        &[
            "osu_bw",
            "--fabric",
            "hyperlink",
            "-m",
            "4M:4M",
            "--set",
            "hyperlink.gbaud=3.125",
        ],
    ));
    let v = bw[&4194304];
    assert!((400.0..=600.0).contains(&v), "{v} MB/s");
}

#[test]
fn rapidio_stays_under_its_link_peak() {
    let _g = serial();
    let bw = curve(&osu(
        "rio-peak",
        &["osu_bw", "--fabric", "rapidio", "-m", "1:4M"],
    ));
    let peak = 192.0 * 0.95;
    assert!(bw.values().all(|v| *v < peak), "{bw:?}");
    assert!(
        bw[&4194304] > 0.9 * peak,
        "large messages are link-bound: {bw:?}"
    );
    // A model card from a file lowers the peak.
    let dir = scratch("card");
    let card = dir.join("slow.toml");
    std::fs::write(&card, "fabric = \"rapidio\"\n[params]\nlink_mbps = 100\n").unwrap();
    let slow = curve(&osu(
        "rio-card",
        &[
            "osu_bw",
            "--fabric",
            "rapidio",
            "-m",
            "4M:4M",
            "--model",
            card.to_str().unwrap(),
        ],
    ));
    assert!(slow[&4194304] < 95.0, "{slow:?}");
}

/// Sizes at or below both thresholds and above both are unchanged; sizes between them take
/// the other protocol, so their latency changes: the switch moves with the threshold.
fn switch_moves(a: &BTreeMap<u64, f64>, b: &BTreeMap<u64, f64>, lo: u64, hi: u64) {
    for (size, x) in a {
        let y = b[size];
        if *size <= lo || *size > hi {
            assert_eq!(x, &y, "size {size} should not change");
        } else {
            assert_ne!(x, &y, "size {size} should change protocol");
        }
    }
}

#[test]
fn rapidio_small_large_switch_moves_with_eager_limit() {
    let _g = serial();
    let a = curve(&osu(
        "rio-4k",
        &[
            "osu_latency",
            "--fabric",
            "rapidio",
            "-m",
            "1K:64K",
            "--set",
            "eager_limit=4K",
        ],
    ));
    let b = curve(&osu(
        "rio-16k",
        &[
            "osu_latency",
            "--fabric",
            "rapidio",
            "-m",
            "1K:64K",
            "--set",
            "eager_limit=16K",
        ],
    ));
    switch_moves(&a, &b, 4096, 16384);
}

#[test]
fn bxi_latency_switch_moves_with_rendezvous() {
    let _g = serial();
    let a = curve(&osu(
        "bxi-40k",
        &["osu_latency", "--fabric", "bxi", "-m", "1K:128K"],
    ));
    let b = curve(&osu(
        "bxi-8k",
        &[
            "osu_latency",
            "--fabric",
            "bxi",
            "-m",
            "1K:128K",
            "--set",
            "bxi.rendezvous=8K",
        ],
    ));
    switch_moves(&a, &b, 8192, 40000);
    // eager_limit is not bxi's knob: setting it says which one is.
    let r = run(
        "bxi-eager",
        &[
            "run",
            "osu_latency",
            "--fabric",
            "bxi",
            "--set",
            "eager_limit=8K",
        ],
    );
    assert_eq!(r.code(), 2);
    assert!(
        r.stderr().contains("use --set bxi.rendezvous=VALUE"),
        "{}",
        r.stderr()
    );
}

/// The smallest queues and buffers a card allows still carry every message: a message of more
/// buffers or entries than a queue holds streams through it (docs/fabrics: "Values that cannot
/// carry a message" lists what does not).
#[test]
fn the_smallest_queues_and_buffers_carry_every_size() {
    let r = osu(
        "bxi-smallest",
        &[
            "osu_bw",
            "--fabric",
            "bxi",
            "-m",
            "1:1M",
            "--set",
            "bxi.recvq=1",
            "--set",
            "bxi.sendq=1",
            "--set",
            "bxi.buffer_size=256",
        ],
    );
    assert_eq!(curve(&r).len(), 21);
    assert!(r.manifest().to_string().contains("bxi.failed_acks"));
    let r = osu(
        "rapidio-smallest",
        &[
            "osu_bw",
            "--fabric",
            "rapidio",
            "-m",
            "1:1M",
            "--set",
            "rapidio.common_queue_entries=1",
            "--set",
            "rapidio.dedicated_queues=1",
        ],
    );
    assert_eq!(curve(&r).len(), 21);
}
