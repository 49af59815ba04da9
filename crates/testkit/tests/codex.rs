//! Smoke tests: the real Codex CLI (`app-server`) against the fake provider, in the namespace.

mod common;

use sandbox_testkit::agents::Agent;

#[tokio::test]
async fn codex_text() {
    sandbox_testkit::isolate!();
    let Some(run) = common::scenario(Agent::Codex, "text").await else {
        return;
    };
    let request = &run.model_requests()[0];
    assert_eq!(request.route(), "/v1/responses");
    assert_eq!(request.model(), Some("gpt-5.5"));
    assert_eq!(
        request.headers["authorization"],
        sandbox_testkit::provider::REDACTED
    );
    let tools = request.tool_names();
    for tool in ["exec_command", "apply_patch", "request_user_input"] {
        assert!(tools.contains(&tool), "{tool} not offered: {tools:?}");
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
