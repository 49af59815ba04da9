//! The one error type of the HTTP API, rendered as RFC 7807 problem details.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use sandbox_universal::{AgentError, ProblemDetails};

use crate::session::SessionError;
use crate::workspace::WorkspaceError;

mod session;
mod workspace;

/// Prefix of every problem `type` URI.
pub const PROBLEM_TYPE_PREFIX: &str = "urn:sandbox-daemon:problem:";

/// Everything a request can fail with. Each variant has a stable `type` URI and status.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The body is not valid JSON.
    #[error("the request body is not valid JSON: {0}")]
    MalformedJson(String),
    /// The body is JSON but does not match the expected shape.
    #[error("the request body does not match the expected shape: {0}")]
    InvalidBody(String),
    /// The body is not declared as JSON.
    #[error("expected `Content-Type: application/json`")]
    UnsupportedMediaType,
    /// An upload's body is not declared as a tar or gzip archive.
    #[error(
        "expected `Content-Type: application/x-tar` or `application/gzip` (or `application/octet-stream`)"
    )]
    NotAnArchiveType,
    /// The body exceeds the configured limit.
    #[error("the request body is larger than the limit of {limit} bytes")]
    PayloadTooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// The request URL is too long.
    #[error("the request URL is longer than the limit of {limit} bytes")]
    UriTooLong {
        /// The limit in bytes.
        limit: usize,
    },
    /// The request headers are too many or too large.
    #[error("the request headers are over the limit of {fields} header fields and {bytes} bytes")]
    HeadersTooLarge {
        /// The limit in header fields.
        fields: usize,
        /// The limit in bytes.
        bytes: usize,
    },
    /// The request head or body did not arrive in time.
    #[error("the request {part} did not arrive within {}", humantime::format_duration(*.after))]
    RequestTimeout {
        /// `head` or `body`.
        part: &'static str,
        /// The limit.
        after: std::time::Duration,
    },
    /// The request line or a header line cannot be parsed (refused before routing).
    #[error("the request cannot be parsed: {0}")]
    MalformedRequest(String),
    /// Where the request ends cannot be told: an invalid `Content-Length`, a
    /// `Transfer-Encoding` that conflicts with it or does not end in `chunked`, a malformed
    /// chunked body, or a body cut short.
    #[error("the request's message framing is invalid: {0}")]
    InvalidFraming(String),
    /// The request line names an HTTP version this daemon does not speak.
    #[error(
        "the request line names an HTTP version other than HTTP/1.0 and HTTP/1.1 (HTTP/2 starts with its connection preface)"
    )]
    HttpVersionNotSupported,
    /// `--no-token`: the Host header names a host this daemon does not serve.
    #[error(
        "host `{0}` is not one this daemon serves without a token (loopback names and its own address; add others with --allow-host)"
    )]
    ForbiddenHost(String),
    /// `--no-token`: the request comes from a web origin that is not allowed.
    #[error("origin `{0}` is not allowed (allow it with --cors-origin)")]
    ForbiddenOrigin(String),
    /// A query parameter, header or path segment is invalid.
    #[error("{0}")]
    InvalidParameter(String),
    /// The session configuration is not acceptable.
    #[error("{0}")]
    InvalidSessionConfig(String),
    /// The agent cannot honour part of the session policy (or a message part); the
    /// detail names the field.
    #[error("{0}")]
    PolicyUnsupported(String),
    /// Question answers do not fit the questions.
    #[error("{0}")]
    InvalidAnswers(String),
    /// No such agent.
    #[error("{0}")]
    UnknownAgent(String),
    /// The agent is known but this build cannot drive it.
    #[error("{0}")]
    AgentUnsupported(String),
    /// The agent's binary is not installed.
    #[error("{0}")]
    AgentNotInstalled(String),
    /// No login is stored for the agent.
    #[error("{0}")]
    CredentialNotFound(String),
    /// What a turn changed is not known.
    #[error("{0}")]
    ChangesNotFound(String),
    /// What was given is not a login of the agent.
    #[error("{0}")]
    InvalidCredential(String),
    /// Installing this agent is not available.
    #[error("{0}")]
    InstallUnavailable(String),
    /// No such webhook.
    #[error("{0}")]
    WebhookNotFound(String),
    /// The session has no such turn.
    #[error("{0}")]
    TurnNotFound(String),
    /// An `Idempotency-Key` was used before for a different request.
    #[error("{0}")]
    IdempotencyKeyReused(String),
    /// The first request with this `Idempotency-Key` is still running.
    #[error("{0}")]
    IdempotencyKeyInUse(String),
    /// A problem of the session layer's own (no such session, a turn running, a store
    /// outage, ...): its words are the session error's, its status, `type` and title are
    /// fixed in `error/session.rs`. Made only by `From<SessionError>`, which answers the
    /// session errors a problem shares with the rest of the API (an invalid parameter, an
    /// agent's failure, ...) as those problems instead.
    #[error(transparent)]
    Session(SessionError),
    /// The agent failed to carry out the request.
    #[error("the agent failed: {0}")]
    Agent(AgentError),
    /// A processes API operation failed (404, 409, 422).
    #[error(transparent)]
    Process(#[from] crate::processes::ProcessError),
    /// A files API operation failed; its status, `type` and title are fixed in
    /// `error/workspace.rs`.
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
    /// Missing or wrong bearer token.
    #[error("missing or invalid bearer token; send `Authorization: Bearer <token>`")]
    Unauthorized,
    /// A session's MCP endpoint without that session's live host tool token.
    #[error(
        "send this session's host tool token (`Authorization: Bearer <token>`, handed to its agent); the daemon's own token is not taken here, and a session's token ends with its agent or the session"
    )]
    HostToolUnauthorized,
    /// No route matches.
    #[error("no route for {0}")]
    RouteNotFound(String),
    /// The route exists but not with this method.
    #[error("method not allowed for this route")]
    MethodNotAllowed,
    /// A bug or an I/O failure in the daemon.
    #[error("internal error: {0}")]
    Internal(String),
}

