//! Claude Code's session policy with the real pinned CLI offline, through the daemon over
//! HTTP: the system prompt (also after a crash and a daemon restart), removed tools, its own
//! turn limit, images and extra environment variables.

use std::collections::BTreeMap;

use sandbox_testkit::mcp::{ECHO_PREFIX_ENV, HttpMcpServer, StdioMcp, echo_text, stdio_server};
use sandbox_testkit::provider::RecordedRequest;
use sandbox_testkit::provider::script::MCP_TEXT;
use sandbox_universal::{
    AgentId, ContentPart, CreateSessionRequest, EventPayload, ItemKind, McpServer, MessagePart,
    PermissionKind, PermissionMode, PermissionReply, SendMessageRequest, StopReason,
    SystemPromptMode, ToolPolicy, UniversalEvent,
};

use super::claude_pids;
use crate::common::agent_events::kill_9;
use crate::scenarios::ctx::{Ctx, Session, items, offered, stop_reason};
use crate::scenarios::subject::{Ask, environ, files_under};

/// The request's `system` blocks, joined (the kit's `system_text` also holds the system
/// entries Claude puts in `messages`, which stay whatever the mode).
fn system_blocks(call: &RecordedRequest) -> String {
    call.body["system"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The model calls that carry `message`; at least one.
fn calls_with(ctx: &Ctx, message: &str) -> Vec<RecordedRequest> {
    let calls = ctx.subject.calls_with(message);
    assert!(!calls.is_empty(), "no model call carries {message:?}");
    calls
}

/// A completed turn of `ask`; the model calls of it.
async fn turn(ctx: &Ctx, s: &Session, ask: Ask, tag: &str) -> Vec<RecordedRequest> {
    let message = ctx.prompt(ask, tag);
    let events = ctx.turn(&s.id, &message).await;
    assert_eq!(stop_reason(&events), StopReason::Completed, "{tag}");
    calls_with(ctx, &message)
}

const MARKER: &str = "Always sign as SANDBOX-MARKER-51f3.";

/// An appended system prompt reaches every model call after Claude's own; a replacing one
/// stands alone. It is still there after the CLI crashed (a respawn resumes the
/// conversation) and after a daemon restart (the restored session resumes it): Claude
/// records the prompt on the first request and the daemon passes it on every launch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_system_prompt_survives_a_crash_and_a_restart() {
    sandbox_testkit::isolate!();
    let Some(ctx) = Ctx::start(AgentId::Claude).await else {
        return;
    };
    let with = |mode| {
        move |r| CreateSessionRequest {
            system_prompt: Some(MARKER.into()),
            system_prompt_mode: Some(mode),
            ..r
        }
    };
    let (append, replace) = tokio::join!(
        ctx.session_with("append", with(SystemPromptMode::Append)),
        ctx.session_with("replace", with(SystemPromptMode::Replace)),
    );
    let appended = system_blocks(&turn(&ctx, &append, Ask::Text, "append-1").await[0]);
    let replaced = system_blocks(&turn(&ctx, &replace, Ask::Text, "replace-1").await[0]);
    assert!(appended.contains(MARKER), "{appended}");
    assert!(replaced.contains(MARKER), "{replaced}");
    assert!(
        appended.find(MARKER).unwrap() > 1000,
        "appended after Claude's own prompt: {appended}"
    );
    assert!(
        replaced.len() < appended.len() / 4,
        "replaced: Claude's own prompt is gone: {replaced}"
    );
    // The prompt is in a private file, not in argv.
    for pid in claude_pids(&ctx, &append) {
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        assert!(!String::from_utf8_lossy(&cmdline).contains(MARKER));
    }

    // A crash: the respawned CLI resumes with the prompt.
    let after = ctx.last_sequence(&append.id).await;
    claude_pids(&ctx, &append).into_iter().for_each(kill_9);
    ctx.next(&append.id, after, |p| match p {
        EventPayload::Error(_) => Some(()),
        _ => None,
    })
    .await;
    for call in turn(&ctx, &append, Ask::Text, "append-2").await {
        assert!(call.system_text().contains(MARKER), "after the crash");
    }

    // A daemon restart: the restored sessions resume with their prompts.
    let Ctx { subject, daemon } = ctx;
    let ctx = Ctx {
        daemon: daemon.restart().await,
        subject,
    };
    for call in turn(&ctx, &append, Ask::Text, "append-3").await {
        assert!(call.system_text().contains(MARKER), "after the restart");
    }
    for call in turn(&ctx, &replace, Ask::Text, "replace-3").await {
        let text = system_blocks(&call);
        assert!(text.contains(MARKER) && text.len() < appended.len() / 4);
    }
}

/// Removed tools are absent from the model's tool list (denied: `shell`, `webFetch`;
/// outside an allow list: everything but `read`), and the others stay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn removed_tools_are_absent_from_the_model_call() {
    sandbox_testkit::isolate!();
    let Some(ctx) = Ctx::start(AgentId::Claude).await else {
        return;
    };
    let with = |tools: ToolPolicy| {
        move |r| CreateSessionRequest {
            tools: Some(tools),
            ..r
        }
    };
    let deny = ToolPolicy {
        allow: None,
        deny: vec!["shell".into(), "webFetch".into()],
    };
    let allow = ToolPolicy {
        allow: Some(vec!["read".into()]),
        deny: Vec::new(),
    };
    let (open, denied, allowed) = tokio::join!(
        ctx.session("open"),
        ctx.session_with("deny", with(deny)),
        ctx.session_with("allow", with(allow)),
    );
    let has = |tools: &[String], name: &str| tools.iter().any(|t| t == name);
    let all = offered(&turn(&ctx, &open, Ask::Text, "open").await[0]);
    for tool in [
        "Bash",
        "Monitor",
        "Read",
        "Write",
        "Edit",
        "NotebookEdit",
        "WebFetch",
    ] {
        assert!(has(&all, tool), "{tool}: {all:?}");
    }
    let tools = offered(&turn(&ctx, &denied, Ask::Text, "deny").await[0]);
    for gone in ["Bash", "Monitor", "WebFetch"] {
        assert!(!has(&tools, gone), "{gone}: {tools:?}");
    }
    assert!(has(&tools, "Read") && has(&tools, "Write"), "{tools:?}");
    let tools = offered(&turn(&ctx, &allowed, Ask::Text, "allow").await[0]);
    assert!(has(&tools, "Read"), "{tools:?}");
    for gone in [
        "Bash",
        "Monitor",
        "Write",
        "Edit",
        "NotebookEdit",
        "WebFetch",
        "WebSearch",
    ] {
        assert!(!has(&tools, gone), "{gone}: {tools:?}");
    }
}

