//! The attribute names of the spans: the GenAI semantic conventions' where they have one,
//! `sandbox.*` for what only this daemon knows.

/// `invoke_agent` or `execute_tool`.
pub const OPERATION: &str = "gen_ai.operation.name";
/// The agent (`claude`, `codex`, `mock`, ...).
pub const AGENT_NAME: &str = "gen_ai.agent.name";
/// The daemon session id.
pub const CONVERSATION_ID: &str = "gen_ai.conversation.id";
/// The session's model, when known.
pub const REQUEST_MODEL: &str = "gen_ai.request.model";
/// Input tokens of the turn.
pub const INPUT_TOKENS: &str = "gen_ai.usage.input_tokens";
/// Output tokens of the turn.
pub const OUTPUT_TOKENS: &str = "gen_ai.usage.output_tokens";
/// Input tokens read from the prompt cache.
pub const CACHE_READ_TOKENS: &str = "gen_ai.usage.cache_read.input_tokens";
/// Input tokens written to the prompt cache.
pub const CACHE_CREATION_TOKENS: &str = "gen_ai.usage.cache_creation.input_tokens";
/// The turn's stop reason, as `turnEnded` names it.
pub const FINISH_REASONS: &str = "gen_ai.response.finish_reasons";
/// What went wrong (the last `error` event's type, or the tool's failure).
pub const ERROR_TYPE: &str = "error.type";
/// The tool's name (an MCP tool's own name).
pub const TOOL_NAME: &str = "gen_ai.tool.name";
/// The agent's id of the call (a command's item id).
pub const TOOL_CALL_ID: &str = "gen_ai.tool.call.id";
/// `function`, or `extension` for MCP tools.
pub const TOOL_TYPE: &str = "gen_ai.tool.type";
/// The tool's arguments (content capture only).
pub const TOOL_ARGUMENTS: &str = "gen_ai.tool.call.arguments";
/// The tool's result (content capture only).
pub const TOOL_RESULT: &str = "gen_ai.tool.call.result";
/// The user's message (content capture only).
pub const INPUT_MESSAGES: &str = "gen_ai.input.messages";
/// The agent's text (content capture only).
pub const OUTPUT_MESSAGES: &str = "gen_ai.output.messages";
/// The daemon session id.
pub const SESSION_ID: &str = "sandbox.session.id";
/// The agent's own session id, when known.
pub const NATIVE_SESSION_ID: &str = "sandbox.native_session.id";
/// The turn id.
pub const TURN_ID: &str = "sandbox.turn.id";
/// The item a tool span or wait is about.
pub const ITEM_ID: &str = "sandbox.item.id";
/// The MCP server of an MCP tool.
pub const MCP_SERVER: &str = "sandbox.mcp.server";
/// The tool's name as the agent knows it, when the span names it otherwise.
pub const AGENT_TOOL_NAME: &str = "sandbox.tool.agent_name";
/// A command's exit code.
pub const EXIT_CODE: &str = "sandbox.command.exit_code";
/// Reasoning tokens of the turn.
pub const REASONING_TOKENS: &str = "sandbox.usage.reasoning_tokens";
/// The turn's cost in US dollars, when the agent reports it.
pub const COST_USD: &str = "sandbox.usage.cost_usd";
/// Files the turn added, modified, deleted.
pub const CHANGES_ADDED: &str = "sandbox.changes.added";
/// See [`CHANGES_ADDED`].
pub const CHANGES_MODIFIED: &str = "sandbox.changes.modified";
/// See [`CHANGES_ADDED`].
pub const CHANGES_DELETED: &str = "sandbox.changes.deleted";
