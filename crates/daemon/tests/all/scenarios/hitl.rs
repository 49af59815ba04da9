//! Tools and the human in the loop: a shell command, a file write, permissions once,
//! rejected and always, the permission modes, questions, plan approval, and a cancel
//! while a permission waits.

use std::sync::Arc;

use sandbox_testkit::provider::script::PLAN_TEXT;
use sandbox_universal::{
    ContentPart, CreateSessionRequest, EventPayload, ItemKind, PermissionKind, PermissionMode,
    PermissionOutcome, PermissionReply, QuestionOutcome, StopReason, UniversalEvent,
};

use super::Proved;
use super::ctx::{Ctx, Session, asked_permission, commands_ok, items, stop_reason};
use super::subject::{Ask, Runs};

/// `toolCalls` when the turn shows tool call or result items.
fn tool_items(events: &[UniversalEvent], proved: &mut Proved) {
    if !items(events, ItemKind::ToolCall).is_empty()
        || !items(events, ItemKind::ToolResult).is_empty()
    {
        proved.push("toolCalls");
    }
}

/// How `permission_id` was resolved in `events`.
fn outcome(events: &[UniversalEvent], permission_id: &str) -> Option<PermissionOutcome> {
    events.iter().find_map(|e| match &e.payload {
        EventPayload::PermissionResolved(r) if r.permission_id == permission_id => Some(r.outcome),
        _ => None,
    })
}

/// Whether the shell prompt's command ran: a command item exited 0 and, where commands
/// really run, its marker file exists.
fn shell_ran(ctx: &Ctx, session: &Session, events: &[UniversalEvent]) -> bool {
    let marker = ctx.subject.marker().is_none_or(|m| ctx.on_disk(session, m));
    !commands_ok(events).is_empty() && marker
}

/// Whether the write prompt's file is on disk with its content.
fn written(ctx: &Ctx, session: &Session) -> bool {
    let (name, content) = ctx.subject.written();
    std::fs::read_to_string(session.cwd.join(name)).is_ok_and(|c| c == content)
}

/// The daemon's own view of the write turn, whichever agent wrote: `turnEnded` counts
/// the file, and the turn's changes list it with a diff holding what was written.
async fn turn_changed(ctx: &Ctx, session: &Session, events: &[UniversalEvent]) {
    let (name, content) = ctx.subject.written();
    let ended = events
        .iter()
        .find_map(|e| match &e.payload {
            EventPayload::TurnEnded(ended) => Some(ended.clone()),
            _ => None,
        })
        .expect("write: turnEnded");
    let counts = ended
        .changes
        .unwrap_or_else(|| panic!("write: turnEnded carries no change counts: {ended:?}"));
    assert!(counts.added + counts.modified >= 1, "write: {counts:?}");
    let changes = ctx
        .daemon
        .client
        .turn_changes(&session.id, &ended.turn_id)
        .await
        .expect("write: the turn's changes");
    assert_eq!(changes.counts, counts);
    let file = changes
        .files
        .iter()
        .find(|f| f.path == name)
        .unwrap_or_else(|| panic!("write: {name} is not among the turn's changes: {changes:?}"));
    let diff = file.diff.as_deref().unwrap_or_default();
    assert!(
        content
            .lines()
            .all(|line| diff.contains(&format!("+{line}"))),
        "write: the turn's diff of {name}: {diff:?}"
    );
}

/// USE_TOOL, any permission allowed once: a command item that exits 0.
pub async fn shell(ctx: Arc<Ctx>) -> Proved {
    let s = ctx.session("shell").await;
    let prompt = ctx.prompt(Ask::Shell, "shell");
    let (events, asked) = ctx
        .turn_answering(&s.id, &prompt, PermissionReply::Once)
        .await;
    assert_eq!(stop_reason(&events), StopReason::Completed);
    assert!(
        shell_ran(&ctx, &s, &events),
        "shell: the command did not run"
    );
    let mut proved = vec!["commandExecution"];
    if !asked.is_empty() {
        proved.push("permissions");
    }
    tool_items(&events, &mut proved);
    proved
}

