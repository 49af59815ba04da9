//! A session's files: `session.json` (how it was created), `events.jsonl` (its log) and
//! `agent/` (the agent's private HOME and config), all under
//! `<data dir>/sessions/<id>/`, readable only by the daemon's user.

use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use sandbox_agents::SessionConfig;
use sandbox_universal::{AgentId, PermissionMode};
use serde::{Deserialize, Serialize};

/// File holding the [`SessionRecord`].
pub const RECORD_FILE: &str = "session.json";
/// File holding the event log.
pub const EVENTS_FILE: &str = "events.jsonl";
/// Directory given to the agent as its private state.
pub const AGENT_DIR: &str = "agent";

/// How a session was created: enough to restore it after a daemon restart. The session's
/// `token`, if any, is kept too (the file is mode 0600 in a 0700 directory) so a restored
/// session can restart its agent.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRecord {
    /// The session id.
    pub session_id: String,
    /// The agent.
    pub agent: AgentId,
    /// Agent mode.
    pub agent_mode: Option<String>,
    /// Permission mode.
    pub permission_mode: PermissionMode,
    /// Model.
    pub model: Option<String>,
    /// Variant.
    pub variant: Option<String>,
    /// The session's credential override.
    pub token: Option<String>,
    /// Let the agent act without asking.
    pub dangerously_skip_permissions: bool,
    /// Requested agent version.
    pub agent_version: Option<String>,
    /// Working directory.
    pub cwd: PathBuf,
    /// Creation time.
    pub created_at: DateTime<Utc>,
}

impl SessionRecord {
    /// The driver configuration this record describes, for a session living in `dir`.
    pub fn config(&self, dir: &Path) -> SessionConfig {
        SessionConfig {
            session_id: self.session_id.clone(),
            agent_mode: self.agent_mode.clone(),
            permission_mode: self.permission_mode,
            model: self.model.clone(),
            variant: self.variant.clone(),
            token: self.token.clone(),
            validate_token: false,
            dangerously_skip_permissions: self.dangerously_skip_permissions,
            agent_version: self.agent_version.clone(),
            cwd: self.cwd.clone(),
            state_dir: dir.join(AGENT_DIR),
        }
    }
}

/// Creates an empty session directory only the daemon's user can read, with its agent
/// subdirectory (wiping any leftover of an earlier session with the same id).
pub fn create_dir(dir: &Path) -> std::io::Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir)?;
    }
    std::fs::create_dir_all(dir.join(AGENT_DIR))?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    Ok(())
}

/// Writes the record atomically with mode 0600.
pub fn save(dir: &Path, record: &SessionRecord) -> std::io::Result<()> {
    let temp = dir.join(format!("{RECORD_FILE}.tmp"));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&temp)?;
    serde_json::to_writer_pretty(&mut file, record).map_err(std::io::Error::other)?;
    std::io::Write::write_all(&mut file, b"\n")?;
    file.sync_all()?;
    std::fs::rename(temp, dir.join(RECORD_FILE))
}

/// Reads a session's record.
pub fn load(dir: &Path) -> std::io::Result<SessionRecord> {
    let text = std::fs::read_to_string(dir.join(RECORD_FILE))?;
    serde_json::from_str(&text).map_err(std::io::Error::other)
}

/// Every session directory under `sessions_dir` that holds a record.
pub fn session_dirs(sessions_dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(sessions_dir) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join(RECORD_FILE).is_file())
        .collect();
    dirs.sort();
    dirs
}