impl ApiError {
    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::MalformedJson(_)
            | Self::MalformedRequest(_)
            | Self::InvalidFraming(_)
            | Self::InvalidParameter(_)
            | Self::InvalidSessionConfig(_)
            | Self::InvalidAnswers(_) => StatusCode::BAD_REQUEST,
            Self::InvalidBody(_)
            | Self::PolicyUnsupported(_)
            | Self::InvalidCredential(_)
            | Self::IdempotencyKeyReused(_) => StatusCode::UNPROCESSABLE_ENTITY,
            Self::IdempotencyKeyInUse(_) => StatusCode::CONFLICT,
            Self::UnsupportedMediaType | Self::NotAnArchiveType => {
                StatusCode::UNSUPPORTED_MEDIA_TYPE
            }
            Self::PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            Self::UriTooLong { .. } => StatusCode::URI_TOO_LONG,
            Self::HeadersTooLarge { .. } => StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            Self::RequestTimeout { .. } => StatusCode::REQUEST_TIMEOUT,
            Self::HttpVersionNotSupported => StatusCode::HTTP_VERSION_NOT_SUPPORTED,
            Self::ForbiddenHost(_) | Self::ForbiddenOrigin(_) => StatusCode::FORBIDDEN,
            Self::UnknownAgent(_)
            | Self::RouteNotFound(_)
            | Self::CredentialNotFound(_)
            | Self::ChangesNotFound(_)
            | Self::WebhookNotFound(_)
            | Self::TurnNotFound(_) => StatusCode::NOT_FOUND,
            // The daemon works; the agent is missing or out of this build's reach.
            Self::AgentUnsupported(_)
            | Self::AgentNotInstalled(_)
            | Self::InstallUnavailable(_) => StatusCode::CONFLICT,
            Self::Session(error) => session::kind(error).status,
            Self::Workspace(error) => workspace::kind(error).status,
            Self::Process(error) => workspace::process_kind(error).status,
            Self::Agent(AgentError::TokenError { .. }) => StatusCode::UNPROCESSABLE_ENTITY,
            Self::Agent(AgentError::RequestGone { .. }) => StatusCode::CONFLICT,
            Self::Agent(_) => StatusCode::BAD_GATEWAY,
            Self::Unauthorized | Self::HostToolUnauthorized => StatusCode::UNAUTHORIZED,
            Self::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The stable slug of the error kind (the end of its `type` URI).
    pub fn slug(&self) -> &'static str {
        match self {
            Self::MalformedJson(_) => "malformed-json",
            Self::InvalidBody(_) => "invalid-body",
            Self::UnsupportedMediaType | Self::NotAnArchiveType => "unsupported-media-type",
            Self::PayloadTooLarge { .. } => "payload-too-large",
            Self::UriTooLong { .. } => "uri-too-long",
            Self::HeadersTooLarge { .. } => "headers-too-large",
            Self::RequestTimeout { .. } => "request-timeout",
            Self::MalformedRequest(_) => "malformed-request",
            Self::InvalidFraming(_) => "invalid-framing",
            Self::HttpVersionNotSupported => "http-version-not-supported",
            Self::ForbiddenHost(_) => "forbidden-host",
            Self::ForbiddenOrigin(_) => "forbidden-origin",
            Self::InvalidParameter(_) => "invalid-parameter",
            Self::InvalidSessionConfig(_) => "invalid-session-config",
            Self::PolicyUnsupported(_) => "policy-unsupported",
            Self::InvalidAnswers(_) => "invalid-answers",
            Self::UnknownAgent(_) => "unknown-agent",
            Self::AgentUnsupported(_) => "agent-unsupported",
            Self::AgentNotInstalled(_) => "agent-not-installed",
            Self::CredentialNotFound(_) => "credential-not-found",
            Self::InvalidCredential(_) => "invalid-credential",
            Self::InstallUnavailable(_) => "install-unavailable",
            Self::WebhookNotFound(_) => "webhook-not-found",
            Self::TurnNotFound(_) => "turn-not-found",
            Self::IdempotencyKeyReused(_) => "idempotency-key-reused",
            Self::IdempotencyKeyInUse(_) => "idempotency-key-in-use",
            Self::Session(error) => session::kind(error).slug,
            Self::Workspace(error) => workspace::kind(error).slug,
            Self::Process(error) => workspace::process_kind(error).slug,
            Self::Agent(AgentError::TokenError { .. }) => "agent-credential-rejected",
            Self::Agent(AgentError::RequestGone { .. }) => "agent-request-gone",
            Self::Agent(_) => "agent-error",
            Self::Unauthorized => "unauthorized",
            Self::HostToolUnauthorized => "host-tool-unauthorized",
            Self::RouteNotFound(_) => "not-found",
            Self::ChangesNotFound(_) => "changes-not-found",
            Self::MethodNotAllowed => "method-not-allowed",
            Self::Internal(_) => "internal",
        }
    }

    /// A short, fixed summary of the error kind (RFC 7807 `title`).
    pub fn title(&self) -> &'static str {
        match self {
            Self::MalformedJson(_) => "Malformed JSON body",
            Self::InvalidBody(_) => "Invalid request body",
            Self::UnsupportedMediaType | Self::NotAnArchiveType => "Unsupported media type",
            Self::PayloadTooLarge { .. } => "Request body too large",
            Self::UriTooLong { .. } => "URL too long",
            Self::HeadersTooLarge { .. } => "Request headers too large",
            Self::RequestTimeout { .. } => "Request too slow",
            Self::MalformedRequest(_) => "Malformed request",
            Self::InvalidFraming(_) => "Invalid message framing",
            Self::HttpVersionNotSupported => "HTTP version not supported",
            Self::ForbiddenHost(_) => "Host not allowed",
            Self::ForbiddenOrigin(_) => "Origin not allowed",
            Self::InvalidParameter(_) => "Invalid parameter",
            Self::InvalidSessionConfig(_) => "Invalid session configuration",
            Self::PolicyUnsupported(_) => "The agent cannot honour this",
            Self::InvalidAnswers(_) => "Answers do not fit the questions",
            Self::UnknownAgent(_) => "Unknown agent",
            Self::AgentUnsupported(_) => "Agent not supported by this build",
            Self::AgentNotInstalled(_) => "Agent not installed",
            Self::CredentialNotFound(_) => "No stored login",
            Self::InvalidCredential(_) => "Not a login of this agent",
            Self::InstallUnavailable(_) => "Install not available",
            Self::WebhookNotFound(_) => "No such webhook",
            Self::TurnNotFound(_) => "Turn not found",
            Self::IdempotencyKeyReused(_) => "Idempotency key used for another request",
            Self::IdempotencyKeyInUse(_) => "Idempotency key in use",
            Self::Session(error) => session::kind(error).title,
            Self::Workspace(error) => workspace::kind(error).title,
            Self::Process(error) => workspace::process_kind(error).title,
            Self::Agent(AgentError::TokenError { .. }) => "Agent credential rejected",
            Self::Agent(AgentError::RequestGone { .. }) => "Request no longer pending at the agent",
            Self::Agent(_) => "Agent error",
            Self::Unauthorized => "Unauthorized",
            Self::HostToolUnauthorized => "Host tool token required",
            Self::RouteNotFound(_) => "Not found",
            Self::ChangesNotFound(_) => "What the turn changed is not known",
            Self::MethodNotAllowed => "Method not allowed",
            Self::Internal(_) => "Internal error",
        }
    }

    /// Whether the connection cannot carry another request after this answer (its
    /// request was not, or could not be, read to its end): the answer says
    /// `Connection: close`.
    pub fn ends_connection(&self) -> bool {
        matches!(
            self,
            Self::MalformedRequest(_)
                | Self::InvalidFraming(_)
                | Self::HttpVersionNotSupported
                | Self::RequestTimeout { .. }
        )
    }

    /// The problem details body (without `instance`).
    pub fn problem(&self) -> ProblemDetails {
        let status = self.status();
        ProblemDetails {
            type_uri: format!("{PROBLEM_TYPE_PREFIX}{}", self.slug()),
            title: self.title().to_string(),
            status: status.as_u16(),
            detail: self.to_string(),
            instance: None,
            agent_error: self.agent_error(),
        }
    }

    /// The agent's own error behind this problem, if an agent is what failed.
    fn agent_error(&self) -> Option<AgentError> {
        match self {
            Self::Agent(error) => Some(error.clone()),
            Self::AgentNotInstalled(message) => Some(AgentError::NotInstalled {
                message: message.clone(),
            }),
            Self::AgentUnsupported(message) => Some(AgentError::UnsupportedAgent {
                message: message.clone(),
            }),
            _ => None,
        }
    }
}

