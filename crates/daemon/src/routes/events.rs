//! Reading a session's event log: paged polling and SSE.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use sandbox_universal::constraints::SEQUENCE;
use sandbox_universal::{EventsResponse, ProblemDetails};
use serde::Deserialize;
use utoipa::IntoParams;

use super::AppState;
use super::sse::Follower;
use crate::error::ApiError;
use crate::extract::{ApiPath, ApiQuery};
use crate::session::SessionId;
use crate::session::View;
use crate::store::StoredEvent;

/// Default page size of `GET /sessions/{id}/events`.
pub const DEFAULT_LIMIT: u64 = 100;
/// Largest page size.
pub const MAX_LIMIT: u64 = 1000;

/// Query of `GET /sessions/{id}/events`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct EventsQuery {
    /// Return events with `sequence > offset` (default 0).
    pub offset: Option<u64>,
    /// At most this many events (1–1000, default 100).
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<u64>,
    /// Include each event's native JSON as `raw`.
    pub include_raw: Option<bool>,
}

/// Query of `GET /sessions/{id}/events/sse`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct SseQuery {
    /// Start after this sequence (default 0); the `Last-Event-ID` header wins when present.
    pub offset: Option<u64>,
    /// Include each event's native JSON as `raw`.
    pub include_raw: Option<bool>,
}

/// A page of events with `sequence > offset`, oldest first.
#[utoipa::path(
    get,
    path = "/sessions/{sessionId}/events",
    operation_id = "getEvents",
    tag = "events",
    security(("bearer" = [])),
    params(("sessionId" = String, Path, description = "Session id"), EventsQuery),
    responses(
        (status = 200, body = EventsResponse),
        (status = 400, description = "Bad offset or limit", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "Being restored, or the store is unavailable", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn get_events(
    State(state): State<AppState>,
    ApiPath(session_id): ApiPath<SessionId>,
    ApiQuery(query): ApiQuery<EventsQuery>,
) -> Result<Response, ApiError> {
    let limit = query.limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(ApiError::InvalidParameter(format!(
            "limit must be between 1 and {MAX_LIMIT}, got {limit}"
        )));
    }
    let offset = sequence(query.offset.unwrap_or(0), "offset")?;
    let include_raw = query.include_raw.unwrap_or(false);
    let page = state
        .sessions
        .read_events(&session_id, offset, limit as usize, include_raw)
        .await?;
    let has_more = page.events.last().map_or(offset, |e| e.sequence) < page.durable_sequence;
    Ok(events_body(&page.events, has_more, include_raw))
}

/// Renders `{"events":[...],"hasMore":..}` from the events' stored JSON without
/// re-serialising them.
fn events_body(events: &[Arc<StoredEvent>], has_more: bool, include_raw: bool) -> Response {
    let mut body =
        String::with_capacity(events.iter().map(|e| e.json.len() + 1).sum::<usize>() + 32);
    body.push_str("{\"events\":[");
    for (i, event) in events.iter().enumerate() {
        if i > 0 {
            body.push(',');
        }
        body.push_str(&event.to_json(include_raw));
    }
    body.push_str("],\"hasMore\":");
    body.push_str(if has_more { "true" } else { "false" });
    body.push('}');
    let mut response = body.into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// Streams the log as Server-Sent Events: replays events after the offset (or
/// `Last-Event-ID`), then follows live. Each frame has `id: <sequence>`,
/// `event: <type>` and `data: <event JSON>`; keep-alive comments are sent while idle; the
/// stream closes after `sessionEnded`. Works for any stored session, loaded or not (and,
/// with a shared PostgreSQL store, for sessions another daemon runs).
#[utoipa::path(
    get,
    path = "/sessions/{sessionId}/events/sse",
    operation_id = "streamEvents",
    tag = "events",
    security(("bearer" = [])),
    params(
        ("sessionId" = String, Path, description = "Session id"),
        ("Last-Event-ID" = Option<String>, Header, description = "Resume after this sequence"),
        SseQuery
    ),
    responses(
        (status = 200, description = "A stream of Server-Sent Events, one frame per event: `id: <sequence>`, `event: <type>` and `data: <the event as JSON, a UniversalEvent>` lines, then an empty line. Comment lines (`:` ...) are keep-alives, or say why events wait (the store cannot write). The stream ends after `sessionEnded`, or when the daemon stops (reconnect with `Last-Event-ID`).", content_type = "text/event-stream", body = String),
        (status = 400, description = "Bad offset or Last-Event-ID", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "Being restored, or the store is unavailable", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn stream_events(
    State(state): State<AppState>,
    ApiPath(session_id): ApiPath<SessionId>,
    ApiQuery(query): ApiQuery<SseQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let last_event_id = match headers.get("last-event-id") {
        None => None,
        Some(value) => Some(
            value
                .to_str()
                .ok()
                .filter(|v| SEQUENCE.matches(v))
                .and_then(|v| v.parse::<u64>().ok())
                .ok_or_else(|| {
                    ApiError::InvalidParameter(
                        "Last-Event-ID must be an event sequence number (1 to 18 digits)".into(),
                    )
                })?,
        ),
    };
    let offset = sequence(query.offset.unwrap_or(0), "offset")?;
    let sid = match state.sessions.view(&session_id).await? {
        View::Live(handle) => handle.sid,
        View::Stored(row) => row.sid,
    };
    let follower = Follower::new(
        state.sessions.clone(),
        session_id.to_string(),
        sid,
        last_event_id.unwrap_or(offset),
        query.include_raw.unwrap_or(false),
        state.sse_keep_alive,
    );
    let mut response = Body::from_stream(follower.into_stream()).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    Ok(response)
}

/// A sequence number as the store keeps it (a signed 64-bit integer, as the spec's
/// `int64` says): anything larger is a 400, not a silently empty page.
fn sequence(value: u64, name: &str) -> Result<u64, ApiError> {
    if value > i64::MAX as u64 {
        return Err(ApiError::InvalidParameter(format!(
            "{name} must be at most {}, got {value}",
            i64::MAX
        )));
    }
    Ok(value)
}
