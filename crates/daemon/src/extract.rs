//! Extractors whose rejections are problem details instead of axum's plain-text errors.

use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Json, Path, Query, Request};
use axum::http::StatusCode;
use axum::http::request::Parts;
use sandbox_universal::Constrained;
use serde::de::DeserializeOwned;

use crate::error::ApiError;

/// A JSON body; malformed JSON, wrong shapes (its type, or the constraints the schema
/// states: [`Constrained`]), missing content type and oversized bodies become problem
/// details.
#[derive(Debug, Clone)]
pub struct ApiJson<T>(pub T);

impl<S, T> FromRequest<S> for ApiJson<T>
where
    T: DeserializeOwned + Constrained,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let limits = BodyLimit::of(&req);
        match limits.in_time(Json::<T>::from_request(req, state)).await? {
            Ok(Json(value)) => constrained(value).map(Self),
            Err(rejection) => Err(json_rejection(rejection, limits.0)),
        }
    }
}

/// `value`, unless it breaks a constraint its schema states (422 `invalid-body`).
fn constrained<T: Constrained>(value: T) -> Result<T, ApiError> {
    match value.violation() {
        None => Ok(value),
        Some(violation) => Err(ApiError::InvalidBody(violation)),
    }
}

/// Whether a request announces a body (`Transfer-Encoding`, or a `Content-Length` other
/// than 0).
pub fn has_body(headers: &axum::http::HeaderMap) -> bool {
    headers.contains_key(axum::http::header::TRANSFER_ENCODING)
        || headers
            .get(axum::http::header::CONTENT_LENGTH)
            .is_some_and(|v| v.as_bytes() != b"0")
}

/// The configured body size and time limits, stored in request extensions so extractors
/// can apply them and rejections can name them.
#[derive(Debug, Clone, Copy)]
pub struct BodyLimit(pub usize, pub std::time::Duration);

impl BodyLimit {
    /// The limits in force for `req`.
    pub fn of(req: &Request) -> Self {
        req.extensions()
            .get::<BodyLimit>()
            .copied()
            .unwrap_or(BodyLimit(0, std::time::Duration::from_secs(60)))
    }

    /// Runs a body read, failing with 408 when the body takes longer than the limit.
    async fn in_time<T>(self, read: impl Future<Output = T>) -> Result<T, ApiError> {
        tokio::time::timeout(self.1, read)
            .await
            .map_err(|_| ApiError::RequestTimeout {
                part: "body",
                after: self.1,
            })
    }
}

fn json_rejection(rejection: JsonRejection, limit: usize) -> ApiError {
    match rejection {
        JsonRejection::JsonSyntaxError(e) => ApiError::MalformedJson(inner_message(&e.body_text())),
        JsonRejection::JsonDataError(e) => ApiError::InvalidBody(inner_message(&e.body_text())),
        JsonRejection::MissingJsonContentType(_) => ApiError::UnsupportedMediaType,
        other if other.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            ApiError::PayloadTooLarge { limit }
        }
        JsonRejection::BytesRejection(rejection) => unreadable_body(&rejection),
        other => ApiError::InvalidBody(other.body_text()),
    }
}

/// A body that could not be read to its end (a malformed chunk, a body cut short): the
/// innermost cause is what hyper's decoder found.
fn unreadable_body(error: &(dyn std::error::Error + 'static)) -> ApiError {
    let mut cause = error;
    while let Some(next) = cause.source() {
        cause = next;
    }
    ApiError::InvalidFraming(format!("the body cannot be read: {cause}"))
}

/// The body of an operation that takes none: empty, or `{}` (with a JSON content type).
/// Anything else is refused, so a request the schema does not describe is never accepted.
#[derive(Debug, Clone, Copy, Default)]
pub struct ApiEmpty;

/// The shape of [`ApiEmpty`]: an empty JSON object.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct EmptyObject {}

impl Constrained for EmptyObject {}

impl<S> FromRequest<S> for ApiEmpty
where
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let ApiOptionalJson(EmptyObject {}) = ApiOptionalJson::from_request(req, state).await?;
        Ok(Self)
    }
}

/// An optional JSON body: empty means `T::default()`; anything else must be JSON of `T`
/// (with a JSON content type), with the same problem details as [`ApiJson`].
#[derive(Debug, Clone, Default)]
pub struct ApiOptionalJson<T>(pub T);

impl<S, T> FromRequest<S> for ApiOptionalJson<T>
where
    T: DeserializeOwned + Default + Constrained,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let limits = BodyLimit::of(&req);
        let json = req
            .headers()
            .get(axum::http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(is_json);
        let body = limits
            .in_time(axum::body::Bytes::from_request(req, state))
            .await?
            .map_err(|rejection| {
                if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                    ApiError::PayloadTooLarge { limit: limits.0 }
                } else {
                    unreadable_body(&rejection)
                }
            })?;
        if !body.iter().all(u8::is_ascii_whitespace) && !json {
            return Err(ApiError::UnsupportedMediaType);
        }
        parse_optional_json(&body).and_then(constrained).map(Self)
    }
}

/// Whether a `Content-Type` value is JSON (`application/json`, with parameters or a
/// `+json` suffix).
pub fn is_json(content_type: &str) -> bool {
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"))
}

/// Parses an optional JSON body given as bytes (empty means `T::default()`), with the same
/// problem details as [`ApiJson`].
pub fn parse_optional_json<T: DeserializeOwned + Default>(body: &[u8]) -> Result<T, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    serde_json::from_slice(body).map_err(|e| match e.classify() {
        serde_json::error::Category::Data => ApiError::InvalidBody(e.to_string()),
        _ => ApiError::MalformedJson(e.to_string()),
    })
}

/// axum's messages read "Failed to parse the request body as JSON: <serde error>"; keep
/// the serde part, which names the field and position.
fn inner_message(text: &str) -> String {
    text.split_once(": ")
        .map_or(text, |(_, rest)| rest)
        .to_string()
}

/// Query parameters; invalid values become `invalid-parameter` problems.
#[derive(Debug, Clone)]
pub struct ApiQuery<T>(pub T);

impl<S, T> FromRequestParts<S> for ApiQuery<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Query::<T>::from_request_parts(parts, state)
            .await
            .map(|Query(value)| Self(value))
            .map_err(|rejection: QueryRejection| {
                ApiError::InvalidParameter(format!(
                    "invalid query string: {}",
                    inner_message(&rejection.body_text())
                ))
            })
    }
}

/// Path parameters; invalid values become `invalid-parameter` problems.
#[derive(Debug, Clone)]
pub struct ApiPath<T>(pub T);

impl<S, T> FromRequestParts<S> for ApiPath<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Path::<T>::from_request_parts(parts, state)
            .await
            .map(|Path(value)| Self(value))
            .map_err(|rejection: PathRejection| {
                ApiError::InvalidParameter(format!(
                    "invalid path: {}",
                    inner_message(&rejection.body_text())
                ))
            })
    }
}
