//! Checking a session's policy against what its agent honours (`AgentDriver::policy`):
//! anything it cannot honour is refused with a 422 naming the field, never ignored.

use std::path::Path;

use sandbox_agents::AgentDriver;
use sandbox_universal::{
    CreateSessionRequest, McpServer, PermissionMode, PolicySupport, SessionPolicy,
    SystemPromptMode, ToolName, ToolRestriction,
};

use super::SessionError;

/// Checks `request`'s policy for `driver` in `permission_mode`; answers the policy.
pub(super) fn check_policy(
    driver: &dyn AgentDriver,
    request: &CreateSessionRequest,
    permission_mode: PermissionMode,
) -> Result<SessionPolicy, SessionError> {
    let policy = request.policy();
    let support = driver.policy();
    let agent = driver.name();
    let refuse = |detail: String| Err(SessionError::Unhonoured(detail));
    if request.system_prompt_mode.is_some() && policy.system_prompt.is_none() {
        return refuse("`systemPromptMode` needs a `systemPrompt`".into());
    }
    if policy.system_prompt.is_some()
        && !support
            .system_prompt_modes
            .contains(&policy.system_prompt_mode)
    {
        return refuse(
            match (policy.system_prompt_mode, &support.system_prompt_modes[..]) {
                (_, []) => format!("`systemPrompt`: {agent} takes no system prompt"),
                (SystemPromptMode::Replace, _) => format!(
                    "`systemPromptMode: replace`: {agent} can only append to its own system prompt"
                ),
                (SystemPromptMode::Append, _) => format!(
                    "`systemPromptMode: append`: {agent} can only replace its own system prompt"
                ),
            },
        );
    }
    if policy.max_turns.is_some() && support.max_turns.is_none() {
        return refuse(format!("`maxTurns`: {agent} cannot limit its turns"));
    }
    if !policy.env.is_empty() && !support.env {
        return refuse(format!("`env`: {agent} takes no extra environment"));
    }
    if let Some(name) = policy
        .env
        .keys()
        .find(|name| sandbox_agents::process::is_protected_var(name))
    {
        return Err(SessionError::InvalidContent(format!(
            "`env.{name}`: the daemon sets this variable itself (or it is a credential); it cannot be given"
        )));
    }
    for (name, server) in &policy.mcp_servers {
        if !support.mcp_transports.contains(&server.transport()) {
            return refuse(match &support.mcp_transports[..] {
                [] => format!("`mcpServers`: {agent} takes no MCP servers"),
                _ => format!(
                    "`mcpServers.{name}.type`: {agent} takes no {} MCP servers",
                    serde_json::to_value(server.transport()).expect("serializes")
                ),
            });
        }
        if let McpServer::Stdio { command, .. } = server
            && !command_exists(command)
        {
            return Err(SessionError::InvalidContent(format!(
                "`mcpServers.{name}.command`: `{}` is not an executable file (give an absolute path or a program on the daemon's PATH)",
                command.escape_debug()
            )));
        }
    }
    check_tools(&policy, &support, agent, permission_mode)?;
    check_host_tools(&policy, &support, agent)?;
    Ok(policy)
}

/// Host tools need an agent the daemon's MCP server reaches, and input schemas that are
/// JSON Schemas.
fn check_host_tools(
    policy: &SessionPolicy,
    support: &PolicySupport,
    agent: &str,
) -> Result<(), SessionError> {
    if policy.host_tools.is_empty() {
        return Ok(());
    }
    if !support.host_tools {
        return Err(SessionError::Unhonoured(format!(
            "`hostTools`: {agent} cannot be handed the daemon's MCP server"
        )));
    }
    for (i, tool) in policy.host_tools.iter().enumerate() {
        if let Err(error) = jsonschema::meta::validate(&tool.input_schema) {
            return Err(SessionError::InvalidContent(format!(
                "`hostTools[{i}].inputSchema` is not a valid JSON Schema: {error}"
            )));
        }
    }
    Ok(())
}

