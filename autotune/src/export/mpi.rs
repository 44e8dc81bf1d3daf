//! The MPI library's own forms of the chosen `mpi.*` settings, so a tuned MPI fabric can be
//! deployed without fabbench: Open MPI's `mca-params.conf`, a file for Open MPI's
//! `mpirun --tune`, and `autotune.env` for any MPI (Open MPI, MPICH, UCX, ParaStation). Names
//! and families come from `transports::mpi::VARS`, the list fabbench itself hands to the ranks;
//! sizes are written in bytes, the only form every library parses.

use std::path::PathBuf;

use bench_core::tunables::Kind;
use transports::mpi::{Family, VARS};

use super::{comment, shell_quote, ExportError, Exporter, File};
use crate::outcome::Outcome;

/// Writes the MPI files when the fabric is an MPI one and some `mpi.*` variable was chosen.
pub struct MpiFiles;

pub(super) const MCA_PARAMS: &str = "mca-params.conf";
pub(super) const OMPI_TUNE: &str = "ompi-tune.conf";
pub(super) const ENV: &str = "autotune.env";

/// How to use each file, for its header and the report.
pub(super) fn usage(file: &str) -> &'static str {
    match file {
        MCA_PARAMS => {
            "Open MPI reads it as $HOME/.openmpi/mca-params.conf, or from wherever \
             OMPI_MCA_mca_base_param_files points (a comma-separated list, earlier files \
             win; it replaces the default list, so name the system file too to keep it)"
        }
        OMPI_TUNE => {
            "Open MPI 4.1: mpirun --tune ompi-tune.conf ... (options on the command \
             line win over the file)"
        }
        ENV => {
            "source it before launching: . ./autotune.env (Open MPI's mpirun forwards \
             OMPI_MCA_* to every node but other variables only with -x VAR; MPICH's mpiexec \
             and srun forward the whole environment)"
        }
        _ => "",
    }
}

/// A chosen variable in the library's terms.
struct Var {
    name: &'static str,
    family: Family,
    value: String,
}

impl Var {
    fn env_name(&self) -> String {
        transports::mpi::env_name(self.name, self.family)
    }
}

impl Exporter for MpiFiles {
    fn files(&self, o: &Outcome) -> Result<Vec<File>, ExportError> {
        if o.kind != "mpi" {
            return Ok(Vec::new());
        }
        let vars = chosen_vars(o)?;
        if vars.is_empty() {
            return Ok(Vec::new());
        }
        let mut files = Vec::new();
        let open_mpi = vars.iter().any(|v| v.family == Family::OpenMpi);
        if open_mpi {
            files.push((MCA_PARAMS, mca_params(o, &vars)));
        }
        // UCX variables alone may still be Open MPI's (pml ucx): the library says so.
        let library = o.library.as_deref().unwrap_or("").to_ascii_lowercase();
        if open_mpi || library.contains("open mpi") {
            files.push((OMPI_TUNE, ompi_tune(o, &vars)));
        }
        files.push((ENV, env(o, &vars)));
        Ok(files
            .into_iter()
            .map(|(name, text)| (PathBuf::from(name), text.into_bytes()))
            .collect())
    }
}

/// The deployed `mpi.*` variables that are set (empty means the library's default: nothing to
/// write), in `VARS` order so related variables stay together.
fn chosen_vars(o: &Outcome) -> Result<Vec<Var>, ExportError> {
    if let Some(unknown) = o
        .deployed_values()
        .keys()
        .filter_map(|k| k.strip_prefix("mpi."))
        .find(|n| !VARS.iter().any(|(name, ..)| name == n))
    {
        return Err(ExportError::UnknownMpiVariable(format!("mpi.{unknown}")));
    }
    let mut vars = Vec::new();
    for (name, family, kind, _) in VARS {
        let key = format!("mpi.{name}");
        match o.deployed_values().get(&key).map(|v| v.trim()) {
            Some(v) if !v.is_empty() => vars.push(Var {
                name,
                family: *family,
                value: library_value(&key, kind, v)?,
            }),
            _ => {}
        }
    }
    Ok(vars)
}

/// The value as the library reads it (transports' own rule: sizes in bytes).
fn library_value(key: &str, kind: &Kind, value: &str) -> Result<String, ExportError> {
    transports::mpi::library_value(kind, value).ok_or_else(|| ExportError::MpiSize {
        name: key.to_string(),
        value: value.to_string(),
    })
}

fn header(o: &Outcome, file: &str) -> String {
    comment(&format!(
        "fabbench autotune: the MPI settings chosen for {} ({}).\n{}",
        o.fabric,
        o.library.as_deref().unwrap_or("MPI"),
        usage(file)
    ))
}

/// Open MPI's parameter file: `name = value` lines, MCA parameters only.
fn mca_params(o: &Outcome, vars: &[Var]) -> String {
    let mut text = header(o, MCA_PARAMS);
    for v in vars.iter().filter(|v| v.family == Family::OpenMpi) {
        text += &format!("{} = {}\n", v.name, v.value);
    }
    text
}

/// `mpirun --tune`'s file: mpirun options, `--mca NAME VALUE` and `-x VAR=VALUE`.
fn ompi_tune(o: &Outcome, vars: &[Var]) -> String {
    let mut text = header(o, OMPI_TUNE);
    // Verified with Open MPI 4.1.4's mpirun: `--mca` lines set the parameter (ompi_info shows
    // it with source "file"), `-x` lines reach the ranks' environment, `#` lines are skipped.
    // A value with blanks cannot be written: its parser splits at them even inside the
    // double quotes the man page allows, and reports errors.
    text += &comment("format verified with Open MPI 4.1.4: --mca NAME VALUE and -x VAR=VALUE");
    for v in vars {
        text += &if v.value.contains(char::is_whitespace) {
            comment(&format!(
                "left out {}=\"{}\": mpirun --tune cannot read a value with blanks; \
                 {MCA_PARAMS} and {ENV} carry it",
                v.name, v.value
            ))
        } else {
            match v.family {
                Family::OpenMpi => format!("--mca {} {}\n", v.name, v.value),
                Family::Plain => format!("-x {}={}\n", v.name, v.value),
            }
        };
    }
    text
}

