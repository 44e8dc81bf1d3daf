//! Every OSU suite through the real binary on shm: validated at small and large sizes, with
//! eager and rendezvous, single copy on and off, and the receive thread on and off. Checks
//! read the manifest's protocol counters, so each test proves the path it names was taken.

use crate::common::*;

const SMALL: &[&str] = &["-m", "0:16K", "-i", "30", "-x", "3", "-c"];
const LARGE: &[&str] = &["-m", "512K:2M", "-i", "3", "-x", "1", "-c"];

fn suite_run(name: &str, suite: &str, sizes: &[&str], extra: &[&str]) -> Run {
    let mut args = vec!["run", suite];
    args.extend_from_slice(sizes);
    args.extend_from_slice(extra);
    let r = run(name, &args);
    r.ok();
    r
}

fn rows(stdout: &str) -> Vec<(u64, f64, String)> {
    stdout
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (
                f[0].parse().unwrap(),
                f[1].parse().unwrap(),
                f[2].to_string(),
            )
        })
        .collect()
}

#[test]
fn every_suite_validates_at_small_and_large_sizes() {
    let _g = serial();
    for suite in ["osu_latency", "osu_bw", "osu_bibw"] {
        for sizes in [SMALL, LARGE] {
            let r = suite_run(suite, suite, sizes, &[]);
            let rows = rows(&r.stdout());
            assert!(!rows.is_empty(), "{suite}: no rows");
            for (size, value, status) in &rows {
                assert_eq!(status, "Pass", "{suite} size {size}");
                assert!(*value > 0.0 || *size == 0, "{suite} size {size}: {value}");
            }
            let first = if suite == "osu_latency" && sizes == SMALL {
                0
            } else {
                rows[0].0
            };
            assert_eq!(rows[0].0, first);
        }
    }
}

#[test]
fn low_eager_limit_sends_by_rendezvous_high_sends_eagerly() {
    let _g = serial();
    let low = suite_run(
        "eager-low",
        "osu_latency",
        SMALL,
        &["--set", "eager_limit=64"],
    );
    assert!(low.counter("rendezvous_copy_sends") > 0);
    let high = suite_run(
        "eager-high",
        "osu_latency",
        SMALL,
        &["--set", "eager_limit=1M"],
    );
    assert_eq!(high.counter("rendezvous_copy_sends"), 0);
    assert_eq!(high.counter("rendezvous_single_copy_sends"), 0);
    assert!(high.counter("eager_sends") > low.counter("eager_sends"));
}

#[test]
fn single_copy_on_reads_in_place_and_off_copies() {
    let _g = serial();
    let on = suite_run("sc-on", "osu_bw", LARGE, &["--set", "single_copy=on"]);
    let mech = on.manifest()["fabrics"][0]["facts"]["rank1.single_copy_mechanism"]
        .as_str()
        .unwrap()
        .to_string();
    if mech.contains("refused") {
        // The kernel forbids CMA here: the run must have fallen back and said so.
        assert!(on.counter("single_copy_fallbacks") > 0, "{mech}");
    } else {
        assert!(mech.starts_with("cma"), "{mech}");
        assert!(on.counter("rendezvous_single_copy_sends") > 0);
    }
    let off = suite_run("sc-off", "osu_bw", LARGE, &["--set", "single_copy=off"]);
    assert_eq!(off.counter("rendezvous_single_copy_sends"), 0);
    assert!(off.counter("rendezvous_copy_sends") > 0);
}

#[test]
fn single_copy_auto_follows_its_probe_and_says_so() {
    let _g = serial();
    let auto = suite_run("sc-auto", "osu_bw", LARGE, &[]);
    let facts = &auto.manifest()["fabrics"][0]["facts"];
    let verdict = facts["rank0.decided.single_copy=auto"]
        .as_str()
        .expect("the probe's verdict is in the manifest")
        .to_string();
    assert_eq!(
        facts["rank1.decided.single_copy=auto"].as_str(),
        Some(verdict.as_str())
    );
    let out = auto.stdout();
    assert!(
        out.lines()
            .any(|l| l == format!("# shm: single_copy=auto: {verdict}")),
        "{out}"
    );
    let (single, copied) = (
        auto.counter("rendezvous_single_copy_sends"),
        auto.counter("rendezvous_copy_sends"),
    );
    let counts = format!("{verdict}: {single} read in place, {copied} copied");
    match verdict.strip_prefix("cma from ") {
        Some(rest) => {
            let from = bench_core::size::parse_size(rest.split(',').next().unwrap()).unwrap();
            // The run's sizes are 512 KiB, 1 MiB and 2 MiB.
            assert_eq!(copied > 0, from > 512 << 10, "{counts}");
            assert_eq!(single > 0, from <= 2 << 20, "{counts}");
        }
        None => assert!(single == 0 && copied > 0, "{counts}"),
    }
}

#[test]
fn receive_thread_on_and_off() {
    let _g = serial();
    for rx in ["on", "off"] {
        for suite in ["osu_bw", "osu_latency"] {
            let r = suite_run(
                &format!("rx-{rx}"),
                suite,
                &["-m", "1:256K", "-i", "5", "-x", "1", "-c"],
                &["--set", &format!("rx_thread={rx}")],
            );
            let tun = &r.manifest()["fabrics"][0]["tunables"]["rx_thread"];
            assert_eq!(tun["value"], serde_json::Value::Bool(rx == "on"));
            assert_eq!(tun["source"], "cli");
        }
    }
}

/// More ranks than the CPUs they may run on: each idle wait gives the CPU away at once (a
/// spinning rank would hold the CPU the rank it waits for needs); two ranks on two CPUs spin
/// first. `taskset` gives every machine the same picture: one CPU, then two.
#[test]
fn ranks_on_fewer_cpus_than_ranks_yield_when_idle() {
    let _g = serial();
    let wait = |cpus: &str, name: &str| {
        let r = run_under(
            &["taskset", "-c", cpus],
            name,
            &["run", "osu_latency", "-m", "8:8", "-i", "20", "-x", "2"],
        );
        let m = r.manifest();
        m["fabrics"][0]["facts"]["rank0.idle_wait"]
            .as_str()
            .unwrap_or_else(|| panic!("an idle_wait fact: {}", m["fabrics"][0]["facts"]))
            .to_string()
    };
    assert_eq!(
        wait("0", "idle-one-cpu"),
        "yield at once (more ranks than CPUs)"
    );
    if bench_core::machine::allowed_cpus().len() >= 2 {
        let two = bench_core::machine::allowed_cpus()[..2]
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(",");
        assert_eq!(wait(&two, "idle-two-cpus"), "spin, then yield");
    }
}
