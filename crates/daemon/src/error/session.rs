//! The HTTP edge of the session layer: each [`SessionError`] as the problem it answers.
//!
//! A session error that is a problem of the session layer's own is carried whole in
//! [`ApiError::Session`]: its message is the problem's `detail`, and [`kind`] (the one
//! place) fixes its status, `type` and title. The others answer as the problems they
//! share with the rest of the API.

use axum::http::StatusCode;

use super::ApiError;
use crate::session::SessionError;

impl From<SessionError> for ApiError {
    /// The HTTP edge of the session layer: each session error is the problem it has always
    /// been (status, `type`, title and detail).
    fn from(error: SessionError) -> Self {
        match error {
            SessionError::InvalidId(_)
            | SessionError::InvalidListLimit(_)
            | SessionError::InvalidCursor(_) => Self::InvalidParameter(error.to_string()),
            SessionError::UnknownAgent(name) => Self::UnknownAgent(name.to_string()),
            SessionError::ContradictoryRequest(_) | SessionError::TokenCheckUnsupported(_) => {
                Self::InvalidBody(error.to_string())
            }
            SessionError::InvalidConfig { detail, .. } => Self::InvalidSessionConfig(detail),
            SessionError::Unhonoured(detail) => Self::PolicyUnsupported(detail),
            SessionError::InvalidContent(detail) => Self::InvalidBody(detail),
            SessionError::InvalidAnswers(detail) => Self::InvalidAnswers(detail),
            SessionError::Install(failure) => failure.into(),
            SessionError::Agent(error) => error.into(),
            SessionError::AgentCommand(error) => Self::Agent(error),
            SessionError::Internal(detail) => Self::Internal(detail),
            SessionError::NotFound(_)
            | SessionError::AlreadyExists(_)
            | SessionError::Ended(_)
            | SessionError::TurnRunning { .. }
            | SessionError::NotRunning(_)
            | SessionError::PermissionNotFound { .. }
            | SessionError::PermissionAnswered(_)
            | SessionError::QuestionNotFound { .. }
            | SessionError::QuestionAnswered(_)
            | SessionError::ToolCallNotFound { .. }
            | SessionError::ToolCallAnswered(_)
            | SessionError::TakenOver(_)
            | SessionError::Unreadable { .. }
            | SessionError::Unusable { .. }
            | SessionError::Restoring(_)
            | SessionError::InvalidBundle(_)
            | SessionError::HandedOver(_)
            | SessionError::StoreFull(_)
            | SessionError::StoreUnavailable(_) => Self::Session(error),
        }
    }
}

/// What a session problem answers with besides its words (its `detail`).
pub(super) struct Kind {
    /// The HTTP status.
    pub(super) status: StatusCode,
    /// The end of its `type` URI.
    pub(super) slug: &'static str,
    /// Its RFC 7807 `title`.
    pub(super) title: &'static str,
}

/// The status, `type` slug and title of a session error carried in [`ApiError::Session`].
pub(super) fn kind(error: &SessionError) -> Kind {
    use StatusCode as S;
    let (status, slug, title) = match error {
        SessionError::NotFound(_) => (S::NOT_FOUND, "session-not-found", "Session not found"),
        SessionError::AlreadyExists(_) => (S::CONFLICT, "session-exists", "Session already exists"),
        // An ended session still exists (its events stay readable): a state conflict.
        SessionError::Ended(_) => (S::CONFLICT, "session-ended", "Session has ended"),
        SessionError::TurnRunning { .. } => {
            (S::CONFLICT, "turn-in-progress", "A turn is in progress")
        }
        SessionError::NotRunning(_) => (S::CONFLICT, "no-active-turn", "No turn is running"),
        SessionError::PermissionNotFound { .. } => (
            S::NOT_FOUND,
            "permission-not-found",
            "Permission request not found",
        ),
        SessionError::PermissionAnswered(_) => (
            S::CONFLICT,
            "permission-resolved",
            "Permission request already resolved",
        ),
        SessionError::QuestionNotFound { .. } => (
            S::NOT_FOUND,
            "question-not-found",
            "Question request not found",
        ),
        SessionError::QuestionAnswered(_) => (
            S::CONFLICT,
            "question-resolved",
            "Question request already resolved",
        ),
        SessionError::ToolCallNotFound { .. } => {
            (S::NOT_FOUND, "tool-call-not-found", "Tool call not found")
        }
        SessionError::ToolCallAnswered(_) => (
            S::CONFLICT,
            "tool-call-resolved",
            "Tool call already resolved",
        ),
        SessionError::TakenOver(_) => (
            S::CONFLICT,
            "session-owned-elsewhere",
            "Session owned by another daemon",
        ),
        SessionError::Unreadable { .. } => (
            S::INTERNAL_SERVER_ERROR,
            "session-unreadable",
            "Session record unreadable",
        ),
        SessionError::Unusable { .. } => (
            S::CONFLICT,
            "session-unusable",
            "Session cannot start its agent",
        ),
        SessionError::InvalidBundle(_) => (
            S::UNPROCESSABLE_ENTITY,
            "invalid-bundle",
            "Session bundle cannot be imported",
        ),
        SessionError::HandedOver(_) => (
            S::SERVICE_UNAVAILABLE,
            "session-handed-over",
            "Session just handed over; retry",
        ),
        SessionError::Restoring(_) => (
            S::SERVICE_UNAVAILABLE,
            "session-restoring",
            "Session being restored",
        ),
        SessionError::StoreFull(_) => (S::INSUFFICIENT_STORAGE, "store-full", "Session store full"),
        SessionError::StoreUnavailable(_) => (
            S::SERVICE_UNAVAILABLE,
            "store-unavailable",
            "Session store unavailable",
        ),
        // `From` answers these as shared problems and never carries them; one carried
        // anyway is a bug in the daemon.
        SessionError::InvalidId(_)
        | SessionError::InvalidListLimit(_)
        | SessionError::InvalidCursor(_)
        | SessionError::UnknownAgent(_)
        | SessionError::ContradictoryRequest(_)
        | SessionError::TokenCheckUnsupported(_)
        | SessionError::InvalidConfig { .. }
        | SessionError::Unhonoured(_)
        | SessionError::InvalidContent(_)
        | SessionError::InvalidAnswers(_)
        | SessionError::Install(_)
        | SessionError::Agent(_)
        | SessionError::AgentCommand(_)
        | SessionError::Internal(_) => {
            let bug = ApiError::Internal(String::new());
            (bug.status(), bug.slug(), bug.title())
        }
    };
    Kind {
        status,
        slug,
        title,
    }
}

