//! The fake model provider: an HTTP server on 127.0.0.1 that speaks the Anthropic
//! Messages, OpenAI Responses and OpenAI Chat Completions APIs, answers by a keyword
//! [`Script`], and records every request.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use sandbox_testkit::provider::FakeProvider;
//! let provider = FakeProvider::start().await?;
//! // point the agent at provider.base_url() (no `/v1`), run it, then:
//! let sent = provider.requests();
//! # let _ = sent; Ok(()) }
//! ```

mod anthropic;
mod calls;
mod chat;
mod ids;
mod recorded;
mod responses;
pub mod script;
mod stream;
pub mod view;

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::json;
use tokio::task::JoinHandle;

pub use recorded::{InputImage, REDACTED, RecordedRequest};
pub use script::{
    Effect, Failure, Memory, OpenAiError, Plan, Rule, Script, ToolInput, ToolTemplate,
};

use ids::Ids;
use stream::json_response;

/// A credential containing this marker (in `x-api-key` or `Authorization: Bearer`) is
/// rejected with HTTP 401 on every route, so tests can exercise `validateToken` and the
/// agents' authentication errors, e.g. with the key `sk-ant-bad-key`.
pub const BAD_KEY_MARKER: &str = "bad-key";

/// Whether the request carries a credential the provider rejects.
fn bad_credential(headers: &HeaderMap) -> bool {
    ["x-api-key", "authorization"].iter().any(|name| {
        headers
            .get(*name)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains(BAD_KEY_MARKER))
    })
}

/// HTTP 401 in the dialect of the route (Anthropic's error shape, or OpenAI's).
fn unauthorized(route: &str) -> Response {
    let message = "invalid API key (the fake provider rejects keys containing `bad-key`)";
    let body = if route.starts_with("/messages") || route == "/models" {
        json!({"type": "error", "error": {"type": "authentication_error", "message": message}})
    } else {
        json!({"error": {"message": message, "type": "invalid_request_error",
                         "code": "invalid_api_key", "param": null}})
    };
    json_response(StatusCode::UNAUTHORIZED, &body)
}

/// State shared by all request handlers.
struct Shared {
    script: Script,
    memory: Memory,
    ids: Ids,
    log: Mutex<Vec<RecordedRequest>>,
    log_file: Option<Mutex<std::fs::File>>,
    api_keys: Vec<String>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A running fake provider. The server task is aborted when this is dropped.
pub struct FakeProvider {
    addr: SocketAddr,
    shared: Arc<Shared>,
    server: JoinHandle<()>,
}

/// Options for [`FakeProvider`]: the script, a fixed port, a request log file.
#[derive(Debug, Default)]
pub struct FakeProviderBuilder {
    script: Script,
    port: u16,
    request_log: Option<PathBuf>,
    api_keys: Vec<String>,
}

impl FakeProviderBuilder {
    /// Replaces the default script table.
    pub fn script(mut self, script: Script) -> Self {
        self.script = script;
        self
    }

    /// Binds this port instead of a free one.
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// Also appends every recorded request as a JSON line to this file.
    pub fn request_log(mut self, path: PathBuf) -> Self {
        self.request_log = Some(path);
        self
    }

    /// Answers model calls that carry none of the required keys (as `Authorization:
    /// Bearer <key>` or `x-api-key: <key>`) with HTTP 401, so a test can prove which
    /// credential an agent sent although recorded headers are redacted. Called again, it
    /// accepts one more key; each request records which one it carried
    /// ([`RecordedRequest::key`]).
    pub fn require_api_key(mut self, key: &str) -> Self {
        self.api_keys.push(key.to_owned());
        self
    }

    /// [`Self::require_api_key`] for each of `keys`, in order.
    pub fn require_api_keys(mut self, keys: &[String]) -> Self {
        self.api_keys.extend(keys.iter().cloned());
        self
    }

    /// Binds 127.0.0.1 and serves on the current tokio runtime.
    pub async fn start(self) -> std::io::Result<FakeProvider> {
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, self.port)).await?;
        let addr = listener.local_addr()?;
        let log_file = match self.request_log {
            Some(path) => Some(Mutex::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)?,
            )),
            None => None,
        };
        let shared = Arc::new(Shared {
            script: self.script,
            memory: Memory::default(),
            ids: Ids::default(),
            log: Mutex::new(Vec::new()),
            log_file,
            api_keys: self.api_keys,
        });
        let app = Router::new().fallback(handle).with_state(shared.clone());
        let server = tokio::spawn(async move {
            if let Err(error) = axum::serve(listener, app).await {
                tracing::error!(%error, "fake provider stopped");
            }
        });
        Ok(FakeProvider {
            addr,
            shared,
            server,
        })
    }
}

impl FakeProvider {
    /// Starts a provider with the default script on a free port of 127.0.0.1.
    pub async fn start() -> std::io::Result<Self> {
        Self::builder().start().await
    }

    /// Options: script table, port, request log.
    pub fn builder() -> FakeProviderBuilder {
        FakeProviderBuilder::default()
    }

