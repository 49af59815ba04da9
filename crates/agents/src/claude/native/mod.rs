//! Claude Code's stream-json wire types (the pinned CLI is 2.1.330).
//!
//! Tolerant by design: every struct ignores unknown fields, and values the daemon only
//! passes through (tool inputs, permission suggestions, tool results) stay
//! [`serde_json::Value`]s so nothing is lost when they are echoed back to the CLI.

use serde::Deserialize;
use serde_json::Value;

/// One line Claude Code writes on stdout, dispatched on `type`.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum OutLine {
    /// `system` lines: `init`, `status`, `thinking_tokens`, `compact_boundary`, ...
    System(SystemLine),
    /// One completed content block of an assistant message.
    Assistant(AssistantLine),
    /// Tool results (and echoes / markers the CLI injects as user turns).
    User(UserLine),
    /// A raw Anthropic Messages SSE event (`--include-partial-messages`).
    StreamEvent(StreamEventLine),
    /// The end of a turn.
    Result(ResultLine),
    /// The CLI asks the host something (`can_use_tool`, ...).
    ControlRequest(ControlRequestLine),
    /// The CLI answers one of our control requests (`initialize`, `interrupt`).
    ControlResponse(ControlResponseLine),
    /// The CLI withdrew one of its control requests (e.g. the turn was interrupted).
    ControlCancelRequest(ControlCancelLine),
    /// Rate-limit information (informational).
    RateLimitEvent(Value),
    /// The conversation was reset and got a new id.
    ConversationReset(ConversationReset),
    /// A keep-alive ping.
    KeepAlive(Value),
}

/// A `system` line.
#[derive(Debug, Clone, Deserialize)]
pub struct SystemLine {
    /// `init`, `status`, `thinking_tokens`, `compact_boundary`, ...
    pub subtype: String,
    /// The CLI's session id.
    #[serde(default)]
    pub session_id: Option<String>,
    /// The model in use (`init`).
    #[serde(default)]
    pub model: Option<String>,
    /// The CLI version (`init`).
    #[serde(default)]
    pub claude_code_version: Option<String>,
    /// The permission mode in force (`init`), or the new one (`status`, when the mode
    /// changes, e.g. to `default` after an approved plan).
    #[serde(default, rename = "permissionMode")]
    pub permission_mode: Option<String>,
    /// `warning`, `info`, ... (`informational`).
    #[serde(default)]
    pub level: Option<String>,
    /// The notice's text (`informational`).
    #[serde(default)]
    pub content: Option<String>,
    /// The tool the CLI refused by itself (`permission_denied`).
    #[serde(default)]
    pub tool_name: Option<String>,
    /// Why it was refused (`permission_denied`).
    #[serde(default)]
    pub message: Option<String>,
    /// The retry about to be made, from 1 (`api_retry`).
    #[serde(default)]
    pub attempt: Option<u32>,
    /// How many retries the CLI makes at most (`api_retry`).
    #[serde(default)]
    pub max_retries: Option<u32>,
    /// The wait before the retry, in milliseconds (`api_retry`).
    #[serde(default)]
    pub retry_delay_ms: Option<u64>,
    /// What failed, e.g. `overloaded` (`api_retry`). Kept as JSON: only `api_retry`'s
    /// is known to be a string.
    #[serde(default)]
    pub error: Option<Value>,
    /// The HTTP status of the failed request, when it got one (`api_retry`).
    #[serde(default)]
    pub error_status: Option<u16>,
}

/// An `assistant` line: the CLI prints one per content block, each carrying the API
/// message id it belongs to.
#[derive(Debug, Clone, Deserialize)]
pub struct AssistantLine {
    /// The (partial) API message.
    pub message: AssistantMessage,
    /// Set when a sub-agent (Task tool) produced the message.
    #[serde(default)]
    pub parent_tool_use_id: Option<String>,
    /// Set on synthetic messages that report an API error (`authentication_failed`,
    /// `server_error`, ...).
    #[serde(default)]
    pub error: Option<String>,
    /// HTTP status of the API error.
    #[serde(default)]
    pub api_error_status: Option<u16>,
}

/// The `message` of an `assistant` line.
#[derive(Debug, Clone, Deserialize)]
pub struct AssistantMessage {
    /// API message id (a uuid for synthetic error messages).
    #[serde(default)]
    pub id: Option<String>,
    /// Content blocks (parsed one by one with [`Block`]).
    #[serde(default)]
    pub content: Vec<Value>,
}

