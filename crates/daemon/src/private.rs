//! The daemon's own files and directories: created private whatever the umask (mode bits are
//! set explicitly), and refused — with an error naming the fix — when another user owns
//! them or others can write them (something planted there could make the daemon run an
//! agent where an attacker chose).

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// This process's effective uid.
fn me() -> u32 {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}

/// Fails unless `path` is a directory (not a symlink) owned by this user that neither its
/// group nor others can write.
pub fn check_dir(path: &Path) -> std::io::Result<()> {
    let meta = std::fs::symlink_metadata(path)?;
    let unsafe_because = if meta.file_type().is_symlink() {
        Some("is a symbolic link".to_string())
    } else if !meta.is_dir() {
        Some("is not a directory".to_string())
    } else if meta.uid() != me() {
        Some(format!(
            "belongs to uid {} and this daemon runs as uid {}",
            meta.uid(),
            me()
        ))
    } else if meta.mode() & 0o022 != 0 {
        Some(format!(
            "can be written by its group or by others (mode {:o})",
            meta.mode() & 0o777
        ))
    } else {
        None
    };
    match unsafe_because {
        None => Ok(()),
        Some(reason) => Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!(
                "refusing to use {}: it {reason}; it must belong to the daemon's user and be writable by it alone",
                path.display()
            ),
        )),
    }
}

/// Creates `path` (and missing parents) if needed and gives it `mode`. An existing
/// directory is checked first ([`check_dir`]): one that another user owns or others could
/// write is refused, not repaired (something may have been planted in it meanwhile); a
/// merely readable one (e.g. 0755 from an older build) is tightened.
pub fn ensure_dir(path: &Path, mode: u32) -> std::io::Result<()> {
    if !path.exists() {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        match std::fs::DirBuilder::new().mode(mode).create(path) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(e),
            _ => {}
        }
    }
    check_dir(path)?;
    // The umask may have narrowed what `DirBuilder` set, or an older build made it 0755.
    if std::fs::symlink_metadata(path)?.mode() & 0o777 != mode {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))?;
    }
    Ok(())
}

/// Writes `bytes` to `path` atomically, readable and writable by this user alone.
pub fn write_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let temp = path.with_extension("tmp");
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&temp)?;
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    file.write_all(bytes)?;
    file.sync_all()?;
    std::fs::rename(temp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_are_private_whatever_the_mode_asked_of_the_umask() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("a/b");
        ensure_dir(&dir, 0o700).unwrap();
        let mode = std::fs::metadata(&dir).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o700);
        // A readable directory (an older build's 0755) is tightened...
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        ensure_dir(&dir, 0o700).unwrap();
        assert_eq!(std::fs::metadata(&dir).unwrap().mode() & 0o777, 0o700);
        // ...one others could write is refused, not repaired.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o770)).unwrap();
        let refused = ensure_dir(&dir, 0o700).unwrap_err();
        assert!(
            refused.to_string().contains("written by its group"),
            "{refused}"
        );
        let link = root.path().join("link");
        std::os::unix::fs::symlink(&dir, &link).unwrap();
        assert!(check_dir(&link).is_err());
    }

    #[test]
    fn files_are_written_private() {
        let root = tempfile::tempdir().unwrap();
        let path = root.path().join("secret");
        write_file(&path, b"x").unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
        assert_eq!(std::fs::read(&path).unwrap(), b"x");
    }
}
