//! The mpi fabric through the real binary and Debian's Open MPI (built with `--features mpi`):
//! the OSU trio through MPI, a table beside fabbench's own shm, an MPI variable that visibly
//! takes effect, and the clear errors: a bad variable name, a vendor preset whose MPI is not
//! here, and a binary started by another MPI's launcher.

use std::collections::BTreeMap;
use std::process::{Command, Stdio};

use crate::common::*;

fn curve(out: &str) -> BTreeMap<u64, (f64, String)> {
    out.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (
                f[0].parse().unwrap(),
                (f[1].parse().unwrap(), f.get(2).unwrap_or(&"").to_string()),
            )
        })
        .collect()
}

#[test]
fn the_osu_trio_validates_through_mpi() {
    let _g = serial();
    for suite in ["osu_latency", "osu_bw", "osu_bibw"] {
        for fabric in ["mpi", "tcp@mpi"] {
            let r = run(
                "mpi-trio",
                &[
                    "run", suite, "--fabric", fabric, "-m", "1:1M", "-i", "5", "-x", "1", "-c",
                ],
            );
            r.ok();
            let c = curve(&r.stdout());
            assert_eq!(c.len(), 21, "{suite} on {fabric}: {}", r.stdout());
            assert!(c.values().all(|(_, v)| v == "Pass"), "{suite} on {fabric}");
            let m = r.manifest();
            let lib = m["fabrics"][0]["facts"]["rank0.mpi_library_version"]
                .as_str()
                .unwrap()
                .to_string();
            assert!(lib.contains("Open MPI"), "{lib}");
        }
    }
}

#[test]
fn ofi_at_mpi_is_open_mpis_ofi_mtl() {
    let _g = serial();
    // Open MPI 4.1 leaves tcp out of the ofi MTL unless named: the provider fabbench's own ofi
    // fabric also runs here.
    let r = run(
        "ofi-mpi",
        &[
            "run",
            "osu_latency",
            "--fabric",
            "ofi@mpi",
            "-m",
            "1:64K",
            "-i",
            "5",
            "-x",
            "1",
            "-c",
            "--set",
            "mpi.mtl_ofi_provider_include=tcp;ofi_rxm",
        ],
    );
    r.ok();
    let c = curve(&r.stdout());
    assert_eq!(c.len(), 17, "{}", r.stdout());
    assert!(c.values().all(|(_, v)| v == "Pass"), "{}", r.stdout());
    let settings = r
        .stdout()
        .lines()
        .find(|l| l.starts_with("# fabbench"))
        .unwrap_or_default()
        .to_string();
    for want in [
        "mpi.mtl=ofi",
        "mpi.pml=cm",
        "mpi.mtl_ofi_provider_include=tcp;ofi_rxm",
    ] {
        assert!(settings.contains(want), "{want} in {settings}");
    }
}

#[test]
fn shm_and_mpi_in_one_table() {
    let _g = serial();
    let r = run(
        "shm-mpi",
        &[
            "run",
            "osu_latency",
            "--fabric",
            "shm,mpi",
            "-m",
            "1:4K",
            "-i",
            "200",
            "-x",
            "10",
        ],
    );
    r.ok();
    let out = r.stdout();
    let header = out.lines().find(|l| l.starts_with("# Size")).unwrap();
    assert!(
        header.contains("shm Avg Latency(us)") && header.contains("mpi Avg Latency(us)"),
        "{header}"
    );
    assert!(out.contains("# mpi (mpi): Open MPI v4.1"), "{out}");
    for line in out.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        assert_eq!(line.split_whitespace().count(), 3, "{line}");
    }
}

#[test]
fn an_mpi_variable_takes_effect() {
    let _g = serial();
    let step = |eager: &str| {
        let r = run(
            "vader-eager",
            &[
                "run",
                "osu_latency",
                "--fabric",
                "shm@mpi",
                "-m",
                "512:2K",
                "-i",
                "2000",
                "--set",
                &format!("mpi.btl_vader_eager_limit={eager}"),
            ],
        );
        r.ok();
        let facts = r.manifest()["fabrics"][0]["facts"].clone();
        let c = curve(&r.stdout());
        (c[&1024].0 / c[&512].0, facts)
    };
    let (low, facts) = step("1K");
    let (high, _) = step("16K");
    // With a 1 KiB eager limit a 1 KiB message (plus vader's header) goes by rendezvous: a
    // step between 512 B and 1 KiB that a 16 KiB limit does not have. Compared as ratios of
    // the two runs, so a slow or fast host moves both alike.
    assert!(
        low > 1.3 * high,
        "the 1K/512 latency step with btl_vader_eager_limit=1K ({low:.2}) is not above the one with 16K ({high:.2})"
    );
    assert_eq!(
        facts["rank0.mpi_env.OMPI_MCA_btl_vader_eager_limit"],
        "1024"
    );
}

