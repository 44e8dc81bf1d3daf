//! Why a fabric refuses what a run asks of it before anything runs: a label that names no
//! fabric or preset, a fabric this host cannot run, a rank count its hardware cannot have,
//! settings that cannot carry a message, a model card that is not one, an mpirun that is not
//! there. The runner carries a refusal into its plan error, and the binary prints it as one
//! line with exit status 2; each variant keeps the facts as fields so a caller can act on them
//! without reading the text.

use crate::emulated::card::CardError;
use crate::TransportError;

#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    #[error("unknown fabric '{name}'; valid fabrics: {} (see `fabbench list fabrics`)", .valid.join(", "))]
    UnknownFabric {
        name: String,
        valid: Vec<&'static str>,
    },
    #[error("no MPI preset for '{base}'; presets: {}", .presets.join(", "))]
    NoPreset { base: String, presets: Vec<String> },
    /// The fabric cannot run on this host (its availability says why).
    #[error(transparent)]
    Unusable(TransportError),
    #[error(
        "this fabbench was built without MPI support; rebuild with --features mpi (see README)"
    )]
    NoMpiSupport,
    /// A `FABRIC@mpi` preset whose MPI, BTL or network module is not installed here.
    #[error("{fabric}@mpi needs {needs}: {why}{}", .emulated.map(|f| format!("; without it, run the emulated model: --fabric {f}")).unwrap_or_default())]
    PresetMissing {
        fabric: &'static str,
        needs: &'static str,
        why: String,
        /// The emulated fabric of the same name, when there is one.
        emulated: Option<&'static str>,
    },
    /// A rank count the fabric's hardware cannot have.
    #[error("{why}")]
    Ranks { ranks: usize, why: String },
    /// Settings that contradict each other or the engine's (a message could never be carried),
    /// or that this host cannot use; `why` names the parameters and what is valid.
    #[error("{why}")]
    Settings { why: String },
    #[error(transparent)]
    ModelCard(#[from] CardError),
    #[error("cannot run {program}: install an MPI (openmpi-bin) or give --mpirun PATH")]
    NoMpirun { program: String },
    #[error("{program} is neither Open MPI's mpirun nor MPICH's Hydra: {version}")]
    NotAnMpirun { program: String, version: String },
}

impl Refusal {
    /// Settings that cannot carry a message, or that this host cannot use.
    pub fn settings(why: impl Into<String>) -> Refusal {
        Refusal::Settings { why: why.into() }
    }
}
