//! Human-in-the-loop scenarios: permissions (once, reject, always), file writes,
//! permission modes, questions.

use std::sync::Arc;

use sandbox_testkit::provider::script::{
    AFTER_TOOL_TEXT, TOOL_OUTPUT_FILE, WRITTEN_CONTENT, WRITTEN_FILE,
};
use sandbox_universal::{
    ContentPart, CreateSessionRequest, EventPayload, FileChangeKind, ItemKind, ItemStatus,
    PermissionKind, PermissionMode, PermissionOutcome, PermissionReply, StopReason,
};

use super::support::{Ctx, Observed, command, expect, items, stop_reason, tool_turn};

pub async fn tool_once(ctx: Arc<Ctx>) -> Observed {
    ctx.session("once").await;
    let turn = ctx.send("once", "USE_TOOL once").await;
    let asked = ctx
        .first("once", |p| match p {
            EventPayload::PermissionAsked(p) => Some(p.clone()),
            _ => None,
        })
        .await;
    assert_eq!(asked.kind, PermissionKind::Command);
    assert!(asked.command.as_deref().unwrap().contains(TOOL_OUTPUT_FILE));
    assert!(
        asked
            .always_scope
            .as_deref()
            .unwrap()
            .starts_with("claude:Bash(")
    );
    ctx.daemon
        .client
        .reply_permission("once", &asked.permission_id, PermissionReply::Once)
        .await
        .unwrap();
    let events = ctx.ended("once", &turn).await;
    expect(
        &events,
        &tool_turn(
            &["permissionAsked", "permissionResolved"],
            "commandExecution",
        ),
    );
    let run = &items(&events, ItemKind::CommandExecution)[0];
    let (_, output, code) = command(run);
    assert_eq!((output.as_deref(), code), (Some("fake-tool-ran"), Some(0)));
    assert!(run.parent_id.is_some());
    assert_eq!(items(&events, ItemKind::Message)[1].text(), AFTER_TOOL_TEXT);
    assert!(ctx.cwd("once").join(TOOL_OUTPUT_FILE).exists());
    vec!["toolCalls", "commandExecution", "permissions"]
}

pub async fn tool_reject(ctx: Arc<Ctx>) -> Observed {
    ctx.session("reject").await;
    let turn = ctx.send("reject", "USE_TOOL reject").await;
    ctx.daemon
        .answer_first_permission("reject", PermissionReply::Reject)
        .await;
    let events = ctx.ended("reject", &turn).await;
    expect(
        &events,
        &tool_turn(&["permissionAsked", "permissionResolved"], "toolResult"),
    );
    let result = &items(&events, ItemKind::ToolResult)[0];
    assert_eq!(result.status, ItemStatus::Failed);
    assert!(
        !ctx.cwd("reject").join(TOOL_OUTPUT_FILE).exists(),
        "the denied command ran"
    );
    vec!["toolCalls", "permissions"]
}

/// `always`, then the same call again: the client is not asked a second time.
pub async fn tool_always(ctx: Arc<Ctx>) -> Observed {
    ctx.session("always").await;
    let turn = ctx.send("always", "USE_TOOL always").await;
    ctx.daemon
        .answer_first_permission("always", PermissionReply::Always)
        .await;
    let first = ctx.ended("always", &turn).await;
    expect(
        &first,
        &tool_turn(
            &["permissionAsked", "permissionResolved"],
            "commandExecution",
        ),
    );
    let second = ctx.turn("always", "USE_TOOL always again").await;
    // Claude re-checks the output redirection; the daemon answers from the `always` scope.
    expect(
        &second,
        &tool_turn(&["permissionResolved"], "commandExecution"),
    );
    let automatic = second
        .iter()
        .any(|e| matches!(&e.payload, EventPayload::PermissionResolved(r) if r.automatic));
    assert!(automatic, "the second call was approved automatically");
    assert_eq!(
        command(&items(&second, ItemKind::CommandExecution)[0]).2,
        Some(0)
    );
    // Claude's rule went to the session, not into the user's project settings.
    assert!(
        !ctx.cwd("always").join(".claude").exists(),
        "project settings were written"
    );
    vec!["permissions", "permissionAlways", "commandExecution"]
}

