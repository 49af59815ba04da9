//! `Idempotency-Key` on `POST /sessions/{sessionId}` and `POST
//! /sessions/{sessionId}/messages`: a retried request (a timeout, a dropped connection)
//! gets the first answer again instead of a 409, and never creates or sends twice.
//!
//! **Invariant:** a key names one request — its method, path and body (their SHA-256 is
//! the key's fingerprint). The first request takes the key in the store before it runs;
//! its answer (unless a 5xx or 429, which a retry may mend: the key is then freed) is kept
//! with the key for [`KEEP_KEYS`] and replayed, with `Idempotent-Replayed: true`, to every
//! later request with the key. A request with the key while the first runs waits for its
//! answer (up to [`WAIT_FOR_FIRST`], then 409 `idempotency-key-in-use`); a different
//! request with the key is refused (422 `idempotency-key-reused`). A first request that
//! never finished (its daemon died) gives the key up after [`STALE_AFTER`].

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

use crate::error::ApiError;
use crate::extract::BodyLimit;
use crate::store::{Store, now_ms};

/// The request header.
pub const KEY_HEADER: &str = "idempotency-key";
/// The answer header of a replayed answer.
pub const REPLAYED_HEADER: &str = "idempotent-replayed";
/// How long a key and its answer are kept.
pub const KEEP_KEYS: Duration = Duration::from_secs(24 * 3600);
/// How long a request waits for the first request with its key to answer.
pub const WAIT_FOR_FIRST: Duration = Duration::from_secs(30);
/// A first request that has not answered after this long is taken to have died with its
/// daemon; the key is then taken over.
pub const STALE_AFTER: Duration = Duration::from_secs(600);
/// The most characters a key may have.
pub const MAX_KEY_CHARS: usize = 255;
/// What a key is: printable ASCII, inner spaces allowed (as the OpenAPI document states it).
pub const KEY_PATTERN: &str = r"^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$";

/// The operations that take the header, by method and route.
fn scope(method: &Method, route: &str) -> Option<&'static str> {
    match (method, route) {
        (&Method::POST, "/sessions/{sessionId}") => Some("createSession"),
        (&Method::POST, "/sessions/{sessionId}/messages") => Some("sendMessage"),
        _ => None,
    }
}

/// The middleware (a route layer of the API router, so the route is known).
pub async fn layer(State(store): State<Arc<Store>>, request: Request, next: Next) -> Response {
    let Some(key) = request.headers().get(KEY_HEADER).cloned() else {
        return next.run(request).await;
    };
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_string())
        .unwrap_or_default();
    let Some(scope) = scope(request.method(), &route) else {
        return next.run(request).await;
    };
    match keyed(store, scope, key, request, next).await {
        Ok(response) | Err(response) => response,
    }
}

async fn keyed(
    store: Arc<Store>,
    scope: &'static str,
    key: HeaderValue,
    request: Request,
    next: Next,
) -> Result<Response, Response> {
    let key = check_key(&key).map_err(IntoResponse::into_response)?;
    let limits = BodyLimit::of(&request);
    let (parts, body) = request.into_parts();
    let bytes = tokio::time::timeout(limits.1, axum::body::to_bytes(body, limits.0))
        .await
        .map_err(|_| {
            ApiError::RequestTimeout {
                part: "body",
                after: limits.1,
            }
            .into_response()
        })?
        .map_err(|error| body_error(&error, limits.0).into_response())?;
    let fingerprint = fingerprint(&parts.method, parts.uri.path(), &bytes);
    let deadline = tokio::time::Instant::now() + WAIT_FOR_FIRST;
    loop {
        let taken = {
            let (key, fingerprint) = (key.clone(), fingerprint.clone());
            let now = now_ms();
            let stale = now - STALE_AFTER.as_millis() as i64;
            store
                .side(move |s| s.take_key(scope, &key, &fingerprint, now, stale))
                .await
                .map_err(|e| store_error(e).into_response())?
        };
        match taken {
            None => break,
            Some(row) if row.fingerprint != fingerprint => {
                return Err(ApiError::IdempotencyKeyReused(format!(
                    "`Idempotency-Key` `{key}` was used for a different request (another session, path or body); use a new key for a new request"
                ))
                .into_response());
            }
            Some(row) => match (row.status, row.body) {
                (Some(status), Some(body)) => return Ok(replay(status, body)),
                _ if tokio::time::Instant::now() >= deadline => {
                    let mut response = ApiError::IdempotencyKeyInUse(format!(
                        "the first request with `Idempotency-Key` `{key}` is still running; retry later"
                    ))
                    .into_response();
                    response
                        .headers_mut()
                        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
                    return Err(response);
                }
                _ => tokio::time::sleep(Duration::from_millis(100)).await,
            },
        }
    }
    // This request holds the key: run it, keep its answer. It runs in a task of its own,
    // so a client that goes away does not cut it short between acting and keeping.
    let request = Request::from_parts(parts, Body::from(bytes));
    let run = tokio::spawn(run_and_keep(store, scope, key, request, next));
    run.await
        .map_err(|e| ApiError::Internal(format!("the request's task failed: {e}")).into_response())
}

