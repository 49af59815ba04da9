//! A session's local files, under `<data dir>/sessions/<id>/` (mode 0700; 0711 with an
//! agent user, who may then traverse it but not list it): `agent/` (the agent's private
//! HOME and config, given to the driver as `state_dir`; the agent user's own, mode 0700)
//! and `token` (the session's credential override, mode 0600). The credential never goes
//! to the store, so a database shared by a fleet never holds one.

use std::path::Path;

use sandbox_agents::user::AgentUser;
use sandbox_universal::PolicySecrets;

use crate::private;

/// Directory given to the agent as its private state.
pub const AGENT_DIR: &str = "agent";
/// File holding the session's `token`.
pub const TOKEN_FILE: &str = "token";
/// File holding the secret values of the session's policy (MCP servers' `env` and
/// `headers`, the session's `env`).
pub const POLICY_SECRETS_FILE: &str = "policy-secrets.json";

/// The mode of the daemon's directories on the way to agent homes: private, or
/// traversable (not listable) by the agent user.
pub fn dir_mode(agent_user: Option<&AgentUser>) -> u32 {
    if agent_user.is_some() { 0o711 } else { 0o700 }
}

/// Creates an empty session directory, with its agent subdirectory owned by the agent user
/// (or the daemon's), replacing any leftover of an earlier session with the same id (the
/// caller has checked that the store holds no session with this id).
pub fn create_dir(dir: &Path, agent_user: Option<&AgentUser>) -> std::io::Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir)?;
    }
    private::ensure_dir(dir, dir_mode(agent_user))?;
    let agent = dir.join(AGENT_DIR);
    private::ensure_dir(&agent, 0o700)?;
    if let Some(user) = agent_user {
        user.own_tree(&agent)?;
    }
    Ok(())
}

/// Fails unless the session directory is the daemon's alone (see [`private::check_dir`]).
pub fn check_dir(dir: &Path) -> std::io::Result<()> {
    private::check_dir(dir)
}

/// Keeps the session's credential override, readable only by the daemon's user.
pub fn save_token(dir: &Path, token: &str) -> std::io::Result<()> {
    private::write_file(&dir.join(TOKEN_FILE), token.as_bytes())
}

/// The session's credential override, if it has one.
pub fn load_token(dir: &Path) -> std::io::Result<Option<String>> {
    match std::fs::read_to_string(dir.join(TOKEN_FILE)) {
        Ok(token) => Ok(Some(token)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Keeps the secret values of the session's policy, readable only by the daemon's user.
pub fn save_policy_secrets(dir: &Path, secrets: &PolicySecrets) -> std::io::Result<()> {
    let json = serde_json::to_vec(secrets).expect("secrets serialise");
    private::write_file(&dir.join(POLICY_SECRETS_FILE), &json)
}

/// The secret values of the session's policy (none when it has none).
pub fn load_policy_secrets(dir: &Path) -> std::io::Result<PolicySecrets> {
    match std::fs::read(dir.join(POLICY_SECRETS_FILE)) {
        Ok(json) => serde_json::from_slice(&json)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(PolicySecrets::default()),
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
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn tokens_are_private_and_survive() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("s");
        create_dir(&dir, None).unwrap();
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
