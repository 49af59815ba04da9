//! What only Claude Code does, with the real pinned CLI offline against the test kit's
//! provider, set up as the scenario table sets it up ([`Ctx::start`]); everything every
//! agent does is in the table (`scenarios::claude`).

use sandbox_agents::process::INHERITED_VARS;
use sandbox_client::ClientError;
use sandbox_testkit::provider::script::TOOL_OUTPUT_FILE;
use sandbox_universal::{
    AgentError, AgentId, ContentPart, CreateSessionRequest, EventPayload, ItemKind, ItemStatus,
    PermissionKind, PermissionMode, PermissionReply, StopReason, UniversalEvent,
};

use crate::common::agent_events::kill_9;
use crate::scenarios::ctx::{Ctx, Session, asked_permission, items, stop_reason};
use crate::scenarios::subject::{Ask, KEY, environ};

mod policy;
mod shared_store;

/// The variables Claude's process gets besides those every agent inherits.
const OWN_VARS: &[&str] = &[
    "HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    "XDG_STATE_HOME",
    "CLAUDE_CONFIG_DIR",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
    "DISABLE_TELEMETRY",
    "DISABLE_AUTOUPDATER",
    "DISABLE_ERROR_REPORTING",
    "DISABLE_BUG_COMMAND",
];

/// The session's Claude processes (at least one).
fn claude_pids(ctx: &Ctx, s: &Session) -> Vec<i32> {
    let pids = ctx
        .subject
        .processes(&s.cwd, ctx.daemon.data_dir.path(), None);
    assert!(!pids.is_empty(), "{}: no Claude process", s.id);
    pids
}

/// Claude's process gets an allow-list of variables (the inherited ones and its own
/// launch settings, its key and endpoint among them), and its configuration lives under
/// the daemon's data directory, not the user's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_its_own_variables_reach_claude() {
    sandbox_testkit::isolate!();
    let Some(ctx) = Ctx::start(AgentId::Claude).await else {
        return;
    };
    let s = ctx.session("env").await;
    let events = ctx.turn(&s.id, &ctx.prompt(Ask::Text, "env")).await;
    assert_eq!(stop_reason(&events), StopReason::Completed);
    let base = ctx.subject.provider.as_ref().unwrap().base_url();
    let data = ctx.daemon.data_dir.path().display().to_string();
    for pid in claude_pids(&ctx, &s) {
        let env: Vec<(String, String)> = environ(pid)
            .iter()
            .filter_map(|e| e.split_once('='))
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        let get = |name: &str| env.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str());
        for (name, _) in &env {
            assert!(
                INHERITED_VARS.contains(&name.as_str()) || OWN_VARS.contains(&name.as_str()),
                "{name} reached Claude"
            );
        }
        assert_eq!(get("ANTHROPIC_API_KEY"), Some(KEY));
        assert_eq!(get("ANTHROPIC_BASE_URL"), Some(base.as_str()));
        assert!(
            get("CLAUDE_CONFIG_DIR").is_some_and(|dir| dir.starts_with(&data)),
            "CLAUDE_CONFIG_DIR outside the data dir"
        );
    }
}

/// A Claude Code version other than the installed one is refused up front (Claude is the
/// agent whose installed version a session may pin).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_uninstalled_claude_version_is_refused() {
    sandbox_testkit::isolate!();
    let Some(ctx) = Ctx::start(AgentId::Claude).await else {
        return;
    };
    let (request, _) = ctx.request("old");
    let request = CreateSessionRequest {
        agent_version: Some("0.0.1".into()),
        ..request
    };
    let problem = match ctx.daemon.client.create_session("old", &request).await {
        Err(ClientError::Problem(problem)) => problem,
        other => panic!("a problem, got {other:?}"),
    };
    assert_eq!(problem.status, 409, "{problem:?}");
    assert!(
        matches!(problem.agent_error, Some(AgentError::NotInstalled { .. })),
        "{problem:?}"
    );
}

/// `always` is kept by the session: Claude writes no `.claude` project settings into the
/// user's directory (its own way to remember a rule).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_always_answer_writes_no_project_settings() {
    sandbox_testkit::isolate!();
    let Some(ctx) = Ctx::start(AgentId::Claude).await else {
        return;
    };
    let s = ctx.session("always").await;
    let (events, asked) = ctx
        .turn_answering(
            &s.id,
            &ctx.prompt(Ask::Shell, "always"),
            PermissionReply::Always,
        )
        .await;
    assert_eq!(stop_reason(&events), StopReason::Completed);
    assert!(!asked.is_empty(), "always: nothing asked");
    let again = ctx.turn(&s.id, &ctx.prompt(Ask::Shell, "again")).await;
    assert!(!asked_permission(&again), "always: asked again");
    assert!(
        !s.cwd.join(".claude").exists(),
        "project settings were written"
    );
}

