//! `sandbox-daemon acp` driven over stdio by a scripted ACP client built on the official
//! crate's client side: a mock turn with a tool, a permission and a multi-select question
//! (answered through an elicitation form), a cancelled turn, `session/load` of a finished
//! session (every update exactly once), listing, closing and deleting, a mode picked
//! before the first prompt, a question the editor cannot show, and a real Claude Code turn
//! offline (a shell command approved from the editor).

use crate::common;

use std::collections::BTreeMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use crate::scenarios::ctx::Ctx;
use crate::scenarios::subject::Ask;
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema as s;
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{self as acp, Agent, ByteStreams, Client};
use common::{Options, TestDaemon};
use sandbox_universal::AgentId;
use sandbox_universal::EventPayload;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

mod live;

/// What the scripted editor saw.
#[derive(Default)]
struct Seen {
    updates: Vec<s::SessionNotification>,
    permissions: Vec<s::RequestPermissionRequest>,
    forms: Vec<s::CreateElicitationRequest>,
}

type Shared = Arc<Mutex<Seen>>;

/// Runs `script` as an ACP client of a bridge to `daemon` (`forms`: whether the client
/// answers elicitation forms).
async fn with_bridge<F>(daemon: &TestDaemon, forms: bool, seen: Shared, script: F)
where
    F: AsyncFnOnce(ConnectionTo<Agent>) -> acp::Result<()> + Send,
{
    with_agent_bridge(daemon, &["--agent", "mock"], forms, seen, script).await
}

