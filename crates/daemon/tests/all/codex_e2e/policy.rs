//! Codex honours a session's policy: proved with the real pinned `codex app-server`
//! offline through the daemon over HTTP, on Codex's default model (code mode), from what
//! the test kit's provider received.

use sandbox_testkit::provider::{Effect, RecordedRequest, Script, ToolTemplate};
use sandbox_universal::{
    AgentId, CreateSessionRequest, EventPayload, ItemKind, MessagePart, PermissionMode,
    PermissionReply, SendMessageRequest, StopReason, SystemPromptMode, ToolPolicy,
};
use serde_json::{Value, json};

use crate::common::agent_events::{command_part, kill_9};
use crate::scenarios::ctx::{Ctx, Session, items, offered, stop_reason};
use crate::scenarios::subject::{Ask, Subject, environ, files_under};

/// A prompt keyword that makes the fake model run `env`.
const SHOW_ENV: &str = "SHOW_ENV";

fn shell(cmd: &str) -> ToolTemplate {
    ToolTemplate::json("exec_command", json!({"cmd": cmd}))
}

fn rules(script: Script) -> Script {
    script.with_rule(SHOW_ENV, Effect::CallTool(vec![shell("env")]))
}

async fn ctx() -> Option<Ctx> {
    Some(Ctx::start_for(Subject::with_rules(AgentId::Codex, rules).await?).await)
}

/// Every instruction text the model got: the Responses `instructions` and the
/// developer and system messages of the input.
fn instructions(call: &RecordedRequest) -> Vec<String> {
    let mut texts: Vec<String> = call.body["instructions"]
        .as_str()
        .map(str::to_string)
        .into_iter()
        .collect();
    for item in call.body["input"].as_array().into_iter().flatten() {
        if item["type"] == "message"
            && matches!(item["role"].as_str(), Some("developer" | "system"))
        {
            for part in item["content"].as_array().into_iter().flatten() {
                if let Some(text) = part["text"].as_str() {
                    texts.push(text.to_string());
                }
            }
        }
    }
    texts
}

/// The model's calls of one session, at least one.
async fn calls(ctx: &Ctx, s: &Session) -> Vec<RecordedRequest> {
    let calls = ctx.model_calls(s).await;
    assert!(!calls.is_empty(), "{}: no model call", s.id);
    calls
}

/// Appended instructions are a developer message after Codex's own; replacing ones are
/// the only base instructions. Both are in every request, also after the app-server died
/// and a new one resumed the thread, and only once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_system_prompt_reaches_every_request_also_after_a_resume() {
    sandbox_testkit::isolate!();
    let Some(ctx) = ctx().await else {
        return;
    };
    const APPENDED: &str = "Always answer like a pirate (marker-append-51).";
    const REPLACED: &str = "You are a terse assistant (marker-replace-73).";
    let s = ctx
        .session_with("append", |r| CreateSessionRequest {
            system_prompt: Some(APPENDED.into()),
            ..r
        })
        .await;
    let r = ctx
        .session_with("replace", |r| CreateSessionRequest {
            system_prompt: Some(REPLACED.into()),
            system_prompt_mode: Some(SystemPromptMode::Replace),
            ..r
        })
        .await;
    for session in [&s, &r] {
        let events = ctx
            .turn(&session.id, &ctx.prompt(Ask::Text, "prompt"))
            .await;
        assert_eq!(stop_reason(&events), StopReason::Completed);
    }
    // A new app-server resumes each thread.
    for session in [&s, &r] {
        let pids = ctx
            .subject
            .processes(&session.cwd, ctx.daemon.data_dir.path(), None);
        assert!(!pids.is_empty(), "{}: no app-server", session.id);
        pids.into_iter().for_each(kill_9);
        let events = ctx
            .turn(&session.id, &ctx.prompt(Ask::Text, "after the kill"))
            .await;
        assert_eq!(stop_reason(&events), StopReason::Completed);
    }
    let count =
        |texts: &[String], marker: &str| texts.iter().filter(|t| t.contains(marker)).count();
    let appended = calls(&ctx, &s).await;
    assert!(appended.len() >= 2, "{appended:#?}");
    for call in &appended {
        let texts = instructions(call);
        assert_eq!(count(&texts, APPENDED), 1, "{texts:#?}");
        assert!(
            texts.iter().any(|t| t.contains("You are Codex")),
            "appending keeps Codex's own instructions: {texts:#?}"
        );
    }
    let replaced = calls(&ctx, &r).await;
    assert!(replaced.len() >= 2, "{replaced:#?}");
    for call in &replaced {
        let texts = instructions(call);
        assert_eq!(count(&texts, REPLACED), 1, "{texts:#?}");
        assert!(
            !texts.iter().any(|t| t.contains("You are Codex")),
            "replacing drops Codex's own instructions: {texts:#?}"
        );
    }
}

