//! `fabbench characterise`: the request checked, the characterise crate run, what it wrote
//! printed, and the outcome mapped to an exit status.

use crate::characterise_args::CharacteriseArgs;
use crate::exit;

pub fn run(args: CharacteriseArgs) -> i32 {
    let _ = args;
    eprintln!("error: characterise is not built yet");
    exit::FAILED
}