/// USE_WRITE, any permission allowed once: a file change item and the file on disk.
pub async fn write(ctx: Arc<Ctx>) -> Proved {
    let s = ctx.session("write").await;
    let prompt = ctx.prompt(Ask::Write, "write");
    let (events, asked) = ctx
        .turn_answering(&s.id, &prompt, PermissionReply::Once)
        .await;
    assert_eq!(stop_reason(&events), StopReason::Completed);
    let (name, content) = ctx.subject.written();
    let changes = items(&events, ItemKind::FileChange);
    let change = changes
        .iter()
        .flat_map(|i| &i.content)
        .find_map(|p| match p {
            ContentPart::FileChange { path, diff, .. } if path.ends_with(name) => Some(diff),
            _ => None,
        })
        .unwrap_or_else(|| panic!("write: no file change of {name}: {changes:?}"));
    if let Some(diff) = change {
        assert!(
            diff.contains(content.trim_end()),
            "write: the diff {diff:?}"
        );
    }
    assert!(written(&ctx, &s), "write: {name} is not on disk");
    turn_changed(&ctx, &s, &events).await;
    let mut proved = vec!["fileChanges"];
    if !asked.is_empty() {
        assert!(asked.iter().any(|a| a.kind == PermissionKind::FileChange));
        proved.push("permissions");
    }
    tool_items(&events, &mut proved);
    proved
}

/// USE_TOOL: a command permission naming the command, allowed once; the command runs.
pub async fn once(ctx: Arc<Ctx>) -> Proved {
    let s = ctx.session("once").await;
    let after = ctx.last_sequence(&s.id).await;
    let turn = ctx.send(&s.id, &ctx.prompt(Ask::Shell, "once")).await;
    let asked = ctx.next_permission(&s.id, after).await;
    assert_eq!(asked.kind, PermissionKind::Command, "once: {asked:?}");
    assert!(
        asked.command.is_some(),
        "once: the command is shown: {asked:?}"
    );
    ctx.reply(&s.id, &asked, PermissionReply::Once).await;
    let events = ctx.ended(&s.id, &turn).await;
    assert_eq!(stop_reason(&events), StopReason::Completed);
    assert_eq!(
        outcome(&events, &asked.permission_id),
        Some(PermissionOutcome::Once)
    );
    assert!(
        shell_ran(&ctx, &s, &events),
        "once: the command did not run"
    );
    vec!["permissions"]
}

/// USE_TOOL, rejected: nothing runs and the turn still completes.
pub async fn reject(ctx: Arc<Ctx>) -> Proved {
    let s = ctx.session("reject").await;
    let after = ctx.last_sequence(&s.id).await;
    let turn = ctx.send(&s.id, &ctx.prompt(Ask::Shell, "reject")).await;
    let asked = ctx.next_permission(&s.id, after).await;
    ctx.reply(&s.id, &asked, PermissionReply::Reject).await;
    let events = ctx.ended(&s.id, &turn).await;
    assert_eq!(stop_reason(&events), StopReason::Completed, "reject");
    assert_eq!(
        outcome(&events, &asked.permission_id),
        Some(PermissionOutcome::Reject)
    );
    assert!(commands_ok(&events).is_empty(), "reject: a command ran");
    if let Some(marker) = ctx.subject.marker() {
        assert!(!ctx.on_disk(&s, marker), "reject: the rejected command ran");
    }
    let next = ctx
        .turn(&s.id, &ctx.prompt(Ask::Text, "after reject"))
        .await;
    assert_eq!(stop_reason(&next), StopReason::Completed);
    vec!["permissions"]
}

/// USE_TOOL allowed always; the same call in the next turn is not asked again.
pub async fn always(ctx: Arc<Ctx>) -> Proved {
    let s = ctx.session("always").await;
    let after = ctx.last_sequence(&s.id).await;
    let turn = ctx.send(&s.id, &ctx.prompt(Ask::Shell, "always")).await;
    let asked = ctx.next_permission(&s.id, after).await;
    ctx.reply(&s.id, &asked, PermissionReply::Always).await;
    let first = ctx.ended(&s.id, &turn).await;
    assert_eq!(
        outcome(&first, &asked.permission_id),
        Some(PermissionOutcome::Always)
    );
    assert!(
        shell_ran(&ctx, &s, &first),
        "always: the command did not run"
    );
    if let Some(marker) = ctx.subject.marker() {
        std::fs::remove_file(s.cwd.join(marker)).unwrap();
    }
    let second = ctx
        .turn(&s.id, &ctx.prompt(Ask::Shell, "always again"))
        .await;
    assert!(!asked_permission(&second), "always: asked again");
    assert!(
        shell_ran(&ctx, &s, &second),
        "always: the second command did not run"
    );
    vec!["permissions", "permissionAlways"]
}