/// A content block of an assistant or user message.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// Extended thinking.
    Thinking {
        /// The reasoning text.
        thinking: String,
    },
    /// Encrypted thinking (nothing readable).
    RedactedThinking {},
    /// A client tool call.
    ToolUse {
        /// The call id (`toolu_...`).
        id: String,
        /// Tool name (`Bash`, `Write`, `AskUserQuestion`, `mcp__server__tool`, ...).
        name: String,
        /// Tool input.
        #[serde(default)]
        input: Value,
    },
    /// A server-side tool call (web search, ...).
    ServerToolUse {
        /// The call id.
        id: String,
        /// Tool name.
        name: String,
        /// Tool input.
        #[serde(default)]
        input: Value,
    },
    /// A tool's result (in user messages).
    ToolResult {
        /// The call it answers.
        tool_use_id: String,
        /// A string or content blocks.
        #[serde(default)]
        content: Value,
        /// Whether the tool failed (or permission was denied).
        #[serde(default)]
        is_error: bool,
    },
    /// An image.
    Image {},
}

/// A `user` line.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserLine {
    /// The message (content is a string or blocks).
    pub message: UserMessage,
    /// Set for sub-agent tool results.
    #[serde(default, rename = "parent_tool_use_id")]
    pub parent_tool_use_id: Option<String>,
    /// The CLI's structured view of the tool result (`stdout`/`stderr` for Bash,
    /// `type`/`filePath`/`structuredPatch` for file tools, or an error string).
    #[serde(default, rename = "tool_use_result")]
    pub tool_use_result: Option<Value>,
    /// Per-result metadata, e.g. whether the tool ran at all.
    #[serde(default, rename = "tool_result_meta")]
    pub tool_result_meta: Vec<ToolResultMeta>,
    /// An echo of our own input (`--replay-user-messages`).
    #[serde(default)]
    pub is_replay: bool,
    /// A message the CLI made up.
    #[serde(default)]
    pub is_synthetic: bool,
}

/// The `message` of a `user` line.
#[derive(Debug, Clone, Deserialize)]
pub struct UserMessage {
    /// A string or content blocks.
    #[serde(default)]
    pub content: Value,
}

/// Metadata of one tool result.
#[derive(Debug, Clone, Deserialize)]
pub struct ToolResultMeta {
    /// The tool call id.
    pub id: String,
    /// Set when the tool did not run (e.g. `permission-rule` for a denial).
    #[serde(default)]
    pub non_execution_kind: Option<String>,
}

/// A `stream_event` line.
#[derive(Debug, Clone, Deserialize)]
pub struct StreamEventLine {
    /// The raw Anthropic SSE event.
    pub event: StreamEvent,
    /// The API message the event belongs to (content events of newer CLIs).
    #[serde(default)]
    pub api_message_id: Option<String>,
}

/// An Anthropic Messages SSE event.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamEvent {
    /// A message begins.
    MessageStart {
        /// The message (only its id is used).
        message: StreamMessage,
    },
    /// A content block begins.
    ContentBlockStart {
        /// Block index within the message.
        index: u64,
        /// The block's initial state.
        content_block: Value,
    },
    /// More content for a block.
    ContentBlockDelta {
        /// Block index.
        index: u64,
        /// The delta.
        delta: Delta,
    },
    /// A content block ends.
    ContentBlockStop {
        /// Block index.
        index: u64,
    },
    /// Stop reason and usage of the message.
    MessageDelta {},
    /// The message ends.
    MessageStop {},
    /// A keep-alive.
    Ping {},
    /// A streamed API error.
    Error {
        /// The error object.
        #[serde(default)]
        error: Value,
    },
}

/// The message of `message_start`.
#[derive(Debug, Clone, Deserialize)]
pub struct StreamMessage {
    /// API message id.
    pub id: String,
}

/// A content-block delta.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Delta {
    /// Text.
    TextDelta {
        /// The appended text.
        text: String,
    },
    /// Thinking.
    ThinkingDelta {
        /// The appended reasoning.
        thinking: String,
    },
    /// Partial tool input JSON.
    InputJsonDelta {},
    /// Thinking signature.
    SignatureDelta {},
    /// Citations.
    CitationsDelta {},
}

