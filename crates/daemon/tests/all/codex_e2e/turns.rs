//! Plain turns: text, deltas, reasoning, variants, cancel, models.

use sandbox_universal::{
    AgentId, CreateSessionRequest, EventPayload, ItemKind, ItemStatus, PermissionOutcome,
    PermissionReply, StopReason,
};

use super::harness::*;
use crate::common::skeleton;

#[tokio::test]
async fn text_reasoning_three_turns_and_variant() {
    sandbox_testkit::isolate!();
    let Some(codex) = Codex::start().await else {
        return;
    };
    codex
        .session(
            "s",
            CreateSessionRequest {
                variant: Some("high".into()),
                ..CreateSessionRequest::default()
            },
        )
        .await;
    let first = codex.turn("s", "say hello").await;
    assert_eq!(canonical(&first), MESSAGE_TURN);
    let reply = completed(&first, ItemKind::Message).pop().unwrap();
    assert_eq!(reply.text(), "hello from fake model");
    let deltas = first
        .iter()
        .filter(|e| matches!(&e.payload, EventPayload::ItemDelta(d) if d.item_id == reply.item_id))
        .count();
    assert!(deltas >= 3, "{deltas} deltas");

    let second = codex.turn("s", "THINK before you answer").await;
    assert_eq!(
        canonical(&second),
        [
            "turnStarted",
            "itemStarted:message",
            "itemCompleted:message",
            "itemStarted:reasoning",
            "itemDelta*",
            "itemCompleted:reasoning",
            "itemStarted:message",
            "itemDelta*",
            "itemCompleted:message",
            "turnEnded",
        ]
    );
    let reasoning = completed(&second, ItemKind::Reasoning).pop().unwrap();
    assert!(reasoning.text().contains("think briefly"), "{reasoning:?}");

    let third = codex.turn("s", "and a third turn").await;
    assert_eq!(canonical(&third), MESSAGE_TURN);
    let usage = find(&third, |p| match p {
        EventPayload::TurnEnded(t) => t.usage.clone(),
        _ => None,
    })
    .expect("usage");
    assert!(
        usage.input_tokens > 0 && usage.output_tokens > 0,
        "{usage:?}"
    );

    // The variant reaches the provider as the reasoning effort of every turn, and the
    // conversation is carried over.
    let requests = codex.model_requests("s").await;
    assert_eq!(requests.len(), 3, "{requests:#?}");
    for request in &requests {
        assert_eq!(request.body["reasoning"]["effort"], "high");
    }
    let last_input = requests[2].body["input"].to_string();
    assert!(last_input.contains("say hello") && last_input.contains("THINK before you answer"));

    let all = codex.daemon.events("s").await;
    assert_eq!(skeleton(&all[..1]), ["sessionStarted"]);
    let EventPayload::SessionStarted(started) = &all[0].payload else {
        unreachable!()
    };
    assert_eq!(started.agent, AgentId::Codex);
    assert_eq!(started.agent_version.as_deref(), Some("0.169.0"));
    assert_eq!(started.model.as_deref(), Some(MODEL));
    assert_no_unparsed(&all);
    codex
        .check_capabilities("text_reasoning_three_turns_and_variant", &all)
        .await;
}

/// Sends `USE_TOOL`, answers the permission request with `reply` (or expects none), and
/// returns the turn's events.