    /// `http://127.0.0.1:PORT`, without `/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The bound port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Every request served so far, oldest first.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.log).clone()
    }

    /// Only the model calls (Messages, Responses, Chat Completions), oldest first.
    pub fn model_requests(&self) -> Vec<RecordedRequest> {
        self.requests()
            .into_iter()
            .filter(RecordedRequest::is_model_call)
            .collect()
    }

    /// Forgets the requests recorded so far.
    pub fn clear_requests(&self) {
        lock(&self.shared.log).clear();
    }
}

impl Drop for FakeProvider {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl std::fmt::Debug for FakeProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeProvider")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

/// The error response of the OpenAI dialects (Responses, Chat Completions):
/// `{"error":{"message","type","param","code"}}` with their status.
fn openai_failure_response(failure: &Failure) -> Response {
    let openai = failure.openai_error();
    let body = json!({"error": {
        "message": failure.message, "type": openai.error_type, "param": null, "code": openai.code,
    }});
    failure_response(openai.status, failure, &body)
}

/// An error response with this status and body, with the failure's retry headers.
fn failure_response(status: u16, failure: &Failure, body: &serde_json::Value) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = json_response(status, body);
    if let Some(retry) = failure.should_retry {
        let value = HeaderValue::from_static(if retry { "true" } else { "false" });
        response.headers_mut().insert("x-should-retry", value);
    }
    if let Some(ms) = failure.retry_after_ms
        && let Ok(value) = HeaderValue::from_str(&ms.to_string())
    {
        response.headers_mut().insert("retry-after-ms", value);
    }
    response
}

/// Which of the required keys the request carries (`Some(None)` when none is required,
/// `None` when it carries none of them).
fn key_of(required: &[String], headers: &HeaderMap) -> Option<Option<usize>> {
    if required.is_empty() {
        return Some(None);
    }
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let sent = header("authorization")
        .and_then(|v| v.strip_prefix("Bearer "))
        .or_else(|| header("x-api-key"))?;
    required.iter().position(|k| k == sent).map(Some)
}

/// Serves every path: routes by method and path (with or without `/v1`) and records.
async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    bytes: Bytes,
) -> Response {
    let body = recorded::parse_body(&bytes);
    let path = uri.path();
    let route = path.strip_prefix("/v1").unwrap_or(path);
    let delay = shared.script.event_delay;
    let model_call = |view: view::RequestView| shared.script.plan_with(&view, &shared.memory);
    let is_model_call =
        method == Method::POST && matches!(route, "/messages" | "/responses" | "/chat/completions");
    let key = key_of(&shared.api_keys, &headers);
    let (response, reply) = match (&method, route) {
        _ if bad_credential(&headers) => (unauthorized(route), "unauthorized".to_owned()),
        _ if is_model_call && key.is_none() => {
            let body = json!({"type": "error", "error": {"type": "authentication_error",
                "code": "invalid_api_key", "message": "fake provider: wrong or missing API key"}});
            (
                json_response(StatusCode::UNAUTHORIZED, &body),
                "error:401".to_owned(),
            )
        }
        (&Method::POST, "/messages") => {
            let plan = model_call(view::anthropic(&body));
            (
                anthropic::reply(&plan, &shared.ids, &body, delay),
                plan.label,
            )
        }
        (&Method::POST, "/messages/count_tokens") => {
            (anthropic::count_tokens(&body), "count".to_owned())
        }
        (&Method::POST, "/responses") => {
            let plan = model_call(view::responses(&body));
            (
                responses::reply(&plan, &shared.ids, &body, delay),
                plan.label_for_openai(),
            )
        }
        (&Method::POST, "/chat/completions") => {
            let plan = model_call(view::chat(&body));
            (
                chat::reply(&plan, &shared.ids, &body, delay),
                plan.label_for_openai(),
            )
        }
        (&Method::GET, "/models") => (chat::models(), "models".to_owned()),
        // An OAuth token endpoint (`CODEX_REFRESH_TOKEN_URL_OVERRIDE` points here): a
        // refresh gets the test kit's refreshed login (see `logins`).
        (&Method::POST, "/oauth/token") => (
            json_response(StatusCode::OK, &crate::logins::token_response()),
            "oauth-token".to_owned(),
        ),
        (&Method::HEAD, _) | (&Method::GET, "/" | "") => {
            (StatusCode::OK.into_response(), "ok".to_owned())
        }
        _ => {
            let body = json!({"type": "error", "error": {
                "type": "not_found_error", "message": format!("fake provider has no {method} {path}")}});
            (
                json_response(StatusCode::NOT_FOUND, &body),
                "not-found".to_owned(),
            )
        }
    };
    let record = RecordedRequest {
        method: method.to_string(),
        path: uri
            .path_and_query()
            .map_or_else(|| path.to_owned(), |pq| pq.as_str().to_owned()),
        headers: recorded::redact_headers(&headers),
        body,
        reply,
        key: key.flatten(),
    };
    tracing::debug!(method = %record.method, path = %record.path, reply = %record.reply, "fake provider");
    if let Some(file) = &shared.log_file
        && let Ok(line) = serde_json::to_string(&record)
    {
        let _ = writeln!(lock(file), "{line}");
    }
    lock(&shared.log).push(record);
    response
}
