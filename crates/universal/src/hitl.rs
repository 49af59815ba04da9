//! Human in the loop: permission requests, questions, and their resolution.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

/// What a permission request is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum PermissionKind {
    /// Running a shell command.
    Command,
    /// Creating, editing or deleting files.
    FileChange,
    /// Reading files outside the allowed area.
    FileRead,
    /// Network access.
    Network,
    /// Approving a plan and leaving plan mode.
    PlanApproval,
    /// A tool of a session MCP server (`tool` names it as the agent does).
    McpTool,
    /// A host tool with `needsApproval` (`tool` is its name); asked by the daemon itself.
    HostTool,
    /// Any other tool.
    Tool,
}

/// The agent asks permission to act. Answer with
/// `POST /sessions/{id}/permissions/{permissionId}/reply`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PermissionRequest {
    /// Id to reply to; unique within the session.
    pub permission_id: String,
    /// What is being asked.
    pub kind: PermissionKind,
    /// A one-line human description (e.g. ``Run `ls -la` ``).
    pub title: String,
    /// The item (usually a tool call) the request gates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item_id: Option<String>,
    /// The agent's tool name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The command line, for command requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Files concerned.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
    /// The plan to approve, for plan approvals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
    /// The tool's full input as the agent sent it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    /// What an `always` reply covers. Later requests with the same scope in this session are
    /// approved without asking. Absent when the agent offers no lasting approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub always_scope: Option<String>,
    /// The session MCP server and tool, for `mcpTool` requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<crate::McpToolRef>,
}

/// A client's answer to a permission request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum PermissionReply {
    /// Allow this one time.
    Once,
    /// Allow, and allow the same scope for the rest of the session.
    Always,
    /// Deny.
    Reject,
}

/// How a permission request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum PermissionOutcome {
    /// Allowed once.
    Once,
    /// Allowed for the session.
    Always,
    /// Denied.
    Reject,
    /// The turn or session ended before an answer.
    Cancelled,
}

impl From<PermissionReply> for PermissionOutcome {
    fn from(reply: PermissionReply) -> Self {
        match reply {
            PermissionReply::Once => Self::Once,
            PermissionReply::Always => Self::Always,
            PermissionReply::Reject => Self::Reject,
        }
    }
}

/// Payload of `permissionResolved`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PermissionResolved {
    /// The request that was resolved.
    pub permission_id: String,
    /// How it ended.
    pub outcome: PermissionOutcome,
    /// True when the daemon answered by itself — `always` because of an earlier `always`,
    /// `reject` because the session's `tools` refuse the tool; such requests never appear
    /// as `permissionAsked`, so the request is included.
    pub automatic: bool,
    /// The request, for automatic resolutions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<PermissionRequest>,
}

/// One option of a question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct QuestionOption {
    /// The label; answers quote it exactly.
    pub label: String,
    /// Longer explanation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// One question of a question request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Question {
    /// The question text.
    pub question: String,
    /// A short header / chip label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<String>,
    /// The options to choose from (may be empty for free-form questions).
    #[serde(default)]
    pub options: Vec<QuestionOption>,
    /// Whether several options may be selected.
    pub multi_select: bool,
    /// Whether a free-form answer (not one of the labels) is accepted.
    pub allow_custom: bool,
}

/// The agent asks the user one or more questions. Answer with
/// `POST /sessions/{id}/questions/{questionId}/reply` (`answers[i]` answers `questions[i]`)
/// or reject with `.../reject`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct QuestionRequest {
    /// Id to reply to; unique within the session.
    pub question_id: String,
    /// The questions, in order.
    pub questions: Vec<Question>,
    /// The item (usually a tool call) that asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item_id: Option<String>,
}

/// How a question request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum QuestionOutcome {
    /// The user answered.
    Answered,
    /// The user declined to answer.
    Rejected,
    /// The turn or session ended before an answer.
    Cancelled,
}

/// Payload of `questionResolved`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct QuestionResolved {
    /// The request that was resolved.
    pub question_id: String,
    /// How it ended.
    pub outcome: QuestionOutcome,
    /// The answers, one array of selected labels per question (only when answered).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answers: Option<Vec<Vec<String>>>,
}
