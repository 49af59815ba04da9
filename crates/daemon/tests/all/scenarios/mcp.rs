//! Session MCP servers: a stdio server and an HTTP server behind a bearer token (both the
//! test kit's), called by the agent with the permission round trip, the tool's output
//! reaching the model; the token nowhere but in the agent's reach.

use std::path::Path;
use std::sync::Arc;

use sandbox_testkit::mcp::{ECHO_PREFIX_ENV, HttpMcpServer, echo_text, stdio_server};
use sandbox_universal::{
    ContentPart, CreateSessionRequest, ItemKind, McpServer, McpTransport, PermissionKind,
    PermissionReply, StopReason, ToolPolicy, UniversalEvent,
};

use super::Proved;
use super::ctx::{Ctx, items, stop_reason};
use super::policy::support;
use super::subject::Runs;

/// What the fake model sends the echo tool.
const MARKER: &str = "mcp-marker";

/// The `mcp` of every tool call item in `events`, as `server/tool`.
fn mcp_calls(events: &[UniversalEvent]) -> Vec<String> {
    items(events, ItemKind::ToolCall)
        .iter()
        .flat_map(|i| &i.content)
        .filter_map(|p| match p {
            ContentPart::ToolCall { mcp: Some(mcp), .. } => {
                Some(format!("{}/{}", mcp.server, mcp.tool))
            }
            _ => None,
        })
        .collect()
}

/// Whether a model call after the tool ran carries its output.
fn output_reached_model(ctx: &Ctx, tag: &str, output: &str) -> bool {
    let needle = format!("({tag})");
    ctx.subject
        .provider
        .as_ref()
        .map(|p| p.model_requests())
        .unwrap_or_default()
        .iter()
        .map(|r| r.body.to_string())
        .any(|body| body.contains(&needle) && body.contains(output))
}

/// Creating a session with `server` is refused for an agent without its transport.
async fn refused(ctx: &Ctx, id: &str, server: McpServer) {
    let (request, _) = ctx.request(id);
    let request = CreateSessionRequest {
        mcp_servers: Some([("s".to_string(), server)].into()),
        ..request
    };
    let error = ctx
        .daemon
        .client
        .create_session(id, &request)
        .await
        .expect_err("refused");
    let problem = error.problem().expect("a problem");
    assert_eq!(problem.status, 422, "{id}: {problem:?}");
    assert!(problem.detail.contains("mcpServers"), "{id}: {problem:?}");
}

/// A stdio MCP server with an environment: the agent calls its tool (asking first where
/// it asks), the call reaches the server with the variable, its output the model.
pub async fn stdio(ctx: Arc<Ctx>) -> Proved {
    let support = support(&ctx).await;
    let dir = ctx.daemon.data_dir.path().join("mcp-stdio-server");
    let server = stdio_server(&dir).unwrap();
    let prefix = format!("from-{}-", ctx.subject.agent);
    let config = McpServer::Stdio {
        command: server.command.clone(),
        args: server.args.clone(),
        env: [(ECHO_PREFIX_ENV.to_string(), prefix.clone())].into(),
    };
    if !support.mcp_transports.contains(&McpTransport::Stdio) {
        refused(&ctx, "mcp-stdio", config).await;
        return Vec::new();
    }
    if ctx.subject.runs != Runs::RealCli {
        return Vec::new();
    }
    let s = ctx
        .session_with("mcp-stdio", |r| CreateSessionRequest {
            mcp_servers: Some([("st".to_string(), config)].into()),
            ..r
        })
        .await;
    let (events, asked) = ctx
        .turn_answering(&s.id, "USE_MCP st/echo (mcp-stdio)", PermissionReply::Once)
        .await;
    assert_eq!(stop_reason(&events), StopReason::Completed, "mcp-stdio");
    let calls = server.calls();
    if calls.len() != 1 {
        // What the model was offered and got back, to tell a server that was not there
        // from one that failed.
        let seen: Vec<(String, Vec<String>, Vec<String>)> = ctx
            .subject
            .provider
            .as_ref()
            .map(|p| p.model_requests())
            .unwrap_or_default()
            .iter()
            .filter(|r| r.body.to_string().contains("(mcp-stdio)"))
            .map(|r| (r.reply.clone(), r.tool_names(), r.tool_results()))
            .collect();
        panic!(
            "mcp-stdio: {} calls; the model saw {seen:#?}; events {events:#?}",
            calls.len()
        );
    }
    assert_eq!(
        calls[0].prefix.as_deref(),
        Some(prefix.as_str()),
        "mcp-stdio: the env"
    );
    assert_eq!(
        mcp_calls(&events),
        ["st/echo"],
        "mcp-stdio: the tool call item"
    );
    let output = format!("{prefix}{}", echo_text(MARKER));
    assert!(
        output_reached_model(&ctx, "mcp-stdio", &output),
        "mcp-stdio: the output did not reach the model"
    );
    for request in &asked {
        assert_eq!(
            request.kind,
            PermissionKind::McpTool,
            "mcp-stdio: {request:?}"
        );
    }
    let mut proved = vec!["mcpServers", "toolCalls"];
    if !asked.is_empty() {
        proved.push("permissions");
    }
    proved
}

