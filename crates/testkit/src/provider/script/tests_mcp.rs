//! `USE_MCP` in every agent's dialect, and `LOOP_TOOLS`.

use serde_json::{Value, json};

use super::*;
use crate::provider::view::{self, OfferedTool};

fn offered(name: &str) -> OfferedTool {
    OfferedTool {
        name: name.to_owned(),
        properties: Some(vec![
            "text".to_owned(),
            "command".to_owned(),
            "query".to_owned(),
            "max_results".to_owned(),
            "description".to_owned(),
            "cmd".to_owned(),
        ]),
        ..OfferedTool::default()
    }
}

fn view(last: LastTurn, tools: &[&str]) -> RequestView {
    RequestView {
        last,
        tools: tools.iter().map(|t| offered(t)).collect(),
        cwd: None,
        plan_file: None,
    }
}

fn after(prompt: &str, called: &[&str], output: &str) -> LastTurn {
    LastTurn::ToolResult {
        prompt: Some(prompt.to_owned()),
        called: called.iter().map(|c| (*c).to_owned()).collect(),
        output: output.to_owned(),
    }
}

fn marker() -> ToolInput {
    ToolInput::Json(json!({"text": MCP_TEXT}))
}

const PROMPT: &str = "please USE_MCP ht/echo now";
const QUOTED: &str = "mcp tool said: echo:mcp-marker";

#[test]
fn a_direct_mcp_tool_is_called_and_its_output_quoted() {
    let script = Script::default();
    for name in ["mcp__ht__echo", "ht_echo"] {
        let plan = script.plan(&view(
            LastTurn::User(PROMPT.into()),
            &["Bash", "bash", name],
        ));
        assert_eq!(plan.label, format!("tool:{name}"));
        assert_eq!(plan.tool.unwrap().input, marker());
        let done = script.plan(&view(after(PROMPT, &[name], " echo:mcp-marker\n"), &[name]));
        assert_eq!(done.text.as_deref(), Some(QUOTED));
    }
    // Another server's tool, or no target: plain text.
    let other = script.plan(&view(LastTurn::User(PROMPT.into()), &["mcp__st__echo"]));
    assert_eq!(other.label, "text");
    let bare = script.plan(&view(LastTurn::User("USE_MCP".into()), &["mcp__ht__echo"]));
    assert_eq!(bare.label, "text");
}

#[test]
fn claude_loads_the_deferred_tool_with_tool_search_first() {
    let script = Script::default();
    let first = script.plan(&view(
        LastTurn::User(PROMPT.into()),
        &["Bash", "ToolSearch"],
    ));
    assert_eq!(first.label, "tool:ToolSearch");
    assert_eq!(
        first.tool.unwrap().input,
        ToolInput::Json(json!({"query": "select:mcp__ht__echo", "max_results": 1}))
    );
    let loaded = ["Bash", "ToolSearch", "mcp__ht__echo"];
    let second = script.plan(&view(after(PROMPT, &["ToolSearch"], ""), &loaded));
    assert_eq!(second.label, "tool:mcp__ht__echo (chained)");
    assert_eq!(second.tool.unwrap().input, marker());
    let third = script.plan(&view(
        after(PROMPT, &["ToolSearch", "mcp__ht__echo"], "echo:mcp-marker"),
        &loaded,
    ));
    assert_eq!(third.text.as_deref(), Some(QUOTED));
}

/// A Responses request of Codex on a classic model: the user's prompt, then `items`.
fn codex_request(items: Vec<Value>) -> RequestView {
    let mut input = vec![json!({"type": "message", "role": "user",
                                "content": [{"type": "input_text", "text": PROMPT}]})];
    input.extend(items);
    view::responses(&json!({
        "input": input,
        "tools": [
            {"type": "function", "name": "exec_command", "parameters": {"properties": {"cmd": {}}}},
            {"type": "tool_search", "execution": "client",
             "parameters": {"properties": {"query": {}, "limit": {}}}}
        ]
    }))
}

#[test]
fn codex_searches_then_calls_the_namespaced_tool() {
    let script = Script::default();
    let first = script.plan(&codex_request(Vec::new()));
    assert_eq!(first.label, "tool:tool_search");
    let search = first.tool.unwrap();
    assert_eq!(
        search.input,
        ToolInput::Search(json!({"query": "ht echo", "limit": 8}))
    );
    let searched = vec![
        json!({"type": "tool_search_call", "call_id": "s", "execution": "client",
               "arguments": {"query": "ht echo", "limit": 8}}),
        json!({"type": "tool_search_output", "call_id": "s", "execution": "client",
               "tools": [{"type": "namespace", "name": "mcp__ht", "description": "",
                          "tools": [{"type": "function", "name": "echo", "defer_loading": true,
                                     "parameters": {"properties": {"text": {}}}}]}]}),
    ];
    let second = script.plan(&codex_request(searched.clone()));
    assert_eq!(second.label, "tool:echo (chained)");
    let call = second.tool.unwrap();
    assert_eq!(call.namespace.as_deref(), Some("mcp__ht"));
    assert_eq!(call.input, marker());
    let mut called = searched;
    called.extend([
        json!({"type": "function_call", "call_id": "c", "namespace": "mcp__ht", "name": "echo",
               "arguments": "{\"text\":\"mcp-marker\"}"}),
        json!({"type": "function_call_output", "call_id": "c",
               "output": [{"type": "input_text", "text": "echo:mcp-marker"}]}),
    ]);
    let third = script.plan(&codex_request(called));
    assert_eq!(third.text.as_deref(), Some(QUOTED));
}

#[test]
fn codex_code_mode_reaches_the_deferred_tool_from_javascript() {
    let mut request = view::tests::code_mode_capture()["request"].clone();
    let input = request["input"].as_array_mut().unwrap();
    input.last_mut().unwrap()["content"][0]["text"] = json!(PROMPT);
    let plan = Script::default().plan(&view::responses(&request));
    assert_eq!(plan.label, "tool:exec(mcp__ht__echo)");
    let tool = plan.tool.unwrap();
    assert_eq!(tool.namespace.as_deref(), Some("functions"));
    assert_eq!(
        tool.input,
        ToolInput::Freeform(
            "const result = await tools.mcp__ht__echo({\"text\":\"mcp-marker\"});\ntext(result);\n"
                .to_owned()
        )
    );
}

#[test]
fn loop_tools_calls_the_shell_after_every_result() {
    let script = Script::default();
    let prompt = "LOOP_TOOLS please";
    let first = script.plan(&view(LastTurn::User(prompt.into()), &["Bash", "Read"]));
    assert_eq!(first.label, "tool:Bash");
    assert_eq!(
        first.tool.unwrap().input,
        ToolInput::Json(json!({"command": LOOP_COMMAND, "description": "One more loop step"}))
    );
    for n in 1..5 {
        let called = vec!["Bash"; n];
        let next = script.plan(&view(
            after(prompt, &called, "loop-step"),
            &["Bash", "Read"],
        ));
        assert_eq!(next.label, "tool:Bash (loop)", "after {n} calls");
    }
    let codex = script.plan(&view(
        after(prompt, &["exec_command"], ""),
        &["exec_command"],
    ));
    assert_eq!(
        codex.tool.unwrap().input,
        ToolInput::Json(json!({"cmd": LOOP_COMMAND}))
    );
}