/// A `result` line: the turn is over.
#[derive(Debug, Clone, Deserialize)]
pub struct ResultLine {
    /// `success`, `error_during_execution`, `error_max_turns`, `error_max_budget_usd`, ...
    pub subtype: String,
    /// Whether the turn failed.
    #[serde(default)]
    pub is_error: bool,
    /// The final text (or the error text).
    #[serde(default)]
    pub result: Option<String>,
    /// The error text of a failed run (Amp's name for it).
    #[serde(default)]
    pub error: Option<String>,
    /// Error messages of error subtypes.
    #[serde(default)]
    pub errors: Vec<String>,
    /// Token usage.
    #[serde(default)]
    pub usage: Option<ResultUsage>,
    /// Cost in US dollars.
    #[serde(default)]
    pub total_cost_usd: Option<f64>,
    /// The model's stop reason (`end_turn`, `max_tokens`, ...).
    #[serde(default)]
    pub stop_reason: Option<String>,
    /// Why the turn ended (`completed`, `aborted_streaming`, `api_error`, ...).
    #[serde(default)]
    pub terminal_reason: Option<String>,
    /// HTTP status of an API error.
    #[serde(default)]
    pub api_error_status: Option<u16>,
}

/// `result.usage`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ResultUsage {
    /// Input tokens.
    #[serde(default)]
    pub input_tokens: u64,
    /// Output tokens.
    #[serde(default)]
    pub output_tokens: u64,
    /// Input tokens read from the cache.
    #[serde(default)]
    pub cache_read_input_tokens: Option<u64>,
    /// Input tokens written to the cache.
    #[serde(default)]
    pub cache_creation_input_tokens: Option<u64>,
    /// Output token details.
    #[serde(default)]
    pub output_tokens_details: Option<OutputTokensDetails>,
}

/// `usage.output_tokens_details`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct OutputTokensDetails {
    /// Thinking tokens.
    #[serde(default)]
    pub thinking_tokens: Option<u64>,
}

/// A `control_request` line from the CLI.
#[derive(Debug, Clone, Deserialize)]
pub struct ControlRequestLine {
    /// The id to answer with.
    pub request_id: String,
    /// What is asked.
    pub request: ControlRequest,
}

/// What the CLI asks the host.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "subtype", rename_all = "snake_case")]
pub enum ControlRequest {
    /// May the model use this tool? (`--permission-prompt-tool stdio`; boxed: it is far
    /// larger than the others.)
    CanUseTool(Box<CanUseTool>),
    /// A hook callback (only sent when the host registered hooks; the daemon does not).
    HookCallback(Value),
    /// A message for an in-process MCP server (the daemon registers none).
    McpMessage(Value),
}

/// A `can_use_tool` request.
#[derive(Debug, Clone, Deserialize)]
pub struct CanUseTool {
    /// Tool name.
    pub tool_name: String,
    /// Tool input.
    #[serde(default)]
    pub input: Value,
    /// Permission updates the CLI suggests for "always allow" (echoed back on allow).
    #[serde(default)]
    pub permission_suggestions: Vec<Value>,
    /// The path that triggered the prompt, if any.
    #[serde(default)]
    pub blocked_path: Option<String>,
    /// The tool call this request gates.
    #[serde(default)]
    pub tool_use_id: Option<String>,
    /// A short description of the call.
    #[serde(default)]
    pub description: Option<String>,
    /// A title for the prompt.
    #[serde(default)]
    pub title: Option<String>,
    /// The MCP server of an MCP tool (`{name, source}`).
    #[serde(default)]
    pub mcp_server: Option<Value>,
    /// The tool's display name (MCP tools: the server's title of the tool).
    #[serde(default)]
    pub display_name: Option<String>,
}

/// A `control_response` line from the CLI.
#[derive(Debug, Clone, Deserialize)]
pub struct ControlResponseLine {
    /// The response.
    pub response: ControlResponseBody,
}

/// The body of a `control_response`.
#[derive(Debug, Clone, Deserialize)]
pub struct ControlResponseBody {
    /// `success` or `error`.
    pub subtype: String,
    /// The request it answers.
    pub request_id: String,
    /// The answer (`success`).
    #[serde(default)]
    pub response: Option<Value>,
    /// The error (`error`).
    #[serde(default)]
    pub error: Option<String>,
}

/// A `control_cancel_request` line.
#[derive(Debug, Clone, Deserialize)]
pub struct ControlCancelLine {
    /// The withdrawn request.
    pub request_id: String,
}

/// A `conversation_reset` line.
#[derive(Debug, Clone, Deserialize)]
pub struct ConversationReset {
    /// The new session id.
    pub new_conversation_id: String,
}
