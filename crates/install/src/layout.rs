//! Writing the install directory (its layout is read by `sandbox_agents::locate`): a lock per
//! agent held across processes, a staging directory per install that is removed unless it
//! is committed, and commits by rename, so a version directory is either complete (with its
//! receipt) or absent, and `current` always names a complete one.

use std::fs::File;
use std::path::{Path, PathBuf};

use sandbox_agents::locate::{self, CURRENT_FILE, InstallReceipt, RECEIPT_FILE};
use sandbox_universal::AgentId;

use crate::error::InstallError;

const LOCK_FILE: &str = ".lock";
const STAGING_PREFIX: &str = ".staging-";
const OLD_PREFIX: &str = ".old-";

/// An exclusive lock on one agent's install directory, held across processes (an OS file
/// lock, released when the holder exits however it exits).
#[derive(Debug)]
pub struct AgentLock {
    _file: File,
    dir: PathBuf,
}

impl AgentLock {
    /// Waits for the lock of `agent` under `install_dir` (creating the directories).
    pub async fn acquire(install_dir: &Path, agent: AgentId) -> Result<Self, InstallError> {
        let dir = locate::agent_dir(install_dir, agent);
        std::fs::create_dir_all(&dir)
            .map_err(|e| InstallError::io("creating the install directory", &dir, e))?;
        // Binaries are not secrets: agents running as another user (`--agent-user`) must
        // be able to run them.
        for open in [install_dir, dir.as_path()] {
            readable(open)?;
        }
        let path = dir.join(LOCK_FILE);
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| InstallError::io("opening the install lock", &path, e))?;
        let file = tokio::task::spawn_blocking(move || file.lock().map(|()| file))
            .await
            .expect("the lock task does not panic")
            .map_err(|e| InstallError::io("locking the install directory", &path, e))?;
        let lock = Self { _file: file, dir };
        lock.clean_leftovers();
        Ok(lock)
    }

    /// Whether the lock is free right now (another process is not installing).
    pub fn is_free(install_dir: &Path, agent: AgentId) -> bool {
        let path = locate::agent_dir(install_dir, agent).join(LOCK_FILE);
        File::options()
            .write(true)
            .open(path)
            .map(|f| f.try_lock().is_ok())
            .unwrap_or(true)
    }

    /// Removes what installs interrupted by a crash left (staging and replaced dirs).
    fn clean_leftovers(&self) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with(STAGING_PREFIX) || name.starts_with(OLD_PREFIX) {
                tracing::info!(path = %entry.path().display(), "removing an interrupted install");
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }

    /// A fresh staging directory for one install.
    pub fn stage(&self) -> Result<Staging, InstallError> {
        let path = self
            .dir
            .join(format!("{STAGING_PREFIX}{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir(&path)
            .map_err(|e| InstallError::io("creating the staging directory", &path, e))?;
        readable(&path)?;
        Ok(Staging {
            path,
            committed: false,
        })
    }

    /// Makes `version` the one new sessions use (written to a temporary file, then renamed
    /// over `current`).
    pub fn set_current(&self, version: &str) -> Result<(), InstallError> {
        let temp = self
            .dir
            .join(format!(".current-{}", uuid::Uuid::new_v4().simple()));
        let target = self.dir.join(CURRENT_FILE);
        std::fs::write(&temp, format!("{version}\n"))
            .and_then(|()| std::fs::rename(&temp, &target))
            .map_err(|e| {
                let _ = std::fs::remove_file(&temp);
                InstallError::io("recording the current version", &target, e)
            })
    }
}

/// Gives `dir` mode 0755.
fn readable(dir: &Path) -> Result<(), InstallError> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| InstallError::io("opening the install directory to agents", dir, e))
}

/// A directory an install is assembled in; removed when dropped uncommitted.
#[derive(Debug)]
pub struct Staging {
    path: PathBuf,
    committed: bool,
}

impl Staging {
    /// Its path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes the receipt and renames the directory to `<agent dir>/<version>`, replacing
    /// an existing install of that version (a reinstall). Returns the version directory.
    pub fn commit(
        mut self,
        lock: &AgentLock,
        receipt: &InstallReceipt,
    ) -> Result<PathBuf, InstallError> {
        let receipt_path = self.path.join(RECEIPT_FILE);
        let json = serde_json::to_vec_pretty(receipt).expect("a receipt serializes");
        std::fs::write(&receipt_path, json)
            .map_err(|e| InstallError::io("writing the install receipt", &receipt_path, e))?;
        let target = lock.dir.join(&receipt.version);
        let old = lock
            .dir
            .join(format!("{OLD_PREFIX}{}", uuid::Uuid::new_v4().simple()));
        let replacing = target.exists();
        if replacing {
            std::fs::rename(&target, &old)
                .map_err(|e| InstallError::io("moving the previous install aside", &target, e))?;
        }
        if let Err(e) = std::fs::rename(&self.path, &target) {
            if replacing {
                let _ = std::fs::rename(&old, &target);
            }
            return Err(InstallError::io(
                "moving the install into place",
                &target,
                e,
            ));
        }
        self.committed = true;
        if replacing {
            let _ = std::fs::remove_dir_all(&old);
        }
        Ok(target)
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn receipt(version: &str) -> InstallReceipt {
        InstallReceipt {
            version: version.into(),
            executable: "claude".into(),
            source: "release".into(),
            url: "http://x".into(),
            size: 1,
            sha256: "00".into(),
            installed_at: "2026-01-01T00:00:00Z".into(),
        }
    }

    #[tokio::test]
    async fn staging_is_removed_unless_committed_and_commits_replace_whole() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let lock = AgentLock::acquire(root.path(), AgentId::Claude)
            .await
            .unwrap();
        let dropped = lock.stage().unwrap();
        let dropped_path = dropped.path().to_path_buf();
        std::fs::write(dropped_path.join("claude"), "half").unwrap();
        drop(dropped);
        assert!(!dropped_path.exists());

        for body in ["one", "two"] {
            let staging = lock.stage().unwrap();
            let exe = staging.path().join("claude");
            std::fs::write(&exe, body).unwrap();
            std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
            staging.commit(&lock, &receipt("1.0.0")).unwrap();
        }
        lock.set_current("1.0.0").unwrap();
        let exe = locate::installed_executable(root.path(), AgentId::Claude, "1.0.0").unwrap();
        assert_eq!(std::fs::read_to_string(exe).unwrap(), "two");
        assert_eq!(
            locate::current_version(root.path(), AgentId::Claude).as_deref(),
            Some("1.0.0")
        );
        let names: Vec<String> = std::fs::read_dir(root.path().join("claude"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != ".lock")
            .collect();
        let mut names = names;
        names.sort();
        assert_eq!(names, ["1.0.0", "current"]);

        // Another process cannot take the lock while it is held.
        assert!(!AgentLock::is_free(root.path(), AgentId::Claude));
        drop(lock);
        assert!(AgentLock::is_free(root.path(), AgentId::Claude));
    }
}
