//! Turns: text with deltas on one process, a bash command's permission once / reject /
//! always, a write with its diff and the file on disk, models listed live.

use sandbox_testkit::provider::script::{REPLY_TEXT, WRITTEN_CONTENT, WRITTEN_FILE};
use sandbox_universal::{
    ContentPart, CreateSessionRequest, EventPayload, ItemKind, ItemStatus, PermissionKind,
    PermissionOutcome, PermissionReply, StopReason,
};

use super::harness::*;
use crate::common::deltas;

#[tokio::test]
async fn text_three_turns_on_one_process() {
    sandbox_testkit::isolate!();
    let Some(pi) = Pi::start().await else {
        return;
    };
    let cwd = pi.session("s", CreateSessionRequest::default()).await;
    let processes = pi.processes(&cwd);
    assert_eq!(processes.len(), 1, "one process for the session");
    let first = pi.turn("s", "say hi").await;
    let second = pi.turn("s", "say hi again").await;
    let third = pi.turn("s", "and once more").await;
    for turn in [&first, &second, &third] {
        assert_eq!(stop_reason(turn), StopReason::Completed);
        assert_eq!(crate::common::skeleton(turn), TEXT_TURN);
    }
    let message = completed(&first, ItemKind::Message).pop().unwrap();
    assert_eq!(message.text(), REPLY_TEXT);
    assert_eq!(deltas(&first, &message.item_id), REPLY_TEXT);
    assert_eq!(
        pi.processes(&cwd),
        processes,
        "the same process for three turns"
    );
    let call = pi.calls_with("and once more").pop().unwrap();
    assert!(call.body.to_string().contains("say hi again"), "history");
    let all = pi.daemon.events("s").await;
    assert_no_unparsed(&all);
    pi.check_capabilities("text_three_turns_on_one_process", &all)
        .await;
}

#[tokio::test]
async fn bash_permission_once_reject_always_and_a_write() {
    sandbox_testkit::isolate!();
    let Some(pi) = Pi::start().await else {
        return;
    };
    let cwd = pi.session("s", CreateSessionRequest::default()).await;
    let output = cwd.join("fake_tool_output.txt");
    let daemon = &pi.daemon;

    let (asked, once) = daemon
        .permission_turn("s", "USE_TOOL now", 1, PermissionReply::Once)
        .await;
    assert_eq!(asked.kind, PermissionKind::Command);
    assert!(
        asked
            .command
            .as_deref()
            .unwrap()
            .contains("echo fake-tool-ran")
    );
    assert_eq!(
        asked.title,
        format!("Run `{}`", asked.command.as_deref().unwrap())
    );
    assert_eq!(stop_reason(&once), StopReason::Completed);
    let command = completed(&once, ItemKind::CommandExecution).pop().unwrap();
    let (_, out, exit_code) = command_part(&command);
    assert_eq!(out.map(str::trim), Some("fake-tool-ran"));
    assert_eq!(exit_code, Some(0));
    assert!(output.exists(), "the command ran in the session's cwd");
    std::fs::remove_file(&output).unwrap();

    let (_, rejected) = daemon
        .permission_turn("s", "USE_TOOL now", 2, PermissionReply::Reject)
        .await;
    assert!(!output.exists(), "a rejected command does not run");
    let failed = completed(&rejected, ItemKind::CommandExecution)
        .pop()
        .or_else(|| completed(&rejected, ItemKind::ToolResult).pop())
        .unwrap();
    assert_eq!(failed.status, ItemStatus::Failed);

    let (_, always) = daemon
        .permission_turn("s", "USE_TOOL now", 3, PermissionReply::Always)
        .await;
    assert_eq!(stop_reason(&always), StopReason::Completed);
    assert!(output.exists());
    std::fs::remove_file(&output).unwrap();
    let again = pi.turn("s", "USE_TOOL now").await;
    let resolved = find(&again, |p| match p {
        EventPayload::PermissionResolved(r) => Some(r.clone()),
        _ => None,
    })
    .expect("resolved");
    assert!(resolved.automatic && resolved.outcome == PermissionOutcome::Always);
    assert!(output.exists(), "the daemon answered for the user");

    let (asked, write) = daemon
        // The 4th call was answered by the daemon without asking: this is the 4th request.
        .permission_turn("s", "USE_WRITE now", 4, PermissionReply::Once)
        .await;
    assert_eq!(asked.kind, PermissionKind::FileChange);
    assert_eq!(stop_reason(&write), StopReason::Completed);
    assert_eq!(
        std::fs::read_to_string(cwd.join(WRITTEN_FILE)).unwrap(),
        WRITTEN_CONTENT
    );
    let change = completed(&write, ItemKind::FileChange).pop().unwrap();
    let Some(ContentPart::FileChange { diff, .. }) = change.content.first() else {
        panic!("{change:?}")
    };
    assert!(diff.as_deref().unwrap().contains("+written by fake model"));
    let all = daemon.events("s").await;
    assert_no_unparsed(&all);
    pi.check_capabilities("bash_permission_once_reject_always_and_a_write", &all)
        .await;
}

