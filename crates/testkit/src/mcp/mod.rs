//! Two small MCP servers for tests, serving the same tools:
//!
//! - [`HttpMcpServer`]: Streamable HTTP on 127.0.0.1, in-process (the official Rust SDK,
//!   `rmcp`), behind a bearer token check; it records every HTTP request and every tool
//!   call.
//! - [`stdio_server`]: a dependency-free Python 3 script an agent spawns by command
//!   (`python3 <file> <calls file>`), speaking newline-delimited JSON-RPC; it appends
//!   every tool call to a file.
//!
//! The tools: [`ECHO_TOOL`] `{text}` answers [`echo_text`] (`echo:<text>`; the stdio
//! server puts `$MCP_ECHO_PREFIX` in front), annotated `readOnlyHint: false,
//! openWorldHint: true` so that Codex asks before calling it (Codex runs a tool
//! without asking only when it is read-only, or neither destructive nor open-world);
//! [`DELETE_TOOL`] `{}` answers `nothing deleted` and is annotated `destructiveHint:
//! true`, for per-tool deny tests.

mod http;
mod stdio;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use http::{HttpMcpServer, McpHttpRequest};
pub use stdio::{StdioMcp, stdio_server};

/// The echo tool: `{text: string}` → text content `echo:<text>`.
pub const ECHO_TOOL: &str = "echo";
/// The destructive tool: `{}` → text content [`DELETE_REPLY`].
pub const DELETE_TOOL: &str = "delete_everything";
/// What [`DELETE_TOOL`] answers.
pub const DELETE_REPLY: &str = "nothing deleted";
/// The variable whose value the stdio server puts in front of every echo, and records
/// with every call ([`McpCall::prefix`]).
pub const ECHO_PREFIX_ENV: &str = "MCP_ECHO_PREFIX";
/// The variable that names the stdio server's calls file when its first argument does
/// not.
pub const CALLS_FILE_ENV: &str = "MCP_CALLS_FILE";

/// What the echo tool answers to `text` (without the stdio server's prefix).
pub fn echo_text(text: &str) -> String {
    format!("echo:{text}")
}

/// One `tools/call` a server answered.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct McpCall {
    /// The tool's name ([`ECHO_TOOL`], [`DELETE_TOOL`]).
    pub tool: String,
    /// Its arguments.
    pub arguments: Value,
    /// The stdio server's `$MCP_ECHO_PREFIX` when it answered (`None` when unset, and
    /// always for the HTTP server).
    #[serde(default)]
    pub prefix: Option<String>,
}

#[cfg(test)]
mod tests;
