//! The MCP servers and the `USE_MCP` / `LOOP_TOOLS` keywords against the real CLIs, in the
//! namespace: Claude Code (`-p` stream-json, the daemon's launch) with `--mcp-config`, and
//! Codex (`app-server`, the daemon's launch) with `thread/start.config.mcp_servers`, on
//! its default model (code mode) and on the kit's classic model (`tool_search`).

use std::time::Duration;

use sandbox_testkit::agents::{self, Agent};
use sandbox_testkit::drivers::Transcript;
use sandbox_testkit::drivers::claude::{self, Claude};
use sandbox_testkit::drivers::codex::{self as codex_driver, Codex};
use sandbox_testkit::mcp::{ECHO_PREFIX_ENV, ECHO_TOOL, HttpMcpServer, StdioMcp, stdio_server};
use sandbox_testkit::offline::{self, Sandbox};
use sandbox_testkit::provider::{FakeProvider, RecordedRequest};
use serde_json::{Value, json};

const TOKEN: &str = "tok-from-env";
const LIMIT: Duration = Duration::from_secs(90);

/// What every agent run here needs: the fake provider, both MCP servers, a sandbox.
struct Rig {
    provider: FakeProvider,
    http: HttpMcpServer,
    stdio: StdioMcp,
    sandbox: Sandbox,
    _dir: tempfile::TempDir,
}

impl Rig {
    async fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        Self {
            provider: FakeProvider::start().await.unwrap(),
            http: HttpMcpServer::start(TOKEN).await.unwrap(),
            stdio: stdio_server(&dir.path().join("mcp")).unwrap(),
            sandbox: Sandbox::create(dir.path()).unwrap(),
            _dir: dir,
        }
    }

    /// The model requests from the one that follows the MCP call on: the first carries
    /// its result.
    fn after_the_call(&self, echoed: &str) -> Vec<RecordedRequest> {
        let requests = self.provider.model_requests();
        let first = requests
            .iter()
            .position(|r| r.tool_results().iter().any(|t| t.contains(echoed)))
            .unwrap_or_else(|| panic!("no request carries {echoed}: {requests:#?}"));
        requests[first..].to_vec()
    }

    /// The protocol version of the HTTP server's `tools/call` request.
    fn call_version(&self) -> Option<String> {
        let requests = self.http.requests();
        let call = requests
            .iter()
            .find(|r| r.rpc_method.as_deref() == Some("tools/call"));
        call.and_then(|r| r.protocol_version.clone())
    }

    fn assert_http_call(&self) {
        let calls = self.http.calls();
        assert_eq!(calls.len(), 1, "{calls:?}");
        assert_eq!(calls[0].tool, ECHO_TOOL);
        assert_eq!(calls[0].arguments, json!({"text": "mcp-marker"}));
        let authorizations = self.http.authorizations();
        assert!(
            authorizations
                .iter()
                .all(|a| a.as_deref() == Some("Bearer tok-from-env")),
            "{authorizations:?}"
        );
    }

    fn assert_stdio_call(&self) {
        let calls = self.stdio.calls();
        assert_eq!(calls.len(), 1, "{calls:?}");
        assert_eq!(calls[0].arguments, json!({"text": "mcp-marker"}));
        assert_eq!(calls[0].prefix.as_deref(), Some("pre-"), "env reached it");
    }
}

/// The final reply quotes the tool's output, and the request after the call carries it.
fn assert_reply(rig: &Rig, reply: &str, echoed: &str) {
    assert!(reply.contains(echoed), "{reply}");
    let after = rig.after_the_call(echoed);
    assert!(after[0].reply.starts_with("text"), "{}", after[0].reply);
}

