//! `ThreadItem`: the items of a Codex thread (messages, reasoning, commands, patches, ...).

use serde::Deserialize;
use serde_json::Value;

/// An item of a thread, tagged by `type`.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ThreadItem {
    /// The user's input (the daemon logs the user's message itself).
    #[serde(rename_all = "camelCase")]
    UserMessage {
        /// Item id.
        id: String,
    },
    /// Assistant text.
    #[serde(rename_all = "camelCase")]
    AgentMessage {
        /// Item id.
        id: String,
        /// The text (empty when started).
        #[serde(default)]
        text: String,
    },
    /// A plan written by the model.
    #[serde(rename_all = "camelCase")]
    Plan {
        /// Item id.
        id: String,
        /// The plan text.
        #[serde(default)]
        text: String,
    },
    /// Reasoning summary and/or raw reasoning.
    #[serde(rename_all = "camelCase")]
    Reasoning {
        /// Item id.
        id: String,
        /// Summary parts.
        #[serde(default)]
        summary: Vec<String>,
        /// Raw reasoning parts.
        #[serde(default)]
        content: Vec<String>,
    },
    /// A shell command.
    #[serde(rename_all = "camelCase")]
    CommandExecution {
        /// Item id (the model's call id).
        id: String,
        /// The command line.
        command: String,
        /// Working directory.
        #[serde(default)]
        cwd: Option<String>,
        /// Lifecycle.
        #[serde(default)]
        status: ToolStatus,
        /// stdout and stderr.
        #[serde(default)]
        aggregated_output: Option<String>,
        /// Exit code.
        #[serde(default)]
        exit_code: Option<i32>,
    },
    /// A patch.
    #[serde(rename_all = "camelCase")]
    FileChange {
        /// Item id (the model's call id).
        id: String,
        /// One entry per file.
        #[serde(default)]
        changes: Vec<FileUpdateChange>,
        /// Lifecycle.
        #[serde(default)]
        status: ToolStatus,
    },
    /// A call to an MCP server's tool.
    #[serde(rename_all = "camelCase")]
    McpToolCall {
        /// Item id.
        id: String,
        /// Server name.
        server: String,
        /// Tool name.
        tool: String,
        /// Arguments.
        #[serde(default)]
        arguments: Value,
        /// Lifecycle.
        #[serde(default)]
        status: ToolStatus,
        /// Result content blocks.
        #[serde(default)]
        result: Option<Value>,
        /// Failure.
        #[serde(default)]
        error: Option<Value>,
    },
    /// A call to a client-registered (dynamic) tool.
    #[serde(rename_all = "camelCase")]
    DynamicToolCall {
        /// Item id.
        id: String,
        /// Tool name.
        tool: String,
        /// Arguments.
        #[serde(default)]
        arguments: Value,
        /// Lifecycle.
        #[serde(default)]
        status: ToolStatus,
        /// Output blocks.
        #[serde(default)]
        content_items: Option<Value>,
        /// Whether it succeeded.
        #[serde(default)]
        success: Option<bool>,
    },
    /// A web search run by the model provider.
    #[serde(rename_all = "camelCase")]
    WebSearch {
        /// Item id.
        id: String,
        /// The query.
        #[serde(default)]
        query: String,
        /// What the search did.
        #[serde(default)]
        action: Option<Value>,
    },
    /// The model looked at an image file.
    #[serde(rename_all = "camelCase")]
    ImageView {
        /// Item id.
        id: String,
        /// The image's path.
        path: String,
    },
    /// The conversation was compacted.
    #[serde(rename_all = "camelCase")]
    ContextCompaction {
        /// Item id.
        id: String,
    },
    /// A review started.
    #[serde(rename_all = "camelCase")]
    EnteredReviewMode {
        /// Item id.
        id: String,
        /// What is reviewed.
        #[serde(default)]
        review: String,
    },
    /// A review ended.
    #[serde(rename_all = "camelCase")]
    ExitedReviewMode {
        /// Item id.
        id: String,
        /// The review.
        #[serde(default)]
        review: String,
    },
}

/// Lifecycle of tool-like items.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ToolStatus {
    /// Running (or waiting for approval).
    #[default]
    InProgress,
    /// Done.
    Completed,
    /// Failed.
    Failed,
    /// The user declined it.
    Declined,
    /// A status this version does not know.
    #[serde(other)]
    Unknown,
}

/// One file of a patch.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct FileUpdateChange {
    /// Absolute path.
    pub path: String,
    /// `{"type": "add" | "delete" | "update", "move_path"?}`.
    pub kind: PatchChangeKind,
    /// Unified diff (for `add`, the new content).
    #[serde(default)]
    pub diff: String,
}

/// How a file changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum PatchChangeKind {
    /// New file.
    Add,
    /// Removed file.
    Delete,
    /// Edited (possibly moved) file.
    Update,
}
