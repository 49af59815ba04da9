//! Reading requests of each dialect: the last turn, the offered tools, the paths.

use super::*;
use serde_json::json;

#[test]
fn anthropic_skips_system_entries_and_reminders() {
    let body = json!({
        "messages": [
            {"role": "user", "content": [
                {"type": "text", "text": "<system-reminder>USE_TOOL is not for you</system-reminder>"},
                {"type": "text", "text": "say hi"}]},
            {"role": "system", "content": "# Environment\n - Primary working directory: /tmp/w\n"}
        ],
        "tools": [{"name": "Bash", "input_schema": {"properties": {"command": {}}}}]
    });
    let view = anthropic(&body);
    assert_eq!(view.last, LastTurn::User("say hi".into()));
    assert_eq!(view.cwd.as_deref(), Some("/tmp/w"));
    assert_eq!(view.tools[0].properties, Some(vec!["command".to_owned()]));
}

#[test]
fn the_plan_file_is_read_from_claude_plan_mode_texts() {
    let new = json!({"messages": [{"role": "system", "content":
        "## Plan File Info:\nNo plan file exists yet. You should create your plan at /h/plans/a-b.md using the Write tool.\n"}]});
    assert_eq!(
        anthropic(&new).plan_file.as_deref(),
        Some("/h/plans/a-b.md")
    );
    let existing = json!({"messages": [{"role": "system", "content":
        "A plan file already exists at /h/plans/a-b.md. You can read it and make incremental edits using the Edit tool."}]});
    assert_eq!(
        anthropic(&existing).plan_file.as_deref(),
        Some("/h/plans/a-b.md")
    );
    let none = json!({"messages": [{"role": "user", "content": "say hi"}]});
    assert_eq!(anthropic(&none).plan_file, None);
}

/// A turn ending with a tool result, its output left out (see [`Blank`]).
fn after(prompt: &str, called: &[&str]) -> LastTurn {
    LastTurn::ToolResult {
        prompt: Some(prompt.to_owned()),
        called: called.iter().map(|c| (*c).to_owned()).collect(),
        output: String::new(),
    }
}

/// The last turn without the tool result's output.
trait Blank {
    fn blank(self) -> LastTurn;
}

impl Blank for LastTurn {
    fn blank(self) -> LastTurn {
        match self {
            LastTurn::ToolResult { prompt, called, .. } => LastTurn::ToolResult {
                prompt,
                called,
                output: String::new(),
            },
            other => other,
        }
    }
}

#[test]
fn anthropic_tool_result() {
    let body = json!({"messages": [
        {"role": "user", "content": "USE_TOOL"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Bash", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]}
    ]});
    assert_eq!(anthropic(&body).last.blank(), after("USE_TOOL", &["Bash"]));
}

#[test]
fn anthropic_chain_lists_the_calls_since_the_last_real_message() {
    let body = json!({"messages": [
        {"role": "user", "content": "USE_TOOL"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "Bash", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "ok"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "done"}]},
        {"role": "user", "content": "EXIT_PLAN"},
        {"role": "assistant", "content": [
            {"type": "text", "text": "searching"},
            {"type": "tool_use", "id": "s", "name": "ToolSearch", "input": {}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "s", "content": [{"type": "tool_reference", "tool_name": "ExitPlanMode"}]},
            {"type": "text", "text": "<system-reminder>plan mode</system-reminder>"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "e", "name": "ExitPlanMode", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "e", "content": "no", "is_error": true}]},
        {"role": "user", "content": [{"type": "text", "text": "<system-reminder>late</system-reminder>"}]}
    ]});
    assert_eq!(
        anthropic(&body).last.blank(),
        after("EXIT_PLAN", &["ToolSearch", "ExitPlanMode"])
    );
    let body = json!({"messages": [
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x", "content": "?"}]}
    ]});
    let orphan = LastTurn::ToolResult {
        prompt: None,
        called: Vec::new(),
        output: "?".to_owned(),
    };
    assert_eq!(anthropic(&body).last, orphan);
    let prefill = json!({"messages": [
        {"role": "user", "content": "USE_TOOL"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "Bash", "input": {}}]}
    ]});
    assert_eq!(anthropic(&prefill).last, LastTurn::Nothing);
}

#[test]
fn responses_skips_developer_and_environment_context() {
    let body = json!({
        "input": [
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "USE_TOOL"}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            {"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "<environment_context>\n  <cwd>/tmp/c</cwd>\n</environment_context>"}]}
        ],
        "tools": [{"type": "custom", "name": "apply_patch"}, {"type": "function", "name": "exec_command", "parameters": {"properties": {"cmd": {}}}}]
    });
    let view = responses(&body);
    assert_eq!(view.last, LastTurn::User("hi".into()));
    assert_eq!(view.cwd.as_deref(), Some("/tmp/c"));
    assert!(view.tools[0].freeform && !view.tools[1].freeform);
}

#[test]
fn responses_function_call_output_is_a_tool_result() {
    let body = json!({"input": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "USE_TOOL"}]},
        {"type": "function_call", "call_id": "c", "name": "exec_command", "arguments": "{}"},
        {"type": "reasoning", "summary": []},
        {"type": "function_call_output", "call_id": "c", "output": "done"},
        {"type": "custom_tool_call", "call_id": "p", "name": "apply_patch", "input": "*** Begin Patch"},
        {"type": "custom_tool_call_output", "call_id": "p", "output": "done"}
    ]});
    assert_eq!(
        responses(&body).last.blank(),
        after("USE_TOOL", &["exec_command", "apply_patch"])
    );
}

