//! The stdio MCP server: a Python 3 script embedded in the kit, written to a file on
//! demand so any test can hand an agent its command and arguments.

use std::path::{Path, PathBuf};

use super::McpCall;

/// The script's source (`stdio_server.py`).
pub const SCRIPT: &str = include_str!("stdio_server.py");

/// The file name the script is written to.
const SCRIPT_NAME: &str = "sandbox_testkit_mcp.py";
/// The file name of the calls it records.
const CALLS_NAME: &str = "mcp_calls.jsonl";

/// How an agent starts the stdio MCP server: `command` with `args` (the script, then the
/// calls file). Each `tools/call` it answers is appended to `calls_file` as a JSON line
/// ([`McpCall`]: `{"tool", "arguments", "prefix"}`).
#[derive(Clone, Debug, PartialEq)]
pub struct StdioMcp {
    /// `python3`.
    pub command: String,
    /// `[<dir>/sandbox_testkit_mcp.py, <dir>/mcp_calls.jsonl]`.
    pub args: Vec<String>,
    /// Where the calls are recorded.
    pub calls_file: PathBuf,
}

impl StdioMcp {
    /// The calls recorded so far, oldest first (none while the file does not exist).
    pub fn calls(&self) -> Vec<McpCall> {
        std::fs::read_to_string(&self.calls_file)
            .unwrap_or_default()
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect()
    }
}

/// Writes the stdio MCP server's script into `dir` (created if missing) and says how to
/// start it; the calls it answers go to `<dir>/mcp_calls.jsonl`.
pub fn stdio_server(dir: &Path) -> std::io::Result<StdioMcp> {
    std::fs::create_dir_all(dir)?;
    let script = dir.join(SCRIPT_NAME);
    std::fs::write(&script, SCRIPT)?;
    let calls_file = dir.join(CALLS_NAME);
    Ok(StdioMcp {
        command: "python3".to_owned(),
        args: vec![
            script.display().to_string(),
            calls_file.display().to_string(),
        ],
        calls_file,
    })
}
