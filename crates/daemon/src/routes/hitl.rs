//! Human in the loop: answering permission requests and questions.

use axum::extract::State;
use axum::http::StatusCode;
use sandbox_agents::QuestionAnswer;
use sandbox_universal::{
    PermissionReplyRequest, ProblemDetails, QuestionRejectRequest, QuestionReplyRequest,
};

use super::AppState;
use crate::error::ApiError;
use crate::extract::{ApiEmpty, ApiJson, ApiPath};
use crate::session::SessionId;

/// Answers a permission request with `once`, `always` (remembered for the session) or
/// `reject`.
#[utoipa::path(
    post,
    path = "/sessions/{sessionId}/permissions/{permissionId}/reply",
    operation_id = "replyPermission",
    tag = "hitl",
    security(("bearer" = [])),
    params(
        ("sessionId" = String, Path, description = "Session id"),
        ("permissionId" = String, Path, description = "Permission request id")
    ),
    request_body = PermissionReplyRequest,
    responses(
        (status = 204, description = "Answered"),
        (status = 404, description = "Unknown session or request", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 409, description = "Already resolved, or the agent no longer has the request (`agent-request-gone`: it restarted or settled it), or another daemon sharing the store owns the session; or the session has ended (`session-ended`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 502, description = "The agent failed to take the answer", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "The session is still being restored, or its store is unavailable", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 507, description = "The store has no space left", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn reply_permission(
    State(state): State<AppState>,
    ApiPath((session_id, permission_id)): ApiPath<(SessionId, String)>,
    ApiJson(request): ApiJson<PermissionReplyRequest>,
) -> Result<StatusCode, ApiError> {
    let session = state.sessions.open(&session_id).await?;
    session
        .reply_permission(permission_id, request.reply)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Answers a question request: one array of selected option labels per question.
#[utoipa::path(
    post,
    path = "/sessions/{sessionId}/questions/{questionId}/reply",
    operation_id = "replyQuestion",
    tag = "hitl",
    security(("bearer" = [])),
    params(
        ("sessionId" = String, Path, description = "Session id"),
        ("questionId" = String, Path, description = "Question request id")
    ),
    request_body = QuestionReplyRequest,
    responses(
        (status = 204, description = "Answered"),
        (status = 400, description = "Answers do not fit the questions", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "Unknown session or request", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 409, description = "Already resolved, or the agent no longer has the request (`agent-request-gone`: it restarted or settled it), or another daemon sharing the store owns the session; or the session has ended (`session-ended`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 502, description = "The agent failed to take the answer", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "The session is still being restored, or its store is unavailable", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 507, description = "The store has no space left", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn reply_question(
    State(state): State<AppState>,
    ApiPath((session_id, question_id)): ApiPath<(SessionId, String)>,
    ApiJson(request): ApiJson<QuestionReplyRequest>,
) -> Result<StatusCode, ApiError> {
    let session = state.sessions.open(&session_id).await?;
    session
        .reply_question(question_id, QuestionAnswer::Answered(request.answers))
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Declines to answer a question request. The body is `{}` (or empty).
#[utoipa::path(
    post,
    path = "/sessions/{sessionId}/questions/{questionId}/reject",
    operation_id = "rejectQuestion",
    tag = "hitl",
    security(("bearer" = [])),
    params(
        ("sessionId" = String, Path, description = "Session id"),
        ("questionId" = String, Path, description = "Question request id")
    ),
    request_body(content = QuestionRejectRequest, description = "Empty object", content_type = "application/json"),
    responses(
        (status = 204, description = "Rejected"),
        (status = 404, description = "Unknown session or request", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 409, description = "Already resolved, or the agent no longer has the request (`agent-request-gone`: it restarted or settled it), or another daemon sharing the store owns the session; or the session has ended (`session-ended`)", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 502, description = "The agent failed to take the answer", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "The session is still being restored, or its store is unavailable", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 507, description = "The store has no space left", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn reject_question(
    State(state): State<AppState>,
    ApiPath((session_id, question_id)): ApiPath<(SessionId, String)>,
    _body: ApiEmpty,
) -> Result<StatusCode, ApiError> {
    let session = state.sessions.open(&session_id).await?;
    session
        .reply_question(question_id, QuestionAnswer::Rejected)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}
