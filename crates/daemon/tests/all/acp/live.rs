//! The bridge beyond one connection's own prompts: a private daemon (stdout then carries
//! nothing but frames) and `session/load` of a turn still running.

use super::*;

/// Without `--endpoint` the bridge starts a private daemon (in its data dir); stdout then
/// carries JSON-RPC frames and nothing else, whatever the daemon logs.
#[tokio::test]
async fn a_private_daemon_and_nothing_but_frames_on_stdout() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let data = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_sandbox-daemon"))
        .args(["acp", "--agent", "mock"])
        .env("SANDBOX_DAEMON_DATA_DIR", data.path())
        .env("SANDBOX_DAEMON_LOG", "debug")
        .env_remove("SANDBOX_DAEMON_ENDPOINT")
        .env_remove("SANDBOX_DAEMON_TOKEN")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut send = async |message: serde_json::Value| {
        stdin
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    };
    let mut next = async || {
        let line = tokio::time::timeout(std::time::Duration::from_secs(20), lines.next_line())
            .await
            .expect("a frame in time")
            .unwrap()
            .expect("a frame");
        let frame: serde_json::Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("not JSON on stdout ({e}): {line}"));
        assert_eq!(frame["jsonrpc"], "2.0", "{line}");
        frame
    };
    send(serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1, "clientCapabilities": {}}})).await;
    assert_eq!(next().await["result"]["protocolVersion"], 1);
    send(serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": workspace.path(), "mcpServers": []}})).await;
    let created = next().await;
    let session = created["result"]["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"))
        .to_string();
    send(serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {"sessionId": session, "prompt": [{"type": "text", "text": "hello there"}]}})).await;
    let mut said = String::new();
    loop {
        let frame = next().await;
        if frame["id"] == 3 {
            assert_eq!(frame["result"]["stopReason"], "end_turn", "{frame}");
            break;
        }
        if frame["params"]["update"]["sessionUpdate"] == "agent_message_chunk" {
            said.push_str(
                frame["params"]["update"]["content"]["text"]
                    .as_str()
                    .unwrap_or(""),
            );
        }
    }
    assert!(said.contains("echo: hello there"), "{said}");
    // The private daemon kept the session in the data dir it was given.
    assert!(
        data.path().join("store.sqlite").exists()
            || std::fs::read_dir(data.path()).unwrap().count() > 0
    );
}

/// `session/load` of a session whose turn is still running replays what was logged, then
/// follows the turn live: the agent's text arrives whole and exactly once. A session/new
/// with an SSE MCP server (which the daemon cannot hand an agent) is refused.
#[tokio::test]
async fn load_follows_a_running_turn_and_sse_servers_are_refused() {
    let daemon = daemon().await;
    let workspace = tempfile::tempdir().unwrap();
    daemon.mock_session("running").await;
    let turn = daemon
        .client
        .send_message("running", "slow 150")
        .await
        .unwrap()
        .turn_id;
    // Some of the turn is logged before the editor loads the session.
    let started = tokio::time::Instant::now();
    while !daemon
        .events("running")
        .await
        .iter()
        .any(|e| matches!(&e.payload, EventPayload::ItemDelta(d) if d.delta.contains("slow 5 ")))
    {
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let seen = Shared::default();
    let client = daemon.client.clone();
    let cwd = workspace.path().to_path_buf();
    with_bridge(&daemon, true, seen.clone(), async move |cx| {
        let id = s::SessionId::from("running".to_string());
        cx.send_request(s::LoadSessionRequest::new(id, cwd.clone()))
            .block_task()
            .await?;
        // Stay connected until the turn has ended (the bridge follows it meanwhile).
        loop {
            let info = client.get_session("running").await.unwrap();
            if info.current_turn_id.is_none() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        let sse = s::McpServer::Sse(s::McpServerSse::new("events", "http://127.0.0.1:9/sse"));
        let refused = cx
            .send_request(s::NewSessionRequest::new(cwd).mcp_servers(vec![sse]))
            .block_task()
            .await;
        assert_eq!(refused.unwrap_err().code, acp::ErrorCode::INVALID_PARAMS);
        Ok(())
    })
    .await;
    let events = daemon.turn_ended("running", &turn).await;
    let text: String = events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::ItemDelta(d) if d.delta.starts_with("slow ") => Some(d.delta.clone()),
            _ => None,
        })
        .collect();
    assert!(text.contains("slow 149 "), "{text}");
    let said = texts(
        &seen.lock().unwrap(),
        &s::SessionId::from("running".to_string()),
        false,
    );
    assert!(
        said.starts_with(&text),
        "the slow text once, replayed then followed:\n{said}"
    );
    assert_eq!(said.matches("slow 149 ").count(), 1, "{said}");
    assert_eq!(said.matches("slow 0 ").count(), 1, "{said}");
}
