//! Wire types of `codex app-server` (pinned: 0.169.0): JSON-RPC 2.0 without the `jsonrpc`
//! member, one JSON object per line on stdio.
//!
//! Written from the schema the pinned binary prints with
//! `codex app-server generate-json-schema --out DIR`. Only the fields the daemon reads are
//! typed; unknown fields are ignored, unknown enum values land in an `Unknown` variant, so
//! a newer Codex degrades to `unparsed` items instead of failing.

mod items;
mod requests;

use serde::Deserialize;
use serde_json::Value;

pub use items::{FileUpdateChange, PatchChangeKind, ThreadItem, ToolStatus};
pub use requests::{
    CommandApproval, FileChangeApproval, McpApprovalMeta, McpElicitation, PermissionsApproval,
    UserInputOption, UserInputQuestion, UserInputRequest,
};

/// Method names the daemon sends or handles.
pub mod method {
    /// Client request: handshake.
    pub const INITIALIZE: &str = "initialize";
    /// Client notification: handshake done.
    pub const INITIALIZED: &str = "initialized";
    /// Client request: log in (API key).
    pub const LOGIN: &str = "account/login/start";
    /// Client request: new thread.
    pub const THREAD_START: &str = "thread/start";
    /// Client request: load a stored thread.
    pub const THREAD_RESUME: &str = "thread/resume";
    /// Client request: start a turn with user input.
    pub const TURN_START: &str = "turn/start";
    /// Client request: interrupt the running turn.
    pub const TURN_INTERRUPT: &str = "turn/interrupt";
    /// Client request: list models.
    pub const MODEL_LIST: &str = "model/list";

    /// Server request: approve a shell command.
    pub const COMMAND_APPROVAL: &str = "item/commandExecution/requestApproval";
    /// Server request: approve a patch.
    pub const FILE_CHANGE_APPROVAL: &str = "item/fileChange/requestApproval";
    /// Server request: grant extra sandbox permissions.
    pub const PERMISSIONS_APPROVAL: &str = "item/permissions/requestApproval";
    /// Server request: the `request_user_input` tool.
    pub const USER_INPUT: &str = "item/tool/requestUserInput";
    /// Server request: an MCP elicitation, or the approval of an MCP tool call
    /// (`_meta.codex_approval_kind: "mcp_tool_call"`).
    pub const MCP_ELICITATION: &str = "mcpServer/elicitation/request";
}

/// One message from the app-server, classified.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// The answer to one of our requests.
    Response {
        /// Our request id.
        id: Value,
        /// `result`, or `error`.
        outcome: Result<Value, RpcError>,
    },
    /// A notification.
    Notification {
        /// Method name.
        method: String,
        /// Its params (`null` when absent).
        params: Value,
    },
    /// A request the server makes of us (approvals, questions).
    Request {
        /// The server's request id (echo it in the response).
        id: Value,
        /// Method name.
        method: String,
        /// Its params.
        params: Value,
    },
}

impl Incoming {
    /// Classifies one parsed line.
    pub fn classify(message: &Value) -> Result<Self, String> {
        let Some(object) = message.as_object() else {
            return Err("a JSON-RPC message must be an object".into());
        };
        let params = || object.get("params").cloned().unwrap_or(Value::Null);
        match (
            object.get("id"),
            object.get("method").and_then(Value::as_str),
        ) {
            (Some(id), Some(method)) => Ok(Self::Request {
                id: id.clone(),
                method: method.to_string(),
                params: params(),
            }),
            (None, Some(method)) => Ok(Self::Notification {
                method: method.to_string(),
                params: params(),
            }),
            (Some(id), None) => {
                let outcome = match (object.get("result"), object.get("error")) {
                    (_, Some(error)) => Err(RpcError::deserialize(error)
                        .map_err(|e| format!("malformed JSON-RPC error: {e}"))?),
                    (Some(result), None) => Ok(result.clone()),
                    (None, None) => Ok(Value::Null),
                };
                Ok(Self::Response {
                    id: id.clone(),
                    outcome,
                })
            }
            (None, None) => Err("neither a request, a notification nor a response".into()),
        }
    }
}

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct RpcError {
    /// Error code.
    pub code: i64,
    /// Message.
    pub message: String,
}

