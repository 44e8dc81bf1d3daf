//! transports is fabbench's communication stack, shaped like Open MPI's PML/BTL split.
//!
//! A [`wire::Wire`] moves frames between ranks (shared memory, TCP, emulated fabrics); the
//! [`engine::Engine`] implements tag matching and the eager and rendezvous protocols once for
//! every wire; a [`transport::Transport`] is what the engine (or an MPI library) offers; and
//! [`comm::Comm`] gives suites blocking and nonblocking point-to-point calls, collectives and
//! the only clock they may read. [`fabric`] says what a fabric is (how it is built, started and
//! cleaned up after), and [`registry`] lists every fabric and every tunable.

pub mod emulated;
pub mod engine;
pub mod error;
pub mod header;
pub mod in_process;
pub mod mpi;
pub mod order;
pub mod reach;
pub mod transport;
pub mod wire;

pub use error::{Result, TransportError};
pub use refusal::Refusal;
pub mod comm;
pub mod fabric;
pub mod ofi;
pub mod refusal;
pub mod registry;
pub mod shm;
pub mod spin;
pub mod tcp;
