//! `fabbench compare`: two runs (or one run and a reference file) read, compared by the
//! compare crate, printed, and the verdict mapped to the exit status.

use crate::compare_args::CompareArgs;
use crate::exit;

pub fn run(_args: CompareArgs) -> i32 {
    eprintln!("error: fabbench compare is not built yet");
    exit::USAGE
}
