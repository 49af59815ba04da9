//! Extractors whose rejections are problem details instead of axum's plain-text errors.

use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Json, Path, Query, Request};
use axum::http::StatusCode;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use crate::error::ApiError;

/// A JSON body; malformed JSON, wrong shapes, missing content type and oversized bodies
/// become problem details.
#[derive(Debug, Clone)]
pub struct ApiJson<T>(pub T);

impl<S, T> FromRequest<S> for ApiJson<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let limit = req
            .extensions()
            .get::<BodyLimit>()
            .map_or(0, |limit| limit.0);
        match Json::<T>::from_request(req, state).await {
            Ok(Json(value)) => Ok(Self(value)),
            Err(rejection) => Err(json_rejection(rejection, limit)),
        }
    }
}

/// The configured body limit, stored in request extensions so rejections can name it.
#[derive(Debug, Clone, Copy)]
pub struct BodyLimit(pub usize);

fn json_rejection(rejection: JsonRejection, limit: usize) -> ApiError {
    match rejection {
        JsonRejection::JsonSyntaxError(e) => ApiError::MalformedJson(inner_message(&e.body_text())),
        JsonRejection::JsonDataError(e) => ApiError::InvalidBody(inner_message(&e.body_text())),
        JsonRejection::MissingJsonContentType(_) => ApiError::UnsupportedMediaType,
        other if other.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            ApiError::PayloadTooLarge { limit }
        }
        other => ApiError::InvalidBody(other.body_text()),
    }
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
