//! Each dialect's replies: Anthropic Messages, Responses (with Codex's code mode), Chat
//! Completions.

use sandbox_testkit::provider::{FakeProvider, REDACTED};
use serde_json::{Value, json};

use super::*;

#[tokio::test]
async fn anthropic_stream_text_then_tool_then_final_text() {
    let provider = FakeProvider::start().await.unwrap();
    let body = post(
        &provider,
        "/v1/messages?beta=true",
        anthropic_request("say hi", true),
    )
    .await
    .text()
    .await
    .unwrap();
    let names: Vec<String> = frames(&body).into_iter().map(|(e, _)| e).collect();
    assert_eq!(names.first().map(String::as_str), Some("message_start"));
    assert_eq!(names.last().map(String::as_str), Some("message_stop"));
    let text: String = json_frames(&body)
        .iter()
        .filter_map(|f| f["delta"]["text"].as_str())
        .collect();
    assert_eq!(text, "hello from fake model");

    let body = post(
        &provider,
        "/v1/messages",
        anthropic_request("USE_WRITE", true),
    )
    .await
    .text()
    .await
    .unwrap();
    let args: String = json_frames(&body)
        .iter()
        .filter_map(|f| f["delta"]["partial_json"].as_str())
        .collect();
    let args: Value = serde_json::from_str(&args).unwrap();
    assert_eq!(
        args["file_path"], "/tmp/w/fake_written.txt",
        "cwd comes from the system entry"
    );
    assert!(body.contains(r#""stop_reason":"tool_use""#));

    let mut after = anthropic_request("USE_WRITE", false);
    after["messages"].as_array_mut().unwrap().extend([
        json!({"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Write", "input": {}}]}),
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}),
    ]);
    let message: Value = post(&provider, "/v1/messages", after)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        message["content"][0]["text"],
        "tool finished; hello from fake model"
    );
    assert_eq!(message["stop_reason"], "end_turn");

    let requests = provider.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0].path, "/v1/messages?beta=true");
    assert_eq!(requests[0].headers["x-api-key"], REDACTED);
    assert_eq!(requests[1].reply, "tool:Write");
    assert_eq!(requests[2].body["model"], "claude-test");
}

#[tokio::test]
async fn anthropic_count_tokens_models_head_and_unknown_paths() {
    let provider = FakeProvider::start().await.unwrap();
    let count: Value = post(
        &provider,
        "/v1/messages/count_tokens",
        json!({"messages": []}),
    )
    .await
    .json()
    .await
    .unwrap();
    assert!(count["input_tokens"].as_u64().is_some());
    let models: Value = client()
        .get(format!("{}/v1/models", provider.base_url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        models["data"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["id"] == "fake-model")
    );
    let head = client().head(provider.base_url()).send().await.unwrap();
    assert!(head.status().is_success());
    let missing = post(&provider, "/api/internal?getUserInfo", json!({})).await;
    assert_eq!(missing.status(), 404);
    let routes: Vec<String> = provider.requests().into_iter().map(|r| r.reply).collect();
    assert_eq!(routes, ["count", "models", "ok", "not-found"]);
    assert!(provider.model_requests().is_empty());
    provider.clear_requests();
    assert!(provider.requests().is_empty());
}

#[tokio::test]
async fn responses_stream_freeform_patch_and_reasoning() {
    let provider = FakeProvider::start().await.unwrap();
    let request = |text: &str| {
        json!({"model": "gpt-5.5", "stream": true,
               "input": [{"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "USE_TOOL"}]},
                         {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}],
               "tools": [{"type": "function", "name": "exec_command", "parameters": {"properties": {"cmd": {}}}},
                         {"type": "custom", "name": "apply_patch"}]})
    };
    let body = post(&provider, "/v1/responses", request("USE_WRITE"))
        .await
        .text()
        .await
        .unwrap();
    let events = json_frames(&body);
    let done: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "response.output_item.done")
        .collect();
    assert_eq!(done.len(), 1);
    assert_eq!(done[0]["item"]["type"], "custom_tool_call");
    assert!(
        done[0]["item"]["input"]
            .as_str()
            .unwrap()
            .starts_with("*** Begin Patch")
    );
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "response.custom_tool_call_input.delta")
    );
    let completed = events.last().unwrap();
    assert_eq!(completed["type"], "response.completed");
    assert!(completed["response"]["id"].is_string() && completed["response"]["usage"].is_object());

    let body = post(&provider, "/v1/responses", request("THINK"))
        .await
        .text()
        .await
        .unwrap();
    let kinds: Vec<String> = json_frames(&body)
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_owned())
        .collect();
    let first_reasoning = kinds
        .iter()
        .position(|k| k == "response.reasoning_summary_text.delta")
        .unwrap();
    let first_text = kinds
        .iter()
        .position(|k| k == "response.output_text.delta")
        .unwrap();
    assert!(first_reasoning < first_text, "{kinds:?}");
}

/// The pinned Codex's first request on its default model (code mode), with `prompt`.
fn code_mode_request(prompt: &str) -> Value {
    let capture: Value = serde_json::from_str(include_str!(
        "../../src/provider/fixtures/codex-code-mode.json"
    ))
    .unwrap();
    let mut request = capture["request"].clone();
    let input = request["input"].as_array_mut().unwrap();
    input.last_mut().unwrap()["content"][0]["text"] = json!(prompt);
    request
}

