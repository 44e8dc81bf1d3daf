//! What a suite's run will ask of a fabric, counted before it runs: per point, the
//! iterations (timed and warm-up) that wait on a peer, the messages sent and the bytes they
//! carry. The runner's estimate turns these counts into seconds with a per-fabric cost model;
//! a suite whose work is not known up front (adaptive or sampled schedules, compute-bound
//! kernels) declares none, and is estimated only from earlier runs.

/// The communication one point asks for, over all its iterations.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PointWork {
    /// Iterations, timed and warm-up: each ends in a wait on a peer (a round trip, a window's
    /// acknowledgement), which costs an emulated fabric a scheduler hand-over and a real one
    /// its latency.
    pub iterations: u64,
    /// Messages sent, by every rank.
    pub messages: u64,
    /// Payload bytes sent, by every rank.
    pub bytes: u64,
}

impl PointWork {
    /// `iterations` alike, each sending `messages` messages of `bytes` bytes in all.
    pub fn repeated(iterations: u64, messages: u64, bytes: u64) -> PointWork {
        PointWork {
            iterations,
            messages: iterations * messages,
            bytes: iterations * bytes,
        }
    }
}

/// The communication a whole suite run asks for, point by point.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Work {
    pub points: Vec<PointWork>,
}

impl Work {
    /// Every point's counts added up.
    pub fn total(&self) -> PointWork {
        self.points
            .iter()
            .fold(PointWork::default(), |a, p| PointWork {
                iterations: a.iterations + p.iterations,
                messages: a.messages + p.messages,
                bytes: a.bytes + p.bytes,
            })
    }
}
