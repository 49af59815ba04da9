//! A session's policy on the real `opencode serve`, through the daemon over HTTP: the
//! system prompt (appended per prompt, or the agent's prompt replaced on a server of the
//! session's own) as the provider received it; tools taken out of the model's tool list;
//! `maxTurns` ending a tool turn; an image reaching the provider as an image block; a
//! session's `env` in its own server's process, which stops with the session; a stdio and
//! an HTTP MCP server (bearer token) called, with permissions, their secrets only the
//! agent's.

use std::collections::BTreeMap;
use std::path::Path;

use sandbox_testkit::mcp::{ECHO_PREFIX_ENV, HttpMcpServer, stdio_server};
use sandbox_testkit::provider::RecordedRequest;
use sandbox_universal::{
    AgentId, ContentPart, CreateSessionRequest, ItemKind, McpServer, MessagePart, PermissionKind,
    PermissionMode, PermissionReply, SendMessageRequest, StopReason, SystemPromptMode, ToolPolicy,
};

use crate::common::raw_events;
use crate::scenarios::ctx::{Ctx, Session, items, reply_text, stop_reason};
use crate::scenarios::subject::Ask;

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

    let own = last_calls(&ctx, &a).await[0].system_text();
    assert!(own.contains(appended), "{own}");
    assert!(
        !own.starts_with(appended) && own.len() > appended.len() * 10,
        "appended after OpenCode's own prompt: {own}"
    );
    let system = last_calls(&ctx, &r).await[0].system_text();
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
    let names = |calls: Vec<RecordedRequest>| -> Vec<String> { calls[0].tool_names() };
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
            max_turns: Some(2),
            permission_mode: Some(PermissionMode::Bypass),
            dangerously_skip_permissions: Some(true),
            ..r
        })
        .await;
    // A model that calls tools forever: the third model call is one too many; the
    // daemon aborts the OpenCode session.
    let turn = ctx.send(&s.id, "LOOP_TOOLS (loop)").await;
    let ended =
        tokio::time::timeout(std::time::Duration::from_secs(90), ctx.ended(&s.id, &turn)).await;
    let replies: Vec<_> = ctx
        .model_calls(&s)
        .await
        .iter()
        .map(|c| c.reply.clone())
        .collect();
    let events = ended.unwrap_or_else(|_| panic!("no end: {replies:?}"));
    assert_eq!(stop_reason(&events), StopReason::MaxTurns, "{replies:?}");
    let loops = replies
        .iter()
        .filter(|r| r.starts_with("tool:bash"))
        .count();
    assert!((2..=3).contains(&loops), "{replies:?}");
    // The next turn counts afresh: a text turn is one response.
    let events = ctx.turn(&s.id, &ctx.prompt(Ask::Text, "m")).await;
    let replies: Vec<_> = ctx
        .model_calls(&s)
        .await
        .iter()
        .map(|c| c.reply.clone())
        .collect();
    assert_eq!(
        stop_reason(&events),
        StopReason::Completed,
        "{replies:?} {events:#?}"
    );
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
    let images = last_calls(&ctx, &s).await[0].images();
    assert_eq!(images.len(), 1, "one image block");
    assert_eq!(
        (images[0].media_type.as_str(), images[0].data.as_str()),
        ("image/png", PNG)
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

/// Every file under `dir` whose bytes hold `needle`.
fn files_holding(dir: &Path, needle: &str) -> Vec<std::path::PathBuf> {
    crate::scenarios::subject::files_under(dir)
        .into_iter()
        .filter(|f| {
            std::fs::read(f).is_ok_and(|bytes| String::from_utf8_lossy(&bytes).contains(needle))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_and_an_http_mcp_server_are_called_with_permissions() {
    sandbox_testkit::isolate!();
    let Some(ctx) = Ctx::start(AgentId::Opencode).await else {
        return;
    };
    let token = "mcp-bearer-secret-3d9";
    let prefix = "stdio-env-secret-";
    let http = HttpMcpServer::start(token).await.unwrap();
    let scripts = tempfile::tempdir().unwrap();
    let stdio = stdio_server(scripts.path()).unwrap();
    let servers: BTreeMap<String, McpServer> = [
        (
            "ht".to_string(),
            McpServer::Http {
                url: http.url(),
                headers: [("Authorization".into(), format!("Bearer {token}"))].into(),
            },
        ),
        (
            "st".to_string(),
            McpServer::Stdio {
                command: stdio.command.clone(),
                args: stdio.args.clone(),
                env: [(ECHO_PREFIX_ENV.to_string(), prefix.to_string())].into(),
            },
        ),
    ]
    .into();
    let s = ctx
        .session_with("mcp", |r| CreateSessionRequest {
            mcp_servers: Some(servers),
            tools: Some(ToolPolicy {
                allow: None,
                deny: vec!["mcp:st/delete_everything".into()],
            }),
            ..r
        })
        .await;

    // The HTTP server's tool asks (kind mcpTool); `always` is remembered for the tool.
    let (events, asked) = ctx
        .turn_answering(&s.id, "USE_MCP ht/echo", PermissionReply::Always)
        .await;
    assert_eq!(stop_reason(&events), StopReason::Completed);
    assert_eq!(
        asked.len(),
        1,
        "offered {:?}; MCP calls {:?}; {events:#?}",
        last_calls(&ctx, &s).await[0].tool_names(),
        http.calls()
    );
    assert_eq!(asked[0].kind, PermissionKind::McpTool);
    assert_eq!(asked[0].tool.as_deref(), Some("ht_echo"));
    let call = items(&events, ItemKind::ToolCall)
        .into_iter()
        .find_map(|i| match &i.content[0] {
            ContentPart::ToolCall { mcp: Some(mcp), .. } => Some(mcp.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no MCP toolCall: {events:#?}"));
    assert_eq!((call.server.as_str(), call.tool.as_str()), ("ht", "echo"));
    let results: Vec<String> = items(&events, ItemKind::ToolResult)
        .iter()
        .flat_map(|i| i.content.clone())
        .filter_map(|p| match p {
            ContentPart::ToolResult { output, .. } => Some(output),
            _ => None,
        })
        .collect();
    assert!(
        results.iter().any(|o| o.contains("echo:mcp-marker")),
        "{results:?}"
    );
    assert!(
        reply_text(&events).contains("mcp tool said: echo:mcp-marker"),
        "the tool's output reached the model: {}",
        reply_text(&events)
    );
    assert_eq!(http.calls().len(), 1);
    let authorizations = http.authorizations();
    assert!(
        !authorizations.is_empty()
            && authorizations
                .iter()
                .all(|a| a.as_deref() == Some(&*format!("Bearer {token}"))),
        "{authorizations:?}"
    );
    // One tool taken away by name: out of the model's list, its siblings kept.
    let offered = last_calls(&ctx, &s).await[0].tool_names();
    for kept in ["ht_echo", "ht_delete_everything", "st_echo"] {
        assert!(offered.iter().any(|t| t == kept), "{kept}: {offered:?}");
    }
    assert!(!offered.iter().any(|t| t == "st_delete_everything"));
    // Approved `always`: the same tool runs without a question the next time.
    let events = ctx.turn(&s.id, "USE_MCP ht/echo").await;
    assert_eq!(stop_reason(&events), StopReason::Completed);
    assert_eq!(http.calls().len(), 2);

    // The stdio server's tool asks on its own (another tool), and got its env.
    let (events, asked) = ctx
        .turn_answering(&s.id, "USE_MCP st/echo", PermissionReply::Once)
        .await;
    assert_eq!(stop_reason(&events), StopReason::Completed);
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].tool.as_deref(), Some("st_echo"));
    let calls = stdio.calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0].prefix.as_deref(), Some(prefix), "env reached it");

    // The secrets are nowhere but the agent: not argv, not the environment, not the log.
    let dir = session_dir(&ctx, &s);
    let pids = servers_under(&ctx, &dir);
    assert_eq!(pids.len(), 1);
    for what in ["cmdline", "environ"] {
        let bytes = std::fs::read(format!("/proc/{}/{what}", pids[0])).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains(token) && !text.contains(prefix), "{what}");
    }
    let log = serde_json::to_string(&raw_events(&ctx.daemon.client, &s.id).await).unwrap();
    // (The stdio server's prefix is in its echo's output by design.)
    assert!(!log.contains(token), "the token in the log");
    ctx.daemon.client.end_session(&s.id).await.unwrap();
    assert!(servers_under(&ctx, &dir).is_empty(), "its server stops");
    let holding: Vec<_> = files_holding(ctx.daemon.data_dir.path(), token)
        .into_iter()
        .filter(|f| !f.ends_with("policy-secrets.json"))
        .collect();
    assert!(
        holding.is_empty(),
        "the token outside the secrets file: {holding:?}"
    );
}