/// The effort variant reaches the model call as `output_config.effort`, and the `Plan`
/// agent (one of the CLI's agents, listed as a mode) is read-only: no `Write` tool.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn effort_and_the_plan_agent_reach_the_model_call() {
    sandbox_testkit::isolate!();
    let Some(ctx) = Ctx::start(AgentId::Claude).await else {
        return;
    };
    let s = ctx
        .session_with("settings", |r| CreateSessionRequest {
            model: Some("sonnet".into()),
            variant: Some("low".into()),
            agent_mode: Some("Plan".into()),
            ..r
        })
        .await;
    let message = ctx.prompt(Ask::Text, "settings");
    let events = ctx.turn(&s.id, &message).await;
    assert_eq!(stop_reason(&events), StopReason::Completed);
    let calls = ctx.subject.calls_with(&message);
    let call = calls.first().expect("the model call");
    assert_eq!(call.body["output_config"]["effort"], "low");
    let tools: Vec<&str> = call.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        !tools.contains(&"Write") && tools.contains(&"Read"),
        "the Plan agent is read-only: {tools:?}"
    );
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

/// EXIT_PLAN in plan mode, answered with `reply`; the turn's events.
async fn exit_plan(ctx: &Ctx, s: &Session, reply: PermissionReply) -> Vec<UniversalEvent> {
    let after = ctx.last_sequence(&s.id).await;
    let turn = ctx.send(&s.id, &ctx.prompt(Ask::Plan, &s.id)).await;
    let asked = ctx.next_permission(&s.id, after).await;
    assert_eq!(asked.kind, PermissionKind::PlanApproval, "{asked:?}");
    ctx.reply(&s.id, &asked, reply).await;
    let events = ctx.ended(&s.id, &turn).await;
    assert_eq!(stop_reason(&events), StopReason::Completed);
    events
}

/// USE_TOOL, any permission rejected: whether a command permission was asked. When none
/// was, Claude (still planning) refused the command itself, and said so.
async fn asks_for_a_command(ctx: &Ctx, s: &Session, tag: &str) -> bool {
    let (events, asked) = ctx
        .turn_answering(&s.id, &ctx.prompt(Ask::Shell, tag), PermissionReply::Reject)
        .await;
    assert!(!s.cwd.join(TOOL_OUTPUT_FILE).exists(), "{tag}: it ran");
    if let Some(asked) = asked.first() {
        assert_eq!(asked.kind, PermissionKind::Command, "{tag}: {asked:?}");
        return true;
    }
    let notices = statuses(&events);
    assert!(
        notices
            .iter()
            .any(|(label, detail)| label == "permissionDenied" && detail.starts_with("Bash: ")),
        "{tag}: {notices:?}"
    );
    let results = items(&events, ItemKind::ToolResult);
    assert!(
        results.iter().all(|r| r.status == ItemStatus::Failed),
        "{tag}: {results:?}"
    );
    false
}

/// Claude reports its permission mode as it changes (a `permissionMode` status after an
/// approved plan); the daemon restarts a crashed CLI, and a daemon restart resumes a
/// session, in the mode the CLI last reported: out of plan mode once the plan was
/// approved (a command asks), still planning after a rejection (Claude refuses the
/// command itself, with a `permissionDenied` notice).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mode_the_cli_reported_survives_a_crash_and_a_restart() {
    sandbox_testkit::isolate!();
    let Some(ctx) = Ctx::start(AgentId::Claude).await else {
        return;
    };
    let plan = |r| CreateSessionRequest {
        permission_mode: Some(PermissionMode::Plan),
        ..r
    };
    let (approved, rejected) = tokio::join!(
        ctx.session_with("plan-ok", plan),
        ctx.session_with("plan-no", plan)
    );
    let (ok, no) = tokio::join!(
        exit_plan(&ctx, &approved, PermissionReply::Once),
        exit_plan(&ctx, &rejected, PermissionReply::Reject),
    );
    assert_eq!(
        statuses(&ok),
        [("permissionMode".to_string(), "default".to_string())]
    );
    assert!(statuses(&no).is_empty(), "{:?}", statuses(&no));

    // A crash: the respawned CLI is told the mode it last reported.
    let killed = claude_pids(&ctx, &approved);
    let after = ctx.last_sequence(&approved.id).await;
    killed.iter().for_each(|pid| kill_9(*pid));
    ctx.next(&approved.id, after, |p| match p {
        EventPayload::Error(AgentError::ProcessExited { .. }) => Some(()),
        _ => None,
    })
    .await;
    let (asked, planning) = tokio::join!(
        asks_for_a_command(&ctx, &approved, "after the crash"),
        asks_for_a_command(&ctx, &rejected, "while planning"),
    );
    assert!(asked, "after the crash: a command asks");
    assert!(!planning, "still planning: a command is refused");
    let respawned: Vec<i32> = claude_pids(&ctx, &approved)
        .into_iter()
        .filter(|pid| !killed.contains(pid))
        .collect();
    let resumed_in_default = respawned.iter().any(|pid| {
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
        args.windows(2)
            .any(|w| w == [&b"--permission-mode"[..], &b"default"[..]])
    });
    assert!(resumed_in_default, "respawned in the mode the CLI reported");

    // A daemon restart: the new driver knows no mode; each session resumes in its own.
    let Ctx { subject, daemon } = ctx;
    let ctx = Ctx {
        daemon: daemon.restart().await,
        subject,
    };
    let (asked, planning) = tokio::join!(
        asks_for_a_command(&ctx, &approved, "after the restart"),
        asks_for_a_command(&ctx, &rejected, "planning after the restart"),
    );
    assert!(asked, "after the restart: a command asks");
    assert!(!planning, "after the restart: still planning");
}
