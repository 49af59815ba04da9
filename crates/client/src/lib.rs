//! A typed client of the sandbox-daemon HTTP API (used by the CLI and the tests).
//!
//! Every method maps to one route; failures carry the daemon's RFC 7807 problem details.

mod files;
mod processes;
mod sse;
mod terminal;
mod ui_stream;
mod webhooks;

use reqwest::{Method, RequestBuilder, StatusCode, Url};
use sandbox_universal::{
    AgentsResponse, CancelResponse, CreateSessionRequest, CreateSessionResponse, EventsResponse,
    HealthResponse, InstallRequest, InstallResponse, ModelsResponse, ModesResponse,
    PermissionReply, PermissionReplyRequest, ProblemDetails, QuestionRejectRequest,
    QuestionReplyRequest, SendMessageRequest, SendMessageResponse, SessionInfo,
    SessionListResponse, SessionStatus,
};
use serde::de::DeserializeOwned;

pub use files::{ArchiveQuery, FileArchive};
pub use processes::{LogFrame, LogFrames};
pub use sse::{EventStream, InstallFrame, InstallStream, SseStream};
pub use terminal::{Terminal, TerminalEvent};
pub use ui_stream::UiChunks;

/// The default daemon address.
pub const DEFAULT_ENDPOINT: &str = "http://127.0.0.1:2468";

/// What a client call can fail with.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The endpoint is not a usable base URL.
    #[error("invalid endpoint `{0}`")]
    InvalidEndpoint(String),
    /// The daemon could not be reached or the connection broke.
    #[error("request failed: {0}")]
    Http(#[from] reqwest::Error),
    /// The daemon answered with problem details.
    #[error("{} ({}): {}", .0.title, .0.status, .0.detail)]
    Problem(Box<ProblemDetails>),
    /// The daemon answered something unexpected.
    #[error("unexpected response {status}: {body}")]
    Unexpected {
        /// HTTP status.
        status: StatusCode,
        /// Response body.
        body: String,
    },
    /// The SSE stream carried something that is not an event.
    #[error("bad event on the stream: {0}")]
    Stream(String),
}

impl ClientError {
    /// The problem details, when the daemon sent them.
    pub fn problem(&self) -> Option<&ProblemDetails> {
        match self {
            Self::Problem(problem) => Some(problem),
            _ => None,
        }
    }
}

/// Query of [`Client::get_events`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventsQuery {
    /// Events with `sequence > offset`.
    pub offset: Option<u64>,
    /// Page size (1–1000).
    pub limit: Option<u64>,
    /// Include native JSON.
    pub include_raw: bool,
}

/// Query of [`Client::list_sessions`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionsQuery {
    /// The `nextCursor` of the previous page.
    pub cursor: Option<String>,
    /// Page size (1–1000, default 100).
    pub limit: Option<usize>,
    /// Only sessions with this status.
    pub status: Option<SessionStatus>,
}

/// A client of one daemon.
#[derive(Debug, Clone)]
pub struct Client {
    http: reqwest::Client,
    base: Url,
    token: Option<String>,
}

impl Client {
    /// A client of the daemon at `endpoint` (e.g. `http://127.0.0.1:2468`), sending `token`
    /// as a bearer token when given.
    pub fn new(endpoint: &str, token: Option<String>) -> Result<Self, ClientError> {
        let mut base =
            Url::parse(endpoint).map_err(|_| ClientError::InvalidEndpoint(endpoint.to_string()))?;
        if base.cannot_be_a_base() || !matches!(base.scheme(), "http" | "https") {
            return Err(ClientError::InvalidEndpoint(endpoint.to_string()));
        }
        if !base.path().ends_with('/') {
            let path = format!("{}/", base.path());
            base.set_path(&path);
        }
        Ok(Self {
            http: reqwest::Client::new(),
            base,
            token,
        })
    }

    fn url(&self, segments: &[&str]) -> Url {
        let mut url = self.base.clone();
        url.path_segments_mut()
            .expect("checked in new")
            .pop_if_empty()
            .extend(segments);
        url
    }

    fn request(&self, method: Method, segments: &[&str]) -> RequestBuilder {
        // A daemon without a token accepts only JSON POSTs (bodiless ones too).
        let json = method == Method::POST;
        let mut builder = self.raw_request(method, segments);
        if json {
            builder = builder.header(reqwest::header::CONTENT_TYPE, "application/json");
        }
        builder
    }

    /// A request with the token and no content type (for bodies that are not JSON).
    fn raw_request(&self, method: Method, segments: &[&str]) -> RequestBuilder {
        let builder = self.http.request(method, self.url(segments));
        match &self.token {
            Some(token) => builder.bearer_auth(token),
            None => builder,
        }
    }

