//! Human in the loop through the daemon: a command's permission answered once, rejected
//! and always; a write with its diff; a question answered and rejected.

use sandbox_testkit::provider::script::{WRITTEN_CONTENT, WRITTEN_FILE};
use sandbox_universal::{
    ContentPart, CreateSessionRequest, EventPayload, ItemKind, ItemStatus, PermissionKind,
    PermissionOutcome, PermissionReply, PermissionRequest, QuestionOutcome, QuestionRequest,
    StopReason, UniversalEvent,
};

use super::harness::*;

/// Sends `message`, answers the permission it asks (the session's `n`th) with `reply`, and
/// returns the turn's events.
async fn asked_turn(
    oc: &OpenCode,
    message: &str,
    n: usize,
    reply: PermissionReply,
) -> (PermissionRequest, Vec<UniversalEvent>) {
    oc.daemon.permission_turn("s", message, n, reply).await
}

#[tokio::test]
async fn command_permission_once_reject_always() {
    sandbox_testkit::isolate!();
    let Some(oc) = OpenCode::start().await else {
        return;
    };
    let cwd = oc.session("s", CreateSessionRequest::default()).await;
    let output = cwd.join("fake_tool_output.txt");

    let (asked, once) = asked_turn(&oc, "USE_TOOL now", 1, PermissionReply::Once).await;
    assert_eq!(canonical(&once), asked_then_answered("commandExecution"));
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
            .starts_with("opencode:bash:"),
        "{asked:?}"
    );
    assert_eq!(stop_reason(&once), StopReason::Completed);
    let command = completed(&once, ItemKind::CommandExecution).pop().unwrap();
    assert_eq!(command.status, ItemStatus::Completed);
    let (_, out, exit_code) = command_part(&command);
    assert_eq!(out.map(str::trim), Some("fake-tool-ran"));
    assert_eq!(exit_code, Some(0));
    assert!(output.exists(), "the command ran in the session's cwd");
    std::fs::remove_file(&output).unwrap();

    let (_, rejected) = asked_turn(&oc, "USE_TOOL now", 2, PermissionReply::Reject).await;
    // OpenCode ends the turn when the user rejects a tool: the model is not called again.
    assert_eq!(
        canonical(&rejected),
        [
            "turnStarted",
            "itemStarted:message",
            "itemCompleted:message",
            "itemStarted:commandExecution",
            "permissionAsked",
            "permissionResolved",
            "itemCompleted:commandExecution",
            "itemStarted:toolResult",
            "itemCompleted:toolResult",
            "turnEnded",
        ]
    );
    let command = completed(&rejected, ItemKind::CommandExecution)
        .pop()
        .unwrap();
    assert_eq!(command.status, ItemStatus::Failed);
    assert!(!output.exists(), "a rejected command does not run");

    // OpenCode sends the next prompt in the same user message as the rejected call's
    // result, which the fake model reads as "after a tool" (it answers with text): one
    // plain turn in between, so the next prompt is a message of its own.
    let between = oc.turn("s", "say hi").await;
    assert_eq!(stop_reason(&between), StopReason::Completed);
    let (_, always) = asked_turn(&oc, "USE_TOOL now", 3, PermissionReply::Always).await;
    assert_eq!(canonical(&always), asked_then_answered("commandExecution"));
    assert_eq!(stop_reason(&always), StopReason::Completed);
    assert!(output.exists());
    std::fs::remove_file(&output).unwrap();
    // The same command again: the daemon answers for the user.
    let again = oc.turn("s", "USE_TOOL now").await;
    let resolved = find(&again, |p| match p {
        EventPayload::PermissionResolved(r) => Some(r.clone()),
        _ => None,
    })
    .expect("resolved");
    assert!(resolved.automatic, "{resolved:?}");
    assert_eq!(resolved.outcome, PermissionOutcome::Always);
    assert_eq!(stop_reason(&again), StopReason::Completed);
    assert!(output.exists());

    let all = oc.daemon.events("s").await;
    assert_no_unparsed(&all);
    oc.check_capabilities("command_permission_once_reject_always", &all)
        .await;
}

