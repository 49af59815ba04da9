//! Bearer-token authentication for every route but `/health`, the inspector's pages
//! (`GET`/`HEAD` of `/ui` and under `/ui/`: the app asks the user for the token and sends
//! it on its API calls) and a terminal's WebSocket opened with a ticket, which its route
//! checks.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

use crate::error::ApiError;

/// The token clients must present, if any.
#[derive(Clone)]
pub struct AuthConfig {
    token: Option<Arc<str>>,
}

impl AuthConfig {
    /// Require `Authorization: Bearer <token>`.
    pub fn token(token: impl Into<Arc<str>>) -> Self {
        Self {
            token: Some(token.into()),
        }
    }

    /// No authentication (`--no-token`).
    pub fn disabled() -> Self {
        Self { token: None }
    }

    /// Whether requests need a token.
    pub fn is_enabled(&self) -> bool {
        self.token.is_some()
    }

    /// Whether the presented header value carries the right token. The comparison takes
    /// the same time wherever the first difference is.
    pub fn accepts(&self, authorization: Option<&str>) -> bool {
        let Some(expected) = &self.token else {
            return true;
        };
        let Some(presented) = authorization.and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        }) else {
            return false;
        };
        bool::from(presented.trim().as_bytes().ct_eq(expected.as_bytes()))
    }
}

impl std::fmt::Debug for AuthConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthConfig")
            .field("enabled", &self.token.is_some())
            .finish()
    }
}

/// Paths that never need a token.
const PUBLIC_PATHS: &[&str] = &["/health"];

/// Whether the request reads the inspector's pages (`GET` or `HEAD` of `/ui` or under
/// `/ui/`): a static web app that holds no secret.
fn reads_ui(request: &Request) -> bool {
    let path = request.uri().path();
    matches!(*request.method(), Method::GET | Method::HEAD)
        && (path == "/ui" || path.starts_with("/ui/"))
}

/// Whether the request opens a terminal's WebSocket with a ticket instead of the token
/// (`GET /sessions/{id}/processes/{processId}/terminal?ticket=`): the route redeems the
/// ticket itself, before anything else.
fn carries_terminal_ticket(request: &Request) -> bool {
    let segments: Vec<&str> = request.uri().path().split('/').collect();
    let terminal = matches!(
        segments.as_slice(),
        ["", "sessions", _, "processes", _, "terminal"]
    );
    terminal
        && request.method() == Method::GET
        && request
            .uri()
            .query()
            .is_some_and(|q| q.split('&').any(|pair| pair.starts_with("ticket=")))
}

/// Middleware rejecting requests without the right bearer token (401 problem).
pub async fn require_token(
    State(auth): State<AuthConfig>,
    request: Request,
    next: Next,
) -> Response {
    if PUBLIC_PATHS.contains(&request.uri().path())
        || reads_ui(&request)
        || carries_terminal_ticket(&request)
    {
        return next.run(request).await;
    }
    let authorization = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    if auth.accepts(authorization) {
        next.run(request).await
    } else {
        ApiError::Unauthorized.into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_checks() {
        let auth = AuthConfig::token("s3cret");
        assert!(auth.accepts(Some("Bearer s3cret")));
        assert!(!auth.accepts(Some("Bearer s3cre")));
        assert!(!auth.accepts(Some("Bearer s3cret-and-more")));
        assert!(!auth.accepts(Some("Basic s3cret")));
        assert!(!auth.accepts(None));
        assert!(AuthConfig::disabled().accepts(None));
    }

    #[test]
    fn only_reading_the_ui_is_public() {
        let request = |method: Method, path: &str| {
            Request::builder()
                .method(method)
                .uri(path)
                .body(axum::body::Body::empty())
                .unwrap()
        };
        assert!(reads_ui(&request(Method::GET, "/ui")));
        assert!(reads_ui(&request(Method::GET, "/ui/")));
        assert!(reads_ui(&request(Method::HEAD, "/ui/sessions/abc")));
        assert!(reads_ui(&request(Method::GET, "/ui/assets/app.js")));
        assert!(!reads_ui(&request(Method::POST, "/ui/")));
        assert!(!reads_ui(&request(Method::DELETE, "/ui/x")));
        assert!(!reads_ui(&request(Method::GET, "/uix")));
        assert!(!reads_ui(&request(Method::GET, "/sessions")));
    }
}