/// `initialize` result.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// E.g. `sandbox-daemon/0.169.0 (Debian 12.0.0; x86_64) ...`.
    #[serde(default)]
    pub user_agent: String,
}

impl InitializeResult {
    /// The Codex version, read from the user agent's first `/`-separated word.
    pub fn version(&self) -> Option<String> {
        let first = self.user_agent.split_whitespace().next()?;
        let version = first.split('/').nth(1)?;
        (!version.is_empty()).then(|| version.to_string())
    }
}

/// `thread/start` and `thread/resume` result.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadResult {
    /// The thread.
    pub thread: ThreadRef,
    /// The model in use.
    #[serde(default)]
    pub model: Option<String>,
}

/// A thread, by id.
#[derive(Debug, Clone, Deserialize)]
pub struct ThreadRef {
    /// Thread id (also the rollout's session id).
    pub id: String,
}

/// `turn/start` result and the `turn` of turn notifications.
#[derive(Debug, Clone, Deserialize)]
pub struct TurnResult {
    /// The turn.
    pub turn: Turn,
}

/// A turn.
#[derive(Debug, Clone, Deserialize)]
pub struct Turn {
    /// Codex turn id.
    pub id: String,
    /// Where it stands.
    #[serde(default)]
    pub status: TurnStatus,
    /// Why it failed.
    #[serde(default)]
    pub error: Option<TurnError>,
}

/// `Turn.status`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum TurnStatus {
    /// Finished normally.
    Completed,
    /// Stopped by `turn/interrupt`.
    Interrupted,
    /// Failed (see `error`).
    Failed,
    /// Still running.
    InProgress,
    /// A status this version does not know.
    #[default]
    #[serde(other)]
    Unknown,
}

/// An error of a turn or an `error` notification.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnError {
    /// What happened.
    pub message: String,
    /// A string (`unauthorized`, `internalServerError`, ...) or an object such as
    /// `{"httpConnectionFailed": {"httpStatusCode": 502}}`.
    #[serde(default)]
    pub codex_error_info: Option<Value>,
    /// More detail.
    #[serde(default)]
    pub additional_details: Option<String>,
}

/// `error` notification.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorNotification {
    /// The error.
    pub error: TurnError,
    /// Whether Codex retries by itself.
    #[serde(default)]
    pub will_retry: bool,
}

/// `item/started` and `item/completed` (the item stays raw until [`ThreadItem`] parses it).
#[derive(Debug, Clone, Deserialize)]
pub struct ItemNotification {
    /// The item.
    pub item: Value,
}

/// Every text delta notification (`item/agentMessage/delta`, reasoning deltas, command
/// output, plan deltas).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeltaNotification {
    /// The item being extended.
    pub item_id: String,
    /// Appended text.
    pub delta: String,
}

/// `item/reasoning/summaryPartAdded`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SummaryPartAdded {
    /// The reasoning item.
    pub item_id: String,
    /// Index of the new part.
    pub summary_index: i64,
}

/// `item/fileChange/patchUpdated`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PatchUpdated {
    /// The fileChange item.
    pub item_id: String,
    /// The changes so far.
    pub changes: Vec<FileUpdateChange>,
}

/// `thread/tokenUsage/updated`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsageNotification {
    /// The Codex turn the numbers were last updated in.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// Thread totals and the last request.
    pub token_usage: ThreadTokenUsage,
}

/// Token usage of a thread.
#[derive(Debug, Clone, Deserialize)]
pub struct ThreadTokenUsage {
    /// Since the thread started.
    pub total: TokenUsageBreakdown,
}

/// Token counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TokenUsageBreakdown {
    /// Input tokens, cached ones included.
    pub input_tokens: u64,
    /// Input tokens read from the cache.
    pub cached_input_tokens: u64,
    /// Input tokens written to the cache.
    pub cache_write_input_tokens: u64,
    /// Output tokens, reasoning included.
    pub output_tokens: u64,
    /// Reasoning output tokens.
    pub reasoning_output_tokens: u64,
}

