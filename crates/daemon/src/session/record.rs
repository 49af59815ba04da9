//! How a session was created, as stored (the session row's `record`), and the session as
//! the API shows it when it is not loaded.
//!
//! Contract (stable: what is stored): the record is JSON with schema version
//! [`RECORD_VERSION`]; it never holds the session's credential (see `files.rs`).

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use sandbox_agents::SessionConfig;
use sandbox_universal::{
    AgentId, PermissionMode, PolicySecrets, SessionInfo, SessionPolicy, SessionStatus,
    UnreadableSession,
};
use serde::{Deserialize, Serialize};

use super::core::CoreSnapshot;
use super::files::AGENT_DIR;
use super::state::CoreState;
use crate::store::{NewSession, SessionRow};

/// Schema version of the stored session record.
pub const RECORD_VERSION: u32 = 1;

/// How a session was created: enough to restore it after a daemon restart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// Let the agent act without asking.
    pub dangerously_skip_permissions: bool,
    /// Requested agent version.
    pub agent_version: Option<String>,
    /// Working directory.
    pub cwd: PathBuf,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// The session policy without its secret values (those are in the session's
    /// directory: `files::save_policy_secrets`).
    #[serde(default, skip_serializing_if = "SessionPolicy::is_empty")]
    pub policy: SessionPolicy,
}

impl SessionRecord {
    /// The driver configuration this record describes, for a session living in `dir`.
    pub fn config(
        &self,
        dir: &Path,
        token: Option<String>,
        secrets: PolicySecrets,
    ) -> SessionConfig {
        SessionConfig {
            session_id: self.session_id.clone(),
            agent_mode: self.agent_mode.clone(),
            permission_mode: self.permission_mode,
            model: self.model.clone(),
            variant: self.variant.clone(),
            token,
            validate_token: false,
            dangerously_skip_permissions: self.dangerously_skip_permissions,
            agent_version: self.agent_version.clone(),
            cwd: self.cwd.clone(),
            state_dir: dir.join(AGENT_DIR),
            tap: None,
            policy: self.policy.clone().with_secrets(secrets),
            login: None,
        }
    }

    /// The row that stores it.
    pub fn to_new_session(&self) -> NewSession {
        NewSession {
            session_id: self.session_id.clone(),
            record_version: RECORD_VERSION,
            record: serde_json::to_string(self).expect("records serialise"),
            agent: self.agent.into(),
            created_ms: self.created_at.timestamp_millis(),
        }
    }

    /// Reads the record of a stored session, or says why this build cannot.
    pub fn from_row(row: &SessionRow) -> Result<Self, String> {
        if row.record_version > RECORD_VERSION {
            return Err(format!(
                "its record was written by a newer sandbox-daemon (record version {}; this build reads up to {RECORD_VERSION})",
                row.record_version
            ));
        }
        let record: Self = serde_json::from_str(&row.record)
            .map_err(|e| format!("its stored record is unreadable: {e}"))?;
        if record.session_id != row.session_id {
            return Err(format!(
                "its stored record names another session (`{}`)",
                record.session_id
            ));
        }
        Ok(record)
    }

    /// The session as the API shows it, in a given state, its last event logged at
    /// `last_event_us` (µs since the Unix epoch; `None`: it has none).
    pub fn info(&self, state: &CoreSnapshot, last_event_us: Option<i64>) -> SessionInfo {
        SessionInfo {
            session_id: self.session_id.clone(),
            agent: self.agent,
            status: state.status,
            agent_mode: self.agent_mode.clone(),
            permission_mode: self.permission_mode,
            model: self.model.clone(),
            variant: self.variant.clone(),
            native_session_id: state.native_session_id.clone(),
            cwd: self.cwd.display().to_string(),
            created_at: self.created_at,
            updated_at: last_event_us
                .and_then(DateTime::<Utc>::from_timestamp_micros)
                .unwrap_or(self.created_at),
            event_count: state.event_count,
            current_turn_id: state.current_turn.clone(),
            pending_permissions: state.pending_permissions.clone(),
            pending_questions: state.pending_questions.clone(),
            pending_tool_calls: state.pending_tool_calls.clone(),
            end_reason: state.end_reason,
        }
    }
}

/// A stored session (not loaded) as the API shows it: its record and its last state
/// snapshot, or why this build cannot read it.
pub fn stored_info(row: &SessionRow) -> Result<SessionInfo, UnreadableSession> {
    let record = SessionRecord::from_row(row).map_err(|error| unreadable(row, error))?;
    let state = row
        .state_version
        .zip(row.state.as_deref())
        .and_then(|(version, json)| CoreState::from_snapshot(version, json));
    let mut snapshot = match &state {
        Some(state) => CoreSnapshot::of(state),
        None => CoreSnapshot::of(&CoreState::default()),
    };
    if state.is_none() {
        // A status this build does not know (a newer build's) is shown as idle.
        snapshot.status = row.status.known().unwrap_or(SessionStatus::Idle);
    }
    snapshot.event_count = row.last_sequence;
    Ok(record.info(&snapshot, row.last_event_us))
}

/// What `GET /sessions` lists for a session whose record cannot be read.
pub fn unreadable(row: &SessionRow, error: String) -> UnreadableSession {
    UnreadableSession {
        session_id: row.session_id.clone(),
        error,
        created_at: DateTime::<Utc>::from_timestamp_millis(row.created_ms).unwrap_or_default(),
        event_count: row.last_sequence,
    }
}