impl From<AgentError> for ApiError {
    /// An agent that is missing or unsupported, or no longer has the request being
    /// answered, is a 409 problem, a rejected credential a 422;
    /// anything else the agent failed at is a 502.
    fn from(error: AgentError) -> Self {
        match error {
            AgentError::NotInstalled { message } => Self::AgentNotInstalled(message),
            AgentError::UnsupportedAgent { message } => Self::AgentUnsupported(message),
            other => Self::Agent(other),
        }
    }
}

/// The `Content-Type` of problem details.
pub const PROBLEM_JSON: &str = "application/problem+json";

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if matches!(
            self,
            Self::Internal(_)
                | Self::Session(SessionError::Unreadable { .. })
                | Self::Workspace(WorkspaceError::Internal(_))
        ) {
            tracing::error!(error = %self, "internal error");
        }
        let problem = self.problem();
        let body = serde_json::to_vec(&problem).unwrap_or_default();
        let mut response = (self.status(), body).into_response();
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
        if matches!(self, Self::Unauthorized | Self::HostToolUnauthorized) {
            headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        if matches!(
            self,
            Self::Session(
                SessionError::Restoring(_)
                    | SessionError::StoreFull(_)
                    | SessionError::StoreUnavailable(_)
            )
        ) {
            headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        if self.ends_connection() {
            headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_errors_map_to_the_status_a_client_can_act_on() {
        let gone = ApiError::from(AgentError::RequestGone {
            message: "OpenCode no longer has this request".into(),
        });
        assert_eq!(gone.status(), StatusCode::CONFLICT);
        let problem = gone.problem();
        assert_eq!(
            problem.type_uri,
            format!("{PROBLEM_TYPE_PREFIX}agent-request-gone")
        );
        assert_eq!(problem.agent_error.unwrap().kind(), "requestGone");
        let token = ApiError::from(AgentError::TokenError {
            message: "bad key".into(),
        });
        assert_eq!(token.status(), StatusCode::UNPROCESSABLE_ENTITY);
        let other = ApiError::from(AgentError::protocol("nonsense"));
        assert_eq!(other.status(), StatusCode::BAD_GATEWAY);
        assert_eq!(
            ApiError::from(AgentError::NotInstalled {
                message: "missing".into()
            })
            .status(),
            StatusCode::CONFLICT
        );
    }
}
