//! The fake provider over real HTTP on 127.0.0.1 (no agent, no namespace needed).

use std::time::{Duration, Instant};

use sandbox_testkit::provider::script::{
    AFTER_TOOL_TEXT, EXIT_PLAN_SEARCH, FLAKY_MESSAGE, PLAN_TEXT, REFUSAL_MESSAGE, REPLY_TEXT,
};
use sandbox_testkit::provider::{
    BAD_KEY_MARKER, Effect, FakeProvider, REDACTED, Script, ToolTemplate,
};
use serde_json::{Value, json};

fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

/// `(event name, data)` pairs of an SSE body.
fn frames(body: &str) -> Vec<(String, String)> {
    body.split("\n\n")
        .filter(|f| !f.trim().is_empty())
        .map(|frame| {
            let mut event = String::new();
            let mut data = String::new();
            for line in frame.lines() {
                if let Some(e) = line.strip_prefix("event: ") {
                    event = e.to_owned();
                } else if let Some(d) = line.strip_prefix("data: ") {
                    data = d.to_owned();
                }
            }
            (event, data)
        })
        .collect()
}

fn json_frames(body: &str) -> Vec<Value> {
    frames(body)
        .into_iter()
        .filter_map(|(_, d)| serde_json::from_str(&d).ok())
        .collect()
}

async fn post(provider: &FakeProvider, path: &str, body: Value) -> reqwest::Response {
    client()
        .post(format!("{}{path}", provider.base_url()))
        .header("x-api-key", "sk-secret")
        .json(&body)
        .send()
        .await
        .unwrap()
}

fn anthropic_request(text: &str, stream: bool) -> Value {
    json!({
        "model": "claude-test", "stream": stream, "max_tokens": 100,
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": text}]},
            {"role": "system", "content": "# Environment\n - Primary working directory: /tmp/w\n"}
        ],
        "tools": [{"name": "Bash", "input_schema": {"properties": {"command": {}, "description": {}}}},
                  {"name": "Write", "input_schema": {"properties": {"file_path": {}, "content": {}}}}]
    })
}

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
        "../src/provider/fixtures/codex-code-mode.json"
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
async fn fail_answers_500_with_no_retry_headers() {
    let provider = FakeProvider::start().await.unwrap();
    let response = post(
        &provider,
        "/v1/messages",
        anthropic_request("FAIL now", true),
    )
    .await;
    assert_eq!(response.status(), 500);
    assert_eq!(response.headers()["x-should-retry"], "false");
    assert_eq!(response.headers()["retry-after-ms"], "0");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["type"], "error");
    assert_eq!(provider.requests()[0].reply, "error:500");
}

