//! mpptest's parameters, read from its options with mpptest's defaults and meanings, and
//! checked: anything mpptest would silently bend (a zero stride, an inverted range, a
//! tolerance outside (0, 1)) is refused in one line naming the option and what is valid.

use bench_core::measure::GnuplotTerminal;
use bench_core::size::parse_size;
use serde::{Deserialize, Serialize};

use crate::options::SuiteArgs;
use crate::suite::ParamError;
use crate::MAX_MESSAGE_SIZE;

/// mpptest's default sizes: 0 to 1024 by 32.
pub const DEFAULT_SIZES: (u64, u64, u64) = (0, 1024, 32);
/// With `-logscale` and no `-size`: sizeof(int) to 128 KiB.
pub const DEFAULT_LOG_SIZES: (u64, u64) = (4, 131_072);
/// mpptest keeps at most this many listed sizes.
pub const MAX_LISTED: usize = 256;

/// Which messages a point-to-point test sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    /// Rank 0 sends, its partner sends back.
    Roundtrip,
    /// Both send at once.
    Head,
}

/// Blocking or non-blocking calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    Sync,
    Async,
}

/// The collective a `-gop` test times.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GopOp {
    /// `-sync`: a barrier (the size is ignored).
    Barrier,
    /// `-dsum`: allreduce sum of SIZE doubles.
    Dsum,
    /// `-isum`: allreduce sum of SIZE ints.
    Isum,
    /// `-bcast`/`-scatter`: broadcast of SIZE bytes, the root rotating each iteration.
    Bcast,
    /// `-colx`: allgather of SIZE ints from every rank.
    Colx,
}

impl GopOp {
    /// mpptest's test name, printed in the title.
    pub fn name(&self) -> &'static str {
        match self {
            GopOp::Barrier => "sync",
            GopOp::Dsum => "dsum",
            GopOp::Isum => "isum",
            GopOp::Bcast => "scatter",
            GopOp::Colx => "colx",
        }
    }

    /// What a size counts, as mpptest labels the axis.
    pub fn units(&self) -> &'static str {
        match self {
            GopOp::Barrier | GopOp::Bcast => "(bytes)",
            GopOp::Dsum => "(doubles)",
            GopOp::Isum | GopOp::Colx => "(ints)",
        }
    }
}

/// What is timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "test", rename_all = "snake_case")]
pub enum Test {
    /// Ranks 0 and 1 (the others wait).
    Pair {
        pattern: Pattern,
        protocol: Protocol,
    },
    /// Every rank in a pair, `distance` apart (None: half the ranks, pairs across the halves).
    Bisect {
        pattern: Pattern,
        protocol: Protocol,
        distance: Option<usize>,
    },
    /// Every rank exchanges with `partners` neighbours at once.
    Halo {
        partners: usize,
    },
    Gop {
        op: GopOp,
    },
}

/// Which sizes are measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "sizes", rename_all = "snake_case")]
pub enum Sizes {
    /// These, in this order.
    Listed { list: Vec<u64> },
    /// Chosen between `first` and `last` where linear interpolation misses by more than
    /// `rel` (relative), never closer than `dx`.
    Auto {
        first: u64,
        last: u64,
        dx: u64,
        rel: f64,
    },
}

/// How each size is timed (mpptest's "Detailed control of tests").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    /// Iterations averaged in one test.
    pub n_avg: u64,
    /// Most sweeps over the sizes.
    pub sample_reps: u64,
    /// Sweeps in a row that leave every minimum unchanged before stopping.
    pub n_stable: u64,
    /// Relative improvement that counts as a new minimum.
    pub rthresh: f64,
    /// With `-autoavg`: seconds one test should take (None: keep `n_avg`).
    pub tgoal: Option<f64>,
    /// Seconds of tests in all before the run fails.
    pub max_run_time: f64,
    /// Print per-size counts after the table.
    pub diagnostics: bool,
}

/// How the results print (the layout's options).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Output {
    pub gnuplot: Option<GnuplotTerminal>,
    pub givedy: bool,
    pub rate: bool,
    pub info: bool,
    pub logscale: bool,
    pub fname: Option<String>,
}

/// Everything an mpptest run needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MpptestParams {
    pub test: Test,
    pub sizes: Sizes,
    pub timing: Timing,
    pub output: Output,
}

