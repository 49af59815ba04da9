//! Smoke tests: the real Claude Code CLI against the fake provider, in the namespace.

mod common;

use sandbox_testkit::agents::Agent;

#[tokio::test]
async fn claude_text() {
    sandbox_testkit::isolate!();
    let Some(run) = common::scenario(Agent::Claude, "text").await else {
        return;
    };
    let request = &run.model_requests()[0];
    assert_eq!(request.route(), "/v1/messages");
    assert!(request.path.contains("beta=true"), "{}", request.path);
    assert_eq!(
        request.headers["x-api-key"],
        sandbox_testkit::provider::REDACTED
    );
    assert_eq!(request.body["stream"], true);
}

#[tokio::test]
async fn claude_tool_allow() {
    sandbox_testkit::isolate!();
    common::scenario(Agent::Claude, "tool-allow").await;
}

#[tokio::test]
async fn claude_tool_deny() {
    sandbox_testkit::isolate!();
    common::scenario(Agent::Claude, "tool-deny").await;
}

#[tokio::test]
async fn claude_question() {
    sandbox_testkit::isolate!();
    common::scenario(Agent::Claude, "question").await;
}

#[tokio::test]
async fn claude_think() {
    sandbox_testkit::isolate!();
    common::scenario(Agent::Claude, "think").await;
}

#[tokio::test]
async fn claude_cancel() {
    sandbox_testkit::isolate!();
    common::scenario(Agent::Claude, "cancel").await;
}

#[tokio::test]
async fn claude_fail() {
    sandbox_testkit::isolate!();
    common::scenario(Agent::Claude, "fail").await;
}

#[tokio::test]
async fn claude_flaky() {
    sandbox_testkit::isolate!();
    common::scenario(Agent::Claude, "flaky").await;
}

#[tokio::test]
async fn claude_refuse() {
    sandbox_testkit::isolate!();
    common::scenario(Agent::Claude, "refuse").await;
}
