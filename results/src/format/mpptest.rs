//! MPICH mpptest's output, so the plots and scripts people already keep for mpptest read
//! fabbench's: the tab-separated data table (`#p0 p1 dist len ave time (us) rate`, with
//! `-givedy`'s average, minimum and maximum columns), the gnuplot script that plots it
//! (`-gnuplot`, `-gnuplotps`, `-gnuploteps`), and the name of the data file that script reads.
//! Each line is formatted as mpptest's own format strings format it.
//!
//! fabbench adds one thing mpptest lacks: the breakpoints of the curve, the sizes where the
//! time per message stops following one `latency + size / bandwidth` line (a protocol switch),
//! found by the `curves` crate and written as `#` comment lines after the table, which
//! mpptest readers and gnuplot skip, and as breakpoints.csv.
//!
//! The runner prints this text as a series finishes; the [`MpptestFiles`] exporter writes the
//! same text into the run directory as mpptest.txt.

use std::path::PathBuf;

use bench_core::measure::{GnuplotTerminal, Layout, MpptestLayout, Point};
use curves::{Analysis, Breakpoint, CurveError, Kind, Segment, Tolerance};

use crate::format::Exporter;
use crate::model::{Run, Series};
use crate::ResultsError;

/// The series' mpptest layout (None for another format's).
pub fn layout(series: &Series) -> Option<&MpptestLayout> {
    match &series.layout {
        Layout::Mpptest(l) => Some(l),
        Layout::Osu { .. } | Layout::Npb(_) | Layout::Nbody(_) => None,
    }
}

/// The comment line above the data, exactly mpptest's (blank line first).
pub fn data_header() -> &'static str {
    "\n#p0\tp1\tdist\tlen\tave time (us)\trate\n"
}

/// The rate column without `-givedy`: mpptest writes large rates as a mantissa with a literal
/// `e+6` or `e+3` after it, small ones with two decimals. Strictly greater, as in mpptest, so
/// exactly 10^6 prints as `1000.000e+3`.
fn format_rate(rate: f64) -> String {
    if rate > 1e6 {
        format!("{:.3}e+6", rate * 1e-6)
    } else if rate > 1e3 {
        format!("{:.3}e+3", rate * 1e-3)
    } else {
        format!("{rate:.2}")
    }
}

/// The point's rate in units per second (bytes, doubles or ints), from its second metric
/// (10^6 units per second); 0 when it has none or it is not a number, as mpptest prints 0 for
/// a time it cannot divide by.
fn rate_per_second(p: &Point) -> f64 {
    let rate = p.metrics.get(1).map_or(0.0, |m| p.headline_of(m) * 1e6);
    if rate.is_finite() {
        rate
    } else {
        0.0
    }
}

/// The time mpptest prints: the fastest batch's mean (its minimum of averages), microseconds.
fn best_time(p: &Point) -> f64 {
    p.headline()
}

/// The mean over every batch (mpptest's average over all its tests), microseconds.
fn average_time(p: &Point) -> f64 {
    p.metric().headline(&p.samples_ns)
}

/// The slowest batch's mean (mpptest's largest test time), microseconds.
fn worst_time(p: &Point) -> f64 {
    p.batches()
        .into_iter()
        .map(|b| p.metric().headline(b))
        .fold(f64::NEG_INFINITY, f64::max)
}

/// One data line, as mpptest's DataoutGraph writes it: the p0, p1 and dist columns (0, the
/// last rank and their distance, which mpptest prints for every test), the size, then without
/// `-givedy` the fastest time and the rate; with it the average time, the rate (plain, two
/// decimals), the fastest and the slowest time.
pub fn data_row(l: &MpptestLayout, ranks: usize, p: &Point) -> String {
    let last = ranks.saturating_sub(1);
    let lead = format!("0\t{last}\t{last}\t{}", p.size());
    let rate = rate_per_second(p);
    if l.givedy {
        format!(
            "{lead}\t{:.6}\t{rate:.2}\t{:.6}\t{:.6}\n",
            average_time(p),
            best_time(p),
            worst_time(p)
        )
    } else {
        format!("{lead}\t{:.6}\t{}\n", best_time(p), format_rate(rate))
    }
}

