//! Single copy through Linux cross-memory attach: `process_vm_readv` reads a peer's buffer
//! straight into ours, `process_vm_writev` writes ours straight into a peer's. The kernel may
//! refuse (ptrace policy, no CMA) or transfer only part; a refusal is reported so the engine
//! can fall back to copying.

use std::io::{IoSlice, IoSliceMut};

use nix::errno::Errno;
use nix::sys::uio::{process_vm_readv, process_vm_writev, RemoteIoVec};
use nix::unistd::Pid;

/// How a read ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmaRead {
    Done,
    Refused(Errno),
}

/// Runs `step(done)` (one system call moving bytes from offset `done`, returning how many)
/// until `len` bytes have moved, sorting its errors into refusals and failures.
fn transfer(
    len: usize,
    mut step: impl FnMut(usize) -> nix::Result<usize>,
) -> Result<CmaRead, Errno> {
    let mut done = 0usize;
    while done < len {
        match step(done) {
            Ok(0) => return Err(Errno::EFAULT),
            Ok(n) => done += n,
            Err(e @ (Errno::EPERM | Errno::ENOSYS | Errno::EACCES)) => {
                return Ok(CmaRead::Refused(e))
            }
            Err(Errno::EINTR) => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(CmaRead::Done)
}

fn remote_at(remote: u64, done: usize, len: usize) -> [RemoteIoVec; 1] {
    [RemoteIoVec {
        base: remote as usize + done,
        len,
    }]
}

/// Reads `local.len()` bytes at `remote` in process `pid`, looping over partial transfers.
pub fn read(pid: i32, remote: u64, local: &mut [u8]) -> Result<CmaRead, Errno> {
    transfer(local.len(), |done| {
        let rest = &mut local[done..];
        let remote_iov = remote_at(remote, done, rest.len());
        process_vm_readv(
            Pid::from_raw(pid),
            &mut [IoSliceMut::new(rest)],
            &remote_iov,
        )
    })
}

/// Writes `local` to `remote` in process `pid`, looping over partial transfers.
pub fn write(pid: i32, remote: u64, local: &[u8]) -> Result<CmaRead, Errno> {
    transfer(local.len(), |done| {
        let rest = &local[done..];
        process_vm_writev(
            Pid::from_raw(pid),
            &[IoSlice::new(rest)],
            &remote_at(remote, done, rest.len()),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_our_own_memory_by_pid() {
        let src: Vec<u8> = (0..100_000u32).map(|i| i as u8).collect();
        let mut dst = vec![0u8; src.len()];
        let r = read(std::process::id() as i32, src.as_ptr() as u64, &mut dst).unwrap();
        if r == CmaRead::Done {
            assert_eq!(dst, src);
        }
    }

    #[test]
    fn writes_our_own_memory_by_pid() {
        let src: Vec<u8> = (0..100_000u32).map(|i| (i * 3) as u8).collect();
        let mut dst = vec![0u8; src.len()];
        let r = write(std::process::id() as i32, dst.as_mut_ptr() as u64, &src).unwrap();
        if r == CmaRead::Done {
            assert_eq!(dst, src);
        }
    }

    #[test]
    fn a_bad_address_is_an_error() {
        let mut dst = vec![0u8; 16];
        assert!(read(std::process::id() as i32, 8, &mut dst).is_err());
    }
}
