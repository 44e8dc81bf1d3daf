//! The mpptest suite end to end: TI's bring-up line pasted as is, `-auto` locating the
//! eager/rendezvous switch on an emulated fabric (virtual time, so exact and the same on every
//! machine), `-quick` stopping once the minima settle, collectives checked against sums
//! computed here, bisection on four ranks, and bad input.

use crate::common::*;
use suites::mpptest::gop::GopBench;
use suites::mpptest::{GopOp, MpptestBench, MpptestParams, Test, MPPTEST};
use suites::{Bench, Suite, SuiteArgs};
use transports::comm::Comm;
use transports::in_process::on_comms;
use transports::registry;

/// TI's command line for MPI over Hyperlink, as its guide gives it.
const TI_LINE: &[&str] = &[
    "-size",
    "0",
    "1048576",
    "128",
    "-sync",
    "-quick",
    "-logscale",
];

/// The data rows of mpptest's table: len -> (time, rate).
fn table(out: &str) -> Vec<(u64, f64, String)> {
    out.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(f.len(), 6, "not an mpptest data line: {l:?}");
            (
                f[3].parse().unwrap(),
                f[4].parse().unwrap(),
                f[5].to_string(),
            )
        })
        .collect()
}

/// The `(after, before)` of each breakpoint line.
fn breakpoints(out: &str) -> Vec<(u64, u64)> {
    out.lines()
        .filter_map(|l| l.strip_prefix("# "))
        .filter_map(|l| l.split_once(": ").map(|(range, _)| range))
        .filter_map(|r| r.split_once(" < size <= "))
        .map(|(a, b)| (a.parse().unwrap(), b.parse().unwrap()))
        .collect()
}

fn mpptest(name: &str, fabric: &str, extra: &[&str]) -> Run {
    let mut args = vec!["run", "mpptest"];
    args.extend_from_slice(extra);
    args.extend(["--fabric", fabric]);
    run(name, &args)
}

#[test]
fn the_ti_guide_line_runs_on_hyperlink_shm_and_tcp() {
    let _g = serial();
    let sizes: Vec<u64> = std::iter::once(0)
        .chain((2..=20).map(|k| 1u64 << k))
        .collect();
    for fabric in ["hyperlink", "shm", "tcp"] {
        let r = mpptest("ti", fabric, TI_LINE);
        let dir = r.ok().to_path_buf();
        let out = r.stdout();
        let rows = table(&out);
        assert_eq!(
            rows.iter().map(|r| r.0).collect::<Vec<_>>(),
            sizes,
            "{fabric}: {out}"
        );
        assert!(rows.iter().all(|r| r.1 > 0.0), "{fabric}: {out}");
        assert!(out.contains("\n#p0\tp1\tdist\tlen\tave time (us)\trate\n"));
        assert!(
            out.contains("# breakpoints (fabbench): "),
            "{fabric}: {out}"
        );
        // what was printed is what was written (stdout then says what each fabric decided)
        let written = std::fs::read_to_string(dir.join("mpptest.txt")).unwrap();
        assert!(out.starts_with(&written), "{written}\n---\n{out}");
        assert!(dir.join("breakpoints.csv").exists());
    }
}

#[test]
fn the_hyperlink_curve_shows_its_three_protocol_switches() {
    let _g = serial();
    // eager up to 4 KiB, rendezvous, DMA from 16 KiB, then 64 KiB fragments
    let r = mpptest("ti-bp", "hyperlink", TI_LINE);
    r.ok();
    assert_eq!(
        breakpoints(&r.stdout()),
        vec![(4096, 8192), (8192, 16384), (65536, 131072)],
        "{}",
        r.stdout()
    );
}

#[test]
fn auto_finds_the_eager_switch_within_autodx_for_two_limits() {
    let _g = serial();
    for (setting, limit) in [("2K", 2048u64), ("3000", 3000)] {
        let r = mpptest(
            "auto",
            "hyperlink",
            &[
                "-auto",
                "-size",
                "0",
                "8192",
                "1",
                "-quick",
                "--set",
                &format!("eager_limit={setting}"),
            ],
        );
        let dir = r.ok().to_path_buf();
        let found = breakpoints(&r.stdout());
        assert_eq!(found.len(), 1, "eager_limit={setting}: {}", r.stdout());
        let (after, before) = found[0];
        assert!(
            after <= limit && limit < before && before - after <= 4,
            "eager_limit={setting}: switch placed in ({after}, {before}]"
        );
        // and the CSV says the same
        let csv = std::fs::read_to_string(dir.join("breakpoints.csv")).unwrap();
        let row = csv.lines().nth(1).unwrap();
        assert!(
            row.starts_with(&format!("mpptest,hyperlink,{after},{before},jump,")),
            "{row}"
        );
        // -auto gathered sizes at the switch rather than spreading them evenly
        let sizes: Vec<u64> = table(&r.stdout()).iter().map(|r| r.0).collect();
        let near = sizes.iter().filter(|s| s.abs_diff(limit) <= 64).count();
        assert!(near >= 4, "{sizes:?}");
    }
}

