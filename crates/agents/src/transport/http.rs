//! Agents that run as local HTTP servers: JSON requests and one server-sent-events stream,
//! over loopback and never through a proxy.

use std::error::Error as _;
use std::time::{Duration, Instant};

use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures::stream::{BoxStream, StreamExt};
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use reqwest::{Client, Method, RequestBuilder, Response};
use sandbox_universal::AgentError;
use serde::Serialize;
use serde_json::Value;

use super::Line;

/// How much of an unexpected body an error keeps.
const EXCERPT: usize = 2048;
/// The longest a connection may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Why an exchange with the server failed; `target` is the method and URL.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// Could not connect, or the connection broke: the server is down.
    #[error("{target}: the server is unreachable: {message}")]
    Unreachable { target: String, message: String },
    /// No complete answer within the timeout.
    #[error("{target}: no answer within {after:?}")]
    Timeout { target: String, after: Duration },
    /// A status other than 2xx, with the body's first 2 KiB: JSON when it parses, else a
    /// string (`null` when empty).
    #[error("{target}: HTTP {status}: {body}")]
    Status {
        target: String,
        status: u16,
        body: Value,
    },
    /// Not what was asked for (a body that is not JSON, with its first 2 KiB; a stream that
    /// is not SSE), or a request body that would not serialize.
    #[error("{target}: {message}")]
    Malformed { target: String, message: String },
}

impl HttpError {
    /// The HTTP status of a [`HttpError::Status`].
    pub fn status(&self) -> Option<u16> {
        match self {
            HttpError::Status { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The session error, prefixed by `context` (what the daemon was doing): `timeout` for a
    /// timeout, `protocolError` otherwise. The server's process is the driver's: if it has
    /// exited, the driver should report that (`processExited`) instead.
    pub fn into_agent_error(self, context: &str) -> AgentError {
        let message = format!("{context}: {self}");
        match self {
            HttpError::Timeout { .. } => AgentError::Timeout { message },
            _ => AgentError::protocol(message),
        }
    }

    fn from_reqwest(target: &str, after: Duration, error: reqwest::Error) -> Self {
        let target = target.to_owned();
        if error.is_timeout() {
            return HttpError::Timeout { target, after };
        }
        let error = error.without_url();
        let (mut message, mut source) = (error.to_string(), error.source());
        while let Some(cause) = source {
            message = format!("{message}: {cause}");
            source = cause.source();
        }
        match error.is_builder() {
            true => HttpError::Malformed { target, message },
            false => HttpError::Unreachable { target, message },
        }
    }
}

fn excerpt(bytes: &[u8]) -> String {
    String::from_utf8_lossy(&bytes[..bytes.len().min(EXCERPT)]).into_owned()
}

/// A client of one local server (cheap to clone): a base URL such as
/// `http://127.0.0.1:4096`, optional basic-auth credentials, a per-request timeout.
#[derive(Clone)]
pub struct HttpPeer {
    client: Client,
    base: String,
    auth: Option<(String, String)>,
    timeout: Duration,
}

impl std::fmt::Debug for HttpPeer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (base, timeout) = (&self.base, self.timeout);
        let user = self.auth.as_ref().map(|(user, _)| user); // never the password
        write!(f, "HttpPeer({base}, user {user:?}, timeout {timeout:?})")
    }
}

impl HttpPeer {
    /// A client of the server at `base`, each request answered within `timeout`. It never
    /// uses a proxy: the server is on loopback, a user's `HTTP_PROXY` must not capture it.
    pub fn new(base: impl Into<String>, timeout: Duration) -> Result<Self, AgentError> {
        let base = base.into().trim_end_matches('/').to_owned();
        let client = Client::builder()
            .no_proxy()
            .connect_timeout(CONNECT_TIMEOUT.min(timeout))
            .build()
            .map_err(|e| AgentError::protocol(format!("HTTP client for {base}: {e}")))?;
        let auth = None;
        Ok(Self {
            client,
            base,
            auth,
            timeout,
        })
    }

    /// Sends HTTP basic auth on every request.
    pub fn with_basic_auth(mut self, user: impl Into<String>, password: impl Into<String>) -> Self {
        self.auth = Some((user.into(), password.into()));
        self
    }

    /// `GET path` (e.g. `/config`), answered with JSON.
    pub async fn get_json(&self, path: &str) -> Result<Value, HttpError> {
        self.request(Method::GET, path, None::<&()>).await
    }

