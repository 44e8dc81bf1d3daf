//! Strong scaling across runs of one suite at several rank counts (`fabbench run npb -n
//! 1,2,4`): for every kernel point (a point keyed by its parameters, not a message size) on
//! every fabric, the time and rate at each count, the speedup over the smallest count and the
//! parallel efficiency, with the share of time spent communicating. The same rows are printed
//! as a table and written as scaling.csv.

use serde::Serialize;

use crate::model::Run;

/// One kernel on one fabric at one rank count.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScalingRow {
    pub suite: String,
    pub fabric: String,
    /// The point's parameters, `class=A;kernel=cg`.
    pub params: String,
    pub ranks: usize,
    /// The headline of the point's first time metric, in its unit.
    pub time: f64,
    pub time_unit: String,
    /// The headline of its first rate metric (Mop/s), when it has one.
    pub rate: Option<f64>,
    pub rate_unit: String,
    /// time(smallest count) / time(this count).
    pub speedup: f64,
    /// speedup / (ranks / smallest count).
    pub efficiency: f64,
    /// The share of the time spent communicating, when the suite measured it.
    pub comm_share: Option<f64>,
    /// The timed section was too short to trust on a real-time fabric
    /// ([`crate::short`]): the table marks the row, so a speedup of 0.01 is not read as one.
    pub short: bool,
    /// More ranks than the host's cores on a real-time fabric: ranks took turns on a core,
    /// so the time includes their waiting.
    pub oversubscribed: bool,
    /// The host's cores, as the run's manifest recorded them.
    pub cores: usize,
}

/// The scaling rows of `runs`, grouped by suite, fabric and point, rank counts ascending. A
/// point measured at only one count has no scaling and is left out; a count measured twice
/// keeps its first run.
pub fn rows(runs: &[&Run]) -> Vec<ScalingRow> {
    let mut all: Vec<ScalingRow> = Vec::new();
    for run in runs {
        for s in &run.series {
            for p in s.points.iter().filter(|p| p.key.size.is_none()) {
                let Some(time) = p.metrics.iter().find(|m| m.is_time()) else {
                    continue;
                };
                if p.samples_ns.is_empty() {
                    continue;
                }
                let rate = p.metrics.iter().find(|m| !m.is_time());
                let params = p.key.params_text();
                if all.iter().any(|r| {
                    r.suite == s.suite
                        && r.fabric == s.fabric
                        && r.params == params
                        && r.ranks == s.ranks
                }) {
                    continue;
                }
                all.push(ScalingRow {
                    suite: s.suite.clone(),
                    fabric: s.fabric.clone(),
                    params,
                    ranks: s.ranks,
                    time: p.headline_of(time),
                    time_unit: time.unit.clone(),
                    rate: rate.map(|m| p.headline_of(m)),
                    rate_unit: rate.map(|m| m.unit.clone()).unwrap_or_default(),
                    speedup: 1.0,
                    efficiency: 1.0,
                    comm_share: p.split.as_ref().map(|x| x.comm_share()),
                    short: crate::short::short(s, p).is_some(),
                    oversubscribed: !s.emulated
                        && run.manifest.host.cpus > 0
                        && s.ranks > run.manifest.host.cpus,
                    cores: run.manifest.host.cpus,
                });
            }
        }
    }
    all.sort_by(|a, b| {
        (&a.suite, &a.fabric, &a.params, a.ranks).cmp(&(&b.suite, &b.fabric, &b.params, b.ranks))
    });
    let mut out = Vec::new();
    for group in
        all.chunk_by(|a, b| (&a.suite, &a.fabric, &a.params) == (&b.suite, &b.fabric, &b.params))
    {
        if group.len() < 2 {
            continue;
        }
        let (n0, t0) = (group[0].ranks as f64, group[0].time);
        for r in group {
            let mut r = r.clone();
            r.speedup = t0 / r.time;
            r.efficiency = r.speedup / (r.ranks as f64 / n0);
            out.push(r);
        }
    }
    out
}

