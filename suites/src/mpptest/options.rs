//! mpptest's options, spelled as mpptest spells them (a single dash and a word) so a command
//! line from a bring-up guide pastes as is. The binary picks these words out of `run`'s command
//! line before clap parses the rest.

use crate::options::{Dash, OptionDef, OptionKind};

const fn flag(long: &'static str, help: &'static str) -> OptionDef {
    OptionDef {
        long,
        short: None,
        dash: Dash::One,
        kind: OptionKind::Flag,
        value_name: "",
        help,
    }
}

const fn value(
    long: &'static str,
    kind: OptionKind,
    value_name: &'static str,
    help: &'static str,
) -> OptionDef {
    OptionDef {
        long,
        short: None,
        dash: Dash::One,
        kind,
        value_name,
        help,
    }
}

/// Every option mpptest takes in fabbench.
pub static OPTIONS: &[OptionDef] = &[
    // Test and pattern
    flag("roundtrip", "Round-trip messages between ranks 0 and 1 (default)"),
    flag("head", "Head-to-head messages: both ranks send at once"),
    flag("halo", "Halo exchange: every rank with -npartner neighbours"),
    value("npartner", OptionKind::Count, "N", "Halo partners per rank: 1 or an even number up to 8 (default 2)"),
    flag("sync", "Blocking sends and receives (default); with -gop, a barrier"),
    flag("async", "Non-blocking sends and receives"),
    flag("bisect", "Bisection: every rank, paired across the halves"),
    value("bisectdist", OptionKind::Count, "N", "Distance between paired ranks with -bisect (default: half the ranks)"),
    flag("gop", "Collective tests: -sync (barrier, default), -dsum, -isum, -bcast, -scatter, -colx"),
    flag("dsum", "With -gop: allreduce sum of SIZE doubles"),
    flag("isum", "With -gop: allreduce sum of SIZE ints"),
    flag("bcast", "With -gop: broadcast of SIZE bytes from a rotating root"),
    flag("scatter", "With -gop: another name for -bcast, as in mpptest"),
    flag("colx", "With -gop: allgather of SIZE ints from every rank"),
    // Sizes
    value("size", OptionKind::Values(3), "START END STRIDE", "Sizes START, START+STRIDE, ... up to END (default 0 1024 32)"),
    value("sizelist", OptionKind::Text, "N1,N2,...", "Exactly these sizes"),
    flag("logscale", "Sizes 0 (if START is 0), then 4 (or START) doubling up to END; log axes"),
    flag("auto", "Choose sizes between START and END where the curve bends"),
    value("autodx", OptionKind::Count, "N", "Smallest spacing between sizes with -auto (default 4)"),
    value("autorel", OptionKind::Text, "D", "Relative miss of linear interpolation that adds a size with -auto, in (0, 1) (default 0.02)"),
    // Timing
    value("n_avg", OptionKind::Count, "N", "Iterations averaged in one test (default 50; 5 with -autoavg or -quick)"),
    value("reps", OptionKind::Count, "N", "Older name of -n_avg"),
    value("sample_reps", OptionKind::Count, "N", "Most sweeps over the sizes; each size keeps its fastest average (default 30)"),
    value("n_stable", OptionKind::Count, "N", "Stop after N sweeps leave every minimum unchanged (default: -sample_reps)"),
    flag("autoavg", "Fewer iterations per test (5), or as many as -tgoal asks"),
    flag("autoreps", "Older name of -autoavg"),
    flag("quick", "Same as -autoavg -n_stable 5 (-n_avg 5); -n_avg or -n_stable given too win"),
    flag("fast", "Same as -quick"),
    value("tgoal", OptionKind::Text, "SECONDS", "With -autoavg: choose -n_avg per size so one test takes about this long"),
    value("rthresh", OptionKind::Text, "D", "Relative improvement that counts as a new minimum, in [0, 1) (default 0.05)"),
    value("max_run_time", OptionKind::Text, "SECONDS", "Fail once the tests have taken this long in all (default 900)"),
    flag("diagnostics", "After the table: per size, how many tests ran and which were re-run"),
    // Output
    flag("gnuplot", "Print a gnuplot script and append the data to mppout.gpl (or -fname's .gpl)"),
    flag("gnuplotps", "As -gnuplot, for a PostScript terminal"),
    flag("gnuploteps", "As -gnuplot, for an Encapsulated PostScript terminal"),
    flag("cit", "The default: mpptest's data table (fabbench prints gnuplot's data layout in place of C.It)"),
    flag("givedy", "Average, rate, minimum and maximum time columns"),
    flag("rate", "Plot the rate rather than the time (with -gnuplot)"),
    value("fname", OptionKind::Text, "FILE", "Append the output to FILE rather than stdout"),
    flag("noinfo", "Data lines only: no header or comment lines"),
];
