//! Both servers driven by MCP clients: raw JSON-RPC at the protocol versions the agents
//! use, and rmcp's own client.

use std::process::Stdio;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use super::*;

const TOKEN: &str = "tok-123";

/// A raw JSON-RPC client of the HTTP server, speaking one protocol version.
struct RawHttp {
    client: reqwest::Client,
    url: String,
    version: String,
    session: Option<String>,
    token: String,
}

impl RawHttp {
    fn new(url: &str, version: &str, token: &str) -> Self {
        Self {
            client: reqwest::Client::new(),
            url: url.to_owned(),
            version: version.to_owned(),
            session: None,
            token: token.to_owned(),
        }
    }

    /// POSTs one message; the status and the JSON-RPC reply (from JSON or SSE), if any.
    async fn post(&mut self, message: Value) -> (u16, Option<Value>) {
        let mut request = self
            .client
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("authorization", format!("Bearer {}", self.token))
            .header("mcp-protocol-version", &self.version)
            .json(&message);
        if let Some(session) = &self.session {
            request = request.header("mcp-session-id", session);
        }
        let response = request.send().await.expect("the server answers");
        if let Some(id) = response.headers().get("mcp-session-id") {
            self.session = Some(id.to_str().unwrap().to_owned());
        }
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        let reply = text
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .chain(std::iter::once(text.as_str()))
            .filter_map(|d| serde_json::from_str::<Value>(d).ok())
            .find(|v| v.get("id").is_some());
        (status, reply)
    }

    async fn handshake(&mut self) -> Value {
        let (status, reply) = self
            .post(
                json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": self.version, "capabilities": {},
                "clientInfo": {"name": "kit-test", "version": "1"}}}),
            )
            .await;
        assert_eq!(status, 200);
        let (status, _) = self
            .post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        assert_eq!(status, 202);
        reply.expect("an initialize result")["result"].clone()
    }
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn http_server_answers_the_legacy_versions_the_agents_use() {
    rt().block_on(async {
        let server = HttpMcpServer::start(TOKEN).await.unwrap();
        for version in ["2025-06-18", "2025-11-25"] {
            let mut client = RawHttp::new(&server.url(), version, TOKEN);
            let init = client.handshake().await;
            assert_eq!(init["protocolVersion"], version);
            assert_eq!(init["serverInfo"]["name"], "sandbox-testkit-http");
            let (_, listed) = client
                .post(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
                .await;
            let tools = listed.unwrap()["result"]["tools"].clone();
            let echo = tools
                .as_array()
                .unwrap()
                .iter()
                .find(|t| t["name"] == ECHO_TOOL)
                .expect("echo is listed")
                .clone();
            assert_eq!(echo["inputSchema"]["properties"]["text"]["type"], "string");
            assert_eq!(echo["annotations"]["readOnlyHint"], false);
            assert_eq!(echo["annotations"]["openWorldHint"], true);
            assert!(echo["annotations"].get("destructiveHint").is_none());
            let delete = tools
                .as_array()
                .unwrap()
                .iter()
                .find(|t| t["name"] == DELETE_TOOL)
                .expect("delete_everything is listed");
            assert_eq!(delete["annotations"]["destructiveHint"], true);
            let (_, called) = client
                .post(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                             "params": {"name": "echo", "arguments": {"text": version}}}))
                .await;
            let result = called.unwrap()["result"].clone();
            assert_eq!(result["content"][0]["text"], format!("echo:{version}"));
            assert_eq!(result["isError"], false);
        }
        let calls = server.calls();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[1].tool, ECHO_TOOL);
        assert_eq!(calls[1].arguments, json!({"text": "2025-11-25"}));
        let requests = server.requests();
        assert!(requests.iter().all(|r| r.authorized));
        assert!(
            requests
                .iter()
                .any(|r| r.rpc_method.as_deref() == Some("tools/call")
                    && r.protocol_version.as_deref() == Some("2025-06-18"))
        );
    });
}

