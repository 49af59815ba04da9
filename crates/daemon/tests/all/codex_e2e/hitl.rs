//! Human in the loop: command and patch approvals, permission modes, questions.

use sandbox_universal::{
    ContentPart, CreateSessionRequest, EventPayload, FileChangeKind, ItemKind, ItemStatus,
    PermissionKind, PermissionMode, PermissionReply, StopReason, UniversalEvent,
};
use serde_json::{Value, json};

use super::harness::*;

async fn tool_turn(codex: &Codex, n: usize, reply: Option<PermissionReply>) -> Vec<UniversalEvent> {
    let turn_id = codex
        .daemon
        .client
        .send_message("s", "USE_TOOL now")
        .await
        .unwrap()
        .turn_id;
    if let Some(reply) = reply {
        let events = codex
            .wait_count("s", n, |e| {
                matches!(e.payload, EventPayload::PermissionAsked(_))
            })
            .await;
        let asked = events
            .iter()
            .rev()
            .find_map(|e| match &e.payload {
                EventPayload::PermissionAsked(p) => Some(p.clone()),
                _ => None,
            })
            .unwrap();
        assert_eq!(asked.kind, PermissionKind::Command);
        assert!(
            asked
                .command
                .as_deref()
                .unwrap()
                .contains("echo fake-tool-ran")
        );
        assert!(
            asked
                .always_scope
                .as_deref()
                .unwrap()
                .starts_with("codex:command:")
        );
        codex
            .daemon
            .client
            .reply_permission("s", &asked.permission_id, reply)
            .await
            .unwrap();
    }
    let turn = turn_id.trim_start_matches("turn_").parse().unwrap();
    let events = codex.daemon.wait_turn_ended("s", turn).await;
    turn_events(&events, &turn_id)
}

