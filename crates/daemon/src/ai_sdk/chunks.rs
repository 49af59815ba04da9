//! The chunks of the AI SDK's UI message stream protocol (v1) this daemon sends: the
//! shapes and field names of the `ai` package's `uiMessageChunkSchema` (7.0), serialized
//! as that schema reads them (`type` tag, camelCase fields, absent optional fields left
//! out).

use serde::Serialize;
use serde_json::Value;

/// Why a message finished, as the AI SDK names it (`FinishReason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FinishReason {
    /// The model finished its answer.
    Stop,
    /// The model hit its output token limit.
    Length,
    /// The model stopped to call tools.
    ToolCalls,
    /// The generation failed.
    Error,
    /// Any other reason.
    Other,
}

/// One chunk of a UI message stream, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(
    tag = "type",
    rename_all = "kebab-case",
    rename_all_fields = "camelCase"
)]
pub enum UiChunk {
    /// A new assistant message (`messageId` stable per turn).
    Start {
        /// The message id.
        message_id: String,
        /// The message's metadata.
        message_metadata: Value,
    },
    /// A step begins.
    StartStep,
    /// The step ends.
    FinishStep,
    /// The message is complete.
    Finish {
        /// Why it finished.
        finish_reason: FinishReason,
        /// The message's metadata, merged into what `start` gave.
        message_metadata: Value,
    },
    /// More metadata for the message.
    MessageMetadata {
        /// The metadata, merged into the message's.
        message_metadata: Value,
    },
    /// The message was cut short (the turn was cancelled).
    Abort {
        /// Why.
        reason: String,
    },
    /// Something went wrong.
    Error {
        /// A human text of what.
        error_text: String,
    },
    /// A text part begins.
    TextStart {
        /// The part's id.
        id: String,
    },
    /// More text of a text part.
    TextDelta {
        /// The part's id.
        id: String,
        /// The appended text.
        delta: String,
    },
    /// A text part is complete.
    TextEnd {
        /// The part's id.
        id: String,
    },
    /// A reasoning part begins.
    ReasoningStart {
        /// The part's id.
        id: String,
    },
    /// More text of a reasoning part.
    ReasoningDelta {
        /// The part's id.
        id: String,
        /// The appended text.
        delta: String,
    },
    /// A reasoning part is complete.
    ReasoningEnd {
        /// The part's id.
        id: String,
    },
    /// A tool call begins (its input is not known yet).
    ToolInputStart {
        /// The tool part's id.
        tool_call_id: String,
        /// The tool's name.
        tool_name: String,
        /// Set when the agent runs the tool (the client must not).
        #[serde(skip_serializing_if = "Option::is_none")]
        provider_executed: Option<bool>,
        /// Always `true`: the client has no static types of these tools.
        dynamic: bool,
        /// A title to show.
        #[serde(skip_serializing_if = "Option::is_none")]
        title: Option<String>,
    },
    /// A tool call's complete input.
    ToolInputAvailable {
        /// The tool part's id.
        tool_call_id: String,
        /// The tool's name.
        tool_name: String,
        /// The input.
        input: Value,
        /// Set when the agent runs the tool (the client must not).
        #[serde(skip_serializing_if = "Option::is_none")]
        provider_executed: Option<bool>,
        /// Always `true`.
        dynamic: bool,
        /// A title to show.
        #[serde(skip_serializing_if = "Option::is_none")]
        title: Option<String>,
    },
    /// The tool call waits for the user's approval.
    ToolApprovalRequest {
        /// The id to answer (a permission request's id).
        approval_id: String,
        /// The tool part it is about.
        tool_call_id: String,
        /// The permission request itself (opaque to the AI SDK).
        #[serde(skip_serializing_if = "Option::is_none")]
        approval_descriptor: Option<Value>,
        /// Why approval is asked (the request's title).
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        /// The daemon decided by itself (an earlier `always`, or the session's tools).
        #[serde(skip_serializing_if = "Option::is_none")]
        is_automatic: Option<bool>,
    },
    /// How an approval was decided.
    ToolApprovalResponse {
        /// The approval.
        approval_id: String,
        /// Whether the tool may run.
        approved: bool,
        /// How it was decided (`once`, `always`, `reject`).
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// A tool call's output.
    ToolOutputAvailable {
        /// The tool part's id.
        tool_call_id: String,
        /// The output.
        output: Value,
        /// Set when the agent ran the tool.
        #[serde(skip_serializing_if = "Option::is_none")]
        provider_executed: Option<bool>,
        /// Always `true`.
        dynamic: bool,
    },
    /// A tool call failed.
    ToolOutputError {
        /// The tool part's id.
        tool_call_id: String,
        /// What went wrong.
        error_text: String,
        /// Set when the agent ran the tool.
        #[serde(skip_serializing_if = "Option::is_none")]
        provider_executed: Option<bool>,
        /// Always `true`.
        dynamic: bool,
    },
    /// The user denied the tool call.
    ToolOutputDenied {
        /// The tool part's id.
        tool_call_id: String,
    },
    /// A question request and, under the same id (the AI SDK replaces the part), its
    /// resolution.
    #[serde(rename = "data-question")]
    DataQuestion {
        /// The question request's id.
        id: String,
        /// The request, its `status` and, once answered, its `answers`.
        data: Value,
    },
}

impl UiChunk {
    /// The chunk as one SSE frame: `data: <json>` and an empty line.
    pub fn frame(&self) -> String {
        let json = serde_json::to_string(self).expect("chunks serialize");
        format!("data: {json}\n\n")
    }
}

/// The frame that ends every complete stream.
pub const DONE_FRAME: &str = "data: [DONE]\n\n";
