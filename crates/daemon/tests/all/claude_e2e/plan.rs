//! Plan mode: `ExitPlanMode` becomes a plan approval the client accepts or rejects.
//!
//! In the pinned CLI the model writes its plan to a plan file, loads the deferred
//! `ExitPlanMode` tool with `ToolSearch`, and calls it; the CLI reads the plan from the
//! file and asks the host. The fake provider's `EXIT_PLAN` does exactly that.

use std::sync::Arc;

use sandbox_testkit::provider::script::{
    AFTER_TOOL_TEXT, PLAN_TEXT, TOOL_OUTPUT_FILE, WRITTEN_CONTENT, WRITTEN_FILE,
};
use sandbox_universal::{
    AgentError, ContentPart, CreateSessionRequest, EventPayload, ItemKind, ItemStatus,
    PermissionKind, PermissionMode, PermissionReply, PermissionRequest, StopReason, UniversalEvent,
};

use super::support::{Ctx, Observed, claude_pid, command, expect, items, stop_reason, tool_turn};

/// A `status` item.
const STATUS: [&str; 2] = ["itemStarted:status", "itemCompleted:status"];

/// The `EXIT_PLAN` turn: the plan file written, `ToolSearch`, then `ExitPlanMode` with
/// the client's answer and what follows it (`answered`), then the final text.
fn exit_plan_turn(answered: &[&str]) -> Vec<String> {
    let mut skeleton = tool_turn(&[], "fileChange");
    let tail = skeleton.split_off(7);
    let search = [
        "itemStarted:toolCall",
        "itemCompleted:toolCall",
        "itemStarted:toolResult",
        "itemCompleted:toolResult",
        "itemStarted:toolCall",
        "itemCompleted:toolCall",
        "permissionAsked",
        "permissionResolved",
    ];
    skeleton.extend(search.map(String::from));
    skeleton.extend(answered.iter().map(|s| s.to_string()));
    skeleton.extend(["itemStarted:toolResult", "itemCompleted:toolResult"].map(String::from));
    skeleton.extend(tail);
    skeleton
}

/// The `(label, detail)` of each `status` item.
fn statuses(events: &[UniversalEvent]) -> Vec<(String, String)> {
    items(events, ItemKind::Status)
        .iter()
        .map(|item| match &item.content[0] {
            ContentPart::Status { label, detail } => {
                (label.clone(), detail.clone().unwrap_or_default())
            }
            other => panic!("{other:?}"),
        })
        .collect()
}

fn plan_session(ctx: &Ctx, name: &str) -> CreateSessionRequest {
    CreateSessionRequest {
        permission_mode: Some(PermissionMode::Plan),
        ..ctx.request(name)
    }
}

/// The last event's sequence so far.
async fn last_sequence(ctx: &Ctx, id: &str) -> u64 {
    ctx.daemon.events(id).await.last().unwrap().sequence
}

/// The first permission request after `sequence`.
async fn asked_after(ctx: &Ctx, id: &str, sequence: u64) -> PermissionRequest {
    let events = ctx
        .daemon
        .wait_for(id, |e| {
            e.sequence > sequence && matches!(e.payload, EventPayload::PermissionAsked(_))
        })
        .await;
    match &events.last().unwrap().payload {
        EventPayload::PermissionAsked(asked) => asked.clone(),
        _ => unreachable!(),
    }
}