#[test]
fn http_server_refuses_requests_without_the_token() {
    rt().block_on(async {
        let server = HttpMcpServer::start(TOKEN).await.unwrap();
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "kit-test", "version": "1"}}});
        let (status, _) = RawHttp::new(&server.url(), "2025-06-18", "wrong")
            .post(init.clone())
            .await;
        assert_eq!(status, 401);
        let bare = reqwest::Client::new()
            .post(server.url())
            .header("accept", "application/json, text/event-stream")
            .json(&init)
            .send()
            .await
            .unwrap();
        assert_eq!(bare.status().as_u16(), 401);
        assert_eq!(bare.headers()["www-authenticate"], "Bearer");
        assert_eq!(
            server.authorizations(),
            [Some("Bearer wrong".to_owned()), None]
        );
        assert!(server.requests().iter().all(|r| !r.authorized));
        assert!(server.calls().is_empty());
    });
}

#[test]
fn http_server_serves_rmcps_own_client() {
    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

    rt().block_on(async {
        let server = HttpMcpServer::start(TOKEN).await.unwrap();
        let config = StreamableHttpClientTransportConfig::with_uri(server.url()).auth_header(TOKEN);
        let transport = StreamableHttpClientTransport::from_config(config);
        let client = ().serve(transport).await.expect("the handshake succeeds");
        let tools = client.list_all_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names.len(), 2, "{names:?}");
        assert!(names.contains(&ECHO_TOOL) && names.contains(&DELETE_TOOL));
        let arguments = json!({"text": "via rmcp"}).as_object().cloned().unwrap();
        let result = client
            .call_tool(CallToolRequestParams::new(ECHO_TOOL).with_arguments(arguments))
            .await
            .unwrap();
        let text = serde_json::to_value(&result).unwrap()["content"][0]["text"].clone();
        assert_eq!(text, "echo:via rmcp");
        client.cancel().await.ok();
        assert_eq!(server.calls()[0].arguments, json!({"text": "via rmcp"}));
        assert!(
            server
                .authorizations()
                .iter()
                .all(|a| a.as_deref() == Some("Bearer tok-123"))
        );
    });
}

#[test]
fn stdio_server_speaks_newline_delimited_json_rpc() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let server = stdio_server(dir.path()).unwrap();
        assert_eq!(server.command, "python3");
        let mut child = tokio::process::Command::new(&server.command)
            .args(&server.args)
            .env(ECHO_PREFIX_ENV, "pre-")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("python3 runs");
        let mut stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut ask = async |message: Value| -> Value {
            stdin
                .write_all(format!("{message}\n").as_bytes())
                .await
                .unwrap();
            if message.get("id").is_none() {
                return Value::Null;
            }
            let line = stdout.next_line().await.unwrap().expect("a reply");
            serde_json::from_str(&line).unwrap()
        };
        for (asked, expected) in [("2025-06-18", "2025-06-18"), ("2099-01-01", "2025-11-25")] {
            let init = ask(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                  "params": {"protocolVersion": asked, "capabilities": {}}}))
            .await;
            assert_eq!(init["result"]["protocolVersion"], expected);
        }
        ask(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        assert_eq!(
            ask(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"})).await["result"],
            json!({})
        );
        let listed = ask(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})).await;
        let tools = listed["result"]["tools"].as_array().unwrap().clone();
        assert_eq!(tools[0]["name"], ECHO_TOOL);
        assert_eq!(tools[0]["annotations"]["readOnlyHint"], false);
        assert_eq!(tools[1]["annotations"]["destructiveHint"], true);
        let called = ask(json!({"jsonrpc": "2.0", "id": "c", "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "hi"}}}))
        .await;
        assert_eq!(called["id"], "c");
        assert_eq!(called["result"]["content"][0]["text"], "pre-echo:hi");
        let unknown = ask(json!({"jsonrpc": "2.0", "id": 4, "method": "resources/list"})).await;
        assert_eq!(unknown["error"]["code"], -32601);
        drop(stdin);
        child.wait().await.unwrap();
        assert_eq!(
            server.calls(),
            [McpCall {
                tool: ECHO_TOOL.to_owned(),
                arguments: json!({"text": "hi"}),
                prefix: Some("pre-".to_owned()),
            }]
        );
    });
}
