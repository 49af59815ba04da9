//! Session policy: instructions, tool lists, a turn limit, images, the session's
//! environment and MCP servers — each honoured as the agent's `policy` (`GET /agents`)
//! says, or refused with a 422 naming the field when it says the agent cannot.

use std::sync::Arc;

use base64::Engine;
use sandbox_universal::{
    AgentId, CreateSessionRequest, EventPayload, ItemKind, MessagePart, PermissionMode,
    PermissionOutcome, PolicySupport, SendMessageRequest, StopReason, SystemPromptMode, ToolPolicy,
    ToolRestriction,
};

use super::Proved;
use sandbox_testkit::provider::RecordedRequest;

use super::ctx::{Ctx, items, stop_reason};
use super::subject::{Ask, Runs, environ};

/// A prompt keyword: the fake model calls the shell tool again after every result.
const LOOP: &str = "LOOP_TOOLS";

/// The agent's policy support, as `GET /agents` states it.
pub async fn support(ctx: &Ctx) -> PolicySupport {
    let agents = ctx.daemon.client.list_agents().await.unwrap();
    agents
        .agents
        .into_iter()
        .find(|a| a.id == ctx.subject.agent)
        .expect("the agent is listed")
        .policy
}

/// Creating `id` with `tweak` is refused: 422 `policy-unsupported` naming `field`.
pub(super) async fn refused(
    ctx: &Ctx,
    id: &str,
    field: &str,
    tweak: impl FnOnce(CreateSessionRequest) -> CreateSessionRequest,
) {
    let (request, _) = ctx.request(id);
    let error = ctx
        .daemon
        .client
        .create_session(id, &tweak(request))
        .await
        .expect_err("refused");
    let problem = error.problem().unwrap_or_else(|| panic!("{id}: {error}"));
    assert_eq!(problem.status, 422, "{id}: {problem:?}");
    assert!(
        problem.type_uri.ends_with("policy-unsupported") && problem.detail.contains(field),
        "{id}: {problem:?}"
    );
}

/// The model calls whose conversation holds a prompt tagged `tag` (see
/// `Subject::prompt`), oldest first; side calls without tools (titles) left out.
fn calls(ctx: &Ctx, tag: &str) -> Vec<RecordedRequest> {
    let needle = format!("({tag})");
    ctx.subject
        .provider
        .as_ref()
        .map(|p| p.model_requests())
        .unwrap_or_default()
        .into_iter()
        .filter(|r| !r.tool_names().is_empty() && r.body.to_string().contains(&needle))
        .collect()
}

/// The bodies (as JSON text) of [`calls`].
fn bodies(ctx: &Ctx, tag: &str) -> Vec<String> {
    calls(ctx, tag).iter().map(|r| r.body.to_string()).collect()
}

/// The tool names the first call tagged `tag` offered.
fn first_tools(ctx: &Ctx, tag: &str) -> Vec<String> {
    let calls = calls(ctx, tag);
    let first = calls
        .first()
        .unwrap_or_else(|| panic!("{tag}: no model call"));
    first.tool_names()
}

/// `systemPrompt`: appended (and replacing, where the agent can) it reaches the model in
/// every call of the session; a mode the agent lacks is refused.
pub async fn system_prompt(ctx: Arc<Ctx>) -> Proved {
    let support = support(&ctx).await;
    let mut proved = Vec::new();
    let mut lengths = Vec::new();
    for mode in [SystemPromptMode::Append, SystemPromptMode::Replace] {
        let id = format!(
            "system-prompt-{}",
            serde_json::to_value(mode).unwrap().as_str().unwrap()
        );
        let marker = format!("SANDBOX-POLICY-MARKER-{}", id.to_uppercase());
        let tweak = |r: CreateSessionRequest| CreateSessionRequest {
            system_prompt: Some(format!("Always remember {marker}.")),
            system_prompt_mode: Some(mode),
            ..r
        };
        if !support.system_prompt_modes.contains(&mode) {
            refused(&ctx, &id, "systemPrompt", tweak).await;
            continue;
        }
        if ctx.subject.runs != Runs::RealCli {
            continue;
        }
        let s = ctx.session_with(&id, tweak).await;
        let events = ctx.turn(&s.id, &ctx.prompt(Ask::Text, &id)).await;
        assert_eq!(stop_reason(&events), StopReason::Completed, "{id}");
        if matches!(
            ctx.subject.agent,
            AgentId::Claude | AgentId::Codex | AgentId::Pi
        ) {
            // A process of the session's own: killed, the next turn's agent (resumed)
            // still carries the prompt.
            let after = ctx.last_sequence(&s.id).await;
            super::faults::kill(&ctx, &s, None);
            ctx.next(&s.id, after, |p| {
                matches!(p, EventPayload::Error(_)).then_some(())
            })
            .await;
        }
        let events = ctx
            .turn(&s.id, &ctx.prompt(Ask::Text, &format!("{id}-2")))
            .await;
        assert_eq!(stop_reason(&events), StopReason::Completed, "{id}");
        let calls = bodies(&ctx, &id);
        assert!(calls.len() >= 2, "{id}: {} model calls", calls.len());
        for call in &calls {
            assert!(call.contains(&marker), "{id}: a call without the prompt");
        }
        lengths.push(calls[0].len());
        proved.push("systemPrompt");
    }
    if let [appended, replaced] = lengths[..] {
        assert!(
            replaced < appended,
            "system-prompt: replacing leaves the agent's own prompt out ({replaced} ≥ {appended} bytes)"
        );
    }
    proved.truncate(1);
    proved
}

