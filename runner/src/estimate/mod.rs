//! How long a plan will take, said before it starts (`estimate: about 40 s (...)`), so long
//! work is never silent about its length. Per fabric, the latest earlier run of the same
//! suites at the same rank count under the results directory is the best evidence: its wall
//! time, scaled by how much more or less work the plan asks for ([`history`]). Without one,
//! the suites' counted communication ([`suites::Work`]) priced by the fabric's fitted costs
//! ([`cost`]). A suite whose work is not known up front and that has never run here has no
//! estimate, and nothing is said.

pub mod cost;
pub mod history;

use std::path::Path;

use suites::PointWork;

use crate::plan::{FabricSpec, Plan};

/// Below this many seconds an estimate is not worth a line.
pub const WORTH_SAYING_S: f64 = 10.0;

/// An estimate and what it rests on.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    pub seconds: f64,
    /// Per fabric, what its share rests on: "osu_bw on rapidio, emulated: 23 points, ...".
    pub basis: Vec<String>,
    /// Whether `--quick` would shorten it (the plan is not quick already).
    pub quick_helps: bool,
}

impl Estimate {
    /// Several estimates run one after the other (a scaling run's counts).
    pub fn sum(parts: Vec<Estimate>) -> Option<Estimate> {
        let mut it = parts.into_iter();
        let first = it.next()?;
        Some(it.fold(first, |mut a, e| {
            a.seconds += e.seconds;
            a.basis.extend(e.basis);
            a.quick_helps |= e.quick_helps;
            a
        }))
    }

    /// The line to print before starting, or None for work shorter than
    /// [`WORTH_SAYING_S`].
    pub fn line(&self) -> Option<String> {
        if self.seconds < WORTH_SAYING_S {
            return None;
        }
        Some(format!(
            "estimate: about {} ({}){}",
            duration(self.seconds),
            self.basis.join("; "),
            if self.quick_helps {
                "; --quick for a first look"
            } else {
                ""
            }
        ))
    }
}

/// "40 s", "3 min 20 s", "2 h 5 min": rounded as an estimate should be.
pub fn duration(seconds: f64) -> String {
    let s = seconds.round() as u64;
    match s {
        0..=89 => format!("{s} s"),
        90..=3599 => {
            let s = (s + 5) / 10 * 10;
            match s % 60 {
                0 => format!("{} min", s / 60),
                r => format!("{} min {r} s", s / 60),
            }
        }
        _ => format!("{} h {} min", s / 3600, (s % 3600 + 30) / 60),
    }
}

/// An earlier run shorter than this says more about starting a job than about the work; it is
/// not scaled from (manifests record times to the second).
pub const EARLIER_AT_LEAST_S: f64 = 5.0;

/// How long `plan` will take, from earlier runs under `results` (the results directory;
/// None: the cost model alone); None when some fabric's share cannot be told.
pub fn estimate(plan: &Plan, results: Option<&Path>) -> Option<Estimate> {
    let names: Vec<&str> = plan.suites.iter().map(|s| s.name()).collect();
    let work = plan_work(plan, &|name| {
        plan.suites
            .iter()
            .find(|s| s.name() == name)
            .map(|s| s.params.clone())
    });
    let mut seconds = 0.0;
    let (mut modelled, mut shares) = (Vec::new(), Vec::new());
    for f in &plan.fabrics {
        let (s, how) = fabric_share(plan, f, work.as_ref(), results)?;
        seconds += s;
        let share = format!("{} {}", f.label, duration(s));
        match how {
            Some(how) => shares.push(format!("{share} {how}")),
            None => modelled.push(share),
        }
    }
    if !modelled.is_empty() {
        shares.insert(
            0,
            format!(
                "{} at this machine's measured cost per message and byte",
                modelled.join(", ")
            ),
        );
    }
    let what = match &work {
        Some(w) => format!(
            "{} at {} ranks: {} point{}, {} iterations, {} messages, {} with warm-up",
            names.join(" "),
            plan.ranks,
            w.points,
            if w.points == 1 { "" } else { "s" },
            w.total.iterations,
            w.total.messages,
            bytes(w.total.bytes)
        ),
        None => format!("{} at {} ranks", names.join(" "), plan.ranks),
    };
    Some(Estimate {
        seconds,
        basis: vec![format!("{what}; {}", shares.join(", "))],
        quick_helps: !plan.quick
            && plan
                .suites
                .iter()
                .any(|s| matches!(s.suite.quick(&s.params), Ok(Some(_)))),
    })
}