impl Default for MpptestParams {
    /// `mpptest` with no options: blocking round trips, 0 to 1024 by 32.
    fn default() -> Self {
        MpptestParams::from_args(&SuiteArgs::new()).expect("the defaults are valid")
    }
}

fn bad(msg: impl Into<String>) -> ParamError {
    ParamError(msg.into())
}

/// A size option's value: a whole number of bytes (4K, 1M accepted), at most 1 GiB.
fn size_value(option: &str, v: &str) -> Result<u64, ParamError> {
    let n = parse_size(v).map_err(|_| {
        bad(format!(
            "-{option} {v}: expected a size in bytes (a whole number; 4K and 1M are accepted)"
        ))
    })?;
    if n > MAX_MESSAGE_SIZE {
        return Err(bad(format!(
            "-{option} {v}: sizes are at most {MAX_MESSAGE_SIZE} bytes"
        )));
    }
    Ok(n)
}

fn count(args: &SuiteArgs, option: &str) -> Result<Option<u64>, ParamError> {
    args.get(option)
        .map(|v| {
            v.parse::<u64>()
                .map_err(|_| bad(format!("-{option} {v}: expected a whole number")))
        })
        .transpose()
}

fn positive(args: &SuiteArgs, option: &str) -> Result<Option<u64>, ParamError> {
    match count(args, option)? {
        Some(0) => Err(bad(format!("-{option} 0: must be at least 1"))),
        n => Ok(n),
    }
}

fn real(args: &SuiteArgs, option: &str) -> Result<Option<f64>, ParamError> {
    args.get(option)
        .map(|v| match v.parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(x),
            _ => Err(bad(format!("-{option} {v}: expected a number"))),
        })
        .transpose()
}

/// Which of several mutually exclusive flags were given.
fn given<'a>(args: &SuiteArgs, names: &[&'a str]) -> Vec<&'a str> {
    names.iter().copied().filter(|n| args.flag(n)).collect()
}

fn one_of<'a>(
    args: &SuiteArgs,
    names: &[&'a str],
    what: &str,
) -> Result<Option<&'a str>, ParamError> {
    match given(args, names)[..] {
        [] => Ok(None),
        [one] => Ok(Some(one)),
        ref many => Err(bad(format!(
            "-{} choose different {what}; give one of -{}",
            many.join(" and -"),
            names.join(", -")
        ))),
    }
}

fn test(args: &SuiteArgs) -> Result<Test, ParamError> {
    let kind = one_of(args, &["gop", "halo", "bisect"], "tests")?;
    if kind == Some("gop") {
        // -sync means a barrier here, and -bcast/-scatter are one test.
        let ops = given(args, &["sync", "dsum", "isum", "bcast", "scatter", "colx"]);
        let ops: Vec<&str> = ops
            .into_iter()
            .filter(|o| *o != "scatter" || !args.flag("bcast"))
            .collect();
        let op = match ops[..] {
            [] | ["sync"] => GopOp::Barrier,
            ["dsum"] => GopOp::Dsum,
            ["isum"] => GopOp::Isum,
            ["bcast"] | ["scatter"] => GopOp::Bcast,
            ["colx"] => GopOp::Colx,
            ref many => {
                return Err(bad(format!(
                    "-gop with -{}: give one collective of -sync, -dsum, -isum, -bcast, -scatter, -colx",
                    many.join(" -")
                )))
            }
        };
        for p in ["head", "async", "roundtrip", "npartner", "bisectdist"] {
            if args.get(p).is_some() {
                return Err(bad(format!("-{p} does not apply to -gop tests")));
            }
        }
        return Ok(Test::Gop { op });
    }
    for op in ["dsum", "isum", "bcast", "scatter", "colx"] {
        if args.flag(op) {
            return Err(bad(format!("-{op} chooses a collective; it needs -gop")));
        }
    }
    let pattern = match one_of(args, &["roundtrip", "head"], "patterns")? {
        Some("head") => Pattern::Head,
        _ => Pattern::Roundtrip,
    };
    let protocol = match one_of(args, &["sync", "async"], "protocols")? {
        Some("async") => Protocol::Async,
        _ => Protocol::Sync,
    };
    match kind {
        Some("halo") => {
            if args.flag("head") || args.flag("roundtrip") {
                return Err(bad(
                    "-halo exchanges with every partner at once; -head and -roundtrip do not apply",
                ));
            }
            let partners = count(args, "npartner")?.unwrap_or(2) as usize;
            if !(partners == 1
                || (partners.is_multiple_of(2)
                    && (2..=super::halo::MAX_PARTNERS).contains(&partners)))
            {
                return Err(bad(format!(
                    "-npartner {partners}: halo partners are 1, 2, 4, 6 or 8"
                )));
            }
            Ok(Test::Halo { partners })
        }
        Some("bisect") => Ok(Test::Bisect {
            pattern,
            protocol,
            distance: positive(args, "bisectdist")?.map(|d| d as usize),
        }),
        _ => {
            if args.get("npartner").is_some() {
                return Err(bad("-npartner applies to -halo"));
            }
            if args.get("bisectdist").is_some() {
                return Err(bad("-bisectdist applies to -bisect"));
            }
            Ok(Test::Pair { pattern, protocol })
        }
    }
}