    async fn send<T: DeserializeOwned>(builder: RequestBuilder) -> Result<T, ClientError> {
        let response = checked(builder.send().await?).await?;
        Ok(response.json().await?)
    }

    async fn send_empty(builder: RequestBuilder) -> Result<(), ClientError> {
        checked(builder.send().await?).await.map(drop)
    }

    /// `GET /health`.
    pub async fn health(&self) -> Result<HealthResponse, ClientError> {
        Self::send(self.request(Method::GET, &["health"])).await
    }

    /// `GET /openapi.json`.
    pub async fn openapi(&self) -> Result<serde_json::Value, ClientError> {
        Self::send(self.request(Method::GET, &["openapi.json"])).await
    }

    /// `GET /agents`.
    pub async fn list_agents(&self) -> Result<AgentsResponse, ClientError> {
        Self::send(self.request(Method::GET, &["agents"])).await
    }

    /// `GET /credentials`: the stored logins (never their secrets).
    pub async fn list_credentials(
        &self,
    ) -> Result<sandbox_universal::CredentialsResponse, ClientError> {
        Self::send(self.request(Method::GET, &["credentials"])).await
    }

    /// `GET /credentials/{agent}`.
    pub async fn get_credential(
        &self,
        agent: &str,
    ) -> Result<sandbox_universal::StoredLoginInfo, ClientError> {
        Self::send(self.request(Method::GET, &["credentials", agent])).await
    }

    /// `PUT /credentials/{agent}`: stores a login.
    pub async fn put_credential(
        &self,
        agent: &str,
        request: &sandbox_universal::PutCredentialRequest,
    ) -> Result<sandbox_universal::StoredLoginInfo, ClientError> {
        Self::send(
            self.request(Method::PUT, &["credentials", agent])
                .json(request),
        )
        .await
    }

    /// `DELETE /credentials/{agent}`.
    pub async fn delete_credential(&self, agent: &str) -> Result<(), ClientError> {
        Self::send_empty(self.request(Method::DELETE, &["credentials", agent])).await
    }

    /// `GET /agents/{agent}/models`.
    pub async fn agent_models(&self, agent: &str) -> Result<ModelsResponse, ClientError> {
        Self::send(self.request(Method::GET, &["agents", agent, "models"])).await
    }

    /// `GET /agents/{agent}/modes`.
    pub async fn agent_modes(&self, agent: &str) -> Result<ModesResponse, ClientError> {
        Self::send(self.request(Method::GET, &["agents", agent, "modes"])).await
    }

    /// `POST /agents/{agent}/install`, answered when the install is done.
    pub async fn install_agent(
        &self,
        agent: &str,
        request: &InstallRequest,
    ) -> Result<InstallResponse, ClientError> {
        Self::send(
            self.request(Method::POST, &["agents", agent, "install"])
                .json(request),
        )
        .await
    }

    /// `POST /agents/{agent}/install` with `Accept: text/event-stream`: the install's
    /// progress as it goes, then its outcome.
    pub async fn install_agent_stream(
        &self,
        agent: &str,
        request: &InstallRequest,
    ) -> Result<InstallStream, ClientError> {
        let builder = self
            .request(Method::POST, &["agents", agent, "install"])
            .header(reqwest::header::ACCEPT, "text/event-stream")
            .json(request);
        let response = checked(builder.send().await?).await?;
        Ok(sse::install_frames(response))
    }

    /// `GET /sessions`: one page.
    pub async fn list_sessions(
        &self,
        query: &SessionsQuery,
    ) -> Result<SessionListResponse, ClientError> {
        let mut builder = self.request(Method::GET, &["sessions"]);
        if let Some(cursor) = &query.cursor {
            builder = builder.query(&[("cursor", cursor)]);
        }
        if let Some(limit) = query.limit {
            builder = builder.query(&[("limit", limit)]);
        }
        if let Some(status) = query.status {
            builder = builder.query(&[("status", status)]);
        }
        Self::send(builder).await
    }

    /// Every session, following `nextCursor` through all pages.
    pub async fn list_all_sessions(&self) -> Result<SessionListResponse, ClientError> {
        let mut all = SessionListResponse {
            sessions: Vec::new(),
            unreadable: Vec::new(),
            next_cursor: None,
        };
        let mut query = SessionsQuery {
            limit: Some(1000),
            ..SessionsQuery::default()
        };
        loop {
            let page = self.list_sessions(&query).await?;
            all.sessions.extend(page.sessions);
            all.unreadable.extend(page.unreadable);
            match page.next_cursor {
                Some(cursor) => query.cursor = Some(cursor),
                None => return Ok(all),
            }
        }
    }

