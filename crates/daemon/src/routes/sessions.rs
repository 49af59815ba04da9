//! `/sessions`: create, inspect, message, cancel and end sessions.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use sandbox_universal::{
    CancelResponse, CreateSessionRequest, CreateSessionResponse, ProblemDetails,
    SendMessageRequest, SendMessageResponse, SessionInfo, SessionListResponse, SessionStatus,
};
use serde::Deserialize;
use utoipa::IntoParams;

use super::AppState;
use crate::error::ApiError;
use crate::extract::{ApiEmpty, ApiJson, ApiPath, ApiQuery};
use crate::session::SessionId;

/// Query of `GET /sessions`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// The `nextCursor` of the previous page.
    pub cursor: Option<String>,
    /// Page size (1–1000, default 100).
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<usize>,
    /// Only sessions with this status (unreadable sessions are then not listed).
    pub status: Option<SessionStatus>,
}

/// The sessions of the store, oldest first, one page at a time (`nextCursor`). Sessions
/// whose stored record this build cannot read are listed under `unreadable`.
#[utoipa::path(
    get,
    path = "/sessions",
    operation_id = "listSessions",
    tag = "sessions",
    security(("bearer" = [])),
    params(ListQuery),
    responses(
        (status = 200, body = SessionListResponse),
        (status = 400, description = "Bad cursor, limit or status", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "The store is unavailable", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn list_sessions(
    State(state): State<AppState>,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> Result<Json<SessionListResponse>, ApiError> {
    Ok(Json(
        state
            .sessions
            .list(query.cursor.as_deref(), query.limit, query.status)
            .await?,
    ))
}

/// Creates a session with a client-chosen id and starts its agent: `201` with
/// `healthy: true` when ready. An agent that cannot start is a problem whose `agentError`
/// says why (the id stays free).
#[utoipa::path(
    post,
    path = "/sessions/{sessionId}",
    operation_id = "createSession",
    tag = "sessions",
    security(("bearer" = [])),
    params(
        ("sessionId" = String, Path, description = "Client-chosen session id"),
        ("Idempotency-Key" = Option<String>, Header, description = "Makes a retry safe: a request with the key of an earlier one (within 24 hours) gets that request's answer again, marked `Idempotent-Replayed: true`, instead of acting twice. 1 to 255 printable ASCII characters; one key, one request (method, path and body).")
    ),
    request_body = CreateSessionRequest,
    responses(
        (status = 201, description = "Session ready", body = CreateSessionResponse, headers(("Idempotent-Replayed" = String, description = "`true` when this is the kept answer of an earlier request with the same `Idempotency-Key`"))),
        (status = 400, description = "A bad session id, `Idempotency-Key` or malformed JSON; or a choice only the daemon can judge (`invalid-session-config`): an agent mode, model or variant the agent does not offer, a `cwd` that does not exist, is not a directory or is outside the workspace root", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "Unknown agent", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 409, description = "The id is taken (by any stored session, ended or unreadable ones too), or the agent is not installed or not supported by this build (`agentError`); or the first request with this `Idempotency-Key` is still running after 30 s (`idempotency-key-in-use`, with `Retry-After`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 422, description = "The body breaks its schema (`invalid-body`: a type, or a constraint its fields state), asks for what the agent cannot honour (`invalid-body`: `validateToken` for an agent whose capabilities say `validateToken: false`; `policy-unsupported`: a policy field its `policy` in `GET /agents` does not list, the detail naming the field), names what does not exist (`invalid-body`: an MCP stdio `command` not found, a `tools` entry naming a server not in `mcpServers`, a protected `env` name), or the provider rejected the credential (`agentError`); or the `Idempotency-Key` was used for a different request (`idempotency-key-reused`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 502, description = "The agent failed to start (`agentError`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "The store is unavailable, or the id is still being restored", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 507, description = "The store has no space left", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn create_session(
    State(state): State<AppState>,
    ApiPath(session_id): ApiPath<SessionId>,
    ApiJson(request): ApiJson<CreateSessionRequest>,
) -> Result<(StatusCode, Json<CreateSessionResponse>), ApiError> {
    let response = state.sessions.create(&session_id, request).await?;
    Ok((StatusCode::CREATED, Json(response)))
}

/// One session: agent, status, pending permissions and questions, event count.
#[utoipa::path(
    get,
    path = "/sessions/{sessionId}",
    operation_id = "getSession",
    tag = "sessions",
    security(("bearer" = [])),
    params(("sessionId" = String, Path, description = "Session id")),
    responses(
        (status = 200, body = SessionInfo),
        (status = 404, body = ProblemDetails, content_type = "application/problem+json"),
        (status = 500, description = "The stored record cannot be read by this build", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "Being restored, or the store is unavailable", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn get_session(
    State(state): State<AppState>,
    ApiPath(session_id): ApiPath<SessionId>,
) -> Result<Json<SessionInfo>, ApiError> {
    Ok(Json(state.sessions.info(&session_id).await?))
}

/// Ends a session: stops the agent, cancels what is pending and logs `sessionEnded`. The
/// session and its events stay readable (`DELETE` removes them). Ending an ended session
/// answers it as it is.
#[utoipa::path(
    post,
    path = "/sessions/{sessionId}/end",
    operation_id = "endSession",
    tag = "sessions",
    security(("bearer" = [])),
    params(("sessionId" = String, Path, description = "Session id")),
    responses(
        (status = 200, description = "The ended session", body = SessionInfo),
        (status = 404, description = "No such session", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 409, description = "Another daemon sharing the store owns the session", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "Being restored, or the store is unavailable", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 507, description = "The store has no space left", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn end_session(
    State(state): State<AppState>,
    ApiPath(session_id): ApiPath<SessionId>,
    _body: ApiEmpty,
) -> Result<Json<SessionInfo>, ApiError> {
    Ok(Json(state.sessions.end(&session_id).await?))
}

/// Removes a session and all its events (ending it first if it runs); its id becomes free.
#[utoipa::path(
    delete,
    path = "/sessions/{sessionId}",
    operation_id = "deleteSession",
    tag = "sessions",
    security(("bearer" = [])),
    params(("sessionId" = String, Path, description = "Session id")),
    responses(
        (status = 204, description = "Removed"),
        (status = 404, description = "No such session", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 409, description = "Another daemon sharing the store owns the session", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "Being restored, or the store is unavailable", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 507, description = "The store has no space left", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn delete_session(
    State(state): State<AppState>,
    ApiPath(session_id): ApiPath<SessionId>,
) -> Result<StatusCode, ApiError> {
    state.sessions.purge(&session_id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Sends a user message, starting a turn (202). While a turn runs, another message is
/// refused with 409 `turn-in-progress`; messages are never interleaved.
#[utoipa::path(
    post,
    path = "/sessions/{sessionId}/messages",
    operation_id = "sendMessage",
    tag = "sessions",
    security(("bearer" = [])),
    params(
        ("sessionId" = String, Path, description = "Session id"),
        ("Idempotency-Key" = Option<String>, Header, description = "Makes a retry safe: a request with the key of an earlier one (within 24 hours) gets that request's answer again, marked `Idempotent-Replayed: true`, instead of acting twice. 1 to 255 printable ASCII characters; one key, one request (method, path and body)."),
        ("traceparent" = Option<String>, Header, description = "W3C trace context: the caller's span, e.g. `00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01`. With trace export on (`--otlp-endpoint`), the turn's `invoke_agent` span is its child, in its trace. A malformed value is ignored (a new trace starts), never refused."),
        ("tracestate" = Option<String>, Header, description = "W3C trace context: vendor entries carried along with `traceparent` (dropped alone when malformed).")
    ),
    request_body = SendMessageRequest,
    responses(
        (status = 202, description = "Turn started", body = SendMessageResponse, headers(("Idempotent-Replayed" = String, description = "`true` when this is the kept answer of an earlier request with the same `Idempotency-Key`"))),
        (status = 400, description = "A bad session id or `Idempotency-Key`", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, body = ProblemDetails, content_type = "application/problem+json"),
        (status = 422, description = "The body breaks its schema (`invalid-body`), an image is unusable (`invalid-body`: `data` that is not base64, bytes that are not its `mediaType`, over 5 MiB, a `path` missing or outside the working directory), or the agent takes no images of its type (`policy-unsupported`, naming the part); or the `Idempotency-Key` was used for a different request (`idempotency-key-reused`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 409, description = "A turn is running, or another daemon sharing the store owns the session; or the session has ended (`session-ended`); or the first request with this `Idempotency-Key` is still running after 30 s (`idempotency-key-in-use`, with `Retry-After`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 502, description = "The agent could not take the message", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "The store is unavailable, or the session is being restored", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 507, description = "The store has no space left", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn send_message(
    State(state): State<AppState>,
    ApiPath(session_id): ApiPath<SessionId>,
    headers: axum::http::HeaderMap,
    ApiJson(request): ApiJson<SendMessageRequest>,
) -> Result<(StatusCode, Json<SendMessageResponse>), ApiError> {
    let session = state.sessions.open(&session_id).await?;
    let parent = crate::telemetry::TraceParent::from_headers(&headers);
    let turn_id = session.send_message_traced(request, parent).await?;
    Ok((StatusCode::ACCEPTED, Json(SendMessageResponse { turn_id })))
}

/// Interrupts the running turn (202); it ends with `turnEnded` stopReason `cancelled`.
#[utoipa::path(
    post,
    path = "/sessions/{sessionId}/cancel",
    operation_id = "cancelTurn",
    tag = "sessions",
    security(("bearer" = [])),
    params(("sessionId" = String, Path, description = "Session id")),
    responses(
        (status = 202, description = "Cancelling", body = CancelResponse),
        (status = 404, body = ProblemDetails, content_type = "application/problem+json"),
        (status = 409, description = "No turn is running, or another daemon sharing the store owns the session; or the session has ended (`session-ended`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "Being restored, or the store is unavailable", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 507, description = "The store has no space left", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn cancel_turn(
    State(state): State<AppState>,
    ApiPath(session_id): ApiPath<SessionId>,
    _body: ApiEmpty,
) -> Result<(StatusCode, Json<CancelResponse>), ApiError> {
    let session = state.sessions.open(&session_id).await?;
    let turn_id = session.cancel().await?;
    Ok((StatusCode::ACCEPTED, Json(CancelResponse { turn_id })))
}