#[tokio::test]
async fn write_with_diff_and_file_on_disk() {
    sandbox_testkit::isolate!();
    let Some(oc) = OpenCode::start().await else {
        return;
    };
    let cwd = oc.session("s", CreateSessionRequest::default()).await;
    let (asked, turn) = asked_turn(&oc, "USE_WRITE now", 1, PermissionReply::Once).await;
    assert_eq!(canonical(&turn), asked_then_answered("fileChange"));
    assert_eq!(asked.kind, PermissionKind::FileChange);
    assert_eq!(stop_reason(&turn), StopReason::Completed);
    let written = cwd.join(WRITTEN_FILE);
    assert_eq!(std::fs::read_to_string(&written).unwrap(), WRITTEN_CONTENT);
    let change = completed(&turn, ItemKind::FileChange).pop().unwrap();
    assert_eq!(change.status, ItemStatus::Completed);
    let Some(ContentPart::FileChange { path, diff, .. }) = change.content.first() else {
        panic!("{change:?}");
    };
    assert_eq!(path, &written.display().to_string());
    assert!(
        diff.as_deref().unwrap().contains("+written by fake model"),
        "{diff:?}"
    );
    let all = oc.daemon.events("s").await;
    assert_no_unparsed(&all);
    oc.check_capabilities("write_with_diff_and_file_on_disk", &all)
        .await;
}

#[tokio::test]
async fn question_answered_and_rejected() {
    sandbox_testkit::isolate!();
    let Some(oc) = OpenCode::start().await else {
        return;
    };
    oc.session("s", CreateSessionRequest::default()).await;
    let ask = |n: usize| {
        let oc = &oc;
        async move {
            let seen = std::sync::atomic::AtomicUsize::new(0);
            let events = oc
                .daemon
                .wait_for("s", |e| {
                    matches!(e.payload, EventPayload::QuestionAsked(_))
                        && seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1 == n
                })
                .await;
            let EventPayload::QuestionAsked(asked) = &events.last().unwrap().payload else {
                unreachable!()
            };
            asked.clone()
        }
    };
    let turn = oc
        .daemon
        .client
        .send_message("s", "ASK_QUESTION please")
        .await
        .unwrap();
    let asked: QuestionRequest = ask(1).await;
    let answers: Vec<Vec<String>> = asked
        .questions
        .iter()
        .map(|q| vec![q.options[0].label.clone()])
        .collect();
    oc.daemon
        .client
        .reply_question("s", &asked.question_id, answers.clone())
        .await
        .unwrap();
    let answered = oc.turn_ended("s", &turn.turn_id).await;
    let asked_question = [
        "turnStarted",
        "itemStarted:message",
        "itemCompleted:message",
        "itemStarted:toolCall",
        "questionAsked",
        "questionResolved",
        "itemCompleted:toolCall",
        "itemStarted:toolResult",
        "itemCompleted:toolResult",
    ];
    let answered_turn: Vec<&str> = asked_question
        .iter()
        .copied()
        .chain([
            "itemStarted:message",
            "itemDelta*",
            "itemCompleted:message",
            "turnEnded",
        ])
        .collect();
    assert_eq!(canonical(&answered), answered_turn);
    assert_eq!(stop_reason(&answered), StopReason::Completed);
    let resolved = find(&answered, |p| match p {
        EventPayload::QuestionResolved(r) => Some(r.clone()),
        _ => None,
    })
    .unwrap();
    assert_eq!(resolved.outcome, QuestionOutcome::Answered);
    // The model hears the answer.
    let heard = oc.model_requests("s").await.iter().any(|r| {
        r.body.to_string().contains(&answers[0][0]) && r.body.to_string().contains("tool_result")
    });
    assert!(heard, "the answer reached the model");

    let turn = oc
        .daemon
        .client
        .send_message("s", "ASK_QUESTION please")
        .await
        .unwrap();
    let asked = ask(2).await;
    oc.daemon
        .client
        .reject_question("s", &asked.question_id)
        .await
        .unwrap();
    let rejected = oc.turn_ended("s", &turn.turn_id).await;
    // Rejected, the question ends the turn (as a rejected permission does).
    let rejected_turn: Vec<&str> = asked_question
        .iter()
        .copied()
        .chain(["turnEnded"])
        .collect();
    assert_eq!(canonical(&rejected), rejected_turn);
    let resolved = find(&rejected, |p| match p {
        EventPayload::QuestionResolved(r) => Some(r.clone()),
        _ => None,
    })
    .unwrap();
    assert_eq!(resolved.outcome, QuestionOutcome::Rejected);
    let all = oc.daemon.events("s").await;
    assert_no_unparsed(&all);
    oc.check_capabilities("question_answered_and_rejected", &all)
        .await;
}
