//! Fills in the RFC 7807 `instance` member (the request path) of problem responses.

use axum::body::{Body, to_bytes};
use axum::extract::Request;
use axum::http::header;
use axum::middleware::Next;
use axum::response::Response;

use crate::error::PROBLEM_JSON;

/// Largest problem body this middleware rewrites (problems are small).
const MAX_PROBLEM_BYTES: usize = 64 * 1024;

/// Middleware: for `application/problem+json` responses, sets `instance` to the request
/// path; and when the request carried a body, says `Connection: close`: a request refused
/// before its body was read (a bad path, a file write to `../x`) leaves the rest of the
/// body on the connection, which hyper then closes, and a client must not reuse it.
pub async fn add_instance(request: Request, next: Next) -> Response {
    let path = request.uri().path().to_string();
    let has_body = crate::extract::has_body(request.headers());
    let response = next.run(request).await;
    let is_problem = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes() == PROBLEM_JSON.as_bytes());
    if !is_problem {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    if has_body {
        parts.headers.insert(
            header::CONNECTION,
            header::HeaderValue::from_static("close"),
        );
    }
    let Ok(bytes) = to_bytes(body, MAX_PROBLEM_BYTES).await else {
        return Response::from_parts(parts, Body::empty());
    };
    let body = match serde_json::from_slice::<serde_json::Value>(&bytes) {
        Ok(mut problem) if problem.is_object() => {
            problem["instance"] = path.into();
            let rendered = serde_json::to_vec(&problem).unwrap_or_else(|_| bytes.to_vec());
            parts.headers.remove(header::CONTENT_LENGTH);
            Body::from(rendered)
        }
        _ => Body::from(bytes),
    };
    Response::from_parts(parts, body)
}
