//! The nbody benchmark: a distributed direct-summation gravity code (TI's Hyperlink guide
//! validates its MPI transport with one), as the simulation ([`sim`]) and the suite that runs
//! and checks it ([`suite`]).

mod forces;
mod plummer;
pub mod sim;
pub mod suite;

pub use suite::{NbodyParams, NBODY};