/// Sends `EXIT_PLAN`, checks the plan approval the client sees, answers it, and returns
/// the turn's events.
async fn exit_plan(
    ctx: &Ctx,
    id: &str,
    reply: PermissionReply,
    answered: &[&str],
) -> Vec<UniversalEvent> {
    let since = last_sequence(ctx, id).await;
    let turn = ctx.send(id, "EXIT_PLAN please").await;
    let asked = asked_after(ctx, id, since).await;
    assert_eq!(asked.kind, PermissionKind::PlanApproval);
    assert_eq!(asked.tool.as_deref(), Some("ExitPlanMode"));
    assert_eq!(asked.plan.as_deref(), Some(PLAN_TEXT), "the plan text");
    assert!(asked.always_scope.is_none(), "a plan is approved once");
    assert!(asked.item_id.is_some(), "linked to the ExitPlanMode call");
    ctx.daemon
        .client
        .reply_permission(id, &asked.permission_id, reply)
        .await
        .unwrap();
    let events = ctx.ended(id, &turn).await;
    expect(&events, &exit_plan_turn(answered));
    assert_eq!(stop_reason(&events), StopReason::Completed);
    let plan_file = &items(&events, ItemKind::FileChange)[0];
    let ContentPart::FileChange { path, .. } = &plan_file.content[0] else {
        panic!("{plan_file:?}")
    };
    assert!(path.contains("/plans/") && path.ends_with(".md"), "{path}");
    assert_eq!(std::fs::read_to_string(path).unwrap(), PLAN_TEXT);
    let ContentPart::ToolResult { output, .. } =
        &items(&events, ItemKind::ToolResult)[0].content[0]
    else {
        panic!("{events:?}")
    };
    assert_eq!(output, "ExitPlanMode", "what ToolSearch loaded");
    assert_eq!(items(&events, ItemKind::Message)[1].text(), AFTER_TOOL_TEXT);
    events
}

/// The output and status of the `ExitPlanMode` result.
fn exit_result(events: &[UniversalEvent]) -> (String, ItemStatus) {
    let result = items(events, ItemKind::ToolResult).pop().unwrap();
    let ContentPart::ToolResult { output, .. } = &result.content[0] else {
        panic!("{result:?}")
    };
    (output.clone(), result.status)
}

/// Accepted: the CLI leaves plan mode, so edits and commands are asked for as in the
/// default mode, also in a process respawned after a crash.
pub async fn plan_accepted(ctx: Arc<Ctx>) -> Observed {
    let id = "plan-ok";
    let native = ctx
        .healthy(id, plan_session(&ctx, id))
        .await
        .native_session_id
        .unwrap();
    let events = exit_plan(&ctx, id, PermissionReply::Once, &STATUS).await;
    // The CLI reports that it left plan mode.
    assert_eq!(
        statuses(&events),
        [("permissionMode".to_string(), "default".to_string())]
    );
    let (output, status) = exit_result(&events);
    assert_eq!(status, ItemStatus::Completed);
    assert!(output.contains("User has approved your plan"), "{output}");
    assert!(output.contains(PLAN_TEXT.trim_end()), "{output}");

    // Out of plan mode: a write gets the default mode's question, whose `always`
    // would switch to acceptEdits, and runs once allowed.
    let since = last_sequence(&ctx, id).await;
    let turn = ctx.send(id, "USE_WRITE after the plan").await;
    let asked = asked_after(&ctx, id, since).await;
    assert_eq!(asked.kind, PermissionKind::FileChange);
    assert_eq!(
        asked.always_scope.as_deref(),
        Some("claude:mode:acceptEdits")
    );
    ctx.daemon
        .client
        .reply_permission(id, &asked.permission_id, PermissionReply::Once)
        .await
        .unwrap();
    let events = ctx.ended(id, &turn).await;
    expect(
        &events,
        &tool_turn(&["permissionAsked", "permissionResolved"], "fileChange"),
    );
    assert_eq!(
        std::fs::read_to_string(ctx.cwd(id).join(WRITTEN_FILE)).unwrap(),
        WRITTEN_CONTENT
    );

    // A crash does not bring plan mode back: the respawned CLI asks for a command
    // (in plan mode it refuses commands without asking).
    let pid = claude_pid(&native);
    // SAFETY: SIGKILL to the test's own child process.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    ctx.daemon
        .wait_for(id, |e| {
            matches!(
                e.payload,
                EventPayload::Error(AgentError::ProcessExited { .. })
            )
        })
        .await;
    let since = last_sequence(&ctx, id).await;
    let turn = ctx.send(id, "USE_TOOL after the crash").await;
    let asked = asked_after(&ctx, id, since).await;
    assert_eq!(asked.kind, PermissionKind::Command);
    let respawned = claude_pid(&native);
    assert_ne!(respawned, pid, "a new process");
    let cmdline = std::fs::read(format!("/proc/{respawned}/cmdline")).unwrap();
    let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
    assert!(
        args.windows(2)
            .any(|w| w == [&b"--permission-mode"[..], &b"default"[..]]),
        "resumed in the mode the CLI reported"
    );
    ctx.daemon
        .client
        .reply_permission(id, &asked.permission_id, PermissionReply::Once)
        .await
        .unwrap();
    let events = ctx.ended(id, &turn).await;
    expect(
        &events,
        &tool_turn(
            &["permissionAsked", "permissionResolved"],
            "commandExecution",
        ),
    );
    assert_eq!(
        command(&items(&events, ItemKind::CommandExecution)[0]).2,
        Some(0)
    );
    vec![
        "planApproval",
        "permissions",
        "toolCalls",
        "fileChanges",
        "commandExecution",
    ]
}

