//! Portable sessions: the bundle `GET /sessions/{id}/export` writes and
//! `POST /sessions/{id}/import` reads, the handover request, and the event a handover logs.
//!
//! Contract (stable: a bundle written today is read by later builds): a bundle carries
//! [`BUNDLE_FORMAT`]; a reader refuses a newer format. Its fields come in the order of
//! [`SessionBundle`], `events` last but for the two fields that check it, so a large log
//! streams.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::{AgentId, PermissionMode, SessionPolicy, UniversalEvent};

/// The bundle format this build writes and the newest it reads.
pub const BUNDLE_FORMAT: u32 = 1;

/// A session as one JSON document: its record, the agent's native state and the universal
/// event log. Holds no credential: neither the session's `token` nor the secret values of
/// its policy (MCP servers' `env` and `headers`, the session `env`) travel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionBundle {
    /// The bundle format ([`BUNDLE_FORMAT`]).
    pub format: u32,
    /// When the bundle was written.
    pub exported_at: DateTime<Utc>,
    /// How the session was created (as it stands after any handover).
    pub session: ExportedSession,
    /// What the agent keeps to resume the conversation, when it keeps anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native: Option<NativeBundle>,
    /// The universal event log, from sequence 1, contiguous.
    pub events: Vec<UniversalEvent>,
    /// How many events `events` holds.
    pub event_count: u64,
    /// Hex SHA-256 over the events as written in the bundle: each event's JSON text
    /// followed by a newline (`\n`), in order.
    pub events_sha256: String,
}

/// A session's creation record, as a bundle carries it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExportedSession {
    /// The session id on the daemon that exported it.
    pub session_id: String,
    /// The agent.
    pub agent: AgentId,
    /// Agent mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_mode: Option<String>,
    /// Permission mode.
    pub permission_mode: PermissionMode,
    /// Model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Model variant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// Whether the agent acts without asking.
    #[serde(default)]
    pub dangerously_skip_permissions: bool,
    /// The agent version the session asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_version: Option<String>,
    /// The working directory it ran in.
    pub cwd: String,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// Its policy (the `policy` fields of the create request it was made with: system
    /// prompt, tools, turn limit, MCP servers, env, host tools), with every value that may
    /// be secret emptied: MCP servers' `env` and `headers`, the session `env`.
    #[serde(default, skip_serializing_if = "SessionPolicy::is_empty")]
    #[schema(value_type = Object)]
    #[schemars(with = "serde_json::Map<String, serde_json::Value>")]
    pub policy: SessionPolicy,
}

/// What an agent keeps to resume a conversation: its own session id and the files that
/// hold the conversation, each by role (not by path: an importing daemon files them where
/// its agent looks, for the new working directory).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NativeBundle {
    /// The agent the state belongs to.
    pub agent: AgentId,
    /// The agent's own session (thread) id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native_session_id: Option<String>,
    /// The working directory the files were written for.
    pub cwd: String,
    /// The files.
    #[serde(default)]
    pub files: Vec<NativeFile>,
}

/// One file of an agent's native state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NativeFile {
    /// What the file is to its agent (e.g. `transcript.jsonl`, `rollout.jsonl`,
    /// `export.json`, `session.jsonl`).
    #[schema(min_length = 1, max_length = 128)]
    #[schemars(length(min = 1, max = 128))]
    pub name: String,
    /// How `content` is written.
    pub encoding: FileEncoding,
    /// The file's bytes, as `encoding` says.
    pub content: String,
    /// Hex SHA-256 of the file's bytes (decoded).
    #[schema(pattern = "^[0-9a-f]{64}$")]
    #[schemars(regex(pattern = "^[0-9a-f]{64}$"))]
    pub sha256: String,
}

/// How a [`NativeFile`]'s bytes are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum FileEncoding {
    /// As UTF-8 text.
    Utf8,
    /// Standard base64.
    Base64,
}

/// `POST /sessions/{id}/handover`: continue the conversation on another agent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HandoverRequest {
    /// The agent that continues the session.
    pub agent: String,
    /// Its model (default: the agent's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Its agent mode (default: the agent's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_mode: Option<String>,
}

/// The event a handover logs (`sessionHandedOver`): the agent that ran the session until
/// now, and the one that continues it from the next turn, with the earlier turns as its own
/// history. The event's `nativeSessionId` is the new agent's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionHandedOver {
    /// The agent before.
    pub from_agent: AgentId,
    /// The agent from now on.
    pub to_agent: AgentId,
    /// The new agent's model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The new agent's mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_mode: Option<String>,
    /// How many earlier turns the new agent's history holds.
    pub turns: u64,
}
