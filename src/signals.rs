//! SIGINT, SIGTERM and SIGHUP in the frontend: raise a flag the launcher watches, so it stops
//! the ranks, removes shared memory and keeps what was measured as a partial run; the signal
//! that came decides the exit status (128 + its number, as shells report it).

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};

pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// The first signal that stopped the run (0: none yet).
static SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    let _ = SIGNAL.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
    INTERRUPTED.store(true, Ordering::SeqCst);
}

pub fn install() {
    let action = SigAction::new(
        SigHandler::Handler(on_signal),
        SaFlags::empty(),
        SigSet::empty(),
    );
    for sig in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
        // SAFETY: the handler only stores to atomics, which is async-signal-safe.
        let _ = unsafe { sigaction(sig, &action) };
    }
}

/// The signal that stopped the run, if one did: its name and the exit status it means.
pub fn received() -> Option<(&'static str, i32)> {
    let sig = SIGNAL.load(Ordering::SeqCst);
    let name = Signal::try_from(sig).ok()?.as_str();
    Some((name, 128 + sig))
}
