//! `GET /sessions/{id}/ui-stream`: a turn as the Vercel AI SDK's UI message stream (v1),
//! the assistant message `useChat` builds (see `crate::ai_sdk`).

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use sandbox_universal::ProblemDetails;
use serde::Deserialize;
use utoipa::IntoParams;

use super::AppState;
use super::sse::Follower;
use crate::ai_sdk::{PROTOCOL_HEADER, TurnConverter, stream};
use crate::error::ApiError;
use crate::extract::{ApiPath, ApiQuery};
use crate::session::{SessionId, View};

/// Query of `GET /sessions/{id}/ui-stream`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct UiStreamQuery {
    /// The turn (`turn_1`, ...; a `sendMessage` answer's `turnId`). Absent: the running
    /// turn, or 204 when none runs.
    #[param(min_length = 1)]
    pub turn_id: Option<String>,
}

/// A turn of the session as the Vercel AI SDK's UI message stream protocol (v1), the
/// assistant message `useChat` (`ai` 7) builds: replayed from the turn's `turnStarted`,
/// then followed live until its `turnEnded`. The stream is a pure function of the log, so
/// reading it again (a reconnect) gives the same chunks, byte for byte, under the same
/// `messageId`. Without `turnId`, the running turn, or 204 when none runs (the AI SDK's
/// "nothing to resume").
#[utoipa::path(
    get,
    path = "/sessions/{sessionId}/ui-stream",
    operation_id = "uiMessageStream",
    tag = "events",
    security(("bearer" = [])),
    params(("sessionId" = String, Path, description = "Session id"), UiStreamQuery),
    responses(
        (status = 200, description = "The AI SDK UI message stream (header `x-vercel-ai-ui-message-stream: v1`): Server-Sent Events, each a `data: <chunk as JSON>` line and an empty line, ending with `data: [DONE]` once the turn ended (a stream cut short, as when the daemon stops, has no `[DONE]`: read it again). Comment lines (`:` ...) are keep-alives, or say why events wait (the store cannot write). Chunks, with the `ai` package's `uiMessageChunkSchema` fields: `start` (`messageId` = `msg_<turnId>`, `messageMetadata` `{turnId}`), `start-step`; the assistant's messages as `text-start` / `text-delta` / `text-end` and its reasoning as `reasoning-start` / `reasoning-delta` / `reasoning-end` (`id` = the item's id); its tool calls, commands (tool `commandExecution`: input `{command, cwd}`, output `{exitCode, output}`) and file changes (tool `fileChange`: `{changes: [{path, changeKind, diff}]}`) as dynamic, `providerExecuted` tool parts (`toolCallId` = the item's id): `tool-input-start`, `tool-input-available`, then `tool-output-available` or `tool-output-error`; a permission request as `tool-approval-request` (`approvalId` = the permission id, answered with `replyPermission`; `approvalDescriptor` = the `PermissionRequest`; on the part of the item it gates, or on a part of its own with the request's id) and its resolution as `tool-approval-response` (and `tool-output-denied` when rejected); a question request as a `data-question` part (`id` = the question id, `data` = the `QuestionRequest` with `status: pending`), replaced under the same id by its resolution (`status` `answered`, `rejected` or `cancelled`, with `answers`); a client host tool call as a tool part the client answers (`toolCallId` = the call id, for `toolCallResult`); an agent error as `error` (`errorText`); the turn's end as `finish-step`, then `finish` (`finishReason`: `stop`, `length` (maxTokens), `tool-calls` (toolStop), `error`, `other`; `messageMetadata` `{turnId, stopReason, usage, changes}`), or for a cancelled turn `message-metadata` and `abort`.", content_type = "text/event-stream", body = String),
        (status = 204, description = "No `turnId` was given and no turn is running: nothing to resume"),
        (status = 400, description = "An empty `turnId`, or an unknown query parameter", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "Unknown session (`session-not-found`), or the session has no turn `turnId` (`turn-not-found`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "Being restored, or the store is unavailable", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn ui_stream(
    State(state): State<AppState>,
    ApiPath(session_id): ApiPath<SessionId>,
    ApiQuery(query): ApiQuery<UiStreamQuery>,
) -> Result<Response, ApiError> {
    if query.turn_id.as_deref() == Some("") {
        return Err(ApiError::InvalidParameter(
            "turnId must not be empty".into(),
        ));
    }
    let info = state.sessions.info(&session_id).await?;
    let Some(turn_id) = query.turn_id.or(info.current_turn_id) else {
        return Ok(StatusCode::NO_CONTENT.into_response());
    };
    let sid = match state.sessions.view(&session_id).await? {
        View::Live(handle) => handle.sid,
        View::Stored(row) => row.sid,
    };
    let Some(start) =
        stream::turn_start(&state.sessions, &session_id, &turn_id, info.event_count).await?
    else {
        return Err(ApiError::TurnNotFound(format!(
            "session `{}` has no turn `{turn_id}`",
            &*session_id
        )));
    };
    let follower = Follower::new(
        state.sessions.clone(),
        session_id.to_string(),
        sid,
        start - 1,
        false,
        state.sse_keep_alive,
    );
    let body = stream::body(follower, TurnConverter::new(&turn_id));
    let mut response = Body::from_stream(body).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(
        PROTOCOL_HEADER.0,
        HeaderValue::from_static(PROTOCOL_HEADER.1),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    Ok(response)
}
