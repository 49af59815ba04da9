//! What the daemon adds to one host tool call.
//!
//! A daemon runs in-process with a mock session whose turn is held open by a pending
//! client host tool; the bench then plays the agent's MCP client (with the session's own
//! token) and measures, interleaved:
//!
//! - **direct**: the signed `POST` to a loopback http tool endpoint (the test kit's, which
//!   verifies the signature), made by the daemon's own caller — the floor;
//! - **via MCP**: `tools/call` of that http tool on the daemon's `/sessions/{id}/mcp` —
//!   what an agent sees;
//! - **client tool**: `tools/call` of a client tool, answered as soon as its durable
//!   `toolCallRequested` arrives on the session's SSE stream — the round trip through the
//!   log.
//!
//! It prints p50 / p90 / p99 of each and the median the daemon adds (via MCP − direct).
//!
//! `cargo bench -p sandbox-daemon --bench host_tool -- [--calls 300]`

use std::collections::HashMap;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use futures::StreamExt;
use sandbox_agents::ProviderEnv;
use sandbox_agents::locate::BinaryLocator;
use sandbox_client::Client;
use sandbox_daemon::app::HttpSettings;
use sandbox_daemon::host_tools::HostBroker;
use sandbox_daemon::host_tools::http::HttpToolCaller;
use sandbox_daemon::server::{ServerConfig, start};
use sandbox_daemon::session::SessionSettings;
use sandbox_testkit::host_tools::HttpToolServer;
use sandbox_universal::{
    CreateSessionRequest, EventPayload, HostTool, HostToolCall, HostToolHandler,
    ToolCallResultRequest, ToolOutput,
};
use serde_json::{Value, json};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

const SECRET: &[u8] = b"bench-host-tool-secret";
const SESSION: &str = "bench";

fn tool(name: &str, handler: HostToolHandler) -> HostTool {
    HostTool {
        name: name.into(),
        description: String::new(),
        input_schema: json!({"type": "object"}),
        handler,
        needs_approval: false,
        ends_turn: false,
    }
}

