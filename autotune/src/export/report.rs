//! `report.md`: the run told to a person. What was tuned and how (fabric, budget, time spent),
//! a summary table of every decision, then each decision's evidence (sweeps, model fits,
//! probes, A/B verdicts, candidates), the verification of the tuned settings against the
//! defaults, and which files to deploy. Every figure comes from the outcome; nothing is
//! recomputed but a median and a lookup of measurements by id.

use std::path::PathBuf;

use bench_core::size::format_size;
use results::format::table::{escape_markdown, Cell, Table};

use super::mpi::{self, MpiFiles};
use super::{command_line, measurement, ExportError, Exporter, File};
use crate::outcome::{
    Decision, Evidence, FragmentEvidence, Gain, Measurement, Outcome, SwitchEvidence,
    ThresholdEvidence, Verification,
};

/// Writes `report.md`, always.
pub struct MarkdownReport;

impl Exporter for MarkdownReport {
    fn files(&self, o: &Outcome) -> Result<Vec<File>, ExportError> {
        let mut md = String::new();
        md += &heading(o);
        md += &summary(o);
        for d in &o.decisions {
            md += &decision(o, d)?;
        }
        md += &interactions(o);
        md += &gate(o);
        md += &files_section(o)?;
        Ok(vec![(PathBuf::from("report.md"), md.into_bytes())])
    }
}

// ---- numbers and cells ----

fn us(x: f64) -> String {
    format!("{x:.2}")
}

/// A fraction as a signed percentage, "+9.8 %"; a gain that rounds to nothing reads "+0.0 %"
/// rather than "-0.0 %".
fn signed_pct(fraction: f64) -> String {
    let p = (fraction * 1000.0).round() / 10.0;
    format!("{:+.1} %", if p == 0.0 { 0.0 } else { p })
}

fn pct(fraction: f64) -> String {
    format!("{:.1} %", fraction * 100.0)
}

fn ratio(x: f64) -> String {
    format!("{x:.3}")
}

/// Seconds, in milliseconds below one (virtual measured time is often a few ms).
fn secs(s: f64) -> String {
    if s < 1.0 {
        format!("{:.2} ms", s * 1000.0)
    } else {
        format!("{s:.1} s")
    }
}

fn p_value(p: Option<f64>) -> String {
    match p {
        None => "—".into(),
        Some(p) if p < 0.001 => "< 0.001".into(),
        Some(p) => format!("{p:.3}"),
    }
}

/// A value as a cell shows it: an empty value means unset.
fn or_unset(text: &str) -> String {
    if text.is_empty() {
        "(unset)".into()
    } else {
        text.to_string()
    }
}

/// A Markdown table (results' one writer: every column left, cells escaped) and the blank line
/// that ends it.
fn table<R, C>(header: &[&str], rows: impl IntoIterator<Item = R>) -> String
where
    R: IntoIterator<Item = C>,
    C: Into<Cell>,
{
    let mut t = Table::new(header.iter().copied());
    t.extend_rows(rows);
    t.to_markdown() + "\n"
}

fn bullets(lines: &[String]) -> String {
    lines.iter().map(|l| format!("- {l}\n")).collect::<String>() + "\n"
}

// ---- the run ----

/// The kind as a reader needs it: virtual time is said outright, since its times are exact
/// and repeatable but not a real machine's.
fn kind(o: &Outcome) -> String {
    let mut k = o.kind.clone();
    if o.virtual_time && !k.contains("virtual time") {
        k += ", virtual time";
    }
    if let Some(lib) = &o.library {
        k = format!("{k}, {}", lib.lines().next().unwrap_or(""));
    }
    k
}

