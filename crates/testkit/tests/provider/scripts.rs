//! Scripted behaviour: custom rules and pacing, chains, plan mode, the server's end.

use std::time::{Duration, Instant};

use sandbox_testkit::provider::script::{AFTER_TOOL_TEXT, EXIT_PLAN_SEARCH, PLAN_TEXT};
use sandbox_testkit::provider::{Effect, FakeProvider, Script, ToolTemplate};
use serde_json::{Value, json};

use super::*;

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
