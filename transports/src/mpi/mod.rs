//! The `mpi` fabric: every suite through the MPI library fabbench was built against (cargo
//! feature `mpi`), for vendor fabrics that arrive as MPI libraries, and to measure fabbench's
//! own transports side by side with a production MPI.
//!
//! MPI runs its own protocols, so the engine's tunables do not apply; instead the registry
//! holds the known variables of each implementation (Open MPI MCA parameters, MPICH CVARs,
//! UCX, ParaStation's PSP_*), named `mpi.NAME` and handed to the ranks' environment. Presets
//! (`FABRIC@mpi`) select a fabric through its MPI: `shm@mpi` is Open MPI's vader BTL, `tcp@mpi`
//! its tcp BTL, and the vendor ones check that the vendor's MPI is there, pointing to the
//! emulated fabric when it is not.

#[cfg(feature = "mpi")]
mod collectives;
#[cfg(feature = "mpi")]
mod ffi;

use std::process::Command;

use bench_core::size::parse_size;
use bench_core::tunables::{Def, Kind, Settings, Value};

use crate::error::Result;
#[cfg(not(feature = "mpi"))]
use crate::error::TransportError;
use crate::fabric::{
    Availability, FabricContext, FabricDef, FabricKind, Launch, LaunchCommand, LaunchRequest, BIND,
};
use crate::transport::Transport;

/// Which environment a variable goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Open MPI MCA parameter: `OMPI_MCA_<name>`.
    OpenMpi,
    /// MPICH control variable, UCX or ParaStation variable: the name as is.
    Plain,
}

const SIZE: Kind = Kind::Size {
    min: 0,
    max: 1 << 40,
};
/// An ob1 BTL's eager limit: Open MPI refuses one under its 56-byte match header at
/// MPI_Init (measured with 4.1.4 for vader and tcp), so the registry refuses it first.
const EAGER: Kind = Kind::Size {
    min: 56,
    max: 1 << 40,
};
const FLAG: Kind = Kind::Int { min: 0, max: 1 };
const COUNT: Kind = Kind::Int {
    min: 1,
    max: 1 << 30,
};
const TEXT: Kind = Kind::Text;
const SINGLE_COPY: Kind = Kind::Choice(&["cma", "xpmem", "knem", "emulated", "none"]);