/// The counted communication of a plan's suites with the parameters `params` gives by suite
/// name (the plan's, or an earlier run's); None when a suite does not count its work.
struct PlanWork {
    points: usize,
    total: PointWork,
}

fn plan_work(plan: &Plan, params: &dyn Fn(&str) -> Option<serde_json::Value>) -> Option<PlanWork> {
    let mut out = PlanWork {
        points: 0,
        total: PointWork::default(),
    };
    for s in &plan.suites {
        let w = s.suite.work(&params(s.name())?, plan.ranks).ok()??;
        let t = w.total();
        out.points += w.points.len();
        out.total.iterations += t.iterations;
        out.total.messages += t.messages;
        out.total.bytes += t.bytes;
    }
    Some(out)
}

/// The seconds one fabric's part of the plan takes, and how that was found when it was not
/// the cost model (None).
fn fabric_share(
    plan: &Plan,
    f: &FabricSpec,
    work: Option<&PlanWork>,
    results: Option<&Path>,
) -> Option<(f64, Option<String>)> {
    let names: Vec<&str> = plan.suites.iter().map(|s| s.name()).collect();
    let cost = cost::constants(f.def.name, f.def.kind);
    let earlier = results
        .and_then(|r| history::latest(r, &names, &f.label, plan.ranks))
        .filter(|e| e.seconds >= EARLIER_AT_LEAST_S);
    if let Some(e) = earlier {
        let when = e.manifest.start_time.clone();
        let same = plan
            .suites
            .iter()
            .all(|s| e.manifest.params.get(s.name()) == Some(&s.params));
        if same {
            return Some((e.seconds, Some(format!("as its run of {when} took"))));
        }
        let then = plan_work(plan, &|name| e.manifest.params.get(name).cloned());
        if let (Some(now), Some(then)) = (work, then) {
            let (a, b) = (cost.seconds(&now.total), cost.seconds(&then.total));
            if b > 0.0 {
                return Some((
                    e.seconds * a / b,
                    Some(format!(
                        "from its run of {when} ({}), scaled by the work",
                        duration(e.seconds)
                    )),
                ));
            }
        }
    }
    Some((cost.seconds(&work?.total), None))
}

/// "11.9 GB", "640 kB": bytes for a reader, decimal as transfer sizes are.
fn bytes(n: u64) -> String {
    match n {
        0..1_000 => format!("{n} B"),
        1_000..1_000_000 => format!("{:.0} kB", n as f64 / 1e3),
        1_000_000..1_000_000_000 => format!("{:.0} MB", n as f64 / 1e6),
        _ => format!("{:.1} GB", n as f64 / 1e9),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_round_as_an_estimate_should() {
        assert_eq!(duration(9.6), "10 s");
        assert_eq!(duration(42.2), "42 s");
        assert_eq!(duration(197.0), "3 min 20 s");
        assert_eq!(duration(180.0), "3 min");
        assert_eq!(duration(3400.0), "56 min 40 s");
        assert_eq!(duration(7500.0), "2 h 5 min");
    }

    #[test]
    fn a_line_only_for_long_work_and_the_parts_add_up() {
        let e = |s: f64| Estimate {
            seconds: s,
            basis: vec![format!("part of {s} s")],
            quick_helps: true,
        };
        assert_eq!(e(9.9).line(), None);
        let sum = Estimate::sum(vec![e(4.0), e(8.0)]).unwrap();
        assert_eq!(sum.seconds, 12.0);
        assert_eq!(
            sum.line().unwrap(),
            "estimate: about 12 s (part of 4 s; part of 8 s); --quick for a first look"
        );
        assert_eq!(Estimate::sum(Vec::new()), None);
        assert_eq!(bytes(11_900_000_000), "11.9 GB");
    }
}