/// The data table: the header (unless `-noinfo`) and a line per measured point, in order.
/// Points without samples are left out, as mpptest leaves out sizes with no accepted test.
pub fn data(l: &MpptestLayout, series: &Series) -> String {
    let mut out = String::new();
    if l.info {
        out.push_str(data_header());
    }
    for p in series.points.iter().filter(|p| !p.samples_ns.is_empty()) {
        out.push_str(&data_row(l, series.ranks, p));
    }
    out
}

/// The file the gnuplot data goes to: `mppout.gpl`, or `-fname`'s name with its extension
/// replaced by `.gpl` (`pt2pt.mpl` → `pt2pt.gpl`), or `.gpl` appended when it has none (`out`
/// → `out.gpl`; a leading dot is not an extension: `.hidden` → `.hidden.gpl`).
///
/// mpptest scans the whole path backwards for the dot, so its scan can cross a '/' and cut a
/// directory's name (`dir.d/out` → `dir.gpl`); fabbench only looks at the file name
/// (`dir.d/out` → `dir.d/out.gpl`).
pub fn data_file_name(l: &MpptestLayout) -> String {
    let Some(fname) = &l.fname else {
        return "mppout.gpl".into();
    };
    let name_start = fname.rfind('/').map_or(0, |i| i + 1);
    match fname[name_start..].rfind('.') {
        Some(dot) if dot > 0 => format!("{}.gpl", &fname[..name_start + dot]),
        _ => format!("{fname}.gpl"),
    }
}

/// Text inside a gnuplot double-quoted string.
fn gnuplot_quoted(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}

/// A file name inside a gnuplot single-quoted string (where a quote is doubled).
fn gnuplot_single_quoted(text: &str) -> String {
    text.replace('\'', "''")
}

/// The script's header (mpptest's HeaderGnuplot): terminal, axis labels, log axes, title.
/// mpptest names the architecture "MPI" in the title; fabbench names the fabric.
fn script_header(l: &MpptestLayout, run: &Run, series: &Series) -> String {
    let mut out = String::new();
    match l.gnuplot {
        Some(GnuplotTerminal::Postscript) => out.push_str("set terminal postscript\n"),
        Some(GnuplotTerminal::Eps) => out.push_str("set terminal postscript eps\n"),
        Some(GnuplotTerminal::X11) | None => {}
    }
    out.push_str(&format!(
        "set xlabel \"Size {}\"\n",
        gnuplot_quoted(&l.units)
    ));
    // mpptest ignores -rate for gnuplot (the label stays "time (us)"); fabbench honours it,
    // with the label mpptest's C.It output uses for the rate.
    out.push_str(if l.rate {
        "set ylabel \"Rate (MB/sec)\"\n"
    } else {
        "set ylabel \"time (us)\"\n"
    });
    if l.logscale {
        out.push_str("set logscale xy\n");
    }
    let title = format!(
        "Comm Perf for {} ({}) type {}",
        series.fabric, run.manifest.host.hostname, l.protocol
    );
    out.push_str(&format!("set title \"{}\"\n", gnuplot_quoted(&title)));
    out
}

/// The plot command (mpptest's DrawGnuplot, which mpptest writes even with `-noinfo`).
/// `-rate` plots the rate column in millions per second and wins over `-givedy`, whose error
/// bars are times and would not fit a rate axis.
fn plot_line(l: &MpptestLayout, data_file: &str) -> String {
    let file = gnuplot_single_quoted(data_file);
    if l.rate {
        format!("plot '{file}' using 4:($6/1e6) notitle with lines\n")
    } else if l.givedy {
        format!("plot '{file}' using 4:5:7:8 notitle with errorbars\n")
    } else {
        format!("plot '{file}' using 4:5 notitle with lines\n")
    }
}

/// The end of the page (mpptest's EndPageGnuplot): wait for the user on the screen, leave
/// gnuplot after writing PostScript.
fn script_end(l: &MpptestLayout) -> &'static str {
    match l.gnuplot {
        Some(GnuplotTerminal::X11) | None => "pause -1 \"Press <return> to continue\"\nclear\n",
        Some(GnuplotTerminal::Postscript) | Some(GnuplotTerminal::Eps) => "exit\n",
    }
}

