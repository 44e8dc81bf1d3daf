//! The job's shared-memory segment: a file under /dev/shm that every rank maps, then unlinks.
//!
//! Rank 0 creates it, the others open it, and once all have it mapped (a bootstrap fence) rank
//! 0 removes the name, so nothing is left behind even if a rank is killed with SIGKILL. Before
//! that point the launcher removes any `fabbench-JOBID-*` leftovers with [`cleanup_job`].

use std::ffi::CString;
use std::fs;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};

const DIR: &str = "/dev/shm";

/// Where a job's segment lives.
pub fn segment_path(job_id: &str, instance: &str) -> PathBuf {
    let dir = if Path::new(DIR).is_dir() {
        PathBuf::from(DIR)
    } else {
        std::env::temp_dir()
    };
    dir.join(format!("fabbench-{job_id}-{instance}"))
}

/// Removes every segment a job may have left; returns how many were removed.
pub fn cleanup_job(job_id: &str) -> usize {
    let prefix = format!("fabbench-{job_id}-");
    let mut removed = 0;
    for dir in [PathBuf::from(DIR), std::env::temp_dir()] {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            if e.file_name().to_string_lossy().starts_with(&prefix)
                && fs::remove_file(e.path()).is_ok()
            {
                removed += 1;
            }
        }
    }
    removed
}

/// A mapped segment; unmapped on drop.
pub struct Segment {
    base: *mut u8,
    len: usize,
    path: PathBuf,
}

// SAFETY: the mapping is process-wide; users synchronise access through the rings' atomics.
unsafe impl Send for Segment {}

impl Segment {
    /// Creates (exclusively) and maps a zero-filled segment of `len` bytes.
    pub fn create(path: &Path, len: usize) -> io::Result<Segment> {
        Self::open_with(path, len, libc::O_CREAT | libc::O_EXCL | libc::O_RDWR, true)
    }

    /// Maps an existing segment of `len` bytes.
    pub fn open(path: &Path, len: usize) -> io::Result<Segment> {
        Self::open_with(path, len, libc::O_RDWR, false)
    }

    fn open_with(path: &Path, len: usize, flags: i32, size_it: bool) -> io::Result<Segment> {
        let c = CString::new(path.as_os_str().as_encoded_bytes())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path has a NUL byte"))?;
        // SAFETY: plain open(2) of a valid C string.
        let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC, 0o600) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fd was just returned by open and is owned here.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        if size_it {
            // SAFETY: ftruncate on an owned descriptor.
            if unsafe { libc::ftruncate(fd.as_raw_fd(), len as libc::off_t) } != 0 {
                let e = io::Error::last_os_error();
                let _ = fs::remove_file(path);
                return Err(e);
            }
        } else {
            let actual = fs::metadata(path)?.len() as usize;
            if actual != len {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("segment is {actual} bytes, expected {len}"),
                ));
            }
        }
        // SAFETY: mapping `len` bytes of a file of that size, shared, read-write. Pages are
        // populated now so first-touch faults do not land in timed iterations.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                fd.as_raw_fd(),
                0,
            )
        };
        if base == libc::MAP_FAILED {
            let e = io::Error::last_os_error();
            if size_it {
                let _ = fs::remove_file(path);
            }
            return Err(e);
        }
        Ok(Segment {
            base: base as *mut u8,
            len,
            path: path.to_path_buf(),
        })
    }

    pub fn base(&self) -> *mut u8 {
        self.base
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Removes the name; the mapping stays valid for everyone who has it.
    pub fn unlink(&self) -> io::Result<()> {
        match fs::remove_file(&self.path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }
}

impl Drop for Segment {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly what was mapped.
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_open_share_and_cleanup() {
        let job = bench_core::bootstrap::random_hex(6);
        let path = segment_path(&job, "t");
        let a = Segment::create(&path, 8192).unwrap();
        assert!(Segment::create(&path, 8192).is_err(), "exclusive create");
        assert!(Segment::open(&path, 4096).is_err(), "size is checked");
        let b = Segment::open(&path, 8192).unwrap();
        unsafe { a.base().add(100).write(42) };
        assert_eq!(unsafe { b.base().add(100).read() }, 42);
        assert_eq!(cleanup_job(&job), 1);
        assert!(!path.exists());
        // still mapped after the name is gone
        unsafe { b.base().add(200).write(7) };
        assert_eq!(unsafe { a.base().add(200).read() }, 7);
        a.unlink().unwrap();
    }
}
