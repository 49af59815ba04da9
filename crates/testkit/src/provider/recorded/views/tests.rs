//! The views of recorded requests, one dialect at a time.

use serde_json::{Value, json};

use super::*;

fn request(route: &str, body: Value) -> RecordedRequest {
    RecordedRequest {
        method: "POST".to_owned(),
        path: route.to_owned(),
        headers: Default::default(),
        body,
        reply: "text".to_owned(),
        key: None,
    }
}

const PNG: &str = "iVBORw0KGgo=";

#[test]
fn anthropic_system_images_results_and_deferred_tools() {
    let body = json!({
        "system": [{"type": "text", "text": "You are Claude."}, {"type": "text", "text": "MARKER-1"}],
        "messages": [
            {"role": "user", "content": [
                {"type": "text", "text": "look"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
                {"type": "image", "source": {"type": "url", "url": "https://img/x.png"}}]},
            {"role": "system", "content": "The following deferred tools are now available via ToolSearch. Their schemas are NOT loaded. Use ToolSearch with query \"select:<name>\":\nWebFetch\nmcp__ht__echo\n\nAvailable agent types: ..."},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "mcp__ht__echo", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
                "content": [{"type": "text", "text": "echo:mcp-marker"}]}]}
        ],
        "tools": [{"name": "Bash", "input_schema": {}}, {"name": "ToolSearch", "input_schema": {}}]
    });
    let request = request("/v1/messages?beta=true", body);
    assert_eq!(
        request
            .system_text()
            .split("\n\n")
            .take(2)
            .collect::<Vec<_>>(),
        [
            "You are Claude.\nMARKER-1",
            "The following deferred tools are now available via ToolSearch. Their schemas are NOT loaded. Use ToolSearch with query \"select:<name>\":\nWebFetch\nmcp__ht__echo"
        ]
    );
    let images = request.images();
    assert_eq!(images.len(), 2);
    assert_eq!(
        (images[0].media_type.as_str(), images[0].data.as_str()),
        ("image/png", PNG)
    );
    assert_eq!(images[0].bytes().unwrap()[..4], [0x89, b'P', b'N', b'G']);
    assert_eq!(images[1].reference.as_deref(), Some("https://img/x.png"));
    assert_eq!(request.tool_results(), ["echo:mcp-marker"]);
    assert_eq!(
        request.tool_names(),
        [
            "Bash",
            "ToolSearch",
            "deferred:WebFetch",
            "deferred:mcp__ht__echo"
        ]
    );
    assert!(request.offers_tool("deferred:mcp__ht__echo") && !request.offers_tool("mcp__ht__echo"));
}

#[test]
fn responses_instructions_developer_messages_images_and_outputs() {
    let body = json!({
        "instructions": "base instructions",
        "input": [
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "MARKER-2"}]},
            {"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "<environment_context>…</environment_context>"}]},
            {"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "what is this"},
                {"type": "input_image", "image_url": format!("data:image/jpeg;base64,{PNG}")},
                {"type": "input_image", "file_id": "file-1"}]},
            {"type": "tool_search_call", "call_id": "s", "execution": "client", "arguments": {"query": "ht echo"}},
            {"type": "tool_search_output", "call_id": "s", "execution": "client", "status": "completed",
             "tools": [{"type": "namespace", "name": "mcp__ht", "description": "",
                        "tools": [{"type": "function", "name": "echo", "defer_loading": true,
                                   "parameters": {"properties": {"text": {}}}}]}]},
            {"type": "function_call", "call_id": "c", "namespace": "mcp__ht", "name": "echo", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c",
             "output": [{"type": "input_text", "text": "echo:mcp-marker"}]},
            {"type": "custom_tool_call_output", "call_id": "d", "output": "Script completed"}
        ],
        "tools": [
            {"type": "function", "name": "exec_command", "parameters": {}},
            {"type": "tool_search", "execution": "client", "parameters": {"properties": {"query": {}, "limit": {}}}}
        ]
    });
    let request = request("/v1/responses", body);
    assert_eq!(request.system_text(), "base instructions\n\nMARKER-2");
    let images = request.images();
    assert_eq!(images[0].media_type, "image/jpeg");
    assert_eq!(images[0].data, PNG);
    assert_eq!(images[1].reference.as_deref(), Some("file-1"));
    assert_eq!(
        request.tool_results(),
        ["echo:mcp-marker", "Script completed"]
    );
    assert_eq!(
        request.tool_names(),
        ["exec_command", "tool_search", "mcp__ht.echo"]
    );
}

#[test]
fn code_mode_tools_are_named_through_exec() {
    let request = request(
        "/v1/responses",
        crate::provider::view::tests::code_mode_capture()["request"].clone(),
    );
    let names = request.tool_names();
    for name in [
        "functions.exec",
        "exec(exec_command)",
        "exec(apply_patch)",
        "functions.request_user_input",
    ] {
        assert!(names.iter().any(|n| n == name), "{name} not in {names:?}");
    }
}

#[test]
fn chat_system_images_and_tool_messages() {
    let body = json!({
        "messages": [
            {"role": "system", "content": "You are OpenCode."},
            {"role": "system", "content": [{"type": "text", "text": "MARKER-3"}]},
            {"role": "user", "content": [
                {"type": "text", "text": "see"},
                {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PNG}")}}]},
            {"role": "assistant", "tool_calls": [{"id": "1", "type": "function",
                "function": {"name": "ht_echo", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "1", "content": "echo:mcp-marker"}
        ],
        "tools": [{"type": "function", "function": {"name": "ht_echo", "parameters": {}}}]
    });
    let request = request("/chat/completions", body);
    assert_eq!(request.system_text(), "You are OpenCode.\n\nMARKER-3");
    assert_eq!(request.images()[0].data, PNG);
    assert_eq!(request.tool_results(), ["echo:mcp-marker"]);
    assert_eq!(request.tool_names(), ["ht_echo"]);
}

#[test]
fn other_routes_keep_the_plain_tool_names() {
    let request = request(
        "/v1/other",
        json!({"tools": [{"name": "a"}, {"function": {"name": "b"}}]}),
    );
    assert_eq!(request.tool_names(), ["a", "b"]);
    assert!(request.system_text().is_empty() && request.images().is_empty());
}
