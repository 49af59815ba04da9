//! `GET /sessions/{id}/turns/{turnId}/changes`: what a turn changed in the workspace
//! (`changes/`).

use axum::Json;
use axum::extract::State;
use sandbox_universal::{ProblemDetails, TurnChanges};
use serde::Deserialize;

use super::AppState;
use crate::error::ApiError;
use crate::extract::ApiPath;
use crate::session::{SessionError, SessionId};

/// Path of a turn's routes.
#[derive(Debug, Deserialize)]
pub struct TurnPath {
    /// The session.
    #[serde(rename = "sessionId")]
    pub session_id: SessionId,
    /// The turn (`turn_1`, `turn_2`, ...).
    #[serde(rename = "turnId")]
    pub turn_id: String,
}

/// The files a turn added, modified and deleted in the session's workspace, whichever
/// agent made the changes, with unified diffs of text: the workspace as the turn started
/// against the workspace as it ended (`.git`, `node_modules` and `.gitignore`d paths left
/// out). Its `counts` are the ones its `turnEnded` carries.
#[utoipa::path(
    get,
    path = "/sessions/{sessionId}/turns/{turnId}/changes",
    operation_id = "turnChanges",
    tag = "sessions",
    security(("bearer" = [])),
    params(
        ("sessionId" = String, Path, description = "Session id"),
        ("turnId" = String, Path, description = "Turn id (`turn_1`, ...)")
    ),
    responses(
        (status = 200, description = "What the turn changed", body = TurnChanges),
        (status = 400, description = "A bad session id", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 404, description = "Unknown session, or the turn's changes are not known (`changes-not-found`): no such turn, it ended before this daemon looked at the workspace (a restart mid-turn, an agent that failed to start), changes are not tracked (`--no-turn-changes`), or the workspace holds more files than tracked", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 409, description = "The turn is still running (`turn-in-progress`); its changes are known once it ends", body = ProblemDetails, content_type = "application/problem+json"),
        (status = 503, description = "The store is unavailable", body = ProblemDetails, content_type = "application/problem+json")
    )
)]
pub async fn turn_changes(
    State(state): State<AppState>,
    ApiPath(path): ApiPath<TurnPath>,
) -> Result<Json<TurnChanges>, ApiError> {
    let info = state.sessions.info(&path.session_id).await?;
    if info.current_turn_id.as_deref() == Some(path.turn_id.as_str()) {
        return Err(SessionError::TurnRunning {
            session: path.session_id.to_string(),
            turn: path.turn_id,
        }
        .into());
    }
    let settings = state.sessions.settings();
    let session_dir = settings.data_dir.join("sessions").join(&*path.session_id);
    let turn = path.turn_id.clone();
    let found =
        tokio::task::spawn_blocking(move || crate::changes::turn_changes(&session_dir, &turn))
            .await
            .map_err(|e| ApiError::Internal(e.to_string()))?;
    found.map(Json).ok_or_else(|| {
        let why = if settings.turn_changes.is_none() {
            "this daemon does not track changes (--no-turn-changes)"
        } else {
            "no such turn, or it ended before this daemon looked at the workspace (a restart mid-turn, a turn that failed to start, a workspace over the tracked number of files)"
        };
        ApiError::ChangesNotFound(format!(
            "what turn `{}` changed is not known: {why}",
            path.turn_id
        ))
    })
}
