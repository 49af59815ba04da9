//! Smoke tests: the real Codex CLI (`app-server`) against the fake provider, in the namespace,
//! on the kit's classic model and on Codex's default model (code mode).

mod common;

use sandbox_testkit::agents::Agent;
use sandbox_testkit::offline::codex::{DEFAULT_MODEL, model};
use sandbox_testkit::provider::view;
use sandbox_testkit::scenarios::{Options, Run};
use serde_json::Value;

/// The tools a request offers, as the fake model sees them: `(name, reached through)`.
fn offered(run: &Run, index: usize) -> Vec<(String, Option<String>)> {
    view::responses(&run.model_requests()[index].body)
        .tools
        .into_iter()
        .map(|t| (t.name, t.via))
        .collect()
}

#[tokio::test]
async fn codex_text() {
    sandbox_testkit::isolate!();
    let Some(run) = common::scenario(Agent::Codex, "text").await else {
        return;
    };
    let request = &run.model_requests()[0];
    assert_eq!(request.route(), "/v1/responses");
    assert_eq!(
        request.model(),
        Some(model().as_deref().unwrap_or(DEFAULT_MODEL))
    );
    assert_eq!(
        request.headers["authorization"],
        sandbox_testkit::provider::REDACTED
    );
    let tools = offered(&run, 0);
    for tool in ["exec_command", "apply_patch", "request_user_input"] {
        assert!(
            tools.iter().any(|(name, _)| name == tool),
            "{tool} not offered: {tools:?}"
        );
    }
}

#[tokio::test]
async fn codex_command_approval() {
    sandbox_testkit::isolate!();
    common::scenario(Agent::Codex, "command-approval").await;
}

#[tokio::test]
async fn codex_command_decline() {
    sandbox_testkit::isolate!();
    common::scenario(Agent::Codex, "command-decline").await;
}

#[tokio::test]
async fn codex_apply_patch() {
    sandbox_testkit::isolate!();
    common::scenario(Agent::Codex, "apply-patch").await;
}

#[tokio::test]
async fn codex_question() {
    sandbox_testkit::isolate!();
    common::scenario(Agent::Codex, "question").await;
}

#[tokio::test]
async fn codex_think() {
    sandbox_testkit::isolate!();
    common::scenario(Agent::Codex, "think").await;
}

#[tokio::test]
async fn codex_cancel() {
    sandbox_testkit::isolate!();
    common::scenario(Agent::Codex, "cancel").await;
}

#[tokio::test]
async fn codex_fail() {
    sandbox_testkit::isolate!();
    common::scenario(Agent::Codex, "fail").await;
}

#[tokio::test]
async fn codex_flaky() {
    sandbox_testkit::isolate!();
    common::scenario(Agent::Codex, "flaky").await;
}

#[tokio::test]
async fn codex_refuse() {
    sandbox_testkit::isolate!();
    common::scenario(Agent::Codex, "refuse").await;
}

/// A scenario on Codex's default model: no model named, so tools come in code mode.
async fn default_model(name: &str) -> Option<Run> {
    let options = Options { codex_model: None };
    common::scenario_with(Agent::Codex, name, options).await
}

/// The fake model's replies, and the last input item of each request after the first.
fn replies_and_outputs(run: &Run) -> (Vec<&str>, Vec<&Value>) {
    let requests = run.model_requests();
    let replies = requests.iter().map(|r| r.reply.as_str()).collect();
    let outputs = requests[1..]
        .iter()
        .filter_map(|r| r.body["input"].as_array()?.last())
        .collect();
    (replies, outputs)
}

#[tokio::test]
async fn codex_default_model_text_offers_tools_through_exec() {
    sandbox_testkit::isolate!();
    let Some(run) = default_model("text").await else {
        return;
    };
    let request = &run.model_requests()[0];
    assert_eq!(request.model(), Some(DEFAULT_MODEL));
    assert!(request.body.get("tools").is_none(), "no top-level tools");
    let tools = offered(&run, 0);
    let via = |name: &str| {
        tools
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("{name} not offered: {tools:?}"))
            .1
            .clone()
    };
    assert_eq!(via("exec"), None);
    assert_eq!(via("exec_command").as_deref(), Some("exec"));
    assert_eq!(via("apply_patch").as_deref(), Some("exec"));
    assert_eq!(via("request_user_input"), None);
}

#[tokio::test]
async fn codex_default_model_command_runs_from_javascript() {
    sandbox_testkit::isolate!();
    let Some(run) = default_model("command-approval").await else {
        return;
    };
    let (replies, outputs) = replies_and_outputs(&run);
    assert_eq!(replies, ["tool:exec(exec_command)", "text (after tool)"]);
    assert_eq!(outputs[0]["type"], "custom_tool_call_output");
    let output = outputs[0]["output"].to_string();
    assert!(
        output.contains("Script completed") && output.contains("fake-tool-ran"),
        "{output}"
    );
}

#[tokio::test]
async fn codex_default_model_declined_command_fails_the_script() {
    sandbox_testkit::isolate!();
    let Some(run) = default_model("command-decline").await else {
        return;
    };
    let (_, outputs) = replies_and_outputs(&run);
    let output = outputs[0]["output"].to_string();
    assert!(
        output.contains("Script failed") && output.contains("rejected by user"),
        "{output}"
    );
}

#[tokio::test]
async fn codex_default_model_patch_applies_from_javascript() {
    sandbox_testkit::isolate!();
    let Some(run) = default_model("apply-patch").await else {
        return;
    };
    let (replies, _) = replies_and_outputs(&run);
    assert_eq!(replies, ["tool:exec(apply_patch)", "text (after tool)"]);
}

#[tokio::test]
async fn codex_default_model_question_is_a_direct_call() {
    sandbox_testkit::isolate!();
    let Some(run) = default_model("question").await else {
        return;
    };
    let (replies, _) = replies_and_outputs(&run);
    assert_eq!(replies, ["tool:request_user_input", "text (after tool)"]);
}