#[tokio::test]
async fn responses_code_mode_calls_exec_with_javascript() {
    let provider = FakeProvider::start().await.unwrap();
    let body = post(
        &provider,
        "/v1/responses",
        code_mode_request("USE_TOOL now"),
    )
    .await
    .text()
    .await
    .unwrap();
    let events = json_frames(&body);
    let done: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "response.output_item.done")
        .collect();
    assert_eq!(done.len(), 1);
    let call = &done[0]["item"];
    assert_eq!(call["type"], "custom_tool_call");
    assert_eq!(call["name"], "exec");
    assert_eq!(call["namespace"], "functions");
    let source = call["input"].as_str().unwrap();
    assert!(
        source.starts_with("const result = await tools.exec_command({\"cmd\":\"echo fake-tool-ran"),
        "{source}"
    );
    let streamed: String = events
        .iter()
        .filter(|e| e["type"] == "response.custom_tool_call_input.delta")
        .map(|e| e["delta"].as_str().unwrap())
        .collect();
    assert_eq!(streamed, source);

    let body = post(
        &provider,
        "/v1/responses",
        code_mode_request("ASK_QUESTION"),
    )
    .await
    .text()
    .await
    .unwrap();
    let events = json_frames(&body);
    let call = &events
        .iter()
        .find(|e| e["type"] == "response.output_item.done")
        .unwrap()["item"];
    assert_eq!(call["type"], "function_call");
    assert_eq!(
        (&call["name"], &call["namespace"]),
        (&json!("request_user_input"), &json!("functions"))
    );
    let replies: Vec<String> = provider.requests().into_iter().map(|r| r.reply).collect();
    assert_eq!(
        replies,
        ["tool:exec(exec_command)", "tool:request_user_input"]
    );
}

#[tokio::test]
async fn chat_stream_tool_calls_usage_and_done() {
    let provider = FakeProvider::start().await.unwrap();
    let tools = json!([{"type": "function", "function": {"name": "bash",
                        "parameters": {"properties": {"command": {}, "description": {}}}}}]);
    let request = json!({"model": "fake-model", "stream": true, "stream_options": {"include_usage": true},
                         "messages": [{"role": "system", "content": "x"}, {"role": "user", "content": "USE_TOOL now"}],
                         "tools": tools});
    let body = post(&provider, "/v1/chat/completions", request)
        .await
        .text()
        .await
        .unwrap();
    assert!(body.trim_end().ends_with("data: [DONE]"));
    let chunks = json_frames(&body);
    let calls: Vec<&Value> = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["tool_calls"].get(0))
        .collect();
    assert!(calls.iter().all(|c| c["index"] == 0));
    assert_eq!(calls[0]["function"]["name"], "bash");
    let args: String = calls
        .iter()
        .filter_map(|c| c["function"]["arguments"].as_str())
        .collect();
    assert!(
        serde_json::from_str::<Value>(&args).unwrap()["command"]
            .as_str()
            .unwrap()
            .contains("fake-tool-ran")
    );
    assert!(
        chunks
            .iter()
            .any(|c| c["choices"][0]["finish_reason"] == "tool_calls")
    );
    assert!(
        chunks
            .iter()
            .any(|c| c["usage"]["total_tokens"].is_number())
    );

    let title = json!({"model": "fake-model", "stream": false,
                       "messages": [{"role": "user", "content": "Generate a title: USE_TOOL now"}]});
    let completion: Value = post(&provider, "/v1/chat/completions", title)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        completion["choices"][0]["message"]["content"], "hello from fake model",
        "no tools, no tool call"
    );
}

#[tokio::test]
async fn responses_tool_search_call_then_namespaced_function_call() {
    let provider = FakeProvider::start().await.unwrap();
    let user = json!({"type": "message", "role": "user",
                      "content": [{"type": "input_text", "text": "USE_MCP ht/echo"}]});
    let tools = json!([{"type": "tool_search", "execution": "client",
                        "parameters": {"properties": {"query": {}, "limit": {}}}}]);
    let body = post(
        &provider,
        "/v1/responses",
        json!({"model": "gpt-test", "stream": true, "input": [user], "tools": tools}),
    )
    .await
    .text()
    .await
    .unwrap();
    let done: Vec<Value> = json_frames(&body)
        .into_iter()
        .filter(|f| f["type"] == "response.output_item.done")
        .map(|f| f["item"].clone())
        .collect();
    assert_eq!(done.len(), 1);
    let search = &done[0];
    assert_eq!(search["type"], "tool_search_call");
    assert_eq!(search["execution"], "client");
    assert_eq!(search["arguments"], json!({"query": "ht echo", "limit": 8}));
    assert!(search["call_id"].is_string());

    let revealed = json!({"type": "tool_search_output", "call_id": search["call_id"],
        "execution": "client", "status": "completed",
        "tools": [{"type": "namespace", "name": "mcp__ht", "description": "",
                   "tools": [{"type": "function", "name": "echo", "parameters": {"properties": {"text": {}}}}]}]});
    let input = json!([user, search, revealed]);
    let completed: Value = post(
        &provider,
        "/v1/responses",
        json!({"model": "gpt-test", "stream": false, "input": input, "tools": tools}),
    )
    .await
    .json()
    .await
    .unwrap();
    let call = &completed["output"][0];
    assert_eq!(call["type"], "function_call");
    assert_eq!(call["namespace"], "mcp__ht");
    assert_eq!(call["name"], "echo");
    assert_eq!(call["arguments"], r#"{"text":"mcp-marker"}"#);
    let replies: Vec<String> = provider.requests().into_iter().map(|r| r.reply).collect();
    assert_eq!(replies, ["tool:tool_search", "tool:echo (chained)"]);
}