/// `export VAR=value` lines for sh.
fn env(o: &Outcome, vars: &[Var]) -> String {
    let mut text = header(o, ENV);
    for v in vars {
        text += &format!("export {}={}\n", v.env_name(), shell_quote(&v.value));
    }
    text
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use super::*;
    use crate::export::sample;

    fn files(o: &Outcome) -> Vec<(String, String)> {
        MpiFiles
            .files(o)
            .unwrap()
            .into_iter()
            .map(|(p, b)| (p.display().to_string(), String::from_utf8(b).unwrap()))
            .collect()
    }

    /// The lines that are not comments.
    fn body(text: &str) -> Vec<&str> {
        text.lines().filter(|l| !l.starts_with('#')).collect()
    }

    #[test]
    fn names_values_and_bytes() {
        let f = files(&sample::mpi_outcome());
        let names: Vec<&str> = f.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, [MCA_PARAMS, OMPI_TUNE, ENV]);
        assert_eq!(
            body(&f[0].1),
            ["btl = self,vader", "btl_vader_eager_limit = 16384"]
        );
        assert_eq!(
            body(&f[1].1),
            [
                "--mca btl self,vader",
                "--mca btl_vader_eager_limit 16384",
                "-x UCX_RNDV_THRESH=auto"
            ]
        );
        assert_eq!(
            body(&f[2].1),
            [
                "export OMPI_MCA_btl=self,vader",
                "export OMPI_MCA_btl_vader_eager_limit=16384",
                "export UCX_RNDV_THRESH=auto"
            ]
        );
        assert!(f[0].1.contains("OMPI_MCA_mca_base_param_files"));
        assert!(f[1].1.contains("mpirun --tune ompi-tune.conf"));
    }

    #[test]
    fn mpich_gets_only_the_environment() {
        let mut o = sample::mpi_outcome();
        o.library = Some("MPICH Version: 4.0".into());
        o.chosen = [("mpi.MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE", "128KiB")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let f = files(&o);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].0, ENV);
        assert_eq!(
            body(&f[0].1),
            ["export MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE=131072"]
        );
    }

    #[test]
    fn other_fabrics_and_unset_variables_give_no_files() {
        assert!(files(&sample::outcome()).is_empty());
        let mut o = sample::mpi_outcome();
        o.kind = "native".into();
        assert!(files(&o).is_empty());
        let mut o = sample::mpi_outcome();
        o.chosen.retain(|k, _| !k.starts_with("mpi."));
        assert!(files(&o).is_empty());
        o.chosen.insert("mpi.btl".into(), String::new());
        assert!(files(&o).is_empty());
    }

    #[test]
    fn bad_names_and_sizes_are_refused() {
        let mut o = sample::mpi_outcome();
        o.chosen
            .insert("mpi.btl_vader_eager_limit".into(), "lots".into());
        assert!(matches!(
            MpiFiles.files(&o),
            Err(ExportError::MpiSize { .. })
        ));
        let mut o = sample::mpi_outcome();
        o.chosen.insert("mpi.no_such_thing".into(), "1".into());
        let err = MpiFiles.files(&o).unwrap_err();
        assert!(
            err.to_string().starts_with("mpi.no_such_thing is not"),
            "{err}"
        );
    }

    #[test]
    fn env_file_is_read_back_by_sh() {
        let mut o = sample::mpi_outcome();
        o.chosen.insert("mpi.op".into(), "^avx".into());
        o.chosen
            .insert("mpi.btl_tcp_if_include".into(), "eth0 lo".into());
        let f = files(&o);
        assert!(f[1]
            .1
            .contains("\n# left out btl_tcp_if_include=\"eth0 lo\""));
        assert!(!body(&f[1].1).iter().any(|l| l.contains("eth0")));
        assert!(body(&f[0].1).contains(&"btl_tcp_if_include = eth0 lo"));
        let text = &f[2].1;
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "{text}\nprintf '%s|' \"$OMPI_MCA_op\" \"$OMPI_MCA_btl_tcp_if_include\""
            ))
            .output()
            .expect("sh runs");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "^avx|eth0 lo|");
    }

    /// Open MPI itself reads both files: run with `cargo test -- --ignored` where Open MPI's
    /// `ompi_info` and `mpirun` are installed.
    #[test]
    #[ignore = "needs Open MPI"]
    fn open_mpi_reads_both_files() {
        let dir = std::env::temp_dir().join(format!("autotune-mpi-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (name, bytes) in MpiFiles.files(&sample::mpi_outcome()).unwrap() {
            std::fs::write(dir.join(name), bytes).unwrap();
        }
        let vader = ["--parsable", "--param", "btl", "vader", "--level", "9"];
        let params = Command::new("ompi_info")
            .args(vader)
            .env("OMPI_MCA_mca_base_param_files", dir.join(MCA_PARAMS))
            .output()
            .unwrap();
        let tune = Command::new("mpirun")
            .args(["--allow-run-as-root", "--tune"])
            .arg(dir.join(OMPI_TUNE))
            .args(["-n", "1", "ompi_info"])
            .args(vader)
            .output()
            .unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        for out in [params, tune] {
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(
                text.contains("param:btl_vader_eager_limit:value:16384\n"),
                "{text}"
            );
        }
    }
}