/// (name, family, value kind, meaning)
type Var = (&'static str, Family, &'static Kind, &'static str);

/// The MPI variables fabbench knows, per implementation.
pub const VARS: &[Var] = &[
    (
        "pml",
        Family::OpenMpi,
        &TEXT,
        "Open MPI point-to-point layer: ob1, ucx, cm",
    ),
    (
        "btl",
        Family::OpenMpi,
        &TEXT,
        "Open MPI byte transfer layers, e.g. self,vader or self,tcp",
    ),
    (
        "mtl",
        Family::OpenMpi,
        &TEXT,
        "Open MPI matching transport layer under pml cm: ofi, psm2, ...",
    ),
    (
        "mtl_ofi_provider_include",
        Family::OpenMpi,
        &TEXT,
        "Open MPI ofi MTL: libfabric providers it may use, comma-separated (tcp;ofi_rxm, shm, ...); exclusive with mtl_ofi_provider_exclude",
    ),
    (
        "mtl_ofi_provider_exclude",
        Family::OpenMpi,
        &TEXT,
        "Open MPI ofi MTL: libfabric providers it must not use (Open MPI 4.1 leaves out shm, sockets, tcp, udp, rstream, usnic)",
    ),
    (
        "op",
        Family::OpenMpi,
        &TEXT,
        "Open MPI reduction operation components; ^avx leaves out the AVX ones, whose sums of 8- and 16-bit integers saturate instead of wrapping (open-mpi/ompi#8045)",
    ),
    (
        "btl_vader_eager_limit",
        Family::OpenMpi,
        &EAGER,
        "Open MPI vader: largest eager message",
    ),
    (
        "btl_vader_rndv_eager_limit",
        Family::OpenMpi,
        &SIZE,
        "Open MPI vader: data sent with the rendezvous request",
    ),
    (
        "btl_vader_max_send_size",
        Family::OpenMpi,
        &SIZE,
        "Open MPI vader: largest fragment",
    ),
    (
        "btl_vader_single_copy_mechanism",
        Family::OpenMpi,
        &SINGLE_COPY,
        "Open MPI vader: single copy through xpmem, cma, knem, emulated or none",
    ),
    (
        "btl_tcp_eager_limit",
        Family::OpenMpi,
        &EAGER,
        "Open MPI tcp: largest eager message",
    ),
    (
        "btl_tcp_rndv_eager_limit",
        Family::OpenMpi,
        &SIZE,
        "Open MPI tcp: data sent with the rendezvous request",
    ),
    (
        "btl_tcp_max_send_size",
        Family::OpenMpi,
        &SIZE,
        "Open MPI tcp: largest fragment",
    ),
    (
        "btl_tcp_if_include",
        Family::OpenMpi,
        &TEXT,
        "Open MPI tcp: interfaces to use",
    ),
    (
        "btl_tcp_sndbuf",
        Family::OpenMpi,
        &SIZE,
        "Open MPI tcp: socket send buffer",
    ),
    (
        "btl_tcp_rcvbuf",
        Family::OpenMpi,
        &SIZE,
        "Open MPI tcp: socket receive buffer",
    ),
    (
        "btl_hlink_rx_thread",
        Family::OpenMpi,
        &FLAG,
        "TI Open MPI hlink BTL: the receive (drain) thread",
    ),
    (
        "MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE",
        Family::Plain,
        &SIZE,
        "MPICH ch3: largest eager message",
    ),
    (
        "MPIR_CVAR_NEMESIS_SHM_EAGER_MAX_SZ",
        Family::Plain,
        &SIZE,
        "MPICH nemesis: largest eager message in shared memory",
    ),
    (
        "MPIR_CVAR_CH3_NOLOCAL",
        Family::Plain,
        &FLAG,
        "MPICH ch3: use the network even between ranks on one node",
    ),
    (
        "MPIR_CVAR_ASYNC_PROGRESS",
        Family::Plain,
        &FLAG,
        "MPICH: a progress thread",
    ),
    (
        "UCX_RNDV_THRESH",
        Family::Plain,
        &TEXT,
        "UCX: rendezvous threshold (bytes or auto)",
    ),
    ("UCX_TLS", Family::Plain, &TEXT, "UCX: transports to use"),
    (
        "PSP_PORTALS",
        Family::Plain,
        &FLAG,
        "ParaStation MPI: use the Portals 4 plugin (BXI)",
    ),
    (
        "PSP_PORTALS_BUFFER_SIZE",
        Family::Plain,
        &SIZE,
        "ParaStation MPI Portals: eager buffer size",
    ),
    (
        "PSP_PORTALS_SENDQ_SIZE",
        Family::Plain,
        &COUNT,
        "ParaStation MPI Portals: eager puts outstanding per connection",
    ),
    (
        "PSP_PORTALS_RECVQ_SIZE",
        Family::Plain,
        &COUNT,
        "ParaStation MPI Portals: receive buffers per connection",
    ),
    (
        "PSP_PORTALS_RENDEZVOUS",
        Family::Plain,
        &SIZE,
        "ParaStation MPI Portals: rendezvous threshold",
    ),
    (
        "PSP_PORTALS_RNDV_FRAGMENT_SIZE",
        Family::Plain,
        &SIZE,
        "ParaStation MPI Portals: rendezvous fragment size",
    ),
    (
        "PSP_PORTALS_MAX_RNDV_REQS",
        Family::Plain,
        &COUNT,
        "ParaStation MPI Portals: rendezvous requests outstanding per pair",
    ),
    (
        "PSP_SHM",
        Family::Plain,
        &FLAG,
        "ParaStation MPI: shared memory between ranks on one node",
    ),
    (
        "PSP_TCP",
        Family::Plain,
        &FLAG,
        "ParaStation MPI: the tcp plugin",
    ),
];

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// The variables as registry declarations: `mpi.NAME`, unset by default.
pub fn tunables() -> &'static [Def] {
    static D: std::sync::OnceLock<Vec<Def>> = std::sync::OnceLock::new();
    D.get_or_init(|| {
        VARS.iter()
            .map(|(name, family, kind, meaning)| Def {
                name: leak(format!("mpi.{name}")),
                kind: Kind::Optional(kind),
                default: "",
                help: leak(match family {
                    Family::OpenMpi => {
                        format!("{meaning} (OMPI_MCA_{name}); unset: the library's default")
                    }
                    Family::Plain => format!("{meaning} ({name}); unset: the library's default"),
                }),
                source: "",
            })
            .collect()
    })
}

/// The environment variable a variable of `family` named `name` is read from.
pub fn env_name(name: &str, family: Family) -> String {
    match family {
        Family::OpenMpi => format!("OMPI_MCA_{name}"),
        Family::Plain => name.to_string(),
    }
}