/// Each permission mode the agent lists, with one meaning for every agent: `default`
/// asks before writes and commands; `acceptEdits` writes without asking but asks before a
/// command that edits nothing; `bypass` asks nothing; `plan` changes no file.
pub async fn modes(ctx: Arc<Ctx>) -> Proved {
    let agent = ctx.subject.agent.to_string();
    let listed = ctx
        .daemon
        .client
        .agent_modes(&agent)
        .await
        .unwrap()
        .permission_modes;
    assert!(
        listed.contains(&PermissionMode::Default),
        "modes: {listed:?}"
    );
    let runs = listed.iter().map(|mode| mode_checked(&ctx, *mode));
    futures::future::join_all(runs).await;
    vec!["permissions"]
}

async fn mode_checked(ctx: &Ctx, mode: PermissionMode) {
    let name = serde_json::to_value(mode).unwrap();
    let id = format!("mode-{}", name.as_str().unwrap());
    let s = ctx
        .session_with(&id, |r| CreateSessionRequest {
            permission_mode: Some(mode),
            dangerously_skip_permissions: (mode == PermissionMode::Bypass).then_some(true),
            ..r
        })
        .await;
    let write = ctx.prompt(Ask::Write, &id);
    let (events, asked) = ctx
        .turn_answering(&s.id, &write, PermissionReply::Once)
        .await;
    let asked_write = asked.iter().any(|a| a.kind == PermissionKind::FileChange);
    match mode {
        PermissionMode::Default => assert!(asked_write && written(ctx, &s), "{id}: {asked:?}"),
        PermissionMode::AcceptEdits | PermissionMode::Bypass => {
            assert!(asked.is_empty() && written(ctx, &s), "{id}: {asked:?}")
        }
        PermissionMode::Plan => {
            assert!(!written(ctx, &s), "{id}: plan mode wrote a file");
            assert_ne!(stop_reason(&events), StopReason::Error, "{id}");
            return;
        }
    }
    let command = ctx.prompt(Ask::Python, &id);
    let (events, asked) = ctx
        .turn_answering(&s.id, &command, PermissionReply::Once)
        .await;
    let asked_command = asked.iter().any(|a| a.kind == PermissionKind::Command);
    let expected = mode != PermissionMode::Bypass;
    assert_eq!(asked_command, expected, "{id}: asked {asked:?}");
    assert!(
        !commands_ok(&events).is_empty(),
        "{id}: the command did not run"
    );
}

/// ASK_QUESTION: two questions, the second multi-select, answered (the answers reach the
/// model); then asked again and rejected. An agent that asks none just answers.
pub async fn questions(ctx: Arc<Ctx>) -> Proved {
    let s = ctx.session("questions").await;
    let prompt = ctx.prompt(Ask::Question, "questions");
    let after = ctx.last_sequence(&s.id).await;
    let turn = ctx.send(&s.id, &prompt).await;
    let asked = ctx
        .next(&s.id, after, |p| match p {
            EventPayload::QuestionAsked(q) => Some(Some(q.clone())),
            EventPayload::TurnEnded(t) if t.turn_id == turn => Some(None),
            _ => None,
        })
        .await;
    let Some(asked) = asked else {
        let events = ctx.ended(&s.id, &turn).await;
        assert_eq!(stop_reason(&events), StopReason::Completed);
        return vec![];
    };
    assert_eq!(asked.questions.len(), 2, "questions: {asked:?}");
    // Codex's question tool has no multi-select: its second question takes one answer.
    assert!(!asked.questions[0].multi_select, "questions: {asked:?}");
    let picked = if asked.questions[1].multi_select {
        2
    } else {
        1
    };
    let one = asked.questions[0].options.last().unwrap().label.clone();
    let two: Vec<String> = asked.questions[1].options[..picked]
        .iter()
        .map(|o| o.label.clone())
        .collect();
    ctx.daemon
        .client
        .reply_question(
            &s.id,
            &asked.question_id,
            vec![vec![one.clone()], two.clone()],
        )
        .await
        .unwrap();
    let events = ctx.ended(&s.id, &turn).await;
    assert_eq!(stop_reason(&events), StopReason::Completed);
    let heard = match ctx.subject.runs {
        Runs::Mock => items(&events, ItemKind::Message)
            .iter()
            .map(|m| m.text())
            .collect(),
        _ => ctx
            .subject
            .calls_with(&prompt)
            .last()
            .map(|c| c.body.to_string())
            .unwrap_or_default(),
    };
    for label in std::iter::once(&one).chain(&two) {
        assert!(
            heard.contains(label.as_str()),
            "questions: `{label}` never reached the model"
        );
    }
    let mut proved = vec!["questions"];
    tool_items(&events, &mut proved);
    // Asked again and rejected: the question resolves rejected and the turn ends.
    let (again, events) = ctx
        .reject_next_question(&s.id, &ctx.prompt(Ask::Question, "questions again"))
        .await;
    let rejected = events.iter().any(|e| {
        matches!(&e.payload, EventPayload::QuestionResolved(r)
            if r.question_id == again.question_id && r.outcome == QuestionOutcome::Rejected)
    });
    assert!(rejected, "questions: the second question resolves rejected");
    assert_ne!(stop_reason(&events), StopReason::Error);
    let next = ctx
        .turn(&s.id, &ctx.prompt(Ask::Text, "after questions"))
        .await;
    assert_eq!(stop_reason(&next), StopReason::Completed);
    proved
}

