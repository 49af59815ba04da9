//! Host tools over HTTP with the mock agent, whose MCP client calls the daemon's
//! per-session MCP endpoint like a real agent's: client tools answered and rejected,
//! http tools signed and retried, approvals, `endsTurn`, cancels, bad input, and the
//! endpoint's token rules. The real agents are in the scenario table (`host-tool-*`).

use crate::common;

use common::{HOST_TOOL_SECRET, Options, TestDaemon, assert_problem, completed, first, raw};
use reqwest::Method;
use sandbox_testkit::host_tools::HttpToolServer;
use sandbox_universal::{
    ContentPart, CreateSessionRequest, EventPayload, HostTool, HostToolHandler, ItemKind,
    PermissionKind, PermissionOutcome, PermissionReply, StopReason, ToolCallOutcome,
    ToolCallRejectRequest, ToolCallRequest, ToolCallResultRequest, ToolOutput, UniversalEvent,
};
use serde_json::json;

fn client_tool(name: &str) -> HostTool {
    HostTool {
        name: name.into(),
        description: format!("The host's {name}"),
        input_schema: json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        handler: HostToolHandler::Client,
        needs_approval: false,
        ends_turn: false,
    }
}

/// A JSON `POST` without the client's types, so bad bodies can be sent.
async fn post(url: &str, body: &serde_json::Value) -> (u16, String, serde_json::Value) {
    raw(
        Method::POST,
        url,
        None,
        Some("application/json"),
        Some(body.to_string().into_bytes()),
    )
    .await
}

async fn session(daemon: &TestDaemon, id: &str, tools: Vec<HostTool>) {
    let created = daemon
        .client
        .create_session(
            id,
            &CreateSessionRequest {
                agent: "mock".into(),
                host_tools: Some(tools),
                ..CreateSessionRequest::default()
            },
        )
        .await
        .unwrap();
    assert!(created.healthy);
}

async fn next_call(daemon: &TestDaemon, id: &str) -> ToolCallRequest {
    let events = daemon
        .wait_for(id, |e| {
            matches!(e.payload, EventPayload::ToolCallRequested(_))
        })
        .await;
    first(&events, |p| match p {
        EventPayload::ToolCallRequested(c) => Some(c.clone()),
        _ => None,
    })
}

/// Sends `message` to session `s` and waits for the client tool call it makes.
async fn send_and_call(daemon: &TestDaemon, message: &str) -> ToolCallRequest {
    daemon.client.send_message("s", message).await.unwrap();
    next_call(daemon, "s").await
}

/// The output the mock's host tool call item got, and whether it is an error.
fn tool_output(events: &[UniversalEvent]) -> (String, bool) {
    let item = completed(events, ItemKind::ToolCall)
        .pop()
        .expect("a tool call");
    item.content
        .iter()
        .find_map(|part| match part {
            ContentPart::ToolResult {
                output, is_error, ..
            } => Some((output.clone(), *is_error)),
            _ => None,
        })
        .expect("a tool result")
}