    /// `POST /sessions/{id}`.
    pub async fn create_session(
        &self,
        id: &str,
        request: &CreateSessionRequest,
    ) -> Result<CreateSessionResponse, ClientError> {
        self.create_session_keyed(id, request, None).await
    }

    /// `POST /sessions/{id}` with an `Idempotency-Key`: a retry with the same key gets the
    /// first answer instead of acting again.
    pub async fn create_session_keyed(
        &self,
        id: &str,
        request: &CreateSessionRequest,
        idempotency_key: Option<&str>,
    ) -> Result<CreateSessionResponse, ClientError> {
        let builder = self.request(Method::POST, &["sessions", id]).json(request);
        Self::send(keyed(builder, idempotency_key)).await
    }

    /// `GET /sessions/{id}`.
    pub async fn get_session(&self, id: &str) -> Result<SessionInfo, ClientError> {
        Self::send(self.request(Method::GET, &["sessions", id])).await
    }

    /// `POST /sessions/{id}/end`: ends the session (its events stay readable).
    pub async fn end_session(&self, id: &str) -> Result<SessionInfo, ClientError> {
        Self::send(self.request(Method::POST, &["sessions", id, "end"])).await
    }

    /// `DELETE /sessions/{id}`: removes the session and its events.
    pub async fn delete_session(&self, id: &str) -> Result<(), ClientError> {
        Self::send_empty(self.request(Method::DELETE, &["sessions", id])).await
    }

    /// `POST /sessions/{id}/messages`.
    pub async fn send_message(
        &self,
        id: &str,
        message: &str,
    ) -> Result<SendMessageResponse, ClientError> {
        self.send_request(id, &SendMessageRequest::text(message))
            .await
    }

    /// `POST /sessions/{id}/messages` with any body (text or `content` parts).
    pub async fn send_request(
        &self,
        id: &str,
        body: &SendMessageRequest,
    ) -> Result<SendMessageResponse, ClientError> {
        self.send_request_keyed(id, body, None).await
    }

    /// `POST /sessions/{id}/messages` with an `Idempotency-Key`: a retry with the same key
    /// gets the first answer (the same turn) instead of starting another.
    pub async fn send_request_keyed(
        &self,
        id: &str,
        body: &SendMessageRequest,
        idempotency_key: Option<&str>,
    ) -> Result<SendMessageResponse, ClientError> {
        let builder = self
            .request(Method::POST, &["sessions", id, "messages"])
            .json(body);
        Self::send(keyed(builder, idempotency_key)).await
    }

    /// `POST /sessions/{id}/cancel`.
    pub async fn cancel(&self, id: &str) -> Result<CancelResponse, ClientError> {
        Self::send(self.request(Method::POST, &["sessions", id, "cancel"])).await
    }

    /// `GET /sessions/{id}/turns/{turnId}/changes`: what the turn changed in the workspace.
    pub async fn turn_changes(
        &self,
        id: &str,
        turn: &str,
    ) -> Result<sandbox_universal::TurnChanges, ClientError> {
        Self::send(self.request(Method::GET, &["sessions", id, "turns", turn, "changes"])).await
    }

    /// `GET /sessions/{id}/events`.
    pub async fn get_events(
        &self,
        id: &str,
        query: &EventsQuery,
    ) -> Result<EventsResponse, ClientError> {
        let mut builder = self.request(Method::GET, &["sessions", id, "events"]);
        if let Some(offset) = query.offset {
            builder = builder.query(&[("offset", offset)]);
        }
        if let Some(limit) = query.limit {
            builder = builder.query(&[("limit", limit)]);
        }
        if query.include_raw {
            builder = builder.query(&[("includeRaw", true)]);
        }
        Self::send(builder).await
    }

    /// `GET /sessions/{id}/events/sse`: the events after `offset`, then live ones, until
    /// `sessionEnded`.
    pub async fn stream_events(
        &self,
        id: &str,
        offset: Option<u64>,
        include_raw: bool,
    ) -> Result<EventStream, ClientError> {
        let mut builder = self.request(Method::GET, &["sessions", id, "events", "sse"]);
        if let Some(offset) = offset {
            builder = builder.query(&[("offset", offset)]);
        }
        if include_raw {
            builder = builder.query(&[("includeRaw", true)]);
        }
        let response = checked(builder.send().await?).await?;
        Ok(sse::events(response))
    }

    /// `GET /sessions/{id}/events/sse` with `Last-Event-ID`: resumes a stream after the
    /// last event it delivered (e.g. after a dropped connection or a daemon restart).
    pub async fn resume_events(
        &self,
        id: &str,
        last_event_id: u64,
        include_raw: bool,
    ) -> Result<EventStream, ClientError> {
        let mut builder = self
            .request(Method::GET, &["sessions", id, "events", "sse"])
            .header("Last-Event-ID", last_event_id.to_string());
        if include_raw {
            builder = builder.query(&[("includeRaw", true)]);
        }
        let response = checked(builder.send().await?).await?;
        Ok(sse::events(response))
    }

