//! The ofi fabric through the real binary: the OSU trio validated (`-c`) on each libfabric
//! provider CI installs (shm, tcp;ofi_rxm, net), with fabbench's engine matching and with the
//! provider's; large messages read in place where the provider has RMA; the provider's facts
//! in the manifest; and what a user sees without libfabric or with a provider it lacks.
//!
//! Where libfabric or a provider is missing (a developer's machine) those runs are skipped and
//! say so; under CI (`CI` set, libfabric installed by `.ci/run`) a missing one fails.

use crate::common::*;

const PROVIDERS: [&str; 3] = ["shm", "tcp;ofi_rxm", "net"];

/// The providers of `PROVIDERS` libfabric offers here.
fn offered() -> Vec<&'static str> {
    let have = transports::ofi::offer().map(|(_, p)| p).unwrap_or_default();
    let mut out = Vec::new();
    for p in PROVIDERS {
        if have.iter().any(|h| h == p) {
            out.push(p);
        } else {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI installs libfabric, yet provider {p} is not offered (libfabric offers {have:?})"
            );
            eprintln!("ofi: skipping provider {p}: libfabric here offers {have:?}");
        }
    }
    out
}

fn rows(stdout: &str) -> Vec<(u64, String)> {
    stdout
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f[0].parse().unwrap(), f.last().unwrap().to_string())
        })
        .collect()
}

fn fact(r: &Run, name: &str) -> String {
    r.manifest()["fabrics"][0]["facts"][format!("rank0.{name}")]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn the_osu_trio_validates_on_every_provider_with_either_matching() {
    let _g = serial();
    for provider in offered() {
        for matching in ["engine", "provider"] {
            for suite in ["osu_latency", "osu_bw", "osu_bibw"] {
                let set_p = format!("ofi.provider={provider}");
                let set_m = format!("ofi.matching={matching}");
                let args = [
                    "run", suite, "--fabric", "ofi", "--set", &set_p, "--set", &set_m, "-m",
                    "0:1M", "-i", "4", "-x", "1", "-c",
                ];
                let r = run("ofi-trio", &args);
                r.ok();
                let rows = rows(&r.stdout());
                let what = format!("{suite} on {provider} ({matching} matching)");
                // 0 bytes, then every power of two to 1 MiB.
                let sizes: Vec<u64> = rows.iter().map(|r| r.0).collect();
                let want: Vec<u64> = std::iter::once(0).chain((0..=20).map(|k| 1 << k)).collect();
                assert_eq!(sizes, want, "{what}");
                for (size, status) in rows {
                    assert_eq!(status, "Pass", "{what} at {size} bytes");
                }
                assert_eq!(fact(&r, "ofi_provider"), provider, "{what}");
                assert_eq!(fact(&r, "ofi_matching"), matching, "{what}");
                if matching == "engine" {
                    // Every provider here has RMA: messages past the eager limit are read in
                    // place, never copied through the wire's buffers.
                    assert!(fact(&r, "ofi_caps").contains("FI_RMA"), "{what}");
                    assert!(r.counter("rendezvous_single_copy_sends") > 0, "{what}");
                    assert_eq!(r.counter("rendezvous_copy_sends"), 0, "{what}");
                }
            }
        }
    }
}

#[test]
fn the_manifest_records_the_providers_facts() {
    let _g = serial();
    if !offered().contains(&"shm") {
        return;
    }
    let r = run(
        "ofi-facts",
        &[
            "run",
            "osu_latency",
            "--fabric",
            "ofi",
            "--set",
            "ofi.provider=shm",
            "-m",
            "8:8",
            "-i",
            "2",
            "-x",
            "1",
        ],
    );
    r.ok();
    // shm asks for virtual addresses in RMA; its addresses are strings.
    assert_eq!(fact(&r, "ofi_mr_mode"), "FI_MR_VIRT_ADDR");
    assert!(fact(&r, "ofi_library").starts_with("libfabric 1."));
    assert!(
        fact(&r, "ofi_local_address").starts_with("fi_shm://"),
        "{}",
        fact(&r, "ofi_local_address")
    );
    for name in [
        "ofi_inject_size",
        "ofi_max_msg_size",
        "ofi_provider_version",
        "ofi_data_progress",
    ] {
        assert!(!fact(&r, name).is_empty(), "{name} is not recorded");
    }
}

#[test]
fn without_libfabric_ofi_is_unusable_and_says_why() {
    let _g = serial();
    let missing = "/nonexistent/libfabric.so.1";
    let list = std::process::Command::new(bin())
        .args(["list", "fabrics"])
        .env("FABBENCH_LIBFABRIC", missing)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&list.stdout);
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("ofi "))
        .expect("ofi is listed");
    assert!(line.contains("unusable"), "{line}");
    assert!(
        line.contains(&format!("FABBENCH_LIBFABRIC={missing} could not be loaded")),
        "{line}"
    );
    let out = scratch("ofi-missing");
    let run = std::process::Command::new(bin())
        .args(["run", "osu_latency", "--fabric", "ofi", "--out"])
        .arg(&out)
        .env("FABBENCH_LIBFABRIC", missing)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(2));
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("fabric ofi cannot run here"), "{err}");
    assert!(
        entries(&out).is_empty(),
        "nothing is written: {:?}",
        entries(&out)
    );
}

#[test]
fn a_provider_libfabric_lacks_is_refused_naming_those_it_has() {
    let _g = serial();
    if offered().is_empty() {
        return;
    }
    let r = run(
        "ofi-bad",
        &[
            "run",
            "osu_latency",
            "--fabric",
            "ofi",
            "--set",
            "ofi.provider=verbs",
        ],
    );
    assert_eq!(r.code(), 2, "{}", r.stderr());
    let err = r.stderr();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("ofi.provider=verbs"), "{err}");
    assert!(
        err.contains("valid: auto, ") && err.contains("shm"),
        "{err}"
    );
}

#[test]
fn a_rendezvous_by_write_writes_in_place_on_every_provider() {
    let _g = serial();
    for provider in offered() {
        let set_p = format!("ofi.provider={provider}");
        let r = run(
            "ofi-write",
            &[
                "run",
                "osu_bw",
                "--fabric",
                "ofi",
                "--set",
                &set_p,
                "--set",
                "ofi.rndv=write",
                "-m",
                "64K:1M",
                "-i",
                "4",
                "-x",
                "1",
                "-c",
            ],
        );
        r.ok();
        for (size, status) in rows(&r.stdout()) {
            assert_eq!(status, "Pass", "{provider} at {size} bytes");
        }
        // After the first message (a read, which proves RMA works) the sender writes.
        let writes: u64 = fact(&r, "ofi_writes_in_place").parse().unwrap();
        assert!(writes > 0, "{provider}: no write in place");
        assert_eq!(r.counter("single_copy_fallbacks"), 0, "{provider}");
        assert_eq!(r.counter("rendezvous_copy_sends"), 0, "{provider}");
    }
}
