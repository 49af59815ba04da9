//! [`HttpToolServer`]: a loopback server playing a host application's tool endpoint.

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use sandbox_universal::{HostToolCall, SIGNATURE_HEADER, ToolCallResultRequest, ToolOutput};
use serde_json::Value;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::verify_signature;

/// What [`echo_output`] puts before the input.
const ECHO_MARKER: &str = "host-tool-ok";

/// The text the server answers by default ([`ToolReply::Echo`]): `host-tool-ok <input>`,
/// the input as compact JSON.
pub fn echo_output(input: &Value) -> String {
    format!("{ECHO_MARKER} {input}")
}

/// How the server answers a call whose signature verified.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum ToolReply {
    /// 200 with the text [`echo_output`] of the call's input (the default).
    #[default]
    Echo,
    /// 200 with this result.
    Result(ToolCallResultRequest),
    /// This status and body, verbatim.
    Raw {
        /// The HTTP status.
        status: u16,
        /// The body.
        body: String,
    },
    /// No answer at all, until the server is dropped.
    Hang,
}

/// One HTTP request the server received, signed or not.
#[derive(Clone, Debug, PartialEq)]
pub struct ReceivedRequest {
    /// Every header, by lowercase name (a repeated header: its last value).
    pub headers: BTreeMap<String, String>,
    /// The body, as received.
    pub body: Vec<u8>,
    /// Why the request was refused (401: the signature; 400: not a host tool call; 405:
    /// not a `POST`), or `None` when it was a verified call.
    pub refused: Option<String>,
}

#[derive(Default)]
struct Shared {
    secret: Vec<u8>,
    reply: Mutex<ToolReply>,
    failures_left: Mutex<usize>,
    requests: Mutex<Vec<ReceivedRequest>>,
    stop: CancellationToken,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A running host tool endpoint on 127.0.0.1: it accepts `POST`s signed with its secret
/// (see [`verify_signature`]; anything else is refused with 401), records them, and
/// answers with its [`ToolReply`], after failing the first calls with 503 if told to.
/// Dropping it stops the server.
pub struct HttpToolServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    server: JoinHandle<()>,
}

impl HttpToolServer {
    /// Binds a free port of 127.0.0.1 and serves on the current tokio runtime, verifying
    /// signatures made with `secret`.
    pub async fn start(secret: &[u8]) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            secret: secret.to_vec(),
            ..Shared::default()
        });
        let app = Router::new().fallback(handle).with_state(shared.clone());
        let stop = shared.stop.clone();
        let server = tokio::spawn(async move {
            let serve = axum::serve(listener, app).with_graceful_shutdown(stop.cancelled_owned());
            if let Err(error) = serve.await {
                tracing::error!(%error, "host tool test server stopped");
            }
        });
        Ok(Self {
            addr,
            shared,
            server,
        })
    }

    /// `http://127.0.0.1:PORT/tool` (any path is served the same).
    pub fn url(&self) -> String {
        format!("http://{}/tool", self.addr)
    }

    /// Answers verified calls with `reply` from now on.
    pub fn reply_with(&self, reply: ToolReply) {
        *lock(&self.shared.reply) = reply;
    }

    /// Answers the next `n` verified calls with 503, before the reply.
    pub fn fail_first(&self, n: usize) {
        *lock(&self.shared.failures_left) = n;
    }

    /// Every verified call, oldest first, including those failed with 503: a call the
    /// daemon retried appears once per attempt.
    pub fn calls(&self) -> Vec<HostToolCall> {
        self.requests()
            .iter()
            .filter(|r| r.refused.is_none())
            .filter_map(|r| serde_json::from_slice(&r.body).ok())
            .collect()
    }

    /// Every request received, oldest first, refused ones included.
    pub fn requests(&self) -> Vec<ReceivedRequest> {
        lock(&self.shared.requests).clone()
    }
}

impl Drop for HttpToolServer {
    fn drop(&mut self) {
        self.shared.stop.cancel();
        self.server.abort();
    }
}

impl std::fmt::Debug for HttpToolServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpToolServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

/// Verifies, records and answers one request.
async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let refused = refusal(&shared.secret, &method, &headers, &body);
    lock(&shared.requests).push(ReceivedRequest {
        headers: headers
            .iter()
            .map(|(name, value)| {
                let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
                (name.as_str().to_owned(), value)
            })
            .collect(),
        body: body.to_vec(),
        refused: refused.clone().map(|(_, why)| why),
    });
    if let Some((status, why)) = refused {
        return (status, why).into_response();
    }
    {
        let mut failures = lock(&shared.failures_left);
        if *failures > 0 {
            *failures -= 1;
            return (StatusCode::SERVICE_UNAVAILABLE, "failing on purpose").into_response();
        }
    }
    let reply = lock(&shared.reply).clone();
    let result = match reply {
        ToolReply::Echo => {
            let call: HostToolCall = serde_json::from_slice(&body).expect("checked by refusal");
            ToolCallResultRequest {
                output: ToolOutput::Text(echo_output(&call.input)),
                is_error: false,
            }
        }
        ToolReply::Result(result) => result,
        ToolReply::Raw { status, body } => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            return (status, [(header::CONTENT_TYPE, "application/json")], body).into_response();
        }
        ToolReply::Hang => {
            shared.stop.cancelled().await;
            return StatusCode::SERVICE_UNAVAILABLE.into_response();
        }
    };
    axum::Json(result).into_response()
}

/// Why a request is refused, with its status; `None` for a verified host tool call.
fn refusal(
    secret: &[u8],
    method: &Method,
    headers: &HeaderMap,
    body: &[u8],
) -> Option<(StatusCode, String)> {
    if method != Method::POST {
        return Some((StatusCode::METHOD_NOT_ALLOWED, "POST only".into()));
    }
    let Some(signature) = headers.get(SIGNATURE_HEADER) else {
        return Some((StatusCode::UNAUTHORIZED, format!("no {SIGNATURE_HEADER}")));
    };
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let verified = signature
        .to_str()
        .map_err(|_| "the signature is not text".to_owned())
        .and_then(|signature| verify_signature(secret, signature, body, now));
    if let Err(why) = verified {
        return Some((StatusCode::UNAUTHORIZED, why));
    }
    if let Err(error) = serde_json::from_slice::<HostToolCall>(body) {
        return Some((
            StatusCode::BAD_REQUEST,
            format!("not a host tool call: {error}"),
        ));
    }
    None
}