/// The gnuplot script plotting `data_file`: with info, header, plot and end of page; with
/// `-noinfo`, the plot line alone, as mpptest does.
pub fn script(l: &MpptestLayout, run: &Run, series: &Series, data_file: &str) -> String {
    if !l.info {
        return plot_line(l, data_file);
    }
    let mut out = script_header(l, run, series);
    out.push_str(&plot_line(l, data_file));
    out.push_str(script_end(l));
    out
}

/// The curve the breakpoints are found in: (size, printed time) of each point with samples,
/// by size, the first of any repeated size.
pub fn curve_points(series: &Series) -> Vec<(u64, f64)> {
    let mut points: Vec<(u64, f64)> = series
        .points
        .iter()
        .filter(|p| !p.samples_ns.is_empty())
        .map(|p| (p.size(), best_time(p)))
        .collect();
    // Stable, so the first of equal sizes stays first and dedup keeps it.
    points.sort_by_key(|&(size, _)| size);
    points.dedup_by_key(|&mut (size, _)| size);
    points
}

/// The segments of the series' curve, with the tolerance fabbench uses.
pub fn curve_analysis(series: &Series) -> Result<Analysis, CurveError> {
    curves::analyse(&curve_points(series), Tolerance::default())
}

/// The breakpoints of the series' curve of printed time against size; none when the curve
/// cannot be fitted (a time that is not a number, say).
pub fn breakpoints_of(series: &Series) -> Vec<Breakpoint> {
    curves::breakpoints(&curve_points(series), Tolerance::default()).unwrap_or_default()
}

/// The rate unit the series reports ("MB/s", "Mdoubles/s"): what a segment's bandwidth is in,
/// since it counts the series' own size units per microsecond.
fn rate_unit(series: &Series) -> &str {
    series
        .points
        .iter()
        .find_map(|p| p.metrics.get(1))
        .map_or("MB/s", |m| m.unit.as_str())
}

/// A segment as `0.11 us + size/8893 MB/s (0..2048, 11 points)`; a line that does not rise
/// has no bandwidth to give, so it reads `0.09 us flat (0..64, 6 points)`.
fn segment_words(s: &Segment, unit: &str) -> String {
    // A fitted latency of -0.004 is zero to the two decimals shown, not "-0.00".
    let latency = if s.latency_us.abs() < 0.005 {
        0.0
    } else {
        s.latency_us
    };
    let line = match s.bandwidth_mbs {
        Some(b) => format!("{latency:.2} us + size/{b:.0} {unit}"),
        None => format!("{latency:.2} us flat"),
    };
    format!("{line} ({}..{}, {} points)", s.from, s.to, s.points)
}

/// A breakpoint's words: `jump +2.41 us` (the step at the first size above the switch), or
/// `slope change` (the lines meet in between, so there is no step to give).
pub fn switch_words(b: &Breakpoint) -> String {
    match b.kind {
        Kind::Jump => format!("{} {:+.2} us", b.kind.words(), b.step_us),
        Kind::Slope => b.kind.words().to_string(),
    }
}

/// The tolerance as the header line says it: `5%`.
fn tolerance_words() -> String {
    let t = Tolerance::default();
    format!(
        "{}% (at least {} us)",
        (t.relative * 1000.0).round() / 10.0,
        t.absolute_us
    )
}

