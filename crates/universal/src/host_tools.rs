//! Host tools: the host application's own tools, which the daemon serves to the session's
//! agent over MCP (a per-session Streamable HTTP server with its own bearer token), and
//! the events and requests of a call the host answers itself.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::MessagePart;

/// The name of the MCP server, in the agent's configuration, that carries the session's
/// host tools (and `ask_user`). Session `mcpServers` may not use it.
pub const HOST_MCP_SERVER: &str = "host";

/// The question tool the daemon offers agents that have none of their own.
pub const ASK_USER_TOOL: &str = "ask_user";

/// The header that signs the daemon's `POST` to an http host tool:
/// `t=<unix seconds>,v1=<lowercase hex HMAC-SHA256 of "<t>.<body>">`, keyed by the
/// operator's secret.
pub const SIGNATURE_HEADER: &str = "Sandbox-Daemon-Signature";

/// One tool of the host application, offered to the agent for this session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HostTool {
    /// The tool's name as the model sees it (unique in the session; `ask_user` is the
    /// daemon's).
    pub name: String,
    /// What the tool does, for the model.
    #[serde(default)]
    pub description: String,
    /// The JSON Schema of the tool's input: an object schema.
    #[serde(default = "object_schema")]
    #[schema(value_type = Object)]
    pub input_schema: Value,
    /// Who answers a call.
    pub handler: HostToolHandler,
    /// Ask the user (`permissionAsked`, kind `hostTool`) before each call; an `always`
    /// answer covers the rest of the session's calls of this tool.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub needs_approval: bool,
    /// End the turn (`stopReason: toolStop`) once the tool's result reached the agent, so
    /// the model does not go past it; the next message continues.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ends_turn: bool,
}

fn object_schema() -> Value {
    serde_json::json!({"type": "object"})
}

/// Who answers a host tool's calls, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase", deny_unknown_fields)]
pub enum HostToolHandler {
    /// The client: each call is a `toolCallRequested` event, answered with
    /// `POST /sessions/{id}/tool-calls/{callId}/result` or `.../reject`.
    Client,
    /// An HTTP endpoint the daemon calls: a signed `POST` of a [`HostToolCall`], answered
    /// with a [`ToolCallResultRequest`].
    #[serde(rename_all = "camelCase")]
    Http {
        /// `http://` or `https://` URL.
        url: String,
        /// Extra request headers (kept out of the store and the log, like MCP headers).
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        headers: BTreeMap<String, String>,
        /// How long one attempt may take, in milliseconds (default 30000).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
}

/// The body the daemon `POST`s to an http host tool. Signed with the operator's secret
/// in `Sandbox-Daemon-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`;
/// a retry sends the same `callId` (also in the `Idempotency-Key` header).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HostToolCall {
    /// The session.
    pub session_id: String,
    /// The call's id: the same on every attempt.
    pub call_id: String,
    /// The tool's name.
    pub tool: String,
    /// The input the model gave.
    #[schema(value_type = Object)]
    pub input: Value,
}

/// A host tool's output: text, or parts (text and images).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(untagged)]
pub enum ToolOutput {
    /// Text.
    Text(String),
    /// Text and images (images given inline as base64, or by a path in the workspace).
    Parts(Vec<MessagePart>),
}

/// Body of `POST /sessions/{id}/tool-calls/{callId}/result`, and what an http host tool
/// answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolCallResultRequest {
    /// What the model gets back.
    pub output: ToolOutput,
    /// The tool failed: the model sees the output as an error.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
}

/// Body of `POST /sessions/{id}/tool-calls/{callId}/reject`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolCallRejectRequest {
    /// Why, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The agent called a client host tool: answer with
/// `POST /sessions/{id}/tool-calls/{callId}/result` or `.../reject`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallRequest {
    /// Id to answer; unique within the session.
    pub call_id: String,
    /// The agent's tool-call item, when the daemon could tell which one it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item_id: Option<String>,
    /// The host tool's name.
    pub tool: String,
    /// The input the model gave.
    #[schema(value_type = Object)]
    pub input: Value,
}

/// How a host tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ToolCallOutcome {
    /// The client gave a result.
    Answered,
    /// The client rejected the call.
    Rejected,
    /// The turn ended (a cancel, a crash, the session's end) before an answer.
    Cancelled,
}

/// A host tool call was answered, rejected or cancelled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallResolved {
    /// The call.
    pub call_id: String,
    /// How it ended.
    pub outcome: ToolCallOutcome,
}
