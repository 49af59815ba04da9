//! The daemon's MCP endpoint: `/sessions/{id}/mcp`, Streamable HTTP on rmcp, served
//! statelessly (no MCP session to expire or to keep in memory) behind the session's own
//! bearer token — never the daemon's token, which this route does not take.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Map, Value};

use super::broker::{HostBroker, Scope};
use super::{ask_user, call};

/// How often an open tool call's SSE stream gets a keep-alive (a human may take long).
const KEEP_ALIVE: std::time::Duration = std::time::Duration::from_secs(15);

/// The route of every session's MCP endpoint, with its own authorisation.
pub fn router(broker: Arc<HostBroker>) -> Router {
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(false)
        .with_sse_keep_alive(Some(KEEP_ALIVE))
        .disable_allowed_hosts();
    let service: StreamableHttpService<HostMcp, NeverSessionManager> = StreamableHttpService::new(
        || Ok(HostMcp),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    Router::new()
        .route_service("/sessions/{id}/mcp", service)
        .layer(middleware::from_fn_with_state(broker, authorize))
}

/// Lets a request through only with the bearer token of the session its path names;
/// the scope it grants rides along for the handler.
async fn authorize(
    State(broker): State<Arc<HostBroker>>,
    mut request: Request,
    next: Next,
) -> Response {
    let session = request
        .uri()
        .path()
        .strip_prefix("/sessions/")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .unwrap_or_default()
        .to_string();
    let bearer = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default();
    match broker.authorize(&session, bearer) {
        Some(scope) => {
            request.extensions_mut().insert(scope);
            request.extensions_mut().insert(broker);
            next.run(request).await
        }
        None => crate::error::ApiError::HostToolUnauthorized.into_response(),
    }
}

/// The MCP server of one request: its session comes from the request's scope.
#[derive(Debug, Clone, Copy)]
pub struct HostMcp;

fn scope_of(
    context: &RequestContext<RoleServer>,
) -> Result<(Arc<Scope>, Arc<HostBroker>), McpError> {
    let parts = context
        .extensions
        .get::<axum::http::request::Parts>()
        .ok_or_else(|| McpError::internal_error("the request's scope is missing", None))?;
    let scope = parts.extensions.get::<Arc<Scope>>().cloned();
    let broker = parts.extensions.get::<Arc<HostBroker>>().cloned();
    scope
        .zip(broker)
        .ok_or_else(|| McpError::internal_error("the request's scope is missing", None))
}

/// The MCP tool a host tool is.
fn tool(tool: &sandbox_universal::HostTool) -> Tool {
    let schema: Map<String, Value> = match &tool.input_schema {
        Value::Object(schema) => schema.clone(),
        _ => Map::from_iter([("type".to_string(), Value::from("object"))]),
    };
    Tool::new(tool.name.clone(), tool.description.clone(), schema)
}

impl ServerHandler for HostMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_server_info(
            Implementation::new("sandbox-daemon-host-tools", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let (scope, _) = scope_of(&context)?;
        let mut tools: Vec<Tool> = scope.tools.iter().map(tool).collect();
        if scope.ask_user {
            tools.push(ask_user::tool());
        }
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let (scope, broker) = scope_of(&context)?;
        let input = Value::Object(request.arguments.unwrap_or_default());
        let known = scope.tools.iter().any(|t| t.name == request.name)
            || (scope.ask_user && request.name == sandbox_universal::ASK_USER_TOOL);
        if !known {
            return Err(McpError::invalid_params(
                format!("no host tool `{}` in this session", request.name),
                None,
            ));
        }
        Ok(call::run(&broker, &scope, &request.name, input)
            .await
            .into())
    }
}