    /// `POST path` with `body` as JSON, answered with JSON.
    pub async fn post_json<B>(&self, path: &str, body: &B) -> Result<Value, HttpError>
    where
        B: Serialize + ?Sized,
    {
        self.request(Method::POST, path, Some(body)).await
    }

    /// `method path`, with a JSON body if any; the answer's JSON (`null` when empty).
    pub async fn request<B>(
        &self,
        method: Method,
        path: &str,
        body: Option<&B>,
    ) -> Result<Value, HttpError>
    where
        B: Serialize + ?Sized,
    {
        let target = format!("{method} {}{path}", self.base);
        let mut builder = self.builder(method, path).timeout(self.timeout);
        if let Some(body) = body {
            builder = builder.json(body);
        }
        let bytes = match self.send(&target, builder).await?.bytes().await {
            Ok(bytes) if bytes.is_empty() => return Ok(Value::Null),
            Ok(bytes) => bytes,
            Err(e) => return Err(HttpError::from_reqwest(&target, self.timeout, e)),
        };
        serde_json::from_slice(&bytes).map_err(|error| HttpError::Malformed {
            message: format!("the body is not JSON ({error}): {}", excerpt(&bytes)),
            target,
        })
    }

    /// Polls `GET path` until it answers 2xx (any body) or `deadline` passes, then answers
    /// the last failure.
    pub async fn wait_ready(&self, path: &str, deadline: Instant) -> Result<(), HttpError> {
        let target = format!("GET {}{path}", self.base);
        let mut pause = Duration::from_millis(25);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let builder = self.builder(Method::GET, path);
            let builder = builder.timeout(self.timeout.min(left).max(Duration::from_millis(10)));
            let error = match self.send(&target, builder).await {
                Ok(_) => return Ok(()),
                Err(error) => error,
            };
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(error);
            }
            tokio::time::sleep(pause.min(left)).await;
            pause = (pause * 2).min(Duration::from_millis(200));
        }
    }

    /// Opens the server-sent-events stream at `path`. Only opening it (up to the response
    /// headers) is bounded by the timeout; the stream itself may stay idle for any time.
    pub async fn events(&self, path: &str) -> Result<EventStream, HttpError> {
        let target = format!("GET {}{path}", self.base);
        let builder = self
            .builder(Method::GET, path)
            .header(ACCEPT, "text/event-stream");
        let (after, sent) = (self.timeout, self.send(&target, builder));
        let response = match tokio::time::timeout(after, sent).await {
            Ok(response) => response?,
            Err(_) => return Err(HttpError::Timeout { target, after }),
        };
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok());
        if !content_type.is_some_and(|v| v.to_ascii_lowercase().starts_with("text/event-stream")) {
            let message = format!("not an event stream (content type {content_type:?})");
            return Err(HttpError::Malformed { target, message });
        }
        let inner = Some(response.bytes_stream().eventsource().boxed());
        Ok(EventStream {
            inner,
            target,
            error: None,
        })
    }

    fn builder(&self, method: Method, path: &str) -> RequestBuilder {
        let builder = self.client.request(method, format!("{}{path}", self.base));
        match &self.auth {
            Some((user, password)) => builder.basic_auth(user, Some(password)),
            None => builder,
        }
    }

    /// Sends the request: a 2xx response, or the error with the start of the body.
    async fn send(&self, target: &str, builder: RequestBuilder) -> Result<Response, HttpError> {
        let mut response = match builder.send().await {
            Ok(response) if response.status().is_success() => return Ok(response),
            Ok(response) => response,
            Err(e) => return Err(HttpError::from_reqwest(target, self.timeout, e)),
        };
        let mut bytes = Vec::new();
        while bytes.len() <= EXCERPT
            && let Ok(Some(chunk)) = response.chunk().await
        {
            bytes.extend_from_slice(&chunk);
        }
        let body = match serde_json::from_slice(&bytes) {
            _ if bytes.is_empty() => Value::Null,
            Ok(json) if bytes.len() <= EXCERPT => json,
            _ => Value::String(excerpt(&bytes)),
        };
        let (target, status) = (target.to_owned(), response.status().as_u16());
        Err(HttpError::Status {
            target,
            status,
            body,
        })
    }
}

type Events = BoxStream<'static, Result<Event, EventStreamError<reqwest::Error>>>;

/// A server-sent-events stream: each event's data as a [`Line`]. No reconnection: once the
/// connection closes or breaks the stream has ended, and the driver decides what follows.
pub struct EventStream {
    inner: Option<Events>,
    target: String,
    error: Option<HttpError>,
}

