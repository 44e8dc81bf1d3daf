//! characterise closes the loop on emulated fabrics, whose cards are known: it must recover
//! the card's latency and bandwidth and its protocol switch from measurements alone, and the
//! fitted card, run as the loggp fabric, must give the source fabric's osu_latency and osu_bw.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::common::{bin, scratch, serial};

/// A parameter's value in a built-in card (the outside reference the fit is held to).
fn card_value(fabric: &str, name: &str) -> f64 {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("transports/src/emulated/cards")
        .join(format!("{fabric}.toml"));
    let card: toml::Table = std::fs::read_to_string(&path).unwrap().parse().unwrap();
    let p = card["param"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"].as_str() == Some(name))
        .unwrap_or_else(|| panic!("{name} not in {}", path.display()));
    let v = p["value"].as_str().unwrap();
    bench_size(v)
}

/// Card values are numbers or sizes ("40000", "1M").
fn bench_size(v: &str) -> f64 {
    v.parse::<f64>().unwrap_or_else(|_| {
        let (n, unit) = v.split_at(v.len() - 1);
        let mult = match unit {
            "K" => 1024.0,
            "M" => 1024.0 * 1024.0,
            _ => panic!("size {v}"),
        };
        n.parse::<f64>().unwrap() * mult
    })
}

/// Characterises `fabric` and returns the directory it wrote and its fit.json.
fn characterise(fabric: &str, out: &Path) -> (PathBuf, serde_json::Value) {
    let o = std::process::Command::new(bin())
        .args([
            "characterise",
            "--fabric",
            fabric,
            "--sizes",
            "1:4M",
            "-q",
            "-o",
        ])
        .arg(out)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "characterise {fabric} failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let dir = std::fs::read_dir(out)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.to_string_lossy()
                .ends_with(&format!("-characterise-{fabric}"))
        })
        .expect("a characterisation directory");
    let fit: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("fit.json")).unwrap()).unwrap();
    (dir, fit)
}

/// osu_latency (us) and osu_bw (MB/s) by (suite, size) from a run of `args`.
fn osu(args: &[&str], out: &Path) -> BTreeMap<(String, u64), f64> {
    let o = std::process::Command::new(bin())
        .args([
            "run",
            "osu_latency",
            "osu_bw",
            "-m",
            "1:4M",
            "-i",
            "20",
            "-x",
            "4",
        ])
        .args(args)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let run = std::fs::read_dir(out)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join("summary.csv").exists())
        .expect("a run directory");
    let mut r = csv::Reader::from_path(run.join("summary.csv")).unwrap();
    let h = r.headers().unwrap().clone();
    let col = |n: &str| h.iter().position(|c| c == n).unwrap();
    let (suite, size, value) = (col("suite"), col("size"), col("value"));
    r.records()
        .map(|x| x.unwrap())
        .map(|x| {
            (
                (x[suite].to_string(), x[size].parse().unwrap()),
                x[value].parse().unwrap(),
            )
        })
        .collect()
}

fn segments(fit: &serde_json::Value) -> &Vec<serde_json::Value> {
    fit["fit"]["segments"].as_array().unwrap()
}

fn param(seg: &serde_json::Value, name: &str) -> f64 {
    seg["params"][name].as_f64().unwrap()
}

/// The bandwidth a segment's long stream approaches: its slowest per-byte cost.
fn limit_mbs(seg: &serde_json::Value) -> f64 {
    let nic = param(seg, "gap_per_byte_ns") + param(seg, "extra_gap_per_byte_ns");
    let per_byte = ["send_per_byte_ns", "recv_per_byte_ns"]
        .iter()
        .map(|p| param(seg, p))
        .fold(nic, f64::max);
    1e3 / per_byte
}

/// Runs the fitted card as the loggp fabric beside the source fabric: every size of both
/// OSU tests within `tolerance`.
fn reproduces(fabric: &str, card: &Path, scratch_dir: &Path, tolerance: f64) {
    let source = osu(&["--fabric", fabric], &scratch_dir.join("source"));
    let card = card.to_str().unwrap();
    let model = osu(
        &["--fabric", "loggp", "--model", card],
        &scratch_dir.join("model"),
    );
    assert_eq!(source.len(), model.len());
    let mut worst = (0.0f64, String::new());
    for (key, want) in &source {
        let got = model[key];
        let err = (got - want) / want;
        if err.abs() > worst.0.abs() {
            worst = (err, format!("{key:?}: {fabric} {want}, model {got}"));
        }
    }
    assert!(
        worst.0.abs() <= tolerance,
        "worst {:+.1} % at {}",
        worst.0 * 100.0,
        worst.1
    );
}

