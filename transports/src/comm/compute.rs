//! The compute stretches a rank charged to virtual time, kept in order so a run can write them
//! down, and a recording of an earlier run's to charge instead of timing (record and replay:
//! SMPI's sampling, with every stretch measured once, in the run that recorded it). Only
//! emulated fabrics charge compute; a rank's communicators share one log, so the k-th stretch
//! is the k-th this rank computed whichever communicator it computed on.

use crate::error::{Result, TransportError};

/// An earlier run's charges for this rank, and where they came from.
#[derive(Debug, Clone)]
pub struct Replay {
    /// What the output names as the recording (a run directory).
    pub source: String,
    /// Host nanoseconds of each stretch, in the order the rank computed them.
    pub host_ns: Vec<u64>,
}

/// What a rank charged, and what it replays.
#[derive(Debug, Default)]
pub(crate) struct ComputeLog {
    /// Host nanoseconds of every stretch charged so far (replayed or timed).
    charged: Vec<u64>,
    replay: Option<Replay>,
}

impl ComputeLog {
    /// The host time to charge for the next stretch: the recording's, when replaying (an
    /// error once it has none left: the recording is of other work), else `timed`.
    pub fn next(&mut self, timed: u64) -> Result<u64> {
        let k = self.charged.len();
        let ns = match &self.replay {
            None => timed,
            Some(r) => *r.host_ns.get(k).ok_or_else(|| {
                TransportError::Config(format!(
                    "compute replay: this rank computed more than the {} stretches {} recorded \
                     for it: replay a run of the same command (suites, parameters, ranks)",
                    r.host_ns.len(),
                    r.source
                ))
            })?,
        };
        self.charged.push(ns);
        Ok(ns)
    }

    pub fn set_replay(&mut self, replay: Replay) {
        self.replay = Some(replay);
    }

    pub fn charged(&self) -> &[u64] {
        &self.charged
    }

    /// At the end of the rank's work: a replay that charged fewer stretches than it holds was
    /// of other work, and its times are not this run's.
    pub fn check_used_up(&self) -> Result<()> {
        match &self.replay {
            Some(r) if r.host_ns.len() != self.charged.len() => {
                Err(TransportError::Config(format!(
                    "compute replay: this rank computed {} stretches, {} recorded {} for it: \
                     replay a run of the same command (suites, parameters, ranks)",
                    self.charged.len(),
                    r.source,
                    r.host_ns.len()
                )))
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replaying(host_ns: &[u64]) -> ComputeLog {
        let mut log = ComputeLog::default();
        log.set_replay(Replay {
            source: "run X".into(),
            host_ns: host_ns.to_vec(),
        });
        log
    }

    #[test]
    fn timing_charges_what_was_timed_and_keeps_it() {
        let mut log = ComputeLog::default();
        assert_eq!(log.next(5).unwrap(), 5);
        assert_eq!(log.next(7).unwrap(), 7);
        assert_eq!(log.charged(), &[5, 7]);
        assert!(log.check_used_up().is_ok());
    }

    #[test]
    fn replaying_charges_the_recording_in_order_whatever_was_timed() {
        let mut log = replaying(&[10, 20]);
        assert_eq!(log.next(999).unwrap(), 10);
        assert_eq!(log.next(1).unwrap(), 20);
        assert_eq!(log.charged(), &[10, 20]);
        assert!(log.check_used_up().is_ok());
    }

    #[test]
    fn a_recording_of_other_work_is_refused_either_way() {
        let mut short = replaying(&[10]);
        short.next(1).unwrap();
        let e = short.next(1).unwrap_err().to_string();
        assert!(
            e.contains("more than the 1 stretches run X recorded"),
            "{e}"
        );
        let mut long = replaying(&[10, 20, 30]);
        long.next(1).unwrap();
        let e = long.check_used_up().unwrap_err().to_string();
        assert!(e.contains("computed 1 stretches, run X recorded 3"), "{e}");
    }
}