/// `maxTurns` is Claude's own `--max-turns`: a turn that needs a second model response
/// after its tool call ends with `maxTurns`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_turns_ends_the_turn() {
    sandbox_testkit::isolate!();
    let Some(ctx) = Ctx::start(AgentId::Claude).await else {
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
    let message = ctx.prompt(Ask::Shell, "limited");
    let events = ctx.turn(&s.id, &message).await;
    assert_eq!(stop_reason(&events), StopReason::MaxTurns, "{events:#?}");
    assert_eq!(calls_with(&ctx, &message).len(), 1, "one model response");
}

/// A 1×1 PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

/// An image reaches the provider as a base64 `image` block beside the text; the session's
/// `env` reaches Claude's process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn images_and_env_reach_claude() {
    sandbox_testkit::isolate!();
    let Some(ctx) = Ctx::start(AgentId::Claude).await else {
        return;
    };
    let s = ctx
        .session_with("image", |r| CreateSessionRequest {
            env: Some(BTreeMap::from([(
                "POLICY_E2E_VAR".into(),
                "e2e-value".into(),
            )])),
            ..r
        })
        .await;
    let text = ctx.prompt(Ask::Text, "image");
    let request = SendMessageRequest {
        message: None,
        content: Some(vec![
            MessagePart::Text { text: text.clone() },
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
        .send_request(&s.id, &request)
        .await
        .unwrap()
        .turn_id;
    let events: Vec<UniversalEvent> = ctx.ended(&s.id, &turn).await;
    assert_eq!(stop_reason(&events), StopReason::Completed);
    let call = &calls_with(&ctx, &text)[0];
    let last = call.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user" && m.to_string().contains(&text))
        .unwrap();
    let image = last["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "image")
        .unwrap_or_else(|| panic!("no image block: {last}"));
    assert_eq!(image["source"]["type"], "base64");
    assert_eq!(image["source"]["media_type"], "image/png");
    assert_eq!(image["source"]["data"], PNG);
    for pid in claude_pids(&ctx, &s) {
        assert!(
            environ(pid).iter().any(|e| e == "POLICY_E2E_VAR=e2e-value"),
            "the session's env"
        );
    }
}

const TOKEN: &str = "mcp-e2e-token-9c2e";
const PREFIX: &str = "mcp-e2e-prefix-41d7";

/// The session's MCP servers: `st` (stdio, `MCP_ECHO_PREFIX` in its env) and `ht` (HTTP,
/// with the bearer token).
fn mcp_servers(st: &StdioMcp, ht: &HttpMcpServer) -> BTreeMap<String, McpServer> {
    BTreeMap::from([
        (
            "st".to_string(),
            McpServer::Stdio {
                command: st.command.clone(),
                args: st.args.clone(),
                env: BTreeMap::from([(ECHO_PREFIX_ENV.into(), PREFIX.into())]),
            },
        ),
        (
            "ht".to_string(),
            McpServer::Http {
                url: ht.url(),
                headers: BTreeMap::from([("Authorization".into(), format!("Bearer {TOKEN}"))]),
            },
        ),
    ])
}

/// The session's MCP servers (and only those: `--strict-mcp-config`) reach the model's tool
/// list, the HTTP server gets the bearer token (Claude expands it from its environment),
/// and removed MCP tools are absent: one tool (`mcp:ht/delete_everything`), a whole server
/// (`mcp:st/*`), or a server an allow list leaves out. No secret is in argv or in a file
/// other than the daemon's own 0600 `policy-secrets.json`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_servers_reach_the_model_and_removed_mcp_tools_do_not() {
    sandbox_testkit::isolate!();
    let Some(ctx) = Ctx::start(AgentId::Claude).await else {
        return;
    };
    let ht = HttpMcpServer::start(TOKEN).await.unwrap();
    let st = stdio_server(&ctx.daemon.data_dir.path().join("mcp")).unwrap();
    let with = |deny: &[&str], allow: Option<&[&str]>| {
        let tools = ToolPolicy {
            allow: allow.map(|a| a.iter().map(|t| t.to_string()).collect()),
            deny: deny.iter().map(|t| t.to_string()).collect(),
        };
        let servers = mcp_servers(&st, &ht);
        move |r| CreateSessionRequest {
            mcp_servers: Some(servers),
            tools: Some(tools),
            ..r
        }
    };
    let (one, server, allow) = tokio::join!(
        ctx.session_with("one", with(&["mcp:ht/delete_everything"], None)),
        ctx.session_with("server", with(&["mcp:st/*"], None)),
        ctx.session_with("allow", with(&[], Some(&["read", "mcp:ht/*"]))),
    );
    let has = |tools: &[String], name: &str| tools.iter().any(|t| t == name);
    let tools = offered(&turn(&ctx, &one, Ask::Text, "one").await[0]);
    for tool in [
        "mcp__st__echo",
        "mcp__st__delete_everything",
        "mcp__ht__echo",
    ] {
        assert!(has(&tools, tool), "{tool}: {tools:?}");
    }
    assert!(!has(&tools, "mcp__ht__delete_everything"), "{tools:?}");
    let tools = offered(&turn(&ctx, &server, Ask::Text, "server").await[0]);
    assert!(has(&tools, "mcp__ht__echo"), "{tools:?}");
    assert!(
        !tools.iter().any(|t| t.starts_with("mcp__st__")),
        "{tools:?}"
    );
    let tools = offered(&turn(&ctx, &allow, Ask::Text, "allow").await[0]);
    assert!(has(&tools, "mcp__ht__echo") && has(&tools, "mcp__ht__delete_everything"));
    assert!(
        !tools.iter().any(|t| t.starts_with("mcp__st__")),
        "{tools:?}"
    );
    assert!(!has(&tools, "Bash"), "{tools:?}");

    let authorizations = ht.authorizations();
    assert!(!authorizations.is_empty(), "Claude reached the HTTP server");
    assert!(
        authorizations
            .iter()
            .all(|a| a.as_deref() == Some(&format!("Bearer {TOKEN}")[..])),
        "{authorizations:?}"
    );
    for s in [&one, &server, &allow] {
        for pid in claude_pids(&ctx, s) {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline);
            assert!(
                !cmdline.contains(TOKEN) && !cmdline.contains(PREFIX),
                "{cmdline}"
            );
            if !cmdline.contains("sandbox_testkit_mcp") {
                assert!(cmdline.contains("--strict-mcp-config"), "{cmdline}");
            }
        }
    }
    for file in files_under(ctx.daemon.data_dir.path()) {
        if file.ends_with("policy-secrets.json") {
            continue;
        }
        let text = String::from_utf8_lossy(&std::fs::read(&file).unwrap_or_default()).into_owned();
        assert!(
            !text.contains(TOKEN) && !text.contains(PREFIX),
            "{} holds a secret",
            file.display()
        );
    }
}

/// The `toolCall` items of MCP tools in `events`, as `(server, tool)`.
fn mcp_calls(events: &[UniversalEvent]) -> Vec<(String, String)> {
    items(events, ItemKind::ToolCall)
        .iter()
        .filter_map(|item| match &item.content[0] {
            ContentPart::ToolCall { mcp: Some(mcp), .. } => {
                Some((mcp.server.clone(), mcp.tool.clone()))
            }
            _ => None,
        })
        .collect()
}

/// The text of the tool results in `events`.
fn results(events: &[UniversalEvent]) -> Vec<String> {
    items(events, ItemKind::ToolResult)
        .iter()
        .filter_map(|item| match &item.content[0] {
            ContentPart::ToolResult { output, .. } => Some(output.clone()),
            _ => None,
        })
        .collect()
}

/// Claude calls the session's stdio and HTTP MCP servers: each call asks (`mcpTool`), an
/// `always` answer covers that tool only, the call is a `toolCall` naming its server and
/// tool, its output (the stdio server got its env value through `${VAR}`) is a
/// `toolResult` and reaches the model.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_tools_are_called_after_a_permission_round_trip() {
    sandbox_testkit::isolate!();
    let Some(ctx) = Ctx::start(AgentId::Claude).await else {
        return;
    };
    let ht = HttpMcpServer::start(TOKEN).await.unwrap();
    let st = stdio_server(&ctx.daemon.data_dir.path().join("mcp")).unwrap();
    let servers = mcp_servers(&st, &ht);
    let s = ctx
        .session_with("mcp", |r| CreateSessionRequest {
            mcp_servers: Some(servers),
            ..r
        })
        .await;
    let echoed = format!("{PREFIX}{}", echo_text(MCP_TEXT));
    let message = "USE_MCP st/echo (first)";
    let (events, asked) = ctx
        .turn_answering(&s.id, message, PermissionReply::Always)
        .await;
    assert_eq!(stop_reason(&events), StopReason::Completed);
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0].kind, PermissionKind::McpTool);
    assert_eq!(asked[0].tool.as_deref(), Some("mcp__st__echo"));
    assert_eq!(mcp_calls(&events), [("st".into(), "echo".into())]);
    assert!(
        results(&events).iter().any(|r| r.contains(&echoed)),
        "{events:#?}"
    );
    assert!(
        ctx.subject
            .calls_with(message)
            .iter()
            .any(|call| call.tool_results().iter().any(|r| r.contains(&echoed))),
        "the output reached the model"
    );
    assert_eq!(st.calls().len(), 1);
    assert_eq!(st.calls()[0].prefix.as_deref(), Some(PREFIX));

    // `always` covered st's echo: no question the second time.
    let (events, asked) = ctx
        .turn_answering(&s.id, "USE_MCP st/echo (again)", PermissionReply::Reject)
        .await;
    assert!(asked.is_empty(), "{asked:?}");
    assert!(results(&events).iter().any(|r| r.contains(&echoed)));
    assert_eq!(st.calls().len(), 2);

    // Another tool asks again; the HTTP server's echo, allowed once.
    let (events, asked) = ctx
        .turn_answering(&s.id, "USE_MCP ht/echo (http)", PermissionReply::Once)
        .await;
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0].tool.as_deref(), Some("mcp__ht__echo"));
    assert_eq!(mcp_calls(&events), [("ht".into(), "echo".into())]);
    assert!(
        results(&events)
            .iter()
            .any(|r| r.contains(&echo_text(MCP_TEXT)))
    );
    assert_eq!(ht.calls().len(), 1);
}