#[test]
fn chat_roles() {
    let body = json!({
        "messages": [
            {"role": "system", "content": "Working directory: /srv/x\n"},
            {"role": "user", "content": [{"type": "text", "text": "USE_TOOL now"}]}
        ],
        "tools": [{"type": "function", "function": {"name": "bash", "parameters": {"properties": {"command": {}}}}}]
    });
    let view = chat(&body);
    assert_eq!(view.last, LastTurn::User("USE_TOOL now".into()));
    assert_eq!(view.cwd.as_deref(), Some("/srv/x"));
    let body = json!({"messages": [
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "1", "type": "function", "function": {"name": "bash", "arguments": "{}"}},
            {"id": "2", "type": "function", "function": {"name": "write", "arguments": "{}"}}]},
        {"role": "tool", "content": "y"},
        {"role": "tool", "content": "z"}
    ]});
    assert_eq!(chat(&body).last.blank(), after("x", &["bash", "write"]));
}

/// What the pinned Codex sends on its default model (see the fixture's `_about`).
pub(crate) fn code_mode_capture() -> Value {
    serde_json::from_str(include_str!("../fixtures/codex-code-mode.json")).expect("fixture")
}

fn offered<'a>(view: &'a RequestView, name: &str) -> &'a OfferedTool {
    view.tools
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("{name} not offered: {:?}", view.tools))
}

#[test]
fn codex_code_mode_tools_come_in_an_additional_tools_item() {
    let capture = code_mode_capture();
    let request = &capture["request"];
    assert!(request.get("tools").is_none(), "no top-level tools");
    let view = responses(request);
    assert_eq!(view.last, LastTurn::User("USE_TOOL now".into()));
    assert_eq!(view.cwd.as_deref(), Some("/tmp/testkit/work"));
    let exec = offered(&view, "exec");
    assert!(exec.freeform && exec.via.is_none());
    assert_eq!(exec.namespace.as_deref(), Some("functions"));
    // Nested tools: reached through `exec`'s JavaScript only.
    let command = offered(&view, "exec_command");
    assert_eq!(command.via.as_deref(), Some("exec"));
    assert_eq!(command.namespace.as_deref(), Some("functions"));
    assert!(!command.freeform);
    let props = command.properties.as_ref().expect("exec_command arguments");
    assert!(props.contains(&"cmd".to_owned()) && props.contains(&"yield_time_ms".to_owned()));
    assert!(
        !props.iter().any(|p| p == "output"),
        "return fields are not arguments"
    );
    let patch = offered(&view, "apply_patch");
    assert!(patch.freeform && patch.via.as_deref() == Some("exec"));
    assert_eq!(
        offered(&view, "clock__curr_time").properties,
        Some(Vec::new())
    );
    // request_user_input is a direct function of the `functions` namespace.
    let question = offered(&view, "request_user_input");
    assert!(question.via.is_none() && !question.freeform);
    assert_eq!(question.namespace.as_deref(), Some("functions"));
    assert_eq!(offered(&view, "sleep").namespace.as_deref(), Some("clock"));
    assert!(view.tools.iter().all(|t| t.name != "functions"));
}

#[test]
fn after_a_code_mode_call_the_conversation_ends_with_its_output() {
    let capture = code_mode_capture();
    for (name, called) in [
        // A code-mode call is a call of the tools its script calls.
        ("exec_command", "exec_command"),
        ("exec_command_declined", "exec_command"),
        ("apply_patch", "apply_patch"),
        ("request_user_input", "request_user_input"),
    ] {
        let mut request = capture["request"].clone();
        let input = request["input"].as_array_mut().unwrap();
        input.extend(slice(&capture["after"][name]).iter().cloned());
        assert_eq!(
            responses(&request).last.blank(),
            after("USE_TOOL now", &[called]),
            "{name}"
        );
    }
}

#[test]
fn a_description_without_declarations_reaches_no_tools() {
    assert!(code_mode_tools("exec", "Runs JavaScript.").is_empty());
    let one = "### `ping`\nPings.\n\nexec tool declaration:\n```ts\ndeclare const tools: { ping(input: string): Promise<unknown>; };\n```\n### `nothing`\nNo declaration.";
    let tools = code_mode_tools("run", one);
    assert_eq!(tools.len(), 1);
    assert!(tools[0].freeform && tools[0].via.as_deref() == Some("run"));
}

#[test]
fn anthropic_user_text_merged_after_a_tool_result_is_the_last_turn() {
    let body = json!({"messages": [
        {"role": "user", "content": "LOOP_TOOLS"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Bash", "input": {}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t", "content": "ok"},
            {"type": "text", "text": "<system-reminder>x</system-reminder>"},
            {"type": "text", "text": "say hi"}]}
    ]});
    assert_eq!(anthropic(&body).last, LastTurn::User("say hi".into()));
    let loaded = json!({"messages": [
        {"role": "user", "content": "USE_MCP st/echo"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "ToolSearch", "input": {}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "tool_reference", "tool_name": "mcp__st__echo"}]},
            {"type": "text", "text": "Tool loaded."}]}
    ]});
    assert!(matches!(
        anthropic(&loaded).last,
        LastTurn::ToolResult { .. }
    ));
}

#[test]
fn anthropic_text_after_tool_results_is_a_new_user_turn() {
    let body = json!({"messages": [
        {"role": "user", "content": "LOOP_TOOLS"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "bash", "input": {}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t", "content": "aborted", "is_error": true},
            {"type": "text", "text": "say hi"},
        ]},
    ]});
    assert_eq!(anthropic(&body).last, LastTurn::User("say hi".into()));
}
