//! Long work says how long: a run expected to take ten seconds or more prints an estimate line
//! on stderr before it starts (and a short one does not); `--quick` runs a tenth of OSU's
//! iterations, records it and says so (an explicit `-i` still wins); a scaling run of NPB's
//! class S on shm warns of sections too short to time and marks its rows.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use crate::common::*;

#[test]
fn a_long_emulated_plan_prints_an_estimate_and_a_short_one_does_not() {
    let _g = serial();
    let out = scratch("estimate-long");
    // osu_bw at 4 MiB for 4000 iterations on rapidio: about 30 s by the cost model (a terabyte
    // modelled); stopped as soon as the estimate is read.
    let mut child = Command::new(bin())
        .args([
            "run", "osu_bw", "--fabric", "rapidio", "-m", "4M:4M", "-i", "4000", "--out",
        ])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    child.wait().unwrap();
    assert!(first.starts_with("estimate: about "), "{first}");
    assert!(
        first.contains("osu_bw at 2 ranks: 1 point,")
            && first.contains("rapidio")
            && first.trim_end().ends_with("--quick for a first look"),
        "{first}"
    );

    let short = run(
        "estimate-short",
        &[
            "run", "osu_bw", "--fabric", "rapidio", "-m", "1:8", "-i", "5",
        ],
    );
    short.ok();
    assert!(
        !short.stderr().lines().any(|l| l.starts_with("estimate:")),
        "{}",
        short.stderr()
    );
}

#[test]
fn quick_runs_a_tenth_of_the_iterations_says_so_and_explicit_counts_win() {
    let _g = serial();
    let args = ["run", "osu_latency", "--fabric", "rapidio", "-m", "1:2"];
    let quick = run("quick", &[&args[..], &["--quick"]].concat());
    quick.ok();
    assert_eq!(quick.manifest()["quick"], true);
    assert!(
        quick
            .stdout()
            .contains("2 ranks, quick (a tenth of the iterations)"),
        "{}",
        quick.stdout()
    );
    let counts =
        |r: &Run| -> Vec<String> { r.summary().iter().map(|x| x[9].to_string()).collect() };
    let summary = quick.summary();
    assert_eq!(&summary[0][9], "1000", "a tenth of osu_latency's 10000");
    assert!(
        counts(&quick).iter().all(|c| c == "1000"),
        "{:?}",
        counts(&quick)
    );

    let given = run(
        "quick-given",
        &[&args[..], &["--quick", "-i", "7"]].concat(),
    );
    given.ok();
    assert!(
        counts(&given).iter().all(|c| c == "7"),
        "{:?}",
        counts(&given)
    );

    let full = run("quick-not", &[&args[..], &["-i", "3"]].concat());
    full.ok();
    assert!(
        full.manifest().get("quick").is_none(),
        "a full run writes no quick field"
    );
    assert!(!full.stdout().contains("quick"), "{}", full.stdout());
}

#[test]
fn npb_class_s_scaling_on_shm_warns_of_short_sections_and_marks_them() {
    let _g = serial();
    let r = run(
        "short-sections",
        &["run", "npb", "--kernel", "mg", "-n", "1,2"],
    );
    let err = r.stderr();
    assert_eq!(r.code(), 0, "{err}");
    // About a millisecond a section on a quiet host; under heavy load one count's sections
    // can pass 10 ms, so the test asks for a warning at either count and its marked row.
    let warned: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("warning: npb on shm at -n "))
        .collect();
    assert!(
        !warned.is_empty()
            && warned
                .iter()
                .all(|l| l.contains("class=S kernel=mg: timed sections of")
                    && l.ends_with("use --class A (a larger problem; S < W < A < B < C)")),
        "{err}"
    );
    let out = r.stdout();
    assert!(out.contains("# * timed sections under 10 ms"), "{out}");
    assert!(
        out.lines()
            .any(|l| (l.starts_with("1 ") || l.starts_with("2 ")) && l.contains('*')),
        "{out}"
    );
}