fn heading(o: &Outcome) -> String {
    let mut lines = vec![
        format!("**When:** {}", o.start_time),
        format!("**Command:** `{}`", command_line(o)),
        format!("**Objective:** {}", o.objective),
        format!("**Workloads:** {}", o.workloads.join(", ")),
        format!(
            "**Sizes:** {} to {}",
            format_size(o.sizes[0]),
            format_size(o.sizes[1])
        ),
        format!("**Near-equal:** within {} of the best", pct(o.tolerance)),
    ];
    if !o.fixed.is_empty() {
        lines.push(format!("**Fixed by the user:** {}", o.fixed.join(", ")));
    }
    lines.push(budget(o));
    if o.budget_exhausted {
        lines.push("**Budget ran out:** the decisions use what was measured before it did.".into());
    }
    lines.extend(o.skipped.iter().map(|s| format!("**Skipped:** {s}")));
    lines.push(format!("**fabbench:** {}", o.fabbench_version));
    format!(
        "# fabbench autotune: {} ({})\n\n{}",
        o.fabric,
        kind(o),
        bullets(&lines)
    )
}

fn budget(o: &Outcome) -> String {
    let s = &o.spent;
    let time = if o.virtual_time { "virtual" } else { "timed" };
    format!(
        "**Budget:** {}; spent {} wall, {} measured ({time}), {} runs, {} points",
        secs(o.budget_s),
        secs(s.wall_s),
        secs(s.measured_s),
        s.runs,
        s.points
    )
}

fn summary(o: &Outcome) -> String {
    let near = format!("near-equal (within {})", pct(o.tolerance));
    let header = [
        "parameter",
        "default",
        "search chose",
        "deployed",
        &near,
        "confidence",
    ];
    let deployed = o.deployed_values();
    let rows = o.decisions.iter().map(|d| {
        let value = deployed.get(&d.param).cloned().unwrap_or(d.chosen.clone());
        vec![
            Cell::markdown(format!("`{}`", d.param)),
            Cell::text(or_unset(&d.default)),
            Cell::text(or_unset(&d.chosen)),
            Cell::markdown(format!("**{}**", escape_markdown(&or_unset(&value)))),
            Cell::text(or_unset(&d.near_equal.join(", "))),
            Cell::text(or_unset(&d.confidence)),
        ]
    });
    let held: Vec<String> = o
        .decisions
        .iter()
        .filter_map(|d| {
            d.withheld
                .as_ref()
                .map(|w| format!("`{}` = {} not deployed: {w}", d.param, d.chosen))
        })
        .collect();
    let mut md = format!("## Summary\n\n{}", table(&header, rows));
    if !held.is_empty() {
        md += &bullets(&held);
    }
    md
}

// ---- decisions ----

fn decision(o: &Outcome, d: &Decision) -> Result<String, ExportError> {
    let mut md = format!("## `{}` ({})\n\n{}\n\n", d.param, d.role, d.why);
    md += &match &d.evidence {
        Evidence::Threshold(t) => threshold(o, d, t)?,
        Evidence::Switch(s) => switch(d, s),
        Evidence::Fragment(f) => fragment(d, f),
        // The why says which setting turns it off; nothing was measured.
        Evidence::NotApplicable { .. } => String::new(),
    };
    Ok(md)
}

fn threshold(o: &Outcome, d: &Decision, t: &ThresholdEvidence) -> Result<String, ExportError> {
    let context = format!("the threshold of {}", d.param);
    let eager = measurement(o, t.eager_sweep, &context)?;
    let rendezvous = measurement(o, t.rendezvous_sweep, &context)?;
    let mut md = format!(
        "Coarse sweep of {}: every size eager with `{p}={}` (measurement {}), every size \
         rendezvous with `{p}={}` (measurement {}); costs are medians over iterations, in us \
         per message (the statistic the choice is made on).\n\n",
        t.workload,
        t.eager_value,
        eager.id,
        t.rendezvous_value,
        rendezvous.id,
        p = d.param
    );
    md += &sweep_table(eager, rendezvous, o.tolerance);
    md += "Model, `t = a + size/b` per segment (a in us, b in MB/s, so size/b is in us):\n\n";
    md += &bullets(&fit_lines(t));
    md += "What the search found:\n\n";
    md += &bullets(&threshold_facts(t));
    if !t.probes.is_empty() {
        md += "Refinement between the bracket's sizes:\n\n";
        let rows = t.probes.iter().map(|p| {
            let winner = if p.eager_wins { "eager" } else { "rendezvous" };
            vec![
                format_size(p.size),
                us(p.eager_us),
                us(p.rendezvous_us),
                winner.into(),
            ]
        });
        md += &table(
            &[
                "size",
                "eager us (median)",
                "rendezvous us (median)",
                "faster",
            ],
            rows,
        );
    }
    Ok(md)
}