/// The timed batches of each size, from samples.csv's row counts and the manifest.
fn batches(r: &Run) -> Vec<Vec<u64>> {
    let m = r.manifest();
    m["series"][0]["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            p["batches"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| b.as_u64().unwrap())
                .collect()
        })
        .collect()
}

#[test]
fn quick_measures_fewer_repetitions_and_stops_when_minima_settle() {
    let _g = serial();
    let sizes = ["-sizelist", "0,1024,65536"];
    let default = mpptest("default", "rapidio", &sizes);
    let quick = mpptest("quick", "rapidio", &[sizes[0], sizes[1], "-quick"]);
    let (d, q) = (batches(&default), batches(&quick));
    // virtual time repeats itself exactly: the first sweep sets each minimum and the next
    // five (-n_stable 5) leave it unchanged; the default runs all 30 sweeps of 50 iterations
    assert_eq!(q, vec![vec![5; 6]; 3]);
    assert_eq!(d, vec![vec![50; 30]; 3]);
    // both report the same minimum (to the nanosecond rounding of 5 and 50 iterations)
    for (a, b) in table(&quick.stdout()).iter().zip(table(&default.stdout())) {
        assert_eq!(a.0, b.0);
        assert!((a.1 / b.1 - 1.0).abs() < 1e-4, "{a:?} {b:?}");
    }
    // -n_stable decides when -quick stops
    let longer = mpptest(
        "quick8",
        "rapidio",
        &[sizes[0], sizes[1], "-quick", "-n_stable", "8"],
    );
    assert_eq!(batches(&longer), vec![vec![5; 9]; 3]);
}

/// Runs `f` on every rank of a bxi job of `ranks` ranks.
fn on_bxi<T: Send>(ranks: usize, f: impl Fn(&Comm) -> T + Sync) -> Vec<T> {
    let registry = registry::registry(&[]);
    let def = registry::find("bxi").unwrap();
    on_comms(def, &registry.defaults(), ranks, f)
        .into_iter()
        .map(|r| r.unwrap())
        .collect()
}

fn gop_params(op: &str) -> MpptestParams {
    let mut a = SuiteArgs::new();
    a.flag_on("gop").flag_on(op).set("sizelist", "37");
    MpptestParams::from_args(&a).unwrap()
}

/// Measures one test of 3 iterations at 37 elements and hands back the last result.
fn gop_result<T>(comm: &Comm, p: &MpptestParams, read: impl Fn(&GopBench) -> Vec<T>) -> Vec<T> {
    let mut bench = MPPTEST.start(comm, p).unwrap();
    let mut key = bench_core::measure::PointKey::size(37);
    key.params.insert("n_avg".into(), "3".into());
    let m = bench.at(&key).unwrap();
    assert!(m.validate, "collective results are checked");
    for i in 0..3 {
        bench.prepare(i).unwrap();
        bench.iteration(i).unwrap();
        bench.check(i).unwrap();
    }
    match &bench {
        MpptestBench::Gop(g) => read(g),
        _ => panic!("-gop makes a collective bench"),
    }
}

#[test]
fn gop_dsum_and_colx_equal_a_reference_computed_here() {
    let ranks = 3;
    let p = gop_params("dsum");
    assert_eq!(p.test, Test::Gop { op: GopOp::Dsum });
    let got = on_bxi(ranks, |c| gop_result(c, &p, |g| g.dsum_result().to_vec()));
    // iteration 2's sum over ranks r of (r+1)/2 + k mod 7 + 2/4
    let want: Vec<f64> = (0..37)
        .map(|k| {
            (1..=ranks)
                .map(|r| r as f64 / 2.0 + (k % 7) as f64 + 0.5)
                .sum()
        })
        .collect();
    for g in &got {
        assert_eq!(g, &want);
    }
    let p = gop_params("colx");
    let got = on_bxi(ranks, |c| gop_result(c, &p, |g| g.int_result().to_vec()));
    // every rank's 37 ints, (r+1)*3 + k mod 11 + 2, in rank order
    let want: Vec<i32> = (0..ranks as i32)
        .flat_map(|r| (0..37).map(move |k| (r + 1) * 3 + k % 11 + 2))
        .collect();
    for g in &got {
        assert_eq!(g, &want);
    }
}