/// `tools`: a denied shell is gone from the model's tools (or its calls are refused by
/// the daemon, as the agent's policy says), and so are the tools an allow list leaves out.
pub async fn tools(ctx: Arc<Ctx>) -> Proved {
    let support = support(&ctx).await;
    let Some(&shell) = support.tools.get("shell") else {
        refused(&ctx, "tools-deny", "tools", |r| CreateSessionRequest {
            tools: Some(ToolPolicy {
                allow: None,
                deny: vec!["shell".into()],
            }),
            ..r
        })
        .await;
        return Vec::new();
    };
    if ctx.subject.runs != Runs::RealCli {
        return Vec::new();
    }
    let base = ctx.session("tools-all").await;
    ctx.turn(&base.id, &ctx.prompt(Ask::Text, "tools-all"))
        .await;
    let all = first_tools(&ctx, "tools-all");
    let s = ctx
        .session_with("tools-deny", |r| CreateSessionRequest {
            tools: Some(ToolPolicy {
                allow: None,
                deny: vec!["shell".into()],
            }),
            ..r
        })
        .await;
    let (events, asked) = ctx
        .turn_answering(
            &s.id,
            &ctx.prompt(Ask::Shell, "tools-deny"),
            sandbox_universal::PermissionReply::Once,
        )
        .await;
    assert!(
        asked.is_empty(),
        "tools-deny: a refused tool is never put to the client"
    );
    let ran = items(&events, ItemKind::CommandExecution)
        .iter()
        .any(|i| i.status == sandbox_universal::ItemStatus::Completed);
    assert!(!ran, "tools-deny: the shell ran");
    assert!(
        !ctx.on_disk(&s, ctx.subject.marker().unwrap_or("-")),
        "tools-deny: the marker file"
    );
    let offered = first_tools(&ctx, "tools-deny");
    match shell {
        ToolRestriction::Removed => {
            assert!(
                offered.len() < all.len(),
                "tools-deny: {offered:?} vs {all:?}"
            );
        }
        ToolRestriction::Refused => {
            let auto = events.iter().any(|e| {
                matches!(&e.payload, EventPayload::PermissionResolved(r)
                    if r.automatic && r.outcome == PermissionOutcome::Reject)
            });
            assert!(auto, "tools-deny: the daemon refuses the call in the log");
        }
        ToolRestriction::Absent => {}
    }
    // An allow list of reading alone leaves no tool that writes or runs.
    let reading = ctx
        .session_with("tools-allow", |r| CreateSessionRequest {
            tools: Some(ToolPolicy {
                allow: Some(vec!["read".into()]),
                deny: Vec::new(),
            }),
            ..r
        })
        .await;
    ctx.turn(&reading.id, &ctx.prompt(Ask::Text, "tools-allow"))
        .await;
    let allowed = first_tools(&ctx, "tools-allow");
    assert!(
        allowed.len() < all.len(),
        "tools-allow: {allowed:?} of {all:?}"
    );
    vec!["toolLists"]
}

/// `maxTurns`: a model that keeps calling tools is stopped after the limit; the turn ends
/// `maxTurns` and the next turn works.
pub async fn max_turns(ctx: Arc<Ctx>) -> Proved {
    let support = support(&ctx).await;
    let limited = |r: CreateSessionRequest| CreateSessionRequest {
        max_turns: Some(2),
        permission_mode: Some(PermissionMode::Bypass),
        dangerously_skip_permissions: Some(true),
        ..r
    };
    if support.max_turns.is_none() {
        refused(&ctx, "max-turns", "maxTurns", limited).await;
        return Vec::new();
    }
    if ctx.subject.runs != Runs::RealCli {
        return Vec::new();
    }
    let s = ctx.session_with("max-turns", limited).await;
    let events = ctx.turn(&s.id, &format!("{LOOP} (max-turns)")).await;
    assert_eq!(stop_reason(&events), StopReason::MaxTurns, "max-turns");
    let calls = calls(&ctx, "max-turns").len();
    assert!(
        (2..=4).contains(&calls),
        "max-turns: {calls} model calls for a limit of 2"
    );
    let next = ctx
        .turn(&s.id, &ctx.prompt(Ask::Text, "max-turns-next"))
        .await;
    assert_eq!(
        stop_reason(&next),
        StopReason::Completed,
        "max-turns: the next turn"
    );
    vec!["maxTurns"]
}