/// `text` as the library reads a value of `kind`: sizes in bytes ("16KiB" means nothing to
/// an MPI library), the rest as is. None: a size that does not parse.
pub fn library_value(kind: &Kind, text: &str) -> Option<String> {
    match kind {
        Kind::Size { .. } => parse_size(text).ok().map(|b| b.to_string()),
        _ => Some(text.to_string()),
    }
}

/// The environment the MPI ranks get: every variable that is set, sizes in bytes.
pub fn environment(s: &Settings) -> Vec<(String, String)> {
    VARS.iter()
        .filter_map(|(name, family, kind, _)| {
            // A whole number (a flag, a count) is held as one, the rest as text.
            let v = s
                .get_by_runtime_name::<Value>(&format!("mpi.{name}"))
                .to_string();
            if v.is_empty() {
                return None;
            }
            let value = library_value(kind, &v).unwrap_or_else(|| v.clone());
            Some((env_name(name, *family), value))
        })
        .collect()
}

/// What a preset needs from the MPI installation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    OpenMpi,
    OpenMpiBtl(&'static str),
    OpenMpiMtl(&'static str),
    ParaStation,
    MpichNetmod(&'static str),
}

/// A fabric reached through its MPI: `FABRIC@mpi`.
#[derive(Debug, Clone, Copy)]
pub struct Preset {
    pub fabric: &'static str,
    pub what: &'static str,
    pub settings: &'static [(&'static str, &'static str)],
    pub needs: Needs,
}

pub const PRESETS: &[Preset] = &[
    Preset {
        fabric: "shm",
        what: "Open MPI's vader BTL (shared memory)",
        settings: &[("mpi.pml", "ob1"), ("mpi.btl", "self,vader")],
        needs: Needs::OpenMpi,
    },
    Preset {
        fabric: "tcp",
        what: "Open MPI's tcp BTL",
        settings: &[("mpi.pml", "ob1"), ("mpi.btl", "self,tcp")],
        needs: Needs::OpenMpi,
    },
    // The provider is Open MPI's choice, as ofi.provider=auto is the ofi fabric's: name one
    // with mpi.mtl_ofi_provider_include (Open MPI 4.1 leaves tcp and shm out unless named).
    Preset {
        fabric: "ofi",
        what: "Open MPI's cm PML with the ofi MTL: libfabric's tagged matching under MPI, beside `--fabric ofi --set ofi.matching=provider`",
        settings: &[("mpi.pml", "cm"), ("mpi.mtl", "ofi")],
        needs: Needs::OpenMpiMtl("ofi"),
    },
    Preset {
        fabric: "hyperlink",
        what: "TI's Open MPI with its hlink BTL",
        settings: &[("mpi.pml", "ob1"), ("mpi.btl", "self,hlink")],
        needs: Needs::OpenMpiBtl("hlink"),
    },
    Preset {
        fabric: "bxi",
        what: "ParaStation MPI with its Portals 4 plugin",
        settings: &[("mpi.PSP_PORTALS", "1")],
        needs: Needs::ParaStation,
    },
    Preset {
        fabric: "rapidio",
        what: "MPICH built with its RapidIO network module",
        settings: &[],
        needs: Needs::MpichNetmod("rapidio"),
    },
];

pub fn preset(fabric: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.fabric == fabric)
}

/// The MPI library fabbench was built against (MPI_Get_library_version), if it was.
pub fn library_version() -> Option<String> {
    #[cfg(feature = "mpi")]
    {
        Some(ffi::library_version())
    }
    #[cfg(not(feature = "mpi"))]
    {
        None
    }
}

fn command_output(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    Some(text)
}

/// Whether this installation can run `p`; the error says what is missing and what to do.
pub fn check_preset(p: &Preset) -> std::result::Result<(), crate::Refusal> {
    let lib = library_version().ok_or(crate::Refusal::NoMpiSupport)?;
    let first = lib.lines().next().unwrap_or("").trim().to_string();
    let emulated = ["hyperlink", "bxi", "rapidio"]
        .contains(&p.fabric)
        .then_some(p.fabric);
    let missing = |why: String| {
        Err(crate::Refusal::PresetMissing {
            fabric: p.fabric,
            needs: p.what,
            why,
            emulated,
        })
    };
    match p.needs {
        Needs::OpenMpi if !lib.contains("Open MPI") => missing(format!(
            "this fabbench is built against {first}; use --fabric mpi for its own choice"
        )),
        Needs::OpenMpiBtl(btl) => {
            if !lib.contains("Open MPI") {
                return missing(format!("this fabbench is built against {first}"));
            }
            let info = command_output("ompi_info", &[]).unwrap_or_default();
            if info.contains(&format!("MCA btl: {btl} ")) {
                Ok(())
            } else {
                missing(format!(
                    "the Open MPI here ({first}) has no {btl} BTL (ompi_info lists none)"
                ))
            }
        }
        Needs::OpenMpiMtl(mtl) => {
            if !lib.contains("Open MPI") {
                return missing(format!("this fabbench is built against {first}"));
            }
            let info = command_output("ompi_info", &[]).unwrap_or_default();
            if info.contains(&format!("MCA mtl: {mtl} ")) {
                Ok(())
            } else {
                missing(format!(
                    "the Open MPI here ({first}) has no {mtl} MTL (ompi_info lists none)"
                ))
            }
        }
        Needs::ParaStation if !lib.to_lowercase().contains("parastation") => {
            missing(format!("this fabbench is built against {first}"))
        }
        Needs::MpichNetmod(netmod) => {
            let info = command_output("mpichversion", &[]).unwrap_or_default();
            if lib.contains("MPICH") && info.contains(netmod) {
                Ok(())
            } else {
                missing(format!(
                    "this fabbench is built against {first}, without a {netmod} network module"
                ))
            }
        }
        _ => Ok(()),
    }
}

/// Which mpirun a path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mpirun {
    OpenMpi,
    Hydra,
}

