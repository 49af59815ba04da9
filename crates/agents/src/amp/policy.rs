//! A session's policy in Amp's per-session settings file (`--settings-file`, 0600 in the
//! session's state dir): built-in tools taken away in `amp.tools.disable` (`builtin:<name>`),
//! MCP servers in `amp.mcpServers` (`{command, args, env}` / `{url, headers}`), and extra
//! environment variables for each turn's process.
//!
//! Not honoured (the daemon answers 422): `systemPrompt` (Amp has no prompt flag; its modes
//! choose the system prompt on Amp's servers), `maxTurns` (no flag; the loop runs on Amp's
//! servers, and stopping the local CLI mid-turn would leave the thread's state to them),
//! images (the prompt goes as text on stdin), and restricting MCP tools (Amp's
//! `amp.tools.disable` is documented for names only, and this could not be verified
//! offline). Amp's `amp.mcpServers` has no documented variable expansion, so MCP secrets
//! are in the settings file itself, readable by the daemon's user alone.

use sandbox_universal::{
    McpServer, McpTransport, PolicySupport, SessionPolicy, ToolName, ToolRestriction,
};
use serde_json::{Map, Value, json};

/// What Amp honours of a session policy.
pub fn support() -> PolicySupport {
    PolicySupport {
        tools: ToolName::BUILT_IN
            .iter()
            .map(|tool| {
                let restriction = if amp_names(tool).is_empty() {
                    ToolRestriction::Absent
                } else {
                    ToolRestriction::Removed
                };
                (tool.key().to_string(), restriction)
            })
            .collect(),
        mcp_transports: vec![McpTransport::Stdio, McpTransport::Http],
        env: true,
        host_tools: false,
        ask_user: false,
        ..PolicySupport::default()
    }
}

/// Amp's built-in tools for a universal one (`amp tools list` of the pinned binary, every
/// mode): its file changes all go through `apply_patch` (`create_file` / `edit_file` in
/// `ultra`), so taking away `write` or `edit` takes away both. It has no separate read,
/// glob or grep tool (it reads with `shell_command`).
pub fn amp_names(tool: &ToolName) -> &'static [&'static str] {
    match tool {
        ToolName::Write => &["apply_patch", "create_file"],
        ToolName::Edit => &["apply_patch", "edit_file", "undo_edit"],
        ToolName::Shell => &[
            "shell_command",
            "shell_command_kill",
            "shell_command_status",
            "Bash",
        ],
        ToolName::WebFetch => &["read_web_page"],
        ToolName::WebSearch => &["web_search"],
        ToolName::Read | ToolName::Glob | ToolName::Grep | ToolName::Mcp { .. } => &[],
    }
}

/// The settings a policy adds: `amp.tools.disable` and `amp.mcpServers`.
pub fn settings(policy: &SessionPolicy) -> Map<String, Value> {
    let mut settings = Map::new();
    let mut disabled: Vec<String> = policy
        .tools
        .removed_built_ins()
        .iter()
        .flat_map(|tool| amp_names(tool).iter().map(|n| format!("builtin:{n}")))
        .collect();
    disabled.sort();
    disabled.dedup();
    if !disabled.is_empty() {
        settings.insert("amp.tools.disable".into(), json!(disabled));
    }
    if !policy.mcp_servers.is_empty() {
        let servers: Map<String, Value> = policy
            .mcp_servers
            .iter()
            .map(|(name, server)| {
                let config = match server {
                    McpServer::Stdio { command, args, env } => {
                        json!({"command": command, "args": args, "env": env})
                    }
                    McpServer::Http { url, headers } => json!({"url": url, "headers": headers}),
                };
                (name.clone(), config)
            })
            .collect();
        settings.insert("amp.mcpServers".into(), Value::Object(servers));
    }
    settings
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removed_built_ins_are_disabled_and_servers_listed() {
        let policy: SessionPolicy = serde_json::from_value(json!({
            "tools": {"deny": ["shell", "write", "read"]},
            "mcpServers": {
                "st": {"type": "stdio", "command": "python3", "args": ["s.py"], "env": {"K": "v"}},
                "ht": {"type": "http", "url": "http://127.0.0.1:1/mcp",
                       "headers": {"Authorization": "Bearer t"}},
            },
        }))
        .unwrap();
        let settings = settings(&policy);
        assert_eq!(
            settings["amp.tools.disable"],
            json!([
                "builtin:Bash",
                "builtin:apply_patch",
                "builtin:create_file",
                "builtin:shell_command",
                "builtin:shell_command_kill",
                "builtin:shell_command_status"
            ])
        );
        assert_eq!(
            settings["amp.mcpServers"]["st"],
            json!({"command": "python3", "args": ["s.py"], "env": {"K": "v"}})
        );
        assert_eq!(
            settings["amp.mcpServers"]["ht"]["headers"]["Authorization"],
            "Bearer t"
        );
        assert!(super::settings(&SessionPolicy::default()).is_empty());
        let support = support();
        assert_eq!(support.tools["read"], ToolRestriction::Absent);
        assert_eq!(support.tools["shell"], ToolRestriction::Removed);
        assert!(!support.tools.contains_key("mcp"));
        assert!(support.system_prompt_modes.is_empty() && support.max_turns.is_none());
    }
}