/// One comment line per breakpoint, after a line saying how many there are; or one line
/// giving the single segment when there is none.
pub fn breakpoint_lines(series: &Series) -> String {
    const HEAD: &str = "# breakpoints (fabbench):";
    let unit = rate_unit(series);
    let analysis = match curve_analysis(series) {
        Ok(a) => a,
        Err(e) => return format!("{HEAD} not computed: {e}\n"),
    };
    let segments = &analysis.segments;
    let mut out = match segments.len() {
        0 => format!("{HEAD} none; no measured points\n"),
        1 => format!(
            "{HEAD} none; one segment: {}\n",
            segment_words(&segments[0], unit)
        ),
        _ => {
            let found = &analysis.breakpoints;
            let mut out = format!(
                "{HEAD} {} found, tolerance {}\n",
                found.len(),
                tolerance_words()
            );
            for b in found {
                out.push_str(&format!(
                    "# {} < size <= {}: {}; below: {}; above: {}\n",
                    b.after,
                    b.before,
                    switch_words(b),
                    segment_words(&b.left, unit),
                    segment_words(&b.right, unit)
                ));
            }
            out
        }
    };
    if !analysis.off_line.is_empty() {
        let sizes: Vec<String> = analysis.off_line.iter().map(u64::to_string).collect();
        out.push_str(&format!(
            "# off the line on their own, not switches ({}): {}\n",
            sizes.len(),
            sizes.join(" ")
        ));
    }
    if !analysis.lone.is_empty() {
        let sizes: Vec<String> = analysis.lone.iter().map(u64::to_string).collect();
        out.push_str(&format!(
            "# on no segment's line, one size each (too few for a line; measure more sizes \
             there) ({}): {}\n",
            sizes.len(),
            sizes.join(" ")
        ));
    }
    out
}

/// The lines the suite wrote (each already a `#` comment), one per line.
fn notes(series: &Series) -> String {
    series
        .notes
        .iter()
        .map(|n| format!("{}\n", n.trim_end_matches('\n')))
        .collect()
}

/// fabbench's line naming the suite, the fabric and the settings in force.
fn comment_line(run: &Run, series: &Series) -> String {
    let (kind, settings) = run
        .fabric(&series.fabric)
        .map_or(("", ""), |f| (f.kind.words(), f.settings_line.as_str()));
    format!(
        "# fabbench {} {}: fabric {} ({kind}), {} ranks; {settings}\n",
        run.manifest.fabbench_version, series.suite, series.fabric, series.ranks
    )
}

/// What mpptest prints without `-gnuplot`, for one series (empty for a series not in
/// mpptest's layout): fabbench's comment line, the data table, the breakpoints (those three
/// not with `-noinfo`, but the rows) and the suite's notes.
pub fn text(run: &Run, series: &Series) -> String {
    let Some(l) = layout(series) else {
        return String::new();
    };
    let mut out = String::new();
    if l.info {
        out.push_str(&comment_line(run, series));
    }
    out.push_str(&data(l, series));
    if l.info {
        out.push_str(&breakpoint_lines(series));
    }
    out.push_str(&notes(series));
    out
}

/// What a gnuplot run appends to `-fname` or stdout: the script, then (unless `-noinfo`) the
/// breakpoints, then the notes, all of them `#` comments to gnuplot.
pub fn script_text(run: &Run, series: &Series) -> String {
    let Some(l) = layout(series) else {
        return String::new();
    };
    let mut out = script(l, run, series, &data_file_name(l));
    if l.info {
        out.push_str(&breakpoint_lines(series));
    }
    out.push_str(&notes(series));
    out
}

/// What a gnuplot run appends to its data file: the table, then (unless `-noinfo`) the
/// breakpoints as comments, which gnuplot skips.
pub fn data_text(series: &Series) -> String {
    let Some(l) = layout(series) else {
        return String::new();
    };
    let mut out = data(l, series);
    if l.info {
        out.push_str(&breakpoint_lines(series));
    }
    out
}

/// breakpoints.csv's columns.
const BREAKPOINT_COLUMNS: [&str; 14] = [
    "suite",
    "fabric",
    "after",
    "before",
    "kind",
    "step_us",
    "left_from",
    "left_to",
    "left_latency_us",
    "left_bandwidth_mbs",
    "right_from",
    "right_to",
    "right_latency_us",
    "right_bandwidth_mbs",
];

/// A segment's columns: from, to, latency, bandwidth (empty when it has none).
fn segment_fields(s: &Segment) -> [String; 4] {
    [
        s.from.to_string(),
        s.to.to_string(),
        s.latency_us.to_string(),
        s.bandwidth_mbs.map(|b| b.to_string()).unwrap_or_default(),
    ]
}