impl EventStream {
    /// The next event's data (JSON, or kept whole when it is not), skipping comments and
    /// blank data; `None` once the stream has ended (see [`EventStream::ended_with_error`]).
    /// Cancel-safe.
    pub async fn next(&mut self) -> Option<Line> {
        loop {
            let data = match self.inner.as_mut()?.next().await {
                Some(Ok(event)) => event.data,
                end => {
                    if let Some(Err(error)) = end {
                        let target = self.target.clone();
                        self.error = Some(match error {
                            EventStreamError::Transport(e) => {
                                HttpError::from_reqwest(&target, Duration::ZERO, e)
                            }
                            other => HttpError::Malformed {
                                target,
                                message: other.to_string(),
                            },
                        });
                    }
                    self.inner = None;
                    return None;
                }
            };
            if data.trim().is_empty() {
                continue;
            }
            return Some(Line::parse(data));
        }
    }

    /// Why the stream ended: `None` while it runs or after the server closed it cleanly;
    /// the error when the connection broke or the stream was not valid SSE.
    pub fn ended_with_error(&self) -> Option<&HttpError> {
        self.error.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use axum::http::{HeaderMap, StatusCode, Uri, header};
    use axum::response::{IntoResponse, Response as Answer};
    use serde_json::json;
    use tokio::net::TcpListener;

    const AUTH: &str = "Basic b3BlbmNvZGU6czNjcmV0"; // opencode:s3cret

    /// An event stream sending `chunks` 10 ms apart, so each arrives on its own.
    fn sse(chunks: Vec<Result<&'static str, std::io::Error>>) -> Answer {
        let chunks = futures::stream::iter(chunks).then(|chunk| async {
            tokio::time::sleep(Duration::from_millis(10)).await;
            chunk
        });
        (
            [(header::CONTENT_TYPE, "text/event-stream")],
            Body::from_stream(chunks),
        )
            .into_response()
    }

    async fn handle(uri: Uri, headers: HeaderMap, body: String) -> Answer {
        let json = |status: StatusCode, value: Value| (status, axum::Json(value)).into_response();
        match uri.path() {
            _ if headers.get(header::AUTHORIZATION).is_none_or(|v| v != AUTH) => {
                json(StatusCode::UNAUTHORIZED, json!({"error": "auth"}))
            }
            "/json" => json(StatusCode::OK, json!({"ok": true})),
            "/echo" => json(
                StatusCode::OK,
                json!({"got": serde_json::from_str::<Value>(&body).unwrap()}),
            ),
            "/problem" => json(StatusCode::BAD_REQUEST, json!({"message": "bad"})),
            "/empty" => StatusCode::NO_CONTENT.into_response(),
            "/slow" => {
                tokio::time::sleep(Duration::from_secs(5)).await;
                json(StatusCode::OK, json!("late"))
            }
            "/events" => sse(vec![
                Ok(": keep-alive\n\ndata:  \n\ndata: {\"n\":1}\n\nda"),
                Ok("ta: not json\n\n"),
                Ok("event: x\ndata: {\"n\":\ndata: 3}\n\n"),
            ]),
            "/broken" => sse(vec![Ok("data: 1\n\n"), Err(std::io::Error::other("boom"))]),
            _ => "<html>app</html>".into_response(),
        }
    }

    async fn serve_on(listener: TcpListener) {
        let app = axum::Router::new().fallback(handle);
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    }

    fn peer_at(addr: std::net::SocketAddr) -> HttpPeer {
        let peer = HttpPeer::new(format!("http://{addr}/"), Duration::from_millis(500)).unwrap();
        peer.with_basic_auth("opencode", "s3cret")
    }

    async fn server() -> HttpPeer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        serve_on(listener).await;
        peer_at(addr)
    }

