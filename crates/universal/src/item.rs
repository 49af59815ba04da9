//! Items: the units of content inside a turn (messages, reasoning, tool calls, ...).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

/// What an item is. Clients dispatch rendering on this.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ItemKind {
    /// A user or assistant message.
    Message,
    /// Model reasoning / thinking.
    Reasoning,
    /// A tool call made by the model.
    ToolCall,
    /// The result of a tool call.
    ToolResult,
    /// A shell command the agent ran (command, output, exit code).
    CommandExecution,
    /// Files the agent created, edited or deleted.
    FileChange,
    /// A plan or todo list.
    Plan,
    /// A status notice from the agent (compaction, retries, ...).
    Status,
    /// Native output that could not be understood; carries the raw JSON.
    Unparsed,
}

/// Who authored an item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ItemRole {
    /// The human (or client) driving the session.
    User,
    /// The agent / model.
    Assistant,
    /// System-level notices.
    System,
    /// A tool's own output.
    Tool,
}

/// Lifecycle status of an item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ItemStatus {
    /// Started, more content may follow.
    InProgress,
    /// Finished successfully.
    Completed,
    /// Finished with a failure (tool error, denied permission, ...) or cut short (a
    /// message interrupted by a cancel or a crash keeps the text it had); the same for
    /// every agent.
    Failed,
}

/// One item of a turn. `itemStarted` carries the item as first known, `itemDelta`s extend
/// its text, and `itemCompleted` carries the authoritative final item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Item {
    /// Daemon-assigned id, unique within the session.
    pub item_id: String,
    /// The agent's own id for this item, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native_item_id: Option<String>,
    /// The item this one belongs to (e.g. the tool call of a tool result).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    /// What the item is.
    pub kind: ItemKind,
    /// Who authored it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<ItemRole>,
    /// Lifecycle status.
    pub status: ItemStatus,
    /// Typed content parts.
    #[serde(default)]
    pub content: Vec<ContentPart>,
}

impl Item {
    /// A new item with no content.
    pub fn new(item_id: impl Into<String>, kind: ItemKind, status: ItemStatus) -> Self {
        Self {
            item_id: item_id.into(),
            native_item_id: None,
            parent_id: None,
            kind,
            role: None,
            status,
            content: Vec::new(),
        }
    }

    /// Sets the role.
    pub fn with_role(mut self, role: ItemRole) -> Self {
        self.role = Some(role);
        self
    }

    /// Sets the native id.
    pub fn with_native_id(mut self, id: impl Into<String>) -> Self {
        self.native_item_id = Some(id.into());
        self
    }

    /// Sets the parent item id.
    pub fn with_parent(mut self, parent: impl Into<String>) -> Self {
        self.parent_id = Some(parent.into());
        self
    }

    /// Appends a content part.
    pub fn with_content(mut self, part: ContentPart) -> Self {
        self.content.push(part);
        self
    }

    /// The concatenated text of all `text` and `reasoning` parts.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|p| match p {
                ContentPart::Text { text } | ContentPart::Reasoning { text } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }
}

/// How a file was changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum FileChangeKind {
    /// A new file.
    Add,
    /// An existing file was modified.
    Update,
    /// A file was removed.
    Delete,
}

/// Status of one plan entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum PlanEntryStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
}

/// One step of a plan / todo list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlanEntry {
    /// What the step is.
    pub content: String,
    /// Where it stands.
    pub status: PlanEntryStatus,
}

/// An MCP server's tool, named as the session's `mcpServers` and the server name them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpToolRef {
    /// The server's name in `mcpServers`.
    pub server: String,
    /// The tool's name on that server.
    pub tool: String,
}

/// A typed piece of item content, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ContentPart {
    /// Plain text (message text).
    #[serde(rename_all = "camelCase")]
    Text {
        /// The text.
        text: String,
    },
    /// Reasoning / thinking text.
    #[serde(rename_all = "camelCase")]
    Reasoning {
        /// The reasoning text (may be a summary).
        text: String,
    },
    /// A tool invocation.
    #[serde(rename_all = "camelCase")]
    ToolCall {
        /// The agent's id of the call.
        call_id: String,
        /// Tool name as the agent knows it.
        name: String,
        /// Tool arguments as JSON.
        arguments: Value,
        /// The MCP server and tool, when the tool is one of a session MCP server's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mcp: Option<McpToolRef>,
    },
    /// A tool's output.
    #[serde(rename_all = "camelCase")]
    ToolResult {
        /// The id of the call this answers.
        call_id: String,
        /// Output text.
        output: String,
        /// Whether the tool reported an error (including a denied permission).
        is_error: bool,
    },
    /// An image the user sent: inline (`data`, base64) or a file of the workspace
    /// (`path`, as sent; the bytes are not copied into the log).
    #[serde(rename_all = "camelCase")]
    Image {
        /// Its media type.
        media_type: String,
        /// The image, base64-encoded, when sent inline.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        data: Option<String>,
        /// Its file, when sent by path.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path: Option<String>,
    },
    /// A shell command execution.
    #[serde(rename_all = "camelCase")]
    CommandExecution {
        /// The command line.
        command: String,
        /// Working directory, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cwd: Option<String>,
        /// Combined output, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output: Option<String>,
        /// Exit code, when the command finished.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
    },
    /// A change to one file.
    #[serde(rename_all = "camelCase")]
    FileChange {
        /// Path of the file.
        path: String,
        /// Kind of change.
        change_kind: FileChangeKind,
        /// Unified diff, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        diff: Option<String>,
    },
    /// A plan or todo list.
    #[serde(rename_all = "camelCase")]
    Plan {
        /// The plan's steps.
        entries: Vec<PlanEntry>,
        /// Free-form plan text, when the agent gives one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
    },
    /// A status notice.
    #[serde(rename_all = "camelCase")]
    Status {
        /// Short label (e.g. `compacting`).
        label: String,
        /// Longer detail.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
    },
    /// Native output the converter could not understand.
    #[serde(rename_all = "camelCase")]
    Unparsed {
        /// The raw native JSON (or a JSON string holding the raw line).
        raw: Value,
        /// Why it could not be parsed.
        error: String,
    },
}
