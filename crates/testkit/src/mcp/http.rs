//! The Streamable HTTP MCP server, on rmcp's `StreamableHttpService` mounted at `/mcp`
//! behind a bearer token check.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use serde_json::{Value, json};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::{DELETE_REPLY, McpCall, echo_text};

/// The largest request body the recorder reads to name the JSON-RPC method.
const BODY_LIMIT: usize = 4 << 20;

/// One HTTP request the server received (including those refused with 401).
#[derive(Clone, Debug, PartialEq)]
pub struct McpHttpRequest {
    /// `POST`, `GET` or `DELETE`.
    pub method: String,
    /// The `Authorization` header, verbatim.
    pub authorization: Option<String>,
    /// The `mcp-protocol-version` header.
    pub protocol_version: Option<String>,
    /// The JSON-RPC `method` of a POSTed message (`initialize`, `tools/call`, ...).
    pub rpc_method: Option<String>,
    /// Whether the bearer token was right (else the answer was HTTP 401).
    pub authorized: bool,
}

#[derive(Default)]
struct Shared {
    token: String,
    calls: Mutex<Vec<McpCall>>,
    requests: Mutex<Vec<McpHttpRequest>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A running Streamable HTTP MCP server on 127.0.0.1 whose requests must carry
/// `Authorization: Bearer <token>` (else HTTP 401 with `WWW-Authenticate: Bearer`).
/// Dropping it stops the server.
pub struct HttpMcpServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    server: JoinHandle<()>,
    cancel: CancellationToken,
}

impl HttpMcpServer {
    /// Binds a free port of 127.0.0.1 and serves on the current tokio runtime.
    pub async fn start(token: &str) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            token: token.to_owned(),
            ..Shared::default()
        });
        let cancel = CancellationToken::new();
        let config = StreamableHttpServerConfig::default().with_cancellation_token(cancel.clone());
        let tools = shared.clone();
        let service: StreamableHttpService<Tools, LocalSessionManager> = StreamableHttpService::new(
            move || Ok(Tools::new(tools.clone())),
            Default::default(),
            config,
        );
        let app = Router::new()
            .nest_service("/mcp", service)
            .layer(middleware::from_fn_with_state(shared.clone(), guard));
        let stop = cancel.clone();
        let server = tokio::spawn(async move {
            let serve = axum::serve(listener, app).with_graceful_shutdown(stop.cancelled_owned());
            if let Err(error) = serve.await {
                tracing::error!(%error, "MCP test server stopped");
            }
        });
        Ok(Self {
            addr,
            shared,
            server,
            cancel,
        })
    }

    /// `http://127.0.0.1:PORT/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// The token requests must carry.
    pub fn token(&self) -> &str {
        &self.shared.token
    }

    /// Every `tools/call` answered, oldest first.
    pub fn calls(&self) -> Vec<McpCall> {
        lock(&self.shared.calls).clone()
    }

    /// Every HTTP request received, oldest first.
    pub fn requests(&self) -> Vec<McpHttpRequest> {
        lock(&self.shared.requests).clone()
    }

    /// The `Authorization` header of every HTTP request received, oldest first.
    pub fn authorizations(&self) -> Vec<Option<String>> {
        self.requests()
            .into_iter()
            .map(|r| r.authorization)
            .collect()
    }
}

impl Drop for HttpMcpServer {
    fn drop(&mut self) {
        self.cancel.cancel();
        self.server.abort();
    }
}

impl std::fmt::Debug for HttpMcpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpMcpServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

/// Records the request, then refuses it with 401 unless it carries the bearer token.
async fn guard(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let header = |name: &str| {
        parts
            .headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let Ok(bytes) = axum::body::to_bytes(body, BODY_LIMIT).await else {
        return StatusCode::PAYLOAD_TOO_LARGE.into_response();
    };
    let authorization = header("authorization");
    let authorized = authorization
        .as_deref()
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|t| t == shared.token);
    let rpc_method = serde_json::from_slice::<Value>(&bytes)
        .ok()
        .and_then(|v| v["method"].as_str().map(str::to_owned));
    lock(&shared.requests).push(McpHttpRequest {
        method: parts.method.to_string(),
        authorization,
        protocol_version: header("mcp-protocol-version"),
        rpc_method,
        authorized,
    });
    if !authorized {
        let body =
            json!({"error": "unauthorized", "error_description": "missing or wrong bearer token"});
        let mut response = (StatusCode::UNAUTHORIZED, axum::Json(body)).into_response();
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return response;
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// The arguments of the echo tool.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// The text to echo.
    text: String,
}

/// The tools, one instance per MCP session.
#[derive(Clone)]
struct Tools {
    shared: Arc<Shared>,
    tool_router: ToolRouter<Self>,
}

impl Tools {
    fn new(shared: Arc<Shared>) -> Self {
        Self {
            shared,
            tool_router: Self::tool_router(),
        }
    }

    fn record(&self, tool: &str, arguments: Value) {
        lock(&self.shared.calls).push(McpCall {
            tool: tool.to_owned(),
            arguments,
            prefix: None,
        });
    }
}

#[tool_router]
impl Tools {
    #[tool(
        description = "Echoes the given text back, prefixed with 'echo:'.",
        annotations(title = "Echo", read_only_hint = false, open_world_hint = true)
    )]
    async fn echo(&self, Parameters(EchoArgs { text }): Parameters<EchoArgs>) -> String {
        self.record(super::ECHO_TOOL, json!({"text": text}));
        echo_text(&text)
    }

    #[tool(
        description = "Pretends to delete everything (does nothing).",
        annotations(
            title = "Delete everything",
            read_only_hint = false,
            destructive_hint = true
        )
    )]
    async fn delete_everything(&self) -> String {
        self.record(super::DELETE_TOOL, json!({}));
        DELETE_REPLY.to_owned()
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Tools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("sandbox-testkit-http", "1.0.0"))
    }
}
