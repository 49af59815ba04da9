//! Portable sessions: export a session as one bundle, import it on another daemon, hand
//! it over to another agent.

use axum::Json;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use sandbox_universal::{HandoverRequest, ProblemDetails, SessionBundle, SessionInfo};
use serde::Deserialize;
use utoipa::IntoParams;

use super::AppState;
use crate::error::ApiError;
use crate::extract::{ApiJson, ApiPath, ApiQuery, is_json};
use crate::session::SessionId;
use crate::session::portable::Spool;

/// The largest bundle `POST /sessions/{id}/import` takes (1 GiB); it is spooled to the
/// data dir, never held in memory.
pub const MAX_BUNDLE_BYTES: usize = 1 << 30;

/// Query of `GET /sessions/{id}/export`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ExportQuery {
    /// Include each event's native `raw` payload (default false).
    pub include_raw: Option<bool>,
}

/// Query of `POST /sessions/{id}/import`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ImportQuery {
    /// The working directory of the imported session (absolute, existing; default: the
    /// bundle's).
    pub cwd: Option<String>,
}

/// The session as one JSON document (streamed): its record (without credentials or
/// secret values), the agent's native state needed to resume it elsewhere (each file with
/// its SHA-256), and the universal event log with its count and SHA-256. Refused while a
/// turn runs.
#[utoipa::path(
    get,
    path = "/sessions/{sessionId}/export",
    operation_id = "exportSession",
    tag = "sessions",
    security(("bearer" = [])),
    params(("sessionId" = String, Path, description = "Session id"), ExportQuery),
    responses(
        (status = 200, description = "The bundle", body = SessionBundle),
        (status = 400, description = "A bad session id or query", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "Unknown session", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 409, description = "A turn is running (`turn-in-progress`), another daemon sharing the store owns the session, the session's record is unusable here, or its agent is not supported by this build (`agentError`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 502, description = "The agent's native state could not be read (`agentError`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "The session is still being restored, or the store is unavailable", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn export_session(
    State(state): State<AppState>,
    ApiPath(session_id): ApiPath<SessionId>,
    ApiQuery(query): ApiQuery<ExportQuery>,
) -> Result<Response, ApiError> {
    let export = state
        .sessions
        .export(&session_id, query.include_raw.unwrap_or(false))
        .await?;
    Ok((
        [(header::CONTENT_TYPE, "application/json")],
        Body::from_stream(export.into_stream()),
    )
        .into_response())
}

/// Stores a bundle written by `GET /sessions/{id}/export` (on this or another daemon) as
/// session `sessionId`: the event log keeps its sequences and continues contiguously, the
/// agent's native state is filed where the agent looks for it here (for `cwd`, when it
/// moved), and the next message resumes the agent with its memory. The agent is installed
/// first when it is missing. Credentials do not travel: the session uses the daemon's, and
/// the policy's secret values (MCP servers' `env` and `headers`, the session `env`) arrive
/// empty.
#[utoipa::path(
    post,
    path = "/sessions/{sessionId}/import",
    operation_id = "importSession",
    tag = "sessions",
    security(("bearer" = [])),
    params(("sessionId" = String, Path, description = "Id of the imported session"), ImportQuery),
    request_body(content = SessionBundle, description = "A bundle as exported, at most 1 GiB"),
    responses(
        (status = 201, description = "Imported", body = SessionInfo),
        (status = 400, description = "A bad session id or query; or a `cwd` that is not absolute, does not exist, is not a directory or is outside the workspace root (`invalid-session-config`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 409, description = "The id is taken (`session-exists`), or the agent is not supported by this build", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 413, description = "The bundle is over 1 GiB", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 415, description = "The body is not JSON", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 422, description = "The bundle cannot be imported (`invalid-bundle`): not a bundle, a newer `format`, events that do not match `eventsSha256` or `eventCount` or are not numbered from 1, a native file that does not match its `sha256`", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 502, description = "The agent's native state could not be filed (`agentError`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "The store is unavailable", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 507, description = "The store has no space left", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn import_session(
    State(state): State<AppState>,
    ApiPath(session_id): ApiPath<SessionId>,
    ApiQuery(query): ApiQuery<ImportQuery>,
    request: Request,
) -> Result<(StatusCode, Json<SessionInfo>), ApiError> {
    let json = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(is_json);
    if !json {
        return Err(ApiError::UnsupportedMediaType);
    }
    let idle = crate::extract::BodyLimit::of(&request).1;
    let spool = Spool::new(&state.sessions.settings().data_dir)
        .map_err(|e| ApiError::Internal(format!("spooling the bundle: {e}")))?;
    spool_body(request.into_body(), &spool, idle).await?;
    let info = state
        .sessions
        .import(&session_id, &spool.path, query.cwd.as_deref())
        .await?;
    Ok((StatusCode::CREATED, Json(info)))
}

/// Writes `body` to the spool file: at most [`MAX_BUNDLE_BYTES`], each chunk within
/// `idle` of the last.
async fn spool_body(body: Body, spool: &Spool, idle: std::time::Duration) -> Result<(), ApiError> {
    let failed = |e| ApiError::Internal(format!("spooling the bundle: {e}"));
    let mut file = tokio::fs::File::create(&spool.path).await.map_err(failed)?;
    super::body::copy_to_file(body, &mut file, MAX_BUNDLE_BYTES as u64, idle, failed).await
}

/// Continues the session on another agent (or the same one afresh): the earlier turns
/// become the new agent's own history (tool calls and results where it has a form for
/// them, text where not), the log records `sessionHandedOver`, and the next message runs
/// on the new agent. Refused while a turn runs. The session's permission mode and policy
/// stay and are checked against the new agent as at creation.
#[utoipa::path(
    post,
    path = "/sessions/{sessionId}/handover",
    operation_id = "handoverSession",
    tag = "sessions",
    security(("bearer" = [])),
    params(("sessionId" = String, Path, description = "Session id")),
    request_body = HandoverRequest,
    responses(
        (status = 200, description = "Handed over; the session as it stands now", body = SessionInfo),
        (status = 400, description = "A bad session id or malformed JSON; or a mode or model the new agent does not offer (`invalid-session-config`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "Unknown session", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 409, description = "A turn is running (`turn-in-progress`), the session has ended, another daemon sharing the store owns it, or the new agent is not installed and cannot be, or cannot take a conversation (`agentError`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 422, description = "The body breaks its schema or names no known agent (`invalid-body`), or the new agent cannot honour the session's policy (`policy-unsupported`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 502, description = "The new agent's history could not be written (`agentError`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "The store is unavailable, or the session is being restored", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 507, description = "The store has no space left", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn handover_session(
    State(state): State<AppState>,
    ApiPath(session_id): ApiPath<SessionId>,
    ApiJson(request): ApiJson<HandoverRequest>,
) -> Result<Json<SessionInfo>, ApiError> {
    Ok(Json(state.sessions.handover(&session_id, request).await?))
}
