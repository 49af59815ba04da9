//! Answering the calls of client host tools (`toolCallRequested`).

use axum::extract::State;
use axum::http::StatusCode;
use sandbox_universal::{ProblemDetails, ToolCallRejectRequest, ToolCallResultRequest};

use super::AppState;
use crate::error::ApiError;
use crate::extract::{ApiJson, ApiPath};
use crate::session::SessionId;
use crate::session::host_calls::DaemonAnswer;

/// Gives a client host tool call its result: the agent's MCP call returns it to the model
/// once it is durable.
#[utoipa::path(
    post,
    path = "/sessions/{sessionId}/tool-calls/{callId}/result",
    operation_id = "toolCallResult",
    tag = "hitl",
    security(("bearer" = [])),
    params(
        ("sessionId" = String, Path, description = "Session id"),
        ("callId" = String, Path, description = "Tool call id (`toolCallRequested.callId`)")
    ),
    request_body = ToolCallResultRequest,
    responses(
        (status = 204, description = "Answered"),
        (status = 404, description = "Unknown session or call", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 409, description = "Already resolved (`tool-call-resolved`: answered, rejected, or cancelled with its turn), or another daemon sharing the store owns the session; or the session has ended (`session-ended`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 422, description = "The output is unusable (`invalid-body`: an image of unknown type, over 5 MiB, not the type it claims, or outside the workspace)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "The session is still being restored, or its store is unavailable", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 507, description = "The store has no space left", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn tool_call_result(
    State(state): State<AppState>,
    ApiPath((session_id, call_id)): ApiPath<(SessionId, String)>,
    ApiJson(request): ApiJson<ToolCallResultRequest>,
) -> Result<StatusCode, ApiError> {
    let session = state.sessions.open(&session_id).await?;
    session
        .resolve_tool_call(&call_id, DaemonAnswer::ToolResult(request))
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Rejects a client host tool call: the model reads that the user rejected it (with the
/// reason, when given).
#[utoipa::path(
    post,
    path = "/sessions/{sessionId}/tool-calls/{callId}/reject",
    operation_id = "toolCallReject",
    tag = "hitl",
    security(("bearer" = [])),
    params(
        ("sessionId" = String, Path, description = "Session id"),
        ("callId" = String, Path, description = "Tool call id (`toolCallRequested.callId`)")
    ),
    request_body = ToolCallRejectRequest,
    responses(
        (status = 204, description = "Rejected"),
        (status = 404, description = "Unknown session or call", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 409, description = "Already resolved (`tool-call-resolved`), or another daemon sharing the store owns the session; or the session has ended (`session-ended`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "The session is still being restored, or its store is unavailable", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 507, description = "The store has no space left", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn tool_call_reject(
    State(state): State<AppState>,
    ApiPath((session_id, call_id)): ApiPath<(SessionId, String)>,
    ApiJson(request): ApiJson<ToolCallRejectRequest>,
) -> Result<StatusCode, ApiError> {
    let session = state.sessions.open(&session_id).await?;
    session
        .resolve_tool_call(&call_id, DaemonAnswer::ToolRejected(request))
        .await?;
    Ok(StatusCode::NO_CONTENT)
}