#[tokio::test]
async fn models_are_listed_live() {
    sandbox_testkit::isolate!();
    let Some(pi) = Pi::start().await else {
        return;
    };
    let models = pi.daemon.client.agent_models("pi").await.unwrap();
    assert!(
        models
            .models
            .iter()
            .any(|m| m.id.starts_with("anthropic/claude")),
        "{models:?}"
    );
    let default = models.default_model.clone().unwrap();
    assert!(default.starts_with("anthropic/"), "{default}");
    let error = pi
        .daemon
        .client
        .create_session(
            "bad",
            &CreateSessionRequest {
                agent: "pi".into(),
                model: Some("anthropic/no-such-model".into()),
                ..CreateSessionRequest::default()
            },
        )
        .await
        .unwrap_err();
    let sandbox_client::ClientError::Problem(problem) = error else {
        panic!("{error}")
    };
    assert_eq!(problem.status, 400, "{problem:?}");
    // A listed model is the model of the session's calls.
    let (provider_model, id) = default.split_once('/').unwrap();
    assert_eq!(provider_model, "anthropic");
    pi.session(
        "s",
        CreateSessionRequest {
            model: Some(default.clone()),
            ..CreateSessionRequest::default()
        },
    )
    .await;
    pi.turn("s", "say hi").await;
    let call = pi.calls_with("say hi").pop().unwrap();
    assert_eq!(call.model(), Some(id));
    pi.check_capabilities("models_are_listed_live", &[]).await;
}

#[tokio::test]
async fn a_thinking_level_reaches_the_model_and_reasoning_streams() {
    sandbox_testkit::isolate!();
    let Some(pi) = Pi::start().await else {
        return;
    };
    let models = pi.daemon.client.agent_models("pi").await.unwrap();
    let model = models
        .models
        .iter()
        .find(|m| m.id.starts_with("anthropic/") && m.variants.iter().any(|v| v == "high"))
        .expect("a reasoning model")
        .clone();
    pi.session(
        "s",
        CreateSessionRequest {
            model: Some(model.id.clone()),
            variant: Some("high".into()),
            ..CreateSessionRequest::default()
        },
    )
    .await;
    let turn = pi.turn("s", "THINK about it").await;
    assert_eq!(stop_reason(&turn), StopReason::Completed);
    let reasoning = completed(&turn, ItemKind::Reasoning)
        .pop()
        .expect("a reasoning item");
    assert_eq!(
        reasoning.text(),
        sandbox_testkit::provider::script::THINKING_TEXT
    );
    let call = pi.calls_with("THINK about it").pop().unwrap();
    assert!(
        call.body.get("thinking").is_some() || call.body.get("output_config").is_some(),
        "the thinking level reached the model call: {}",
        call.body
    );
    let refused = pi
        .daemon
        .client
        .create_session(
            "bad",
            &CreateSessionRequest {
                agent: "pi".into(),
                model: Some(model.id.clone()),
                variant: Some("ultra".into()),
                ..CreateSessionRequest::default()
            },
        )
        .await
        .unwrap_err();
    let sandbox_client::ClientError::Problem(problem) = refused else {
        panic!("{refused}")
    };
    assert_eq!(problem.status, 400);
    let all = pi.daemon.events("s").await;
    assert_no_unparsed(&all);
    pi.check_capabilities(
        "a_thinking_level_reaches_the_model_and_reasoning_streams",
        &all,
    )
    .await;
}
