//! MCP tool names as Claude Code, Amp and the daemon's Pi bridge put them to the model:
//! `mcp__<server>__<tool>`, and back to the session MCP server and tool they belong to.

use sandbox_universal::McpToolRef;

/// The model's name of tool `tool` of MCP server `server`: `mcp__<server>__<tool>`.
pub fn tool_name(server: &str, tool: &str) -> String {
    format!("mcp__{server}__{tool}")
}

/// The session MCP server and tool a tool name (`mcp__<server>__<tool>`) belongs to.
/// Server names may hold `_`, so the session's own server names decide the split (the
/// longest that fits).
pub fn tool_ref<'a>(
    name: &str,
    servers: impl IntoIterator<Item = &'a String>,
) -> Option<McpToolRef> {
    let rest = name.strip_prefix("mcp__")?;
    servers
        .into_iter()
        .filter_map(|server| {
            let tool = rest.strip_prefix(server.as_str())?.strip_prefix("__")?;
            (!tool.is_empty()).then(|| McpToolRef {
                server: server.clone(),
                tool: tool.to_string(),
            })
        })
        .max_by_key(|found| found.server.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_on_the_session_servers_longest_first() {
        let servers = ["a".to_string(), "a__b".to_string(), "x-y".to_string()];
        let found = |name| tool_ref(name, &servers).map(|r| (r.server, r.tool));
        assert_eq!(
            found("mcp__a__b__echo"),
            Some(("a__b".into(), "echo".into()))
        );
        assert_eq!(found("mcp__a__echo"), Some(("a".into(), "echo".into())));
        assert_eq!(
            found("mcp__x-y__do_it"),
            Some(("x-y".into(), "do_it".into()))
        );
        assert_eq!(found("mcp__a__"), None);
        assert_eq!(found("mcp__other__echo"), None);
        assert_eq!(found("Bash"), None);
        assert_eq!(tool_name("x-y", "do_it"), "mcp__x-y__do_it");
    }
}