/// Asks `mpirun --version` which launcher it is.
pub fn mpirun_flavor(program: &str) -> std::result::Result<Mpirun, crate::Refusal> {
    let text = command_output(program, &["--version"]).ok_or_else(|| crate::Refusal::NoMpirun {
        program: program.to_string(),
    })?;
    if text.contains("Open MPI") || text.contains("OpenRTE") {
        Ok(Mpirun::OpenMpi)
    } else if text.contains("HYDRA") || text.contains("Hydra") {
        Ok(Mpirun::Hydra)
    } else {
        Err(crate::Refusal::NotAnMpirun {
            program: program.to_string(),
            version: text.lines().next().unwrap_or("").trim().to_string(),
        })
    }
}

/// The mpirun arguments that start `n` ranks of `exe args` with `env` passed to each.
pub fn mpirun_args(
    flavor: Mpirun,
    n: usize,
    bind_to_core: bool,
    env: &[(String, String)],
) -> Vec<String> {
    let mut a = vec!["-n".to_string(), n.to_string()];
    match flavor {
        Mpirun::OpenMpi => {
            // SAFETY: getuid has no preconditions.
            if unsafe { libc::getuid() } == 0 {
                a.push("--allow-run-as-root".into());
            }
            let cpus = std::thread::available_parallelism()
                .map(|c| c.get())
                .unwrap_or(1);
            if n > cpus {
                a.push("--oversubscribe".into());
            }
            a.push("--bind-to".into());
            a.push(
                if bind_to_core && n <= cpus {
                    "core"
                } else {
                    "none"
                }
                .into(),
            );
            for (k, _) in env {
                a.push("-x".into());
                a.push(k.clone());
            }
        }
        Mpirun::Hydra => {
            a.push("-bind-to".into());
            a.push(if bind_to_core { "core" } else { "none" }.into());
            for (k, v) in env {
                a.push("-genv".into());
                a.push(k.clone());
                a.push(v.clone());
            }
        }
    }
    a
}

/// The launcher hook: mpirun (Open MPI's or MPICH's Hydra, whichever `--mpirun` names) starts
/// every rank with the job's environment and the MPI variables that are set.
fn launch_command(req: &LaunchRequest) -> std::result::Result<LaunchCommand, crate::Refusal> {
    let flavor = mpirun_flavor(req.launcher)?;
    let mut env = req.env.to_vec();
    env.extend(environment(req.settings));
    let bind = req.settings.get(BIND) == "core";
    let mut args = mpirun_args(flavor, req.ranks, bind, &env);
    args.push(req.program.display().to_string());
    args.extend(req.args.iter().cloned());
    Ok(LaunchCommand {
        program: req.launcher.into(),
        args,
        env,
    })
}

fn availability() -> Availability {
    if library_version().is_none() {
        return Availability::Unusable(
            "built without MPI support; rebuild with --features mpi (see README)".into(),
        );
    }
    Availability::Usable
}