/// The rows as a table per suite, fabric and point; a row timed too briefly to trust is
/// marked `*` and the table says what that means.
pub fn text(rows: &[ScalingRow]) -> String {
    let mut out = String::new();
    for group in
        rows.chunk_by(|a, b| (&a.suite, &a.fabric, &a.params) == (&b.suite, &b.fabric, &b.params))
    {
        let first = &group[0];
        out.push_str(&format!(
            "\n# Scaling: {} {} on {} (speedup and efficiency against {} rank{})\n",
            first.suite,
            first.params.replace(';', " "),
            first.fabric,
            first.ranks,
            if first.ranks == 1 { "" } else { "s" }
        ));
        let rate_head = if first.rate.is_some() {
            first.rate_unit.clone()
        } else {
            String::new()
        };
        out.push_str(&format!(
            "{:<8}{:>14}{:>14}{:>10}{:>12}{:>12}\n",
            "# Ranks",
            format!("Time ({})", first.time_unit),
            rate_head,
            "Speedup",
            "Efficiency",
            "Comm share"
        ));
        let mark = |short: bool, over: bool| {
            format!(
                "{}{}",
                if short { "*" } else { "" },
                if over { "+" } else { "" }
            )
        };
        for r in group {
            // A speedup is as good as both its times: this row's and the baseline's.
            let speedup = mark(
                r.short || first.short,
                r.oversubscribed || first.oversubscribed,
            );
            out.push_str(&format!(
                "{:<8}{:>14}{:>14}{:>10}{:>11.1}%{:>12}\n",
                r.ranks,
                format!("{:.4}{}", r.time, mark(r.short, r.oversubscribed)),
                r.rate.map(|x| format!("{x:.2}")).unwrap_or_default(),
                format!("{:.2}{speedup}", r.speedup),
                r.efficiency * 100.0,
                r.comm_share
                    .map(|x| format!("{:.1}%", x * 100.0))
                    .unwrap_or_default()
            ));
        }
        if group.iter().any(|r| r.short) {
            out.push_str(&format!(
                "# * timed sections under {} ms on a real-time fabric: a time slice or the host's noise is a large share of each, so these times and the speedups from them say little; a larger problem fixes it (npb: --class A)\n",
                crate::short::SHORT_SECTION_NS / 1e6
            ));
        }
        if let Some(r) = group.iter().find(|r| r.oversubscribed) {
            out.push_str(&format!(
                "# + more ranks than the host's {} cores on a real-time fabric: ranks took turns on a core, so the time includes their waiting; use counts up to {}\n",
                r.cores, r.cores
            ));
        }
    }
    out
}