/// An HTTP MCP server behind a bearer token: called with the token, the permission
/// answered `always` and not asked again; another of its tools denied; the token in no
/// event, argv or store file.
pub async fn http(ctx: Arc<Ctx>) -> Proved {
    let support = support(&ctx).await;
    let token = format!("mcp-bearer-{}-5e7a91", ctx.subject.agent);
    let server = HttpMcpServer::start(&token).await.unwrap();
    let config = McpServer::Http {
        url: server.url(),
        headers: [("Authorization".to_string(), format!("Bearer {token}"))].into(),
    };
    if !support.mcp_transports.contains(&McpTransport::Http) {
        refused(&ctx, "mcp-http", config).await;
        return Vec::new();
    }
    if ctx.subject.runs != Runs::RealCli {
        return Vec::new();
    }
    let per_tool = support.tools.contains_key("mcp");
    let s = ctx
        .session_with("mcp-http", |r| CreateSessionRequest {
            mcp_servers: Some([("ht".to_string(), config)].into()),
            tools: per_tool.then(|| ToolPolicy {
                allow: None,
                deny: vec!["mcp:ht/delete_everything".into()],
            }),
            ..r
        })
        .await;
    let (first, asked) = ctx
        .turn_answering(&s.id, "USE_MCP ht/echo (mcp-http)", PermissionReply::Always)
        .await;
    assert_eq!(stop_reason(&first), StopReason::Completed, "mcp-http");
    assert_eq!(
        mcp_calls(&first),
        ["ht/echo"],
        "mcp-http: the tool call item"
    );
    assert!(
        output_reached_model(&ctx, "mcp-http", &echo_text(MARKER)),
        "mcp-http: the output did not reach the model"
    );
    let (second, asked_again) = ctx
        .turn_answering(
            &s.id,
            "USE_MCP ht/echo (mcp-http-2)",
            PermissionReply::Reject,
        )
        .await;
    assert_eq!(
        stop_reason(&second),
        StopReason::Completed,
        "mcp-http: second"
    );
    assert!(
        asked_again.is_empty(),
        "mcp-http: `always` was not remembered"
    );
    assert_eq!(server.calls().len(), 2, "mcp-http: {:?}", server.calls());
    let bearer = format!("Bearer {token}");
    assert!(
        server
            .authorizations()
            .iter()
            .all(|a| a.as_deref() == Some(bearer.as_str())),
        "mcp-http: a request without the token"
    );
    if per_tool {
        let offered = ctx
            .subject
            .provider
            .as_ref()
            .unwrap()
            .model_requests()
            .iter()
            .filter(|r| r.body.to_string().contains("(mcp-http)"))
            .flat_map(|r| r.tool_names())
            .collect::<Vec<_>>();
        assert!(
            !offered.iter().any(|t| t.contains("delete_everything")),
            "mcp-http: a denied MCP tool was offered: {offered:?}"
        );
    }
    // The token reached the server, and nothing else.
    let events = ctx.daemon.client.get_events(
        &s.id,
        &sandbox_client::EventsQuery {
            offset: None,
            limit: None,
            include_raw: true,
        },
    );
    let logged = serde_json::to_string(&events.await.unwrap()).unwrap();
    assert!(
        !logged.contains(&token),
        "mcp-http: the token is in the log"
    );
    for pid in ctx
        .subject
        .processes(&s.cwd, ctx.daemon.data_dir.path(), None)
    {
        let argv = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&argv).contains(&token),
            "mcp-http: the token is in an agent's argv"
        );
    }
    assert!(
        !store_holds(ctx.daemon.data_dir.path(), &token),
        "mcp-http: the token is in the store"
    );
    let mut proved = vec!["mcpServers", "toolCalls"];
    if !asked.is_empty() {
        assert!(
            asked.iter().all(|p| p.kind == PermissionKind::McpTool),
            "{asked:?}"
        );
        proved.extend(["permissions", "permissionAlways"]);
    }
    proved
}

/// Whether a store file in the data dir (the files beside `sessions/`) holds `needle`.
fn store_holds(data_dir: &Path, needle: &str) -> bool {
    std::fs::read_dir(data_dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .any(|e| {
            std::fs::read(e.path())
                .is_ok_and(|bytes| bytes.windows(needle.len()).any(|w| w == needle.as_bytes()))
        })
}