    /// A loopback address nobody listens on (for now).
    async fn free_addr() -> std::net::SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        listener.local_addr().unwrap()
    }

    #[tokio::test]
    async fn json_round_trips_with_basic_auth() {
        let peer = server().await;
        assert_eq!(peer.get_json("/json").await.unwrap(), json!({"ok": true}));
        let echo = peer.post_json("/echo", &json!([1, "a"])).await.unwrap();
        assert_eq!(echo, json!({"got": [1, "a"]}));
        let empty = peer.request(Method::POST, "/empty", None::<&()>).await;
        assert_eq!(empty.unwrap(), Value::Null);
        let wrong = peer
            .clone()
            .with_basic_auth("opencode", "nope")
            .get_json("/json")
            .await;
        assert_eq!(wrong.unwrap_err().status(), Some(401));
        let missing = HttpPeer { auth: None, ..peer }.get_json("/json").await;
        assert!(
            matches!(missing, Err(HttpError::Status { status: 401, body, .. }) if body["error"] == "auth")
        );
    }

    #[tokio::test]
    async fn failures_say_what_went_wrong() {
        let peer = server().await;
        let problem = peer.get_json("/problem").await.unwrap_err();
        assert!(
            matches!(&problem, HttpError::Status { status: 400, body, .. } if body["message"] == "bad")
        );
        let problem = problem.into_agent_error("creating a session").to_string();
        assert!(problem.starts_with("protocolError: creating a session: GET http://127.0.0.1:"));
        assert!(
            problem.ends_with("/problem: HTTP 400: {\"message\":\"bad\"}"),
            "{problem}"
        );
        let html = peer.get_json("/app").await.unwrap_err();
        assert!(
            matches!(&html, HttpError::Malformed { message, .. } if message.ends_with(": <html>app</html>"))
        );
        let started = Instant::now();
        let slow = peer.get_json("/slow").await.unwrap_err();
        assert!(
            matches!(slow, HttpError::Timeout { .. }) && started.elapsed() < Duration::from_secs(3)
        );
        assert!(matches!(
            slow.into_agent_error("x"),
            AgentError::Timeout { .. }
        ));
        let refused = peer_at(free_addr().await)
            .get_json("/json")
            .await
            .unwrap_err();
        assert!(
            matches!(&refused, HttpError::Unreachable { message, .. } if message.contains("refused"))
        );
    }

    #[tokio::test]
    async fn wait_ready_polls_until_the_server_answers_or_the_deadline() {
        let addr = free_addr().await;
        let (client, started) = (peer_at(addr), Instant::now());
        let never = client
            .wait_ready("/json", started + Duration::from_millis(300))
            .await;
        let waited = started.elapsed().as_millis();
        assert!(
            matches!(never, Err(HttpError::Unreachable { .. })) && (300..2000).contains(&waited)
        );
        let late = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            serve_on(TcpListener::bind(addr).await.unwrap()).await
        });
        client
            .wait_ready("/json", Instant::now() + Duration::from_secs(5))
            .await
            .unwrap();
        assert!(late.is_finished(), "ready only once the server listens");
    }

    #[tokio::test]
    async fn events_arrive_in_order_as_json_or_kept_whole() {
        let peer = server().await;
        let mut events = peer.events("/events").await.unwrap();
        assert!(matches!(events.next().await, Some(Line::Json(v)) if v == json!({"n": 1})));
        assert!(
            matches!(events.next().await, Some(Line::NotJson { raw, .. }) if raw == "not json")
        );
        assert!(matches!(events.next().await, Some(Line::Json(v)) if v == json!({"n": 3})));
        assert!(events.next().await.is_none() && events.ended_with_error().is_none());
        assert!(events.next().await.is_none());
        let mut broken = peer.events("/broken").await.unwrap();
        assert!(matches!(broken.next().await, Some(Line::Json(v)) if v == 1));
        assert!(broken.next().await.is_none());
        let broke = broken.ended_with_error();
        assert!(
            matches!(broke, Some(HttpError::Unreachable { .. })),
            "{broke:?}"
        );
        let html = peer.events("/app").await.err();
        assert!(
            matches!(html, Some(HttpError::Malformed { .. })),
            "{html:?}"
        );
        let unauthorized = HttpPeer { auth: None, ..peer }
            .events("/events")
            .await
            .err();
        assert_eq!(unauthorized.and_then(|e| e.status()), Some(401));
    }

    /// Runs again in a child test process whose `HTTP_PROXY` (and the others) point at a dead
    /// loopback port; env vars are process-global, so this process never sets them.
    #[tokio::test]
    async fn proxy_variables_are_ignored() {
        if std::env::var_os("HTTP_PEER_PROXY_CHILD").is_some() {
            let answer = server().await.get_json("/json").await;
            assert_eq!(answer.unwrap(), json!({"ok": true}));
            return;
        }
        let proxy = format!("http://{}", free_addr().await);
        let output = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "transport::http::tests::proxy_variables_are_ignored",
            ])
            .env("HTTP_PEER_PROXY_CHILD", "1")
            .envs(["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"].map(|k| (k, &proxy)))
            .env_remove("NO_PROXY")
            .env_remove("no_proxy")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success() && stdout.contains("1 passed"),
            "{stdout}"
        );
    }
}