    /// `POST /sessions/{id}/permissions/{permissionId}/reply`.
    pub async fn reply_permission(
        &self,
        id: &str,
        permission_id: &str,
        reply: PermissionReply,
    ) -> Result<(), ClientError> {
        let body = PermissionReplyRequest { reply };
        Self::send_empty(
            self.request(
                Method::POST,
                &["sessions", id, "permissions", permission_id, "reply"],
            )
            .json(&body),
        )
        .await
    }

    /// `POST /sessions/{id}/questions/{questionId}/reply`.
    pub async fn reply_question(
        &self,
        id: &str,
        question_id: &str,
        answers: Vec<Vec<String>>,
    ) -> Result<(), ClientError> {
        let body = QuestionReplyRequest { answers };
        Self::send_empty(
            self.request(
                Method::POST,
                &["sessions", id, "questions", question_id, "reply"],
            )
            .json(&body),
        )
        .await
    }

    /// `POST /sessions/{id}/questions/{questionId}/reject`.
    pub async fn reject_question(&self, id: &str, question_id: &str) -> Result<(), ClientError> {
        Self::send_empty(
            self.request(
                Method::POST,
                &["sessions", id, "questions", question_id, "reject"],
            )
            .json(&QuestionRejectRequest {}),
        )
        .await
    }

    /// `POST /sessions/{id}/tool-calls/{callId}/result`.
    pub async fn tool_call_result(
        &self,
        id: &str,
        call_id: &str,
        result: &sandbox_universal::ToolCallResultRequest,
    ) -> Result<(), ClientError> {
        Self::send_empty(
            self.request(
                Method::POST,
                &["sessions", id, "tool-calls", call_id, "result"],
            )
            .json(result),
        )
        .await
    }

    /// `POST /sessions/{id}/tool-calls/{callId}/reject`.
    pub async fn tool_call_reject(
        &self,
        id: &str,
        call_id: &str,
        reject: &sandbox_universal::ToolCallRejectRequest,
    ) -> Result<(), ClientError> {
        Self::send_empty(
            self.request(
                Method::POST,
                &["sessions", id, "tool-calls", call_id, "reject"],
            )
            .json(reject),
        )
        .await
    }

    /// `GET /sessions/{id}/export`: the bundle's JSON text, as written (its checksum
    /// covers the exact text of each event).
    pub async fn export_session_text(
        &self,
        id: &str,
        include_raw: bool,
    ) -> Result<bytes::Bytes, ClientError> {
        let mut builder = self.request(Method::GET, &["sessions", id, "export"]);
        if include_raw {
            builder = builder.query(&[("includeRaw", "true")]);
        }
        Ok(checked(builder.send().await?).await?.bytes().await?)
    }

    /// `GET /sessions/{id}/export`, parsed.
    pub async fn export_session(
        &self,
        id: &str,
    ) -> Result<sandbox_universal::SessionBundle, ClientError> {
        Self::send(self.request(Method::GET, &["sessions", id, "export"])).await
    }

    /// `POST /sessions/{id}/import` of a bundle's JSON text, working in `cwd` (default:
    /// the bundle's).
    pub async fn import_session(
        &self,
        id: &str,
        bundle: impl Into<reqwest::Body>,
        cwd: Option<&str>,
    ) -> Result<SessionInfo, ClientError> {
        let mut builder = self
            .request(Method::POST, &["sessions", id, "import"])
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(bundle);
        if let Some(cwd) = cwd {
            builder = builder.query(&[("cwd", cwd)]);
        }
        Self::send(builder).await
    }

    /// `POST /sessions/{id}/handover`.
    pub async fn handover(
        &self,
        id: &str,
        request: &sandbox_universal::HandoverRequest,
    ) -> Result<SessionInfo, ClientError> {
        Self::send(
            self.request(Method::POST, &["sessions", id, "handover"])
                .json(request),
        )
        .await
    }
}

/// Passes successful responses through; turns error responses into [`ClientError`]s.
/// `builder` with `Idempotency-Key: key`, when there is one.
fn keyed(builder: RequestBuilder, key: Option<&str>) -> RequestBuilder {
    match key {
        Some(key) => builder.header("Idempotency-Key", key),
        None => builder,
    }
}

async fn checked(response: reqwest::Response) -> Result<reqwest::Response, ClientError> {
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let body = response.text().await.unwrap_or_default();
    match serde_json::from_str::<ProblemDetails>(&body) {
        Ok(problem) => Err(ClientError::Problem(Box::new(problem))),
        Err(_) => Err(ClientError::Unexpected { status, body }),
    }
}
