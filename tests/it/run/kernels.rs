//! The application kernels through the real binary: every NPB kernel at class S on shared
//! memory and on an emulated fabric prints NPB's report with a SUCCESSFUL verification and
//! writes its records (time, Mop/s, compute and communication time); nbody passes its checks on
//! shm and on Hyperlink's 4-node ring; `-n 1,2,4` writes a scaling table; rank counts a kernel
//! cannot run on and bad options are refused in one line with status 2 before anything runs.

use crate::common::*;

const KERNELS: [&str; 5] = ["EP", "IS", "CG", "MG", "FT"];

/// NPB's verification line for a kernel's report, as NPB lays it out.
fn successful(stdout: &str, kernel: &str) -> bool {
    let Some(at) = stdout.find(&format!(" {kernel} Benchmark Completed.")) else {
        return false;
    };
    stdout[at..]
        .lines()
        .find(|l| l.starts_with(" Verification"))
        .is_some_and(|l| l == " Verification    =               SUCCESSFUL")
}

fn npb_class_s_on(fabric: &str, ranks: &str) {
    let _s = serial();
    let r = run(
        &format!("npb-{fabric}"),
        &[
            "run", "npb", "--class", "S", "--fabric", fabric, "-n", ranks,
        ],
    );
    let dir = r.ok().to_path_buf();
    let out = r.stdout();
    for k in KERNELS {
        assert!(
            successful(&out, k),
            "{k} on {fabric}: no SUCCESSFUL report in\n{out}"
        );
    }
    // time, Mop/s, compute and comm per kernel, keyed by class and kernel
    let rows = r.summary();
    for k in ["ep", "is", "cg", "mg", "ft"] {
        let params = format!("class=S;kernel={k}");
        let metrics: Vec<&str> = rows
            .iter()
            .filter(|x| x[5] == *params)
            .map(|x| &x[6])
            .collect();
        assert_eq!(
            metrics,
            ["time", "mops", "compute", "comm"],
            "{k}: {metrics:?}"
        );
        let mops: f64 = rows
            .iter()
            .find(|x| x[5] == *params && &x[6] == "mops")
            .unwrap()[8]
            .parse()
            .unwrap();
        assert!(mops > 0.0 && mops.is_finite(), "{k}: {mops} Mop/s");
    }
    let text = std::fs::read_to_string(dir.join("npb.txt")).unwrap();
    assert!(text.contains(" CG Benchmark Completed."));
    assert!(
        text.contains(" Compute time    =") && text.contains(" Comm time       ="),
        "{text}"
    );
}

#[test]
fn every_npb_kernel_verifies_class_s_on_shm() {
    npb_class_s_on("shm", "2");
}

#[test]
fn every_npb_kernel_verifies_class_s_on_emulated_rapidio_with_a_slow_node() {
    npb_class_s_on("rapidio", "4");
    let _s = serial();
    // rapidio's node computes 10x slower than the host by default; at 1x the same run's
    // compute time shrinks, and the output says how compute was scaled.
    let slow = run(
        "npb-slow",
        &[
            "run", "npb", "--kernel", "ep", "--fabric", "rapidio", "-n", "2",
        ],
    );
    let fast = run(
        "npb-fast",
        &[
            "run",
            "npb",
            "--kernel",
            "ep",
            "--fabric",
            "rapidio",
            "-n",
            "2",
            "--set",
            "rapidio.compute_scale=1",
        ],
    );
    assert!(
        slow.stdout()
            .contains("Compute on the emulated node = host clock x 10.0 (rapidio.compute_scale)"),
        "{}",
        slow.stdout()
    );
    let compute = |r: &Run| -> f64 {
        r.summary().iter().find(|x| &x[6] == "compute").unwrap()[8]
            .parse()
            .unwrap()
    };
    // Host noise moves each by a few percent; a factor of 10 is far outside it.
    assert!(
        compute(&slow) > 4.0 * compute(&fast),
        "compute {} s at 10x, {} s at 1x",
        compute(&slow),
        compute(&fast)
    );
}

