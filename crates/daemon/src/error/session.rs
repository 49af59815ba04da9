//! The HTTP edge of the session layer: each [`SessionError`] as the problem it answers.

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
            SessionError::InvalidAnswers(detail) => Self::InvalidAnswers(detail),
            SessionError::Install(failure) => failure.into(),
            SessionError::Agent(error) => error.into(),
            SessionError::AgentCommand(error) => Self::Agent(error),
            SessionError::NotFound(id) => Self::SessionNotFound(id),
            SessionError::AlreadyExists(id) => Self::SessionExists(id),
            SessionError::Ended(id) => Self::SessionEnded(id),
            SessionError::TurnRunning { session, turn } => Self::TurnInProgress { session, turn },
            SessionError::NotRunning(id) => Self::NoActiveTurn(id),
            SessionError::PermissionNotFound { session, id } => {
                Self::PermissionNotFound { session, id }
            }
            SessionError::PermissionAnswered(id) => Self::PermissionResolved(id),
            SessionError::QuestionNotFound { session, id } => {
                Self::QuestionNotFound { session, id }
            }
            SessionError::QuestionAnswered(id) => Self::QuestionResolved(id),
            SessionError::TakenOver(id) => Self::SessionOwnedElsewhere(id),
            SessionError::Unreadable { session, detail } => {
                Self::SessionUnreadable { session, detail }
            }
            SessionError::Unusable { session, detail } => Self::SessionUnusable { session, detail },
            SessionError::Restoring(id) => Self::SessionRestoring(id),
            SessionError::StoreFull(detail) => Self::StoreFull(detail),
            SessionError::StoreUnavailable(detail) => Self::StoreUnavailable(detail),
            SessionError::Internal(detail) => Self::Internal(detail),
        }
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