/// The two forced sweeps side by side; a failed side says why instead.
fn sweep_table(eager: &Measurement, rendezvous: &Measurement, tolerance: f64) -> String {
    let failures: Vec<String> = [("eager", eager), ("rendezvous", rendezvous)]
        .iter()
        .filter_map(|(side, m)| {
            m.failed
                .as_ref()
                .map(|f| format!("{side} sweep failed: {f}"))
        })
        .collect();
    if !failures.is_empty() {
        return bullets(&failures);
    }
    let cost = |m: &Measurement, size| m.points.iter().find(|p| p.size == size).map(|p| p.cost_us);
    let mut sizes: Vec<u64> = eager.points.iter().map(|p| p.size).collect();
    sizes.extend(rendezvous.points.iter().map(|p| p.size));
    sizes.sort_unstable();
    sizes.dedup();
    let rows = sizes.into_iter().map(|size| {
        let (e, r) = (cost(eager, size), cost(rendezvous, size));
        let show = |c: Option<f64>| c.map(us).unwrap_or_else(|| "—".into());
        vec![format_size(size), show(e), show(r), faster(e, r, tolerance)]
    });
    table(
        &[
            "size",
            "eager us (median)",
            "rendezvous us (median)",
            "faster",
        ],
        rows,
    )
}

/// Which protocol wins a size; within the tolerance neither does.
fn faster(eager: Option<f64>, rendezvous: Option<f64>, tolerance: f64) -> String {
    match (eager, rendezvous) {
        (Some(e), Some(r)) if (e - r).abs() <= tolerance * e.min(r) => "tie".into(),
        (Some(e), Some(r)) if e < r => "eager".into(),
        (Some(_), Some(_)) => "rendezvous".into(),
        _ => "—".into(),
    }
}

fn fit_lines(t: &ThresholdEvidence) -> Vec<String> {
    let side = |name: &str, fits: &[crate::outcome::Fit]| -> Vec<String> {
        fits.iter()
            .map(|f| {
                let line = match f.bandwidth_mbs {
                    Some(b) => format!("t = {} + size/{}", us(f.latency_us), us(b)),
                    None => format!("t = {}", us(f.latency_us)),
                };
                format!(
                    "{name}, {} to {}: `{line}`",
                    format_size(f.from),
                    format_size(f.to)
                )
            })
            .collect()
    };
    let mut lines = side("eager", &t.eager_fit);
    lines.extend(side("rendezvous", &t.rendezvous_fit));
    lines
}

fn threshold_facts(t: &ThresholdEvidence) -> Vec<String> {
    let crossover = match t.model_crossover {
        Some(x) => format!("Model crossover: {x:.0} bytes"),
        None => "Model crossover: the fitted lines do not cross inside the bracket".into(),
    };
    let confirmation = match (t.confirmation, t.confirmed) {
        (Some(id), Some(true)) => format!("Confirmed by measurement {id} at the chosen value"),
        (Some(id), Some(false)) => {
            format!("Not confirmed: measurement {id} at the chosen value disagreed")
        }
        (Some(id), None) => format!("Confirmation: measurement {id}, no verdict"),
        (None, _) => "Not confirmed by a separate measurement".into(),
    };
    vec![
        crossover,
        format!(
            "Bracket: {} to {}",
            format_size(t.bracket[0]),
            format_size(t.bracket[1])
        ),
        format!(
            "Step: {} (how finely the threshold was resolved)",
            format_size(t.step)
        ),
        confirmation,
    ]
}

