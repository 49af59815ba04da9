//! A session's policy on the real `opencode serve`, through the daemon over HTTP: the
//! system prompt (appended per prompt, or the agent's prompt replaced on a server of the
//! session's own) as the provider received it; tools taken out of the model's tool list;
//! `maxTurns` ending a tool turn; an image reaching the provider as an image block; a
//! session's `env` in its own server's process, which stops with the session.

use std::path::Path;

use serde_json::{Value, json};

use sandbox_testkit::provider::RecordedRequest;
use sandbox_universal::{
    AgentId, CreateSessionRequest, MessagePart, PermissionMode, SendMessageRequest, StopReason,
    SystemPromptMode, ToolPolicy,
};

use crate::scenarios::ctx::{Ctx, Session, stop_reason};
use crate::scenarios::subject::Ask;

/// The system prompt of a model call (Anthropic's `system`: a string or text blocks).
pub fn system_text(request: &RecordedRequest) -> String {
    match &request.body["system"] {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The pids of the `opencode serve` processes running in `dir` or below it.
pub fn servers_under(ctx: &Ctx, dir: &Path) -> Vec<i32> {
    let binary = ctx.subject.binary.clone().unwrap();
    let binary = binary.canonicalize().unwrap_or(binary);
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
            let exe = std::fs::read_link(entry.path().join("exe")).ok()?;
            let cwd = std::fs::read_link(entry.path().join("cwd")).ok()?;
            (exe == binary && cwd.starts_with(dir)).then_some(pid)
        })
        .collect()
}

/// The session's directory in the daemon's data directory.
pub fn session_dir(ctx: &Ctx, session: &Session) -> std::path::PathBuf {
    ctx.daemon
        .data_dir
        .path()
        .join("sessions")
        .join(&session.id)
}