/// The rows as scaling.csv (header written even without rows).
pub fn csv(rows: &[ScalingRow]) -> Result<Vec<u8>, crate::ResultsError> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
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
        "short",
    ])?;
    let opt = |x: Option<f64>| x.map(|v| v.to_string()).unwrap_or_default();
    for r in rows {
        w.write_record([
            r.suite.clone(),
            r.fabric.clone(),
            r.params.clone(),
            r.ranks.to_string(),
            r.time.to_string(),
            r.time_unit.clone(),
            opt(r.rate),
            r.rate_unit.clone(),
            r.speedup.to_string(),
            r.efficiency.to_string(),
            opt(r.comm_share),
            r.short.to_string(),
        ])?;
    }
    w.into_inner().map_err(crate::ResultsError::csv_flush)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::npb_run;

    #[test]
    fn speedup_and_efficiency_are_against_the_smallest_count() {
        // CG at 1, 2 and 4 ranks taking 8, 5 and 4 s; a point at one count only is left out.
        let runs: Vec<Run> = [(1, 8.0), (2, 5.0), (4, 4.0)]
            .iter()
            .map(|&(n, secs)| npb_run("npb", "shm", n, &[("cg", secs), ("ep", secs)]))
            .collect();
        let mut refs: Vec<&Run> = runs.iter().collect();
        let lonely = npb_run("npb", "bxi", 2, &[("cg", 1.0)]);
        refs.push(&lonely);
        // Efficiency is against the smallest count measured, not against one rank.
        let tcp: Vec<Run> = [(2, 6.0), (4, 4.0)]
            .iter()
            .map(|&(n, secs)| npb_run("npb", "tcp", n, &[("cg", secs)]))
            .collect();
        refs.extend(tcp.iter());
        let r = rows(&refs);
        let cg: Vec<&ScalingRow> = r
            .iter()
            .filter(|x| x.params.contains("cg") && x.fabric == "shm")
            .collect();
        assert_eq!(cg.len(), 3, "{r:?}");
        assert_eq!(cg[1].speedup, 8.0 / 5.0);
        assert_eq!(cg[2].efficiency, 2.0 / 4.0);
        let tcp4 = r
            .iter()
            .find(|x| x.fabric == "tcp" && x.ranks == 4)
            .unwrap();
        assert_eq!((tcp4.speedup, tcp4.efficiency), (1.5, 0.75));
        assert!(r.iter().all(|x| x.fabric != "bxi"), "one count: no scaling");
        let csv = String::from_utf8(csv(&r).unwrap()).unwrap();
        assert!(csv.starts_with("suite,fabric,params,ranks,time,time_unit,rate,rate_unit,speedup,efficiency,comm_share,short\n"));
        assert_eq!(csv.lines().count(), 1 + 6 + 2);
        let t = text(&r);
        assert!(
            t.contains(
                "# Scaling: npb class=S kernel=cg on shm (speedup and efficiency against 1 rank)"
            ),
            "{t}"
        );
        assert!(t.contains("50.0%"), "{t}");
        assert!(!t.contains('*'), "seconds-long sections are not short: {t}");
    }

    #[test]
    fn rows_timed_too_briefly_are_marked_with_a_footnote() {
        // MG class S: 1.3 ms at one rank, 100 ms later ("speedup 0.01") at two.
        let runs: Vec<Run> = [(1, 0.0013), (2, 0.1)]
            .iter()
            .map(|&(n, secs)| npb_run("npb", "shm", n, &[("mg", secs)]))
            .collect();
        let r = rows(&runs.iter().collect::<Vec<_>>());
        assert_eq!(r.iter().map(|x| x.short).collect::<Vec<_>>(), [true, false]);
        let t = text(&r);
        assert!(t.contains("0.0013*"), "{t}");
        assert!(
            t.contains("0.01*"),
            "a speedup from a short baseline is marked: {t}"
        );
        assert!(t.contains("# * timed sections under 10 ms"), "{t}");
        assert!(String::from_utf8(csv(&r).unwrap())
            .unwrap()
            .contains(",true\n"));
    }

    #[test]
    fn rows_with_more_ranks_than_cores_are_marked_on_real_fabrics() {
        let mut runs: Vec<Run> = [(1, 1.0), (2, 0.6), (4, 3.0)]
            .iter()
            .map(|&(n, secs)| npb_run("npb", "shm", n, &[("mg", secs)]))
            .collect();
        for r in &mut runs {
            r.manifest.host.cpus = 2;
        }
        let r = rows(&runs.iter().collect::<Vec<_>>());
        let over: Vec<bool> = r.iter().map(|x| x.oversubscribed).collect();
        assert_eq!(over, [false, false, true]);
        let t = text(&r);
        assert!(t.contains("3.0000+") && t.contains("0.33+"), "{t}");
        assert!(t.contains("host's 2 cores"), "{t}");
        for r in &mut runs {
            for s in &mut r.series {
                s.emulated = true;
            }
        }
        let r = rows(&runs.iter().collect::<Vec<_>>());
        assert!(
            r.iter().all(|x| !x.oversubscribed),
            "virtual time waits for no core"
        );
    }
}