#[test]
fn bad_mpi_input_gets_a_clear_error() {
    let out = raw(&[
        "run",
        "osu_latency",
        "--fabric",
        "mpi",
        "--set",
        "mpi.btl_vadr_eager_limit=8K",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("did you mean 'mpi.btl_vader_eager_limit'"),
        "{err}"
    );
    let out = raw(&["run", "osu_bw", "--fabric", "hyperlink@mpi"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("needs TI's Open MPI with its hlink BTL"),
        "{err}"
    );
    assert!(
        err.contains("run the emulated model: --fabric hyperlink"),
        "{err}"
    );
    let out = raw(&[
        "run",
        "osu_bw",
        "--fabric",
        "mpi",
        "--mpirun",
        "/nonexistent/mpirun",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot run /nonexistent/mpirun"));
}

#[test]
fn started_by_another_mpis_launcher_says_so() {
    let _g = serial();
    // A stand-in for MPICH's Hydra: it says it is Hydra and starts the ranks with PMI_RANK and
    // PMI_SIZE, which Open MPI does not read, so each process sees a world of one.
    let dir = scratch("hydra");
    let fake = dir.join("mpirun");
    std::fs::write(
        &fake,
        r#"#!/bin/sh
if [ "$1" = "--version" ]; then echo "HYDRA build details:"; exit 0; fi
n=1
while [ $# -gt 2 ]; do
  case "$1" in
    -n) n=$2; shift 2;;
    -genv) export "$2=$3"; shift 3;;
    *) shift;;
  esac
done
i=0; pids=""
while [ $i -lt $n ]; do PMI_RANK=$i PMI_SIZE=$n "$1" "$2" & pids="$pids $!"; i=$((i+1)); done
st=0; for p in $pids; do wait $p || st=1; done; exit $st
"#,
    )
    .unwrap();
    Command::new("chmod").arg("+x").arg(&fake).status().unwrap();
    let r = run(
        "wrong-mpirun",
        &[
            "run",
            "osu_latency",
            "--fabric",
            "mpi",
            "--mpirun",
            fake.to_str().unwrap(),
            "--set",
            "timeout=5s",
        ],
    );
    assert_eq!(r.code(), 1, "{}", r.stderr());
    let err = r.stderr();
    assert!(err.contains("MPI sees rank 0 of a world of 1"), "{err}");
    assert!(err.contains("built against Open MPI"), "{err}");
}

#[test]
fn started_by_an_external_mpirun() {
    let _g = serial();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = scratch("ext-mpirun");
    let o = Command::new("mpirun")
        .args(["-n", "2", "--allow-run-as-root", "--bind-to", "core", bin()])
        .args([
            "run",
            "osu_latency",
            "--fabric",
            "mpi",
            "-m",
            "1:1K",
            "-i",
            "50",
            "--bootstrap",
        ])
        .arg(format!("tcp://127.0.0.1:{port}"))
        .arg("--out")
        .arg(&out)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(curve(&stdout).len(), 11, "{stdout}");
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 1);
}

/// TI's mpptest line for MPI over Hyperlink, run through Open MPI's shared memory.
#[test]
fn the_ti_mpptest_line_runs_on_shm_through_mpi() {
    let _g = serial();
    let r = run(
        "mpi-mpptest",
        &[
            "run",
            "mpptest",
            "-size",
            "0",
            "1048576",
            "128",
            "-sync",
            "-quick",
            "-logscale",
            "--fabric",
            "shm@mpi",
        ],
    );
    r.ok();
    let out = r.stdout();
    let sizes: Vec<u64> = out
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.split('\t').nth(3).unwrap().parse().unwrap())
        .collect();
    let want: Vec<u64> = std::iter::once(0)
        .chain((2..=20).map(|k| 1u64 << k))
        .collect();
    assert_eq!(sizes, want, "{out}");
    assert!(out.contains("# breakpoints (fabbench): "), "{out}");
}