/// A one-message request in each dialect: `(path, body)`, Anthropic first.
fn dialect_requests(text: &str) -> [(&'static str, Value); 3] {
    [
        ("/v1/messages", anthropic_request(text, true)),
        (
            "/v1/responses",
            json!({"model": "gpt-5.5", "stream": true,
                   "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}],
                   "tools": [{"type": "function", "name": "exec_command", "parameters": {"properties": {"cmd": {}}}}]}),
        ),
        (
            "/v1/chat/completions",
            json!({"model": "fake-model", "stream": true,
                   "messages": [{"role": "user", "content": text}],
                   "tools": [{"type": "function", "function": {"name": "bash", "parameters": {}}}]}),
        ),
    ]
}

#[tokio::test]
async fn refuse_answers_400_in_each_apis_own_error_shape() {
    let provider = FakeProvider::start().await.unwrap();
    for (path, request) in dialect_requests("REFUSE this") {
        let response = post(&provider, path, request).await;
        assert_eq!(response.status(), 400, "{path}");
        assert_ne!(
            response
                .headers()
                .get("x-should-retry")
                .and_then(|v| v.to_str().ok()),
            Some("true"),
            "{path}"
        );
        assert!(response.headers().get("retry-after-ms").is_none(), "{path}");
        assert!(response.headers().get("retry-after").is_none(), "{path}");
        let body: Value = response.json().await.unwrap();
        let expected = if path == "/v1/messages" {
            json!({"type": "error", "error": {"type": "invalid_request_error", "message": REFUSAL_MESSAGE}})
        } else {
            json!({"error": {"message": REFUSAL_MESSAGE, "type": "invalid_request_error",
                             "param": null, "code": null}})
        };
        assert_eq!(body, expected, "{path}");
    }
    let replies: Vec<String> = provider.requests().into_iter().map(|r| r.reply).collect();
    assert_eq!(replies, ["error:400"; 3]);
}

#[tokio::test]
async fn flaky_fails_the_first_call_of_a_prompt_with_retry_headers() {
    let provider = FakeProvider::start().await.unwrap();
    for i in 0..3 {
        // A prompt per dialect: the provider remembers prompts, whatever the dialect.
        let (path, request) = dialect_requests(&format!("FLAKY please {i}"))[i].clone();
        let anthropic = path == "/v1/messages";
        let failed = post(&provider, path, request.clone()).await;
        assert_eq!(failed.status(), if anthropic { 529 } else { 503 }, "{path}");
        assert_eq!(failed.headers()["x-should-retry"], "true");
        let delay: u64 = failed.headers()["retry-after-ms"]
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!((1..=1000).contains(&delay), "{delay}");
        let body: Value = failed.json().await.unwrap();
        if anthropic {
            assert_eq!(body["type"], "error");
            assert_eq!(body["error"]["type"], "overloaded_error");
            assert_eq!(body["error"]["message"], FLAKY_MESSAGE);
        } else {
            assert_eq!(body["error"]["type"], "server_error");
            assert_eq!(body["error"]["message"], FLAKY_MESSAGE);
            assert_eq!(body["error"]["code"], Value::Null);
        }
        // The retry of the same prompt streams the normal reply.
        let retried = post(&provider, path, request).await;
        assert_eq!(retried.status(), 200, "{path}");
        let text = retried.text().await.unwrap();
        let joined: String = json_frames(&text)
            .iter()
            .filter_map(|f| {
                f["delta"]["text"]
                    .as_str()
                    .or_else(|| f["delta"].as_str())
                    .or_else(|| f["choices"][0]["delta"]["content"].as_str())
            })
            .collect();
        assert_eq!(joined, REPLY_TEXT, "{path}");
    }
    // Another provider has its own memory: the prompt fails there again.
    let fresh = FakeProvider::start().await.unwrap();
    let [(path, request), ..] = dialect_requests("FLAKY please 0");
    assert_eq!(post(&fresh, path, request).await.status(), 529);
}

#[tokio::test]
async fn flaky_failures_are_recorded_with_their_label() {
    let provider = FakeProvider::start().await.unwrap();
    let [(anthropic, a), (responses, r), _] = dialect_requests("FLAKY one");
    post(&provider, anthropic, a.clone()).await;
    post(&provider, anthropic, a).await;
    let [_, _, (chat, c)] = dialect_requests("FLAKY two");
    post(&provider, chat, c.clone()).await;
    post(&provider, chat, c).await;
    // Same prompt as the Anthropic one: already failed once in this provider.
    post(&provider, responses, r).await;
    let replies: Vec<String> = provider
        .model_requests()
        .into_iter()
        .map(|r| r.reply)
        .collect();
    assert_eq!(
        replies,
        [
            "error:529 (once)",
            "text",
            "error:503 (once)",
            "text",
            "text"
        ]
    );
}

#[tokio::test]
async fn custom_rules_and_pacing() {
    let script = Script::default()
        .with_rule("DAWDLE", Effect::Pace(Duration::from_millis(400)))
        .with_rule("GREET", Effect::Say("greetings".into()));
    let provider = FakeProvider::builder()
        .script(script)
        .start()
        .await
        .unwrap();
    let started = Instant::now();
    let body = post(&provider, "/v1/messages", anthropic_request("DAWDLE", true))
        .await
        .text()
        .await
        .unwrap();
    assert!(
        started.elapsed() >= Duration::from_millis(350),
        "{:?}",
        started.elapsed()
    );
    assert!(body.contains("slow "));
    let message: Value = post(&provider, "/v1/messages", anthropic_request("GREET", false))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(message["content"][0]["text"], "greetings");
}

/// The tool call of a non-streamed Anthropic reply: `(name, input)`, or the text.
async fn anthropic_call(provider: &FakeProvider, body: &Value) -> Result<(String, Value), String> {
    let message: Value = post(provider, "/v1/messages", body.clone())
        .await
        .json()
        .await
        .unwrap();
    let block = &message["content"][0];
    match block["type"].as_str() {
        Some("tool_use") => Ok((
            block["name"].as_str().unwrap().into(),
            block["input"].clone(),
        )),
        _ => Err(block["text"].as_str().unwrap_or_default().into()),
    }
}

/// Claude Code's plan mode, shaped as the pinned CLI sends it: the plan file named in a
/// system entry, `ExitPlanMode` offered only after `ToolSearch` loaded it.
#[tokio::test]
async fn exit_plan_chains_write_search_and_the_revealed_tool() {
    let provider = FakeProvider::start().await.unwrap();
    let plan_file = "/h/.claude/plans/fake-plan.md";
    let mut body = json!({
        "model": "claude-test", "max_tokens": 100,
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "EXIT_PLAN please"}]},
            {"role": "system", "content": format!("Plan mode is active.\n## Plan File Info:\nNo plan file exists yet. You should create your plan at {plan_file} using the Write tool.\n")}
        ],
        "tools": [
            {"name": "Write", "input_schema": {"properties": {"file_path": {}, "content": {}}}},
            {"name": "ToolSearch", "input_schema": {"properties": {"query": {}, "max_results": {}}}}
        ]
    });
    let answer = |body: &mut Value, id: &str, name: &str, revealed: Option<Value>| {
        let messages = body["messages"].as_array_mut().unwrap();
        messages.push(json!({"role": "assistant", "content": [
            {"type": "tool_use", "id": id, "name": name, "input": {}}]}));
        messages.push(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": id, "content": "ok"},
            {"type": "text", "text": "<system-reminder>still planning</system-reminder>"}]}));
        if let Some(tool) = revealed {
            body["tools"].as_array_mut().unwrap().push(tool);
        }
    };
    let (name, input) = anthropic_call(&provider, &body).await.unwrap();
    assert_eq!(name, "Write");
    assert_eq!(input["file_path"], plan_file);
    assert_eq!(input["content"], PLAN_TEXT);
    answer(&mut body, "w", "Write", None);
    let (name, input) = anthropic_call(&provider, &body).await.unwrap();
    assert_eq!(name, "ToolSearch");
    assert_eq!(input, json!({"query": EXIT_PLAN_SEARCH, "max_results": 1}));
    let exit = json!({"name": "ExitPlanMode", "defer_loading": true,
        "input_schema": {"properties": {"allowedPrompts": {}}, "additionalProperties": {}}});
    answer(&mut body, "s", "ToolSearch", Some(exit));
    let (name, input) = anthropic_call(&provider, &body).await.unwrap();
    assert_eq!((name.as_str(), input), ("ExitPlanMode", json!({})));
    answer(&mut body, "e", "ExitPlanMode", None);
    let text = anthropic_call(&provider, &body).await.unwrap_err();
    assert_eq!(text, AFTER_TOOL_TEXT);
    let replies: Vec<String> = provider.requests().into_iter().map(|r| r.reply).collect();
    assert_eq!(
        replies,
        [
            "tool:Write",
            "tool:ToolSearch (chained)",
            "tool:ExitPlanMode (chained)",
            "text (after tool)"
        ]
    );
}