#[cfg(test)]
mod tests {
    use sandbox_universal::AgentError;

    use super::*;
    use crate::error::PROBLEM_TYPE_PREFIX;
    use crate::installs::InstallFailure;
    use crate::session::ConfigField;

    #[test]
    fn session_errors_keep_their_problem_and_their_words() {
        let id = || "s".to_string();
        let gone = AgentError::RequestGone {
            message: "gone".into(),
        };
        let missing = AgentError::NotInstalled {
            message: "missing".into(),
        };
        let cases = [
            (
                SessionError::InvalidId("..".into()),
                400,
                "invalid-parameter",
            ),
            (SessionError::InvalidListLimit(0), 400, "invalid-parameter"),
            (
                SessionError::InvalidCursor("x".into()),
                400,
                "invalid-parameter",
            ),
            (
                SessionError::UnknownAgent(sandbox_universal::UnknownAgentName("x".into())),
                404,
                "unknown-agent",
            ),
            (
                SessionError::ContradictoryRequest("a conflicts with b".into()),
                422,
                "invalid-body",
            ),
            (
                SessionError::TokenCheckUnsupported(sandbox_universal::AgentId::Mock),
                422,
                "invalid-body",
            ),
            (
                SessionError::InvalidConfig {
                    field: ConfigField::Cwd,
                    detail: "cwd `x` must be an absolute path".into(),
                },
                400,
                "invalid-session-config",
            ),
            (
                SessionError::InvalidAnswers("no".into()),
                400,
                "invalid-answers",
            ),
            (
                SessionError::Install(InstallFailure::Unavailable("off".into())),
                409,
                "install-unavailable",
            ),
            (
                SessionError::Install(InstallFailure::BadVersion("bad".into())),
                400,
                "invalid-parameter",
            ),
            (
                SessionError::Install(InstallFailure::Failed(AgentError::protocol("x"))),
                502,
                "agent-error",
            ),
            (
                SessionError::Agent(missing.clone()),
                409,
                "agent-not-installed",
            ),
            (SessionError::Agent(gone.clone()), 409, "agent-request-gone"),
            (SessionError::AgentCommand(missing), 502, "agent-error"),
            (SessionError::AgentCommand(gone), 409, "agent-request-gone"),
            (SessionError::NotFound(id()), 404, "session-not-found"),
            (SessionError::AlreadyExists(id()), 409, "session-exists"),
            (SessionError::Ended(id()), 409, "session-ended"),
            (
                SessionError::TurnRunning {
                    session: id(),
                    turn: "turn_1".into(),
                },
                409,
                "turn-in-progress",
            ),
            (SessionError::NotRunning(id()), 409, "no-active-turn"),
            (
                SessionError::PermissionNotFound {
                    session: id(),
                    id: "perm_1".into(),
                },
                404,
                "permission-not-found",
            ),
            (
                SessionError::PermissionAnswered(id()),
                409,
                "permission-resolved",
            ),
            (
                SessionError::QuestionNotFound {
                    session: id(),
                    id: "q_1".into(),
                },
                404,
                "question-not-found",
            ),
            (
                SessionError::QuestionAnswered(id()),
                409,
                "question-resolved",
            ),
            (
                SessionError::ToolCallNotFound {
                    session: id(),
                    id: "call_1".into(),
                },
                404,
                "tool-call-not-found",
            ),
            (
                SessionError::ToolCallAnswered(id()),
                409,
                "tool-call-resolved",
            ),
            (
                SessionError::TakenOver(id()),
                409,
                "session-owned-elsewhere",
            ),
            (
                SessionError::Unreadable {
                    session: id(),
                    detail: "newer".into(),
                },
                500,
                "session-unreadable",
            ),
            (
                SessionError::Unusable {
                    session: id(),
                    detail: "moved".into(),
                },
                409,
                "session-unusable",
            ),
            (SessionError::Restoring(id()), 503, "session-restoring"),
            (SessionError::StoreFull("disk".into()), 507, "store-full"),
            (
                SessionError::StoreUnavailable("down".into()),
                503,
                "store-unavailable",
            ),
            (SessionError::Internal("oops".into()), 500, "internal"),
        ];
        for (error, status, slug) in cases {
            let words = error.to_string();
            let body = matches!(
                error,
                SessionError::ContradictoryRequest(_) | SessionError::TokenCheckUnsupported(_)
            );
            let problem = ApiError::from(error).problem();
            assert_eq!(problem.status, status, "{words}");
            assert_eq!(problem.type_uri, format!("{PROBLEM_TYPE_PREFIX}{slug}"));
            // The detail is the session error's message (a body's, as every invalid body's).
            let expected = if body {
                format!("the request body does not match the expected shape: {words}")
            } else {
                words
            };
            assert_eq!(problem.detail, expected);
        }
    }
}