fn switch(d: &Decision, s: &SwitchEvidence) -> String {
    let [a, b] = &s.values;
    let mut md = String::new();
    if let Some(na) = &s.not_applicable {
        md += &format!("Not judged at {na}.\n\n");
    }
    if s.per_size.is_empty() {
        return md;
    }
    md += &format!(
        "A/B on {}: `{p}={a}` (measurement {}) against `{p}={b}` (measurement {}); ratio is \
         the ratio of median costs, cost({b}) / cost({a}), below 1 when {b} is faster; geometric \
         mean {}.\n\n",
        s.workload,
        s.measurements[0],
        s.measurements[1],
        ratio(s.mean_ratio),
        p = d.param
    );
    let rows = s.per_size.iter().map(|v| {
        vec![
            format_size(v.size),
            ratio(v.ratio),
            format!("[{}, {}]", ratio(v.low), ratio(v.high)),
            p_value(v.p_value),
            or_unset(v.winner.as_deref().unwrap_or("none")),
        ]
    });
    md += &table(
        &["size", "ratio of medians", "95 % interval", "p", "winner"],
        rows,
    );
    md + &bullets(&s.ranges)
}

fn fragment(d: &Decision, f: &FragmentEvidence) -> String {
    let sizes: Vec<String> = f.sizes.iter().map(|&s| format_size(s)).collect();
    let mut md = format!(
        "Compared on {} at {}; cost relative to the best candidate.\n\n",
        f.workload,
        sizes.join(", ")
    );
    let rows = f.candidates.iter().map(|c| {
        let chosen = if c.value == d.chosen { " (chosen)" } else { "" };
        vec![
            format!("{}{chosen}", or_unset(&c.value)),
            c.relative_cost
                .map(ratio)
                .unwrap_or_else(|| "run failed".to_string()),
        ]
    });
    md += &table(&["value", "relative cost"], rows);
    md + &format!(
        "Measured {} of {} candidates.\n\n",
        f.candidates.len(),
        f.of
    )
}

fn interactions(o: &Outcome) -> String {
    let mut out = String::new();
    if !o.interactions.is_empty() {
        out += &format!("## Interactions\n\n{}", bullets(&o.interactions));
    }
    if !o.notes.is_empty() {
        out += &format!("## Notes\n\n{}", bullets(&o.notes));
    }
    out
}

// ---- verification and files ----

/// The gate: each set of values verified against the defaults, its verdict, and its tables.
fn gate(o: &Outcome) -> String {
    if o.gate.is_empty() {
        return if o.decisions.iter().any(|d| d.chosen != d.default) {
            String::new()
        } else {
            "## Verification\n\nEvery default kept: nothing to verify.\n\n".into()
        };
    }
    let mut md = format!(
        "## The gate\n\nBefore the profile holds a value, the values chosen run together \
         against the defaults over the full default size range; a set that fails or loses \
         more than {} at any size is held back, and values are taken back one at a time \
         until a set passes.\n\n",
        pct(o.tolerance)
    );
    let rows = o.gate.iter().map(|t| {
        vec![
            t.settings.join(", "),
            if t.passed { "passes" } else { "held back" }.to_string(),
            t.why.clone(),
        ]
    });
    md += &table(&["values", "verdict", "why"], rows);
    for t in &o.gate {
        for i in &t.verifications {
            if let Some(v) = o.verification.get(*i) {
                md += &verification(v);
            }
        }
    }
    md
}

fn verification(v: &Verification) -> String {
    let what = if v.settings.is_empty() {
        "the tuned settings".to_string()
    } else {
        format!("`{}`", v.settings.join(", "))
    };
    let mut md = format!(
        "## Verification: {} with {what}\n\n{what} (measurement {}) against the defaults \
         (measurement {}). Values are medians over iterations in the suite's unit, and the \
         gain is the ratio of median costs, cost(default) / cost(tuned) - 1: the statistic \
         the gate decides on.\n\n",
        v.workload, v.tuned_measurement, v.default_measurement
    );
    if let Some(f) = &v.failed {
        md += &format!("The tuned run fails {f}.\n\n");
    }
    let rows = v.per_size.iter().map(|g| {
        vec![
            format_size(g.size),
            us(g.default_value),
            us(g.tuned_value),
            or_unset(&g.unit),
            signed_pct(g.gain),
            format!("[{}, {}]", signed_pct(g.low), signed_pct(g.high)),
        ]
    });
    md += &table(
        &[
            "size",
            "default (median)",
            "tuned (median)",
            "unit",
            "gain (medians)",
            "interval (95 %, and every pairing of runs)",
        ],
        rows,
    );
    md + &match median_gain(&v.per_size) {
        Some(m) => format!("Median gain over sizes: {}\n\n", signed_pct(m)),
        None => "No sizes were verified.\n\n".into(),
    }
}

