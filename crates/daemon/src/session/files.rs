//! A session's local files, under `<data dir>/sessions/<id>/` (mode 0700): `agent/` (the
//! agent's private HOME and config, given to the driver as `state_dir`) and `token` (the
//! session's credential override, mode 0600). The credential never goes to the store, so a
//! database shared by a fleet never holds one.

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// Directory given to the agent as its private state.
pub const AGENT_DIR: &str = "agent";
/// File holding the session's `token`.
pub const TOKEN_FILE: &str = "token";

/// Creates an empty session directory only the daemon's user can read, with its agent
/// subdirectory, replacing any leftover of an earlier session with the same id (the caller
/// has checked that the store holds no session with this id).
pub fn create_dir(dir: &Path) -> std::io::Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir)?;
    }
    std::fs::create_dir_all(dir.join(AGENT_DIR))?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    Ok(())
}

/// Keeps the session's credential override, readable only by the daemon's user.
pub fn save_token(dir: &Path, token: &str) -> std::io::Result<()> {
    let temp = dir.join(format!("{TOKEN_FILE}.tmp"));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&temp)?;
    file.write_all(token.as_bytes())?;
    file.sync_all()?;
    std::fs::rename(temp, dir.join(TOKEN_FILE))
}

/// The session's credential override, if it has one.
pub fn load_token(dir: &Path) -> std::io::Result<Option<String>> {
    match std::fs::read_to_string(dir.join(TOKEN_FILE)) {
        Ok(token) => Ok(Some(token)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Removes the session's directory (purge).
pub fn remove_dir(dir: &Path) -> std::io::Result<()> {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_private_and_survive() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("s");
        create_dir(&dir).unwrap();
        assert_eq!(load_token(&dir).unwrap(), None);
        save_token(&dir, "sk-secret").unwrap();
        assert_eq!(load_token(&dir).unwrap().as_deref(), Some("sk-secret"));
        let mode = std::fs::metadata(dir.join(TOKEN_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        remove_dir(&dir).unwrap();
        assert!(!dir.exists());
        remove_dir(&dir).unwrap();
    }
}