/// `-size START END STRIDE`, or the defaults.
fn range(args: &SuiteArgs) -> Result<Option<(u64, u64, u64)>, ParamError> {
    let Some(v) = args.values("size") else {
        return Ok(None);
    };
    if v.len() != 3 {
        return Err(bad("-size takes three values: START END STRIDE"));
    }
    let (a, b, c) = (
        size_value("size", v[0])?,
        size_value("size", v[1])?,
        size_value("size", v[2])?,
    );
    if a > b {
        return Err(bad(format!(
            "-size {a} {b} {c}: START is larger than END; give START <= END"
        )));
    }
    if c == 0 {
        return Err(bad(format!(
            "-size {a} {b} 0: the stride must be at least 1"
        )));
    }
    Ok(Some((a, b, c)))
}

/// mpptest's `-logscale` list: 0 if START is 0, then from 4 (or START) doubling up to END.
pub fn log_sizes(first: u64, last: u64) -> Vec<u64> {
    let mut out = Vec::new();
    let mut k = first;
    if first == 0 {
        out.push(0);
        k = 4;
    }
    while k <= last && out.len() < MAX_LISTED {
        out.push(k);
        k *= 2;
    }
    out
}

/// START, START+STRIDE, ... up to END.
pub fn strided_sizes(first: u64, last: u64, stride: u64) -> Vec<u64> {
    (first..=last).step_by(stride.max(1) as usize).collect()
}

fn sizes(args: &SuiteArgs) -> Result<Sizes, ParamError> {
    let logscale = args.flag("logscale");
    let range = range(args)?;
    if args.flag("auto") {
        if args.get("sizelist").is_some() {
            return Err(bad(
                "-auto chooses the sizes between -size's START and END; -sizelist does not apply",
            ));
        }
        let (first, last) = match range {
            Some((a, b, _)) => (a, b),
            None if logscale => DEFAULT_LOG_SIZES,
            None => (DEFAULT_SIZES.0, DEFAULT_SIZES.1),
        };
        let dx = positive(args, "autodx")?.unwrap_or(4);
        let rel = real(args, "autorel")?.unwrap_or(0.02);
        if !(rel > 0.0 && rel < 1.0) {
            return Err(bad(format!(
                "-autorel {rel}: the relative tolerance must be between 0 and 1 (exclusive)"
            )));
        }
        return Ok(Sizes::Auto {
            first,
            last,
            dx,
            rel,
        });
    }
    for o in ["autodx", "autorel"] {
        if args.get(o).is_some() {
            return Err(bad(format!("-{o} applies to -auto")));
        }
    }
    if let Some(text) = args.get("sizelist") {
        if logscale {
            return Err(bad(
                "-sizelist and -logscale both choose the sizes; give one",
            ));
        }
        let list = text
            .split(',')
            .map(|v| size_value("sizelist", v.trim()))
            .collect::<Result<Vec<u64>, ParamError>>()?;
        if list.is_empty() || list.len() > MAX_LISTED {
            return Err(bad(format!(
                "-sizelist {text}: give 1 to {MAX_LISTED} comma-separated sizes"
            )));
        }
        return Ok(Sizes::Listed { list });
    }
    let list = if logscale {
        let (a, b) = range.map(|(a, b, _)| (a, b)).unwrap_or(DEFAULT_LOG_SIZES);
        log_sizes(a, b)
    } else {
        let (a, b, c) = range.unwrap_or(DEFAULT_SIZES);
        strided_sizes(a, b, c)
    };
    Ok(Sizes::Listed { list })
}

