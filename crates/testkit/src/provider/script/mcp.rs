//! `USE_MCP <server>/<tool>`: an MCP tool under each agent's name for it, and the
//! searches that reveal it where an agent defers it.

use serde_json::{Value, json};

use super::ToolTemplate;
use crate::provider::view::TOOL_SEARCH;

/// The text `USE_MCP` passes to the tool: `{"text": "mcp-marker"}`.
pub const MCP_TEXT: &str = "mcp-marker";
/// The final reply after an MCP call is this, then the tool's output (e.g. `mcp tool
/// said: echo:mcp-marker`), so a test sees the output reached the model.
pub const MCP_REPLY_PREFIX: &str = "mcp tool said: ";

/// The `<server>/<tool>` word after `keyword` in `prompt`, trailing punctuation
/// ignored: `USE_MCP ht/echo.` → `("ht", "echo")`.
pub fn mcp_target(prompt: &str, keyword: &str) -> Option<(String, String)> {
    let rest = &prompt[prompt.find(keyword)? + keyword.len()..];
    let word = rest.split_whitespace().next()?;
    let word = word.trim_end_matches(|c: char| !c.is_alphanumeric() && c != '_' && c != '-');
    let (server, tool) = word.split_once('/')?;
    (!server.is_empty() && !tool.is_empty()).then(|| (server.to_owned(), tool.to_owned()))
}

/// A name as the agents put it into tool names: `[^A-Za-z0-9_-]` becomes `_`.
fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The candidates of MCP tool `tool` of server `server` called with `arguments`, in
/// order of preference:
///
/// 1. `mcp__<server>__<tool>` — Claude Code, Amp and Pi (the daemon's MCP bridge
///    extension); also Codex's code mode, whose `exec` reaches MCP tools as
///    `tools.mcp__<server>__<tool>` without listing them;
/// 2. `<server>_<tool>` — OpenCode;
/// 3. `<tool>` in the namespace `mcp__<server>` — Codex (Responses), once revealed;
/// 4. `ToolSearch` `select:mcp__<server>__<tool>` — Claude Code, which defers MCP tools
///    (the next request offers the tool, candidate 1);
/// 5. `tool_search` `{query: "<server> <tool>"}` — Codex, which defers MCP tools (the
///    `tool_search_output` reveals the namespace, candidate 3).
pub fn mcp_candidates(server: &str, tool: &str, arguments: &Value) -> Vec<ToolTemplate> {
    let (server, tool) = (sanitize(server), sanitize(tool));
    let qualified = format!("mcp__{server}__{tool}");
    vec![
        ToolTemplate::json(&qualified, arguments.clone()).deferred(),
        ToolTemplate::json(&format!("{server}_{tool}"), arguments.clone()),
        ToolTemplate::json(&tool, arguments.clone()).in_namespace(&format!("mcp__{server}")),
        ToolTemplate::json(
            "ToolSearch",
            json!({"query": format!("select:{qualified}"), "max_results": 1}),
        ),
        ToolTemplate::json(
            TOOL_SEARCH,
            json!({"query": format!("{server} {tool}"), "limit": 8}),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_target_is_the_word_after_the_keyword() {
        let target = |p: &str| mcp_target(p, "USE_MCP");
        let pair = |s: &str, t: &str| Some((s.to_owned(), t.to_owned()));
        assert_eq!(target("USE_MCP ht/echo"), pair("ht", "echo"));
        assert_eq!(
            target("please USE_MCP  st/delete_everything."),
            pair("st", "delete_everything")
        );
        assert_eq!(target("USE_MCP my.srv/do-it, now"), pair("my.srv", "do-it"));
        assert_eq!(target("USE_MCP"), None);
        assert_eq!(target("USE_MCP echo"), None);
        assert_eq!(target("USE_MCP /echo"), None);
    }

    #[test]
    fn candidates_name_the_tool_in_every_dialect() {
        let args = json!({"text": MCP_TEXT});
        let candidates = mcp_candidates("my.srv", "echo", &args);
        let names: Vec<(&str, Option<&str>, bool)> = candidates
            .iter()
            .map(|c| (c.name.as_str(), c.namespace.as_deref(), c.deferred))
            .collect();
        assert_eq!(
            names,
            [
                ("mcp__my_srv__echo", None, true),
                ("my_srv_echo", None, false),
                ("echo", Some("mcp__my_srv"), false),
                ("ToolSearch", None, false),
                ("tool_search", None, false),
            ]
        );
        assert_eq!(
            candidates[3].input,
            super::super::ToolInput::Json(
                json!({"query": "select:mcp__my_srv__echo", "max_results": 1})
            )
        );
    }
}
