//! The event envelope and every event payload.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::{AgentError, AgentId, Item, PermissionMode, PermissionRequest, PermissionResolved};
use crate::{QuestionRequest, QuestionResolved};

/// Who produced an event: the agent (converted from its native stream) or the daemon itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum EventSource {
    /// Converted from the agent's native output.
    Agent,
    /// Produced by the daemon (lifecycle, HITL resolution, echo of user input).
    Daemon,
}

/// One event of a session's log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UniversalEvent {
    /// Position in the session's log: starts at 1, contiguous, never reused.
    pub sequence: u64,
    /// When the daemon recorded the event.
    pub time: DateTime<Utc>,
    /// The daemon session id.
    pub session_id: String,
    /// The agent's own session / thread id, once known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native_session_id: Option<String>,
    /// Who produced the event.
    pub source: EventSource,
    /// True when the event has no native counterpart and was synthesised to keep the
    /// universal lifecycle complete.
    pub synthetic: bool,
    /// The event type (`type`) and its payload (`data`).
    #[serde(flatten)]
    pub payload: EventPayload,
    /// The native JSON this event was converted from (only with `includeRaw=true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<Value>,
}

/// Event type names, as they appear in `type` and in SSE `event:` lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum EventType {
    /// See [`EventPayload::SessionStarted`].
    SessionStarted,
    /// See [`EventPayload::SessionEnded`].
    SessionEnded,
    /// See [`EventPayload::TurnStarted`].
    TurnStarted,
    /// See [`EventPayload::TurnEnded`].
    TurnEnded,
    /// See [`EventPayload::ItemStarted`].
    ItemStarted,
    /// See [`EventPayload::ItemDelta`].
    ItemDelta,
    /// See [`EventPayload::ItemCompleted`].
    ItemCompleted,
    /// See [`EventPayload::Error`].
    Error,
    /// See [`EventPayload::PermissionAsked`].
    PermissionAsked,
    /// See [`EventPayload::PermissionResolved`].
    PermissionResolved,
    /// See [`EventPayload::QuestionAsked`].
    QuestionAsked,
    /// See [`EventPayload::QuestionResolved`].
    QuestionResolved,
    /// See [`EventPayload::ToolCallRequested`].
    ToolCallRequested,
    /// See [`EventPayload::ToolCallResolved`].
    ToolCallResolved,
    /// See [`EventPayload::SessionHandedOver`].
    SessionHandedOver,
    /// See [`EventPayload::Unknown`].
    Unknown,
}

impl EventType {
    /// The camelCase wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::SessionStarted => "sessionStarted",
            Self::SessionEnded => "sessionEnded",
            Self::TurnStarted => "turnStarted",
            Self::TurnEnded => "turnEnded",
            Self::ItemStarted => "itemStarted",
            Self::ItemDelta => "itemDelta",
            Self::ItemCompleted => "itemCompleted",
            Self::Error => "error",
            Self::PermissionAsked => "permissionAsked",
            Self::PermissionResolved => "permissionResolved",
            Self::QuestionAsked => "questionAsked",
            Self::QuestionResolved => "questionResolved",
            Self::ToolCallRequested => "toolCallRequested",
            Self::ToolCallResolved => "toolCallResolved",
            Self::SessionHandedOver => "sessionHandedOver",
            Self::Unknown => "unknown",
        }
    }

    /// Every type, in schema order.
    pub const ALL: [EventType; 16] = [
        Self::SessionStarted,
        Self::SessionEnded,
        Self::TurnStarted,
        Self::TurnEnded,
        Self::ItemStarted,
        Self::ItemDelta,
        Self::ItemCompleted,
        Self::Error,
        Self::PermissionAsked,
        Self::PermissionResolved,
        Self::QuestionAsked,
        Self::QuestionResolved,
        Self::ToolCallRequested,
        Self::ToolCallResolved,
        Self::SessionHandedOver,
        Self::Unknown,
    ];

    /// The type with this wire name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == name)
    }
}

/// The typed payload of an event, tagged by `type` with the body in `data`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(tag = "type", content = "data", rename_all = "camelCase")]
pub enum EventPayload {
    /// The session is ready.
    SessionStarted(SessionStarted),
    /// The session is over; no event follows.
    SessionEnded(SessionEnded),
    /// A turn began (a message was accepted).
    TurnStarted(TurnStarted),
    /// A turn finished.
    TurnEnded(TurnEnded),
    /// An item appeared.
    ItemStarted(ItemEvent),
    /// More text for an item in progress.
    ItemDelta(ItemDelta),
    /// An item is final.
    ItemCompleted(ItemEvent),
    /// Something went wrong (agent crash, provider error, protocol error, ...).
    Error(AgentError),
    /// The agent asks permission to do something.
    PermissionAsked(PermissionRequest),
    /// A permission request was answered (by the client, automatically, or cancelled).
    PermissionResolved(PermissionResolved),
    /// The agent asks the user one or more questions.
    QuestionAsked(QuestionRequest),
    /// A question request was answered, rejected or cancelled.
    QuestionResolved(QuestionResolved),
    /// The agent called a host tool the client answers.
    ToolCallRequested(crate::ToolCallRequest),
    /// A host tool call the client answers was answered, rejected or cancelled.
    ToolCallResolved(crate::ToolCallResolved),
    /// The session goes on with another agent (`POST /sessions/{id}/handover`).
    SessionHandedOver(crate::SessionHandedOver),
    /// A stored event this build cannot read: corrupt, or written by a newer build. It
    /// keeps its place (sequence) in the log and carries what was stored, unchanged.
    Unknown(UnknownEvent),
}