#[tokio::test]
async fn claude_calls_both_mcp_servers() {
    sandbox_testkit::isolate!();
    let Some(exe) = agents::require(Agent::Claude) else {
        return;
    };
    let rig = Rig::start().await;
    let config = json!({"mcpServers": {
        "ht": {"type": "http", "url": rig.http.url(),
               "headers": {"Authorization": "Bearer ${MCP_TOKEN}"}},
        "st": {"type": "stdio", "command": rig.stdio.command, "args": rig.stdio.args,
               "env": {ECHO_PREFIX_ENV: "pre-"}},
    }});
    let launch = offline::claude::launch(&exe, &rig.sandbox, &rig.provider.base_url())
        .args([
            "--mcp-config".to_owned(),
            config.to_string(),
            "--strict-mcp-config".to_owned(),
            "--append-system-prompt".to_owned(),
            "SYSTEM-MARKER-7".to_owned(),
        ])
        .envs([("MCP_TOKEN", TOKEN)]);
    let mut agent = Claude::start(&launch, Transcript::default(), LIMIT)
        .await
        .unwrap();
    let mut asked = Vec::new();
    let mut allow = |msg: &Value| match claude::permission_request(msg) {
        Some(request) => {
            asked.push(request["tool_name"].as_str().unwrap_or_default().to_owned());
            vec![claude::control_response(msg, claude::allow(request))]
        }
        None => Vec::new(),
    };
    let turn = agent
        .turn("USE_MCP ht/echo", LIMIT, &mut allow)
        .await
        .unwrap();
    assert_eq!(turn.result["is_error"], false, "{}", turn.result);
    assert_reply(
        &rig,
        turn.result["result"].as_str().unwrap(),
        "echo:mcp-marker",
    );
    rig.assert_http_call();
    // rmcp answers Claude's `server/discover`: no `initialize`, the 2026 version.
    assert_eq!(rig.call_version().as_deref(), Some("2026-07-28"));
    let first = &rig.provider.model_requests()[0];
    assert!(
        first.offers_tool("deferred:mcp__ht__echo"),
        "{:?}",
        first.tool_names()
    );
    assert!(first.system_text().contains("SYSTEM-MARKER-7"));

    let turn = agent
        .turn("USE_MCP st/echo", LIMIT, &mut allow)
        .await
        .unwrap();
    assert_reply(
        &rig,
        turn.result["result"].as_str().unwrap(),
        "pre-echo:mcp-marker",
    );
    rig.assert_stdio_call();
    assert_eq!(asked, ["mcp__ht__echo", "mcp__st__echo"]);
    let replies: Vec<String> = rig
        .provider
        .model_requests()
        .into_iter()
        .map(|r| r.reply)
        .collect();
    assert_eq!(
        replies,
        [
            "tool:ToolSearch",
            "tool:mcp__ht__echo (chained)",
            "text (after tool)",
            "tool:ToolSearch",
            "tool:mcp__st__echo (chained)",
            "text (after tool)"
        ]
    );
    agent.close().await;
}

#[tokio::test]
async fn claude_max_turns_ends_a_tool_loop() {
    sandbox_testkit::isolate!();
    let Some(exe) = agents::require(Agent::Claude) else {
        return;
    };
    let rig = Rig::start().await;
    let launch = offline::claude::launch(&exe, &rig.sandbox, &rig.provider.base_url())
        .args(["--max-turns", "3"]);
    let mut agent = Claude::start(&launch, Transcript::default(), LIMIT)
        .await
        .unwrap();
    let allow = |msg: &Value| match claude::permission_request(msg) {
        Some(request) => vec![claude::control_response(msg, claude::allow(request))],
        None => Vec::new(),
    };
    let turn = agent.turn("LOOP_TOOLS", LIMIT, allow).await.unwrap();
    assert_eq!(turn.result["subtype"], "error_max_turns", "{}", turn.result);
    let replies: Vec<String> = rig
        .provider
        .model_requests()
        .into_iter()
        .map(|r| r.reply)
        .collect();
    assert_eq!(
        replies,
        ["tool:Bash", "tool:Bash (loop)", "tool:Bash (loop)"]
    );
    agent.close().await;
}

