//! Heterogeneous peers through the real binary: with `wire.byte_order=big` on rank 1 only, that
//! rank encodes every header and typed element as a big-endian host would, and the native rank
//! must still agree with it on every byte. The OSU trio validates its data (`-c`) at eager,
//! rendezvous and single-copy sizes, and NPB's CG, IS and FT (doubles, ints and complex
//! numbers through point-to-point calls and collectives) verify their results, on shm and tcp.

use crate::common::*;

const BIG_RANK_1: [&str; 4] = [
    "--set",
    "wire.byte_order=big",
    "--set",
    "wire.byte_order_rank=1",
];

/// The rank that took the big-endian path says so in the manifest's facts; the other does not.
fn rank_1_was_big(r: &Run, what: &str) {
    let facts = &r.manifest()["fabrics"][0]["facts"];
    assert_eq!(facts["rank1.byte_order"], "big", "{what}: {facts}");
    assert!(facts.get("rank0.byte_order").is_none(), "{what}: {facts}");
}

#[test]
fn the_osu_trio_validates_with_a_big_endian_rank_on_shm_and_tcp() {
    let _g = serial();
    for fabric in ["shm", "tcp"] {
        for suite in ["osu_latency", "osu_bw", "osu_bibw"] {
            for sizes in ["0:64K", "1M:2M"] {
                let what = format!("{suite} {sizes} on {fabric}");
                let mut args = vec![
                    "run", suite, "--fabric", fabric, "-m", sizes, "-i", "5", "-x", "1", "-c",
                ];
                args.extend(BIG_RANK_1);
                let r = run("endian-osu", &args);
                r.ok();
                let rows: Vec<String> = r
                    .stdout()
                    .lines()
                    .filter(|l| !l.starts_with('#') && !l.is_empty())
                    .map(String::from)
                    .collect();
                assert!(!rows.is_empty(), "{what}");
                assert!(rows.iter().all(|l| l.ends_with("Pass")), "{what}: {rows:?}");
                assert!(
                    r.stdout()
                        .contains("wire.byte_order=big wire.byte_order_rank=1"),
                    "{what}: the settings line names the test mode"
                );
                rank_1_was_big(&r, &what);
            }
        }
    }
}

#[test]
fn npb_kernels_verify_with_a_big_endian_rank_on_shm_and_tcp() {
    let _g = serial();
    for fabric in ["shm", "tcp"] {
        let mut args = vec![
            "run", "npb", "--kernel", "cg,is,ft", "--class", "S", "--fabric", fabric, "-n", "2",
        ];
        args.extend(BIG_RANK_1);
        let r = run("endian-npb", &args);
        r.ok();
        let out = r.stdout();
        for k in ["CG", "IS", "FT"] {
            let at = out
                .find(&format!(" {k} Benchmark Completed."))
                .unwrap_or_else(|| panic!("{k} on {fabric}: no report in\n{out}"));
            let verdict = out[at..]
                .lines()
                .find(|l| l.starts_with(" Verification"))
                .unwrap_or("");
            assert_eq!(
                verdict, " Verification    =               SUCCESSFUL",
                "{k} on {fabric}:\n{out}"
            );
        }
        rank_1_was_big(&r, &format!("npb on {fabric}"));
    }
}

#[test]
fn a_byte_order_rank_outside_the_job_is_refused() {
    let r = run(
        "endian-refused",
        &[
            "run",
            "osu_latency",
            "--fabric",
            "shm",
            "--set",
            "wire.byte_order=big",
            "--set",
            "wire.byte_order_rank=2",
        ],
    );
    assert_eq!(r.code(), 2, "{}", r.stderr());
    let err = r.stderr();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("wire.byte_order_rank=2: the job has ranks 0..1"),
        "{err}"
    );
    assert!(r.dir.is_none(), "nothing is written for a refused run");
}
