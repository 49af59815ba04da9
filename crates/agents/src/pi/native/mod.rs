//! Stdout lines of `pi --mode rpc` (pinned: `@mariozechner/pi-coding-agent` 0.73.1, with
//! `@mariozechner/pi-agent-core` and `@mariozechner/pi-ai` of the same release).
//!
//! Every line is a JSON object with a `type` ([`EVENT_TYPES`] lists every type the pin can
//! write, from `dist/modes/rpc/rpc-mode.js` and `AgentSessionEvent` in
//! `dist/core/agent-session.d.ts`):
//! - `response`: the answer to one command (`{id?, command, success, data?, error?}`);
//! - the agent's events (`AgentEvent` of pi-agent-core): `agent_start`, `agent_end`,
//!   `turn_start`, `turn_end`, `message_start`, `message_update`, `message_end`,
//!   `tool_execution_start`, `tool_execution_update`, `tool_execution_end`;
//! - the session's events: `queue_update`, `compaction_start`, `compaction_end`,
//!   `auto_retry_start`, `auto_retry_end`, `session_info_changed`,
//!   `thinking_level_changed`;
//! - extensions: `extension_ui_request` (dialogs and fire-and-forget UI calls) and
//!   `extension_error`.
//!
//! The pin has no `agent_settled`: `agent_end` is the last event of a run. Only the fields
//! the daemon reads are typed; every struct ignores unknown fields.

mod events;
mod messages;

use serde_json::Value;

pub use events::{
    AgentEnd, AutoRetryEnd, AutoRetryStart, CompactionEnd, ExtensionError, MessageEvent,
    MessageUpdate, Response, ToolExecutionEnd, ToolExecutionStart, ToolExecutionUpdate, ToolResult,
    UiRequest,
};
pub use messages::{AgentMessage, AssistantEvent, Block, Cost, StopReason, Usage};

/// Every line type the pinned `pi --mode rpc` writes to stdout.
pub const EVENT_TYPES: &[&str] = &[
    "response",
    "agent_start",
    "agent_end",
    "turn_start",
    "turn_end",
    "message_start",
    "message_update",
    "message_end",
    "tool_execution_start",
    "tool_execution_update",
    "tool_execution_end",
    "queue_update",
    "compaction_start",
    "compaction_end",
    "auto_retry_start",
    "auto_retry_end",
    "session_info_changed",
    "thinking_level_changed",
    "extension_ui_request",
    "extension_error",
];

/// The line's `type` (empty when it has none).
pub fn event_type(line: &Value) -> &str {
    line["type"].as_str().unwrap_or_default()
}

/// The text of a content array (`[{type: "text", text}, ...]`, other blocks skipped), or
/// of a plain string (user messages may have one).
pub fn content_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b["type"] == "text")
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}