fn connect(ctx: &FabricContext) -> Result<Box<dyn Transport>> {
    #[cfg(feature = "mpi")]
    {
        ffi::connect(ctx)
    }
    #[cfg(not(feature = "mpi"))]
    {
        let _ = ctx;
        Err(TransportError::Config(
            "fabric mpi: this fabbench was built without MPI support; rebuild with --features mpi"
                .into(),
        ))
    }
}

/// The registry line's target.
pub const FABRIC: FabricDef = FabricDef {
    name: "mpi",
    kind: FabricKind::Mpi,
    summary: "the MPI library fabbench was built against (feature mpi); FABRIC@mpi runs a fabric through it",
    availability,
    tunables,
    defaults: &[],
    replaces: &[],
    ignores: &[],
    check_ranks: crate::fabric::any_ranks,
    check_settings: crate::fabric::settings_independent,
    switch_reach: crate::reach::unknown_reach,
    launch: Launch::Launcher(launch_command),
    cleanup: crate::fabric::nothing_to_clean,
    library: library_version,
    connect,
};

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::tunables::{Registry, Source};

    #[test]
    fn variables_reach_the_environment_under_their_own_names() {
        let r = Registry::new(&[tunables()]);
        let mut s = r.defaults();
        assert!(environment(&s).is_empty(), "nothing set, nothing passed");
        s.set(&r, "mpi.btl_vader_eager_limit", "8K", Source::Cli)
            .unwrap();
        s.set(
            &r,
            "mpi.MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE",
            "65536",
            Source::Cli,
        )
        .unwrap();
        s.set(&r, "mpi.btl", "self,vader", Source::Cli).unwrap();
        s.set(&r, "mpi.btl_hlink_rx_thread", "1", Source::Cli)
            .unwrap();
        let env = environment(&s);
        assert!(env.contains(&("OMPI_MCA_btl_hlink_rx_thread".into(), "1".into())));
        assert!(env.contains(&("OMPI_MCA_btl_vader_eager_limit".into(), "8192".into())));
        assert!(env.contains(&("MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE".into(), "65536".into())));
        assert!(env.contains(&("OMPI_MCA_btl".into(), "self,vader".into())));
        let err = s
            .set(
                &r,
                "mpi.btl_vader_single_copy_mechanism",
                "magic",
                Source::Cli,
            )
            .unwrap_err();
        assert!(err.to_string().contains("cma, xpmem"), "{err}");
        let err = s
            .set(&r, "mpi.btl_vadr_eager_limit", "1", Source::Cli)
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("did you mean 'mpi.btl_vader_eager_limit'"),
            "{err}"
        );
        // Under Open MPI's 56-byte floor MPI_Init would abort: refused here, in one line.
        for var in ["mpi.btl_vader_eager_limit", "mpi.btl_tcp_eager_limit"] {
            let err = s.set(&r, var, "0", Source::Cli).unwrap_err();
            assert!(err.to_string().contains("a size from 56"), "{err}");
            s.set(&r, var, "56", Source::Cli).unwrap();
        }
        assert_eq!(library_value(&SIZE, "16KiB").as_deref(), Some("16384"));
        assert_eq!(library_value(&SIZE, "lots"), None);
        assert_eq!(env_name("UCX_TLS", Family::Plain), "UCX_TLS");
    }

    #[test]
    fn mpirun_arguments_per_launcher() {
        let env = vec![("OMPI_MCA_btl".to_string(), "self,tcp".to_string())];
        let o = mpirun_args(Mpirun::OpenMpi, 2, true, &env);
        assert_eq!(&o[..2], &["-n", "2"]);
        assert!(o.windows(2).any(|w| w == ["-x", "OMPI_MCA_btl"]));
        let h = mpirun_args(Mpirun::Hydra, 2, false, &env);
        assert!(h
            .windows(3)
            .any(|w| w == ["-genv", "OMPI_MCA_btl", "self,tcp"]));
        assert!(h.windows(2).any(|w| w == ["-bind-to", "none"]));
    }

    #[test]
    fn presets_name_what_they_need() {
        assert_eq!(
            preset("shm").unwrap().what,
            "Open MPI's vader BTL (shared memory)"
        );
        assert!(preset("ib").is_none());
        let r = Registry::new(&[tunables()]);
        for p in PRESETS {
            let mut s = r.defaults();
            for (k, v) in p.settings {
                s.set(&r, k, v, Source::Fabric).unwrap();
            }
        }
    }
}
