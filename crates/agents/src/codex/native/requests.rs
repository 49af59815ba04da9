//! Params of the requests the app-server makes of its client (approvals, questions).

use serde::Deserialize;
use serde_json::Value;

/// `item/commandExecution/requestApproval` params.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandApproval {
    /// The commandExecution item.
    pub item_id: String,
    /// The command line.
    #[serde(default)]
    pub command: Option<String>,
    /// Why Codex asks (e.g. network access).
    #[serde(default)]
    pub reason: Option<String>,
}

/// `item/fileChange/requestApproval` params.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileChangeApproval {
    /// The fileChange item.
    pub item_id: String,
    /// Why Codex asks.
    #[serde(default)]
    pub reason: Option<String>,
    /// A root the agent wants write access to for the rest of the session.
    #[serde(default)]
    pub grant_root: Option<String>,
}

/// `item/permissions/requestApproval` params.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionsApproval {
    /// The item asking.
    pub item_id: String,
    /// Why.
    #[serde(default)]
    pub reason: Option<String>,
    /// The requested profile (`fileSystem{read?, write?, entries?}`, `network{enabled}`);
    /// granting echoes it back.
    #[serde(default)]
    pub permissions: Value,
}

/// `item/tool/requestUserInput` params.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserInputRequest {
    /// The tool call's id.
    pub item_id: String,
    /// The questions.
    pub questions: Vec<UserInputQuestion>,
}

/// One question of `request_user_input`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserInputQuestion {
    /// Key of the answer.
    pub id: String,
    /// Short header.
    #[serde(default)]
    pub header: String,
    /// The question.
    pub question: String,
    /// Whether a free-form answer is accepted.
    #[serde(default)]
    pub is_other: bool,
    /// The options.
    #[serde(default)]
    pub options: Option<Vec<UserInputOption>>,
}

/// One option of a question.
#[derive(Debug, Clone, Deserialize)]
pub struct UserInputOption {
    /// Label (answers quote it).
    pub label: String,
    /// Explanation.
    #[serde(default)]
    pub description: String,
}

/// `mcpServer/elicitation/request` params.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpElicitation {
    /// The MCP server asking (or whose tool Codex asks about).
    pub server_name: String,
    /// What to show the user.
    #[serde(default)]
    pub message: String,
    /// Codex's own metadata: for a tool call's approval `codex_approval_kind:
    /// "mcp_tool_call"`, `tool_name`, `tool_params`, `persist` (`["session", "always"]`).
    #[serde(default, rename = "_meta")]
    pub meta: Option<McpApprovalMeta>,
}

/// The `_meta` of an MCP tool call's approval.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct McpApprovalMeta {
    /// `mcp_tool_call` for a tool call's approval.
    #[serde(default)]
    pub codex_approval_kind: Option<String>,
    /// The tool's name on its server.
    #[serde(default)]
    pub tool_name: Option<String>,
    /// The call's arguments.
    #[serde(default)]
    pub tool_params: Option<Value>,
    /// How an approval may be remembered (`session`, `always`).
    #[serde(default)]
    pub persist: Vec<String>,
}

impl McpElicitation {
    /// The tool whose call Codex asks to approve, when this is such an approval.
    pub fn tool_approval(&self) -> Option<&str> {
        let meta = self.meta.as_ref()?;
        (meta.codex_approval_kind.as_deref() == Some("mcp_tool_call"))
            .then_some(meta.tool_name.as_deref())
            .flatten()
    }
}