pub async fn write_file(ctx: Arc<Ctx>) -> Observed {
    ctx.session("write").await;
    let turn = ctx.send("write", "USE_WRITE please").await;
    let asked = ctx
        .first("write", |p| match p {
            EventPayload::PermissionAsked(p) => Some(p.clone()),
            _ => None,
        })
        .await;
    assert_eq!(asked.kind, PermissionKind::FileChange);
    assert!(asked.paths[0].ends_with(WRITTEN_FILE));
    ctx.daemon
        .client
        .reply_permission("write", &asked.permission_id, PermissionReply::Once)
        .await
        .unwrap();
    let events = ctx.ended("write", &turn).await;
    expect(
        &events,
        &tool_turn(&["permissionAsked", "permissionResolved"], "fileChange"),
    );
    match &items(&events, ItemKind::FileChange)[0].content[0] {
        ContentPart::FileChange {
            path,
            change_kind,
            diff,
        } => {
            assert!(path.ends_with(WRITTEN_FILE));
            assert_eq!(*change_kind, FileChangeKind::Add);
            assert!(
                diff.as_deref()
                    .unwrap()
                    .contains(&format!("+{}", WRITTEN_CONTENT.trim_end()))
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        std::fs::read_to_string(ctx.cwd("write").join(WRITTEN_FILE)).unwrap(),
        WRITTEN_CONTENT
    );
    vec!["fileChanges", "permissions"]
}

/// Permission modes from the session: acceptEdits writes without asking; bypass (as
/// root, with dangerouslySkipPermissions) runs commands without asking.
pub async fn permission_modes(ctx: Arc<Ctx>) -> Observed {
    let edits = CreateSessionRequest {
        permission_mode: Some(PermissionMode::AcceptEdits),
        ..ctx.request("edits")
    };
    ctx.healthy("edits", edits).await;
    let bypass = CreateSessionRequest {
        dangerously_skip_permissions: Some(true),
        ..ctx.request("bypass")
    };
    ctx.healthy("bypass", bypass).await;
    let (edits, bypass) = tokio::join!(
        ctx.turn("edits", "USE_WRITE edits"),
        ctx.turn("bypass", "USE_TOOL bypass")
    );
    expect(&edits, &tool_turn(&[], "fileChange"));
    expect(&bypass, &tool_turn(&[], "commandExecution"));
    assert!(ctx.cwd("bypass").join(TOOL_OUTPUT_FILE).exists());
    vec!["fileChanges", "commandExecution"]
}

pub async fn questions(ctx: Arc<Ctx>) -> Observed {
    ctx.session("question").await;
    let turn = ctx.send("question", "ASK_QUESTION please").await;
    let asked = ctx
        .first("question", |p| match p {
            EventPayload::QuestionAsked(q) => Some(q.clone()),
            _ => None,
        })
        .await;
    assert_eq!(asked.questions.len(), 2);
    assert!(!asked.questions[0].multi_select && asked.questions[1].multi_select);
    let answers = vec![
        vec!["Blue".to_string()],
        vec!["Tests".to_string(), "Docs".to_string()],
    ];
    ctx.daemon
        .client
        .reply_question("question", &asked.question_id, answers)
        .await
        .unwrap();
    let events = ctx.ended("question", &turn).await;
    expect(
        &events,
        &tool_turn(&["questionAsked", "questionResolved"], "toolResult"),
    );
    let result = &items(&events, ItemKind::ToolResult)[0];
    let ContentPart::ToolResult {
        output, is_error, ..
    } = &result.content[0]
    else {
        panic!()
    };
    assert!(!is_error);
    assert!(
        output.contains("=\"Blue\"") && output.contains("=\"Tests, Docs\""),
        "{output}"
    );
    let answered_at = events.last().unwrap().sequence;
    let turn = ctx.send("question", "ASK_QUESTION again").await;
    let events = ctx
        .daemon
        .wait_for("question", |e| {
            matches!(e.payload, EventPayload::QuestionAsked(_)) && e.sequence > answered_at
        })
        .await;
    let EventPayload::QuestionAsked(second) = &events.last().unwrap().payload else {
        unreachable!()
    };
    ctx.daemon
        .client
        .reject_question("question", &second.question_id)
        .await
        .unwrap();
    let events = ctx.ended("question", &turn).await;
    expect(
        &events,
        &tool_turn(&["questionAsked", "questionResolved"], "toolResult"),
    );
    assert_eq!(
        items(&events, ItemKind::ToolResult)[0].status,
        ItemStatus::Failed
    );
    vec!["questions", "toolCalls"]
}

/// Cancel while a permission prompt is open: the CLI withdraws it, the daemon cancels
/// the request, and the turn ends cancelled without running the tool.
pub async fn cancel_during_permission(ctx: Arc<Ctx>) -> Observed {
    ctx.session("cancel-perm").await;
    let turn = ctx.send("cancel-perm", "USE_TOOL then cancel").await;
    let asked = ctx
        .first("cancel-perm", |p| match p {
            EventPayload::PermissionAsked(p) => Some(p.permission_id.clone()),
            _ => None,
        })
        .await;
    ctx.daemon.client.cancel("cancel-perm").await.unwrap();
    let events = ctx.ended("cancel-perm", &turn).await;
    let mut wanted = tool_turn(&["permissionAsked"], "toolResult");
    wanted.truncate(wanted.len() - 4);
    wanted.extend(["permissionResolved".to_string(), "turnEnded".to_string()]);
    expect(&events, &wanted);
    let resolved = events.iter().any(|e| {
        matches!(&e.payload, EventPayload::PermissionResolved(r)
            if r.permission_id == asked && r.outcome == PermissionOutcome::Cancelled)
    });
    assert!(resolved, "the open request is cancelled");
    assert_eq!(stop_reason(&events), StopReason::Cancelled);
    assert!(!ctx.cwd("cancel-perm").join(TOOL_OUTPUT_FILE).exists());
    let after = ctx.turn("cancel-perm", "say hi after").await;
    assert_eq!(stop_reason(&after), StopReason::Completed);
    vec!["cancel", "permissions"]
}
