//! Assembling the axum application: routes, auth, body limit, fallbacks.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderName, HeaderValue, Method, Uri, header};
use axum::middleware;
use tower_http::cors::{AllowOrigin, CorsLayer};

use crate::auth::{AuthConfig, require_token};
use crate::error::ApiError;
use crate::extract::BodyLimit;
use crate::guard::{BrowserGuard, guard, json_only};
use crate::problem_instance::add_instance;
use crate::routes::{AppState, api_router};
use crate::serve::ConnectionTimeouts;
use crate::session::SessionManager;

/// Default limit on request bodies.
pub const DEFAULT_BODY_LIMIT: usize = 1024 * 1024;
/// Default limit on the time a request body takes to arrive.
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(60);
/// Default interval of SSE keep-alive comments.
pub const DEFAULT_SSE_KEEP_ALIVE: Duration = Duration::from_secs(15);

/// Server settings that shape the HTTP layer.
#[derive(Debug, Clone)]
pub struct HttpSettings {
    /// Who may call the API.
    pub auth: AuthConfig,
    /// Largest accepted request body in bytes.
    pub body_limit: usize,
    /// Interval of SSE keep-alive comments.
    pub sse_keep_alive: Duration,
    /// Browser origins allowed to call the API (CORS); `*` allows any. Empty: no CORS headers.
    pub cors_origins: Vec<String>,
    /// Host names a `--no-token` daemon answers to besides the loopback names and its own
    /// address.
    pub allowed_hosts: Vec<String>,
    /// Connection timeouts (head, idle).
    pub timeouts: ConnectionTimeouts,
    /// A request body must arrive within this.
    pub body_timeout: Duration,
}

impl Default for HttpSettings {
    fn default() -> Self {
        Self {
            auth: AuthConfig::disabled(),
            body_limit: DEFAULT_BODY_LIMIT,
            sse_keep_alive: DEFAULT_SSE_KEEP_ALIVE,
            cors_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            timeouts: ConnectionTimeouts::default(),
            body_timeout: DEFAULT_BODY_TIMEOUT,
        }
    }
}

/// The complete application, served at `bound`.
pub fn build_app(
    sessions: Arc<SessionManager>,
    settings: &HttpSettings,
    bound: Option<SocketAddr>,
) -> Router {
    let host_tools = crate::host_tools::mcp::router(sessions.settings().host_tools.clone())
        .layer(DefaultBodyLimit::max(settings.body_limit));
    let store = sessions.store().clone();
    let state = AppState {
        sessions,
        sse_keep_alive: settings.sse_keep_alive,
        token_required: settings.auth.is_enabled(),
    };
    let browser_guard = BrowserGuard::new(
        !settings.auth.is_enabled(),
        bound,
        &settings.allowed_hosts,
        &settings.cors_origins,
    );
    let router = api_router()
        .route_layer(middleware::from_fn_with_state(
            browser_guard.clone(),
            json_only,
        ))
        .route_layer(middleware::from_fn_with_state(
            store,
            crate::idempotency::layer,
        ))
        // The inspector's pages: public (`auth.rs`), behind the browser guard's host check.
        .merge(crate::ui::router())
        .fallback(|uri: Uri| async move { ApiError::RouteNotFound(uri.path().to_string()) })
        .method_not_allowed_fallback(|| async { ApiError::MethodNotAllowed })
        .with_state(state)
        .layer(DefaultBodyLimit::max(settings.body_limit))
        .layer(axum::Extension(BodyLimit(
            settings.body_limit,
            settings.body_timeout,
        )))
        .layer(middleware::from_fn_with_state(
            settings.auth.clone(),
            require_token,
        ))
        .layer(middleware::from_fn_with_state(browser_guard, guard))
        // The agents' MCP endpoint: its own token, never the daemon's.
        .merge(host_tools)
        .layer(middleware::from_fn(add_instance));
    let router = match cors_layer(&settings.cors_origins) {
        Some(cors) => router.layer(cors),
        None => router,
    };
    router.layer(tower_http::trace::TraceLayer::new_for_http())
}

/// CORS for browser clients: the listed origins (or any, with `*`) may call every route
/// with the `Authorization` header; `Last-Event-ID` may be sent for SSE resumes.
fn cors_layer(origins: &[String]) -> Option<CorsLayer> {
    if origins.is_empty() {
        return None;
    }
    let allow_origin = if origins.iter().any(|o| o == "*") {
        AllowOrigin::any()
    } else {
        AllowOrigin::list(origins.iter().filter_map(|o| HeaderValue::from_str(o).ok()))
    };
    Some(
        CorsLayer::new()
            .allow_origin(allow_origin)
            .allow_methods([Method::GET, Method::POST, Method::PUT, Method::DELETE])
            .allow_headers([
                header::AUTHORIZATION,
                header::CONTENT_TYPE,
                header::RANGE,
                HeaderName::from_static("last-event-id"),
            ])
            // What the files API answers in headers: a range's place, a snapshot's summary.
            .expose_headers([
                header::CONTENT_RANGE,
                header::ACCEPT_RANGES,
                header::LAST_MODIFIED,
                header::CONTENT_DISPOSITION,
                HeaderName::from_static("x-archive-files"),
                HeaderName::from_static("x-archive-bytes"),
                HeaderName::from_static("x-archive-skipped"),
                HeaderName::from_static("x-archive-skipped-paths"),
            ]),
    )
}
