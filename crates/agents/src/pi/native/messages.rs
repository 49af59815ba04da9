//! Messages (`AgentMessage`: pi-ai's user, assistant and tool result messages, and the
//! coding agent's own roles) and the streaming events of an assistant message.

use serde::Deserialize;
use serde_json::Value;

/// Why an assistant message stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StopReason {
    /// The model finished.
    Stop,
    /// The output token limit.
    Length,
    /// The model called tools (the run goes on with their results).
    ToolUse,
    /// The provider (or the request) failed; `errorMessage` says why.
    Error,
    /// The run was aborted.
    Aborted,
    /// A reason this build does not know.
    #[serde(other)]
    Unknown,
}

/// The cost of a message, in US dollars.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Cost {
    /// All of it.
    pub total: f64,
}

/// Token usage of one assistant message (one model call).
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Usage {
    /// Input tokens, without cache reads and writes.
    pub input: f64,
    /// Output tokens.
    pub output: f64,
    /// Input tokens read from the prompt cache.
    pub cache_read: f64,
    /// Input tokens written to the prompt cache.
    pub cache_write: f64,
    /// What the call cost.
    pub cost: Cost,
}

/// One message. Roles: `user`, `assistant`, `toolResult` (pi-ai), and the coding agent's
/// `bashExecution`, `custom`, `branchSummary`, `compactionSummary`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct AgentMessage {
    /// Who wrote it.
    pub role: String,
    /// A string (user messages) or an array of [`Block`]s.
    pub content: Value,
    /// Token usage (assistant messages).
    pub usage: Option<Usage>,
    /// Why it stopped (assistant messages).
    pub stop_reason: Option<StopReason>,
    /// What failed, with `stopReason` `error` (also set on `aborted` ones).
    pub error_message: Option<String>,
}

impl AgentMessage {
    /// Whether the model wrote it.
    pub fn is_assistant(&self) -> bool {
        self.role == "assistant"
    }

    /// Content block `index`, when it is one this build reads.
    pub fn block(&self, index: usize) -> Option<Block> {
        Block::deserialize(self.content.get(index)?).ok()
    }
}

/// A content block of an assistant message.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type")]
pub enum Block {
    /// Text.
    #[serde(rename = "text")]
    Text {
        /// The text.
        #[serde(default)]
        text: String,
    },
    /// Reasoning.
    #[serde(rename = "thinking")]
    Thinking {
        /// The reasoning text.
        #[serde(default)]
        thinking: String,
    },
    /// A tool call.
    #[serde(rename = "toolCall")]
    ToolCall {
        /// The call id (`toolCallId` of its execution events).
        #[serde(default)]
        id: String,
        /// The tool.
        #[serde(default)]
        name: String,
        /// Its arguments (partial while streaming).
        #[serde(default)]
        arguments: Value,
    },
    /// Images and blocks this build does not know.
    #[serde(other)]
    Other,
}

/// `message_update.assistantMessageEvent`: one streaming step of an assistant message. The
/// agent loop forwards the block events only (`start`, `done` and `error` become
/// `message_start` / `message_end`), but they are typed for completeness.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AssistantEvent {
    /// Generation started.
    Start,
    /// A text block started.
    #[serde(rename_all = "camelCase")]
    TextStart {
        /// The block's index in the message content.
        content_index: usize,
    },
    /// More text.
    #[serde(rename_all = "camelCase")]
    TextDelta {
        /// The block's index.
        content_index: usize,
        /// The new text.
        delta: String,
    },
    /// The text block is complete.
    #[serde(rename_all = "camelCase")]
    TextEnd {
        /// The block's index.
        content_index: usize,
        /// Its whole text.
        #[serde(default)]
        content: String,
    },
    /// A thinking block started.
    #[serde(rename_all = "camelCase")]
    ThinkingStart {
        /// The block's index.
        content_index: usize,
    },
    /// More reasoning.
    #[serde(rename_all = "camelCase")]
    ThinkingDelta {
        /// The block's index.
        content_index: usize,
        /// The new text.
        delta: String,
    },
    /// The thinking block is complete.
    #[serde(rename_all = "camelCase")]
    ThinkingEnd {
        /// The block's index.
        content_index: usize,
        /// Its whole text.
        #[serde(default)]
        content: String,
    },
    /// A tool call started; `partial.content[contentIndex]` names the tool.
    #[serde(rename_all = "camelCase")]
    ToolcallStart {
        /// The block's index.
        content_index: usize,
        /// The message so far.
        #[serde(default)]
        partial: AgentMessage,
    },
    /// More argument JSON.
    #[serde(rename_all = "camelCase")]
    ToolcallDelta {
        /// The block's index.
        content_index: usize,
    },
    /// The tool call is complete.
    #[serde(rename_all = "camelCase")]
    ToolcallEnd {
        /// The block's index.
        content_index: usize,
        /// The whole call (a [`Block::ToolCall`]).
        tool_call: Block,
    },
    /// The message is complete.
    Done,
    /// The message failed or was aborted.
    Error,
    /// An event this build does not know.
    #[serde(other)]
    Unknown,
}