/// A 1×1 PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

/// A message with an image, inline and by path: both reach the model as images; the user
/// item carries the parts.
pub async fn image(ctx: Arc<Ctx>) -> Proved {
    let support = support(&ctx).await;
    if ctx.subject.runs != Runs::RealCli && !support.image_types.is_empty() {
        return Vec::new();
    }
    let s = ctx.session("image").await;
    std::fs::write(
        s.cwd.join("shot.png"),
        base64::engine::general_purpose::STANDARD
            .decode(PNG)
            .unwrap(),
    )
    .unwrap();
    let request = SendMessageRequest {
        message: None,
        content: Some(vec![
            MessagePart::Text {
                text: ctx.prompt(Ask::Text, "image"),
            },
            MessagePart::Image {
                media_type: "image/png".into(),
                data: Some(PNG.into()),
                path: None,
            },
            MessagePart::Image {
                media_type: "image/png".into(),
                data: None,
                path: Some("shot.png".into()),
            },
        ]),
    };
    let sent = ctx.daemon.client.send_request(&s.id, &request).await;
    if support.image_types.is_empty() {
        let problem = sent
            .expect_err("images refused")
            .problem()
            .cloned()
            .unwrap();
        assert_eq!(problem.status, 422, "image: {problem:?}");
        assert!(problem.detail.contains("content[1]"), "image: {problem:?}");
        return Vec::new();
    }
    let turn = sent.unwrap().turn_id;
    let events = ctx.ended(&s.id, &turn).await;
    assert_eq!(stop_reason(&events), StopReason::Completed, "image");
    let user = items(&events, ItemKind::Message)
        .into_iter()
        .find(|i| i.role == Some(sandbox_universal::ItemRole::User))
        .unwrap();
    assert_eq!(
        user.content.len(),
        3,
        "image: the user item carries the parts"
    );
    let calls = bodies(&ctx, "image");
    let first = calls.first().expect("image: a model call");
    // The same bytes twice: inline and read from the workspace.
    assert!(
        first.matches(PNG.trim_end_matches('=')).count() >= 2,
        "image: {first:.400}"
    );
    vec!["images"]
}

/// `env`: the session's variables reach the agent's process (not its argv); the daemon's
/// own cannot be given.
pub async fn session_env(ctx: Arc<Ctx>) -> Proved {
    let support = support(&ctx).await;
    let value = format!("policy-env-{}", ctx.subject.agent);
    let tweak = |r: CreateSessionRequest| CreateSessionRequest {
        env: Some([("POLICY_PROBE".to_string(), value.clone())].into()),
        ..r
    };
    if !support.env {
        refused(&ctx, "session-env", "env", tweak).await;
        return Vec::new();
    }
    if ctx.subject.runs == Runs::StandIn {
        // A process per turn, gone when the turn ends: the stand-in records the names
        // (never the values) of its environment.
        let s = ctx.session_with("session-env", tweak).await;
        ctx.turn(&s.id, &ctx.prompt(Ask::Text, "session-env")).await;
        let named = super::subject::files_under(ctx.daemon.data_dir.path())
            .into_iter()
            .filter(|f| f.ends_with("standin-calls.jsonl"))
            .filter_map(|f| std::fs::read_to_string(f).ok())
            .flat_map(|text| text.lines().map(str::to_string).collect::<Vec<_>>())
            .filter_map(|line| serde_json::from_str::<serde_json::Value>(&line).ok())
            .any(|run| {
                run["cwd"].as_str() == Some(&s.cwd.display().to_string())
                    && run["env_names"]
                        .as_array()
                        .is_some_and(|names| names.iter().any(|n| n == "POLICY_PROBE"))
            });
        assert!(
            named,
            "session-env: the variable is not in the stand-in's environment"
        );
        return vec!["sessionEnv"];
    }
    if ctx.subject.runs != Runs::RealCli {
        return Vec::new();
    }
    let s = ctx.session_with("session-env", tweak).await;
    ctx.turn(&s.id, &ctx.prompt(Ask::Text, "session-env")).await;
    let entry = format!("POLICY_PROBE={value}");
    let pids = ctx
        .subject
        .processes(&s.cwd, ctx.daemon.data_dir.path(), None);
    assert!(!pids.is_empty(), "session-env: no agent process");
    assert!(
        pids.iter().any(|&pid| environ(pid).contains(&entry)),
        "session-env: the variable is not in the agent's environment"
    );
    let protected = ctx
        .daemon
        .client
        .create_session(
            "session-env-home",
            &CreateSessionRequest {
                env: Some([("HOME".to_string(), "/tmp".to_string())].into()),
                ..ctx.request("session-env-home").0
            },
        )
        .await
        .expect_err("HOME is the daemon's");
    assert_eq!(protected.problem().unwrap().status, 422);
    vec!["sessionEnv"]
}
