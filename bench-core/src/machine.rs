//! Facts about the machine a run happened on, and where its CPUs sit.
//!
//! Topology comes from /sys/devices/system/cpu/cpuN/topology rather than hwloc: hwloc2's NUMA
//! calls panic on this kind of VM, and the package (socket) id is all the shm wire needs to pick
//! a protocol per peer.

use std::fs;

use serde::{Deserialize, Serialize};

/// What a manifest records about the host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostInfo {
    pub hostname: String,
    pub cpu_model: String,
    pub cpus: usize,
    pub kernel: String,
    pub os: String,
}

impl HostInfo {
    /// This host's facts, read once per process: a tuner doing thousands of in-process runs
    /// would otherwise read /proc/cpuinfo and the cgroup files for every one.
    pub fn collect() -> HostInfo {
        static HOST: std::sync::OnceLock<HostInfo> = std::sync::OnceLock::new();
        HOST.get_or_init(HostInfo::read).clone()
    }

    fn read() -> HostInfo {
        let uname = nix::sys::utsname::uname().ok();
        HostInfo {
            hostname: nix::unistd::gethostname()
                .ok()
                .and_then(|h| h.into_string().ok())
                .unwrap_or_else(|| "unknown".into()),
            cpu_model: cpu_model().unwrap_or_else(|| "unknown".into()),
            cpus: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            kernel: uname
                .as_ref()
                .map(|u| u.release().to_string_lossy().into_owned())
                .unwrap_or_else(|| "unknown".into()),
            os: uname
                .as_ref()
                .map(|u| {
                    format!(
                        "{} {}",
                        u.sysname().to_string_lossy(),
                        u.machine().to_string_lossy()
                    )
                })
                .unwrap_or_else(|| std::env::consts::OS.into()),
        }
    }
}

fn cpu_model() -> Option<String> {
    let text = fs::read_to_string("/proc/cpuinfo").ok()?;
    text.lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

/// The physical package (socket) of a CPU, from sysfs; `None` when sysfs does not say.
pub fn cpu_package(cpu: usize) -> Option<u32> {
    fs::read_to_string(format!(
        "/sys/devices/system/cpu/cpu{cpu}/topology/physical_package_id"
    ))
    .ok()?
    .trim()
    .parse::<i64>()
    .ok()
    .map(|v| v.max(0) as u32)
}

/// The CPU this thread is running on now.
pub fn current_cpu() -> Option<usize> {
    // SAFETY: sched_getcpu has no preconditions.
    let c = unsafe { libc::sched_getcpu() };
    (c >= 0).then_some(c as usize)
}

/// The CPUs this process may run on, ascending.
pub fn allowed_cpus() -> Vec<usize> {
    match nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)) {
        Ok(set) => (0..nix::sched::CpuSet::count())
            .filter(|&c| set.is_set(c).unwrap_or(false))
            .collect(),
        Err(_) => (0..std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1))
            .collect(),
    }
}

/// Pins the calling thread (or, in a child before exec, the process) to one CPU.
pub fn bind_to_cpu(cpu: usize) -> nix::Result<()> {
    let mut set = nix::sched::CpuSet::new();
    set.set(cpu)?;
    nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set)
}

/// The package of the CPU a process is bound to or running on: what the shm wire compares.
pub fn my_package() -> Option<u32> {
    let cpus = allowed_cpus();
    let cpu = if cpus.len() == 1 {
        cpus[0]
    } else {
        current_cpu()?
    };
    cpu_package(cpu)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_info_is_filled_in() {
        let h = HostInfo::collect();
        assert!(!h.hostname.is_empty());
        assert!(h.cpus >= 1);
        assert_ne!(h.kernel, "unknown");
    }

    #[test]
    fn this_process_may_run_somewhere_and_cpu0_has_a_package() {
        let cpus = allowed_cpus();
        assert!(!cpus.is_empty());
        assert!(cpu_package(cpus[0]).is_some());
        assert!(cpu_package(usize::MAX / 2).is_none());
    }
}
