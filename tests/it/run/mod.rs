//! `fabbench run` and the libraries behind it: every fabric (shm, emulated, tcp, mpi) and
//! suite family (OSU, mpptest, application kernels), byte order across ranks, what a run
//! prints and writes, reading run directories back, and the runner called as a library.

mod byte_order;
mod emulated;
mod estimates;
mod files;
mod hdrhistogram_java;
mod kernels;
mod library;
#[cfg(feature = "mpi")]
mod mpi;
mod mpptest;
mod ofi;
mod osu_layout;
mod progress;
mod read_back;
mod replay;
mod shm;
pub(crate) mod tcp;
mod topology;
