//! Request and response bodies of the HTTP API.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::{
    AgentError, AgentId, AgentInfo, PermissionMode, PermissionReply, PermissionRequest,
    QuestionRequest, SessionEndReason, UniversalEvent,
};

/// Body of `GET /health`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HealthResponse {
    /// Always `ok` when the daemon answers.
    pub status: String,
    /// The daemon's version.
    pub version: String,
    /// Whether the session store can write.
    pub store: StoreHealth,
}

/// Which session store the daemon uses and whether it can write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StoreHealth {
    /// `sqlite` (the embedded default) or `postgres`.
    pub backend: StoreBackend,
    /// `ok`, or why writes fail right now.
    pub status: StoreStatus,
}

/// A session store backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum StoreBackend {
    /// SQLite in the data directory.
    Sqlite,
    /// A PostgreSQL database, possibly shared by several daemons.
    Postgres,
}

/// Whether the session store can write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum StoreStatus {
    /// Writes succeed.
    Ok,
    /// No space left: new sessions and messages are refused with 507 until space returns.
    Full,
    /// The store cannot be written (database unreachable, I/O error): new sessions and
    /// messages are refused with 503 until it recovers.
    Unavailable,
}

/// Body of `GET /agents`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentsResponse {
    /// Every known agent.
    pub agents: Vec<AgentInfo>,
}

/// Body of `POST /agents/{agent}/install` (optional: no body installs the default version
/// unless the agent is already there).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InstallRequest {
    /// The version: `pinned` (the one this daemon is tested with), `latest`, or a version
    /// such as `2.1.330`. Default: the daemon's `--install-version` (pinned unless told).
    // Constraints: `constraints::AGENT_VERSION`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Download again even if that version is already installed.
    #[serde(default)]
    pub reinstall: bool,
}

/// Where an agent's binary came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum BinarySource {
    /// Built into the daemon (`mock`).
    BuiltIn,
    /// `SANDBOX_DAEMON_<AGENT>_PATH`.
    Override,
    /// Found on `PATH`.
    Path,
    /// Installed by the daemon from the vendor's official release files.
    Release,
    /// Installed by the daemon from the vendor's files under a mirror
    /// (`SANDBOX_DAEMON_INSTALL_MIRROR`).
    Mirror,
    /// Installed by the daemon from an npm registry.
    Npm,
}

/// Body of a successful `POST /agents/{agent}/install` (and the `installed` frame of its
/// event stream).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InstallResponse {
    /// The agent.
    pub agent: AgentId,
    /// Whether the agent was already there (nothing was downloaded).
    pub already_installed: bool,
    /// The installed version, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The binary's path, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Where the binary came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<BinarySource>,
    /// Bytes downloaded (0 when nothing was).
    #[serde(default)]
    pub size: u64,
    /// How long the install took, in milliseconds.
    #[serde(default)]
    pub duration_ms: u64,
}

/// One step of an install, streamed as `progress` frames by `POST /agents/{agent}/install`
/// when asked for `text/event-stream`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(tag = "phase", rename_all = "camelCase")]
pub enum InstallProgress {
    /// Another install of this agent is running; this one waits for it (and then usually
    /// finds the agent installed).
    Waiting {},
    /// Finding out the version and where its files are.
    Resolving {
        /// The version asked for (`pinned`, `latest` or a version).
        requested: String,
    },
    /// Downloading one file.
    #[serde(rename_all = "camelCase")]
    Downloading {
        /// The agent version.
        version: String,
        /// Its URL.
        url: String,
        /// Bytes received so far.
        bytes: u64,
        /// Its size, when announced.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        total: Option<u64>,
    },
    /// Checking checksums, unpacking, and running the executable's `--version`.
    Verifying {
        /// The agent version.
        version: String,
    },
}