/// Http host tools need a secret to sign their calls with (`--host-tool-secret-file`).
pub(super) fn check_signing(
    policy: &SessionPolicy,
    broker: &crate::host_tools::HostBroker,
) -> Result<(), SessionError> {
    let http = policy.host_tools.iter().position(|tool| {
        matches!(
            tool.handler,
            sandbox_universal::HostToolHandler::Http { .. }
        )
    });
    match http {
        Some(i) if !broker.caller().can_sign() => Err(SessionError::Unhonoured(format!(
            "`hostTools[{i}].handler`: http host tools need a signing secret, and this daemon has none (start it with --host-tool-secret-file)"
        ))),
        _ => Ok(()),
    }
}

/// The tools the session takes away must be ones the agent can take away; the daemon can
/// refuse a tool's calls only when the agent asks before using it.
fn check_tools(
    policy: &SessionPolicy,
    support: &PolicySupport,
    agent: &str,
    permission_mode: PermissionMode,
) -> Result<(), SessionError> {
    let lists = [
        ("allow", policy.tools.allow.as_deref().unwrap_or_default()),
        ("deny", &policy.tools.deny[..]),
    ];
    for (list, names) in lists {
        for (i, name) in names.iter().enumerate() {
            if let Ok(ToolName::Mcp { server, .. }) = name.parse::<ToolName>()
                && !policy.mcp_servers.contains_key(&server)
            {
                return Err(SessionError::InvalidContent(format!(
                    "`tools.{list}[{i}]`: no MCP server `{server}` in `mcpServers`"
                )));
            }
        }
    }
    for tool in policy.tools.removed_built_ins() {
        match support.tools.get(tool.key()) {
            None => {
                return Err(SessionError::Unhonoured(format!(
                    "`tools`: {agent} cannot take away `{tool}`"
                )));
            }
            Some(ToolRestriction::Refused) => {
                let asks = match permission_mode {
                    PermissionMode::Bypass => false,
                    PermissionMode::AcceptEdits => {
                        !matches!(tool, ToolName::Write | ToolName::Edit)
                    }
                    PermissionMode::Default | PermissionMode::Plan => true,
                };
                if !asks {
                    return Err(SessionError::Unhonoured(format!(
                        "`tools`: {agent} can only refuse `{tool}` when it asks before using it, which permission mode `{}` does not",
                        serde_json::to_value(permission_mode).expect("serializes")
                    )));
                }
            }
            Some(ToolRestriction::Removed | ToolRestriction::Absent) => {}
        }
    }
    if policy.tools.restricts_mcp()
        && !policy.mcp_servers.is_empty()
        && !support.tools.contains_key("mcp")
    {
        return Err(SessionError::Unhonoured(format!(
            "`tools`: {agent} cannot take away single MCP tools"
        )));
    }
    Ok(())
}

/// The tools whose calls the daemon must refuse itself for this agent.
pub(super) fn refused_tools(policy: &SessionPolicy, support: &PolicySupport) -> Vec<ToolName> {
    policy
        .tools
        .removed_built_ins()
        .into_iter()
        .filter(|tool| support.tools.get(tool.key()) == Some(&ToolRestriction::Refused))
        .collect()
}

/// Whether `command` names an executable file: an absolute path, or a name found on the
/// daemon's `PATH`.
fn command_exists(command: &str) -> bool {
    let executable = |path: &Path| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if command.contains('/') {
        return command.starts_with('/') && executable(Path::new(command));
    }
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| executable(&dir.join(command))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_found_on_path_or_by_absolute_path() {
        assert!(command_exists("sh"));
        assert!(command_exists("/bin/sh"));
        assert!(!command_exists("no-such-program-here"));
        assert!(!command_exists("bin/sh"));
        assert!(!command_exists("/etc/passwd"));
    }

    #[test]
    fn refused_tools_are_the_removed_ones_the_agent_cannot_remove() {
        let policy: SessionPolicy = serde_json::from_value(serde_json::json!({
            "tools": {"deny": ["write", "shell"]}
        }))
        .unwrap();
        let support = PolicySupport {
            tools: [
                ("write".to_string(), ToolRestriction::Refused),
                ("shell".to_string(), ToolRestriction::Removed),
            ]
            .into(),
            ..PolicySupport::default()
        };
        assert_eq!(refused_tools(&policy, &support), vec![ToolName::Write]);
    }
}