/// `shell` and `webSearch` leave the model's tool list; `write` cannot (apply_patch
/// stays), so the daemon rejects each patch at once, and nothing is written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn denied_tools_are_removed_or_refused() {
    sandbox_testkit::isolate!();
    let Some(ctx) = ctx().await else {
        return;
    };
    let open = ctx.session("open").await;
    let events = ctx.turn(&open.id, &ctx.prompt(Ask::Text, "open")).await;
    assert_eq!(stop_reason(&events), StopReason::Completed);
    let tools = offered(&calls(&ctx, &open).await[0]);
    assert!(tools.iter().any(|t| t == "exec_command"), "{tools:?}");

    let denied = ctx
        .session_with("denied", |r| CreateSessionRequest {
            tools: Some(ToolPolicy {
                allow: None,
                deny: vec!["shell".into(), "webSearch".into(), "write".into()],
            }),
            ..r
        })
        .await;
    let (events, _) = ctx
        .turn_answering(
            &denied.id,
            &ctx.prompt(Ask::Write, "denied"),
            PermissionReply::Once,
        )
        .await;
    assert_eq!(stop_reason(&events), StopReason::Completed);
    let tools = offered(&calls(&ctx, &denied).await[0]);
    for gone in ["exec_command", "write_stdin", "web_search"] {
        assert!(
            !tools.iter().any(|t| t == gone),
            "{gone} offered: {tools:?}"
        );
    }
    assert!(tools.iter().any(|t| t == "apply_patch"), "{tools:?}");
    let refused: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::PermissionResolved(r) if r.automatic => Some(r.clone()),
            _ => None,
        })
        .collect();
    assert!(
        !refused.is_empty(),
        "the patch was not refused: {events:#?}"
    );
    let (written, _) = ctx.subject.written();
    assert!(
        !ctx.on_disk(&denied, written),
        "the refused patch was applied"
    );

    // A mode that would not ask cannot refuse.
    let (request, _) = ctx.request("accept-edits");
    let refused = ctx
        .daemon
        .client
        .create_session(
            "accept-edits",
            &CreateSessionRequest {
                permission_mode: Some(PermissionMode::AcceptEdits),
                tools: Some(ToolPolicy {
                    allow: None,
                    deny: vec!["write".into()],
                }),
                ..request
            },
        )
        .await
        .expect_err("acceptEdits cannot refuse writes");
    assert!(refused.to_string().contains("tools"), "{refused}");
}

/// Codex has no turn limit: the daemon counts its model responses and interrupts the
/// turn past `maxTurns`; the turn ends `maxTurns` and the session goes on. With one
/// response allowed, the answer after the command's result is one too many.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_turns_stops_a_turn_past_its_responses() {
    sandbox_testkit::isolate!();
    let Some(ctx) = ctx().await else {
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
    let events = ctx.turn(&s.id, &ctx.prompt(Ask::Python, "limited")).await;
    assert_eq!(stop_reason(&events), StopReason::MaxTurns, "{events:#?}");
    assert_eq!(items(&events, ItemKind::CommandExecution).len(), 1);
    let calls = calls(&ctx, &s).await;
    assert_eq!(
        calls.len(),
        2,
        "the second response began, and was interrupted"
    );
    // The next turn counts afresh: a plain answer is one response.
    let events = ctx
        .turn(&s.id, &ctx.prompt(Ask::Text, "after the limit"))
        .await;
    assert_eq!(stop_reason(&events), StopReason::Completed);
}

/// A 1×1 PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

/// An image of a message reaches the model as an `input_image` of the user's message,
/// after the text it followed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn images_reach_the_model_as_image_inputs() {
    sandbox_testkit::isolate!();
    let Some(ctx) = ctx().await else {
        return;
    };
    let s = ctx.session("image").await;
    let message = SendMessageRequest {
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
        ]),
    };
    let turn = ctx
        .daemon
        .client
        .send_request(&s.id, &message)
        .await
        .unwrap()
        .turn_id;
    let events = ctx.ended(&s.id, &turn).await;
    assert_eq!(stop_reason(&events), StopReason::Completed);
    let call = &calls(&ctx, &s).await[0];
    let user = call.body["input"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|i| i["role"] == "user")
        .expect("the user's message");
    let parts: Vec<&Value> = user["content"].as_array().unwrap().iter().collect();
    let image = parts
        .iter()
        .position(|p| p["type"] == "input_image")
        .unwrap_or_else(|| panic!("no image: {user}"));
    assert!(
        parts[image]["image_url"]
            .as_str()
            .is_some_and(|u| u.starts_with("data:image/png;base64,")),
        "{user}"
    );
    let text = parts
        .iter()
        .position(|p| p["text"].as_str().is_some_and(|t| t.contains("(image)")))
        .unwrap_or_else(|| panic!("no text: {user}"));
    assert!(text < image, "{user}");
}