impl TokenUsageBreakdown {
    /// `self - earlier`, saturating (totals only grow within one process).
    pub fn since(&self, earlier: &Self) -> Self {
        Self {
            input_tokens: self.input_tokens.saturating_sub(earlier.input_tokens),
            cached_input_tokens: self
                .cached_input_tokens
                .saturating_sub(earlier.cached_input_tokens),
            cache_write_input_tokens: self
                .cache_write_input_tokens
                .saturating_sub(earlier.cache_write_input_tokens),
            output_tokens: self.output_tokens.saturating_sub(earlier.output_tokens),
            reasoning_output_tokens: self
                .reasoning_output_tokens
                .saturating_sub(earlier.reasoning_output_tokens),
        }
    }
}

/// `turn/plan/updated`.
#[derive(Debug, Clone, Deserialize)]
pub struct PlanUpdated {
    /// Why the plan changed.
    #[serde(default)]
    pub explanation: Option<String>,
    /// The steps.
    pub plan: Vec<PlanStep>,
}

/// One plan step.
#[derive(Debug, Clone, Deserialize)]
pub struct PlanStep {
    /// What to do.
    pub step: String,
    /// `pending`, `inProgress` or `completed`.
    pub status: String,
}

/// `serverRequest/resolved`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerRequestResolved {
    /// The id of the server request Codex considers settled.
    pub request_id: Value,
}

/// `warning`.
#[derive(Debug, Clone, Deserialize)]
pub struct WarningNotification {
    /// The warning.
    pub message: String,
}

/// `model/rerouted`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelRerouted {
    /// The requested model.
    pub from_model: String,
    /// The model actually used.
    pub to_model: String,
}

/// `model/list` result.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelList {
    /// One page of models.
    pub data: Vec<Model>,
    /// Cursor of the next page.
    #[serde(default)]
    pub next_cursor: Option<String>,
}

/// A model of the catalog.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Model {
    /// Model id.
    pub id: String,
    /// Display name.
    #[serde(default)]
    pub display_name: String,
    /// Hidden from pickers.
    #[serde(default)]
    pub hidden: bool,
    /// Codex's default model.
    #[serde(default)]
    pub is_default: bool,
    /// Default effort.
    #[serde(default)]
    pub default_reasoning_effort: Option<String>,
    /// Supported efforts.
    #[serde(default)]
    pub supported_reasoning_efforts: Vec<EffortOption>,
}

/// One reasoning effort of a model.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EffortOption {
    /// `low`, `medium`, `high`, `xhigh`, ...
    pub reasoning_effort: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn classifies_the_three_message_shapes() {
        let request = json!({"id": 0, "method": "item/tool/requestUserInput", "params": {"a": 1}});
        assert!(matches!(
            Incoming::classify(&request).unwrap(),
            Incoming::Request { method, .. } if method == method::USER_INPUT
        ));
        let note = json!({"method": "turn/started"});
        assert_eq!(
            Incoming::classify(&note).unwrap(),
            Incoming::Notification {
                method: "turn/started".into(),
                params: Value::Null
            }
        );
        let error = json!({"id": 3, "error": {"code": -32600, "message": "Not initialized"}});
        let Incoming::Response { id, outcome } = Incoming::classify(&error).unwrap() else {
            panic!("not a response");
        };
        assert_eq!(id, json!(3));
        assert_eq!(outcome.unwrap_err().message, "Not initialized");
        assert!(Incoming::classify(&json!([1])).is_err());
        assert!(Incoming::classify(&json!({"x": 1})).is_err());
    }

    #[test]
    fn unknown_values_do_not_break_parsing() {
        let turn: Turn = serde_json::from_value(json!({"id": "t", "status": "paused"})).unwrap();
        assert_eq!(turn.status, TurnStatus::Unknown);
        let item: ThreadItem = serde_json::from_value(json!({
            "type": "commandExecution", "id": "c", "command": "ls", "status": "queued", "extra": 1
        }))
        .unwrap();
        assert!(matches!(
            item,
            ThreadItem::CommandExecution {
                status: ToolStatus::Unknown,
                ..
            }
        ));
        assert!(
            serde_json::from_value::<ThreadItem>(json!({"type": "hologram", "id": "h"})).is_err()
        );
    }

    #[test]
    fn reads_the_version_from_the_user_agent() {
        let init = InitializeResult {
            user_agent: "sandbox-daemon/0.169.0 (Debian 12.0.0; x86_64) dumb".into(),
        };
        assert_eq!(init.version().as_deref(), Some("0.169.0"));
    }
}
