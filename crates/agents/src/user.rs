//! The user agent processes run as (`--agent-user`): looking it up, making directories
//! its own, and telling whether it can write somewhere.
//!
//! Processes of one uid can read each other's memory and environment, so agents running
//! as the daemon's own user could read its token (unless the daemon makes itself
//! non-dumpable) and, as root, anything. A separate agent user keeps the daemon, its token
//! and its store out of the agents' reach. What that user's agents share: each other's
//! homes (all sessions' agents run as one user) and whatever the workspace grants it.

use std::ffi::CString;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::OnceLock;

/// A system user agents run as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentUser {
    /// Its name.
    pub name: String,
    /// Its uid.
    pub uid: u32,
    /// Its primary gid.
    pub gid: u32,
}

impl AgentUser {
    /// Looks a user up by name (or a numeric uid).
    pub fn lookup(name: &str) -> std::io::Result<Self> {
        let not_found = || {
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!(
                    "no user `{name}` on this system (create it, e.g. `useradd --system {name}`)"
                ),
            )
        };
        let c_name = CString::new(name).map_err(|_| not_found())?;
        let mut buffer = vec![0u8; 16 << 10];
        // SAFETY: getpwnam_r writes into `passwd` and `buffer`, both owned here and large
        // enough (ERANGE otherwise); `result` points into them only while they live.
        unsafe {
            let mut passwd: libc::passwd = std::mem::zeroed();
            let mut result: *mut libc::passwd = std::ptr::null_mut();
            let status = libc::getpwnam_r(
                c_name.as_ptr(),
                &mut passwd,
                buffer.as_mut_ptr().cast(),
                buffer.len(),
                &mut result,
            );
            if status != 0 {
                return Err(std::io::Error::from_raw_os_error(status));
            }
            if result.is_null() {
                return match name.parse::<u32>() {
                    Ok(uid) => Ok(Self {
                        name: name.to_string(),
                        uid,
                        gid: uid,
                    }),
                    Err(_) => Err(not_found()),
                };
            }
            Ok(Self {
                name: name.to_string(),
                uid: passwd.pw_uid,
                gid: passwd.pw_gid,
            })
        }
    }

    /// Whether this user can write into directory `dir` (by its mode bits: owner, primary
    /// group, others).
    pub fn can_write(&self, dir: &Path) -> bool {
        let Ok(meta) = std::fs::metadata(dir) else {
            return false;
        };
        let mode = meta.mode();
        if self.uid == 0 {
            return true;
        }
        if meta.uid() == self.uid {
            mode & 0o300 == 0o300
        } else if meta.gid() == self.gid {
            mode & 0o030 == 0o030
        } else {
            mode & 0o003 == 0o003
        }
    }

    /// Makes `path` and everything below it (not following symlinks) this user's.
    pub fn own_tree(&self, path: &Path) -> std::io::Result<()> {
        std::os::unix::fs::lchown(path, Some(self.uid), Some(self.gid))?;
        let meta = std::fs::symlink_metadata(path)?;
        if meta.is_dir() {
            for entry in std::fs::read_dir(path)? {
                self.own_tree(&entry?.path())?;
            }
        }
        Ok(())
    }
}

static AGENT_USER: OnceLock<AgentUser> = OnceLock::new();

/// Makes every process the daemon starts from now on run as `user` (once, at start).
pub fn run_agents_as(user: AgentUser) -> Result<(), AgentUser> {
    AGENT_USER.set(user)
}

/// The user agents run as, when one is set; `None`: the daemon's own user.
pub fn agent_user() -> Option<&'static AgentUser> {
    AGENT_USER.get()
}

/// Whether agents run as root (and can therefore read the daemon's memory and token).
pub fn agents_run_as_root() -> bool {
    match agent_user() {
        Some(user) => user.uid == 0,
        // SAFETY: geteuid has no preconditions.
        None => (unsafe { libc::geteuid() }) == 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_is_found_and_strangers_are_not() {
        let root = AgentUser::lookup("root").unwrap();
        assert_eq!((root.uid, root.gid), (0, 0));
        let missing = AgentUser::lookup("no-such-user-sandbox").unwrap_err();
        assert!(missing.to_string().contains("useradd"), "{missing}");
    }

    #[test]
    fn write_access_follows_the_mode_bits() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let meta = std::fs::metadata(dir.path()).unwrap();
        let owner = AgentUser {
            name: "owner".into(),
            uid: meta.uid(),
            gid: meta.gid(),
        };
        let stranger = AgentUser {
            name: "stranger".into(),
            uid: 54_321,
            gid: 54_321,
        };
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        assert!(owner.can_write(dir.path()));
        assert!(!stranger.can_write(dir.path()));
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o703)).unwrap();
        assert!(stranger.can_write(dir.path()));
    }
}
