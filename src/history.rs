//! `fabbench history`: runs added to a store, and trends with change points shown from it.

use crate::exit;
use crate::history_args::HistoryArgs;

pub fn run(_args: HistoryArgs) -> i32 {
    eprintln!("error: fabbench history is not built yet");
    exit::USAGE
}