/// Rejected: the model gets the denial, the turn ends normally, and Claude keeps
/// planning (it refuses a command without asking, as plan mode does).
pub async fn plan_rejected(ctx: Arc<Ctx>) -> Observed {
    let id = "plan-no";
    ctx.healthy(id, plan_session(&ctx, id)).await;
    let events = exit_plan(&ctx, id, PermissionReply::Reject, &[]).await;
    let (output, status) = exit_result(&events);
    assert_eq!(status, ItemStatus::Failed);
    assert!(output.contains("rejected the plan"), "{output}");
    let cwd = ctx.cwd(id).display().to_string();
    let told = ctx.provider.model_requests().into_iter().any(|r| {
        let body = r.body.to_string();
        body.contains(&cwd) && body.contains("The user rejected the plan")
    });
    assert!(told, "the model got the denial");

    // Plan mode refuses the command by itself. Its classifier for commands runs on
    // Anthropic's servers, which a custom base URL does not reach: the CLI says so.
    let events = ctx.turn(id, "USE_TOOL while planning").await;
    expect(
        &events,
        &tool_turn(&[STATUS, STATUS].concat(), "toolResult"),
    );
    let notices = statuses(&events);
    assert_eq!(notices[0].0, "warning");
    assert_eq!(notices[1].0, "permissionDenied");
    assert!(notices[1].1.starts_with("Bash: "), "{notices:?}");
    assert_eq!(
        items(&events, ItemKind::ToolResult)[0].status,
        ItemStatus::Failed
    );
    assert!(!ctx.cwd(id).join(TOOL_OUTPUT_FILE).exists());
    vec!["planApproval", "permissions", "toolCalls", "fileChanges"]
}

/// After a daemon restart (no mode known to the new driver), each plan session resumes
/// in the mode its conversation ended in: out of plan mode once approved (a command is
/// asked for), still planning after a rejection (a command is refused).
pub async fn after_restart(ctx: &Ctx) -> Observed {
    let approved = async {
        let since = last_sequence(ctx, "plan-ok").await;
        let turn = ctx.send("plan-ok", "USE_TOOL after the restart").await;
        let asked = asked_after(ctx, "plan-ok", since).await;
        assert_eq!(asked.kind, PermissionKind::Command);
        ctx.daemon
            .client
            .reply_permission("plan-ok", &asked.permission_id, PermissionReply::Reject)
            .await
            .unwrap();
        ctx.ended("plan-ok", &turn).await
    };
    let rejected = ctx.turn("plan-no", "USE_TOOL after the restart");
    let (approved, rejected) = tokio::join!(approved, rejected);
    expect(
        &approved,
        &tool_turn(&["permissionAsked", "permissionResolved"], "toolResult"),
    );
    // The new process warns again that plan mode cannot check commands.
    expect(
        &rejected,
        &tool_turn(&[STATUS, STATUS].concat(), "toolResult"),
    );
    assert_eq!(statuses(&rejected)[1].0, "permissionDenied");
    vec!["resume", "planApproval"]
}