fn timing(args: &SuiteArgs) -> Result<Timing, ParamError> {
    if args.get("n_avg").is_some() && args.get("reps").is_some() {
        return Err(bad("-n_avg and -reps are one option; give one"));
    }
    let quick = args.flag("quick") || args.flag("fast");
    let autoavg = quick || args.flag("autoavg") || args.flag("autoreps");
    let n_avg = match positive(args, "n_avg")?.or(positive(args, "reps")?) {
        Some(n) => n,
        None if autoavg => 5,
        None => 50,
    };
    let sample_reps = positive(args, "sample_reps")?.unwrap_or(30);
    let n_stable = match positive(args, "n_stable")? {
        Some(n) => n,
        None if quick => 5,
        None => sample_reps,
    };
    let rthresh = real(args, "rthresh")?.unwrap_or(0.05);
    if !(0.0..1.0).contains(&rthresh) {
        return Err(bad(format!(
            "-rthresh {rthresh}: the threshold must be at least 0 and below 1"
        )));
    }
    let tgoal = real(args, "tgoal")?;
    if let Some(t) = tgoal {
        if t <= 0.0 {
            return Err(bad(format!(
                "-tgoal {t}: must be a positive number of seconds"
            )));
        }
        if !autoavg {
            return Err(bad(
                "-tgoal sets the time of one test with -autoavg (or -quick)",
            ));
        }
    }
    let max_run_time = real(args, "max_run_time")?.unwrap_or(900.0);
    if max_run_time <= 0.0 {
        return Err(bad(format!(
            "-max_run_time {max_run_time}: must be a positive number of seconds"
        )));
    }
    Ok(Timing {
        n_avg,
        sample_reps,
        n_stable,
        rthresh,
        tgoal,
        max_run_time,
        diagnostics: args.flag("diagnostics"),
    })
}

fn output(args: &SuiteArgs) -> Result<Output, ParamError> {
    let terminal = match one_of(
        args,
        &["gnuplot", "gnuplotps", "gnuploteps", "cit"],
        "output formats",
    )? {
        Some("gnuplot") => Some(GnuplotTerminal::X11),
        Some("gnuplotps") => Some(GnuplotTerminal::Postscript),
        Some("gnuploteps") => Some(GnuplotTerminal::Eps),
        _ => None,
    };
    let fname = args.get("fname").map(str::to_string);
    if fname.as_deref() == Some("") {
        return Err(bad("-fname needs a file name"));
    }
    Ok(Output {
        gnuplot: terminal,
        givedy: args.flag("givedy"),
        rate: args.flag("rate"),
        info: !args.flag("noinfo"),
        logscale: args.flag("logscale"),
        fname,
    })
}

impl MpptestParams {
    /// The parameters mpptest's options say.
    pub fn from_args(args: &SuiteArgs) -> Result<MpptestParams, ParamError> {
        Ok(MpptestParams {
            test: test(args)?,
            sizes: sizes(args)?,
            timing: timing(args)?,
            output: output(args)?,
        })
    }

    /// The sizes measured first (all of them unless `-auto`).
    pub fn initial_sizes(&self) -> Vec<u64> {
        match &self.sizes {
            Sizes::Listed { list } => list.clone(),
            Sizes::Auto { first, last, .. } => auto_start(*first, *last),
        }
    }
}

