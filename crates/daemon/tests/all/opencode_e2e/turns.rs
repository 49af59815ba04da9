//! Turns through the daemon: text with deltas, reasoning, three turns with their history,
//! models, agent modes and variants listed live and checked, cancel, credential check.

use sandbox_testkit::provider::script::{REPLY_TEXT, THINKING_TEXT};
use sandbox_universal::{
    CreateSessionRequest, EventPayload, ItemKind, ItemStatus, PermissionMode, StopReason,
};

use super::harness::*;
use crate::common::deltas;

#[tokio::test]
async fn text_reasoning_and_three_turns() {
    sandbox_testkit::isolate!();
    let Some(oc) = OpenCode::start().await else {
        return;
    };
    oc.session("s", CreateSessionRequest::default()).await;
    let first = oc.turn("s", "say hi").await;
    let second = oc.turn("s", "THINK about it").await;
    let third = oc.turn("s", "say hi again").await;
    for turn in [&first, &second, &third] {
        assert_eq!(stop_reason(turn), StopReason::Completed);
    }
    eprintln!(
        "text: {:?}\nthink: {:?}",
        canonical(&first),
        canonical(&second)
    );
    let message = completed(&first, ItemKind::Message).pop().unwrap();
    assert_eq!(message.text(), REPLY_TEXT);
    let delta_count = first
        .iter()
        .filter(
            |e| matches!(&e.payload, EventPayload::ItemDelta(d) if d.item_id == message.item_id),
        )
        .count();
    assert!(delta_count >= 2, "{delta_count} deltas");
    assert_eq!(deltas(&first, &message.item_id), REPLY_TEXT);
    let reasoning = completed(&second, ItemKind::Reasoning).pop().unwrap();
    assert_eq!(reasoning.text(), THINKING_TEXT);
    // The third turn's model call carries the whole conversation.
    let requests = oc.model_requests("s").await;
    let last = requests
        .iter()
        .rev()
        .find(|r| r.body.to_string().contains("say hi again"))
        .expect("the third turn's model call");
    let body = last.body.to_string();
    assert!(
        body.contains("THINK about it") && body.contains(REPLY_TEXT),
        "{body}"
    );

    let all = oc.daemon.events("s").await;
    let started = find(&all, |p| match p {
        EventPayload::SessionStarted(s) => Some(s.clone()),
        _ => None,
    })
    .unwrap();
    assert_eq!(started.agent_version.as_deref(), Some("1.18.33"));
    assert!(started.model.as_deref().unwrap().starts_with("anthropic/"));
    assert_eq!(started.agent_mode.as_deref(), Some("build"));
    assert_no_unparsed(&all);
    oc.check_capabilities("text_reasoning_and_three_turns", &all)
        .await;
}