/// [`with_bridge`] for the agent (and options) `args` name.
async fn with_agent_bridge<F>(
    daemon: &TestDaemon,
    args: &[&str],
    forms: bool,
    seen: Shared,
    script: F,
) where
    F: AsyncFnOnce(ConnectionTo<Agent>) -> acp::Result<()> + Send,
{
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_sandbox-daemon"))
        .arg("acp")
        .args(args)
        .args(["--endpoint", &daemon.url()])
        .env(
            "SANDBOX_DAEMON_TOKEN",
            daemon.token.clone().unwrap_or_default(),
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("the bridge starts");
    let stdin = child.stdin.take().unwrap().compat_write();
    let stdout = child.stdout.take().unwrap().compat();
    let on_update = seen.clone();
    let on_permission = seen.clone();
    let on_form = seen.clone();
    let capabilities = if forms {
        s::ClientCapabilities::new().elicitation(
            s::ElicitationCapabilities::new().form(s::ElicitationFormCapabilities::new()),
        )
    } else {
        s::ClientCapabilities::new()
    };
    Client
        .v1()
        .name("scripted-editor")
        .on_receive_notification(
            async move |n: s::SessionNotification, _cx: ConnectionTo<Agent>| {
                on_update.lock().unwrap().updates.push(n);
                Ok(())
            },
            acp::on_receive_notification!(),
        )
        .on_receive_request(
            async move |r: s::RequestPermissionRequest,
                        rsp: Responder<s::RequestPermissionResponse>,
                        _cx: ConnectionTo<Agent>| {
                let once = r
                    .options
                    .iter()
                    .find(|o| o.kind == s::PermissionOptionKind::AllowOnce)
                    .cloned();
                on_permission.lock().unwrap().permissions.push(r);
                let outcome = match once {
                    Some(o) => s::RequestPermissionOutcome::Selected(
                        s::SelectedPermissionOutcome::new(o.option_id),
                    ),
                    None => s::RequestPermissionOutcome::Cancelled,
                };
                rsp.respond(s::RequestPermissionResponse::new(outcome))
            },
            acp::on_receive_request!(),
        )
        .on_receive_request(
            async move |r: s::CreateElicitationRequest,
                        rsp: Responder<s::CreateElicitationResponse>,
                        _cx: ConnectionTo<Agent>| {
                on_form.lock().unwrap().forms.push(r);
                let mut content = BTreeMap::new();
                content.insert("q0".to_string(), s::ElicitationContentValue::from("Red"));
                content.insert(
                    "q1".to_string(),
                    s::ElicitationContentValue::StringArray(vec!["Cheese".into(), "Olives".into()]),
                );
                rsp.respond(s::CreateElicitationResponse::new(
                    s::ElicitationAcceptAction::new().content(content),
                ))
            },
            acp::on_receive_request!(),
        )
        .connect_with(
            ByteStreams::new(stdin, stdout),
            async move |cx: ConnectionTo<Agent>| {
                let init = cx
                    .send_request(
                        s::InitializeRequest::new(ProtocolVersion::V1)
                            .client_capabilities(capabilities),
                    )
                    .block_task()
                    .await?;
                assert!(init.agent_capabilities.load_session);
                let sessions = &init.agent_capabilities.session_capabilities;
                assert!(
                    sessions.list.is_some()
                        && sessions.close.is_some()
                        && sessions.resume.is_some()
                );
                assert!(init.auth_methods.is_empty());
                script(cx).await
            },
        )
        .await
        .expect("the ACP conversation");
    drop(child);
}

fn texts(seen: &Seen, session: &s::SessionId, user: bool) -> String {
    seen.updates
        .iter()
        .filter(|n| &n.session_id == session)
        .filter_map(|n| match (&n.update, user) {
            (s::SessionUpdate::AgentMessageChunk(chunk), false)
            | (s::SessionUpdate::UserMessageChunk(chunk), true) => match &chunk.content {
                s::ContentBlock::Text(text) => Some(text.text.clone()),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

fn tool_calls(seen: &Seen) -> Vec<s::ToolCall> {
    seen.updates
        .iter()
        .filter_map(|n| match &n.update {
            s::SessionUpdate::ToolCall(call) => Some(call.clone()),
            _ => None,
        })
        .collect()
}

async fn daemon() -> TestDaemon {
    TestDaemon::start_with(Options {
        token: Some("acp-token".into()),
        ..Options::default()
    })
    .await
}

#[tokio::test]
async fn a_mock_turn_with_a_permission_and_a_multi_select_question() {
    let daemon = daemon().await;
    let workspace = tempfile::tempdir().unwrap();
    let seen = Shared::default();
    let session = Arc::new(Mutex::new(None));
    let kept = session.clone();
    let cwd = workspace.path().to_path_buf();
    with_bridge(&daemon, true, seen.clone(), async move |cx| {
        let created = cx
            .send_request(s::NewSessionRequest::new(cwd))
            .block_task()
            .await?;
        let id = created.session_id.clone();
        *kept.lock().unwrap() = Some(id.clone());
        let answer = cx
            .send_request(s::PromptRequest::new(
                id.clone(),
                vec!["use a tool, ask permission, then a question".into()],
            ))
            .block_task()
            .await?;
        assert_eq!(answer.stop_reason, s::StopReason::EndTurn);
        Ok(())
    })
    .await;
    let id = session.lock().unwrap().clone().unwrap();
    {
        let seen = seen.lock().unwrap();
        // The permission: asked with the three options, answered once.
        assert_eq!(seen.permissions.len(), 1);
        let kinds: Vec<_> = seen.permissions[0].options.iter().map(|o| o.kind).collect();
        assert!(
            kinds.contains(&s::PermissionOptionKind::AllowOnce)
                && kinds.contains(&s::PermissionOptionKind::RejectOnce)
        );
        // The question: one form, the multi-select as an array.
        assert_eq!(seen.forms.len(), 1);
        let wire = serde_json::to_value(&seen.forms[0]).unwrap();
        assert_eq!(
            wire["requestedSchema"]["properties"]["q1"]["type"], "array",
            "{wire}"
        );
        // Tool calls, a command among them, each started once.
        let calls = tool_calls(&seen);
        assert!(
            calls.iter().any(|c| c.kind == s::ToolKind::Execute),
            "{calls:?}"
        );
        let mut ids: Vec<_> = calls.iter().map(|c| c.tool_call_id.to_string()).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), calls.len(), "each tool call starts once");
        let said = texts(&seen, &id, false);
        assert!(
            said.contains("You answered: Color = Red; Toppings = Cheese, Olives"),
            "{said}"
        );
        assert!(
            said.contains("echo: use a tool, ask permission, then a question"),
            "{said}"
        );
    }

    // What the daemon logged: the permission answered once, the question with both answers.
    let events = daemon.events(id.0.as_ref()).await;
    assert!(events.iter().any(|e| matches!(&e.payload, EventPayload::PermissionResolved(r) if r.outcome == sandbox_universal::PermissionOutcome::Once)));
    let answers = events.iter().find_map(|e| match &e.payload {
        EventPayload::QuestionResolved(r) => r.answers.clone(),
        _ => None,
    });
    assert_eq!(
        answers,
        Some(vec![
            vec!["Red".to_string()],
            vec!["Cheese".into(), "Olives".into()]
        ])
    );
}

#[tokio::test]
async fn a_cancel_ends_the_prompt_cancelled_and_load_replays_every_update_once() {
    let daemon = daemon().await;
    let workspace = tempfile::tempdir().unwrap();
    let cwd = workspace.path().to_path_buf();
    let live = Shared::default();
    let session = Arc::new(Mutex::new(None));
    let kept = session.clone();
    let watched = live.clone();
    with_bridge(&daemon, true, live.clone(), async move |cx| {
        let id = cx
            .send_request(s::NewSessionRequest::new(cwd.clone()))
            .block_task()
            .await?
            .session_id;
        *kept.lock().unwrap() = Some(id.clone());
        let done = cx
            .send_request(s::PromptRequest::new(id.clone(), vec!["use a tool".into()]))
            .block_task()
            .await?;
        assert_eq!(done.stop_reason, s::StopReason::EndTurn);
        let slow = cx.send_request(s::PromptRequest::new(id.clone(), vec!["slow 500".into()]));
        // Cancel once the slow text streams.
        let started = tokio::time::Instant::now();
        while !texts(&watched.lock().unwrap(), &id, false).contains("slow 2 ") {
            assert!(
                started.elapsed() < std::time::Duration::from_secs(10),
                "the slow turn streams"
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        cx.send_notification(s::CancelNotification::new(id.clone()))?;
        let cancelled = slow.block_task().await?;
        assert_eq!(cancelled.stop_reason, s::StopReason::Cancelled);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(9),
            "it stopped before its end"
        );
        // Listed, for this agent and directory.
        let listed = cx
            .send_request(s::ListSessionsRequest::new().cwd(cwd.clone()))
            .block_task()
            .await?;
        assert!(listed.sessions.iter().any(|info| info.session_id == id));
        Ok(())
    })
    .await;
    let id = session.lock().unwrap().clone().unwrap();
    daemon.client.end_session(id.0.as_ref()).await.unwrap();
    let live_said = texts(&live.lock().unwrap(), &id, false);
    let live_calls = tool_calls(&live.lock().unwrap()).len();

    // A new connection loads the finished session: every update once, the user's too.
    let loaded = Shared::default();
    let load_id = id.clone();
    let cwd = workspace.path().to_path_buf();
    with_bridge(&daemon, true, loaded.clone(), async move |cx| {
        cx.send_request(s::LoadSessionRequest::new(load_id.clone(), cwd.clone()))
            .block_task()
            .await?;
        // Then closed and deleted.
        cx.send_request(s::CloseSessionRequest::new(load_id.clone()))
            .block_task()
            .await?;
        cx.send_request(s::DeleteSessionRequest::new(load_id.clone()))
            .block_task()
            .await?;
        let gone = cx
            .send_request(s::LoadSessionRequest::new(load_id.clone(), cwd))
            .block_task()
            .await;
        assert_eq!(gone.unwrap_err().code, acp::ErrorCode::RESOURCE_NOT_FOUND);
        Ok(())
    })
    .await;
    let loaded = loaded.lock().unwrap();
    assert_eq!(
        texts(&loaded, &id, false),
        live_said,
        "the agent's text, once"
    );
    assert_eq!(
        texts(&loaded, &id, true),
        "use a toolslow 500",
        "the user's messages, once each"
    );
    assert_eq!(tool_calls(&loaded).len(), live_calls, "each tool call once");
}

#[tokio::test]
async fn a_mode_picked_before_the_first_prompt_and_a_question_without_forms() {
    let daemon = daemon().await;
    let workspace = tempfile::tempdir().unwrap();
    let cwd = workspace.path().to_path_buf();
    let seen = Shared::default();
    let session = Arc::new(Mutex::new(None));
    let kept = session.clone();
    with_bridge(&daemon, false, seen.clone(), async move |cx| {
        let created = cx
            .send_request(s::NewSessionRequest::new(cwd))
            .block_task()
            .await?;
        let id = created.session_id.clone();
        *kept.lock().unwrap() = Some(id.clone());
        // The mock offers one model (offered as an option) and two modes.
        let options = created.config_options.unwrap_or_default();
        assert!(
            options.iter().any(|o| o.id.to_string() == "model"),
            "a model option"
        );
        let modes = created.modes.expect("the agent's modes");
        assert_eq!(modes.current_mode_id.to_string(), "build");
        cx.send_request(s::SetSessionModeRequest::new(id.clone(), "plan"))
            .block_task()
            .await?;
        cx.send_request(s::SetSessionConfigOptionRequest::new(
            id.clone(),
            "model",
            "mock-1",
        ))
        .block_task()
        .await?;
        let answer = cx
            .send_request(s::PromptRequest::new(id.clone(), vec!["a question".into()]))
            .block_task()
            .await?;
        assert_eq!(answer.stop_reason, s::StopReason::EndTurn);
        // After a turn the mode stays.
        let refused = cx
            .send_request(s::SetSessionModeRequest::new(id.clone(), "build"))
            .block_task()
            .await;
        assert_eq!(refused.unwrap_err().code, acp::ErrorCode::INVALID_PARAMS);
        *kept.lock().unwrap() = Some(id.clone());
        Ok(())
    })
    .await;
    let id = session.lock().unwrap().clone().unwrap();
    let said = texts(&seen.lock().unwrap(), &id, false);
    assert!(said.contains("This editor cannot show questions"), "{said}");
    let events = daemon.events(id.0.as_ref()).await;
    assert!(
        events.iter().any(
            |e| matches!(&e.payload, EventPayload::QuestionResolved(r) if r.answers.is_none())
        )
    );
    let info = daemon.client.get_session(id.0.as_ref()).await.unwrap();
    assert_eq!(
        info.agent_mode.as_deref(),
        Some("plan"),
        "created again in the mode picked"
    );
    assert!(seen.lock().unwrap().updates.iter().any(|n| matches!(&n.update, s::SessionUpdate::CurrentModeUpdate(u) if u.current_mode_id.to_string() == "plan")));
}

/// One real Claude Code turn through the bridge, offline against the test kit's provider:
/// the shell command it wants is asked of the editor, approved once, run, and the turn
/// ends `end_turn` with the command as an `execute` tool call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_claude_turn_asks_the_editor_and_runs() {
    sandbox_testkit::isolate!();
    let Some(ctx) = Ctx::start(AgentId::Claude).await else {
        return;
    };
    let (_, cwd) = ctx.request("acp-claude");
    let prompt = ctx.prompt(Ask::Shell, "acp");
    let seen = Shared::default();
    let mut args = vec!["--agent", "claude"];
    if let Some(model) = ctx.subject.model {
        args.extend(["--model", model]);
    }
    with_agent_bridge(&ctx.daemon, &args, true, seen.clone(), async move |cx| {
        let id = cx
            .send_request(s::NewSessionRequest::new(cwd))
            .block_task()
            .await?
            .session_id;
        let answer = cx
            .send_request(s::PromptRequest::new(id, vec![prompt.as_str().into()]))
            .block_task()
            .await?;
        assert_eq!(answer.stop_reason, s::StopReason::EndTurn);
        Ok(())
    })
    .await;
    let seen = seen.lock().unwrap();
    assert_eq!(
        seen.permissions.len(),
        1,
        "the shell command was asked of the editor"
    );
    let calls = tool_calls(&seen);
    assert!(
        calls.iter().any(|c| c.kind == s::ToolKind::Execute),
        "{calls:?}"
    );
    let completed = seen.updates.iter().any(|n| matches!(&n.update, s::SessionUpdate::ToolCallUpdate(u) if u.fields.status == Some(s::ToolCallStatus::Completed)));
    assert!(completed, "the command completed");
    let said: String = seen
        .updates
        .iter()
        .filter_map(|n| match &n.update {
            s::SessionUpdate::AgentMessageChunk(chunk) => match &chunk.content {
                s::ContentBlock::Text(t) => Some(t.text.clone()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert!(!said.trim().is_empty(), "Claude answered");
}
