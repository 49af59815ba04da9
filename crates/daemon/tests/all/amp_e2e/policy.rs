//! Amp's session policy. What the real pinned binary shows offline: it takes the settings
//! file the daemon writes for a session (`--settings-file`) and starts the session's MCP
//! servers from it, stdio and HTTP with the bearer token (`amp tools list`, which needs
//! no service). Whether `amp.tools.disable` reaches the model cannot be seen offline (the
//! loop runs on Amp's servers; `tools list` ignores it): it is checked in the file only.
//! The STAND-IN (not Amp) shows the daemon's side of a turn: the session's `env` reaches
//! the process. What Amp cannot honour is refused with 422.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;

use sandbox_client::ClientError;
use sandbox_testkit::agents::{self, Agent};
use sandbox_testkit::mcp::{ECHO_PREFIX_ENV, HttpMcpServer, stdio_server};
use sandbox_universal::{AgentId, CreateSessionRequest, McpServer, StopReason, ToolPolicy};
use serde_json::Value;

use crate::scenarios::ctx::{Ctx, stop_reason};
use crate::scenarios::subject::{Ask, files_under};

const TOKEN: &str = "amp-mcp-token-5e1a";

/// The session's settings file, as the daemon wrote it.
fn settings_file(dir: &std::path::Path, session: &str) -> std::path::PathBuf {
    files_under(dir)
        .into_iter()
        .find(|f| {
            f.ends_with("amp-settings.json")
                && f.to_string_lossy().contains(&format!("/{session}/"))
        })
        .unwrap_or_else(|| panic!("no settings file for {session}"))
}

/// The real Amp starts the session's MCP servers from the daemon's settings file: both
/// servers' tools are listed, and the HTTP server got the bearer token. The file is 0600
/// and disables the built-ins the session took away.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_amp_takes_the_sessions_settings_file() {
    sandbox_testkit::isolate!();
    let Some(binary) = agents::require(Agent::Amp) else {
        return;
    };
    let Some(ctx) = Ctx::start(AgentId::Amp).await else {
        return;
    };
    let ht = HttpMcpServer::start(TOKEN).await.unwrap();
    let st = stdio_server(&ctx.daemon.data_dir.path().join("mcp")).unwrap();
    let servers = BTreeMap::from([
        (
            "st".to_string(),
            McpServer::Stdio {
                command: st.command.clone(),
                args: st.args.clone(),
                env: BTreeMap::from([(ECHO_PREFIX_ENV.into(), "p-".into())]),
            },
        ),
        (
            "ht".to_string(),
            McpServer::Http {
                url: ht.url(),
                headers: BTreeMap::from([("Authorization".into(), format!("Bearer {TOKEN}"))]),
            },
        ),
    ]);
    ctx.session_with("mcp", |r| CreateSessionRequest {
        mcp_servers: Some(servers),
        tools: Some(ToolPolicy {
            allow: None,
            deny: vec!["shell".into()],
        }),
        ..r
    })
    .await;
    let file = settings_file(ctx.daemon.data_dir.path(), "mcp");
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let settings: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let disabled = settings["amp.tools.disable"].to_string();
    assert!(disabled.contains("builtin:shell_command"), "{disabled}");

    let home = tempfile::tempdir().unwrap();
    let out = tokio::process::Command::new(&binary)
        .args(["--settings-file"])
        .arg(&file)
        .args(["tools", "list", "--json"])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("AMP_API_KEY", "sk-amp-unused")
        .env("AMP_URL", "http://127.0.0.1:9")
        .output()
        .await
        .unwrap();
    let listed = String::from_utf8_lossy(&out.stdout);
    for tool in ["mcp__st__echo", "mcp__ht__echo"] {
        assert!(
            listed.contains(tool),
            "{tool}: {listed}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let bearer = format!("Bearer {TOKEN}");
    assert!(
        ht.authorizations()
            .iter()
            .any(|a| a.as_deref() == Some(bearer.as_str())),
        "{:?}",
        ht.authorizations()
    );
}

/// The session's `env` reaches each turn's process (the stand-in records the names).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sessions_env_reaches_each_turn() {
    let Some(ctx) = Ctx::start(AgentId::Amp).await else {
        return;
    };
    let s = ctx
        .session_with("env", |r| CreateSessionRequest {
            env: Some(BTreeMap::from([("POLICY_E2E_VAR".into(), "v".into())])),
            ..r
        })
        .await;
    let events = ctx.turn(&s.id, &ctx.prompt(Ask::Text, "env")).await;
    assert_eq!(stop_reason(&events), StopReason::Completed);
    let runs: Vec<Value> = files_under(ctx.daemon.data_dir.path())
        .into_iter()
        .filter(|f| f.ends_with("standin-calls.jsonl"))
        .flat_map(|f| {
            std::fs::read_to_string(f)
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect::<Vec<Value>>()
        })
        .collect();
    assert_eq!(runs.len(), 1);
    let names = runs[0]["env_names"].as_array().unwrap();
    assert!(names.iter().any(|n| n == "POLICY_E2E_VAR"), "{names:?}");
}

/// What Amp cannot honour is a 422 naming the field.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_amp_cannot_honour_is_refused() {
    let Some(ctx) = Ctx::start(AgentId::Amp).await else {
        return;
    };
    let refused = [
        (
            "systemPrompt",
            CreateSessionRequest {
                system_prompt: Some("x".into()),
                ..ctx.request("a").0
            },
        ),
        (
            "maxTurns",
            CreateSessionRequest {
                max_turns: Some(2),
                ..ctx.request("b").0
            },
        ),
    ];
    for (field, request) in refused {
        match ctx.daemon.client.create_session(field, &request).await {
            Err(ClientError::Problem(problem)) => {
                assert_eq!(problem.status, 422, "{problem:?}");
                assert!(problem.detail.contains(field), "{problem:?}");
            }
            other => panic!("{field}: a 422, got {other:?}"),
        }
    }
}
