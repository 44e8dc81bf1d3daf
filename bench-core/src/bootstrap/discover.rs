//! Who started this process: fabbench's own launcher, or one HPC sites already use (Open MPI's
//! mpirun, MPICH's Hydra, Slurm's srun). Under an external launcher every process is one rank,
//! and ranks meet through `--bootstrap tcp://HOST:PORT` (rank 0 serves it) or `dir:PATH`.

/// A rank started by an external launcher.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct External {
    pub rank: usize,
    pub size: usize,
    /// "Open MPI", "MPICH (Hydra)" or "Slurm".
    pub launcher: &'static str,
    /// The launcher's own job id where it gives one (names shared bootstrap state).
    pub job: Option<String>,
}

/// Why the environment an external launcher left cannot be read as a rank.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DiscoveryError {
    #[error("{launcher}: {rank_var} is not a number")]
    RankNotANumber {
        launcher: &'static str,
        rank_var: &'static str,
    },
    #[error("{launcher}: {rank_var} is set but {size_var} is not a number")]
    SizeNotANumber {
        launcher: &'static str,
        rank_var: &'static str,
        size_var: &'static str,
    },
    #[error("{launcher}: {rank_var}={rank} is not below {size_var}={size}")]
    RankNotBelowSize {
        launcher: &'static str,
        rank_var: &'static str,
        rank: usize,
        size_var: &'static str,
        size: usize,
    },
}

/// How this process was started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Started {
    /// By a user (or a script): this process is the frontend.
    ByUser,
    /// By fabbench's local launcher (FABBENCH_RANK is set).
    ByFabbench,
    /// By an external launcher.
    External(External),
}

fn num(env: &dyn Fn(&str) -> Option<String>, name: &str) -> Option<usize> {
    env(name)?.trim().parse().ok()
}

/// Reads the environment through `env` (so tests can fake one).
pub fn detect_with(env: &dyn Fn(&str) -> Option<String>) -> Result<Started, DiscoveryError> {
    if env(super::env::RANK).is_some() {
        return Ok(Started::ByFabbench);
    }
    // Open MPI first: mpirun inside a Slurm allocation also leaves SLURM_* set.
    let candidates: [(&str, &str, &str, &[&str]); 3] = [
        (
            "Open MPI",
            "OMPI_COMM_WORLD_RANK",
            "OMPI_COMM_WORLD_SIZE",
            &["OMPI_MCA_orte_jobfam", "OMPI_MCA_ess_base_jobid"],
        ),
        (
            "MPICH (Hydra)",
            "PMI_RANK",
            "PMI_SIZE",
            &["PMI_JOBID", "PMI_KVSNAME"],
        ),
        ("Slurm", "SLURM_PROCID", "SLURM_NTASKS", &["SLURM_JOB_ID"]),
    ];
    for (launcher, rank_var, size_var, job_vars) in candidates {
        if env(rank_var).is_none() {
            continue;
        }
        let rank =
            num(env, rank_var).ok_or(DiscoveryError::RankNotANumber { launcher, rank_var })?;
        let size = num(env, size_var).ok_or(DiscoveryError::SizeNotANumber {
            launcher,
            rank_var,
            size_var,
        })?;
        if rank >= size {
            return Err(DiscoveryError::RankNotBelowSize {
                launcher,
                rank_var,
                rank,
                size_var,
                size,
            });
        }
        let mut job = job_vars.iter().find_map(|v| env(v));
        if launcher == "Slurm" {
            if let (Some(j), Some(step)) = (&job, env("SLURM_STEP_ID")) {
                job = Some(format!("{j}.{step}"));
            }
        }
        return Ok(Started::External(External {
            rank,
            size,
            launcher,
            job,
        }));
    }
    Ok(Started::ByUser)
}

pub fn detect() -> Result<Started, DiscoveryError> {
    detect_with(&|k| std::env::var(k).ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn with(vars: &[(&str, &str)]) -> Result<Started, DiscoveryError> {
        let m: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        detect_with(&|k| m.get(k).cloned())
    }

    #[test]
    fn each_launcher_is_recognised() {
        assert_eq!(with(&[]), Ok(Started::ByUser));
        assert_eq!(with(&[("FABBENCH_RANK", "0")]), Ok(Started::ByFabbench));
        let slurm = with(&[
            ("SLURM_PROCID", "1"),
            ("SLURM_NTASKS", "2"),
            ("SLURM_JOB_ID", "77"),
            ("SLURM_STEP_ID", "3"),
        ])
        .unwrap();
        assert_eq!(
            slurm,
            Started::External(External {
                rank: 1,
                size: 2,
                launcher: "Slurm",
                job: Some("77.3".into())
            })
        );
        let hydra = with(&[("PMI_RANK", "0"), ("PMI_SIZE", "4")]).unwrap();
        assert!(matches!(
            hydra,
            Started::External(External {
                launcher: "MPICH (Hydra)",
                size: 4,
                ..
            })
        ));
    }

    #[test]
    fn open_mpi_wins_inside_a_slurm_allocation() {
        let s = with(&[
            ("OMPI_COMM_WORLD_RANK", "3"),
            ("OMPI_COMM_WORLD_SIZE", "4"),
            ("SLURM_PROCID", "0"),
            ("SLURM_NTASKS", "1"),
        ])
        .unwrap();
        assert!(matches!(
            s,
            Started::External(External {
                launcher: "Open MPI",
                rank: 3,
                ..
            })
        ));
    }

    #[test]
    fn inconsistent_variables_are_reported() {
        let not_below = with(&[("SLURM_PROCID", "2"), ("SLURM_NTASKS", "2")]).unwrap_err();
        assert!(
            matches!(
                not_below,
                DiscoveryError::RankNotBelowSize {
                    rank: 2,
                    size: 2,
                    ..
                }
            ),
            "{not_below:?}"
        );
        assert!(not_below.to_string().contains("not below"));
        let not_a_number = with(&[("PMI_RANK", "x"), ("PMI_SIZE", "2")]).unwrap_err();
        assert!(
            matches!(
                not_a_number,
                DiscoveryError::RankNotANumber {
                    rank_var: "PMI_RANK",
                    ..
                }
            ),
            "{not_a_number:?}"
        );
        assert!(not_a_number.to_string().contains("not a number"));
    }
}