#[tokio::test]
async fn cancel_during_slow_reply() {
    sandbox_testkit::isolate!();
    let Some(codex) = Codex::start().await else {
        return;
    };
    codex.session("s", CreateSessionRequest::default()).await;
    codex
        .daemon
        .client
        .send_message("s", "SLOW please")
        .await
        .unwrap();
    codex
        .wait_count("s", 1, |e| matches!(e.payload, EventPayload::ItemDelta(_)))
        .await;
    let cancelled = codex.daemon.client.cancel("s").await.unwrap();
    assert_eq!(cancelled.turn_id, "turn_1");
    let all = codex.daemon.wait_turn_ended("s", 1).await;
    let turn = turn_events(&all, "turn_1");
    assert_eq!(stop_reason(&turn), StopReason::Cancelled);
    assert_eq!(
        canonical(&turn),
        [
            "turnStarted",
            "itemStarted:message",
            "itemCompleted:message",
            "itemStarted:message",
            "itemDelta*",
            "itemCompleted:message",
            "turnEnded",
        ]
    );
    let partial = completed(&turn, ItemKind::Message).pop().unwrap();
    assert_eq!(partial.status, ItemStatus::Failed);
    assert!(partial.text().len() < 40, "not cut short: {partial:?}");

    // The session goes on.
    let next = codex.turn("s", "are you still there").await;
    assert_eq!(canonical(&next), MESSAGE_TURN);

    // Cancelling while Codex waits for an approval: Codex withdraws the request, the
    // daemon cancels it with the turn, and a late answer is a conflict.
    codex
        .daemon
        .client
        .send_message("s", "USE_TOOL now")
        .await
        .unwrap();
    let events = codex
        .wait_count("s", 1, |e| {
            matches!(e.payload, EventPayload::PermissionAsked(_))
        })
        .await;
    let asked = find(&events, |p| match p {
        EventPayload::PermissionAsked(p) => Some(p.permission_id.clone()),
        _ => None,
    })
    .unwrap();
    codex.daemon.client.cancel("s").await.unwrap();
    let all = codex.daemon.wait_turn_ended("s", 3).await;
    let turn = turn_events(&all, "turn_3");
    assert_eq!(stop_reason(&turn), StopReason::Cancelled);
    let resolved = find(&turn, |p| match p {
        EventPayload::PermissionResolved(r) => Some(r.clone()),
        _ => None,
    })
    .unwrap();
    assert_eq!(resolved.permission_id, asked);
    assert_eq!(resolved.outcome, PermissionOutcome::Cancelled);
    let late = codex
        .daemon
        .client
        .reply_permission("s", &asked, PermissionReply::Once)
        .await
        .unwrap_err();
    assert_eq!(late.problem().unwrap().status, 409);
    let next = codex.turn("s", "and now").await;
    assert_eq!(stop_reason(&next), StopReason::Completed);

    let all = codex.daemon.events("s").await;
    assert_no_unparsed(&all);
    codex
        .check_capabilities("cancel_during_slow_reply", &all)
        .await;
}

/// The app-server process of a session: the codex binary running in the session's cwd.

#[tokio::test]
async fn models_are_listed_live() {
    sandbox_testkit::isolate!();
    let Some(codex) = Codex::start().await else {
        return;
    };
    let models = codex.daemon.client.agent_models("codex").await.unwrap();
    let default = models.default_model.clone().expect("default model");
    assert!(models.models.iter().any(|m| m.id == default), "{models:?}");
    let gpt = models
        .models
        .iter()
        .find(|m| m.id == "gpt-5.5")
        .expect("gpt-5.5");
    for effort in ["low", "medium", "high", "xhigh"] {
        assert!(gpt.variants.iter().any(|v| v == effort), "{gpt:?}");
    }
    assert!(gpt.default_variant.is_some());

    let agents = codex.daemon.client.list_agents().await.unwrap();
    let info = agents
        .agents
        .iter()
        .find(|a| a.id == AgentId::Codex)
        .unwrap();
    assert!(info.installed && info.supported, "{info:?}");
    assert_eq!(info.version.as_deref(), Some("0.169.0"));
    codex
        .check_capabilities("models_are_listed_live", &[])
        .await;
}

#[tokio::test]
async fn validate_token_checks_the_key() {
    sandbox_testkit::isolate!();
    let Some(codex) = Codex::start().await else {
        return;
    };
    // The daemon's key is accepted: the session starts healthy.
    codex
        .session(
            "valid",
            CreateSessionRequest {
                validate_token: Some(true),
                ..CreateSessionRequest::default()
            },
        )
        .await;
    // A rejected key answers a 422 problem with a tokenError, and no session is kept.
    let rejected = codex
        .daemon
        .client
        .create_session(
            "rejected",
            &CreateSessionRequest {
                agent: "codex".into(),
                token: Some("sk-bad-key-for-codex".into()),
                validate_token: Some(true),
                ..CreateSessionRequest::default()
            },
        )
        .await;
    let Err(sandbox_client::ClientError::Problem(problem)) = rejected else {
        panic!("a rejected key is a problem: {rejected:?}");
    };
    assert_eq!(problem.status, 422, "{problem:?}");
    let error = problem.agent_error.expect("an agentError");
    assert_eq!(error.kind(), "tokenError", "{error}");
    assert!(codex.daemon.client.get_session("rejected").await.is_err());
    let checks: Vec<_> = codex
        .provider
        .requests()
        .into_iter()
        .filter(|r| r.method == "GET" && r.path.starts_with("/v1/models"))
        .collect();
    assert_eq!(checks.len(), 2, "one credential check per session");
}
