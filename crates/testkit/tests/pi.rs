//! Smoke tests: the real Pi coding agent (`--mode rpc`) against the fake provider, in the namespace.

mod common;

use sandbox_testkit::agents::Agent;

#[tokio::test]
async fn pi_text() {
    sandbox_testkit::isolate!();
    let Some(run) = common::scenario(Agent::Pi, "text").await else {
        return;
    };
    let request = &run.model_requests()[0];
    assert_eq!(request.route(), "/v1/messages");
    // The daemon names no model: Pi takes its built-in Anthropic provider's default,
    // routed to the fake by the daemon's `models.json`.
    assert!(
        request.model().is_some_and(|m| m.starts_with("claude-")),
        "{:?}",
        request.model()
    );
    assert!(
        ["read", "bash", "edit", "write"]
            .iter()
            .all(|t| request.offers_tool(t)),
        "{:?}",
        request.tool_names()
    );
}

#[tokio::test]
async fn pi_tool() {
    sandbox_testkit::isolate!();
    common::scenario(Agent::Pi, "tool").await;
}

#[tokio::test]
async fn pi_write() {
    sandbox_testkit::isolate!();
    common::scenario(Agent::Pi, "write").await;
}

#[tokio::test]
async fn pi_think() {
    sandbox_testkit::isolate!();
    common::scenario(Agent::Pi, "think").await;
}

#[tokio::test]
async fn pi_cancel() {
    sandbox_testkit::isolate!();
    common::scenario(Agent::Pi, "cancel").await;
}

#[tokio::test]
async fn pi_fail() {
    sandbox_testkit::isolate!();
    common::scenario(Agent::Pi, "fail").await;
}

#[tokio::test]
async fn pi_flaky() {
    sandbox_testkit::isolate!();
    common::scenario(Agent::Pi, "flaky").await;
}

#[tokio::test]
async fn pi_refuse() {
    sandbox_testkit::isolate!();
    common::scenario(Agent::Pi, "refuse").await;
}
