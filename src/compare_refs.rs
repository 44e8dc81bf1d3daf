//! `fabbench compare --references FILE RUN`: one run checked against reference values.

use crate::compare_args::CompareArgs;
use crate::exit;

pub fn run(_args: CompareArgs) -> i32 {
    eprintln!("error: fabbench compare --references is not built yet");
    exit::USAGE
}
