//! Where an on/off setting's mechanism acts: the message sizes at which turning it on or off
//! changes what happens to a message, as the fabric that carries it knows. A tool that judges
//! a switch by measurement (autotune) asks here, so that sizes the switch cannot touch are
//! reported as "not applicable" rather than read as evidence: machine noise at 2 B says
//! nothing about single copy, which only ever moves rendezvous messages.

use bench_core::size::format_size;
use bench_core::tunables::Settings;

use crate::fabric::{EAGER_LIMIT, RX_THREAD, SINGLE_COPY, SINGLE_COPY_SHARE};

pub use crate::fabric::Reach;

/// The engine's switches, as every native and emulated wire under it uses them: single copy
/// replaces the rendezvous data transfer, so it acts only on messages the eager limit in force
/// sends by rendezvous; the receive thread advances any message.
pub fn engine_reach(name: &str, s: &Settings) -> Reach {
    if name == SINGLE_COPY.name() || name == SINGLE_COPY_SHARE.name() {
        let eager = s.get(EAGER_LIMIT);
        return Reach {
            above: eager,
            why: format!(
                "single copy moves rendezvous messages only, those above eager_limit={}",
                format_size(eager)
            ),
        };
    }
    if name == RX_THREAD.name() {
        return Reach::everywhere("a receive thread advances every message");
    }
    Reach::everywhere(format!("{name} may change any message"))
}

/// A fabric that runs its own protocols (MPI): no narrower range is known.
pub fn unknown_reach(name: &str, _s: &Settings) -> Reach {
    Reach::everywhere(format!(
        "the library's own protocols: where {name} acts is not known"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::registry;
    use bench_core::tunables::Source;

    #[test]
    fn single_copy_acts_above_the_eager_limit_in_force() {
        let reg = registry(&[]);
        let mut s = reg.defaults();
        s.set(&reg, "eager_limit", "16K", Source::Cli).unwrap();
        let r = engine_reach("single_copy", &s);
        assert_eq!(r.above, 16 << 10);
        assert!(!r.acts_at(16 << 10) && r.acts_at((16 << 10) + 1));
        assert!(r.why.contains("eager_limit=16KiB"), "{}", r.why);
        assert_eq!(engine_reach("rx_thread", &s).above, 0);
    }
}