#[test]
fn bxi_card_recovered_and_reproduced() {
    let _g = serial();
    let out = scratch("characterise-bxi");
    let (dir, fit) = characterise("bxi", &out);
    let segs = segments(&fit);
    // L is the time of flight plus the NIC's per-message cost; the overheads are apart.
    let latency = card_value("bxi", "latency_ns") + card_value("bxi", "nic_message_ns");
    let l = param(&segs[0], "latency_ns");
    assert!(
        (l - latency).abs() <= 0.05 * latency,
        "L {l} ns, card {latency} ns"
    );
    // Large messages stream at the link's rate (Gb/s to MB/s). The fit may carry that per-byte
    // cost in G or, where a receive waited for its data, in o_r: the limit is the slowest.
    let link_mbs = card_value("bxi", "link_gbps") * 1e3 / 8.0;
    let mbs = limit_mbs(segs.last().unwrap());
    assert!(
        (mbs - link_mbs).abs() <= 0.05 * link_mbs,
        "limit {mbs} MB/s, card {link_mbs}"
    );
    // The eager/rendezvous switch, bracketed within one refinement step (32K..64K in 8).
    let threshold = card_value("bxi", "rendezvous") as u64;
    let switches = fit["fit"]["switches"].as_array().unwrap();
    let s = switches
        .iter()
        .find(|s| {
            s["after"].as_u64().unwrap() < threshold + 1
                && threshold < s["before"].as_u64().unwrap()
        })
        .unwrap_or_else(|| panic!("no switch brackets {threshold}: {switches:?}"));
    let width = s["before"].as_u64().unwrap() - s["after"].as_u64().unwrap();
    assert!(width <= 4096, "switch {s} wider than one refinement step");
    reproduces("bxi", &dir.join("card.toml"), &out, 0.10);
    std::fs::remove_dir_all(&out).ok();
}

#[test]
fn hyperlink_card_recovered_and_reproduced() {
    let _g = serial();
    let out = scratch("characterise-hyperlink");
    let (dir, fit) = characterise("hyperlink", &out);
    let segs = segments(&fit);
    // Hyperlink's sender moves the data itself (CPU remote writes, EDMA), so its time of
    // flight hides inside o_s: the card's latency and bandwidth are what it gives end to end,
    // osu_latency at 1 byte and osu_bw at 4 MiB, which the fit extrapolates to.
    let source = osu(&["--fabric", "hyperlink"], &out.join("card-facts"));
    let one_way = |seg: &serde_json::Value, s: f64| {
        param(seg, "send_ns")
            + param(seg, "recv_ns")
            + param(seg, "latency_ns")
            + s * (param(seg, "send_per_byte_ns")
                + param(seg, "recv_per_byte_ns")
                + param(seg, "gap_per_byte_ns"))
    };
    let lat = one_way(&segs[0], 1.0) / 1e3;
    let want = source[&("osu_latency".to_string(), 1)];
    assert!(
        (lat - want).abs() <= 0.05 * want,
        "1 B: {lat} us, card {want} us"
    );
    let limit = limit_mbs(segs.last().unwrap());
    let want = source[&("osu_bw".to_string(), 4 << 20)];
    assert!(
        (limit - want).abs() <= 0.05 * want,
        "limit {limit} MB/s, card {want} MB/s"
    );
    // The switch from CPU copies to EDMA, within one refinement step (8K..16K in 8).
    let threshold = card_value("hyperlink", "dma_threshold") as u64;
    let switches = fit["fit"]["switches"].as_array().unwrap();
    assert!(
        switches.iter().any(|s| {
            let (a, b) = (s["after"].as_u64().unwrap(), s["before"].as_u64().unwrap());
            a < threshold && threshold <= b && b - a <= 1024
        }),
        "no switch within 1 KiB of {threshold}: {switches:?}"
    );
    reproduces("hyperlink", &dir.join("card.toml"), &out, 0.10);
    std::fs::remove_dir_all(&out).ok();
}

#[test]
fn rounds_are_measured_and_their_count_checked() {
    let _g = serial();
    let out = scratch("characterise-rounds");
    // Two rounds of an emulated fabric: identical (virtual time), so no interval and every
    // size holds two values; a small range keeps it quick.
    let o = std::process::Command::new(bin())
        .args([
            "characterise",
            "--fabric",
            "bxi",
            "--sizes",
            "1:64K",
            "--rounds",
            "2",
            "--refine",
            "0",
            "-q",
            "-o",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dir = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with("-characterise-bxi"))
        .expect("a characterisation directory");
    let fit: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("fit.json")).unwrap()).unwrap();
    assert_eq!(fit["fit"]["rounds"], 2, "{}", fit["fit"]["rounds"]);
    assert_eq!(fit["runs"].as_array().unwrap().len(), 2);
    let pingpong = fit["observations"]["times"]["pingpong"]
        .as_object()
        .unwrap();
    assert!(!pingpong.is_empty());
    for (size, rounds) in pingpong {
        let r = rounds.as_array().unwrap();
        assert_eq!(r.len(), 2, "size {size}: {r:?}");
        assert_eq!(r[0], r[1], "size {size}: virtual time repeats exactly");
    }
    std::fs::remove_dir_all(&out).ok();
    let o = std::process::Command::new(bin())
        .args(["characterise", "--fabric", "bxi", "--rounds", "0"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--rounds 0: give 1 to 100"), "{err}");
}