/// Runs Codex (`app-server`, the daemon's launch, `default` mode: `approvalPolicy:
/// untrusted`) on `model` with both MCP servers in the thread's config, one turn per
/// prompt, accepting every MCP approval; returns each turn's final agent message and the
/// tools Codex asked approval for.
async fn codex_turns(
    rig: &Rig,
    model: Option<&str>,
    prompts: &[&str],
) -> Option<(Vec<String>, Vec<String>)> {
    let exe = agents::require(Agent::Codex)?;
    let launch = offline::codex::launch(&exe, &rig.sandbox, &rig.provider.base_url())
        .unwrap()
        .envs([("MCP_TOKEN", TOKEN)]);
    let config = json!({"config": {"mcp_servers": {
        "ht": {"url": rig.http.url(), "bearer_token_env_var": "MCP_TOKEN"},
        "st": {"command": rig.stdio.command, "args": rig.stdio.args,
               "env": {ECHO_PREFIX_ENV: "pre-"}},
    }}});
    let mut agent = Codex::start_with(
        &launch,
        model.map(str::to_owned),
        config,
        Transcript::default(),
        LIMIT,
    )
    .await
    .unwrap();
    let mut asked = Vec::new();
    let mut replies = Vec::new();
    for prompt in prompts {
        let turn = agent
            .turn(prompt, LIMIT, |msg| {
                if codex_driver::is_request(msg, "mcpServer/elicitation/request") {
                    let meta = &msg["params"]["_meta"];
                    assert_eq!(meta["codex_approval_kind"], "mcp_tool_call", "{msg}");
                    asked.push(format!(
                        "{}/{}",
                        msg["params"]["serverName"].as_str().unwrap_or_default(),
                        meta["tool_name"].as_str().unwrap_or_default()
                    ));
                    return vec![codex_driver::reply(
                        msg,
                        json!({"action": "accept", "content": {}}),
                    )];
                }
                Vec::new()
            })
            .await
            .unwrap();
        assert_eq!(
            turn.completed["turn"]["status"], "completed",
            "{}",
            turn.completed
        );
        let text = turn
            .lines
            .iter()
            .rev()
            .filter(|l| {
                l["method"] == "item/completed" && l["params"]["item"]["type"] == "agentMessage"
            })
            .find_map(|l| l["params"]["item"]["text"].as_str())
            .unwrap_or_default();
        replies.push(text.to_owned());
    }
    agent.close().await;
    Some((replies, asked))
}

#[tokio::test]
async fn codex_default_model_calls_mcp_tools_from_javascript() {
    sandbox_testkit::isolate!();
    let rig = Rig::start().await;
    let Some((replies, asked)) =
        codex_turns(&rig, None, &["USE_MCP ht/echo", "USE_MCP st/echo"]).await
    else {
        return;
    };
    assert_reply(&rig, &replies[0], "echo:mcp-marker");
    assert_reply(&rig, &replies[1], "pre-echo:mcp-marker");
    rig.assert_http_call();
    rig.assert_stdio_call();
    assert_eq!(rig.call_version().as_deref(), Some("2025-06-18"));
    assert_eq!(asked, ["ht/echo", "st/echo"]);
    let labels: Vec<String> = rig
        .provider
        .model_requests()
        .into_iter()
        .map(|r| r.reply)
        .collect();
    assert_eq!(
        labels,
        [
            "tool:exec(mcp__ht__echo)",
            "text (after tool)",
            "tool:exec(mcp__st__echo)",
            "text (after tool)"
        ]
    );
}

#[tokio::test]
async fn codex_classic_model_searches_then_calls_the_mcp_tool() {
    sandbox_testkit::isolate!();
    let rig = Rig::start().await;
    let model = offline::codex::MODEL;
    let Some((replies, asked)) = codex_turns(&rig, Some(model), &["USE_MCP ht/echo"]).await else {
        return;
    };
    assert_reply(&rig, &replies[0], "echo:mcp-marker");
    rig.assert_http_call();
    assert_eq!(asked, ["ht/echo"]);
    let requests = rig.provider.model_requests();
    let labels: Vec<&str> = requests.iter().map(|r| r.reply.as_str()).collect();
    assert_eq!(
        labels,
        [
            "tool:tool_search",
            "tool:echo (chained)",
            "text (after tool)"
        ]
    );
    assert!(requests[0].offers_tool("tool_search"));
    assert!(
        requests[1].offers_tool("mcp__ht.echo"),
        "{:?}",
        requests[1].tool_names()
    );
}