fn median_gain(gains: &[Gain]) -> Option<f64> {
    let mut g: Vec<f64> = gains.iter().map(|g| g.gain).collect();
    g.sort_by(f64::total_cmp);
    let n = g.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(g[n / 2]),
        _ => Some((g[n / 2 - 1] + g[n / 2]) / 2.0),
    }
}

fn files_section(o: &Outcome) -> Result<String, ExportError> {
    let mut lines = vec![format!(
        "`profile.toml`: the deployed settings (what passed the gate); `fabbench run osu_bw \
         --fabric {} --profile profile.toml` (`--set` still wins over it)",
        o.fabric
    )];
    for (path, _) in MpiFiles.files(o)? {
        let name = path.display().to_string();
        lines.push(format!("`{name}`: {}", mpi::usage(&name)));
    }
    lines.push("`autotune.json`: this run as data, every measurement and fit".into());
    Ok(format!("## Files\n\n{}", bullets(&lines)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::sample;

    fn report(o: &Outcome) -> String {
        let files = MarkdownReport.files(o).unwrap();
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].0, PathBuf::from("report.md"));
        String::from_utf8(files[0].1.clone()).unwrap()
    }

    fn assert_has(md: &str, wanted: &[&str]) {
        for w in wanted {
            assert!(md.contains(w), "missing {w:?} in:\n{md}");
        }
    }

    #[test]
    fn says_what_was_run_and_what_it_cost() {
        let md = report(&sample::outcome());
        assert!(md.starts_with("# fabbench autotune: bxi (emulated, virtual time)\n"));
        assert_has(
            &md,
            &[
                "- **Command:** `fabbench autotune --fabric bxi --budget 10m`\n",
                "- **Sizes:** 1 to 4MiB\n",
                "- **Budget:** 600.0 s; spent 12.5 s wall, 70.00 ms measured (virtual), 7 runs, 8 points\n",
            ],
        );
        assert!(!md.contains("Budget ran out"));
        let mut o = sample::outcome();
        o.budget_exhausted = true;
        o.skipped.push("fragment search: budget".into());
        o.kind = "emulated".into();
        let md = report(&o);
        assert!(md.starts_with("# fabbench autotune: bxi (emulated, virtual time)\n"));
        assert_has(
            &md,
            &[
                "**Budget ran out:**",
                "- **Skipped:** fragment search: budget\n",
            ],
        );
    }

    #[test]
    fn summarises_every_decision() {
        assert_has(
            &report(&sample::outcome()),
            &[
                "| parameter | default | search chose | deployed | near-equal (within 2.0 %) | confidence |\n",
                "| `eager_limit` | 4KiB | 12KiB | **12KiB** | 12KiB, 16KiB | exact (virtual time) |\n",
                "| `rx_thread` | off | on | **off** | on | exact (virtual time) |\n",
                "- `rx_thread` = on not deployed: with rx_thread=on the profile fails on osu_bw\n",
            ],
        );
    }

    #[test]
    fn shows_the_threshold_evidence() {
        assert_has(
            &report(&sample::outcome()),
            &[
                "## `eager_limit` (threshold)\n\nEager is faster up to 12KiB",
                "| size | eager us (median) | rendezvous us (median) | faster |\n",
                "| 4KiB | 2.00 | 3.00 | eager |\n",
                "| 16KiB | 3.80 | 3.60 | rendezvous |\n",
                "- eager, 4KiB to 32KiB: `t = 1.50 + size/7000.00`\n",
                "- rendezvous, 4KiB to 32KiB: `t = 3.00`\n",
                "- Model crossover: 11800 bytes\n",
                "- Bracket: 8KiB to 16KiB\n",
                "| 12KiB | 3.10 | 3.20 | eager |\n",
                "- Step: 4KiB",
                "- Confirmed by measurement 2 at the chosen value\n",
            ],
        );
    }

    #[test]
    fn shows_the_switch_verdicts() {
        assert_has(
            &report(&sample::outcome()),
            &[
                "Not judged at 1-4: not applicable (the sample says so).\n",
                "| size | ratio of medians | 95 % interval | p | winner |\n",
                "| 1 | 0.900 | \\[0.900, 0.900\\] | — | on |\n",
                "| 4KiB | 1.000 | \\[1.000, 1.000\\] | — | none |\n",
                "- 1-2KiB: on faster by 10.0 %\n",
                "## Interactions\n\n- rx_thread at eager_limit=12KiB: still on\n",
            ],
        );
    }

    #[test]
    fn verifies_with_signed_gains_and_their_median() {
        assert_has(
            &report(&sample::outcome()),
            &[
                "| eager_limit=12KiB, rx_thread=on | held back | fails on osu_bw from 4MiB (a stall) |\n",
                "| eager_limit=12KiB | passes | no failure |\n",
                "## Verification: osu_latency with `eager_limit=12KiB`\n",
                "Values are medians over iterations in the suite's unit",
                "| size | default (median) | tuned (median) | unit | gain (medians) | interval (95 %, and every pairing of runs) |\n",
                "| 8KiB | 3.30 | 3.00 | us | +10.0 % | \\[+10.0 %, +10.0 %\\] |\n",
                "| 32KiB | 4.40 | 4.40 | us | +0.0 % | \\[+0.0 %, +0.0 %\\] |\n",
                "Median gain over sizes: +5.0 %\n",
            ],
        );
        assert_eq!(signed_pct(-0.098), "-9.8 %");
        assert_eq!(signed_pct(-0.0004), "+0.0 %");
    }

    #[test]
    fn lists_the_files_to_deploy() {
        let md = report(&sample::outcome());
        assert_has(
            &md,
            &["## Files\n", "- `profile.toml`: ", "--profile profile.toml"],
        );
        assert!(!md.contains("mca-params.conf"));
        let md = report(&sample::mpi_outcome());
        assert_has(
            &md,
            &[
                "- `mca-params.conf`: Open MPI reads it",
                "- `ompi-tune.conf`: Open MPI 4.1: mpirun --tune",
                "- `autotune.env`: source it",
            ],
        );
    }

    #[test]
    fn a_fragment_search_shows_its_candidates() {
        let mut o = sample::outcome();
        o.decisions = vec![Decision {
            param: "frag_size".into(),
            role: "fragment".into(),
            default: "64KiB".into(),
            chosen: "256KiB".into(),
            near_equal: vec!["256KiB".into()],
            confidence: "exact (virtual time)".into(),
            why: "Larger fragments amortise the per-fragment cost.".into(),
            evidence: Evidence::Fragment(FragmentEvidence {
                workload: "osu_bw".into(),
                sizes: vec![1 << 20, 4 << 20],
                candidates: vec![
                    crate::outcome::Candidate {
                        value: "64KiB".into(),
                        measurement: 7,
                        relative_cost: Some(1.12),
                    },
                    crate::outcome::Candidate {
                        value: "256KiB".into(),
                        measurement: 8,
                        relative_cost: Some(1.0),
                    },
                    crate::outcome::Candidate {
                        value: "4KiB".into(),
                        measurement: 9,
                        relative_cost: None,
                    },
                ],
                of: 7,
            }),
            withheld: None,
        }];
        assert_has(
            &report(&o),
            &[
                "Compared on osu_bw at 1MiB, 4MiB",
                "| 64KiB | 1.120 |\n",
                "| 256KiB (chosen) | 1.000 |\n",
                "| 4KiB | run failed |\n",
                "Measured 3 of 7 candidates.\n",
            ],
        );
    }

    #[test]
    fn a_missing_sweep_is_an_error() {
        let mut o = sample::outcome();
        o.measurements.remove(1);
        let err = MarkdownReport.files(&o).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the threshold of eager_limit refers to measurement 1, which the outcome does not hold"
        );
    }
}