/// Runs the request holding `key` and keeps its answer (or frees the key).
async fn run_and_keep(
    store: Arc<Store>,
    scope: &'static str,
    key: String,
    request: Request,
    next: Next,
) -> Response {
    let mut guard = Release {
        store: Some(store.clone()),
        scope,
        key: key.clone(),
    };
    let response = next.run(request).await;
    let status = response.status();
    if status.is_server_error() || status == StatusCode::TOO_MANY_REQUESTS {
        return response;
    }
    let (parts, body) = response.into_parts();
    let body = match axum::body::to_bytes(body, usize::MAX).await {
        Ok(body) => body,
        Err(error) => {
            return ApiError::Internal(format!("reading the answer: {error}")).into_response();
        }
    };
    let text = String::from_utf8_lossy(&body).into_owned();
    let kept = {
        let key = key.clone();
        let code = status.as_u16();
        store
            .side(move |s| s.finish_key(scope, &key, code, &text))
            .await
    };
    match kept {
        Ok(()) => guard.store = None,
        Err(error) => {
            tracing::warn!(%error, "an idempotency key's answer could not be kept; the key is freed");
        }
    }
    Response::from_parts(parts, Body::from(body))
}

/// Frees a key whose request did not keep an answer (a 5xx, or the request dropped).
struct Release {
    store: Option<Arc<Store>>,
    scope: &'static str,
    key: String,
}

impl Drop for Release {
    fn drop(&mut self) {
        if let Some(store) = self.store.take() {
            let (scope, key) = (self.scope, std::mem::take(&mut self.key));
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(async move {
                    if let Err(error) = store.side(move |s| s.release_key(scope, &key)).await {
                        tracing::warn!(%error, "an idempotency key could not be freed; it is taken over after a while");
                    }
                });
            }
        }
    }
}

/// A key: 1 to [`MAX_KEY_CHARS`] printable ASCII characters ([`KEY_PATTERN`]).
fn check_key(value: &HeaderValue) -> Result<String, ApiError> {
    let text = value.to_str().unwrap_or_default();
    let ok = (1..=MAX_KEY_CHARS).contains(&text.len())
        && text.bytes().all(|b| b.is_ascii_graphic() || b == b' ')
        && text.trim() == text;
    if ok {
        Ok(text.to_string())
    } else {
        Err(ApiError::InvalidParameter(format!(
            "`Idempotency-Key` must be 1 to {MAX_KEY_CHARS} printable ASCII characters, spaces only inside"
        )))
    }
}

/// SHA-256 of the method, path and body.
fn fingerprint(method: &Method, path: &str, body: &[u8]) -> String {
    let mut digest = Sha256::new();
    digest.update(method.as_str().as_bytes());
    digest.update(b" ");
    digest.update(path.as_bytes());
    digest.update(b"\n");
    digest.update(body);
    digest
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The kept answer, marked as replayed.
fn replay(status: u16, body: String) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
    let content_type = if status.is_success() {
        "application/json"
    } else {
        "application/problem+json"
    };
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(REPLAYED_HEADER, HeaderValue::from_static("true"));
    response
}

fn body_error(error: &axum::Error, limit: usize) -> ApiError {
    let mut cause: &(dyn std::error::Error + 'static) = error;
    loop {
        if cause.is::<http_body_util::LengthLimitError>() {
            return ApiError::PayloadTooLarge { limit };
        }
        match cause.source() {
            Some(next) => cause = next,
            None => break,
        }
    }
    ApiError::InvalidFraming(format!("the body cannot be read: {cause}"))
}

fn store_error(error: crate::store::StoreError) -> ApiError {
    crate::session::SessionError::from(error).into()
}

/// Deletes keys first used more than [`KEEP_KEYS`] ago.
pub async fn prune(store: &Store) {
    let before = now_ms() - KEEP_KEYS.as_millis() as i64;
    match store.side(move |s| s.prune_keys(before)).await {
        Ok(0) => {}
        Ok(pruned) => tracing::debug!(pruned, "deleted expired idempotency keys"),
        Err(error) => {
            tracing::warn!(%error, "deleting expired idempotency keys failed; will retry")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_printable_and_bounded() {
        let good = HeaderValue::from_static("order-7f3a 1");
        assert_eq!(check_key(&good).unwrap(), "order-7f3a 1");
        let pattern = regex::Regex::new(KEY_PATTERN).unwrap();
        for key in ["a", "order-7f3a 1", "~!"] {
            assert!(pattern.is_match(key), "{key}");
        }
        for key in ["", " a", "a ", "caf\u{e9}"] {
            assert!(!pattern.is_match(key), "{key}");
        }
        for bad in ["", "   ", " lead", "trail ", &"k".repeat(256)] {
            assert!(
                check_key(&HeaderValue::from_str(bad).unwrap()).is_err(),
                "{bad:?}"
            );
        }
        assert!(check_key(&HeaderValue::from_bytes(b"caf\xc3\xa9").unwrap()).is_err());
    }

    #[test]
    fn a_fingerprint_covers_method_path_and_body() {
        let one = fingerprint(&Method::POST, "/sessions/a/messages", b"{}");
        assert_eq!(one.len(), 64);
        assert_ne!(
            one,
            fingerprint(&Method::POST, "/sessions/b/messages", b"{}")
        );
        assert_ne!(
            one,
            fingerprint(&Method::POST, "/sessions/a/messages", b"{ }")
        );
        assert_ne!(
            one,
            fingerprint(&Method::PUT, "/sessions/a/messages", b"{}")
        );
    }

    #[test]
    fn only_the_two_operations_take_keys() {
        assert_eq!(
            scope(&Method::POST, "/sessions/{sessionId}"),
            Some("createSession")
        );
        assert_eq!(
            scope(&Method::POST, "/sessions/{sessionId}/messages"),
            Some("sendMessage")
        );
        assert_eq!(scope(&Method::DELETE, "/sessions/{sessionId}"), None);
        assert_eq!(scope(&Method::POST, "/webhooks"), None);
    }
}