#[tokio::test]
async fn command_approvals_once_reject_always() {
    sandbox_testkit::isolate!();
    let Some(codex) = Codex::start().await else {
        return;
    };
    let cwd = codex.session("s", CreateSessionRequest::default()).await;
    let asked_turn = [
        "turnStarted",
        "itemStarted:message",
        "itemCompleted:message",
        "itemStarted:commandExecution",
        "permissionAsked",
        "permissionResolved",
        "itemCompleted:commandExecution",
        "itemStarted:message",
        "itemDelta*",
        "itemCompleted:message",
        "turnEnded",
    ];

    // once: the command runs.
    let once = tool_turn(&codex, 1, Some(PermissionReply::Once)).await;
    assert_eq!(canonical(&once), asked_turn);
    let command = completed(&once, ItemKind::CommandExecution).pop().unwrap();
    assert_eq!(command.status, ItemStatus::Completed);
    let (line, output, exit_code) = command_part(&command);
    assert!(
        line.contains("echo fake-tool-ran > fake_tool_output.txt"),
        "{line}"
    );
    assert_eq!(output, Some("fake-tool-ran\n"));
    assert_eq!(exit_code, Some(0));
    assert!(cwd.join("fake_tool_output.txt").exists());
    std::fs::remove_file(cwd.join("fake_tool_output.txt")).unwrap();

    // reject: the command is declined and the model hears so.
    let rejected = tool_turn(&codex, 2, Some(PermissionReply::Reject)).await;
    assert_eq!(canonical(&rejected), asked_turn);
    let command = completed(&rejected, ItemKind::CommandExecution)
        .pop()
        .unwrap();
    assert_eq!(command.status, ItemStatus::Failed);
    assert!(!cwd.join("fake_tool_output.txt").exists());
    let requests = codex.model_requests("s").await;
    let output = requests[3].body["input"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(output["type"], "function_call_output");
    assert!(
        output["output"].as_str().unwrap().contains("rejected"),
        "{output}"
    );

    // always: runs, and Codex does not ask again for the same command.
    let always = tool_turn(&codex, 3, Some(PermissionReply::Always)).await;
    assert_eq!(canonical(&always), asked_turn);
    let again = tool_turn(&codex, 4, None).await;
    assert!(
        !again
            .iter()
            .any(|e| matches!(e.payload, EventPayload::PermissionAsked(_))),
        "asked again after `always`"
    );
    let command = completed(&again, ItemKind::CommandExecution).pop().unwrap();
    assert_eq!(command_part(&command).2, Some(0));

    let all = codex.daemon.events("s").await;
    assert_no_unparsed(&all);
    codex
        .check_capabilities("command_approvals_once_reject_always", &all)
        .await;
}

#[tokio::test]
async fn apply_patch_with_approval_and_modes() {
    sandbox_testkit::isolate!();
    let Some(codex) = Codex::start().await else {
        return;
    };
    let mode = |permission_mode| CreateSessionRequest {
        permission_mode: Some(permission_mode),
        ..CreateSessionRequest::default()
    };
    let (asks, edits, plan) = tokio::join!(
        codex.session("asks", CreateSessionRequest::default()),
        codex.session("edits", mode(PermissionMode::AcceptEdits)),
        codex.session("plan", mode(PermissionMode::Plan)),
    );

    // default: the patch asks, then applies; the item carries path, kind and diff.
    codex
        .daemon
        .client
        .send_message("asks", "USE_WRITE now")
        .await
        .unwrap();
    let events = codex
        .wait_count("asks", 1, |e| {
            matches!(e.payload, EventPayload::PermissionAsked(_))
        })
        .await;
    let asked = find(&events, |p| match p {
        EventPayload::PermissionAsked(p) => Some(p.clone()),
        _ => None,
    })
    .unwrap();
    let written = asks.join("fake_written.txt").display().to_string();
    assert_eq!(asked.kind, PermissionKind::FileChange);
    assert_eq!(asked.paths, std::slice::from_ref(&written));
    assert_eq!(
        asked.always_scope,
        Some(format!("codex:fileChange:{written}"))
    );
    codex
        .daemon
        .client
        .reply_permission("asks", &asked.permission_id, PermissionReply::Once)
        .await
        .unwrap();
    let all = codex.daemon.wait_turn_ended("asks", 1).await;
    let turn = turn_events(&all, "turn_1");
    assert_eq!(
        canonical(&turn),
        [
            "turnStarted",
            "itemStarted:message",
            "itemCompleted:message",
            "itemStarted:fileChange",
            "permissionAsked",
            "permissionResolved",
            "itemCompleted:fileChange",
            "itemStarted:message",
            "itemDelta*",
            "itemCompleted:message",
            "turnEnded",
        ]
    );
    let change = completed(&turn, ItemKind::FileChange).pop().unwrap();
    assert_eq!(change.status, ItemStatus::Completed);
    assert_eq!(
        change.content,
        [ContentPart::FileChange {
            path: written,
            change_kind: FileChangeKind::Add,
            diff: Some("written by fake model\n".into()),
        }]
    );
    assert_eq!(
        std::fs::read_to_string(asks.join("fake_written.txt")).unwrap(),
        "written by fake model\n"
    );
    assert_no_unparsed(&all);
    codex
        .check_capabilities("apply_patch_with_approval_and_modes", &all)
        .await;

    // acceptEdits: the patch applies without asking.
    let (edit_turn, plan_turn) = tokio::join!(
        codex.turn("edits", "USE_WRITE now"),
        codex.turn("plan", "USE_WRITE now"),
    );
    assert!(
        !edit_turn
            .iter()
            .any(|e| matches!(e.payload, EventPayload::PermissionAsked(_)))
    );
    assert_eq!(completed(&edit_turn, ItemKind::FileChange).len(), 1);
    assert!(edits.join("fake_written.txt").exists());

    // plan: read-only; the patch is refused without asking and nothing is written.
    assert!(
        !plan_turn
            .iter()
            .any(|e| matches!(e.payload, EventPayload::PermissionAsked(_)))
    );
    assert_eq!(stop_reason(&plan_turn), StopReason::Completed);
    assert!(!plan.join("fake_written.txt").exists());
    let refused = codex.model_requests("plan").await[1].body["input"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert!(
        refused["output"].as_str().unwrap().contains("rejected"),
        "{refused}"
    );
    assert_no_unparsed(&codex.daemon.events("edits").await);
    assert_no_unparsed(&codex.daemon.events("plan").await);
}

#[tokio::test]
async fn question_is_answered() {
    sandbox_testkit::isolate!();
    let Some(codex) = Codex::start().await else {
        return;
    };
    codex.session("s", CreateSessionRequest::default()).await;
    codex
        .daemon
        .client
        .send_message("s", "ASK_QUESTION please")
        .await
        .unwrap();
    let events = codex
        .wait_count("s", 1, |e| {
            matches!(e.payload, EventPayload::QuestionAsked(_))
        })
        .await;
    let asked = find(&events, |p| match p {
        EventPayload::QuestionAsked(q) => Some(q.clone()),
        _ => None,
    })
    .unwrap();
    let texts: Vec<&str> = asked
        .questions
        .iter()
        .map(|q| q.question.as_str())
        .collect();
    assert_eq!(
        texts,
        [
            "Which color should the widget be?",
            "Which extras do you want?"
        ]
    );
    let labels: Vec<&str> = asked.questions[0]
        .options
        .iter()
        .map(|o| o.label.as_str())
        .collect();
    assert_eq!(labels, ["Red", "Blue"]);
    assert_eq!(asked.questions[1].header.as_deref(), Some("Extras"));
    codex
        .daemon
        .client
        .reply_question(
            "s",
            &asked.question_id,
            vec![vec!["Blue".into()], vec!["Docs".into()]],
        )
        .await
        .unwrap();
    let all = codex.daemon.wait_turn_ended("s", 1).await;
    assert_eq!(
        canonical(&turn_events(&all, "turn_1")),
        [
            "turnStarted",
            "itemStarted:message",
            "itemCompleted:message",
            "itemStarted:toolCall",
            "itemCompleted:toolCall",
            "questionAsked",
            "questionResolved",
            "itemStarted:message",
            "itemDelta*",
            "itemCompleted:message",
            "turnEnded",
        ]
    );
    // Codex hands the answers to the model in its own shape.
    let requests = codex.model_requests("s").await;
    let output = requests[1].body["input"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    let answers: Value = serde_json::from_str(output["output"].as_str().unwrap()).unwrap();
    assert_eq!(
        answers,
        json!({"answers": {"color": {"answers": ["Blue"]}, "extras": {"answers": ["Docs"]}}})
    );
    // The question points at the `request_user_input` call.
    let call = find(&all, |p| match p {
        EventPayload::ItemCompleted(i) if i.item.kind == ItemKind::ToolCall => Some(i.item.clone()),
        _ => None,
    })
    .unwrap();
    assert_eq!(asked.item_id.as_deref(), Some(call.item_id.as_str()));
    // A rejected question reaches the model as a refusal, not as an empty answer.
    codex
        .daemon
        .client
        .send_message("s", "ASK_QUESTION again")
        .await
        .unwrap();
    let events = codex
        .wait_count("s", 2, |e| {
            matches!(e.payload, EventPayload::QuestionAsked(_))
        })
        .await;
    let second = events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::QuestionAsked(q) => Some(q.question_id.clone()),
            _ => None,
        })
        .next_back()
        .unwrap();
    codex
        .daemon
        .client
        .reject_question("s", &second)
        .await
        .unwrap();
    let all = codex.daemon.wait_turn_ended("s", 2).await;
    let requests = codex.model_requests("s").await;
    let output = requests[3].body["input"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    let answers: Value = serde_json::from_str(output["output"].as_str().unwrap()).unwrap();
    let declined = json!({"answers": [sandbox_agents::codex::convert::hitl::DECLINED]});
    assert_eq!(
        answers,
        json!({"answers": {"color": declined, "extras": declined}})
    );
    assert_no_unparsed(&all);
    codex.check_capabilities("question_is_answered", &all).await;
}
