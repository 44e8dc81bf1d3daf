//! `fabbench history`: runs added to a store, and trends with change points shown from it.
//! `add` hands the run directories to the history crate, which reads them all and writes one
//! entry per run (nothing when any is refused); `show` prints the view in the format asked,
//! draws its charts with --plot, and maps a regression to exit 1 with --fail-on-regression.

use history::format::Format;
use history::{Filter, Overrides, Store};

use crate::exit;
use crate::history_args::{AddArgs, HistoryAction, HistoryArgs, ImageFormat, ShowArgs};

pub fn run(args: HistoryArgs) -> i32 {
    match args.action {
        HistoryAction::Add(a) => add(a),
        HistoryAction::Show(s) => show(s),
    }
}

fn add(args: AddArgs) -> i32 {
    let overrides = Overrides {
        revision: args.revision,
        date: args.date,
    };
    match history::store::add(&args.store, &args.runs, &overrides) {
        Ok(added) => {
            for a in added {
                println!(
                    "added {} ({} {}) as {}",
                    a.entry.run_id,
                    a.entry.short_revision(),
                    a.entry.date,
                    a.path.display()
                );
            }
            exit::OK
        }
        Err(e) => exit::report(&e),
    }
}

fn show(args: ShowArgs) -> i32 {
    let options = match args.options() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::USAGE;
        }
    };
    let filter = Filter {
        metrics: args.metric.clone(),
        suites: args.suite.clone(),
        fabrics: args.fabric.clone(),
        last: args.last.map(|n| n as usize),
    };
    let view =
        match Store::open(&args.store).and_then(|s| history::trend::view(&s, &filter, &options)) {
            Ok(v) => v,
            Err(e) => return exit::report(&e),
        };
    // Charts first: a chart that cannot be written fails the command before anything is
    // printed, so stdout is never a table that claims success.
    if let Some(dir) = &args.plot {
        let charts = history::chart::charts(&view);
        let format = match args.plot_format {
            ImageFormat::Svg => plots::Format::Svg,
            ImageFormat::Png => plots::Format::Png,
            ImageFormat::Both => plots::Format::Both,
        };
        match plots::write_all(&charts, dir, format) {
            Ok(paths) => {
                for p in paths {
                    eprintln!("wrote {}", p.display());
                }
            }
            Err(e) => {
                eprintln!("error: {e}");
                return exit::FAILED;
            }
        }
    }
    print!(
        "{}",
        history::format::render(&view, Format::from(args.format))
    );
    if args.fail_on_regression && view.regressed() {
        eprintln!(
            "history: a series sits on a regressed level (its last change point is a regression)"
        );
        return exit::FAILED;
    }
    exit::OK
}