/// Body of `POST /sessions/{sessionId}`.
// The constraints of its text fields, and between `permissionMode` and
// `dangerouslySkipPermissions`, are in `constraints.rs`: the schemas state them, the daemon
// checks them (422).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateSessionRequest {
    /// The agent: `claude`, `codex`, `opencode`, `amp`, `pi` or `mock`.
    pub agent: String,
    /// Agent mode (see `GET /agents/{agent}/modes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_mode: Option<String>,
    /// Permission mode; `bypass` needs `dangerouslySkipPermissions`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<PermissionMode>,
    /// Model id (see `GET /agents/{agent}/models`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Model variant, e.g. reasoning effort `low` / `medium` / `high` / `xhigh`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// Provider credential for this session, overriding the daemon's environment (empty:
    /// the daemon's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// Check the credential against the provider before answering (a rejected one is a 422
    /// with a `tokenError`). `true` for an agent whose capabilities say
    /// `validateToken: false` is refused with a 422 naming the field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validate_token: Option<bool>,
    /// Let the agent act without asking (sandboxed environments only); means
    /// `permissionMode: bypass`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dangerously_skip_permissions: Option<bool>,
    /// Agent version to use: `pinned`, `latest` or a version, installed first when missing
    /// (ignored by `mock`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_version: Option<String>,
    /// Working directory (absolute, existing). Defaults to the daemon's working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Instructions for the agent, appended to its own system prompt or replacing it
    /// (`systemPromptMode`; see the agent's `policy.systemPromptModes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// How `systemPrompt` combines with the agent's own (default `append`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt_mode: Option<crate::SystemPromptMode>,
    /// The tools the agent may use, in universal names (see the agent's `policy.tools`
    /// for how each is taken away).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<crate::ToolPolicy>,
    /// The most model responses one turn may take; the turn then ends with `stopReason:
    /// maxTurns` (see the agent's `policy.maxTurns`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<u32>,
    /// MCP servers for this session only, by name (the agent's own configuration is not
    /// read). Header and env values reach only the agent: not argv, the log or the store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_servers: Option<std::collections::BTreeMap<String, crate::McpServer>>,
    /// Extra environment variables for the agent's process (the variables the daemon
    /// sets itself, credentials and `LD_*` cannot be given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<std::collections::BTreeMap<String, String>>,
    /// The host application's tools, which the daemon serves to the agent over MCP (a
    /// per-session server and token): answered by the client (`toolCallRequested`) or by
    /// an HTTP endpoint the daemon calls, signed. Needs an agent whose `policy.hostTools`
    /// is true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_tools: Option<Vec<crate::HostTool>>,
    /// A webhook of this session only: its events of the listed types are `POST`ed,
    /// signed, to `url` (see `POST /webhooks`); deleted with the session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook: Option<crate::SessionWebhook>,
}

impl CreateSessionRequest {
    /// The session policy this request asks for.
    pub fn policy(&self) -> crate::SessionPolicy {
        crate::SessionPolicy {
            system_prompt: self.system_prompt.clone(),
            system_prompt_mode: self.system_prompt_mode.unwrap_or_default(),
            tools: self.tools.clone().unwrap_or_default(),
            max_turns: self.max_turns,
            mcp_servers: self.mcp_servers.clone().unwrap_or_default(),
            env: self.env.clone().unwrap_or_default(),
            host_tools: self.host_tools.clone().unwrap_or_default(),
        }
    }
}

/// Body answering `POST /sessions/{sessionId}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateSessionResponse {
    /// Always true: the agent started and the session is ready for messages. An agent that
    /// cannot start is a problem response instead (its `agentError` says why; nothing is
    /// kept and the id may be used again).
    pub healthy: bool,
    /// The agent's own session id, when known at start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native_session_id: Option<String>,
}

/// Where a session stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum SessionStatus {
    /// Ready for a message.
    Idle,
    /// A turn is running.
    Running,
    /// Over; its events stay readable.
    Ended,
}

