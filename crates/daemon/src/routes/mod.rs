//! HTTP routes: thin translations from HTTP to the session manager and drivers.

pub mod agents;
pub mod credentials;
pub mod events;
pub mod health;
pub mod hitl;
pub mod openapi;
pub mod portable;
pub mod sessions;
pub mod sse;
pub mod tool_calls;

use std::sync::Arc;
use std::time::Duration;

use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::session::SessionManager;

/// What every handler can reach.
#[derive(Clone)]
pub struct AppState {
    /// All sessions and the agent registry.
    pub sessions: Arc<SessionManager>,
    /// Interval of SSE keep-alive comments.
    pub sse_keep_alive: Duration,
    /// Whether requests need a bearer token (the served OpenAPI document says so).
    pub token_required: bool,
}

/// Every documented route, with its OpenAPI description.
pub fn api_router() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(openapi::base_document())
        .routes(routes!(health::health))
        .routes(routes!(openapi::openapi_json))
        .routes(routes!(agents::list_agents))
        .routes(routes!(agents::agent_models))
        .routes(routes!(agents::agent_modes))
        .routes(routes!(agents::install_agent))
        .routes(routes!(credentials::list_credentials))
        .routes(routes!(
            credentials::get_credential,
            credentials::put_credential,
            credentials::delete_credential
        ))
        .routes(routes!(sessions::list_sessions))
        .routes(routes!(
            sessions::create_session,
            sessions::get_session,
            sessions::delete_session
        ))
        .routes(routes!(sessions::end_session))
        .routes(routes!(sessions::send_message))
        .routes(routes!(sessions::cancel_turn))
        .routes(routes!(events::get_events))
        .routes(routes!(events::stream_events))
        .routes(routes!(hitl::reply_permission))
        .routes(routes!(hitl::reply_question))
        .routes(routes!(hitl::reject_question))
        .routes(routes!(tool_calls::tool_call_result))
        .routes(routes!(tool_calls::tool_call_reject))
        .routes(routes!(portable::export_session))
        .routes(routes!(portable::import_session))
        .routes(routes!(portable::handover_session))
}