/// `-auto`'s starting sizes: nine, evenly spaced from first to last (as mpptest starts), last
/// always included.
pub fn auto_start(first: u64, last: u64) -> Vec<u64> {
    let step = ((last - first) / 8).max(1);
    let mut out = strided_sizes(first, last, step);
    if out.last() != Some(&last) {
        out.push(last);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[(&str, &str)]) -> SuiteArgs {
        let mut a = SuiteArgs::new();
        for (k, v) in words {
            a.set(k, *v);
        }
        a
    }

    fn err(words: &[(&str, &str)]) -> String {
        MpptestParams::from_args(&args(words)).unwrap_err().0
    }

    #[test]
    fn defaults_are_mpptests() {
        let p = MpptestParams::default();
        assert_eq!(
            p.test,
            Test::Pair {
                pattern: Pattern::Roundtrip,
                protocol: Protocol::Sync
            }
        );
        assert_eq!(p.initial_sizes().len(), 33);
        assert_eq!(p.initial_sizes()[32], 1024);
        assert_eq!(
            (p.timing.n_avg, p.timing.sample_reps, p.timing.n_stable),
            (50, 30, 30)
        );
        assert!(p.output.info && p.output.gnuplot.is_none());
    }

    #[test]
    fn the_ti_guide_line() {
        let p = MpptestParams::from_args(&args(&[
            ("size", "0 1048576 128"),
            ("sync", ""),
            ("quick", ""),
            ("logscale", ""),
        ]))
        .unwrap();
        let s = p.initial_sizes();
        assert_eq!(&s[..4], &[0, 4, 8, 16]);
        assert_eq!(*s.last().unwrap(), 1 << 20);
        assert_eq!(s.len(), 20);
        assert_eq!((p.timing.n_avg, p.timing.n_stable), (5, 5));
        // what was given beside -quick wins
        let p = MpptestParams::from_args(&args(&[("quick", ""), ("n_avg", "7")])).unwrap();
        assert_eq!(p.timing.n_avg, 7);
    }

    #[test]
    fn logscale_from_a_nonzero_start_and_its_default_range() {
        assert_eq!(log_sizes(3, 30), vec![3, 6, 12, 24]);
        let p = MpptestParams::from_args(&args(&[("logscale", "")])).unwrap();
        assert_eq!(p.initial_sizes().first(), Some(&4));
        assert_eq!(p.initial_sizes().last(), Some(&131_072));
    }

    #[test]
    fn auto_starts_with_nine_sizes() {
        assert_eq!(auto_start(0, 64), vec![0, 8, 16, 24, 32, 40, 48, 56, 64]);
        assert_eq!(auto_start(0, 10), vec![0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        assert_eq!(*auto_start(0, 100).last().unwrap(), 100);
    }

    #[test]
    fn collectives() {
        let op = |w: &[(&str, &str)]| match MpptestParams::from_args(&args(w)).unwrap().test {
            Test::Gop { op } => op,
            t => panic!("{t:?}"),
        };
        assert_eq!(op(&[("gop", "")]), GopOp::Barrier);
        assert_eq!(op(&[("gop", ""), ("sync", "")]), GopOp::Barrier);
        assert_eq!(op(&[("gop", ""), ("dsum", "")]), GopOp::Dsum);
        assert_eq!(op(&[("gop", ""), ("scatter", "")]), GopOp::Bcast);
        assert_eq!(
            op(&[("gop", ""), ("bcast", ""), ("scatter", "")]),
            GopOp::Bcast
        );
        assert_eq!(op(&[("gop", ""), ("colx", "")]), GopOp::Colx);
        assert!(err(&[("gop", ""), ("dsum", ""), ("isum", "")]).contains("give one collective"));
        assert!(err(&[("dsum", "")]).contains("needs -gop"));
    }

    #[test]
    fn bad_input_names_the_option_and_what_is_valid() {
        let cases: &[(&[(&str, &str)], &str)] = &[
            (&[("size", "100 10 4")], "START is larger than END"),
            (&[("size", "0 10 0")], "stride must be at least 1"),
            (&[("size", "0 x 4")], "-size x: expected a size"),
            (&[("size", "0 4G 4")], "at most"),
            (&[("auto", ""), ("autorel", "1.5")], "between 0 and 1"),
            (&[("auto", ""), ("autorel", "0")], "between 0 and 1"),
            (
                &[("auto", ""), ("autodx", "0")],
                "-autodx 0: must be at least 1",
            ),
            (&[("autodx", "8")], "-autodx applies to -auto"),
            (&[("sizelist", "1,,4")], "-sizelist : expected a size"),
            (&[("sizelist", "4"), ("logscale", "")], "give one"),
            (&[("halo", ""), ("npartner", "3")], "1, 2, 4, 6 or 8"),
            (
                &[("gop", ""), ("halo", "")],
                "give one of -gop, -halo, -bisect",
            ),
            (&[("head", ""), ("roundtrip", "")], "patterns"),
            (&[("sync", ""), ("async", "")], "protocols"),
            (&[("n_avg", "0")], "-n_avg 0: must be at least 1"),
            (&[("rthresh", "1")], "below 1"),
            (&[("tgoal", "1")], "-autoavg"),
            (&[("max_run_time", "-3")], "positive"),
            (&[("gnuplot", ""), ("cit", "")], "output formats"),
        ];
        for (words, expect) in cases {
            let e = err(words);
            assert!(e.contains(expect), "{words:?}: {e}");
            assert!(!e.contains('\n'));
        }
    }
}