/// autotune on Open MPI's vader: it tunes `mpi.btl_vader_eager_limit` and the gate checks the
/// choice from 1 B to 4 MiB before Open MPI's own parameter file carries it. Raising vader's
/// eager limit to 64 KiB wins up to 176 % on osu_latency at 4 KiB here, and in most runs the
/// gate finds it losing 35 to 65 % on osu_bw at 512 B to 2 KiB (larger eager fragments),
/// consistently over every pairing of three runs a side: then the value is held back, the
/// file does not carry it and stdout says why. When the gate passes it, the file carries it
/// and, loaded by Open MPI in a plain rerun (no --set), reproduces the gain autotune verified.
/// (Open MPI reading autotune's files is held apart, by autotune's ignored lib test in .ci/run.)
#[test]
fn autotune_of_vader_deploys_through_an_mca_file_only_what_the_gate_passed() {
    let _g = serial();
    let r = run(
        "at-vader",
        &[
            "autotune", "--fabric", "shm@mpi", "--sizes", "1K:64K", "--budget", "60s",
        ],
    );
    let dir = r.ok().to_path_buf();
    let o: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("autotune.json")).unwrap()).unwrap();
    let param = "mpi.btl_vader_eager_limit";
    let (chosen, deployed) = (&o["chosen"][param], &o["deployed"][param]);
    assert!(chosen.is_string(), "{}", r.stdout());
    let conf = std::fs::read_to_string(dir.join("mca-params.conf")).unwrap_or_default();
    if chosen != deployed {
        // Held back: the file sets nothing, and the line of the value says why.
        assert!(
            !conf
                .lines()
                .any(|l| l.trim().starts_with("btl_vader_eager_limit")),
            "{conf}"
        );
        let line = r
            .stdout()
            .lines()
            .find(|l| l.starts_with(param))
            .unwrap_or_default()
            .to_string();
        assert!(line.contains("not deployed: the profile with it"), "{line}");
        assert!(r.stdout().contains("# gate: "), "{}", r.stdout());
        return;
    }
    let chosen = chosen.as_str().unwrap();
    let bytes = bench_core::size::parse_size(chosen).unwrap();
    assert!(
        conf.lines()
            .any(|l| l.trim() == format!("btl_vader_eager_limit = {bytes}")),
        "{conf}"
    );
    // The sizes where the verification saw the tuned value clearly ahead.
    let gains: Vec<(u64, f64)> = o["verification"][0]["per_size"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["low"].as_f64().unwrap() > 0.5)
        .map(|g| (g["size"].as_u64().unwrap(), g["gain"].as_f64().unwrap()))
        .collect();
    assert!(
        !gains.is_empty(),
        "autotune found no gain to reproduce: {}",
        r.stdout()
    );
    let (size, _) = gains[gains.len() / 2];
    let size = size.to_string();
    // Reruns, alternating, each a plain run: with the file, and without.
    let latency = |with_file: bool| -> f64 {
        let out_dir = scratch("at-vader-rerun");
        let mut c = Command::new(bin());
        c.args([
            "run",
            "osu_latency",
            "--fabric",
            "shm@mpi",
            "-m",
            &format!("{size}:{size}"),
            "-i",
            "500",
            "-x",
            "50",
            "--out",
            out_dir.to_str().unwrap(),
        ]);
        if with_file {
            c.env("OMPI_MCA_mca_base_param_files", dir.join("mca-params.conf"));
        }
        let out = c.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        curve(&String::from_utf8_lossy(&out.stdout))
            .values()
            .next()
            .unwrap()
            .0
    };
    let mut tuned = Vec::new();
    let mut plain = Vec::new();
    for _ in 0..5 {
        tuned.push(latency(true));
        plain.push(latency(false));
    }
    // Medians of five alternating reruns: one lucky plain run (this 2-core machine's noise
    // reaches 30 % on a single run) must not decide it. Autotune verified a gain above 50 %;
    // half of that must survive, which no run without the file has come near.
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (t, p) = (median(&mut tuned), median(&mut plain));
    assert!(
        p / t - 1.0 > 0.25,
        "at {size} bytes the file gave {tuned:?} us against {plain:?} us without it"
    );
}

#[test]
fn autotune_of_the_bare_mpi_fabric_asks_which_variables() {
    let out = raw(&[
        "autotune",
        "--fabric",
        "mpi",
        "--out",
        scratch("at-mpi").to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("no tunables autotune knows"), "{err}");
}