fn resolved(events: &[UniversalEvent]) -> Vec<ToolCallOutcome> {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            EventPayload::ToolCallResolved(r) => Some(r.outcome),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_client_tool_is_answered_once_over_http() {
    let daemon = TestDaemon::start().await;
    session(&daemon, "s", vec![client_tool("lookup")]).await;
    let call = send_and_call(&daemon, "hosttool lookup please").await;
    assert_eq!(call.tool, "lookup");
    assert_eq!(call.input, json!({"text": "hosttool lookup please"}));
    assert!(call.item_id.is_some(), "the call names the agent's item");
    let info = daemon.client.get_session("s").await.unwrap();
    assert_eq!(info.pending_tool_calls, vec![call.clone()]);
    let result = ToolCallResultRequest {
        output: ToolOutput::Text("the host's answer".into()),
        is_error: false,
    };
    daemon
        .client
        .tool_call_result("s", &call.call_id, &result)
        .await
        .unwrap();
    let events = daemon.wait_turn_ended("s", 1).await;
    assert_eq!(tool_output(&events), ("the host's answer".into(), false));
    assert_eq!(resolved(&events), [ToolCallOutcome::Answered]);
    let item = completed(&events, ItemKind::ToolCall).pop().unwrap();
    assert_eq!(Some(item.item_id), call.item_id);
    // Exactly once: a second answer is a conflict, an unknown call is not found.
    let url = format!(
        "{}/sessions/s/tool-calls/{}/result",
        daemon.url(),
        call.call_id
    );
    let again = post(&url, &serde_json::to_value(&result).unwrap()).await;
    assert_problem(&again, 409, "tool-call-resolved");
    let url = format!("{}/sessions/s/tool-calls/call_999/reject", daemon.url());
    let unknown = post(&url, &json!({})).await;
    assert_problem(&unknown, 404, "tool-call-not-found");
    assert!(
        daemon
            .client
            .get_session("s")
            .await
            .unwrap()
            .pending_tool_calls
            .is_empty()
    );
}

#[tokio::test]
async fn a_rejected_client_tool_tells_the_model_why() {
    let daemon = TestDaemon::start().await;
    session(&daemon, "s", vec![client_tool("lookup")]).await;
    let call = send_and_call(&daemon, "hosttool lookup").await;
    let reject = ToolCallRejectRequest {
        reason: Some("not today".into()),
    };
    daemon
        .client
        .tool_call_reject("s", &call.call_id, &reject)
        .await
        .unwrap();
    let events = daemon.wait_turn_ended("s", 1).await;
    let (output, is_error) = tool_output(&events);
    assert!(is_error && output.contains("not today"), "{output}");
    assert_eq!(resolved(&events), [ToolCallOutcome::Rejected]);
}

#[tokio::test]
async fn a_result_with_parts_checks_its_images() {
    let daemon = TestDaemon::start().await;
    session(&daemon, "s", vec![client_tool("lookup")]).await;
    let call = send_and_call(&daemon, "hosttool lookup").await;
    let url = format!(
        "{}/sessions/s/tool-calls/{}/result",
        daemon.url(),
        call.call_id
    );
    for (body, why) in [
        (json!({"output": []}), "output"),
        (
            json!({"output": [{"type": "image", "mediaType": "image/bmp", "data": "AA=="}]}),
            "mediaType",
        ),
        (
            json!({"output": [{"type": "image", "mediaType": "image/png", "data": "bm90IGEgcG5n"}]}),
            "image",
        ),
        (
            json!({"output": [{"type": "image", "mediaType": "image/png", "path": "/etc/passwd"}]}),
            "outside",
        ),
        (json!({"output": "x", "extra": 1}), "extra"),
    ] {
        let response = post(&url, &body).await;
        assert_eq!(response.0, 422, "{body}: {:?}", response.2);
        assert!(
            response.2.to_string().contains(why),
            "{body}: {:?}",
            response.2
        );
    }
    // Still pending: a good answer goes through.
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    let good = json!({"output": [{"type": "text", "text": "a picture:"}, {"type": "image", "mediaType": "image/png", "data": png}]});
    let response = post(&url, &good).await;
    assert_eq!(response.0, 204, "{:?}", response.2);
    let events = daemon.wait_turn_ended("s", 1).await;
    assert_eq!(tool_output(&events), ("a picture:".into(), false));
}

#[tokio::test]
async fn an_http_tool_is_called_signed_and_retried() {
    let daemon = TestDaemon::start().await;
    let endpoint = HttpToolServer::start(HOST_TOOL_SECRET).await.unwrap();
    endpoint.fail_first(2);
    let tool = HostTool {
        handler: HostToolHandler::Http {
            url: endpoint.url(),
            headers: [("X-Host-Key".to_string(), "host-key-41d".to_string())].into(),
            timeout_ms: Some(5_000),
        },
        ..client_tool("fetch_order")
    };
    session(&daemon, "s", vec![tool]).await;
    daemon
        .client
        .send_message("s", "hosttool fetch_order")
        .await
        .unwrap();
    let events = daemon.wait_turn_ended("s", 1).await;
    let (output, is_error) = tool_output(&events);
    assert!(!is_error, "{output}");
    assert_eq!(
        output,
        sandbox_testkit::host_tools::echo_output(&json!({"text": "hosttool fetch_order"}))
    );
    let calls = endpoint.calls();
    assert_eq!(calls.len(), 3, "two 503s, then the answer: {calls:?}");
    assert!(
        calls
            .iter()
            .all(|c| c.call_id == calls[0].call_id && c.session_id == "s")
    );
    assert!(
        endpoint
            .requests()
            .iter()
            .all(|r| r.headers.get("x-host-key").map(String::as_str) == Some("host-key-41d"))
    );
    // No toolCallRequested for an http tool: the daemon answered it.
    assert!(
        !events
            .iter()
            .any(|e| matches!(e.payload, EventPayload::ToolCallRequested(_)))
    );
    // The header value is a secret: not in the store's record, not in any event.
    let stored = std::fs::read(daemon.data_dir.path().join("store.db")).unwrap_or_default();
    assert!(!String::from_utf8_lossy(&stored).contains("host-key-41d"));
}

#[tokio::test]
async fn an_http_tool_that_fails_is_an_error_the_model_sees() {
    let daemon = TestDaemon::start().await;
    let endpoint = HttpToolServer::start(b"another secret").await.unwrap();
    let tool = HostTool {
        handler: HostToolHandler::Http {
            url: endpoint.url(),
            headers: Default::default(),
            timeout_ms: None,
        },
        ..client_tool("fetch_order")
    };
    session(&daemon, "s", vec![tool]).await;
    daemon
        .client
        .send_message("s", "hosttool fetch_order")
        .await
        .unwrap();
    let events = daemon.wait_turn_ended("s", 1).await;
    let (output, is_error) = tool_output(&events);
    assert!(
        is_error && output.contains("401"),
        "the signature was refused: {output}"
    );
}

#[tokio::test]
async fn approval_rejected_means_the_tool_never_runs_and_always_is_remembered() {
    let daemon = TestDaemon::start().await;
    let tool = HostTool {
        needs_approval: true,
        ..client_tool("deploy")
    };
    session(&daemon, "s", vec![tool]).await;
    daemon
        .client
        .send_message("s", "hosttool deploy")
        .await
        .unwrap();
    let events = daemon
        .wait_for("s", |e| {
            matches!(e.payload, EventPayload::PermissionAsked(_))
        })
        .await;
    let asked = first(&events, |p| match p {
        EventPayload::PermissionAsked(r) => Some(r.clone()),
        _ => None,
    });
    assert_eq!(asked.kind, PermissionKind::HostTool);
    assert_eq!(asked.tool.as_deref(), Some("deploy"));
    daemon
        .client
        .reply_permission("s", &asked.permission_id, PermissionReply::Reject)
        .await
        .unwrap();
    let events = daemon.wait_turn_ended("s", 1).await;
    let (output, is_error) = tool_output(&events);
    assert!(is_error && output.contains("rejected"), "{output}");
    assert!(
        !events
            .iter()
            .any(|e| matches!(e.payload, EventPayload::ToolCallRequested(_)))
    );

    // `always`: asked once, then not again for this tool.
    daemon
        .client
        .send_message("s", "hosttool deploy")
        .await
        .unwrap();
    let events = daemon
        .wait_for("s", |e| {
            matches!(&e.payload, EventPayload::PermissionAsked(r) if r.permission_id != asked.permission_id)
        })
        .await;
    let second = match &events.last().unwrap().payload {
        EventPayload::PermissionAsked(r) => r.clone(),
        _ => unreachable!(),
    };
    daemon
        .client
        .reply_permission("s", &second.permission_id, PermissionReply::Always)
        .await
        .unwrap();
    let call = next_call(&daemon, "s").await;
    let result = ToolCallResultRequest {
        output: ToolOutput::Text("deployed".into()),
        is_error: false,
    };
    daemon
        .client
        .tool_call_result("s", &call.call_id, &result)
        .await
        .unwrap();
    daemon.wait_turn_ended("s", 2).await;
    daemon
        .client
        .send_message("s", "hosttool deploy")
        .await
        .unwrap();
    let events = daemon
        .wait_for("s", |e| {
            matches!(&e.payload, EventPayload::ToolCallRequested(c) if c.call_id != call.call_id)
        })
        .await;
    let third = match &events.last().unwrap().payload {
        EventPayload::ToolCallRequested(c) => c.clone(),
        _ => unreachable!(),
    };
    let automatic = events
        .iter()
        .filter(|e| matches!(&e.payload, EventPayload::PermissionResolved(r) if r.automatic && r.outcome == PermissionOutcome::Always))
        .count();
    assert_eq!(
        automatic, 1,
        "the third call was approved by the remembered `always`"
    );
    daemon
        .client
        .tool_call_result("s", &third.call_id, &result)
        .await
        .unwrap();
    daemon.wait_turn_ended("s", 3).await;
}

#[tokio::test]
async fn ends_turn_stops_the_turn_after_the_result() {
    let daemon = TestDaemon::start().await;
    let tool = HostTool {
        ends_turn: true,
        ..client_tool("present_plan")
    };
    session(&daemon, "s", vec![tool]).await;
    let call = send_and_call(&daemon, "hosttool present_plan").await;
    let result = ToolCallResultRequest {
        output: ToolOutput::Text("plan shown".into()),
        is_error: false,
    };
    daemon
        .client
        .tool_call_result("s", &call.call_id, &result)
        .await
        .unwrap();
    let events = daemon.wait_turn_ended("s", 1).await;
    let ended = first(&events, |p| match p {
        EventPayload::TurnEnded(t) => Some(t.clone()),
        _ => None,
    });
    assert_eq!(ended.stop_reason, StopReason::ToolStop);
    assert_eq!(tool_output(&events), ("plan shown".into(), false));
    // The next message continues normally.
    daemon
        .client
        .send_message("s", "hello again")
        .await
        .unwrap();
    let events = daemon.wait_turn_ended("s", 2).await;
    let ended = events
        .iter()
        .rev()
        .find_map(|e| match &e.payload {
            EventPayload::TurnEnded(t) => Some(t.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(ended.stop_reason, StopReason::Completed);
}

#[tokio::test]
async fn a_cancel_cancels_a_pending_call() {
    let daemon = TestDaemon::start().await;
    session(&daemon, "s", vec![client_tool("lookup")]).await;
    let call = send_and_call(&daemon, "hosttool lookup").await;
    daemon.client.cancel("s").await.unwrap();
    let events = daemon.wait_turn_ended("s", 1).await;
    assert_eq!(resolved(&events), [ToolCallOutcome::Cancelled]);
    let result = ToolCallResultRequest {
        output: ToolOutput::Text("late".into()),
        is_error: false,
    };
    let late = daemon
        .client
        .tool_call_result("s", &call.call_id, &result)
        .await;
    assert_eq!(late.unwrap_err().problem().unwrap().status, 409);
}

#[tokio::test]
async fn bad_host_tools_are_refused_naming_the_field() {
    let daemon = TestDaemon::start_with(Options {
        host_tool_secret: None,
        ..Options::default()
    })
    .await;
    let url = format!("{}/sessions/bad", daemon.url());
    let tool = json!({"name": "lookup", "handler": {"type": "client"}});
    for (tools, status, field) in [
        (
            json!([{"name": "has space", "handler": {"type": "client"}}]),
            422,
            "hostTools[0].name",
        ),
        (json!([tool, tool]), 422, "hostTools[1].name"),
        (
            json!([{"name": "ask_user", "handler": {"type": "client"}}]),
            422,
            "ask_user",
        ),
        (
            json!([{"name": "t", "inputSchema": {"type": "string"}, "handler": {"type": "client"}}]),
            422,
            "inputSchema",
        ),
        (
            json!([{"name": "t", "inputSchema": {"type": "object", "properties": 3}, "handler": {"type": "client"}}]),
            422,
            "not a valid JSON Schema",
        ),
        (
            json!([{"name": "t", "handler": {"type": "http", "url": "ftp://x"}}]),
            422,
            "handler.url",
        ),
        (
            json!([{"name": "t", "handler": {"type": "http", "url": "http://127.0.0.1:9/x", "timeoutMs": 0}}]),
            422,
            "timeoutMs",
        ),
        (
            json!([{"name": "t", "handler": {"type": "http", "url": "http://127.0.0.1:9/x"}}]),
            422,
            "--host-tool-secret-file",
        ),
        (
            json!([{"name": "t", "handler": {"type": "carrier-pigeon"}}]),
            422,
            "handler",
        ),
    ] {
        let body = json!({"agent": "mock", "hostTools": tools});
        let response = post(&url, &body).await;
        assert_eq!(response.0, status, "{tools}: {:?}", response.2);
        assert!(
            response.2["detail"]
                .as_str()
                .unwrap_or_default()
                .contains(field),
            "{tools}: {:?}",
            response.2
        );
    }
    let body = json!({"agent": "mock", "mcpServers": {"host": {"type": "http", "url": "http://127.0.0.1:9/mcp"}}});
    let response = post(&url, &body).await;
    assert_problem(&response, 422, "invalid-body");
    // An agent the daemon's MCP server cannot reach refuses host tools.
    let body = json!({"agent": "amp", "hostTools": [{"name": "t", "handler": {"type": "client"}}]});
    let response = post(&url, &body).await;
    assert!(matches!(response.0, 422 | 503), "{:?}", response.2);
}

/// An MCP `initialize` POST to `url` with `token`; answers the status.
async fn initialize(url: &str, token: Option<&str>) -> u16 {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        );
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    request.send().await.unwrap().status().as_u16()
}

#[tokio::test]
async fn the_mcp_endpoint_takes_only_its_sessions_live_token() {
    let daemon = TestDaemon::start_with(Options {
        token: Some("the-daemons-own-token".into()),
        ..Options::default()
    })
    .await;
    session(&daemon, "a", vec![client_tool("lookup")]).await;
    session(&daemon, "b", vec![client_tool("lookup")]).await;
    let broker = &daemon.server.sessions().settings().host_tools;
    let token_a = broker.token_of("a").expect("a's agent has a token");
    let token_b = broker.token_of("b").unwrap();
    assert_ne!(token_a, token_b);
    let url_a = format!("{}/sessions/a/mcp", daemon.url());
    assert_eq!(initialize(&url_a, Some(&token_a)).await, 200);
    assert_eq!(initialize(&url_a, None).await, 401);
    assert_eq!(initialize(&url_a, Some("the-daemons-own-token")).await, 401);
    assert_eq!(initialize(&url_a, Some(&token_b)).await, 401);
    assert_eq!(initialize(&url_a, Some(&format!("{token_a}x"))).await, 401);
    let unknown = format!("{}/sessions/zzz/mcp", daemon.url());
    assert_eq!(initialize(&unknown, Some(&token_a)).await, 401);
    // The daemon's own API does not take a session's token either.
    let sessions = raw(
        Method::GET,
        &format!("{}/sessions", daemon.url()),
        Some(&token_a),
        None,
        None,
    )
    .await;
    assert_eq!(sessions.0, 401);
    // An ended session's token is revoked.
    daemon.client.end_session("a").await.unwrap();
    assert_eq!(initialize(&url_a, Some(&token_a)).await, 401);
    assert!(broker.token_of("a").is_none());
    assert_eq!(
        initialize(&format!("{}/sessions/b/mcp", daemon.url()), Some(&token_b)).await,
        200
    );
}