#[test]
fn kernels_refuse_rank_counts_npb_cannot_run_on() {
    let _s = serial();
    let r = run("npb-three", &["run", "npb", "--kernel", "is", "-n", "3"]);
    assert_eq!(r.code(), 2, "{}", r.stderr());
    let err = r.stderr();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("IS runs on a power of two of ranks"), "{err}");
    assert!(r.dir.is_none(), "nothing is written for a refused run");
    // EP runs on any count.
    let ep = run("npb-ep-three", &["run", "npb", "--kernel", "ep", "-n", "3"]);
    ep.ok();
    assert!(successful(&ep.stdout(), "EP"));
    for (args, says) in [
        (
            vec!["--kernel", "lu"],
            "not an NPB kernel; valid: ep, is, cg, mg, ft",
        ),
        (vec!["--class", "D"], "is not one of S, W, A, B, C"),
        (vec!["--repeat", "0"], "give 1 to 1000"),
    ] {
        let mut a = vec!["run", "npb"];
        a.extend(args);
        let r = run("npb-bad", &a);
        assert_eq!(r.code(), 2, "{a:?}: {}", r.stderr());
        assert!(r.stderr().contains(says), "{a:?}: {}", r.stderr());
    }
}

#[test]
fn nbody_passes_its_checks_on_shm_and_on_the_hyperlink_ring() {
    let _s = serial();
    for (fabric, n, exchange) in [
        ("shm", "1", "allgather"),
        ("shm", "2", "ring"),
        ("shm", "4", "allgather"),
        ("hyperlink", "4", "ring"),
        ("hyperlink", "2", "allgather"),
    ] {
        let r = run(
            "nbody",
            &[
                "run",
                "nbody",
                "--fabric",
                fabric,
                "-n",
                n,
                "--exchange",
                exchange,
                "--steps",
                "20",
                "--bodies",
                "500",
            ],
        );
        r.ok();
        let out = r.stdout();
        assert!(
            out.contains(" Verification          =               SUCCESSFUL"),
            "{fabric} -n {n}: {out}"
        );
        assert!(
            out.contains("energy drift") && out.contains(": ok"),
            "{out}"
        );
        assert!(out.contains("against a one-rank run"), "{out}");
        assert!(out.contains(" Share communicating   ="), "{out}");
        let metrics: Vec<String> = r.summary().iter().map(|x| x[6].to_string()).collect();
        assert_eq!(metrics, ["time", "step", "interactions", "compute", "comm"]);
    }
}

#[test]
fn a_list_of_rank_counts_writes_a_scaling_table() {
    let _s = serial();
    let out = scratch("scaling");
    let o = std::process::Command::new(bin())
        .args([
            "run", "npb", "--kernel", "cg,ep", "-n", "1,2", "--fabric", "rapidio", "--plot",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dir = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    assert!(dir
        .file_name()
        .unwrap()
        .to_string_lossy()
        .ends_with("-scaling"));
    let mut csv = csv::Reader::from_path(dir.join("scaling.csv")).unwrap();
    assert_eq!(
        csv.headers().unwrap().iter().collect::<Vec<_>>(),
        [
            "suite",
            "fabric",
            "params",
            "ranks",
            "time",
            "time_unit",
            "rate",
            "rate_unit",
            "speedup",
            "efficiency",
            "comm_share",
            "short"
        ]
    );
    let rows: Vec<csv::StringRecord> = csv.records().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), 4, "cg and ep at 1 and 2 ranks");
    for r in &rows {
        let speedup: f64 = r[8].parse().unwrap();
        let eff: f64 = r[9].parse().unwrap();
        let ranks: f64 = r[3].parse().unwrap();
        assert!((eff - speedup / ranks).abs() < 1e-12);
        if ranks == 1.0 {
            assert_eq!(speedup, 1.0);
        }
    }
    // Speedup is the one-rank time over this count's, per kernel. (Not how large it is: EP's
    // compute is host time scaled into virtual time, so a loaded machine moves it, and speed is
    // for benchmarks to judge, not tests.)
    for kernel in ["ep", "cg"] {
        let at = |n: &str| {
            rows.iter()
                .find(|r| r[2].contains(kernel) && &r[3] == n)
                .unwrap()
        };
        let (one, two) = (at("1"), at("2"));
        let time = |r: &csv::StringRecord| r[4].parse::<f64>().unwrap();
        let speedup: f64 = two[8].parse().unwrap();
        assert!(
            (speedup - time(one) / time(two)).abs() < 1e-6 * speedup,
            "{two:?}"
        );
    }
    assert!(
        stdout.contains("# Scaling: npb class=S kernel=cg on rapidio"),
        "{stdout}"
    );
    assert!(dir.join("n1").is_dir() && dir.join("n2").is_dir());
    assert!(dir.join("plots/scaling-npb.svg").is_file());
    // A scaling directory plots as the runs inside it.
    let p = raw(&[
        "plot",
        dir.to_str().unwrap(),
        "-o",
        out.join("p").to_str().unwrap(),
    ]);
    assert!(p.status.success(), "{}", String::from_utf8_lossy(&p.stderr));
    assert!(out.join("p/scaling-npb.svg").is_file());
    // A list under a launcher is refused; so is a count listed twice.
    let twice = run("scaling-twice", &["run", "npb", "-n", "2,2"]);
    assert_eq!(twice.code(), 2);
    assert!(
        twice.stderr().contains("listed twice"),
        "{}",
        twice.stderr()
    );
}