/// One session as seen by `GET /sessions` and `GET /sessions/{id}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    /// The session id.
    pub session_id: String,
    /// The agent.
    pub agent: AgentId,
    /// Idle, running or ended.
    pub status: SessionStatus,
    /// Agent mode, when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_mode: Option<String>,
    /// Permission mode.
    pub permission_mode: PermissionMode,
    /// Model, when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Variant, when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// The agent's own session id, once known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native_session_id: Option<String>,
    /// Working directory.
    pub cwd: String,
    /// When the session was created.
    pub created_at: DateTime<Utc>,
    /// When the session last changed: the `time` of the last event in its log (its
    /// `createdAt` while it has none).
    pub updated_at: DateTime<Utc>,
    /// Number of events in the log (= the last sequence).
    pub event_count: u64,
    /// The running turn, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_turn_id: Option<String>,
    /// Permission requests waiting for a reply.
    pub pending_permissions: Vec<PermissionRequest>,
    /// Question requests waiting for a reply.
    pub pending_questions: Vec<QuestionRequest>,
    /// Host tool calls waiting for the client's result or rejection.
    #[serde(default)]
    pub pending_tool_calls: Vec<crate::ToolCallRequest>,
    /// Why the session ended, once it has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_reason: Option<SessionEndReason>,
}

/// Body of `GET /sessions`: one page of sessions, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionListResponse {
    /// The sessions of this page, oldest first.
    pub sessions: Vec<SessionInfo>,
    /// Sessions of this page whose stored record this build cannot read (corrupt, or
    /// written by a newer build). Their events stay readable; their ids stay taken.
    /// Only listed when no `status` filter is given.
    #[serde(default)]
    pub unreadable: Vec<UnreadableSession>,
    /// Pass as `cursor` to get the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// A stored session whose record this build cannot read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnreadableSession {
    /// The session id.
    pub session_id: String,
    /// Why the record cannot be read.
    pub error: String,
    /// When the session was created.
    pub created_at: DateTime<Utc>,
    /// Number of events in its log.
    pub event_count: u64,
}

/// Body of `POST /sessions/{id}/messages`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SendMessageRequest {
    /// The user's message as text (give this or `content`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The user's message as parts: text and images (give this or `message`). Images
    /// need an agent whose `policy.imageTypes` lists their type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Vec<MessagePart>>,
}

impl SendMessageRequest {
    /// A text message.
    pub fn text(message: impl Into<String>) -> Self {
        Self {
            message: Some(message.into()),
            content: None,
        }
    }
}

/// One part of a user message, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum MessagePart {
    /// Text.
    #[serde(rename_all = "camelCase")]
    Text {
        /// The text.
        text: String,
    },
    /// An image: its bytes inline (`data`, base64) or a file in the session's working
    /// directory (`path`, relative to it or absolute inside it).
    #[serde(rename_all = "camelCase")]
    Image {
        /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
        media_type: String,
        /// The image, base64-encoded (at most 5 MiB decoded).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        data: Option<String>,
        /// A file inside the working directory holding the image.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path: Option<String>,
    },
}

/// Body answering `POST /sessions/{id}/messages` (202).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageResponse {
    /// The turn the message started.
    pub turn_id: String,
}

/// Body answering `POST /sessions/{id}/cancel` (202).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CancelResponse {
    /// The turn being cancelled; it ends with `turnEnded` stopReason `cancelled`.
    pub turn_id: String,
}

/// Body of `GET /sessions/{id}/events`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventsResponse {
    /// Events with `sequence > offset`, oldest first.
    pub events: Vec<UniversalEvent>,
    /// True when more events exist after the last one returned.
    pub has_more: bool,
}

/// Body of `POST /sessions/{id}/permissions/{permissionId}/reply`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PermissionReplyRequest {
    /// `once`, `always` or `reject`.
    pub reply: PermissionReply,
}

/// Body of `POST /sessions/{id}/questions/{questionId}/reply`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QuestionReplyRequest {
    /// One array of selected option labels per question, in the questions' order.
    pub answers: Vec<Vec<String>>,
}

/// Body of `POST /sessions/{id}/questions/{questionId}/reject` (empty object).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QuestionRejectRequest {}

/// An RFC 7807 problem details body (`application/problem+json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProblemDetails {
    /// A URI naming the error kind; stable per kind.
    #[serde(rename = "type")]
    pub type_uri: String,
    /// Short summary of the kind.
    pub title: String,
    /// HTTP status code.
    pub status: u16,
    /// What happened this time.
    pub detail: String,
    /// The request path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// The agent's own error, when the problem is that an agent could not do what was
    /// asked (missing, unsupported, credential rejected, failed to start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_error: Option<AgentError>,
}