/// An allow list naming one tool of a server: Claude cannot list the server's other
/// tools up front, so they ask and the daemon refuses them by itself (visible as an
/// automatic rejection), also in bypass mode; the allowed tool runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_tool_outside_the_allow_list_is_refused() {
    sandbox_testkit::isolate!();
    let Some(ctx) = Ctx::start(AgentId::Claude).await else {
        return;
    };
    let ht = HttpMcpServer::start(TOKEN).await.unwrap();
    let st = stdio_server(&ctx.daemon.data_dir.path().join("mcp")).unwrap();
    let servers = mcp_servers(&st, &ht);
    let s = ctx
        .session_with("partial", |r| CreateSessionRequest {
            mcp_servers: Some(servers),
            tools: Some(ToolPolicy {
                allow: Some(vec!["read".into(), "mcp:st/echo".into()]),
                deny: Vec::new(),
            }),
            permission_mode: Some(PermissionMode::Bypass),
            dangerously_skip_permissions: Some(true),
            ..r
        })
        .await;
    let (events, asked) = ctx
        .turn_answering(
            &s.id,
            "USE_MCP st/delete_everything (refused)",
            PermissionReply::Once,
        )
        .await;
    assert!(asked.is_empty(), "the host is not asked: {asked:?}");
    let refused: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::PermissionResolved(r) if r.automatic => Some(r),
            _ => None,
        })
        .collect();
    assert_eq!(refused.len(), 1, "{events:#?}");
    assert_eq!(
        refused[0].request.as_ref().unwrap().kind,
        PermissionKind::McpTool
    );
    assert!(st.calls().is_empty(), "{:?}", st.calls());
    let (events, asked) = ctx
        .turn_answering(&s.id, "USE_MCP st/echo (allowed)", PermissionReply::Reject)
        .await;
    assert!(asked.is_empty(), "bypass: {asked:?}");
    assert_eq!(mcp_calls(&events), [("st".into(), "echo".into())]);
    assert_eq!(st.calls().len(), 1);
}

/// `LOOP_TOOLS` keeps calling the shell; `maxTurns: 3` ends the turn after three model
/// responses, and the limit is per turn: the next one completes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_turns_stops_a_turn_that_keeps_calling_tools() {
    sandbox_testkit::isolate!();
    let Some(ctx) = Ctx::start(AgentId::Claude).await else {
        return;
    };
    let s = ctx
        .session_with("loop", |r| CreateSessionRequest {
            max_turns: Some(3),
            permission_mode: Some(PermissionMode::Bypass),
            dangerously_skip_permissions: Some(true),
            ..r
        })
        .await;
    let message = "LOOP_TOOLS (loop)";
    let events = ctx.turn(&s.id, message).await;
    assert_eq!(stop_reason(&events), StopReason::MaxTurns);
    assert_eq!(ctx.subject.calls_with(message).len(), 3);
    let next = ctx.prompt(Ask::Text, "after the limit");
    let events = ctx.turn(&s.id, &next).await;
    assert_eq!(stop_reason(&events), StopReason::Completed, "the next turn");
}