/// The agent's model calls of a session (those that offer tools: not the title
/// generator's).
async fn last_calls(ctx: &Ctx, session: &Session) -> Vec<RecordedRequest> {
    let calls: Vec<_> = ctx
        .model_calls(session)
        .await
        .into_iter()
        .filter(|c| !c.tool_names().is_empty())
        .collect();
    assert!(!calls.is_empty(), "{}: no model call", session.id);
    calls
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn system_prompts_are_appended_or_replace_the_agents_own() {
    sandbox_testkit::isolate!();
    let Some(ctx) = Ctx::start(AgentId::Opencode).await else {
        return;
    };
    let appended = "APPEND-MARKER-7f3 keep answers short";
    let replaced = "REPLACE-MARKER-91c: you are a terse helper; {env:HOME} {file:/etc/hostname}";
    let (a, r) = tokio::join!(
        ctx.session_with("append", |r| CreateSessionRequest {
            system_prompt: Some(appended.into()),
            ..r
        }),
        ctx.session_with("replace", |r| CreateSessionRequest {
            system_prompt: Some(replaced.into()),
            system_prompt_mode: Some(SystemPromptMode::Replace),
            ..r
        }),
    );
    let hi = ctx.prompt(Ask::Text, "p");
    let (one, two) = tokio::join!(ctx.turn(&a.id, &hi), ctx.turn(&r.id, &hi));
    assert_eq!(stop_reason(&one), StopReason::Completed);
    assert_eq!(stop_reason(&two), StopReason::Completed);

    let own = system_text(&last_calls(&ctx, &a).await[0]);
    assert!(own.contains(appended), "{own}");
    assert!(
        !own.starts_with(appended) && own.len() > appended.len() * 10,
        "appended after OpenCode's own prompt: {own}"
    );
    let system = system_text(&last_calls(&ctx, &r).await[0]);
    assert!(
        system.starts_with(replaced),
        "the agent's prompt replaced, verbatim (no substitution): {system}"
    );
    // The first line of OpenCode's own prompt is gone.
    let first_line = own.lines().next().unwrap();
    assert!(!system.contains(first_line), "{first_line:?} in {system}");
    // Append shares the daemon's server; replace got a server of its own.
    assert_eq!(servers_under(&ctx, &session_dir(&ctx, &a)).len(), 0);
    assert_eq!(servers_under(&ctx, &session_dir(&ctx, &r)).len(), 1);
    ctx.daemon.client.end_session(&r.id).await.unwrap();
    assert!(
        servers_under(&ctx, &session_dir(&ctx, &r)).is_empty(),
        "the session's own server stops with it"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn taken_tools_are_absent_from_the_models_tool_list() {
    sandbox_testkit::isolate!();
    let Some(ctx) = Ctx::start(AgentId::Opencode).await else {
        return;
    };
    let tools = |allow: Option<&[&str]>, deny: &[&str]| ToolPolicy {
        allow: allow.map(|a| a.iter().map(|t| (*t).to_string()).collect()),
        deny: deny.iter().map(|t| (*t).to_string()).collect(),
    };
    let (open, deny, allow) = tokio::join!(
        ctx.session("open"),
        ctx.session_with("deny", |r| CreateSessionRequest {
            tools: Some(tools(None, &["shell", "write"])),
            ..r
        }),
        ctx.session_with("allow", |r| CreateSessionRequest {
            tools: Some(tools(Some(&["read", "grep"]), &[])),
            ..r
        }),
    );
    let hi = ctx.prompt(Ask::Text, "t");
    for s in [&open, &deny, &allow] {
        assert_eq!(
            stop_reason(&ctx.turn(&s.id, &hi).await),
            StopReason::Completed
        );
    }
    let names = |calls: Vec<RecordedRequest>| -> Vec<String> {
        calls[0]
            .tool_names()
            .into_iter()
            .map(str::to_string)
            .collect()
    };
    let all = names(last_calls(&ctx, &open).await);
    for tool in ["bash", "write", "edit", "read", "glob", "grep", "task"] {
        assert!(all.iter().any(|t| t == tool), "{tool} in {all:?}");
    }
    let denied = names(last_calls(&ctx, &deny).await);
    for gone in ["bash", "write", "task"] {
        assert!(!denied.iter().any(|t| t == gone), "{gone} in {denied:?}");
    }
    for kept in ["edit", "read", "glob", "grep"] {
        assert!(denied.iter().any(|t| t == kept), "{kept} not in {denied:?}");
    }
    let allowed = names(last_calls(&ctx, &allow).await);
    for gone in [
        "bash",
        "write",
        "edit",
        "glob",
        "list",
        "webfetch",
        "task",
        "apply_patch",
    ] {
        assert!(!allowed.iter().any(|t| t == gone), "{gone} in {allowed:?}");
    }
    for kept in ["read", "grep"] {
        assert!(
            allowed.iter().any(|t| t == kept),
            "{kept} not in {allowed:?}"
        );
    }
    // A denied tool the model still names is refused by OpenCode: asking for a command in
    // the deny session runs nothing.
    let events = ctx.turn(&deny.id, &ctx.prompt(Ask::Shell, "t")).await;
    assert!(!ctx.on_disk(&deny, "fake_tool_output.txt"), "{events:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_turns_ends_a_tool_turn_with_max_turns() {
    sandbox_testkit::isolate!();
    let Some(ctx) = Ctx::start(AgentId::Opencode).await else {
        return;
    };
    let s = ctx
        .session_with("limited", |r| CreateSessionRequest {
            max_turns: Some(1),
            permission_mode: Some(PermissionMode::Bypass),
            dangerously_skip_permissions: Some(true),
            ..r
        })
        .await;
    // The tool call is the first model response; the answer after it is one too many.
    let events = ctx.turn(&s.id, &ctx.prompt(Ask::Shell, "m")).await;
    assert_eq!(stop_reason(&events), StopReason::MaxTurns, "{events:#?}");
    // The next turn counts afresh: a text turn is one response.
    let events = ctx.turn(&s.id, &ctx.prompt(Ask::Text, "m")).await;
    assert_eq!(stop_reason(&events), StopReason::Completed);
}

/// A 1×1 PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_reaches_the_provider_as_an_image_block() {
    sandbox_testkit::isolate!();
    let Some(ctx) = Ctx::start(AgentId::Opencode).await else {
        return;
    };
    let s = ctx.session("image").await;
    let body = SendMessageRequest {
        message: None,
        content: Some(vec![
            MessagePart::Text {
                text: ctx.prompt(Ask::Text, "i"),
            },
            MessagePart::Image {
                media_type: "image/png".into(),
                data: Some(PNG.into()),
                path: None,
            },
        ]),
    };
    let turn = ctx
        .daemon
        .client
        .send_request(&s.id, &body)
        .await
        .unwrap()
        .turn_id;
    let events = ctx.ended(&s.id, &turn).await;
    assert_eq!(stop_reason(&events), StopReason::Completed);
    let calls = last_calls(&ctx, &s).await;
    let user = calls[0].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .cloned()
        .unwrap();
    let image = user["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "image")
        .unwrap_or_else(|| panic!("no image block: {user}"));
    assert_eq!(
        image["source"],
        json!({"type": "base64", "media_type": "image/png", "data": PNG})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sessions_env_is_its_own_servers() {
    sandbox_testkit::isolate!();
    let Some(ctx) = Ctx::start(AgentId::Opencode).await else {
        return;
    };
    let s = ctx
        .session_with("env", |r| CreateSessionRequest {
            env: Some([("POLICY_PROBE".to_string(), "probe-value-5e2".to_string())].into()),
            ..r
        })
        .await;
    let events = ctx.turn(&s.id, &ctx.prompt(Ask::Text, "e")).await;
    assert_eq!(stop_reason(&events), StopReason::Completed);
    let pids = servers_under(&ctx, &session_dir(&ctx, &s));
    assert_eq!(pids.len(), 1, "a server of its own");
    let environ = std::fs::read(format!("/proc/{}/environ", pids[0])).unwrap();
    let environ = String::from_utf8_lossy(&environ);
    assert!(
        environ
            .split('\0')
            .any(|v| v == "POLICY_PROBE=probe-value-5e2"),
        "{environ}"
    );
    let cmdline = std::fs::read(format!("/proc/{}/cmdline", pids[0])).unwrap();
    assert!(!String::from_utf8_lossy(&cmdline).contains("probe-value"));
    ctx.daemon.client.end_session(&s.id).await.unwrap();
    assert!(servers_under(&ctx, &session_dir(&ctx, &s)).is_empty());
}