/// The session's `env` reaches the commands Codex runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_session_env_reaches_the_commands() {
    sandbox_testkit::isolate!();
    let Some(ctx) = ctx().await else {
        return;
    };
    let s = ctx
        .session_with("env", |r| CreateSessionRequest {
            env: Some([("TEAM_COLOR".to_string(), "teal-42".to_string())].into()),
            ..r
        })
        .await;
    let (events, _) = ctx
        .turn_answering(&s.id, &format!("{SHOW_ENV} (env)"), PermissionReply::Once)
        .await;
    assert_eq!(stop_reason(&events), StopReason::Completed);
    let command = items(&events, ItemKind::CommandExecution)
        .pop()
        .expect("the env command");
    let output = command_part(&command).1.expect("env output");
    assert!(output.contains("TEAM_COLOR=teal-42"), "{output}");
}

/// The processes whose command line contains `needle`.
fn processes_running(needle: &str) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(needle))
        })
        .collect()
}

/// The session's MCP servers start with Codex's thread: the HTTP one is reached with
/// the bearer token, the stdio one runs with the `env` it was given — while the secrets
/// are in no request Codex got, no argv, no command's environment and no file of the
/// daemon's but its secrets file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_servers_start_with_secrets_that_reach_only_them() {
    use sandbox_testkit::mcp::{ECHO_PREFIX_ENV, HttpMcpServer, stdio_server};
    use sandbox_universal::McpServer;

    sandbox_testkit::isolate!();
    let Some(ctx) = ctx().await else {
        return;
    };
    const TOKEN: &str = "mcp-bearer-secret-81";
    const HEADER: &str = "mcp-header-secret-17";
    const PREFIX: &str = "mcp-env-secret-29";
    let http = HttpMcpServer::start(TOKEN).await.unwrap();
    let dir = ctx.daemon.data_dir.path().join("mcp-stdio");
    let stdio = stdio_server(&dir).unwrap();
    let servers = [
        (
            "ht".to_string(),
            McpServer::Http {
                url: http.url(),
                headers: [
                    ("Authorization".to_string(), format!("Bearer {TOKEN}")),
                    ("X-Team".to_string(), HEADER.to_string()),
                ]
                .into(),
            },
        ),
        (
            "st".to_string(),
            McpServer::Stdio {
                command: stdio.command.clone(),
                args: stdio.args.clone(),
                env: [(ECHO_PREFIX_ENV.to_string(), PREFIX.to_string())].into(),
            },
        ),
    ];
    let s = ctx
        .session_with("mcp", |r| CreateSessionRequest {
            mcp_servers: Some(servers.into()),
            ..r
        })
        .await;
    let (events, _) = ctx
        .turn_answering(&s.id, &format!("{SHOW_ENV} (mcp)"), PermissionReply::Once)
        .await;
    assert_eq!(stop_reason(&events), StopReason::Completed);
    let command = items(&events, ItemKind::CommandExecution)
        .pop()
        .expect("the env command");
    let output = command_part(&command).1.expect("env output");
    for secret in [TOKEN, HEADER, PREFIX] {
        assert!(
            !output.contains(secret),
            "a command sees {secret}: {output}"
        );
    }

    // The HTTP server was reached with the token.
    let authorized: Vec<_> = http
        .requests()
        .into_iter()
        .filter(|r| r.authorized)
        .collect();
    assert!(
        authorized
            .iter()
            .any(|r| r.rpc_method.as_deref() == Some("initialize")),
        "{:?}",
        http.requests()
    );
    // The stdio server runs with its env under its own name, and nothing of the daemon's.
    let script = &stdio.args[0];
    let pids = processes_running(script);
    assert!(!pids.is_empty(), "the stdio MCP server is not running");
    let server = pids
        .iter()
        .map(|pid| environ(*pid))
        .find(|env| {
            env.iter()
                .any(|e| e.starts_with(&format!("{ECHO_PREFIX_ENV}=")))
        })
        .expect("the stdio MCP server has its env");
    assert!(
        server.contains(&format!("{ECHO_PREFIX_ENV}={PREFIX}")),
        "{server:?}"
    );
    assert!(
        !server.iter().any(|e| e.starts_with("SANDBOX_MCP_")),
        "{server:?}"
    );
    // No secret in what Codex was told, in argv, or in the daemon's files.
    let tapped = serde_json::to_string(&ctx.events(&s.id).await).unwrap();
    let data = ctx.daemon.data_dir.path();
    for secret in [TOKEN, HEADER, PREFIX] {
        assert!(!tapped.contains(secret), "{secret} in the log");
        for pid in ctx.subject.processes(&s.cwd, data, None) {
            let argv = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            assert!(
                !String::from_utf8_lossy(&argv).contains(secret),
                "{secret} in argv"
            );
        }
        for file in files_under(data) {
            if file.file_name().is_some_and(|n| n == "policy-secrets.json") {
                continue;
            }
            let bytes = std::fs::read(&file).unwrap_or_default();
            assert!(
                !String::from_utf8_lossy(&bytes).contains(secret),
                "{secret} is stored in {}",
                file.display()
            );
        }
    }
}
