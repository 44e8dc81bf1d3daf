//! The per-user key that authenticates ranks started by mpirun or srun (which have no channel
//! from fabbench to pass a secret through): `$HOME/.fabbench/key`, shared by every node that
//! shares the home directory. The first rank to need it creates it; ranks racing to do so agree
//! on one key because it is written aside and linked into place, which never replaces a file.

use std::fs::{self, DirBuilder, OpenOptions};
use std::io::{ErrorKind, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::random_hex;

/// Why there is no key.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum KeyError {
    /// The key file exists but others could read or have replaced it: refused, never used.
    #[error("{0}")]
    Unsafe(String),
    /// No key could be made or read here (no home directory, a read-only one).
    #[error("{0}")]
    Unavailable(String),
}

/// Where the key of a user whose home directory is `home` lives.
pub fn path_in(home: &Path) -> PathBuf {
    home.join(".fabbench").join("key")
}

/// The key in `path`, creating it (and its directory, mode 0700) if there is none.
pub fn load_or_create(path: &Path) -> Result<String, KeyError> {
    let shown = path.display();
    match fs::symlink_metadata(path) {
        Ok(_) => {}
        Err(e) if e.kind() == ErrorKind::NotFound => create(path)?,
        Err(e) => return Err(KeyError::Unavailable(format!("cannot read {shown}: {e}"))),
    }
    check(path)?;
    let text = fs::read_to_string(path)
        .map_err(|e| KeyError::Unavailable(format!("cannot read {shown}: {e}")))?;
    let key = text.trim();
    if key.len() < 32 {
        return Err(KeyError::Unsafe(format!(
            "{shown} holds {} characters, fewer than the 32 a key needs: remove it and fabbench makes a new one",
            key.len()
        )));
    }
    Ok(key.to_string())
}

/// Refuses a key file that is not a regular file of this user's, private to them.
fn check(path: &Path) -> Result<(), KeyError> {
    let shown = path.display();
    let meta = fs::symlink_metadata(path)
        .map_err(|e| KeyError::Unavailable(format!("cannot read {shown}: {e}")))?;
    if !meta.file_type().is_file() {
        return Err(KeyError::Unsafe(format!(
            "{shown} is not a regular file (a symbolic link or a directory): remove it and fabbench makes a new key"
        )));
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me {
        return Err(KeyError::Unsafe(format!(
            "{shown} belongs to uid {}, not to you (uid {me}): remove it and fabbench makes a new key",
            meta.uid()
        )));
    }
    let mode = meta.mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(KeyError::Unsafe(format!(
            "{shown} can be read or written by others (mode {mode:03o}): run `chmod 600 {shown}`"
        )));
    }
    Ok(())
}

fn create(path: &Path) -> Result<(), KeyError> {
    let unavailable =
        |what: &str, e: std::io::Error| KeyError::Unavailable(format!("cannot {what}: {e}"));
    let dir = path
        .parent()
        .ok_or_else(|| KeyError::Unavailable(format!("{} has no directory", path.display())))?;
    match DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
        Err(e) => return Err(unavailable(&format!("create {}", dir.display()), e)),
    }
    let tmp = dir.join(format!(".key-{}-{}", std::process::id(), random_hex(6)));
    let written = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .and_then(|mut f| {
            f.write_all(format!("{}\n", random_hex(32)).as_bytes())?;
            f.sync_all()
        });
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(unavailable(&format!("write {}", tmp.display()), e));
    }
    // A hard link never replaces an existing file: of ranks racing here, the first one's key
    // is the key, and the others read it.
    let linked = fs::hard_link(&tmp, path);
    let _ = fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(unavailable(&format!("create {}", path.display()), e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("fabbench-key-{name}-{}", random_hex(4)));
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn the_key_is_made_once_private_and_then_reused() {
        let home = scratch("make");
        let path = path_in(&home);
        let a = load_or_create(&path).unwrap();
        assert_eq!(a.len(), 64);
        assert_eq!(fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
        assert_eq!(
            fs::metadata(path.parent().unwrap()).unwrap().mode() & 0o777,
            0o700
        );
        assert_eq!(load_or_create(&path).unwrap(), a);
        let _ = fs::remove_dir_all(home);
    }

    #[test]
    fn racing_ranks_agree_on_one_key() {
        let home = scratch("race");
        let path = path_in(&home);
        let keys: Vec<String> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..8).map(|_| s.spawn(|| load_or_create(&path))).collect();
            hs.into_iter().map(|h| h.join().unwrap().unwrap()).collect()
        });
        assert!(keys.iter().all(|k| *k == keys[0]), "{keys:?}");
        // Nothing written aside is left behind.
        assert_eq!(fs::read_dir(path.parent().unwrap()).unwrap().count(), 1);
        let _ = fs::remove_dir_all(home);
    }

    #[test]
    fn a_key_others_can_read_is_refused() {
        let home = scratch("perm");
        let path = path_in(&home);
        load_or_create(&path).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        let err = load_or_create(&path).unwrap_err();
        assert!(matches!(err, KeyError::Unsafe(_)), "{err:?}");
        assert!(err.to_string().contains("mode 644"), "{err}");
        let _ = fs::remove_dir_all(home);
    }

    #[test]
    fn a_key_of_someone_else_is_refused() {
        let home = scratch("owner");
        let path = path_in(&home);
        load_or_create(&path).unwrap();
        // Only root can give a file away; elsewhere the check is the mode's.
        if std::os::unix::fs::chown(&path, Some(65534), None).is_ok() {
            let err = load_or_create(&path).unwrap_err();
            assert!(err.to_string().contains("belongs to uid 65534"), "{err}");
        }
        let _ = fs::remove_dir_all(home);
    }

    #[test]
    fn a_link_in_place_of_the_key_is_refused() {
        let home = scratch("link");
        let path = path_in(&home);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", &path).unwrap();
        let err = load_or_create(&path).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
        let _ = fs::remove_dir_all(home);
    }
}
