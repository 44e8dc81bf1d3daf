//! `fabbench calibrate`: the request checked, the calibrate crate run, what it wrote printed,
//! and the outcome mapped to an exit status.

use crate::calibrate_args::CalibrateArgs;
use crate::exit;

pub fn run(args: CalibrateArgs) -> i32 {
    let _ = args;
    eprintln!("error: calibrate is not built yet");
    exit::FAILED
}
