//! The options of `run` that set a suite's parameters: not listed in any `Args` struct, since
//! every registered suite declares its own; [`add_to`] adds them to `run` (a new suite brings
//! its options without a change here), and [`suite_args`] reads back, for one suite, those
//! given (clap's, and the single-dash ones `single_dash` took out first).

use clap::{Arg, ArgAction, ArgMatches};
use suites::{Dash, OptionKind, SuiteArgs};

use crate::single_dash::Given;

/// Where suites' options are listed in `fabbench run --help`.
const SUITE_HEADING: &str = "Suite options";

/// The suites that take an option, for its help line.
fn takers(long: &str) -> Vec<&'static str> {
    suites::SUITES
        .iter()
        .filter(|s| s.options().iter().any(|x| x.long == long))
        .map(|s| s.name())
        .collect()
}

/// The help for options spelled with a single dash, which clap does not parse (see
/// [`crate::single_dash`]): listed after `run`'s own options.
fn single_dash_help() -> String {
    let opts: Vec<suites::OptionDef> = suites::all_options()
        .into_iter()
        .filter(|o| o.dash == Dash::One)
        .collect();
    let mut out = String::from(
        "mpptest options (a single dash, as mpptest spells them; paste them as a guide gives them):\n",
    );
    for o in &opts {
        let left = format!("-{} {}", o.long, o.value_name);
        out.push_str(&format!("  {:<28}{}\n", left.trim_end(), o.help));
    }
    out.push_str(
        "\nmpptest's default C.It output is replaced by gnuplot's data layout (size, time in us, \
         rate), followed by the breakpoints fabbench finds in the curve. With mpptest named, \
         write fabbench's short options apart from their values (-f shm, not -fshm).",
    );
    out
}

/// `run` with every registered suite's options added (double-dash ones as clap arguments
/// under their own heading; single-dash ones described after `run`'s options).
pub fn add_to(run: clap::Command) -> clap::Command {
    let mut run = run.after_help(single_dash_help());
    for o in suites::all_options()
        .into_iter()
        .filter(|o| o.dash == Dash::Two)
    {
        let mut arg = Arg::new(o.long)
            .long(o.long)
            .help(format!("{} [{}]", o.help, takers(o.long).join(", ")))
            .help_heading(SUITE_HEADING);
        if let Some(c) = o.short {
            arg = arg.short(c);
        }
        arg = match o.kind {
            OptionKind::Flag => arg.action(ArgAction::SetTrue),
            OptionKind::Count => arg
                .value_name(o.value_name)
                .value_parser(clap::value_parser!(u64)),
            OptionKind::Text | OptionKind::Values(_) => arg.value_name(o.value_name),
            // Attached only, so a following suite name is never taken for its value.
            OptionKind::FlagOrValue => arg
                .value_name(o.value_name)
                .num_args(0..=1)
                .require_equals(true)
                .default_missing_value(""),
        };
        run = run.arg(arg);
    }
    run
}

/// The suite options given on `run`'s command line (clap's, and the single-dash ones in
/// `single`), for the suite `name`; an option given that none of `names` takes is refused with
/// the suites that do take it.
pub fn suite_args(
    run: &ArgMatches,
    single: &Given,
    name: &str,
    names: &[String],
) -> Result<SuiteArgs, String> {
    let all = suites::all_options();
    let given: Vec<&suites::OptionDef> = all
        .iter()
        .filter(|o| o.dash == Dash::Two)
        .filter(|o| run.value_source(o.long) == Some(clap::parser::ValueSource::CommandLine))
        .chain(
            all.iter()
                .filter(|o| o.dash == Dash::One && single.iter().any(|(n, _)| n == o.long)),
        )
        .collect();
    for o in &given {
        let taken = names
            .iter()
            .any(|n| suites::find(n).is_some_and(|s| s.options().iter().any(|x| x.long == o.long)));
        if !taken {
            return Err(format!(
                "{} is not an option of {}; it is one of {}",
                o.spelled(),
                names.join(", "),
                takers(o.long).join(", ")
            ));
        }
    }
    let mut args = SuiteArgs::new();
    let Some(suite) = suites::find(name) else {
        return Ok(args);
    };
    for (n, v) in single {
        if suite
            .options()
            .iter()
            .any(|x| x.long == n && x.dash == Dash::One)
        {
            args.set(n, v.clone());
        }
    }
    for o in given
        .into_iter()
        .filter(|o| o.dash == Dash::Two && suite.options().iter().any(|x| x.long == o.long))
    {
        match o.kind {
            OptionKind::Flag => {
                if run.get_flag(o.long) {
                    args.flag_on(o.long);
                }
            }
            OptionKind::Count => {
                if let Some(v) = run.get_one::<u64>(o.long) {
                    args.set(o.long, v.to_string());
                }
            }
            OptionKind::Text | OptionKind::Values(_) | OptionKind::FlagOrValue => {
                if let Some(v) = run.get_one::<String>(o.long) {
                    args.set(o.long, v.clone());
                }
            }
        }
    }
    Ok(args)
}