/// One MCP `tools/call` with the session's token; answers the result's text.
async fn mcp_call(http: &reqwest::Client, url: &str, token: &str, tool: &str) -> Result<String> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": tool, "arguments": {"n": 1}}});
    let response = http
        .post(url)
        .bearer_auth(token)
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2025-06-18")
        .json(&body)
        .send()
        .await?;
    let text = response.text().await?;
    let message = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .find(|m| m["id"] == 1)
        .ok_or_else(|| format!("no answer in {text:?}"))?;
    if message["result"]["isError"] == true || message.get("error").is_some() {
        return Err(format!("the call failed: {message}").into());
    }
    Ok(message["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string())
}

fn percentiles(mut values: Vec<f64>) -> [f64; 3] {
    values.sort_by(f64::total_cmp);
    let at = |q: f64| values[((values.len() - 1) as f64 * q).round() as usize];
    [at(0.5), at(0.9), at(0.99)]
}

async fn run(calls: usize) -> Result<()> {
    let data = tempfile::tempdir()?;
    let server = start(ServerConfig {
        host: "127.0.0.1".into(),
        port: 0,
        http: HttpSettings::default(),
        sessions: SessionSettings {
            host_tools: HostBroker::new(Some(SECRET.to_vec())),
            ..SessionSettings::new(data.path().to_path_buf(), data.path().to_path_buf())
        },
        store: None,
        store_options: sandbox_daemon::store::StoreOptions::new(),
        provider_env: ProviderEnv::default(),
        locator: BinaryLocator::new(HashMap::new(), None, None),
        executable: None,
        install: None,
        auto_install: false,
        shutdown_timeout: Duration::from_secs(5),
    })
    .await?;
    let endpoint = HttpToolServer::start(SECRET).await?;
    let client = Client::new(&server.url(), None)?;
    let http_handler = HostToolHandler::Http {
        url: endpoint.url(),
        headers: Default::default(),
        timeout_ms: None,
    };
    client
        .create_session(
            SESSION,
            &CreateSessionRequest {
                agent: "mock".into(),
                host_tools: Some(vec![
                    tool("hold", HostToolHandler::Client),
                    tool("answer", HostToolHandler::Client),
                    tool("fetch", http_handler),
                ]),
                ..CreateSessionRequest::default()
            },
        )
        .await?;
    let mut events = client.stream_events(SESSION, None, false).await?;
    // The mock's turn waits on `hold` while the bench calls.
    client.send_message(SESSION, "hosttool hold").await?;
    let held = loop {
        let event = events.next().await.ok_or("the stream ended")??;
        if let EventPayload::ToolCallRequested(call) = event.payload {
            break call;
        }
    };
    let token = server
        .sessions()
        .settings()
        .host_tools
        .token_of(SESSION)
        .ok_or("no token")?;
    let mcp_url = format!("{}/sessions/{SESSION}/mcp", server.url());
    let http = reqwest::Client::builder().no_proxy().build()?;
    let caller = HttpToolCaller::new(Some(SECRET.to_vec()));
    let direct_call = HostToolCall {
        session_id: SESSION.into(),
        call_id: "direct".into(),
        tool: "fetch".into(),
        input: json!({"n": 1}),
    };
    let (mut direct, mut via_mcp, mut client_tool) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..calls + 20 {
        let started = Instant::now();
        caller
            .call(
                &endpoint.url(),
                &Default::default(),
                Duration::from_secs(10),
                &direct_call,
            )
            .await?;
        let d = started.elapsed();
        let started = Instant::now();
        mcp_call(&http, &mcp_url, &token, "fetch").await?;
        let m = started.elapsed();
        // A client tool: the call waits for its durable toolCallRequested, answered at once.
        let started = Instant::now();
        let pending = mcp_call(&http, &mcp_url, &token, "answer");
        let answer = async {
            loop {
                let event = events.next().await.ok_or("the stream ended")??;
                if let EventPayload::ToolCallRequested(call) = event.payload {
                    let result = ToolCallResultRequest {
                        output: ToolOutput::Text("ok".into()),
                        is_error: false,
                    };
                    client
                        .tool_call_result(SESSION, &call.call_id, &result)
                        .await?;
                    return Ok::<(), Box<dyn std::error::Error>>(());
                }
            }
        };
        let (text, answered) = tokio::join!(pending, answer);
        answered?;
        assert_eq!(text?, "ok");
        let c = started.elapsed();
        if i >= 20 {
            direct.push(d.as_secs_f64() * 1e3);
            via_mcp.push(m.as_secs_f64() * 1e3);
            client_tool.push(c.as_secs_f64() * 1e3);
        }
    }
    let release = ToolCallResultRequest {
        output: ToolOutput::Text("done".into()),
        is_error: false,
    };
    client
        .tool_call_result(SESSION, &held.call_id, &release)
        .await?;
    let added: Vec<f64> = via_mcp.iter().zip(&direct).map(|(m, d)| m - d).collect();
    println!("host tool calls ({calls} each, interleaved, after 20 warm-up; ms p50 / p90 / p99):");
    for (name, values) in [
        ("direct signed POST to the endpoint", direct),
        ("tools/call of the http tool via the daemon", via_mcp),
        ("tools/call of a client tool (log round trip)", client_tool),
    ] {
        let [p50, p90, p99] = percentiles(values);
        println!("  {name:<48} {p50:>7.3} {p90:>7.3} {p99:>7.3}");
    }
    let [p50, p90, _] = percentiles(added);
    println!("  the daemon adds to an http tool call: p50 {p50:.3} ms, p90 {p90:.3} ms");
    server.stop().await?;
    Ok(())
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().collect();
    let calls = argv
        .windows(2)
        .find(|w| w[0] == "--calls")
        .and_then(|w| w[1].parse().ok())
        .unwrap_or(300);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    match runtime.block_on(run(calls)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("host_tool bench: {error}");
            ExitCode::FAILURE
        }
    }
}