#[test]
fn a_scaling_directory_reports_as_the_runs_inside_it() {
    let _s = serial();
    let out = scratch("scaling-report");
    let o = std::process::Command::new(bin())
        .args([
            "run", "npb", "--kernel", "ep", "-n", "1,2", "--fabric", "rapidio", "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dir = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let r = raw(&[
        "report",
        dir.to_str().unwrap(),
        "--by",
        "run",
        "--format",
        "csv",
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let text = String::from_utf8_lossy(&r.stdout);
    let header = text.lines().next().unwrap();
    // A column for each run inside (named by time stamp, or whole id within one second).
    let fields: Vec<&str> = header.split(',').collect();
    assert_eq!(fields[..5], ["suite", "metric", "unit", "size", "params"]);
    assert!(fields.len() >= 7 && fields[5] != fields[6], "{header}");
    assert!(
        text.contains("npb,mops,Mop/s,,class=S;kernel=ep,"),
        "{text}"
    );
}

#[test]
fn an_npb_run_ends_with_a_summary_row_per_kernel_and_writes_it_as_csv() {
    let _s = serial();
    let r = run(
        "npb-summary",
        &["run", "npb", "--kernel", "ep,is", "-n", "2"],
    );
    let dir = r.ok().to_path_buf();
    let out = r.stdout();
    // The table is the last thing printed: its title, the header, a row per kernel.
    let at = out
        .rfind("\n# NPB summary\n")
        .unwrap_or_else(|| panic!("no summary in\n{out}"));
    let lines: Vec<&str> = out[at..].lines().skip(2).collect();
    let cells = |l: &str| -> Vec<String> {
        l.split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(String::from)
            .collect()
    };
    assert_eq!(
        cells(lines[0]),
        [
            "kernel",
            "class",
            "fabric",
            "ranks",
            "time (s)",
            "Mop/s",
            "verified",
            "comm share"
        ]
    );
    let printed: Vec<Vec<String>> = lines[1..].iter().map(|l| cells(l)).collect();
    // npb-summary.csv holds the same rows in full, and its numbers are the run's records.
    let mut csv = csv::Reader::from_path(dir.join("npb-summary.csv")).unwrap();
    assert_eq!(
        csv.headers().unwrap(),
        vec![
            "kernel",
            "class",
            "fabric",
            "ranks",
            "time_s",
            "mops",
            "verified",
            "comm_share"
        ]
    );
    let rows: Vec<csv::StringRecord> = csv.records().map(Result::unwrap).collect();
    let kernels: Vec<&str> = rows.iter().map(|r| &r[0]).collect();
    assert_eq!(kernels, ["ep", "is"]);
    assert_eq!(printed.len(), rows.len(), "{out}");
    let records = r.summary();
    let record = |kernel: &str, metric: &str| -> f64 {
        let params = format!("class=S;kernel={kernel}");
        records
            .iter()
            .find(|x| x[5] == *params && &x[6] == metric)
            .unwrap_or_else(|| panic!("{kernel} {metric}"))[8]
            .parse()
            .unwrap()
    };
    for (row, shown) in rows.iter().zip(&printed) {
        let k = &row[0];
        let num = |i: usize| -> f64 { row[i].parse().unwrap() };
        assert_eq!(
            [&row[1], &row[2], &row[3], &row[6]],
            ["S", "shm", "2", "true"]
        );
        assert_eq!(num(4), record(k, "time"), "{k} time");
        assert_eq!(num(5), record(k, "mops"), "{k} Mop/s");
        let (compute, comm) = (record(k, "compute"), record(k, "comm"));
        assert!(
            (num(7) - comm / (compute + comm)).abs() < 1e-9,
            "{k} comm share"
        );
        let want = [
            k.to_string(),
            "S".into(),
            "shm".into(),
            "2".into(),
            format!("{:.4}", num(4)),
            format!("{:.2}", num(5)),
            "yes".into(),
            format!("{:.1}%", num(7) * 100.0),
        ];
        assert_eq!(
            shown[..],
            want,
            "{k}: the printed row and the csv row differ"
        );
    }
    // npb.txt ends with the same table.
    let text = std::fs::read_to_string(dir.join("npb.txt")).unwrap();
    assert!(text.ends_with(&out[at..]), "{text}");
}