/// breakpoints.csv: a header, then a row per breakpoint of every mpptest series.
fn breakpoints_csv(run: &Run) -> Result<Vec<u8>, ResultsError> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(BREAKPOINT_COLUMNS)?;
    for s in run.series.iter().filter(|s| layout(s).is_some()) {
        for b in breakpoints_of(s) {
            let mut row = vec![
                s.suite.clone(),
                s.fabric.clone(),
                b.after.to_string(),
                b.before.to_string(),
                b.kind.to_string(),
                b.step_us.to_string(),
            ];
            row.extend(segment_fields(&b.left));
            row.extend(segment_fields(&b.right));
            w.write_record(&row)?;
        }
    }
    w.into_inner().map_err(ResultsError::csv_flush)
}

/// mpptest.txt (every mpptest series' text, in order) and breakpoints.csv, for runs with an
/// mpptest series.
pub struct MpptestFiles;

impl Exporter for MpptestFiles {
    fn export(&self, run: &Run) -> Result<Vec<(PathBuf, Vec<u8>)>, ResultsError> {
        if !run.series.iter().any(|s| layout(s).is_some()) {
            return Ok(Vec::new());
        }
        let txt: String = run.series.iter().map(|s| text(run, s)).collect();
        Ok(vec![
            ("mpptest.txt".into(), txt.into_bytes()),
            ("breakpoints.csv".into(), breakpoints_csv(run)?),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{FabricKind, FabricRun};
    use crate::testing::{self, RunBuilder};
    use bench_core::measure::{Better, Derivation, Metric, PointKey};

    /// A time metric whose sample `ns` is `ns / 10` nanoseconds, so that tenths of a
    /// nanosecond (mpptest's 0.124200 us) are whole sample values.
    fn time_metric() -> Metric {
        Metric {
            name: "time".into(),
            unit: "us".into(),
            better: Better::Lower,
            derive: Derivation::Time {
                divisor: 10.0,
                unit_ns: 1e3,
            },
        }
    }

    /// The rate of `len` bytes per sample of [`time_metric`], in MB/s.
    fn rate_metric(len: u64, unit: &str) -> Metric {
        Metric {
            name: "rate".into(),
            unit: unit.into(),
            better: Better::Higher,
            derive: Derivation::Rate {
                amount: len as f64 * 10.0,
                unit: 1e6,
            },
        }
    }

    fn point(len: u64, samples_ns: Vec<u64>, batches: Vec<u64>) -> Point {
        Point {
            warmup: None,
            key: PointKey::size(len),
            metrics: vec![time_metric(), rate_metric(len, "MB/s")],
            samples_ns,
            validated: None,
            batches,
            split: None,
        }
    }

    fn layout_plain() -> MpptestLayout {
        MpptestLayout {
            protocol: "blocking".into(),
            units: "(bytes)".into(),
            gnuplot: None,
            givedy: false,
            rate: false,
            info: true,
            logscale: false,
            fname: None,
        }
    }

    fn series(l: MpptestLayout, points: Vec<Point>) -> Series {
        testing::series("mpptest", "shm", false, 2, Layout::Mpptest(l), points)
    }

    fn run(series: Vec<Series>) -> Run {
        let run = RunBuilder::new("r")
            .version("0.1.0")
            .host(testing::host())
            .suites(&["mpptest"])
            .fabric(FabricRun {
                settings_line: "eager_limit=4KiB".into(),
                ..testing::fabric("shm", FabricKind::Native, 2)
            });
        series.into_iter().fold(run, RunBuilder::series).build()
    }

    #[test]
    fn rates_print_as_mpptest_prints_them() {
        assert_eq!(format_rate(32_206_119.16), "32.206e+6");
        assert_eq!(format_rate(1e6), "1000.000e+3");
        assert_eq!(format_rate(12_345.678), "12.346e+3");
        assert_eq!(format_rate(1e3), "1000.00");
        assert_eq!(format_rate(999.5), "999.50");
        assert_eq!(format_rate(0.0), "0.00");
    }

    #[test]
    fn rows_match_a_real_mpptest_run() {
        // Rows of mpptest -gnuplot -logscale on this machine: 0.118100 us at 0 bytes and
        // 0.124200 us (32.206e+6 bytes/s) at 4 bytes; the slower batch is not what is printed.
        let l = layout_plain();
        let zero = point(0, vec![1300, 1300, 1181, 1181], vec![2, 2]);
        assert_eq!(data_row(&l, 2, &zero), "0\t1\t1\t0\t0.118100\t0.00\n");
        // p1 and dist are the last rank
        assert_eq!(data_row(&l, 4, &zero), "0\t3\t3\t0\t0.118100\t0.00\n");
        let four = point(4, vec![1242, 1242, 1500], vec![2, 1]);
        assert_eq!(data_row(&l, 2, &four), "0\t1\t1\t4\t0.124200\t32.206e+6\n");
        // the two smaller rate branches, through a row
        let slow = point(4, vec![20_000_000], vec![]); // 4 bytes in 2 ms
        assert_eq!(
            data_row(&l, 2, &slow),
            "0\t1\t1\t4\t2000.000000\t2.000e+3\n"
        );
        let slower = point(4, vec![80_000_000], vec![]); // 4 bytes in 8 ms
        assert_eq!(
            data_row(&l, 2, &slower),
            "0\t1\t1\t4\t8000.000000\t500.00\n"
        );
    }

    #[test]
    fn givedy_rows_give_average_rate_minimum_and_maximum() {
        let l = MpptestLayout {
            givedy: true,
            ..layout_plain()
        };
        // batches of 1.6 us (five tests) and 1.9 us (one): average 1.65
        let p = point(
            4,
            vec![16_000, 16_000, 16_000, 16_000, 16_000, 19_000],
            vec![5, 1],
        );
        assert_eq!(
            data_row(&l, 2, &p),
            "0\t1\t1\t4\t1.650000\t2500000.00\t1.600000\t1.900000\n"
        );
    }

    #[test]
    fn the_table_has_mpptests_header_unless_noinfo() {
        let s = series(
            layout_plain(),
            vec![point(0, vec![1181], vec![]), point(8, vec![], vec![])],
        );
        let Layout::Mpptest(l) = &s.layout else {
            unreachable!()
        };
        assert_eq!(
            data(l, &s),
            "\n#p0\tp1\tdist\tlen\tave time (us)\trate\n0\t1\t1\t0\t0.118100\t0.00\n"
        );
        let quiet = MpptestLayout {
            info: false,
            ..l.clone()
        };
        assert_eq!(data(&quiet, &s), "0\t1\t1\t0\t0.118100\t0.00\n");
    }

    #[test]
    fn data_file_names() {
        let named = |f: &str| {
            data_file_name(&MpptestLayout {
                fname: Some(f.into()),
                ..layout_plain()
            })
        };
        assert_eq!(data_file_name(&layout_plain()), "mppout.gpl");
        assert_eq!(named("pt2pt.mpl"), "pt2pt.gpl");
        assert_eq!(named("out"), "out.gpl");
        assert_eq!(named(".hidden"), ".hidden.gpl");
        assert_eq!(named("a/b.c.txt"), "a/b.c.gpl");
        // mpptest would give dir.gpl here
        assert_eq!(named("dir.d/out"), "dir.d/out.gpl");
        assert_eq!(named("dir.d/.rc"), "dir.d/.rc.gpl");
    }

    /// stdout of `mpptest -gnuplot -logscale` on a host called vm.
    const MPPTEST_X11_LOGSCALE: &str = "set xlabel \"Size (bytes)\"\n\
        set ylabel \"time (us)\"\n\
        set logscale xy\n\
        set title \"Comm Perf for MPI (vm) type blocking\"\n\
        plot 'mppout.gpl' using 4:5 notitle with lines\n\
        pause -1 \"Press <return> to continue\"\n\
        clear\n";

    #[test]
    fn an_x11_script_is_mpptests_but_for_the_title() {
        let l = MpptestLayout {
            gnuplot: Some(GnuplotTerminal::X11),
            logscale: true,
            ..layout_plain()
        };
        let s = series(l.clone(), vec![]);
        let got = script(&l, &run(vec![s.clone()]), &s, "mppout.gpl");
        let want = MPPTEST_X11_LOGSCALE.replace("for MPI (vm)", "for shm (vm)");
        assert_eq!(got, want);
        assert_eq!(got.lines().count(), MPPTEST_X11_LOGSCALE.lines().count());
    }

    #[test]
    fn other_terminals_givedy_and_rate() {
        let l = MpptestLayout {
            gnuplot: Some(GnuplotTerminal::Eps),
            givedy: true,
            ..layout_plain()
        };
        let s = series(l.clone(), vec![]);
        let got = script(&l, &run(vec![s.clone()]), &s, "res.gpl");
        assert!(got.starts_with("set terminal postscript eps\n"), "{got}");
        assert!(
            got.ends_with("plot 'res.gpl' using 4:5:7:8 notitle with errorbars\nexit\n"),
            "{got}"
        );
        let l = MpptestLayout {
            gnuplot: Some(GnuplotTerminal::Postscript),
            rate: true,
            givedy: true,
            ..layout_plain()
        };
        let got = script(&l, &run(vec![s.clone()]), &s, "mppout.gpl");
        assert!(got.starts_with("set terminal postscript\n"), "{got}");
        assert!(got.contains("set ylabel \"Rate (MB/sec)\"\n"), "{got}");
        assert!(
            got.ends_with("plot 'mppout.gpl' using 4:($6/1e6) notitle with lines\nexit\n"),
            "{got}"
        );
    }

    #[test]
    fn noinfo_scripts_hold_only_the_plot_line() {
        let l = MpptestLayout {
            gnuplot: Some(GnuplotTerminal::X11),
            logscale: true,
            info: false,
            ..layout_plain()
        };
        let s = series(l.clone(), vec![]);
        assert_eq!(
            script(&l, &run(vec![s.clone()]), &s, "mppout.gpl"),
            "plot 'mppout.gpl' using 4:5 notitle with lines\n"
        );
    }

    /// 0 and 8 B .. 1 MiB: 0.10 us + size/8000 MB/s up to 2 KiB, then a rendezvous-like
    /// 2.00 us + size/4000 MB/s. Each point's first batch is 2.5 to 4 times slower and its
    /// second gives the curve, so only a headline from the fastest batch finds these lines.
    fn jump_at_4096() -> Series {
        let sizes = std::iter::once(0).chain((3..=20).map(|k| 1u64 << k));
        let points = sizes
            .enumerate()
            .map(|(i, len)| {
                let ns = if len <= 2048 {
                    1000 + len * 10 / 8 // tenths of ns: 0.1 us + len/8000 us
                } else {
                    20_000 + len * 10 / 4
                };
                let slow = ns * (5 + (i as u64 % 4)) / 2;
                point(len, vec![slow, slow, ns, ns], vec![2, 2])
            })
            .collect();
        series(layout_plain(), points)
    }

    #[test]
    fn a_jump_at_4096_is_one_breakpoint() {
        let s = jump_at_4096();
        let found = breakpoints_of(&s);
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!((found[0].after, found[0].before), (2048, 4096));
        assert_eq!(
            breakpoint_lines(&s),
            "# breakpoints (fabbench): 1 found, tolerance 5% (at least 0.01 us)\n\
             # 2048 < size <= 4096: jump +2.41 us; below: 0.10 us + size/8000 MB/s \
             (0..2048, 10 points); above: 2.00 us + size/4000 MB/s (4096..1048576, 9 points)\n"
        );
    }

    #[test]
    fn one_line_is_one_segment_and_repeated_sizes_count_once() {
        let mut points: Vec<Point> = (0..=10)
            .map(|k| {
                let len = 1024 * k;
                point(len, vec![1000 + len * 10 / 8], vec![])
            })
            .collect();
        // a size measured twice keeps its first measurement; an empty point is skipped
        points.push(point(5 * 1024, vec![99_999], vec![]));
        points.insert(0, point(512, vec![], vec![]));
        let s = series(layout_plain(), points);
        assert!(breakpoints_of(&s).is_empty());
        assert_eq!(
            breakpoint_lines(&s),
            "# breakpoints (fabbench): none; one segment: 0.10 us + size/8000 MB/s \
             (0..10240, 11 points)\n"
        );
    }

    /// A series with one point per (size, microseconds).
    fn series_of(points: &[(u64, f64)]) -> Series {
        let points = points
            .iter()
            .map(|&(len, us)| point(len, vec![(us * 1e4).round() as u64], vec![]))
            .collect();
        series(layout_plain(), points)
    }

    /// Shapes of a real `-logscale` run on shm: flat to 64 B, a copy line to 2 KiB, a
    /// slower copy from 4 KiB that the lines cross into, and one size at the end alone.
    #[test]
    fn breakpoints_read_as_a_person_says_them() {
        // 0, 2, 4 .. 64 B
        let mut p: Vec<(u64, f64)> = (0..=6).map(|k| ((1u64 << k) & !1, 0.09)).collect();
        p.extend((7..=11).map(|k| (1u64 << k, 0.11 + (1u64 << k) as f64 / 30000.0)));
        p.extend((12..=19).map(|k| (1u64 << k, (1u64 << k) as f64 / 14000.0)));
        p.push((1 << 20, 400.0));
        let text = breakpoint_lines(&series_of(&p));
        assert!(!text.contains("size/-"), "{text}");
        assert!(!text.contains(", 1 points)"), "{text}");
        assert!(!text.contains("-0.00 us"), "{text}");
        assert!(
            text.contains("below: 0.09 us flat (0..64, 7 points)"),
            "{text}"
        );
        // 0.11 + x/30000 and x/14000 meet at 2888 B, inside (2048, 4096]
        assert!(
            text.contains("# 2048 < size <= 4096: slope change; below: 0.11 us + size/"),
            "{text}"
        );
        assert!(text.contains("# 64 < size <= 128: jump +0.0"), "{text}");
        assert!(
            text.ends_with(
                "# on no segment's line, one size each (too few for a line; measure more \
                 sizes there) (1): 1048576\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn text_has_the_comment_line_table_breakpoints_and_notes() {
        let mut s = jump_at_4096();
        s.notes = vec!["# Test Diagnostics".into()];
        let r = run(vec![s.clone()]);
        let t = text(&r, &s);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(
            lines[0],
            "# fabbench 0.1.0 mpptest: fabric shm (native), 2 ranks; eager_limit=4KiB"
        );
        assert_eq!(lines[1], "");
        assert_eq!(lines[2], "#p0\tp1\tdist\tlen\tave time (us)\trate");
        assert_eq!(lines[3], "0\t1\t1\t0\t0.100000\t0.00");
        assert!(
            lines[22].starts_with("# breakpoints (fabbench): 1 found"),
            "{t}"
        );
        assert_eq!(lines.last(), Some(&"# Test Diagnostics"));
        assert_eq!(lines.len(), 25, "{t}");
    }

    #[test]
    fn the_exporter_writes_text_and_breakpoints_for_mpptest_runs() {
        let s = jump_at_4096();
        let r = run(vec![s.clone()]);
        let files = MpptestFiles.export(&r).unwrap();
        let names: Vec<_> = files.iter().map(|(p, _)| p.to_str().unwrap()).collect();
        assert_eq!(names, ["mpptest.txt", "breakpoints.csv"]);
        assert_eq!(files[0].1, text(&r, &s).into_bytes());
        let csv = String::from_utf8(files[1].1.clone()).unwrap();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0], BREAKPOINT_COLUMNS.join(","));
        assert_eq!(lines.len(), 2, "{csv}");
        assert!(lines[1].starts_with("mpptest,shm,2048,4096,jump,"), "{csv}");
        assert_eq!(lines[1].split(',').count(), BREAKPOINT_COLUMNS.len());
    }

    #[test]
    fn the_exporter_makes_no_files_for_an_osu_run() {
        let mut s = jump_at_4096();
        s.layout = Layout::Osu {
            title: "OSU MPI Latency Test v7.4".into(),
            column: "Avg Latency(us)".into(),
            tail: false,
            tail_at: Vec::new(),
            validation: false,
        };
        assert!(MpptestFiles.export(&run(vec![s])).unwrap().is_empty());
    }
}
