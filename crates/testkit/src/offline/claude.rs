//! Claude Code: `-p` stream-json in and out, permission prompts over stdio.

use std::path::Path;

use super::{Launch, Sandbox};

/// The fake API key (any value works; `-p` mode accepts a key with no login).
pub const API_KEY: &str = "sk-ant-fake";

/// Environment pointing Claude Code at the fake provider with all background traffic off.
pub fn env(provider_url: &str) -> Vec<(&'static str, String)> {
    vec![
        ("ANTHROPIC_BASE_URL", provider_url.to_owned()),
        ("ANTHROPIC_API_KEY", API_KEY.to_owned()),
        // Bootstrap, fast-mode status, MCP registry, metrics and event logging.
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_owned()),
        ("DISABLE_TELEMETRY", "1".to_owned()),
        ("DISABLE_AUTOUPDATER", "1".to_owned()),
        ("DISABLE_ERROR_REPORTING", "1".to_owned()),
        ("DISABLE_BUG_COMMAND", "1".to_owned()),
        // Allows bypassPermissions when running as root (harmless otherwise).
        ("IS_SANDBOX", "1".to_owned()),
    ]
}

/// Flags for a long-lived session: stream-json both ways, token deltas, and
/// `can_use_tool` control requests on stdout for every permission prompt.
pub fn stream_json_args() -> Vec<&'static str> {
    vec![
        "-p",
        "--verbose",
        "--output-format",
        "stream-json",
        "--input-format",
        "stream-json",
        "--include-partial-messages",
        "--permission-prompt-tool",
        "stdio",
    ]
}

/// Claude Code in stream-json mode against the fake provider.
pub fn launch(exe: &Path, sandbox: &Sandbox, provider_url: &str) -> Launch {
    Launch::new(exe, sandbox)
        .args(stream_json_args())
        .envs(env(provider_url))
}
