//! `fabbench compare`: two runs read, compared by the compare crate, printed, and the verdict
//! mapped to the exit status; with --references, handed to [`crate::compare_refs`].

use crate::compare_args::CompareArgs;
use crate::exit;

pub fn run(args: CompareArgs) -> i32 {
    if args.references.is_some() {
        return crate::compare_refs::run(args);
    }
    eprintln!("error: fabbench compare is not built yet");
    exit::USAGE
}