/// Cancel while a permission waits: it resolves `cancelled`, the tool never runs, the turn
/// ends `cancelled` and the next one works.
pub async fn cancel_permission(ctx: Arc<Ctx>) -> Proved {
    let s = ctx.session("cancel-permission").await;
    let after = ctx.last_sequence(&s.id).await;
    let turn = ctx
        .send(&s.id, &ctx.prompt(Ask::Shell, "cancel-permission"))
        .await;
    let asked = ctx.next_permission(&s.id, after).await;
    ctx.daemon.client.cancel(&s.id).await.unwrap();
    let events = ctx.ended(&s.id, &turn).await;
    assert_eq!(stop_reason(&events), StopReason::Cancelled);
    assert_eq!(
        outcome(&events, &asked.permission_id),
        Some(PermissionOutcome::Cancelled)
    );
    assert!(
        commands_ok(&events).is_empty(),
        "cancel-permission: a command ran"
    );
    if let Some(marker) = ctx.subject.marker() {
        assert!(
            !ctx.on_disk(&s, marker),
            "cancel-permission: the command ran"
        );
    }
    let next = ctx
        .turn(&s.id, &ctx.prompt(Ask::Text, "after the cancelled request"))
        .await;
    assert_eq!(stop_reason(&next), StopReason::Completed);
    vec!["cancel", "permissions"]
}

/// EXIT_PLAN in plan mode: the plan is a `planApproval` permission carrying the plan.
/// Approved, the agent leaves plan mode (a write then asks, as in `default`); rejected, it
/// keeps planning (nothing is written).
pub async fn plan_approval(ctx: Arc<Ctx>) -> Proved {
    let (approved, rejected) = tokio::join!(
        planned(&ctx, "plan-approved", PermissionReply::Once),
        planned(&ctx, "plan-rejected", PermissionReply::Reject),
    );
    let write = ctx.prompt(Ask::Write, "after the plan");
    let (events, asked) = ctx
        .turn_answering(&approved.id, &write, PermissionReply::Once)
        .await;
    assert_eq!(stop_reason(&events), StopReason::Completed);
    assert!(
        asked.iter().any(|a| a.kind == PermissionKind::FileChange) && written(&ctx, &approved),
        "plan-approval: out of plan mode a write asks and runs: {asked:?}"
    );
    let (events, _) = ctx
        .turn_answering(&rejected.id, &write, PermissionReply::Once)
        .await;
    assert_ne!(stop_reason(&events), StopReason::Error);
    assert!(
        !written(&ctx, &rejected),
        "plan-approval: still planning, yet it wrote"
    );
    vec!["planApproval"]
}

async fn planned(ctx: &Ctx, id: &str, reply: PermissionReply) -> Session {
    let s = ctx
        .session_with(id, |r| CreateSessionRequest {
            permission_mode: Some(PermissionMode::Plan),
            ..r
        })
        .await;
    let after = ctx.last_sequence(id).await;
    let turn = ctx.send(id, &ctx.prompt(Ask::Plan, id)).await;
    let asked = ctx.next_permission(id, after).await;
    assert_eq!(asked.kind, PermissionKind::PlanApproval, "{id}: {asked:?}");
    assert_eq!(asked.plan.as_deref(), Some(PLAN_TEXT), "{id}: the plan");
    ctx.reply(id, &asked, reply).await;
    let events = ctx.ended(id, &turn).await;
    assert_eq!(stop_reason(&events), StopReason::Completed, "{id}");
    s
}
