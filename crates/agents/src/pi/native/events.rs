//! The payloads of the stdout lines the converter reads.

use serde::Deserialize;
use serde_json::Value;

use super::messages::{AgentMessage, AssistantEvent};

/// `response`: a command's answer. Events carry no `id`; responses carry the command's.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Response {
    /// The command's `id`, when it had one.
    pub id: Option<String>,
    /// The command (`prompt`, `abort`, ...; `parse` for a line Pi could not read).
    pub command: String,
    /// Whether it succeeded.
    pub success: bool,
    /// Its result.
    pub data: Value,
    /// Why it failed.
    pub error: Option<String>,
}

/// `agent_end`: the run is over; every message it added.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct AgentEnd {
    /// The run's messages, the prompt's user message first.
    pub messages: Vec<AgentMessage>,
}

/// `message_start` / `message_end`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct MessageEvent {
    /// The message (whole at `message_end`).
    pub message: AgentMessage,
}

/// `message_update`: a streaming step of an assistant message.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageUpdate {
    /// The step.
    pub assistant_message_event: AssistantEvent,
}

/// A tool's result (`AgentToolResult`): content blocks for the model, `details` for UIs.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ToolResult {
    /// Text (and image) blocks.
    pub content: Value,
    /// Tool-specific: `edit` has `{diff, firstChangedLine}`, `bash` `{truncation,
    /// fullOutputPath}` when its output was cut.
    pub details: Value,
}

/// `tool_execution_start`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ToolExecutionStart {
    /// The call's id (the `toolCall` block's `id`).
    pub tool_call_id: String,
    /// The tool.
    pub tool_name: String,
    /// Its arguments as the model sent them.
    pub args: Value,
}

/// `tool_execution_update`: progress; `partialResult` is the whole result so far.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ToolExecutionUpdate {
    /// The call's id.
    pub tool_call_id: String,
    /// The tool.
    pub tool_name: String,
    /// The result so far (`bash`: its output so far).
    pub partial_result: ToolResult,
}

/// `tool_execution_end`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ToolExecutionEnd {
    /// The call's id.
    pub tool_call_id: String,
    /// The tool.
    pub tool_name: String,
    /// The result; on an error, one text block with the error.
    pub result: ToolResult,
    /// Whether the tool failed (or was blocked, or is unknown).
    pub is_error: bool,
}

/// `compaction_end`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct CompactionEnd {
    /// `manual`, `threshold` or `overflow`.
    pub reason: String,
    /// `{summary, firstKeptEntryId, tokensBefore, details}`; absent when it did not run.
    pub result: Option<Value>,
    /// It was aborted.
    pub aborted: bool,
    /// The agent retries the prompt after it (overflow).
    pub will_retry: bool,
    /// Why it failed.
    pub error_message: Option<String>,
}

/// `auto_retry_start`: a retryable provider error; Pi retries after `delayMs`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct AutoRetryStart {
    /// The attempt about to run (from 1).
    pub attempt: u32,
    /// How many attempts Pi makes at most.
    pub max_attempts: u32,
    /// The wait before it.
    pub delay_ms: u64,
    /// The error retried.
    pub error_message: String,
}

/// `auto_retry_end`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct AutoRetryEnd {
    /// A retry succeeded.
    pub success: bool,
    /// The last attempt.
    pub attempt: u32,
    /// Why it gave up.
    pub final_error: Option<String>,
}

/// `extension_ui_request`: dialogs (`select`, `confirm`, `input`, `editor`) wait for an
/// `extension_ui_response` with the same `id`; `notify`, `setStatus`, `setWidget`,
/// `setTitle` and `set_editor_text` expect none.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct UiRequest {
    /// The request id (a UUID).
    pub id: String,
    /// What the extension called.
    pub method: String,
    /// The dialog's title (`setTitle`: the title).
    pub title: Option<String>,
    /// `confirm`'s message, `notify`'s text.
    pub message: Option<String>,
    /// `select`'s options.
    pub options: Vec<String>,
    /// `input`'s placeholder.
    pub placeholder: Option<String>,
    /// `editor`'s prefilled text.
    pub prefill: Option<String>,
    /// `notify`'s level: `info`, `warning` or `error`.
    pub notify_type: Option<String>,
    /// After this many milliseconds Pi answers the dialog itself (with its default).
    pub timeout: Option<u64>,
}

/// `extension_error`: an extension threw.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ExtensionError {
    /// The extension's file.
    pub extension_path: String,
    /// The event it was handling.
    pub event: String,
    /// What it threw.
    pub error: String,
}