#[test]
fn gop_runs_through_the_driver_on_four_ranks() {
    let _g = serial();
    for op in ["-dsum", "-isum", "-bcast", "-colx", "-sync"] {
        let r = mpptest(
            "gop",
            "bxi",
            &["-gop", op, "-sizelist", "1,100,1000", "-quick", "-n", "4"],
        );
        r.ok();
        let rows = table(&r.stdout());
        assert_eq!(rows.len(), 3, "{op}: {}", r.stdout());
        assert!(
            r.stdout().contains("0\t3\t3\t100\t"),
            "{op}: {}",
            r.stdout()
        );
    }
}

#[test]
fn bisect_runs_on_four_ranks() {
    let _g = serial();
    let r = mpptest(
        "bisect",
        "rapidio",
        &["-bisect", "-sizelist", "0,1024,8192", "-quick", "-n", "4"],
    );
    r.ok();
    let out = r.stdout();
    let rows = table(&out);
    assert_eq!(
        rows.iter().map(|r| r.0).collect::<Vec<_>>(),
        [0, 1024, 8192]
    );
    assert!(out.contains("0\t3\t3\t1024\t"), "{out}");
    // four ranks move data at once: the rate counts all of them
    let rate = |len: u64| {
        let row = rows.iter().find(|r| r.0 == len).unwrap();
        let one_way_us = row.1;
        len as f64 * 4.0 / (2.0 * one_way_us) // mpptest's rate: len/t x ranks, t a round trip
    };
    let printed: f64 = rows[1].2.trim_end_matches("e+6").parse::<f64>().unwrap() * 1e6;
    let expect = rate(1024) * 1e6;
    assert!(
        (printed / expect - 1.0).abs() < 1e-3,
        "{printed} vs {expect}"
    );
}

#[test]
fn halo_and_head_to_head_run() {
    let _g = serial();
    for extra in [
        &["-halo", "-npartner", "4", "-n", "4"][..],
        &["-head", "-async"][..],
        &["-head"][..],
        &["-async"][..],
    ] {
        let mut args = extra.to_vec();
        args.extend(["-sizelist", "0,4096,65536", "-quick"]);
        let r = mpptest("patterns", "rapidio", &args);
        r.ok();
        assert_eq!(table(&r.stdout()).len(), 3, "{extra:?}");
    }
}

#[test]
fn gnuplot_output_goes_where_mpptest_puts_it() {
    let _g = serial();
    let dir = scratch("gnuplot");
    let fname = dir.join("pt2pt.mpl");
    let f = fname.to_str().unwrap();
    for _ in 0..2 {
        let r = mpptest(
            "gnuplot",
            "hyperlink",
            &["-gnuplot", "-fname", f, "-sizelist", "0,64", "-quick"],
        );
        r.ok();
        assert!(r.stdout().is_empty(), "{}", r.stdout());
    }
    let script = std::fs::read_to_string(&fname).unwrap();
    let data = std::fs::read_to_string(dir.join("pt2pt.gpl")).unwrap();
    // appended, as mpptest does: two runs, two scripts and two tables
    assert_eq!(script.matches("set xlabel \"Size (bytes)\"").count(), 2);
    assert!(script.contains(&format!(
        "plot '{}' using 4:5 notitle with lines",
        dir.join("pt2pt.gpl").display()
    )));
    assert_eq!(table(&data).len(), 4);
}

#[test]
fn bad_mpptest_input_is_one_line_and_exit_2() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["-sizes", "0", "10", "1"],
            "unknown option -sizes for mpptest",
        ),
        (&["-size", "0", "10"], "-size needs START END STRIDE"),
        (&["-size", "100", "10", "4"], "START is larger than END"),
        (&["-size", "0", "10", "0"], "stride must be at least 1"),
        (
            &["-auto", "-autorel", "1.5"],
            "-autorel 1.5: the relative tolerance must be between 0 and 1",
        ),
        (&["-auto", "-autorel", "0"], "between 0 and 1"),
        (&["-npartner"], "-npartner needs N"),
        (&["-gop", "-dsum", "-isum"], "give one collective"),
        (
            &["-bisect", "-bisectdist", "2"],
            "-bisectdist 2: must be below the rank count (2)",
        ),
    ];
    for (extra, expect) in cases {
        let out_dir = scratch("bad-mpptest");
        let mut args = vec!["run", "mpptest"];
        args.extend_from_slice(extra);
        let o = out_dir.join("results");
        args.extend(["--fabric", "hyperlink", "--out", o.to_str().unwrap()]);
        let out = raw(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{extra:?}: {stderr}");
        assert!(
            stderr.contains(expect),
            "{extra:?}: {stderr} lacks {expect:?}"
        );
        assert!(
            out.stdout.is_empty() && !o.exists(),
            "{extra:?} wrote something"
        );
    }
    // an mpptest option given to another suite names the suite that takes it
    let out = raw(&["run", "osu_latency", "-logscale"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr.contains("-logscale is not an option of osu_latency; it is one of mpptest"),
        "{stderr}"
    );
}