#[tokio::test]
async fn models_modes_and_variants_are_live_and_checked() {
    sandbox_testkit::isolate!();
    let Some(oc) = OpenCode::start().await else {
        return;
    };
    let client = &oc.daemon.client;
    let models = client.agent_models("opencode").await.unwrap();
    let haiku = models
        .models
        .iter()
        .find(|m| m.id == "anthropic/claude-haiku-4-5")
        .expect("haiku listed");
    assert!(haiku.variants.contains(&"high".to_string()), "{haiku:?}");
    assert!(
        models.models.iter().all(|m| m.id.starts_with("anthropic/")),
        "only the configured provider"
    );
    assert!(models.default_model.unwrap().starts_with("anthropic/"));
    let modes = client.agent_modes("opencode").await.unwrap();
    let ids: Vec<_> = modes.modes.iter().map(|m| m.id.as_str()).collect();
    assert!(ids.contains(&"build") && ids.contains(&"plan"), "{ids:?}");
    assert!(!ids.contains(&"title"), "hidden agents are not modes");
    assert_eq!(modes.default_mode.as_deref(), Some("build"));
    assert_eq!(modes.permission_modes.len(), 4);

    let refused = |request: CreateSessionRequest| async move {
        let error = client
            .create_session(
                "bad",
                &CreateSessionRequest {
                    agent: "opencode".into(),
                    ..request
                },
            )
            .await
            .unwrap_err();
        match error {
            sandbox_client::ClientError::Problem(p) => {
                assert_eq!(p.status, 400, "{p:?}");
                assert!(p.type_uri.ends_with("invalid-session-config"), "{p:?}");
                p.detail
            }
            other => panic!("{other}"),
        }
    };
    let detail = refused(CreateSessionRequest {
        model: Some("anthropic/claude-haiku-4-5".into()),
        variant: Some("ultra".into()),
        ..CreateSessionRequest::default()
    })
    .await;
    assert!(
        detail.contains("no variant `ultra`") && detail.contains("high"),
        "{detail}"
    );
    let detail = refused(CreateSessionRequest {
        model: Some("anthropic/no-such-model".into()),
        ..CreateSessionRequest::default()
    })
    .await;
    assert!(detail.contains("no model"), "{detail}");
    let detail = refused(CreateSessionRequest {
        agent_mode: Some("nope".into()),
        ..CreateSessionRequest::default()
    })
    .await;
    assert!(detail.contains("plan"), "{detail}");

    // A known variant and agent reach the model call.
    oc.session(
        "v",
        CreateSessionRequest {
            model: Some("anthropic/claude-haiku-4-5".into()),
            variant: Some("high".into()),
            agent_mode: Some("plan".into()),
            permission_mode: Some(PermissionMode::Plan),
            ..CreateSessionRequest::default()
        },
    )
    .await;
    let turn = oc.turn("v", "say hi").await;
    assert_eq!(stop_reason(&turn), StopReason::Completed);
    let call = oc
        .model_requests("v")
        .await
        .into_iter()
        .find(|r| r.body.to_string().contains("say hi"))
        .unwrap();
    // OpenCode sends the model's API id (`claude-haiku-4-5-<date>`).
    assert!(
        call.model().unwrap().starts_with("claude-haiku-4-5"),
        "{:?}",
        call.model()
    );
    assert_eq!(call.body["thinking"]["type"], "enabled", "{}", call.body);
    let all = oc.daemon.events("v").await;
    let started = find(&all, |p| match p {
        EventPayload::SessionStarted(s) => Some(s.clone()),
        _ => None,
    })
    .unwrap();
    assert_eq!(started.agent_mode.as_deref(), Some("plan"));
    assert_eq!(started.model.as_deref(), Some("anthropic/claude-haiku-4-5"));
    oc.check_capabilities("models_modes_and_variants_are_live_and_checked", &all)
        .await;
}

#[tokio::test]
async fn cancel_during_slow_reply() {
    sandbox_testkit::isolate!();
    let Some(oc) = OpenCode::start().await else {
        return;
    };
    oc.session("s", CreateSessionRequest::default()).await;
    let turn = oc
        .daemon
        .client
        .send_message("s", "SLOW please")
        .await
        .unwrap();
    oc.daemon
        .wait_for("s", |e| matches!(e.payload, EventPayload::ItemDelta(_)))
        .await;
    oc.daemon.client.cancel("s").await.unwrap();
    let cancelled = oc.turn_ended("s", &turn.turn_id).await;
    assert_eq!(canonical(&cancelled), TEXT_TURN);
    assert_eq!(stop_reason(&cancelled), StopReason::Cancelled);
    let message = completed(&cancelled, ItemKind::Message).pop().unwrap();
    assert_eq!(
        message.status,
        ItemStatus::Failed,
        "a cancelled partial message"
    );
    let ended = cancelled
        .iter()
        .filter(|e| matches!(e.payload, EventPayload::TurnEnded(_)))
        .count();
    assert_eq!(ended, 1, "one turnEnded");
    let next = oc.turn("s", "say hi").await;
    assert_eq!(stop_reason(&next), StopReason::Completed);
    let all = oc.daemon.events("s").await;
    assert_no_unparsed(&all);
    oc.check_capabilities("cancel_during_slow_reply", &all)
        .await;
}

#[tokio::test]
async fn validate_token_checks_the_key() {
    sandbox_testkit::isolate!();
    let Some(oc) = OpenCode::start().await else {
        return;
    };
    let error = oc
        .daemon
        .client
        .create_session(
            "bad",
            &CreateSessionRequest {
                agent: "opencode".into(),
                token: Some("sk-bad-key-1".into()),
                validate_token: Some(true),
                ..CreateSessionRequest::default()
            },
        )
        .await
        .unwrap_err();
    let sandbox_client::ClientError::Problem(problem) = error else {
        panic!("{error}");
    };
    assert_eq!(problem.status, 422, "{problem:?}");
    assert!(oc.servers().is_empty(), "no server for a refused key");
    oc.session(
        "good",
        CreateSessionRequest {
            token: Some(TOKENS[0].into()),
            validate_token: Some(true),
            ..CreateSessionRequest::default()
        },
    )
    .await;
    oc.check_capabilities("validate_token_checks_the_key", &[])
        .await;
}
