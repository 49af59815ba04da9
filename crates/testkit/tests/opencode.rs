//! Smoke tests: the real OpenCode CLI (`serve`) against the fake provider, in the namespace.

mod common;

use sandbox_testkit::agents::Agent;

#[tokio::test]
async fn opencode_text() {
    sandbox_testkit::isolate!();
    let Some(run) = common::scenario(Agent::OpenCode, "text").await else {
        return;
    };
    let calls = run.model_requests();
    // The daemon's Anthropic provider: the Messages API with the key from the key file.
    assert!(
        calls.iter().all(|r| r.route() == "/v1/messages"),
        "{calls:?}"
    );
    assert!(
        calls
            .iter()
            .all(|r| r.headers["x-api-key"] == sandbox_testkit::provider::REDACTED),
        "{calls:?}"
    );
    let main = calls
        .iter()
        .find(|r| !r.tool_names().is_empty())
        .expect("a request with tools");
    assert_eq!(main.body["stream"], true);
    assert!(main.offers_tool("bash"), "{:?}", main.tool_names());
}

#[tokio::test]
async fn opencode_tool() {
    sandbox_testkit::isolate!();
    common::scenario(Agent::OpenCode, "tool").await;
}

#[tokio::test]
async fn opencode_permission() {
    sandbox_testkit::isolate!();
    common::scenario(Agent::OpenCode, "permission").await;
}

#[tokio::test]
async fn opencode_permission_reject() {
    sandbox_testkit::isolate!();
    common::scenario(Agent::OpenCode, "permission-reject").await;
}

#[tokio::test]
async fn opencode_question() {
    sandbox_testkit::isolate!();
    common::scenario(Agent::OpenCode, "question").await;
}

#[tokio::test]
async fn opencode_think() {
    sandbox_testkit::isolate!();
    common::scenario(Agent::OpenCode, "think").await;
}

#[tokio::test]
async fn opencode_cancel() {
    sandbox_testkit::isolate!();
    common::scenario(Agent::OpenCode, "cancel").await;
}

#[tokio::test]
async fn opencode_fail() {
    sandbox_testkit::isolate!();
    common::scenario(Agent::OpenCode, "fail").await;
}

#[tokio::test]
async fn opencode_flaky() {
    sandbox_testkit::isolate!();
    common::scenario(Agent::OpenCode, "flaky").await;
}

#[tokio::test]
async fn opencode_refuse() {
    sandbox_testkit::isolate!();
    common::scenario(Agent::OpenCode, "refuse").await;
}