/// A custom chain in the Chat Completions dialect: each step once, then text; a step
/// whose tool is not offered is skipped.
#[tokio::test]
async fn custom_chains_run_their_steps_in_order() {
    let step = |name: &str| vec![ToolTemplate::json(name, json!({"path": "{cwd}/x"}))];
    let script = Script::default().with_rule(
        "SURVEY",
        Effect::CallChain(vec![step("glob"), step("missing"), step("read")]),
    );
    let provider = FakeProvider::builder()
        .script(script)
        .start()
        .await
        .unwrap();
    let mut body = json!({
        "model": "m",
        "messages": [
            {"role": "system", "content": "Working directory: /srv/x\n"},
            {"role": "user", "content": "SURVEY the code"}
        ],
        "tools": (["glob", "read"].map(|name| json!({"type": "function",
            "function": {"name": name, "parameters": {"properties": {"path": {}}}}})))
    });
    let mut calls = Vec::new();
    for round in 0..3 {
        let reply: Value = post(&provider, "/v1/chat/completions", body.clone())
            .await
            .json()
            .await
            .unwrap();
        let message = &reply["choices"][0]["message"];
        let Some(call) = message["tool_calls"].get(0) else {
            assert_eq!(message["content"], AFTER_TOOL_TEXT);
            break;
        };
        let name = call["function"]["name"].as_str().unwrap().to_owned();
        let args: Value =
            serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
        assert_eq!(args["path"], "/srv/x/x");
        let messages = body["messages"].as_array_mut().unwrap();
        messages.push(json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": format!("c{round}"), "type": "function", "function": {"name": name, "arguments": "{}"}}]}));
        messages
            .push(json!({"role": "tool", "tool_call_id": format!("c{round}"), "content": "ok"}));
        calls.push(name);
    }
    assert_eq!(calls, ["glob", "read"]);
}

#[tokio::test]
async fn dropping_the_provider_stops_the_server() {
    let provider = FakeProvider::start().await.unwrap();
    let url = provider.base_url();
    drop(provider);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(client().get(&url).send().await.is_err());
}

#[tokio::test]
async fn a_bad_key_gets_401_in_each_dialect() {
    let provider = FakeProvider::start().await.unwrap();
    let bad = format!("sk-ant-{BAD_KEY_MARKER}");
    let models = client()
        .get(format!("{}/v1/models", provider.base_url()))
        .header("x-api-key", &bad)
        .send()
        .await
        .unwrap();
    assert_eq!(models.status(), 401);
    let body: Value = models.json().await.unwrap();
    assert_eq!(body["error"]["type"], "authentication_error");
    let chat = client()
        .post(format!("{}/v1/chat/completions", provider.base_url()))
        .bearer_auth(&bad)
        .json(&json!({"model": "m", "messages": []}))
        .send()
        .await
        .unwrap();
    assert_eq!(chat.status(), 401);
    let body: Value = chat.json().await.unwrap();
    assert_eq!(body["error"]["code"], "invalid_api_key");
    let good = client()
        .get(format!("{}/v1/models", provider.base_url()))
        .header("x-api-key", "sk-ant-fine")
        .send()
        .await
        .unwrap();
    assert_eq!(good.status(), 200);
    let replies: Vec<String> = provider
        .requests()
        .iter()
        .map(|r| r.reply.clone())
        .collect();
    assert_eq!(replies, ["unauthorized", "unauthorized", "models"]);
}

#[tokio::test]
async fn a_required_key_rejects_model_calls_without_it() {
    let provider = FakeProvider::builder()
        .require_api_key("sk-right")
        .start()
        .await
        .unwrap();
    let call = |key: &'static str| {
        client()
            .post(format!("{}/v1/responses", provider.base_url()))
            .bearer_auth(key)
            .json(&json!({"model": "m", "stream": false, "input": []}))
            .send()
    };
    assert_eq!(call("sk-wrong").await.unwrap().status(), 401);
    assert_eq!(call("sk-right").await.unwrap().status(), 200);
    // x-api-key (Anthropic) is accepted too; non-model routes need no key.
    let anthropic = client()
        .post(format!("{}/v1/messages", provider.base_url()))
        .header("x-api-key", "sk-right")
        .json(&anthropic_request("hi", false))
        .send()
        .await
        .unwrap();
    assert_eq!(anthropic.status(), 200);
    let models = client()
        .get(format!("{}/v1/models", provider.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(models.status(), 200);
    let replies: Vec<String> = provider.requests().into_iter().map(|r| r.reply).collect();
    assert_eq!(replies[0], "error:401");
}
