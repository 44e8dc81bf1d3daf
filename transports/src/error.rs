//! The one error type of the transport stack. Every variant that involves a peer names it.

use std::time::Duration;

use crate::header::HeaderError;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TransportError {
    #[error("timed out after {} waiting for {peer}: {what} (stage: {stage})", humantime::format_duration(*.after))]
    Timeout {
        peer: String,
        what: String,
        stage: String,
        after: Duration,
    },
    #[error("{peer} is gone ({why}) (stage: {stage})")]
    PeerGone {
        peer: String,
        why: String,
        stage: String,
    },
    #[error("message truncated: {peer} sent {len} bytes with tag {tag}, the receive buffer holds {cap} (stage: {stage})")]
    Truncated {
        peer: String,
        tag: i32,
        len: u64,
        cap: usize,
        stage: String,
    },
    #[error("protocol error from {peer}: {what}")]
    Protocol { peer: String, what: String },
    #[error("bad frame from {peer}: {source}")]
    Header {
        peer: String,
        #[source]
        source: HeaderError,
    },
    #[error("{0}")]
    Setup(String),
    #[error("{0}")]
    Config(String),
    /// A call's arguments do not fit (buffer lengths, counts, ranks).
    #[error("{0}")]
    Usage(String),
    #[error("wire: {0}")]
    Io(String),
    #[error("deadlock: every rank is waiting and nothing is in flight ({0})")]
    Deadlock(String),
    #[error("{0}")]
    Limit(String),
    /// Emulated ranks keep trying (a frame refused and retried, a send refused for room) and
    /// nothing is ever carried: virtual time may move, the run does not.
    #[error("livelock: {0}")]
    Livelock(String),
    #[error("rank {rank} failed: {message}")]
    Remote { rank: usize, message: String },
}

impl TransportError {
    /// The error with `stage` named where it says which stage a peer was lost in (the wire
    /// that noticed does not know the stage; the engine does).
    pub fn with_stage(self, stage: &str) -> TransportError {
        match self {
            TransportError::PeerGone { peer, why, .. } => TransportError::PeerGone {
                peer,
                why,
                stage: stage.to_string(),
            },
            other => other,
        }
    }
}

pub type Result<T, E = TransportError> = std::result::Result<T, E>;

impl From<bench_core::bootstrap::BootstrapError> for TransportError {
    fn from(e: bench_core::bootstrap::BootstrapError) -> Self {
        TransportError::Setup(e.to_string())
    }
}