impl EventPayload {
    /// The event's type name.
    pub fn event_type(&self) -> EventType {
        match self {
            Self::SessionStarted(_) => EventType::SessionStarted,
            Self::SessionEnded(_) => EventType::SessionEnded,
            Self::TurnStarted(_) => EventType::TurnStarted,
            Self::TurnEnded(_) => EventType::TurnEnded,
            Self::ItemStarted(_) => EventType::ItemStarted,
            Self::ItemDelta(_) => EventType::ItemDelta,
            Self::ItemCompleted(_) => EventType::ItemCompleted,
            Self::Error(_) => EventType::Error,
            Self::PermissionAsked(_) => EventType::PermissionAsked,
            Self::PermissionResolved(_) => EventType::PermissionResolved,
            Self::QuestionAsked(_) => EventType::QuestionAsked,
            Self::QuestionResolved(_) => EventType::QuestionResolved,
            Self::ToolCallRequested(_) => EventType::ToolCallRequested,
            Self::ToolCallResolved(_) => EventType::ToolCallResolved,
            Self::SessionHandedOver(_) => EventType::SessionHandedOver,
            Self::Unknown(_) => EventType::Unknown,
        }
    }
}

/// Payload of `sessionStarted`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionStarted {
    /// The agent driving the session.
    pub agent: AgentId,
    /// The model, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The agent mode (e.g. `build`, `plan`), when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_mode: Option<String>,
    /// The permission mode in force.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<PermissionMode>,
    /// The agent's working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The agent's version, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_version: Option<String>,
}

/// Why a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum SessionEndReason {
    /// The agent finished on its own.
    Completed,
    /// The agent failed (crash, unrecoverable error).
    Error,
    /// The client (or the daemon shutting down) ended it.
    Terminated,
}

/// Payload of `sessionEnded`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionEnded {
    /// Why the session ended.
    pub reason: SessionEndReason,
    /// Exit code of the agent process, when it exited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The last lines the agent wrote to stderr, when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr_tail: Option<String>,
}

/// Payload of `turnStarted`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnStarted {
    /// Daemon-assigned turn id, unique within the session.
    pub turn_id: String,
}

/// Why a turn stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum StopReason {
    /// The agent finished its answer.
    Completed,
    /// The client cancelled the turn.
    Cancelled,
    /// The turn failed.
    Error,
    /// The model hit its output token limit.
    MaxTokens,
    /// The agent hit its turn / step limit.
    MaxTurns,
    /// The agent hit its spending limit.
    MaxBudget,
    /// A host tool that ends the turn (`endsTurn`) was called; the next message continues.
    ToolStop,
}

/// Token usage of a turn.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Input (prompt) tokens, excluding cached ones where the agent separates them.
    pub input_tokens: u64,
    /// Output (completion) tokens.
    pub output_tokens: u64,
    /// Input tokens read from the prompt cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input_tokens: Option<u64>,
    /// Input tokens written to the prompt cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_tokens: Option<u64>,
    /// Reasoning tokens, when reported separately.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
    /// Cost in US dollars, when the agent reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_cost_usd: Option<f64>,
}

/// Payload of `turnEnded`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnEnded {
    /// The turn that ended.
    pub turn_id: String,
    /// Why it stopped.
    pub stop_reason: StopReason,
    /// Token usage, when the agent reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// How many files the turn added, modified and deleted in the workspace (the files
    /// and diffs: `GET /sessions/{id}/turns/{turnId}/changes`); absent when the daemon
    /// does not track changes (`--no-turn-changes`) or could not look at the workspace as
    /// the turn ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changes: Option<crate::ChangeCounts>,
}

/// Payload of `itemStarted` and `itemCompleted`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ItemEvent {
    /// The item as known at this point.
    pub item: Item,
}

/// Payload of `itemDelta`: text appended to an item in progress (message text, reasoning
/// text or command output, depending on the item's kind).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ItemDelta {
    /// The item being extended.
    pub item_id: String,
    /// The appended text.
    pub delta: String,
}

/// Why a stored event could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum UnknownReason {
    /// It was written by a newer build (a schema version this build does not know).
    NewerVersion,
    /// It does not parse as an event of its schema version (corrupt, or an event type,
    /// item kind or content part this build does not know).
    Unreadable,
}

/// Payload of `unknown`: a stored record served as it is, never dropped or rewritten.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnknownEvent {
    /// Why this build could not read it.
    pub reason: UnknownReason,
    /// The schema version the record was written with.
    pub schema_version: u32,
    /// The event type the record was stored with.
    pub stored_type: String,
    /// The stored event: its JSON when it is JSON, else the stored text as a string.
    pub stored: Value,
    /// What went wrong reading it, when it did not parse.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}
